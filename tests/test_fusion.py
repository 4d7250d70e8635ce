"""Fusion of the vector and text legs, and the FTS5 query builder the text leg uses."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remembrances import Chunk, Store, fusion
from remembrances.fts_query import fts_query, query_terms


def _ids(fused: list[fusion.Fused]) -> list[int]:
    return [f.id for f in fused]


def test_rrf_top_of_both_legs_scores_one() -> None:
    fused = fusion.rrf([(1, 0.9), (2, 0.5)], [(1, 12.0), (3, 4.0)])
    assert fused[0].id == 1
    assert fused[0].score == pytest.approx(1.0)
    assert all(0.0 <= f.score <= 1.0 for f in fused)


def test_each_kind_has_its_fitted_settings_and_mixed_searches_the_default() -> None:
    assert fusion.params_for("code") == fusion.KIND_PARAMS["code"]
    assert fusion.params_for(["kb"]) == fusion.KIND_PARAMS["kb"]
    assert fusion.params_for("my-own-kind") == fusion.DEFAULT_PARAMS
    assert fusion.params_for(["kb", "code"]) == fusion.DEFAULT_PARAMS
    assert fusion.params_for(None) == fusion.DEFAULT_PARAMS


def test_words_weigh_more_in_a_long_code_question() -> None:
    code = fusion.params_for("code")
    # Up to seven words (stop words do not count): the fitted weight.
    assert fusion.params_for("code", "read the settings from a file") == code
    assert fusion.params_for("code", "one two three four five six seven") == code
    eight = fusion.params_for("code", "one two three four five six seven eight")
    assert eight.text_weight == pytest.approx(code.text_weight + code.text_weight_per_word)
    assert eight.cosine_weight == code.cosine_weight and eight.bias == code.bias
    capped = code.text_weight + code.max_added_text_weight
    long = "a b c d e f g h i j k l m n o p q r s t"
    assert fusion.params_for("code", " ".join(f"word{c}" for c in long.split())).text_weight == (
        pytest.approx(capped)
    )
    # A camelCase name is one word however many parts it has; stop words never count.
    assert fusion.params_for("code", "getUserNameFromTheSessionCookieAndStoreIt") == code
    assert fusion.params_for("code", "what is it that you have been doing there with them") == (
        code
    )
    # Prose and conversation keep their fitted weight at any length.
    for kind in ("kb", "event", None):
        assert fusion.params_for(kind, long) == fusion.params_for(kind)


def test_pointwise_empty_legs() -> None:
    assert fusion.pointwise([], [], {}, {}) == []


def test_pointwise_fills_per_leg_fields() -> None:
    fused = {
        f.id: f
        for f in fusion.pointwise(
            [(1, 0.7), (2, 0.4)], [(2, 15.0), (3, 3.0)], {1: 0.7, 2: 0.4, 3: 0.1}, {2: 0.5, 3: 1.0}
        )
    }
    assert fused[1].vector_rank == 1 and fused[1].text_rank is None
    assert fused[2].vector_rank == 2 and fused[2].text_rank == 1
    assert fused[2].vector_score == pytest.approx(0.4)
    assert fused[2].text_score == pytest.approx(0.5)
    assert fused[1].text_score == 0.0  # holds none of the words
    assert fused[3].vector_rank is None and fused[3].vector_score == pytest.approx(0.1)


def test_a_score_depends_only_on_its_own_evidence() -> None:
    """Other candidates, and how the legs ranked them, do not move a chunk's score."""
    alone = fusion.pointwise([(1, 0.6)], [(1, 9.0)], {1: 0.6}, {1: 0.8})
    crowded = fusion.pointwise(
        [(5, 0.9), (1, 0.6)] + [(i, 0.5) for i in range(6, 50)],
        [(7, 90.0), (1, 9.0)],
        {1: 0.6, 5: 0.9, 7: 0.2} | {i: 0.5 for i in range(6, 50)},
        {1: 0.8, 7: 1.0},
    )
    score = next(f.score for f in crowded if f.id == 1)
    assert score == pytest.approx(alone[0].score)


def test_both_kinds_of_evidence_raise_the_score() -> None:
    params = fusion.DEFAULT_PARAMS
    assert params.score(0.7, 0.5) > params.score(0.5, 0.5) > params.score(0.5, 0.0)
    assert params.score(0.2, 0.0) < 0.1  # unrelated text, no shared words


evidence = st.dictionaries(st.integers(0, 60), st.floats(-1.0, 1.0, allow_nan=False), max_size=40)
coverage = st.dictionaries(st.integers(0, 60), st.floats(0.0, 1.0, allow_nan=False), max_size=40)


@given(evidence, coverage)
def test_pointwise_scores_are_sorted_and_in_unit_range(
    cosines: dict[int, float], coverages: dict[int, float]
) -> None:
    vector = sorted(cosines.items(), key=lambda x: -x[1])
    text = sorted(coverages.items(), key=lambda x: -x[1])
    fused = fusion.pointwise(vector, text, cosines, coverages)
    assert sorted(_ids(fused)) == sorted(set(cosines) | set(coverages))
    scores = [f.score for f in fused]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


# -- the FTS5 query ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO t (text) VALUES ('parse the config file'), ('getUserName')")
    return conn


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_fts_query_is_valid_fts5_for_any_text(fts: apsw.Connection, text: str) -> None:
    query = fts_query(text)
    if query is not None:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (query,)).fetchall()


@pytest.mark.parametrize(
    "hostile",
    ['"', "'", "AND OR NOT", "NEAR(a b)", "col:term", "a*", "^start", "(x", "-", "\x00", "🙂"],
)
def test_fts_query_neutralises_operators(fts: apsw.Connection, hostile: str) -> None:
    query = fts_query(hostile)
    if query is not None:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (query,)).fetchall()


def test_query_terms_split_identifiers_and_drop_stop_words() -> None:
    terms = query_terms("How do I get the userName?")
    assert "username" in terms and "user" in terms and "name" in terms
    assert "the" not in terms and "how" not in terms
    assert query_terms("to be or not to be") == ["to", "be", "or", "not"]


# -- through the store ------------------------------------------------------------------


def test_store_hybrid_scores_in_unit_range_with_leg_fields(store: Store) -> None:
    store.put_source("kb", "a", [Chunk("volcanoes erupt when magma rises")])
    store.put_source("kb", "b", [Chunk("the moon pulls the tides of the oceans")])
    store.put_source("kb", "c", [Chunk("magma chambers under volcanoes")])
    results = store.search("magma volcanoes", mode="hybrid", limit=3)
    assert results
    assert {r.source for r in results[:2]} == {"a", "c"}
    for r in results:
        assert 0.0 <= r.score <= 1.0
        assert r.vector_rank is not None or r.text_rank is not None
    top = results[0]
    assert top.vector_score is not None and top.text_score is not None
    assert top.vector_rank is not None and top.text_rank is not None
    high = store.search("magma volcanoes", mode="hybrid", min_score=top.score)
    assert [r.id for r in high] == [r.id for r in results if r.score >= top.score]
