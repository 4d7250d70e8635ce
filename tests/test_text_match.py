"""Word coverage: a text score in [0, 1] that means the same in a small and a large store."""

from __future__ import annotations

import pytest

from remembrances import Chunk, Store
from remembrances.fts_query import MAX_TERMS
from remembrances.storage.text_match import (
    LOOSE_PARTS,
    NEAR_CREDIT,
    PRIOR_CHUNKS,
    TOKENIZER,
    QueryWords,
    identifiers,
    idf,
    part_weights,
    rare_words,
    text_match,
)


def _coverage(store: Store, query: str) -> dict[str, float]:
    with store.db.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks")]
        found = text_match(conn, query, ids)
        sources = dict(conn.execute("SELECT id, source FROM chunks").fetchall())
    return {sources[i]: v for i, v in found.items()}


def test_all_words_count_one_and_none_are_left_out(store: Store) -> None:
    store.put_source("kb", "both", [Chunk("Production deploys are frozen during the holidays.")])
    store.put_source("kb", "one", [Chunk("Deploys run every Friday from the release branch.")])
    store.put_source("kb", "none", [Chunk("The cafeteria serves pizza on Mondays.")])
    found = _coverage(store, "when are deploys frozen?")
    assert found["both"] == pytest.approx(1.0)
    assert 0.3 < found["one"] < 0.7  # one of two words that weigh about the same
    assert "none" not in found


def test_a_chunks_coverage_barely_moves_as_unrelated_chunks_arrive(store: Store) -> None:
    store.put_source("kb", "note", [Chunk("Production deploys are frozen during the holidays.")])
    store.put_source("kb", "half", [Chunk("Deploys run every Friday from the release branch.")])
    before = _coverage(store, "when are deploys frozen?")
    store.put_source(
        "kb",
        "filler",
        [Chunk(f"unrelated sentence number {i} about gardens and rivers") for i in range(500)],
    )
    after = _coverage(store, "when are deploys frozen?")
    assert after["note"] == pytest.approx(before["note"])
    assert abs(after["half"] - before["half"]) < 0.1


def test_common_words_weigh_less_once_the_store_is_large() -> None:
    assert idf(1, 3) == pytest.approx(idf(3, 3), rel=0.25)  # tiny store: about equal
    assert idf(1, 100_000) > 3 * idf(20_000, 100_000)  # large store: rare words count
    assert idf(0, 0) > 0 and PRIOR_CHUNKS > 0


def test_a_word_and_its_plural_count_once(store: Store) -> None:
    with store.db.read() as conn:
        words = QueryWords.of(conn.fts5_tokenizer(*TOKENIZER), "deploy deploys DEPLOYING frozen")
    assert words is not None
    assert words.stems == ("deploi", "frozen")  # porter stems


@pytest.mark.parametrize(
    "query",
    ["", "   ", '" OR "', "NEAR(a b) AND NOT c*", "' -- ; DROP TABLE chunks", "\x00\ud800", "?!"],
)
def test_hostile_queries_never_raise_and_stay_in_range(store: Store, query: str) -> None:
    store.put_source("kb", "a", [Chunk("drop table near and not")])
    found = _coverage(store, query)
    assert all(0.0 <= v <= 1.0 for v in found.values())


def test_many_candidates_at_once(store: Store) -> None:
    store.put_source("kb", "many", [Chunk(f"deploy note {i}") for i in range(1500)])
    with store.db.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks")]
        found = text_match(conn, "deploy", ids)
    assert len(found) == 1500
    assert all(0.0 < v <= 1.0 for v in found.values())


def test_rare_words_are_those_some_but_few_chunks_hold(store: Store) -> None:
    store.put_source("kb", "common", [Chunk(f"common note {i}") for i in range(40)])
    store.put_source("kb", "rare", [Chunk("a rare note")])
    with store.db.read() as conn:
        # "rare" is in 1 of 41 chunks; "common" and "note" in most; "absent" in none.
        assert rare_words(conn, "common rare absent note", 0.05) == ["rare"]
        assert rare_words(conn, "rare", 0.05) == []  # one word: nothing to put first
        assert rare_words(conn, "common note", 0.05) == []  # no rare word
        assert rare_words(conn, "common rare", 1.0) == []  # every word counts as rare


def test_identifiers_are_the_joined_names_with_the_words_only_they_give() -> None:
    def same(words: list[str]) -> list[str]:
        return words

    found = identifiers("use send_file or app.config, e.g. 2.3, not get_or_create alone", same)
    assert [i.pattern.pattern for i in found] == [
        r"(?<![\w])(?:send_file)(?![\w])",
        r"(?<![\w])(?:app\.config|config)(?![\w])",
        r"(?<![\w])(?:get_or_create)(?![\w])",
    ]
    assert [sorted(i.stems) for i in found] == [
        ["file", "send"],
        ["app", "config"],
        ["create", "get"],
    ]
    assert identifiers("plain words only, version 2.3, e.g. this", same) == []
    # "file" is said alone too: only "send" depends on the name
    assert [sorted(i.stems) for i in identifiers("send_file with a file", same)] == [["send"]]


def test_part_weights_discount_only_the_words_of_names_a_chunk_lacks() -> None:
    found = identifiers("send_file then", lambda words: words)
    stems = ["send", "file", "then"]
    assert part_weights(stems, found, "call send_file(x)") is None
    assert part_weights(stems, found, "send a file") == [LOOSE_PARTS, LOOSE_PARTS, 1.0]
    assert part_weights(stems, found, "resend_file_now") == [LOOSE_PARTS, LOOSE_PARTS, 1.0]


def test_a_query_of_many_names_keeps_as_many_as_a_query_has_words() -> None:
    # each name is looked for in every candidate: their number is bounded
    query = " ".join(f"call_{i}_now" for i in range(500))
    assert len(identifiers(query, lambda words: words)) == MAX_TERMS


@pytest.mark.backends("sqlite", "postgresql")
def test_a_word_the_stemmer_leaves_apart_counts_half(store: Store) -> None:
    # Porter stems "allergies" allergi and "allergic" allerg: "do I have any allergies?"
    # found the note by meaning alone, and an event scored 0.012
    store.put_source("kb", "allergy", [Chunk("Sam is allergic to penicillin.")])
    store.put_source("kb", "pizza", [Chunk("The cafeteria serves pizza on Mondays, always.")])
    found = {h.source: h.text_score for h in store.search("do I have any allergies?")}
    assert found["allergy"] == pytest.approx(NEAR_CREDIT)
    assert not found.get("pizza")
    exact = {h.source: h.text_score for h in store.search("who is allergic?")}
    assert exact["allergy"] == pytest.approx(1.0)  # the word itself still counts whole


def test_a_search_inside_the_first_write_scores_words(store: Store) -> None:
    # FTS5 writes its totals record at commit: read inside the first write it was
    # empty, the search raised and the write was rolled back
    prepared = store.prepare([Chunk("the deploy runbook says restart the web servers")])
    with store.transaction():
        store.write_source("kb", "default", "a.md", prepared)
        inside = store.search("deploy runbook", mode="text")
        assert [h.text_score for h in inside] == [pytest.approx(1.0)]
    assert [h.source for h in store.search("deploy runbook", mode="text")] == ["a.md"]
