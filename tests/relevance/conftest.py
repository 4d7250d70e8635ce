"""One memory measured at four sizes: the notes, events and code of an agent's first
day, then the same memory buried under 50, 500 and 5,000 unrelated KB chunks (and a
tenth as many unrelated events). Built once per session with the real local
embedder; the tests read what was measured at each size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

import remembrances
from remembrances import RemembrancesService
from remembrances.enrichment import HeuristicPlanner
from remembrances.records import Chunk

from ..enrichment.corpus import NOW, populate
from .unrelated_text import unrelated_sentences

SIZES = (0, 50, 500, 5000)

NOTES = {
    "deploys.md": "Deploys run every Friday from the release branch.",
    "freeze.md": "Production deploys are frozen during the holidays.",
    "lunch.md": "The cafeteria serves pizza on Mondays.",
}
#: Plain questions and the note that answers each.
QUESTIONS = {
    "when are deploys frozen?": "freeze.md",
    "which branch do we deploy from?": "deploys.md",
    "what does the cafeteria serve on Mondays?": "lunch.md",
}
DEPLOY_EVENTS = [
    ("deploy", "Deployed 2.2 to production without issues.", timedelta(days=9)),
    (
        "deploy",
        "Rolled back the 2.3 deploy because the cache warm-up crashed the API pods.",
        timedelta(days=1),
    ),
]
#: Prompts with a known answer: (prompt, section of the block, text the section must hold).
RELEVANT = [
    ("when are deploys frozen?", "Knowledge base", "frozen during the holidays"),
    ("how many vacation days do I get?", "Knowledge base", "28 days of paid leave"),
    ("how do I roll back a database migration?", "Knowledge base", "Database migrations"),
    ("what did we decide about the orders table migration?", "Events", "weekend maintenance"),
    ("why did the last deploy fail?", "Events", "Rolled back the 2.3 deploy"),
    ("why is order_total wrong for discounted orders?", "Code", "order_total"),
    ("can you explain fetch_with_retry and RetryPolicy.delay?", "Code", "fetch_with_retry"),
]
UNRELATED = [
    "what is the capital of Peru?",
    "what's the capital of Australia?",
    "translate 'good morning' into Italian",
    "recommend a good science fiction novel",
    "how do I bake sourdough bread",
    "who won the football world cup in 1998",
    "write a haiku about autumn",
    "how do tides work?",
    "best way to learn the guitar",
    "plan a weekend trip to Lisbon",
]
#: Replies an agent gets every turn: their few words are everywhere, their meaning nowhere.
CHIT_CHAT = [
    "thanks, that worked!",
    "no, the other one",
    "what time is it?",
    "try again",
    "yes please",
    "go on",
    "perfect",
    "sorry, I meant the first one",
]


@dataclass
class Measured:
    #: size -> question -> (top hit's source, the answer's score)
    scores: dict[int, dict[str, tuple[str, float]]] = field(default_factory=dict)
    #: size -> prompt -> the enrichment block
    blocks: dict[int, dict[str, str]] = field(default_factory=dict)
    #: size -> source ("kb", "code") -> unrelated prompt -> its best hit's score
    unrelated_best: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)


@pytest.fixture(scope="session")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemembrancesService]:
    root: Path = tmp_path_factory.mktemp("sizes")
    with remembrances.open(root / "memory.db", embedder="local") as svc:
        populate(svc, root / "code")
        for source, text in NOTES.items():
            svc.kb.add(text, source=source)
        for subject, content, age in DEPLOY_EVENTS:
            svc.events.log(content, subject=subject, at=NOW - age)
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        yield svc


def bury(svc: RemembrancesService, size: int) -> None:
    """Bring the memory to ``size`` unrelated KB chunks and ``size // 10`` unrelated events."""
    text = unrelated_sentences(size)
    have = svc.store.count(kind="kb", collection="unrelated")
    if text[have:]:
        chunks = [Chunk(t) for t in text[have:]]
        svc.store.put_source("kb", f"unrelated-{size}", chunks, collection="unrelated")
    wanted = text[: size // 10]
    logged = [
        {"content": t, "subject": "note", "at": NOW - timedelta(days=30, minutes=i)}
        for i, t in enumerate(wanted)
    ]
    if logged:
        svc.events.log_many(logged)  # the same event twice is stored once
    assert svc.store.count(kind="kb", collection="unrelated") == size


@pytest.fixture(scope="session")
def measured(memory: RemembrancesService) -> Measured:
    result = Measured()
    for size in SIZES:
        bury(memory, size)
        result.scores[size] = {}
        for question, answer in QUESTIONS.items():
            hits = memory.store.search(question, kind="kb", limit=10)
            score = next(h.score for h in hits if h.source == answer)
            result.scores[size][question] = (hits[0].source, score)
        prompts = [p for p, _, _ in RELEVANT] + UNRELATED + CHIT_CHAT
        result.blocks[size] = {p: memory.enrich_context(p) for p in prompts}
        searches = {"kb": memory.kb.search, "code": memory.code.search}
        result.unrelated_best[size] = {
            source: {p: max((h.score for h in search(p, limit=1)), default=0.0) for p in UNRELATED}
            for source, search in searches.items()
        }
    return result
