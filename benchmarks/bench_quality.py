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
and hybrid (default) modes. The fusion comparison reuses per-leg top-100 lists
(``Store.search`` with ``limit=100`` per leg) and fuses them offline with each
variant; the ``calibrated`` row uses the same code as the default hybrid.

``--fit`` grid-searches the calibrated fusion's text-weight parameters on the
training splits only (SciFact train, CoSQA dev) and prints the best.

Data: ``../shared/eval`` (BEIR layout; see its README). Skipped, with a message,
when it is absent.

Run: ``.venv/bin/python benchmarks/bench_quality.py`` (``--cache DIR`` keeps the
store files there and reuses their vectors; ingest time then measures the cache).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from remembrances import Store, fusion  # noqa: E402
from remembrances.embeddings import create  # noqa: E402
from remembrances.evaluation import (  # noqa: E402
    WHOLE_DOCUMENTS,
    BeirSet,
    Metrics,
    ingest,
    load_beir,
    rankings_for,
    score_rankings,
)

EVAL_DIR = ROOT.parent / "shared" / "eval"
SETS = {"scifact": ("kb", "train"), "cosqa": ("code", "dev")}
POOL = 100

Legs = dict[str, tuple[list[tuple[str, float]], list[tuple[str, float]]]]
Fuser = Callable[[list[tuple[int, float]], list[tuple[int, float]]], list[fusion.Fused]]


def bm25_of(text_score: float) -> float:
    """Undo ``fusion.text_score`` (x / (x + BM25_HALF)) to get the raw BM25 back."""
    return fusion.BM25_HALF * text_score / (1.0 - text_score) if text_score < 1.0 else 1e9


def leg_lists(
    store: Store, data: BeirSet, kind: str, sources: dict[str, str], collection: str
) -> Legs:
    """Per query: the vector leg's (doc, cosine) and the text leg's (doc, BM25) top-100."""
    legs: Legs = {}
    for qid, text in data.queries.items():
        lists = []
        for mode in ("vector", "text"):
            hits = store.search(text, mode=mode, limit=POOL, kind=kind, collection=collection)
            best: dict[str, float] = {}  # a document's best chunk stands for it
            for h in hits:
                doc = sources.get(h.source, h.source)
                value = h.vector_score if mode == "vector" else bm25_of(h.text_score or 0.0)
                best.setdefault(doc, value or 0.0)
            lists.append(list(best.items()))
        legs[qid] = (lists[0], lists[1])
    return legs


def fused_rankings(legs: Legs, fuse: Fuser) -> dict[str, list[str]]:
    """Fuse each query's leg lists with ``fuse`` (documents stand in for chunk ids)."""
    out = {}
    for qid, (vec, txt) in legs.items():
        ids: dict[str, int] = {}
        v = [(ids.setdefault(d, len(ids)), s) for d, s in vec]
        t = [(ids.setdefault(d, len(ids)), s) for d, s in txt]
        back = {i: d for d, i in ids.items()}
        out[qid] = list(dict.fromkeys(back[f.id] for f in fuse(v, t)))[:10]
    return out


def minmax_convex(w_text: float) -> Fuser:
    """The README's reference: 0.5/0.5 mix of per-leg min-max scores over the pools."""

    def fuse(v: list[tuple[int, float]], t: list[tuple[int, float]]) -> list[fusion.Fused]:
        scores: dict[int, float] = {}
        for hits, w in ((v, 1.0 - w_text), (t, w_text)):
            if not hits:
                continue
            hi, lo = hits[0][1], min(s for _, s in hits)
            for i, s in hits:
                scores[i] = scores.get(i, 0.0) + w * ((s - lo) / (hi - lo) if hi > lo else 1.0)
        return [fusion.Fused(i, s) for i, s in sorted(scores.items(), key=lambda x: -x[1])]

    return fuse


def variants(kind: str) -> dict[str, Fuser]:
    params, own = fusion.DEFAULT_PARAMS, fusion.params_for(kind)
    return {
        "vector leg only": lambda v, t: fusion.calibrated(v, []),
        "text leg only": lambda v, t: fusion.calibrated([], t),
        "RRF k=60": lambda v, t: fusion.rrf(v, t),
        "convex 0.5/0.5, min-max": minmax_convex(0.5),
        "convex 0.7/0.3 (vector/text), min-max": minmax_convex(0.3),
        "calibrated, fixed text weight 0.5": lambda v, t: fusion.calibrated(
            v, t, params=fusion.FusionParams(text_bias=0.0, text_slope=0.0)
        ),
        f"calibrated, query-dependent, joint fit (bias {params.text_bias}, "
        f"slope {params.text_slope}, peak rank {params.peak_rank})": lambda v, t: fusion.calibrated(
            v, t
        ),
        f"calibrated, query-dependent, fitted for {kind} (default for kind={kind!r}: bias "
        f"{own.text_bias}, slope {own.text_slope}, peak rank {own.peak_rank})": (
            lambda v, t: fusion.calibrated(v, t, params=own)
        ),
    }


