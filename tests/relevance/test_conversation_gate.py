"""The enrichment gate on a small conversation (issue 21): what was said reaches the
prompt, unrelated prompts get nothing. Real local embedder, real store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import remembrances
from remembrances import RemembrancesService

CHAT = [
    {"role": "user", "content": "I finally signed up for the pottery class on Thursdays."},
    {"role": "assistant", "content": "Nice! What do you want to make first?"},
    {"role": "user", "content": "A set of blue mugs for my sister's birthday in June."},
    {"role": "assistant", "content": "Blue glaze can run in the kiln; ask about a liner glaze."},
    {"role": "user", "content": "Also, my landlord is raising the rent by 8% next month."},
    {"role": "assistant", "content": "You could ask whether a longer lease keeps the old rent."},
    {"role": "user", "content": "Good idea. My cat Miso knocked the first mug off the shelf."},
    {"role": "assistant", "content": "Oh no! Was it one of the blue ones?"},
    {"role": "user", "content": "Yes. Anyway, from Monday I work at Globex as a product manager."},
]
RELATED = {
    "which day is the pottery class?": "pottery class on Thursdays",
    "what am I making for my sister?": "blue mugs",
    "how much is the rent going up?": "raising the rent by 8%",
    "what is my cat called?": "Miso",
    # "work" is a meta word ("how does it work?"), but here it is the topic
    "where do I work?": "Globex",
}
UNRELATED = [
    "what is the capital of Peru?",
    "how do I configure nginx as a reverse proxy?",
    "explain the difference between TCP and UDP",
    "who won the football world cup in 1998",
]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemembrancesService]:
    path: Path = tmp_path_factory.mktemp("chat") / "memory.db"
    with remembrances.open(path, embedder="local") as svc:
        svc.events.log_conversation(
            CHAT, session="s1", user="ana", at=datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
        )
        yield svc


@pytest.mark.parametrize(("prompt", "said"), RELATED.items())
def test_what_was_said_reaches_the_prompt(
    memory: RemembrancesService, prompt: str, said: str
) -> None:
    assert said in memory.enrich_context(prompt)


@pytest.mark.parametrize("prompt", UNRELATED)
def test_unrelated_prompts_get_nothing(memory: RemembrancesService, prompt: str) -> None:
    assert memory.enrich_context(prompt) == ""


def test_still_and_these_days_put_the_newer_fact_first(tmp_path: Path) -> None:
    with remembrances.open(tmp_path / "memory.db", embedder="local") as svc:
        for said, reply, day in [
            (
                "I'm vegetarian, so please no meat in recipe suggestions.",
                "Noted: vegetarian recipes only.",
                2,
            ),
            (
                "I started eating fish again, so I'm pescatarian now, not vegetarian.",
                "Updated: pescatarian, fish is fine.",
                60,
            ),
        ]:
            svc.events.log_conversation(
                [{"role": "user", "content": said}, {"role": "assistant", "content": reply}],
                session=f"day{day}",
                at=datetime(2026, 9, 1, tzinfo=UTC) + timedelta(days=day),
            )
        block = svc.enrich_context("am I still vegetarian?")
        assert 0 <= block.index("pescatarian") < block.index("I'm vegetarian, so")
