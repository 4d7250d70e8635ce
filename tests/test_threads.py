"""Many threads searching while one writes: every search sees a consistent store."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from remembrances import Chunk, Store

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_threads_search_while_another_writes(store: Store) -> None:
    for i in range(50):
        store.put_source("kb", f"base{i}", [Chunk(f"stable note {i} about indexes")])
    errors: list[BaseException] = []
    stop = threading.Event()
    all_written = threading.Event()  # each of the 20 sources once, however busy the machine

    def writer() -> None:
        i = 0
        while not (stop.is_set() and all_written.is_set()):
            store.put_source("kb", f"new{i % 20}", [Chunk(f"fresh note {i} about writers")])
            i += 1
            if i >= 20:
                all_written.set()

    def reader() -> None:
        try:
            for _ in range(40):
                hits = store.search("stable note about indexes", limit=5)
                assert len(hits) == 5 and all(h.source.startswith("base") for h in hits[:1])
                assert len(store.search("fresh note", mode="vector", limit=3)) >= 1
        except BaseException as exc:
            errors.append(exc)

    write_thread = threading.Thread(target=writer)
    write_thread.start()
    store.put_source("kb", "new-first", [Chunk("fresh note first")])
    readers = [threading.Thread(target=reader) for _ in range(6)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    write_thread.join()
    assert errors == []
    # A search after the writes sees the latest version of every source.
    assert store.count() == 50 + 20 + 1
    assert (
        len(
            store.search(
                "fresh note", mode="vector", limit=100, source=[f"new{i}" for i in range(20)]
            )
        )
        == 20
    )


def test_prepare_is_allowed_while_another_thread_writes(store: Store) -> None:
    entered, release = threading.Event(), threading.Event()

    def hold_write() -> None:
        with store.transaction():
            entered.set()
            release.wait(5)

    holder = threading.Thread(target=hold_write)
    holder.start()
    entered.wait(5)
    # prepare() embeds at once; only its cache write waits for the writer's commit.
    threading.Timer(0.2, release.set).start()
    prepared = store.prepare([Chunk("embedding on another thread is fine")])
    holder.join()
    assert prepared.chunks[0].embedding is not None


@pytest.mark.backends("sqlite")  # PostgreSQL lends readers from a pool of its own
def test_threads_that_come_and_go_do_not_pile_up_readers(store: Store, location: str) -> None:
    # A server's worker threads end after some idle seconds and new ones start: each
    # new thread takes a reader an ended one left, instead of opening one more file.
    store.put_source("kb", "note", [Chunk("a note about short-lived threads")])
    db = store.engine.db  # type: ignore[attr-defined]

    def open_files() -> int:
        fds = Path(f"/proc/{os.getpid()}/fd")
        return sum(1 for fd in fds.iterdir() if Path(location).name in str(_target(fd)))

    def search() -> None:
        assert store.search("short-lived threads", mode="text", limit=1)[0].source == "note"

    before = open_files() if sys.platform == "linux" else 0
    for _ in range(10):  # ten rounds of three threads, each round after the last ended
        batch = [threading.Thread(target=search) for _ in range(3)]
        for thread in batch:
            thread.start()
        for thread in batch:
            thread.join()
    assert len(db._readers) <= 4  # the three last threads' and at most the main one's
    if sys.platform == "linux":
        assert open_files() - before <= 3 * 3  # three readers, each with -wal and -shm


def _target(fd: Path) -> str:
    try:
        return os.readlink(fd)
    except OSError:  # closed since it was listed
        return ""