GRID = list(
    itertools.product(
        [-6.0, -5.0, -4.5, -4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0],
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
        [5, 10, 20],
    )
)


def fit(legs_by_set: dict[str, Legs], data_by_set: dict[str, BeirSet]) -> None:
    """Grid search over the text-weight parameters, scored on the training splits only.

    Per kind: the parameters with the best nDCG@10 on that set's training split.
    Joint (the default for searches across kinds): the issue's objective, hybrid
    above both legs on both sets, so the smaller of the two sets' gains over
    their better single leg is maximised.
    """
    best_leg = {}
    for name, legs in legs_by_set.items():
        best_leg[name] = max(
            score_rankings(fused_rankings(legs, fuse), data_by_set[name].qrels).ndcg
            for fuse in (
                lambda v, t: fusion.calibrated(v, []),
                lambda v, t: fusion.calibrated([], t),
            )
        )
    print("best single leg per set: " + ", ".join(f"{n} {s:.4f}" for n, s in best_leg.items()))
    scores: dict[tuple[float, float, int], dict[str, float]] = {}
    for bias, slope, peak in GRID:
        params = fusion.FusionParams(text_bias=bias, text_slope=slope, peak_rank=peak)
        scores[(bias, slope, peak)] = {
            name: score_rankings(
                fused_rankings(legs, lambda v, t, p=params: fusion.calibrated(v, t, params=p)),
                data_by_set[name].qrels,
            ).ndcg
            for name, legs in legs_by_set.items()
        }
    for name in legs_by_set:
        key = max(scores, key=lambda k: scores[k][name])
        print(
            f"best for {name} ({SETS[name][0]}): bias, slope, peak rank {key}: {scores[key][name]:.4f}"
        )
    joint = max(scores, key=lambda k: min(scores[k][n] - best_leg[n] for n in legs_by_set))
    gains = ", ".join(f"{n} {scores[joint][n] - best_leg[n]:+.4f}" for n in legs_by_set)
    print(f"best joint: bias, slope, peak rank {joint}: gains {gains}")


def row(name: str, m: Metrics) -> str:
    return f"| {name} | {m.ndcg:.3f} | {m.recall:.3f} | {m.mrr:.3f} |"


def run_set(name: str, split: str, cache: Path | None, scratch: Path) -> tuple[BeirSet, Legs]:
    kind = SETS[name][0]
    data = load_beir(EVAL_DIR / name, split=split)
    db = (cache or scratch) / f"{name}.db"
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
        print("\n| mode | nDCG@10 | recall@10 | MRR@10 |\n|---|---|---|---|")
        for mode in ("text", "vector", "hybrid"):
            started = time.perf_counter()
            ranks = rankings_for(
                store, data.queries, mode=mode, kind=kind, collection=data.name, sources=sources
            )  # type: ignore[arg-type]
            ms = 1000 * (time.perf_counter() - started) / len(data.queries)
            print(row(f"{mode} ({ms:.1f} ms/query)", score_rankings(ranks, data.qrels)), flush=True)
        legs = leg_lists(store, data, kind, sources, data.name)
    return data, legs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="keep and reuse store files in this folder")
    parser.add_argument("--fit", action="store_true", help="fit the fusion on train/dev splits")
    parser.add_argument("--quick", action="store_true", help="accepted for `make bench`; no-op")
    args = parser.parse_args(argv)
    if not EVAL_DIR.is_dir():
        print(f"skipped: {EVAL_DIR} is absent (see benchmarks/results/quality.md)")
        return 0
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
        scratch = Path(tmp)
        if args.fit:
            legs_by_set, data_by_set = {}, {}
            for name, (_, train) in SETS.items():
                data_by_set[name], legs_by_set[name] = run_set(name, train, args.cache, scratch)
            fit(legs_by_set, data_by_set)
            return 0
        for name in SETS:
            data, legs = run_set(name, "test", args.cache, scratch)
            print(f"\nfusion variants on {name} test (top-{POOL} pools per leg):\n")
            print("| fusion | nDCG@10 | recall@10 | MRR@10 |\n|---|---|---|---|")
            for label, fuse in variants(SETS[name][0]).items():
                print(row(label, score_rankings(fused_rankings(legs, fuse), data.qrels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
