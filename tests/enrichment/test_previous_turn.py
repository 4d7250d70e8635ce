"""A matched conversation turn reaches the block with the turn said before it (issue 21):
the question a reply answers. Real store, hash embedder; the plan is fixed so that
exactly the turns wanted are hits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

import remembrances
from remembrances import RemembrancesService
from remembrances.enrichment import ContextEnricher, EnricherConfig, EnrichmentPlan

AT = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
CHAT = [
    {"speaker": "Caroline", "text": "Wow, is that new?"},
    {"speaker": "Melanie", "text": "Yes, I glazed it in pottery class yesterday."},
    {"speaker": "Melanie", "text": "The kiln at the studio runs very hot."},
    {"speaker": "Caroline", "text": "Tell me everything. " + "It sounds wonderful. " * 20},
    {"speaker": "Melanie", "text": "The teacher is called Oksana."},
]


@dataclass
class FixedPlanner:
    """A user's own planner (the QueryPlanner protocol): events only, ``limit`` hits."""

    limit: int = 1

    def plan(self, prompt: str) -> EnrichmentPlan:
        return EnrichmentPlan(events_query=prompt, events_limit=self.limit, kb_limit=0,
                              code_limit=0, planner="fixed")  # fmt: skip


@pytest.fixture
def memory(location: str) -> Iterator[RemembrancesService]:
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.events.log_conversation(CHAT, session="s", at=AT)
        yield svc


def enrich(svc: RemembrancesService, prompt: str, limit: int = 1, **config: object) -> str:
    enricher = ContextEnricher(svc, EnricherConfig(**config), FixedPlanner(limit))  # type: ignore[arg-type]
    try:
        return enricher.enrich_context(prompt)
    finally:
        enricher.close()


def test_a_reply_comes_with_the_question_it_answers(memory: RemembrancesService) -> None:
    block = enrich(memory, "glazed pottery class")
    assert (
        "Yes, I glazed it in pottery class yesterday.\n  ↳ after Caroline: Wow, is that new?"
        in (block)
    )
    off = enrich(memory, "glazed pottery class", previous_turn=False)
    assert "glazed" in off and "Wow" not in off


def test_no_previous_turn_when_the_same_speaker_said_it_or_there_is_none(
    memory: RemembrancesService,
) -> None:
    same = enrich(memory, "kiln studio hot")
    assert "The kiln at the studio" in same and "↳" not in same and "glazed" not in same
    first = enrich(memory, "Wow is that new")
    assert "Wow, is that new?" in first and "↳" not in first


def test_a_long_previous_turn_is_cut(memory: RemembrancesService) -> None:
    block = enrich(memory, "teacher Oksana")
    context = next(line for line in block.splitlines() if "↳ after Caroline" in line)
    assert context.rstrip().endswith("…") and len(context.strip()) <= 200 + len(
        "↳ after Caroline: "
    )


def test_a_previous_turn_that_is_a_hit_itself_is_not_repeated(
    memory: RemembrancesService,
) -> None:
    block = enrich(memory, "Wow new glazed pottery", limit=2)
    assert block.count("Wow, is that new?") == 1 and "↳" not in block


def test_a_tight_budget_cuts_the_previous_turn_first(memory: RemembrancesService) -> None:
    block = enrich(memory, "glazed pottery class", section_chars=110)
    assert "Yes, I glazed it in pottery class yesterday." in block and "Wow" not in block
