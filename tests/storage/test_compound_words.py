"""Word coverage credits a joined verb and particle ("rollback") with both words the
question writes apart ("roll back"), the same on both engines."""

from __future__ import annotations

import pytest

from remembrances import Chunk, Store
from remembrances.storage.filters import ChunkFilter
from remembrances.storage.text_match import compound_positions, compounds

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def _text_scores(store: Store, query: str) -> dict[str, float]:
    return {h.source: h.text_score or 0.0 for h in store.search(query, mode="text", limit=10)}


def test_the_joined_word_holds_both_words(store: Store) -> None:
    store.put_source("kb", "joined", [Chunk("Rollback: revert the deploy to the last release.")])
    store.put_source("kb", "apart", [Chunk("Roll back the deploy to the last release.")])
    store.put_source("kb", "neither", [Chunk("The deploy went out on Friday.")])
    found = _text_scores(store, "how do I roll back the deploy?")
    assert found["joined"] == pytest.approx(found["apart"], abs=0.15)
    assert found["joined"] > found["neither"] + 0.3
    # a stop-word particle is no query word of its own: "setup" holds "set up"'s "set"
    store.put_source("kb", "setup", [Chunk("Setup: install the package.")])
    assert "setup" in _text_scores(store, "how do I set up the package?")


def test_only_a_verb_and_a_particle_are_joined() -> None:
    def stems_of(words: list[str]) -> list[str]:
        return words

    assert compounds("How do I roll back, then log in and set UP again?", stems_of) == {
        "rollback": ["roll", "back"],
        "login": ["log", "in"],
        "setup": ["set", "up"],
    }
    assert compounds("the back end of the queue", stems_of) == {}  # not a particle after
    # a preposition takes a noun: "the error log in production" is no login
    assert compounds("where is the error log in production?", stems_of) == {}
    assert compounds("log in to the dashboard", stems_of) == {"login": ["log", "in"]}
    assert compounds("it is in on the joke", stems_of) == {}  # stop words are no verbs
    # a joined word the query also writes itself counts once, as itself
    joined = compounds("roll back the rollback", stems_of)
    assert compound_positions(joined, {"roll": 0, "back": 1, "rollback": 2}) == {}
    assert compound_positions(joined, {"roll": 0, "back": 1}) == {"rollback": [0, 1]}


def test_a_joined_word_is_held_where_its_two_words_stand_together(store: Store) -> None:
    store.put_source("kb", "apart", [Chunk("Roll back the deploy to the last release.")])
    store.put_source("kb", "joined", [Chunk("Rollback: revert the deploy to the last release.")])
    store.put_source("kb", "far", [Chunk("Roll the dice, then come back to the deploy.")])
    found = _text_scores(store, "rollback the deploy")
    # "roll back" is found by the text leg at all, and holds the query's "rollback"
    assert found["apart"] == pytest.approx(found["joined"], abs=0.15)
    # "roll" and "back" apart are not "rollback": only "deploy" is held there
    assert found["far"] < found["apart"] - 0.3


def test_letters_and_a_number_match_however_written(store: Store) -> None:
    store.put_source("kb", "hyphen", [Chunk("Signatures use SHA-256 over the request body.")])
    store.put_source("kb", "code", [Chunk("digest = hashlib.sha256(body).hexdigest()")])
    store.put_source("kb", "spaced", [Chunk("Recurrence rules follow RFC 5545.")])
    store.put_source("kb", "one", [Chunk("See rfc5545 for the recurrence grammar.")])
    store.put_source("kb", "other", [Chunk("A SHA-1 digest is 160 bits; 256 colours.")])
    for query in ("sha256", "SHA-256", "sha 256"):
        found = _text_scores(store, query)
        assert found["hyphen"] > 0.9 and found["code"] > 0.9, (query, found)
    for query in ("sha256", "SHA-256"):  # one word: not "SHA" and "256" anywhere
        assert "other" not in _text_scores(store, query)
    for query in ("rfc5545", "RFC 5545", "RFC-5545"):
        found = _text_scores(store, query)
        assert found["spaced"] > 0.9 and found["one"] > 0.9, (query, found)


def test_a_short_word_held_only_in_its_other_spelling_counts(store: Store) -> None:
    # PostgreSQL returned no coverage when no chunk held a query word as written and
    # the words were under six letters (no near-word lookup either)
    store.put_source("kb", "login", [Chunk("Run the log in command first.")])
    store.put_source("kb", "utf", [Chunk("Strings are UTF-8 by default.")])
    store.put_source("kb", "other", [Chunk("The deploy went out on Friday.")])
    assert _text_scores(store, "login")["login"] > 0.8
    assert _text_scores(store, "utf8")["utf"] > 0.9
    assert _text_scores(store, "HTTP/2") == {}  # held in no spelling


def test_rare_words_first_leaves_no_spelling_out(store: Store) -> None:
    # asked for its rare words first, "SHA-256 kubernetes" lost the chunk that says
    # "SHA-256" (the query word sha256 is held by no chunk as written)
    store.put_source("kb", "k", [Chunk(f"kubernetes note {i}") for i in range(3)])
    store.put_source("kb", "common", [Chunk(f"plain note {i}") for i in range(200)])
    store.put_source("kb", "sha", [Chunk("Signatures use SHA-256 over the body.")])
    with store.snapshot() as tx:
        assert store.engine.rare_words(tx, "kubernetes note", 0.05) == ["kubernetes"]
        # held by no chunk as written, but perhaps in its other spelling: asked for
        rare = store.engine.rare_words(tx, "SHA-256 kubernetes note", 0.05)
        assert rare == ["sha256", "kubernetes"]
        found = store.engine.text_leg(tx, " ".join(rare), 10, ChunkFilter())
        assert "sha" in {store.get(i).source for i, _ in found}
        rare = store.engine.rare_words(tx, "rollback kubernetes note", 0.05)
        assert rare == ["rollback", "kubernetes"]
