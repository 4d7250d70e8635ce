"""Searching one user's or one session's events in a memory shared by many.

Question: what does keeping ``events.search`` to one user (or one session) cost, next to
the same search of every event? The scope is a metadata filter; the chunk table indexes
the ``user`` and ``session`` keys (store step 7, ``storage/filters.py``).

Setup: ``--events`` events (default 100,000) logged by ``--users`` users (default 50),
each in a session of its own, ``hash:64`` embedder (no model time in the figures). Then
``--calls`` searches each: unscoped, ``user=``, ``session=``; then the same with the two
indexes dropped (what files before step 7 did, in the same run). Writes: logging
``--write-events`` events into a new memory with the indexes and without.

Figures, against a baseline measured in the same run: the median scoped search ÷ the
median unscoped one, with and without the indexes, and the write time ratio.

Run: ``.venv/bin/python -m benchmarks.bench_scope`` (``--quick``: 20,000 events).
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import remembrances
from benchmarks.harness import load_average

WORDS = [
    *("deploy", "cache", "build", "api", "pods", "release", "freeze", "rollback", "test"),
    *("review", "meeting", "lunch", "invoice", "travel", "schema", "backup", "alert"),
    *("latency", "queue", "billing"),
]
QUERY = "why did the rollback of the api pods happen"


def _events(count: int, users: int, seed: int = 1) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {
            "content": f"event {i}: {' '.join(rng.sample(WORDS, 4))} step {i % 97}",
            "subject": "ops",
            "user": f"u{i % users}",
        }
        for i in range(count)
    ]


def _median_ms(call: Callable[[], object], calls: int) -> float:
    call()  # warm: the vector index loads on the first search
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _drop_indexes(memory: remembrances.RemembrancesService) -> None:
    with memory.store.transaction() as tx:
        tx.execute("DROP INDEX chunks_user")
        tx.execute("DROP INDEX chunks_session")


def _log(path: Path, events: list[dict[str, str]], *, indexes: bool) -> float:
    with remembrances.open(path, embedder="hash:64") as memory:
        if not indexes:
            _drop_indexes(memory)
        start = time.perf_counter()
        for i in range(0, len(events), 2_000):
            memory.events.log_many(events[i : i + 2_000])
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--write-events", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    count = 20_000 if args.quick else args.events
    print(f"load average {load_average()}")
    with tempfile.TemporaryDirectory(prefix="bench-scope-") as tmp:
        writes = _events(args.write_events, args.users, seed=2)
        with_indexes = _log(Path(tmp) / "w1.db", writes, indexes=True)
        without = _log(Path(tmp) / "w2.db", writes, indexes=False)
        print(
            f"logging {len(writes):,} events: {with_indexes:.1f} s with the indexes, "
            f"{without:.1f} s without, ratio {with_indexes / without:.2f}x",
            flush=True,
        )
        path = Path(tmp) / "m.db"
        with remembrances.open(path, embedder="hash:64") as memory:
            events = _events(count, args.users)
            for i in range(0, count, 2_000):
                memory.events.log_many(events[i : i + 2_000])
            session = memory.events.log_conversation(
                [{"role": "user", "content": "the api pods were rolled back after the release"}],
                session="s7",
                user="u7",
            ).session
            for label in ("with the indexes", "without (before step 7)"):
                if label.startswith("without"):
                    _drop_indexes(memory)
                search = functools.partial(memory.events.search, QUERY, limit=10)
                unscoped = _median_ms(search, args.calls)
                user = _median_ms(functools.partial(search, user="u7"), args.calls)
                in_session = _median_ms(
                    functools.partial(search, session=session, user="u7"), args.calls
                )
                print(
                    f"{count:,} events, {label}: unscoped {unscoped:.1f} ms, user {user:.1f} ms "
                    f"({user / unscoped:.2f}x), session {in_session:.1f} ms "
                    f"({in_session / unscoped:.2f}x)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
