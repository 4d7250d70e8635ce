"""kill -9 at random moments during writes: the file opens, check passes, and every
source is either fully old or fully new."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remembrances import Store
from remembrances.embeddings import HashEmbedder
from remembrances.integrity import check

WRITER = """
import sys, itertools
from remembrances import Store, Chunk
from remembrances.embeddings import HashEmbedder
store = Store(sys.argv[1], embedder=HashEmbedder(64))
for version in itertools.count(int(sys.argv[2])):
    for doc in range(8):
        chunks = [Chunk(f"doc{doc} version{version} part{p} " + "filler " * 40) for p in range(6)]
        store.put_source("kb", f"doc{doc}", chunks)
        print(version, doc, flush=True)
"""

PATTERN = re.compile(r"doc(\d+) version(\d+) part(\d+)")


def run_kills(path: Path, kills: int, seed: int) -> int:
    rng = random.Random(seed)
    completed = 0
    for round_ in range(kills):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(round_ * 1000)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        proc.stdout.readline()  # at least one write happened (imports are slow)
        time.sleep(rng.uniform(0.0, 0.3))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        completed += 1
    return completed


def assert_consistent(path: Path) -> None:
    store = Store(path, embedder=HashEmbedder(64))
    report = check(store)
    assert report.ok, report.problems
    for doc in range(8):
        chunks = store.get_source("kb", f"doc{doc}")
        if not chunks:
            continue
        parsed = [PATTERN.match(c.text) for c in chunks]
        assert all(parsed)
        versions = {m.group(2) for m in parsed if m}
        assert len(versions) == 1, f"doc{doc} mixes versions {versions}"
        assert [int(m.group(3)) for m in parsed if m] == list(range(6))
        assert all(c.has_embedding for c in chunks)
    # Every index agrees: a vector and a text search reach each stored doc.
    assert len(store.search("filler", mode="vector", limit=100)) == store.count()
    store.close()


def test_kill_9_during_writes(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    Store(path, embedder=HashEmbedder(64)).close()
    run_kills(path, kills=6, seed=1)
    assert_consistent(path)


@pytest.mark.slow
def test_kill_9_soak(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    Store(path, embedder=HashEmbedder(64)).close()
    run_kills(path, kills=100, seed=2)
    assert_consistent(path)
