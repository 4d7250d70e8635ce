"""enrich_context scoped to one user or one session (issue 21): two users' conversations in
one memory, on the same topics, and one user's prompt never gets the other's turns.
Real local embedder, real store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import remembrances
from remembrances import RemembrancesService
from remembrances.errors import InvalidInputError

AT = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
ANA = [
    {"role": "user", "content": "I finally signed up for the pottery class on Thursdays."},
    {"role": "assistant", "content": "Nice! What do you want to make first?"},
    {"role": "user", "content": "A set of blue mugs for my sister's birthday in June."},
]
ANA_LATER = [
    {"role": "user", "content": "My cat Miso knocked the first pottery mug off the shelf."},
    {"role": "assistant", "content": "Poor mug. Maybe keep the pottery on a higher shelf."},
]
BOB = [
    {"role": "user", "content": "I joined a pottery class that meets on Mondays."},
    {"role": "assistant", "content": "Great, what are you going to make?"},
    {"role": "user", "content": "A green teapot for my grandmother."},
    {"role": "user", "content": "My dog Rex chewed the pottery class flyer."},
]
ANA_WORDS = ("Thursdays", "blue mugs", "Miso")
BOB_WORDS = ("Mondays", "green teapot", "Rex")


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemembrancesService]:
    path: Path = tmp_path_factory.mktemp("scope") / "memory.db"
    with remembrances.open(path, embedder="local") as svc:
        svc.events.log_conversation(ANA, session="ana-1", user="ana", at=AT)
        svc.events.log_conversation(ANA_LATER, session="ana-2", user="ana", at=AT)
        svc.events.log_conversation(BOB, session="bob-1", user="bob", at=AT)
        for user, number in (("ana", "X1234567"), ("bob", "Y7654321")):
            note = f"{user.title()}'s passport number is {number}; it expires in 2031."
            svc.kb.add(note, source="passport.md", collection=f"user-{user}")
        svc.kb.add("Passport renewals go through the travel desk.", source="travel.md",
                   collection="shared")  # fmt: skip
        yield svc


PROMPTS = [
    "which day is my pottery class?",
    "what am I making in pottery class?",
    "what did my pet do to the pottery?",
    "what did I tell you about the pottery class last week?",  # searched in and out of a window
]


def test_unscoped_prompts_reach_both_users(memory: RemembrancesService) -> None:
    """Without a scope the prompts below find both users' turns, so the scoped
    checks that follow are not passing on an empty block."""
    block = "\n".join(memory.enrich_context(p) for p in PROMPTS)
    assert any(w in block for w in ANA_WORDS) and any(w in block for w in BOB_WORDS), block


@pytest.mark.parametrize("prompt", PROMPTS)
def test_one_users_prompt_never_gets_the_others_turns(
    memory: RemembrancesService, prompt: str
) -> None:
    for user, mine, theirs in (("ana", ANA_WORDS, BOB_WORDS), ("bob", BOB_WORDS, ANA_WORDS)):
        block = memory.enrich_context(prompt, user=user)
        assert any(w in block for w in mine), (user, block)
        assert not any(w in block for w in theirs), (user, block)


def test_a_session_scope_keeps_to_that_conversation(memory: RemembrancesService) -> None:
    block = memory.enrich_context("what happened to the pottery mug?", session="ana-2")
    assert "Miso" in block
    assert not any(w in block for w in ("Thursdays", "blue mugs", *BOB_WORDS)), block
    both = memory.enrich_context("which day is my pottery class?", user="ana", session="ana-2")
    assert "Thursdays" not in both and "Mondays" not in both
    assert memory.enrich_context("which day is my pottery class?", session="nobody") == ""


def test_a_collections_scope_keeps_the_documents_to_those_collections(
    memory: RemembrancesService,
) -> None:
    prompt = "what is my passport number?"
    assert "X1234567" in memory.enrich_context(prompt) and "Y7654321" in memory.enrich_context(
        prompt
    )  # unscoped, both users' notes: the scoped checks below are not passing on nothing
    mine = memory.enrich_context(prompt, user="bob", collections=["user-bob", "shared"])
    assert "Y7654321" in mine and "X1234567" not in mine, mine
    one = memory.enrich_context("how do I renew my passport?", collections="shared")
    assert "travel desk" in one and "X1234567" not in one and "Y7654321" not in one, one
    assert memory.enrich_context(prompt, collections=["user-new"]) == ""  # none yet: nothing


@pytest.mark.parametrize(
    "scope",
    [{"collections": []}, {"collections": [""]}, {"collections": b"shared"},
     {"collections": ["shared", 3]}, {"collections": 3},
     {"user": ""}, {"user": "   "}, {"session": "x" * 100_000}, {"user": b"ana"},
     {"session": "\udcff"}, {"user": 3}],
)  # fmt: skip
def test_a_malformed_scope_is_an_error_not_an_unscoped_answer(
    memory: RemembrancesService, scope: dict[str, object]
) -> None:
    with pytest.raises(InvalidInputError):
        memory.enrich_context("which day is my pottery class?", **scope)  # type: ignore[arg-type]
