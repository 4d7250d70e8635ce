"""Conversation memory on LoCoMo's development half: is what was said found again?

Question: for each answerable question (categories 1-4) of the five development
conversations, how many of its evidence turns does each method put in the top 5
and 10, and does ``enrich_context`` bring one of them? Target (issue 21):
``events.search`` evidence recall@5 >= 0.62 with the default local embedder and
no LLM.

Setup: ``remembrances.conversation_eval.evaluate``, the code behind
``remembrances eval --conversations``: each conversation logged session by session
with ``EventLog.log_conversation`` (speaker, text, the BLIP caption of a shared
photo; the session's date as the turns' time) into a store of its own; then the
store's BM25 leg, vector leg and RRF of the two over that same index, and
``events.search`` as users call it, and ``enrich_context``.

Embeddings are cached by text in ``--cache`` (default ``~/.cache/remembrances-bench``)
so a re-run embeds only turns whose indexed text changed: the machine has two
shared cores and the 2,760 turns take minutes to embed.

Data: ``../shared/eval/locomo-dev`` (see its README; the other five conversations
of the release are held out and never read). Skipped, with a message, when absent.

Run: ``.venv/bin/python -m benchmarks.bench_locomo``
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from remembrances.conversation_eval import evaluate
from remembrances.embeddings import Embedder, create

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "eval" / "locomo-dev"
TARGET = 0.62


class CachedEmbedder:
    """The configured embedder, with its vectors remembered by text on disk.

    Keeps the inner embedder's name and dimension, so the stores it writes are the
    same as the inner embedder's (queries are cached apart from documents, since
    some models embed them differently).
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vector BLOB)")
        # enrich_context's sources embed the query from their own threads: one
        # connection shared without a lock dropped sources ("cannot commit - no
        # transaction is active") when another process wrote the same cache.
        self.lock = threading.Lock()
        self.embedded = 0

    def _key(self, kind: str, text: str) -> str:
        return f"{self.name}:{kind}:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _lookup(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            part = list(keys[start : start + 500])
            marks = ",".join("?" * len(part))
            for key, blob in self.db.execute(
                f"SELECT key, vector FROM v WHERE key IN ({marks})", part
            ):
                found[key] = np.frombuffer(blob, dtype="<f4")
        return found

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        with self.lock:
            return self._embed_documents(texts)

    def _embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key("doc", t) for t in texts]
        found = self._lookup(keys)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            vectors = np.asarray(self.inner.embed_documents(list(missing.values())), dtype="<f4")
            self.embedded += len(missing)
            rows = [(k, v.tobytes()) for k, v in zip(missing, vectors, strict=True)]
            self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self.db.commit()
            found.update(dict(zip(missing, vectors, strict=True)))
        return np.stack([found[k] for k in keys])

    def embed_query(self, text: str) -> Any:
        with self.lock:
            return self._embed_query(text)

    def _embed_query(self, text: str) -> Any:
        key = self._key("query", text)
        found = self._lookup([key])
        if key in found:
            return found[key]
        vector = np.asarray(self.inner.embed_query(text), dtype="<f4")
        self.db.execute("INSERT OR REPLACE INTO v VALUES (?, ?)", (key, vector.tobytes()))
        self.db.commit()
        return vector


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--embedder", default=None, help="embedder spec [default: configured]")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "remembrances-bench")
    parser.add_argument("--no-enrich", action="store_true", help="skip enrich_context")
    parser.add_argument("--quick", action="store_true", help="accepted for make bench; no effect")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (see ../shared/eval/README.md)")
        return 0
    embedder = CachedEmbedder(create(args.embedder), args.cache / "locomo-vectors.sqlite")
    started = time.perf_counter()
    result = evaluate(
        args.data,
        embedder=embedder,
        enrich=not args.no_enrich,
        progress=lambda phase, _done, _total: print(phase, file=sys.stderr, flush=True),
    )
    elapsed = time.perf_counter() - started
    print(
        f"LoCoMo dev: {result.conversations} conversations, {result.turns} turns, "
        f"{result.questions} questions; embedder {result.embedder}; "
        f"{embedder.embedded} texts embedded (the rest cached); {elapsed:.0f} s"
    )
    print(result.table())
    per_query = {
        m: 1000 * s / max(result.questions, 1) for m, s in result.seconds.items() if m != "log"
    }
    print(
        f"logging: {result.seconds['log']:.0f} s for {result.turns} turns; ms per question: "
        + ", ".join(f"{m} {v:.1f}" for m, v in per_query.items())
    )
    recall = result.methods["events.search"].recall[5]
    verdict = "meets" if recall >= TARGET else "MISSES"
    print(f"events.search recall@5 {recall:.3f} {verdict} the target {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
