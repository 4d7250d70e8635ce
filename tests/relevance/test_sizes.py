"""Scores and enrichment that mean the same in a memory of a few notes and of thousands.

Issue 14: a relevant note's hybrid score moves by at most 0.1 from a three-note
store to one with 5,000 unrelated chunks, a clearly relevant note scores at least
0.3 on an agent's first day, relevant prompts reach ``enrich_context`` and
unrelated ones get "" at every size.
"""

from __future__ import annotations

import re

import pytest

from remembrances import RemembrancesService
from remembrances.enrichment.config import DEFAULT_MIN_SCORE

from .conftest import CHIT_CHAT, QUESTIONS, RELEVANT, SIZES, UNRELATED, Measured

#: The first test builds the shared memory: 5,000 chunks through the local model.
pytestmark = pytest.mark.timeout(900)


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def test_a_clearly_relevant_note_scores_well_on_the_first_day(measured: Measured) -> None:
    for question, answer in QUESTIONS.items():
        top, score = measured.scores[0][question]
        assert top == answer, question
        assert score >= 0.3, (question, score)


@pytest.mark.parametrize("size", SIZES[1:])
def test_scores_do_not_drift_as_unrelated_chunks_arrive(measured: Measured, size: int) -> None:
    for question, answer in QUESTIONS.items():
        first_day = measured.scores[0][question][1]
        top, score = measured.scores[size][question]
        assert abs(score - first_day) <= 0.1, (question, first_day, score)
        assert top == answer, (question, top)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("prompt", "title", "expected"), RELEVANT)
def test_relevant_prompts_get_their_context_at_every_size(
    measured: Measured, size: int, prompt: str, title: str, expected: str
) -> None:
    block = measured.blocks[size][prompt]
    assert expected in section(block, title), (size, block)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("prompt", UNRELATED)
def test_unrelated_prompts_get_nothing_at_every_size(
    measured: Measured, size: int, prompt: str
) -> None:
    assert measured.blocks[size][prompt] == "", (size, measured.blocks[size][prompt])


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("prompt", CHIT_CHAT)
def test_chit_chat_gets_nothing_at_every_size(measured: Measured, size: int, prompt: str) -> None:
    # Their words ("worked", "time", "try") are in the unrelated chunks: full word
    # coverage alone would pass the KB gate; the passage's meaning must be close too.
    assert measured.blocks[size][prompt] == "", (size, measured.blocks[size][prompt])


@pytest.mark.parametrize("size", SIZES)
def test_last_favours_the_most_recent_event(measured: Measured, size: int) -> None:
    events = section(measured.blocks[size]["why did the last deploy fail?"], "Events")
    newer = events.find("Rolled back the 2.3 deploy")
    older = events.find("Deployed 2.2")
    assert newer >= 0 and (older == -1 or newer < older), events


def test_kb_search_min_score_keeps_the_answer(memory: RemembrancesService) -> None:
    hits = memory.kb.search("when are deploys frozen?", min_score=0.3)
    assert hits and hits[0].source == "freeze.md"


@pytest.mark.parametrize("source", ["kb", "code"])
@pytest.mark.parametrize("size", SIZES)
def test_unrelated_prompts_stay_well_under_the_gates(
    measured: Measured, size: int, source: str
) -> None:
    """The KB and code gates (0.02, 0.01) were set at over twice the best score an
    unrelated prompt reached (docs/enrichment.md); a scoring change that lifts
    unrelated hits to half a gate must be measured again before the gate can stay."""
    scores = measured.unrelated_best[size][source]
    assert max(scores.values()) < DEFAULT_MIN_SCORE[source] / 2, scores
