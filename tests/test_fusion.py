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
    # code trusts a flat text leg less than prose does
    flat = [12.0, 11.0, 10.5, 10.0, 9.5, 9.0, 8.5, 8.0, 7.5, 7.0]
    code = fusion.text_weight(flat, fusion.params_for("code"))
    kb = fusion.text_weight(flat, fusion.params_for("kb"))
    assert code < kb


def test_calibrated_empty_legs() -> None:
    assert fusion.calibrated([], []) == []


def test_calibrated_single_legs_keep_their_order() -> None:
    vector = [(1, 0.8), (2, 0.6), (3, 0.1)]
    text = [(7, 20.0), (8, 9.0), (9, 1.0)]
    assert _ids(fusion.calibrated(vector, [])) == [1, 2, 3]
    assert _ids(fusion.calibrated([], text)) == [7, 8, 9]


def test_calibrated_fills_per_leg_fields() -> None:
    fused = {f.id: f for f in fusion.calibrated([(1, 0.7), (2, 0.4)], [(2, 15.0), (3, 3.0)])}
    assert fused[1].vector_rank == 1 and fused[1].text_rank is None
    assert fused[2].vector_rank == 2 and fused[2].text_rank == 1
    assert fused[2].vector_score == pytest.approx(0.4)
    assert fused[2].text_score == pytest.approx(fusion.text_score(15.0))
    assert fused[3].vector_score is None and fused[3].text_rank == 2


def test_first_in_both_legs_wins() -> None:
    vector = [(1, 0.7), (2, 0.69), (3, 0.3)]
    text = [(1, 30.0), (3, 29.0), (2, 2.0)]
    assert _ids(fusion.calibrated(vector, text))[0] == 1


def test_peaked_text_leg_weighs_more_than_flat_one() -> None:
    peaked = [40.0] + [5.0] * 20
    flat = [10.0] * 21
    assert fusion.text_weight(peaked) > 0.5 > fusion.text_weight(flat)
    assert fusion.text_weight([]) == 0.0


def test_flat_text_leg_does_not_override_a_clear_vector_winner() -> None:
    # The vector leg is sure of 1; the text leg matched a common word everywhere.
    vector = [(1, 0.8)] + [(i, 0.3) for i in range(2, 30)]
    text = [(i, 5.0 - i * 0.001) for i in range(2, 30)] + [(1, 4.9)]
    assert _ids(fusion.calibrated(vector, text))[0] == 1


def test_confidence_separates_related_from_unrelated_queries() -> None:
    related = fusion.calibrated(
        [(1, 0.75)] + [(i, 0.2) for i in range(2, 40)],
        [(1, 35.0)] + [(i, 4.0) for i in range(2, 40)],
    )
    unrelated = fusion.calibrated(
        [(i, 0.15 - i * 0.001) for i in range(1, 40)],
        [(i, 3.0 - i * 0.01) for i in range(1, 40)],
    )
    assert related[0].score > 0.6
    assert unrelated[0].score < 0.35


legs = st.lists(
    st.tuples(st.integers(0, 60), st.floats(0.0, 1.0, allow_nan=False)), max_size=40
).map(lambda hits: sorted(dict(hits).items(), key=lambda x: -x[1]))
bm25_legs = st.lists(
    st.tuples(st.integers(0, 60), st.floats(0.0, 200.0, allow_nan=False)), max_size=40
).map(lambda hits: sorted(dict(hits).items(), key=lambda x: -x[1]))


@given(legs, bm25_legs)
def test_calibrated_scores_are_sorted_and_in_unit_range(
    vector: list[tuple[int, float]], text: list[tuple[int, float]]
) -> None:
    fused = fusion.calibrated(vector, text)
    assert sorted(_ids(fused)) == sorted({i for i, _ in vector} | {i for i, _ in text})
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
