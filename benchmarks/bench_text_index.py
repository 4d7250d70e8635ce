"""What reading CJK runs as pairs costs the full-text index: writes, and the upgrade.

Question: since store step 6 the triggers index each chunk through
``remembrances_fts_text`` (a Python function: CJK runs as pairs of characters). What
does that cost a write, on English and on Japanese text, and what does the first
writable open of an older file (the index made anew) cost?

Setup and figures, each against a baseline measured in the same run:
- writes: 20,000 chunks through ``Store.write_source`` (1,000 a source, one
  transaction each), with the step-6 triggers and with triggers that index the raw
  text (step 1's), alternating the order, best of 4; English chunks of 30 words and
  Japanese chunks of 60 characters. Ratio: step 6 ÷ raw.
- upgrade: a file written at store step 4 (its chunks inserted through SQL), opened
  for writing once (steps 5 and 6 run, the index is made anew) and once more; ratio
  to the time the chunks took to insert.

Run: ``.venv/bin/python -m benchmarks.bench_text_index`` (``--chunks N``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.harness import load_average
from remembrances import Store
from remembrances.embeddings import HashEmbedder
from remembrances.storage.schema import STORE_MIGRATIONS, migrate
from remembrances.storage.sqlite_connection import connect
from remembrances.store import Prepared, PreparedChunk, content_hash

PER_SOURCE = 1000
#: Triggers that index the raw text, as store step 1 made them.
RAW_TRIGGERS = """
DROP TRIGGER chunks_fts_insert; DROP TRIGGER chunks_fts_delete; DROP TRIGGER chunks_fts_update;
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text); END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text); END;
"""


def texts(kind: str, n: int, rng: np.random.Generator) -> list[str]:
    if kind == "english":
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        words = ["".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(3000)]
        return [" ".join(rng.choice(words, 30)) for _ in range(n)]
    kana = [chr(c) for c in range(0x3041, 0x3097)] + [chr(c) for c in range(0x4E00, 0x4F90)]
    return ["".join(rng.choice(kana, 60)) + "。" for _ in range(n)]


def write_seconds(folder: Path, chunks: list[str], *, raw: bool) -> float:
    with Store(folder / f"w-{raw}-{time.monotonic_ns()}.db", embedder=HashEmbedder(64)) as s:
        if raw:
            with s.transaction() as tx:
                tx.execute(RAW_TRIGGERS)
        blob = np.asarray(HashEmbedder(64).embed_documents(["x"])[0], np.float32).tobytes()
        prepared = [PreparedChunk(t, "{}", None, content_hash(t), None, blob) for t in chunks]
        start = time.perf_counter()
        for i in range(0, len(prepared), PER_SOURCE):
            with s.transaction():
                s.write_source("kb", "default", f"d{i}", Prepared(prepared[i : i + PER_SOURCE]))
        return time.perf_counter() - start


def upgrade_seconds(folder: Path, chunks: list[str]) -> tuple[float, float, float]:
    """(inserting the chunks at step 4, the first writable open, the second)."""
    path = folder / "step4.db"
    conn = connect(path)
    conn.execute("BEGIN IMMEDIATE")
    migrate(conn, "store", STORE_MIGRATIONS[:4])
    conn.execute("INSERT INTO meta (key, value) VALUES ('embedder', 'hash:64'), ('dim', '64')")
    start = time.perf_counter()
    conn.executemany(
        "INSERT INTO chunks (kind, collection, source, position, text, content_hash, "
        "created_at) VALUES ('kb', 'default', ?, ?, ?, ?, 0)",
        [(f"d{i // PER_SOURCE}", i % PER_SOURCE, t, content_hash(t)) for i, t in enumerate(chunks)],
    )
    conn.execute("COMMIT")
    inserting = time.perf_counter() - start
    conn.close()
    opens = []
    for _ in range(2):
        start = time.perf_counter()
        Store(path, embedder=HashEmbedder(64)).close()
        opens.append(time.perf_counter() - start)
    return inserting, opens[0], opens[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="(the default size is quick)")
    args = parser.parse_args(argv)
    print(f"load average {load_average()}")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="bench-text-index-") as tmp:
        folder = Path(tmp)
        for kind in ("english", "japanese"):
            chunks = texts(kind, args.chunks, rng)
            runs: dict[bool, list[float]] = {True: [], False: []}
            for attempt in range(4):
                for raw in (True, False) if attempt % 2 else (False, True):
                    runs[raw].append(write_seconds(folder, chunks, raw=raw))
            raw, paired = min(runs[True]), min(runs[False])
            print(
                f"{kind}: {args.chunks:,} chunks written in {paired:.2f} s with step 6's "
                f"triggers, {raw:.2f} s indexing the raw text: {paired / raw:.2f}x",
                flush=True,
            )
        inserting, first, second = upgrade_seconds(folder, texts("english", args.chunks, rng))
        print(
            f"upgrade of a step-4 file of {args.chunks:,} chunks: first writable open "
            f"{first:.2f} s, then {second:.2f} s; inserting them took {inserting:.2f} s "
            f"(first open {first / inserting:.2f}x that)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
