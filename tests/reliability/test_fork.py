"""A memory opened before ``fork()`` (gunicorn --preload, multiprocessing's fork start
method) refuses the child with ClosedError, and the child opens its own.

Each child reports through its exit code and never returns into pytest (``os._exit``);
``signal.alarm`` ends a child that would hang on a lock a vanished thread held.
"""

from __future__ import annotations

import os
import signal
import threading
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

import remembrances
from remembrances import ClosedError, RemembrancesService

pytestmark = [
    pytest.mark.backends("sqlite", "postgresql"),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here"),
]


def in_child(check: Callable[[], None]) -> int:
    """Run ``check`` in a forked child; its exit status (0: it passed)."""
    pid = os.fork()
    if pid == 0:  # the child
        signal.alarm(30)
        code = 1
        try:
            check()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def seeded(location: str) -> RemembrancesService:
    svc = remembrances.open(location, embedder="hash:64")
    svc.kb.add("Deploys run from the release branch every Friday.", source="deploys.md")
    svc.events.log("Rolled back the 2.3 deploy")
    assert svc.enrich_context("when do deploys run?")  # the enricher's threads are up
    return svc


def test_a_child_is_refused_and_opens_its_own(location: str) -> None:
    svc = seeded(location)

    def child() -> None:
        for call in (
            lambda: svc.kb.search("deploys"),
            lambda: svc.events.log("written by the child"),
            lambda: svc.enrich_context("when do deploys run?"),  # not "" after a timeout
        ):
            with pytest.raises(ClosedError, match="forked from it; open it again here"):
                call()
        svc.close()  # leaves the parent's connections alone
        with remembrances.open(location, embedder="hash:64") as mine:
            assert mine.kb.search("deploys")[0].source == "deploys.md"
            mine.events.log("written by the child")

    assert in_child(child) == 0
    # The parent's memory still works, and holds the child's event.
    assert [e.content for e in svc.events.list()][:1] == ["written by the child"]
    assert svc.kb.search("deploys")[0].source == "deploys.md"
    assert svc.check().ok
    svc.close()


def test_a_child_forked_inside_a_write_does_not_hang(location: str, tmp_path: Path) -> None:
    svc = seeded(location)
    inside, release = threading.Event(), threading.Event()

    def writer() -> None:
        with svc.store.transaction():
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    assert inside.wait(30)
    try:

        def child() -> None:  # the writer's lock is held by a thread the child lacks
            with pytest.raises(ClosedError):
                svc.events.log("from the child")

        assert in_child(child) == 0
    finally:
        release.set()
        thread.join()
    svc.events.log("from the parent")
    svc.close()
