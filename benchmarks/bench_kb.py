"""Knowledge base ingest and event log costs, as ratios to baselines from the same run.

Questions:
- How fast does a tree of Markdown notes become searchable, and does a second
  pass over the unchanged tree cost about as much as listing and ``stat``-ing the
  files (it reads nothing)? Baseline: walking the tree and reading + SHA-256
  hashing every file, measured in the same run.
- What does one edited file cost compared with the whole tree?
- How fast is the chunker compared with the crudest splitter (``re.split`` on
  blank lines) over the same text?
- Events: logging throughput with ``log_many``, and the latency of a search with
  a time window and a subject filter (applied inside the search) relative to the
  same search without filters.

Setup: a synthetic, deterministic corpus (seeded) in a temporary directory;
the hashing test embedder (``hash:384``) so that the figures measure this code,
not a model.

Run: ``.venv/bin/python -m benchmarks.bench_kb`` (``--files N`` to change the
corpus size; default 1000). Writes benchmarks/results/kb.md.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.harness import read_and_hash, timed
from remembrances import Store
from remembrances.chunking import chunk_text
from remembrances.embeddings import HashEmbedder
from remembrances.events import EventLog
from remembrances.kb import KnowledgeBase

RESULTS = Path(__file__).resolve().parent / "results" / "kb.md"
WORDS = [
    "install",
    "configure",
    "deploy",
    "server",
    "client",
    "request",
    "response",
    "cache",
    "index",
    "query",
    "vector",
    "database",
    "migration",
    "schema",
    "backup",
    "restore",
    "token",
    "retry",
    "timeout",
    "upload",
    "download",
    "network",
    "latency",
    "memory",
    "thread",
    "process",
    "queue",
    "event",
    "log",
    "error",
    "warning",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "it",
    "that",
    "this",
    "be",
    "are",
    "from",
    "at",
]


class TimedEmbedder(HashEmbedder):
    """The hashing embedder, timing its own calls so they can be told apart."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.seconds = 0.0

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return super().embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - start


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def note(rng: random.Random, n: int) -> str:
    parts = [f"# Note {n}\n"]
    for s in range(rng.randint(2, 6)):
        parts.append(f"\n## Section {s}\n")
        for _ in range(rng.randint(1, 4)):
            parts.append("\n" + " ".join(sentence(rng) for _ in range(rng.randint(2, 8))) + "\n")
    return "".join(parts)


