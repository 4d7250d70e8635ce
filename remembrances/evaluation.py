"""Measuring retrieval quality on a BEIR-layout folder: nDCG@10, recall@10, MRR@10.

Speed means nothing if the right memory is not found, and quality depends on the
user's own data, chunking, embedder and fusion. :func:`evaluate` loads a folder in
the layout of the BEIR benchmarks (``corpus.jsonl``, ``queries.jsonl``,
``qrels/<split>.tsv``) into a fresh store through the public API and runs every
query in each search mode, so users can compare settings on their own data with
the same numbers the project reports in ``benchmarks/results/quality.md``.

The metrics follow ``trec_eval`` (as BEIR uses it): nDCG with linear gains (the
judged grade) and a ``log2(rank + 1)`` discount, recall as the share of the
relevant documents found in the top k, and the reciprocal rank of the first
relevant document (0 when none is in the top k).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .embeddings import Embedder
from .errors import InvalidInputError
from .progress import Progress
from .records import Chunk
from .store import Fuse, SearchMode, Store

Kind = Literal["kb", "code"]
MODES: tuple[SearchMode, ...] = ("text", "vector", "hybrid")
#: Judgments: query id -> {document id: grade}; grades <= 0 mean "not relevant".
Qrels = Mapping[str, Mapping[str, int]]


# -- metrics ---------------------------------------------------------------------------


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain of one ranking (0 when nothing is relevant)."""
    gains = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    if ideal == 0:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for i, doc in enumerate(ranked[:k]):
        if doc in seen:  # a document counts once, however many of its chunks were found
            continue
        seen.add(doc)
        grade = relevant.get(doc, 0)
        if grade > 0:
            dcg += grade / math.log2(i + 2)
    return dcg / ideal


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """Share of the relevant documents that appear in the top ``k``."""
    wanted = {d for d, g in relevant.items() if g > 0}
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def mrr_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document in the top ``k`` (else 0)."""
    for i, doc in enumerate(ranked[:k]):
        if relevant.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


@dataclass(frozen=True)
class Metrics:
    """Mean metrics over the judged queries of one search mode."""

    ndcg: float
    recall: float
    mrr: float
    queries: int


def score_rankings(rankings: Mapping[str, Sequence[str]], qrels: Qrels, *, k: int = 10) -> Metrics:
    """Mean nDCG@k, recall@k and MRR@k over every judged query.

    A judged query missing from ``rankings`` counts as a ranking that found
    nothing: dropping it would flatter the result.
    """
    judged = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    if not judged:
        raise InvalidInputError("no query has a relevant document in the judgments")
    totals = [0.0, 0.0, 0.0]
    for query_id in judged:
        ranked = list(rankings.get(query_id, ()))
        relevant = qrels[query_id]
        totals[0] += ndcg_at_k(ranked, relevant, k)
        totals[1] += recall_at_k(ranked, relevant, k)
        totals[2] += mrr_at_k(ranked, relevant, k)
    n = len(judged)
    return Metrics(totals[0] / n, totals[1] / n, totals[2] / n, n)


# -- the BEIR layout -------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirSet:
    """A corpus, its queries, and the judgments of one split."""

    name: str
    corpus: list[Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    split: str


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{number} is not JSON: {exc.msg}") from exc
            if not isinstance(row, dict) or "_id" not in row:
                raise InvalidInputError(f"{path}:{number} has no '_id' field")
            yield row


def load_beir(path: str | os.PathLike[str], *, split: str = "test") -> BeirSet:
    """Read a BEIR-layout folder; only the queries judged in ``split`` are kept."""
    root = Path(path)
    files = {
        "corpus": root / "corpus.jsonl",
        "queries": root / "queries.jsonl",
        "qrels": root / "qrels" / f"{split}.tsv",
    }
    for what, file in files.items():
        if not file.is_file():
            splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
            hint = f" (splits found: {', '.join(splits)})" if what == "qrels" and splits else ""
            raise InvalidInputError(
                f"{file} not found{hint}; a BEIR folder holds corpus.jsonl, queries.jsonl "
                "and qrels/<split>.tsv"
            )
    qrels: dict[str, dict[str, int]] = {}
    with files["qrels"].open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            parts = line.rstrip("\n").split("\t")
            if number == 1 and parts[0] == "query-id":
                continue
            if len(parts) < 3:
                if line.strip():
                    raise InvalidInputError(
                        f"{files['qrels']}:{number}: expected 'query-id<TAB>corpus-id<TAB>score'"
                    )
                continue
            try:
                grade = int(float(parts[2]))
            except ValueError as exc:
                raise InvalidInputError(
                    f"{files['qrels']}:{number}: score {parts[2]!r} is not a number"
                ) from exc
            qrels.setdefault(parts[0], {})[parts[1]] = grade
    queries = {
        str(row["_id"]): str(row.get("text", ""))
        for row in _jsonl(files["queries"])
        if str(row["_id"]) in qrels
    }
    missing = [q for q in qrels if q not in queries]
    if missing:
        raise InvalidInputError(
            f"{len(missing)} judged queries are not in queries.jsonl (first: {missing[0]!r})"
        )
    corpus = [
        Document(str(row["_id"]), str(row.get("title") or ""), str(row.get("text") or ""))
        for row in _jsonl(files["corpus"])
    ]
    return BeirSet(root.name, corpus, queries, qrels, split)


# -- running it ------------------------------------------------------------------------


def document_text(doc: Document) -> str:
    """Title and body, the way BEIR's BM25 baselines index them."""
    text = f"{doc.title}\n{doc.text}" if doc.title.strip() else doc.text
    return text.strip()


