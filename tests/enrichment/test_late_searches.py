"""Searches past their deadlines hold up neither closing the memory nor leaving the process.

Against a provider that did not answer, ``remembrances enrich`` printed its block on
time and exited 375 s later, after every retry of the query's embedding: the
enricher's threads were joined on close and at exit. Real files, a hashing embedder
whose queries wait (as a request to a provider that does not answer does).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import remembrances
from remembrances import ClosedError
from remembrances.embeddings import HashEmbedder
from remembrances.enrichment import ContextEnricher, EnricherConfig, HeuristicPlanner

from .corpus import NOW, populate


class Unanswered(HashEmbedder):
    """Embeds documents as hash:64; every query waits until ``answer`` is set."""

    def __init__(self) -> None:
        super().__init__(64)
        self.answer = threading.Event()

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.answer.wait(120)
        return super().embed_query(text)


def test_close_does_not_wait_for_a_search_stuck_in_the_embedder(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with remembrances.open(path, embedder=HashEmbedder(64)) as svc:
        populate(svc, tmp_path / "code")
    embedder = Unanswered()
    embedder.name = "hash:64"
    svc = remembrances.open(path, embedder=embedder)
    enricher = ContextEnricher(
        svc, EnricherConfig(timeout=0.3), planner=HeuristicPlanner(now=lambda: NOW)
    )
    started = time.monotonic()
    result = enricher.enrich("how should we handle HTTP 429 rate limits from the payment API?")
    assert result.dropped and all("timed out" in r for r in result.dropped.values())
    enricher.close()
    svc.close()
    assert time.monotonic() - started < 10  # was: until the query's embedding returned
    embedder.answer.set()  # the late searches now find the store closed, and end


SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    import remembrances
    from remembrances.embeddings import HashEmbedder

    class Unanswered(HashEmbedder):
        def embed_query(self, text):
            threading.Event().wait(600)  # a provider that never answers

    embedder = Unanswered(64)
    with remembrances.open(sys.argv[1], embedder=embedder) as svc:
        print(repr(svc.enrich_context("how do we handle rate limits from the payment API?")))
    """
)


def test_the_process_exits_on_time_when_a_search_is_stuck(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with remembrances.open(path, embedder=HashEmbedder(64)) as svc:
        populate(svc, tmp_path / "code")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60, done.stderr  # was: 600 s, the stuck query's wait
    assert done.stdout.strip() == "''" or done.stdout.startswith("'Relevant memory")


def test_the_pool_runs_work_reports_errors_and_cancels_what_has_not_started() -> None:
    from remembrances.enrichment.daemon_pool import DaemonPool

    pool = DaemonPool(2, "test")
    gate = threading.Event()
    running = [pool.submit(gate.wait, 30) for _ in range(2)]
    queued = pool.submit(lambda: "never")
    failing = DaemonPool(1, "test-fail").submit(lambda: 1 / 0)
    assert isinstance(failing.exception(5), ZeroDivisionError)
    assert pool.close(0.1) is False  # two still run: not waited for past the bound
    assert queued.cancelled()
    gate.set()
    assert all(f.result(5) is True for f in running)


def test_waiting_for_the_shared_pool_cancels_nothing() -> None:
    # code lookups share one pool in the process: closing one memory cancelled another
    # memory's queued lookups ("code lookup for enrichment failed: CancelledError")
    from remembrances.enrichment.daemon_pool import DaemonPool

    pool = DaemonPool(1, "test-shared")
    gate = threading.Event()
    running = pool.submit(gate.wait, 30)
    queued = pool.submit(lambda: "done")
    assert pool.wait(0.1) is False
    gate.set()
    assert running.result(5) is True and queued.result(5) == "done"
    assert pool.submit(lambda: "still open").result(5) == "still open"


def test_an_enricher_closed_makes_no_new_threads(tmp_path: Path) -> None:
    with remembrances.open(tmp_path / "m.db", embedder=HashEmbedder(64)) as svc:
        svc.kb.add("Deploys run on Friday.", source="deploys.md")
        enricher = ContextEnricher(svc, planner=HeuristicPlanner(now=lambda: NOW))
        enricher.enrich_context("when do deploys run?")
        enricher.close()
        before = {t.name for t in threading.enumerate()}
        with pytest.raises(ClosedError, match="enricher was closed"):
            enricher.enrich_context("when do deploys run?")
        started = {t.name for t in threading.enumerate()} - before
        assert not any(name.startswith("remembrances-enrich") for name in started)