def make_corpus(root: Path, files: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    total = 0
    for n in range(files):
        path = root / f"dir{n % 20:02d}" / f"note{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = note(rng, n)
        path.write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
    return total


def hash_baseline(root: Path) -> float:
    """Seconds to read and hash every file of the corpus: the floor of any re-ingest."""
    paths = (os.path.join(d, name) for d, _, names in os.walk(root) for name in names)
    return read_and_hash(paths)[0]


def bench_ingest(work: Path, files: int) -> list[str]:
    corpus = work / "notes"
    size = make_corpus(corpus, files)
    embedder = TimedEmbedder(384)
    with Store(work / "kb.db", embedder=embedder) as store:
        kb = KnowledgeBase(store)
        first_s, first = timed(lambda: kb.ingest(corpus))
        embed_s = embedder.seconds
        baseline_s = min(hash_baseline(corpus) for _ in range(3))
        second_s, second = timed(lambda: kb.ingest(corpus))
        assert not second.changed and second.embedded == 0
        target = corpus / "dir00" / "note00000.md"
        target.write_text(target.read_text() + "\nOne more line about retries.\n")
        stat = target.stat()
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
        one_s, one = timed(lambda: kb.ingest(corpus))
        assert one.updated == ["dir00/note00000.md"]
    return [
        f"Corpus: {files} Markdown files, {size / 1e6:.1f} MB, {first.chunks} chunks "
        f"(default chunker: 1200 chars, 150 overlap); embedder `hash:384`.",
        "",
        "| pass | time | vs. read + SHA-256 of every file | notes |",
        "|---|---|---|---|",
        f"| first ingest | {first_s:.2f} s | {first_s / baseline_s:.0f}× | "
        f"{files / first_s:.0f} files/s, {first.chunks / first_s:.0f} chunks/s, "
        f"{first.embedded} texts embedded, {embed_s:.2f} s of it in the embedder; "
        f"without it {first_s - embed_s:.2f} s ({files / (first_s - embed_s):.0f} files/s) |",
        f"| second pass, nothing changed | {second_s * 1000:.0f} ms | "
        f"{second_s / baseline_s:.2f}× | 0 embedded; {first_s / second_s:.0f}× faster than "
        "the first pass |",
        f"| one file edited | {one_s * 1000:.0f} ms | {one_s / baseline_s:.2f}× | "
        f"{one.embedded} embedded, {one.cached} from cache |",
        f"| baseline: walk + read + SHA-256 all files | {baseline_s * 1000:.0f} ms | 1× | "
        "best of 3 |",
    ]


def bench_chunker(work: Path) -> list[str]:
    rng = random.Random(11)
    text = "\n\n".join(note(rng, n) for n in range(400))
    crude = min(timed(lambda: re.split(r"\n\s*\n", text))[0] for _ in range(5))
    ours, chunks = min(timed(lambda: chunk_text(text)) for _ in range(3))
    mb = len(text) / 1e6
    return [
        f"Chunker on {mb:.1f} M characters of Markdown ({len(chunks)} chunks): "
        f"{ours * 1000:.0f} ms ({mb / ours:.1f} M chars/s); `re.split` on blank lines "
        f"{crude * 1000:.1f} ms; ratio {ours / crude:.0f}× (best of 3 vs best of 5).",
    ]


def bench_events(work: Path, count: int) -> list[str]:
    rng = random.Random(5)
    now = datetime.now(UTC)
    items = [
        {
            "content": sentence(rng),
            "subject": f"subject{rng.randint(0, 19)}",
            "at": now - timedelta(minutes=rng.randint(0, 60 * 24 * 365)),
        }
        for _ in range(count)
    ]
    with Store(work / "events.db", embedder=HashEmbedder(384)) as store:
        log = EventLog(store)
        log_s, _ = timed(lambda: log.log_many(items))
        queries = [sentence(rng) for _ in range(30)]
        log.search(queries[0])  # load the vector index once

        def median(**filters: object) -> float:
            times = [timed(lambda q=q: log.search(q, limit=10, **filters))[0] for q in queries]
            return statistics.median(times)

        plain = median()
        windowed = median(last="30d")
        subject = median(subject="subject3", last="30d")
        listing = statistics.median(
            timed(lambda: log.search(None, last="30d", limit=10))[0] for _ in range(30)
        )
    return [
        f"Events: {count} events over one year, 20 subjects, embedder `hash:384`.",
        "",
        "| operation | time | vs. unfiltered search |",
        "|---|---|---|",
        f"| `log_many` of {count} events | {log_s:.2f} s ({count / log_s:.0f} events/s) | |",
        f"| search, no filter (median of 30) | {plain * 1000:.1f} ms | 1× |",
        f'| search, `last="30d"` | {windowed * 1000:.1f} ms | {windowed / plain:.2f}× |',
        f'| search, `subject=...` + `last="30d"` | {subject * 1000:.1f} ms | '
        f"{subject / plain:.2f}× |",
        f'| list newest first, `last="30d"` | {listing * 1000:.2f} ms | {listing / plain:.2f}× |',
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-kb-"))
    try:
        lines = [
            "# Knowledge base and events",
            "",
            f"Command: `.venv/bin/python benchmarks/bench_kb.py --files {args.files} "
            f"--events {args.events}` ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
            f"{os.cpu_count()} cores shared with other work; single runs, so expect noise).",
            "",
            "## Ingest",
            "",
            *bench_ingest(work, args.files),
            "",
            "## Chunking",
            "",
            *bench_chunker(work),
            "",
            "## Events",
            "",
            *bench_events(work, args.events),
            "",
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