#: Whole documents as one chunk (BEIR's protocol ranks documents, not passages).
WHOLE_DOCUMENTS = 100_000


def _load_kb(store: Store, data: BeirSet, chunk_size: int | None) -> dict[str, str]:
    """Documents into the knowledge base, the way users add them."""
    from .chunking import Chunker
    from .kb import KnowledgeBase

    chunker = Chunker() if chunk_size is None else Chunker(size=chunk_size)
    kb = KnowledgeBase(store, chunker=chunker)
    docs = [d for d in data.corpus if document_text(d).strip()]
    texts = [document_text(d) for d in docs]
    # Vectors first, in large batches (the KB reuses them from the embedding cache);
    # only worth it when a document is one chunk, so the embedded text is the same.
    if chunk_size is not None and chunk_size >= max((len(t) for t in texts), default=0):
        for start in range(0, len(texts), 512):
            store.prepare([Chunk(t) for t in texts[start : start + 512]])
    for doc, text in zip(docs, texts, strict=True):
        kb.add(text, source=doc.id, collection=data.name, format="text")
    return {d.id: d.id for d in docs}


def _load_code(store: Store, data: BeirSet, scratch: Path) -> dict[str, str]:
    """Each function written to a file of its own and indexed by the code indexer."""
    from .code import CodeIndexer

    root = scratch / data.name
    root.mkdir(parents=True, exist_ok=True)
    sources: dict[str, str] = {}
    for doc in data.corpus:
        if not doc.text.strip():
            continue
        name = f"{len(sources)}.py"
        (root / name).write_text(doc.text, encoding="utf-8", errors="surrogatepass")
        sources[name] = doc.id
    CodeIndexer(store).index(root, project=data.name, languages=["python"])
    return sources


def ingest(
    store: Store,
    data: BeirSet,
    kind: Kind,
    *,
    scratch: Path,
    chunk_size: int | None = None,
) -> dict[str, str]:
    """Load ``data`` through the KB or the code indexer; chunk source -> document id.

    ``scratch`` is a folder for the code files (``kind="code"``).
    """
    if kind == "kb":
        return _load_kb(store, data, chunk_size)
    return _load_code(store, data, scratch)


@dataclass
class Evaluation:
    """What :func:`evaluate` measured: per-mode metrics, with what produced them."""

    dataset: str
    split: str
    embedder: str
    documents: int
    queries: int
    ingest_seconds: float
    k: int
    metrics: dict[str, Metrics] = field(default_factory=dict)
    search_seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def table(self) -> str:
        """A Markdown table, one row per search mode."""
        k = self.k
        lines = [
            f"| mode | nDCG@{k} | recall@{k} | MRR@{k} | ms/query |",
            "|---|---|---|---|---|",
        ]
        for mode, m in self.metrics.items():
            ms = 1000 * self.search_seconds.get(mode, 0.0) / max(m.queries, 1)
            lines.append(f"| {mode} | {m.ndcg:.3f} | {m.recall:.3f} | {m.mrr:.3f} | {ms:.1f} |")
        return "\n".join(lines)


