"""Retrieval quality on public benchmarks: SciFact (KB documents) and CoSQA (code).

Question: does each search mode find the right memory, and does hybrid search beat
both of its legs? Targets with the default local embedder (MiniLM int8): text
leg >= 0.66 nDCG@10 on SciFact (a plain BM25), vector leg >= 0.64 (the model's
own figure), default hybrid >= 0.71 on SciFact and >= 0.61 on CoSQA.

Setup: each set is loaded into a fresh store through the public API: SciFact
documents (title, newline, abstract) with ``KnowledgeBase.add``, each abstract one
chunk as in BEIR; CoSQA functions each written to a ``.py`` file and indexed by
``CodeIndexer.index``, so each hit is the chunk the code indexer makes for a
function. Then every test query runs through ``Store.search`` in the text, vector
and hybrid (default) modes, and hybrid with ``fuse="rrf"`` (RRF k=60).

``--fit`` fits the pointwise fusion (``fusion.FusionParams``) on the training
splits only (SciFact train for ``kb``, CoSQA dev for ``code``): the weight of
word coverage against cosine that ranks best (nDCG@10), then a logistic
regression of "is relevant" on the top-10 candidates, which sets the scale.
Hybrid search returns every candidate's cosine and coverage, so the fit needs
no private access to the store.

Data: ``../shared/eval`` (BEIR layout; see its README). Skipped, with a message,
when it is absent.

Run: ``.venv/bin/python -m benchmarks.bench_quality`` (``--cache DIR`` keeps the
store files there and reuses their vectors; ingest time then measures the cache).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from remembrances import Store, fusion
from remembrances.embeddings import create
from remembrances.evaluation import (
    WHOLE_DOCUMENTS,
    BeirSet,
    Metrics,
    ingest,
    load_beir,
    ndcg_at_k,
    rankings_for,
    score_rankings,
)
from remembrances.store import Fuse, SearchMode

ROOT = Path(__file__).resolve().parent.parent

EVAL_DIR = ROOT.parent / "shared" / "eval"
SETS = {"scifact": ("kb", "train"), "cosqa": ("code", "dev")}
POOL = 200
#: Weights of word coverage against cosine tried by ``--fit``.
TEXT_WEIGHTS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 1.2, 1.5, 2.0]

#: Per query: every hybrid candidate's (document, cosine, coverage), and the relevant documents.
Candidates = list[tuple[list[tuple[str, float, float]], dict[str, int]]]


def candidates(
    store: Store, data: BeirSet, kind: str, sources: dict[str, str], collection: str
) -> Candidates:
    out: Candidates = []
    for qid, text in data.queries.items():
        if not data.qrels.get(qid) or not text.strip():
            continue
        hits = store.search(text, limit=POOL, pool=POOL, kind=kind, collection=collection)
        rows = [
            (sources.get(h.source, h.source), h.vector_score or 0.0, h.text_score or 0.0)
            for h in hits
        ]
        out.append((rows, dict(data.qrels[qid])))
    return out


def ndcg_for(cands: Candidates, text_weight: float) -> float:
    total = 0.0
    for rows, relevant in cands:
        best: dict[str, float] = {}
        for doc, cosine, coverage in rows:
            best[doc] = max(best.get(doc, -1.0), cosine + text_weight * coverage)
        ranked = sorted(best, key=lambda d: -best[d])
        total += ndcg_at_k(ranked, relevant)
    return total / max(len(cands), 1)


def logistic(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` maximising the likelihood of ``y ~ sigmoid(a + b x)`` (Newton's method)."""
    a, b = 0.0, 0.0
    design = np.stack([np.ones_like(x), x], axis=1)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(a + b * x)))
        gradient = design.T @ (y - p)
        hessian = (design * (p * (1 - p))[:, None]).T @ design + 1e-9 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        a, b = a + float(step[0]), b + float(step[1])
        if float(np.abs(step).max()) < 1e-8:
            break
    return a, b


