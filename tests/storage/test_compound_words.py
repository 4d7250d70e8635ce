"""Word coverage credits a joined verb and particle ("rollback") with both words the
question writes apart ("roll back"), the same on both engines."""

from __future__ import annotations

import pytest

from remembrances import Chunk, Store
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