def rankings_for(
    store: Store,
    queries: Mapping[str, str],
    *,
    mode: SearchMode,
    kind: Kind,
    collection: str,
    k: int = 10,
    sources: Mapping[str, str] | None = None,
    fuse: Fuse = "pointwise",
) -> dict[str, list[str]]:
    """Document ids, best first, for each query: chunks are folded into their document.

    ``sources`` maps a chunk's source to its document id (identity by default).
    Code's default search is the code layer's (``CodeIndexer.search``), which adds
    the symbol's name to the store's evidence (code/ranking.py); the other modes
    and RRF are the store's.
    """
    from .code import CodeIndexer

    code = (
        CodeIndexer(store) if kind == "code" and mode == "hybrid" and fuse == "pointwise" else None
    )
    rankings: dict[str, list[str]] = {}
    for query_id, text in queries.items():
        if not text.strip():
            rankings[query_id] = []
            continue
        if code is not None:
            found = [h.path for h in code.search(text, project=collection, limit=k * 3)]
        else:
            found = [
                h.source
                for h in store.search(
                    text, mode=mode, limit=k * 3, kind=kind, collection=collection, fuse=fuse
                )
            ]
        docs = (s if sources is None else sources.get(s, s) for s in found)
        rankings[query_id] = list(dict.fromkeys(docs))[:k]
    return rankings


def evaluate(
    path: str | os.PathLike[str],
    *,
    split: str = "test",
    embedder: Embedder | None = None,
    db_path: str | os.PathLike[str] | None = None,
    kind: Kind = "kb",
    modes: Sequence[SearchMode] = MODES,
    k: int = 10,
    chunk_size: int | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Load a BEIR-layout folder into a store and measure each search mode on it.

    ``embedder`` defaults to the configured one (``REMEMBRANCES_EMBEDDER`` or the
    offline default). The store is a temporary file unless ``db_path`` names one;
    reusing a file makes re-runs cheap (vectors come from its embedding cache),
    but then the ingest time measures the cache, not the embedder.

    ``kind="kb"`` adds each document (title, newline, text) to the knowledge base,
    chunked by the KB's chunker with ``chunk_size`` characters (the KB default when
    None; :data:`WHOLE_DOCUMENTS` keeps each document whole, as BEIR does).
    ``kind="code"`` writes each document to a Python file and indexes the folder
    with the code indexer, so hits are the chunks it makes for each function.
    ``progress(phase, done, total)`` names each phase (loading, then each mode's
    searches) and counts the modes searched.
    """
    if embedder is None:
        from .embeddings import create

        embedder = create()
    for mode in modes:
        if mode not in MODES:
            raise InvalidInputError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if kind not in ("kb", "code"):
        raise InvalidInputError(f"kind must be 'kb' or 'code', not {kind!r}")
    if not 1 <= k <= 100:
        raise InvalidInputError("k must be from 1 to 100")
    data = load_beir(path, split=split)
    say: Progress = progress or (lambda _phase, _done, _total: None)
    with tempfile.TemporaryDirectory(prefix="remembrances-eval-") as scratch:
        file = Path(db_path) if db_path is not None else Path(scratch) / "eval.db"
        store = Store(file, embedder=embedder)
        try:
            say(f"loading {len(data.corpus)} documents from {data.name}", 0, None)
            started = time.perf_counter()
            sources = ingest(store, data, kind, scratch=Path(scratch), chunk_size=chunk_size)
            ingest_seconds = time.perf_counter() - started
            result = Evaluation(
                data.name, split, embedder.name, len(sources), len(data.queries), ingest_seconds, k
            )
            for done, mode in enumerate(modes):
                say(f"searching {len(data.queries)} queries, mode {mode}", done, len(modes))
                started = time.perf_counter()
                rankings = rankings_for(
                    store,
                    data.queries,
                    mode=mode,
                    kind=kind,
                    collection=data.name,
                    k=k,
                    sources=sources,
                )
                result.search_seconds[mode] = time.perf_counter() - started
                result.metrics[mode] = score_rankings(rankings, data.qrels, k=k)
        finally:
            store.close()
    return result
