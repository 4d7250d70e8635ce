"""What the other spellings of a query's words cost the text leg, on SciFact's claims.

Question: the text leg asks for each word's other spelling too (``SHA-256`` as
``sha256``, ``rollback`` as the phrase "roll back"; docs/search.md, "The text leg").
How much slower is the FTS5 match of a query that gets one?

Setup: SciFact's 5,183 abstracts in a store (the hash embedder: the text index does
not depend on the model; ``--cache DIR`` keeps the file), and every claim of
``queries.jsonl`` that gets another spelling. Each runs as the FTS5 match the text leg
sends (``fts_query.fts_query``, top 100 by BM25) and as the match of its words alone
(the baseline, same run), interleaved, three rounds.

Run: ``.venv/bin/python -m benchmarks.bench_spellings [--cache DIR] [--eval DIR]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness import load_average
from remembrances import Store
from remembrances.embeddings import create
from remembrances.evaluation import WHOLE_DOCUMENTS, ingest, load_beir
from remembrances.fts_query import fts_query, match_any, query_terms

EVAL_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "eval"
ROUNDS = 3
MATCH = (
    "SELECT rowid, bm25(chunks_fts) AS s FROM chunks_fts WHERE chunks_fts MATCH ? "
    "ORDER BY s LIMIT 100"
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="keep and reuse the store file here")
    parser.add_argument("--eval", type=Path, default=EVAL_DIR, help="the eval sets' folder")
    parser.add_argument("--quick", action="store_true", help="accepted for `make bench`; no-op")
    args = parser.parse_args(argv)
    scifact = args.eval / "scifact"
    if not scifact.is_dir():
        print(f"skipped: {scifact} is absent")
        return 0
    claims = [json.loads(line)["text"] for line in (scifact / "queries.jsonl").open()]
    matches = [(match_any(query_terms(c)), fts_query(c)) for c in claims if query_terms(c)]
    spelled = [(words, whole) for words, whole in matches if words != whole]
    with tempfile.TemporaryDirectory(prefix="bench-spellings-") as scratch:
        folder = args.cache or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        with Store(folder / "scifact-hash.db", embedder=create("hash:64")) as store:
            ingest(store, load_beir(scifact, split="test"), "kb", scratch=Path(scratch),
                   chunk_size=WHOLE_DOCUMENTS)  # fmt: skip
            times = run(store, spelled)
    median = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"load average {load_average()}; {len(spelled)} of {len(matches)} claims get another "
        f"spelling; {ROUNDS} rounds\n\n| FTS5 match | median ms |\n|---|---|"
    )
    for name, value in median.items():
        print(f"| {name} | {value:.2f} |")
    print(f"\nmedian, with the spellings / words alone: {median['with'] / median['words']:.2f}x")
    return 0


def run(store: Store, spelled: list[tuple[str, str]]) -> dict[str, list[float]]:
    """Each claim's two matches, timed in ms; the order alternates by round."""
    times: dict[str, list[float]] = {"words": [], "with": []}
    with store.snapshot() as tx:
        for round_ in range(ROUNDS):
            for words, whole in spelled:
                pair = [("words", words), ("with", whole)]
                for name, match in pair if round_ % 2 == 0 else pair[::-1]:
                    started = time.perf_counter()
                    tx.execute(MATCH, (match,)).fetchall()
                    times[name].append(1000 * (time.perf_counter() - started))
    return times


if __name__ == "__main__":
    sys.exit(main())