def fit(cands: Candidates, name: str) -> fusion.FusionParams:
    scores = {w: ndcg_for(cands, w) for w in TEXT_WEIGHTS}
    print("nDCG@10 by coverage weight: " + ", ".join(f"{w} {s:.4f}" for w, s in scores.items()))
    weight = max(scores, key=lambda w: scores[w])
    xs, ys = [], []
    for rows, relevant in cands:
        ranked = sorted(rows, key=lambda r: -(r[1] + weight * r[2]))[:10]
        for doc, cosine, coverage in ranked:
            xs.append(cosine + weight * coverage)
            ys.append(1.0 if relevant.get(doc, 0) > 0 else 0.0)
    a, b = logistic(np.asarray(xs), np.asarray(ys))
    params = fusion.FusionParams(
        bias=round(a, 2), cosine_weight=round(b, 2), text_weight=round(b * weight, 2)
    )
    print(f"{name}: coverage weight {weight} (nDCG@10 {scores[weight]:.4f}); {params}")
    return params


def row(name: str, m: Metrics) -> str:
    return f"| {name} | {m.ndcg:.3f} | {m.recall:.3f} | {m.mrr:.3f} |"


def run_set(
    name: str, split: str, cache: Path | None, scratch: Path, eval_dir: Path = EVAL_DIR
) -> Candidates:
    kind = SETS[name][0]
    data = load_beir(eval_dir / name, split=split)
    db = (cache or scratch) / f"{name}.db"
    if cache:  # the code indexer remembers the folder it indexed
        scratch = cache / f"{name}-files"
    embedder = create("local")
    with Store(db, embedder=embedder) as store:
        started = time.perf_counter()
        sources = ingest(store, data, kind, scratch=scratch, chunk_size=WHOLE_DOCUMENTS)  # type: ignore[arg-type]
        seconds = time.perf_counter() - started
        print(
            f"\n## {name} ({split}): {len(sources)} documents, {len(data.queries)} queries, "
            f"embedder {embedder.name}, ingest {seconds:.1f} s"
            + (" (vectors from the cache)" if cache else ""),
            flush=True,
        )
        print("\n| search | nDCG@10 | recall@10 | MRR@10 |\n|---|---|---|---|")
        runs: list[tuple[str, SearchMode, Fuse]] = [
            ("text (FTS5 BM25 candidates, ranked by coverage)", "text", "pointwise"),
            ("vector", "vector", "pointwise"),
            ("RRF k=60 of the two legs", "hybrid", "rrf"),
            (f"hybrid (default for kind={kind!r})", "hybrid", "pointwise"),
        ]
        for label, mode, fuse in runs:
            started = time.perf_counter()
            ranks = rankings_for(
                store,
                data.queries,
                mode=mode,
                kind=kind,  # type: ignore[arg-type]
                collection=data.name,
                sources=sources,
                fuse=fuse,
            )
            ms = 1000 * (time.perf_counter() - started) / len(data.queries)
            print(
                row(f"{label} ({ms:.1f} ms/query)", score_rankings(ranks, data.qrels)), flush=True
            )
        return candidates(store, data, kind, sources, data.name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="keep and reuse store files in this folder")
    parser.add_argument("--fit", action="store_true", help="fit the fusion on train/dev splits")
    parser.add_argument("--quick", action="store_true", help="accepted for `make bench`; no-op")
    parser.add_argument("--eval", type=Path, default=EVAL_DIR, help="the eval sets' folder")
    args = parser.parse_args(argv)
    if not args.eval.is_dir():
        print(f"skipped: {args.eval} is absent (see benchmarks/results/quality.md)")
        return 0
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
        scratch = Path(tmp)
        for name, (kind, train) in SETS.items():
            split = train if args.fit else "test"
            cands = run_set(name, split, args.cache, scratch, args.eval)
            if args.fit:
                fit(cands, f"{name} ({kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
