"""The search pipeline every engine shares: legs, fusion, MMR, rerank, the query cache.

An engine proposes candidates (its vector leg and its text leg, filters applied
inside each) and supplies the word statistics and cosines fusion needs; what
happens to them from there is the same on every engine: each candidate is scored
on its own cosine and word coverage (``fusion.pointwise``, or RRF on request),
thresholded, diversified (MMR) or reranked, and read back as results.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .. import fusion
from ..embeddings.base import Embedder, Vectors, as_vector
from ..errors import RemembrancesError
from ..records import SearchResult
from .engine import Engine, VectorIndexKind
from .filters import ChunkFilter
from .in_lists import in_lists
from .transaction import Row, Transaction

SearchMode = Literal["hybrid", "vector", "text"]
Fuse = Literal["pointwise", "rrf"]

#: Query vectors remembered (least recently used ones are dropped first).
QUERY_CACHE_SIZE = 256
#: Candidates each leg proposes to a hybrid search (at least; ``limit * 5`` when larger).
HYBRID_POOL = 100
#: The most candidates a leg is asked for (vec0's ``k`` limit).
MAX_POOL = 4096
#: A word held by more than this share of the chunks is common. Ranking every chunk
#: that holds a common word is what makes a text search slow on a large memory
#: (``self``, ``def`` and ``return`` are in 40-53% of a Python code memory's chunks).
#: Not for a ranked text search: several common words together can outrank one rare
#: word in BM25 (:func:`text_candidates`; benchmarks/RESULTS.md, "Text leg").
COMMON_SHARE = 0.05


class Reranker(Protocol):
    """Re-scores the top candidates of a search (e.g. a cross-encoder)."""

    def rerank(self, query: str, texts: Sequence[str]) -> Sequence[float]: ...


class _Embedding:
    """A query being embedded by one thread, for the others that ask for it meanwhile."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.vector: Vectors | None = None
        self.error: BaseException | None = None


class QueryVectors:
    """Recent query vectors by (embedder, query): an agent's turn often searches
    several sources with the same words.

    The enricher searches its sources in parallel threads, each with the same query,
    so the first asks often come together: one thread embeds the query and the others
    wait for its vector (or its error: a failing embedder fails them all at once, not
    one after another). Embedding it in every thread at once cost each of them the
    whole CPU's share (three threads took about 60 ms each for a prompt that takes 22
    ms alone; benchmarks/RESULTS.md, "Context enrichment").
    """

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._pending: dict[tuple[str, str], _Embedding] = {}
        self._lock = threading.Lock()

    def get(self, embedder: Embedder, query: str) -> Vectors:
        key = (embedder.name, query)
        with self._lock:
            cached = self._vectors.get(key)
            if cached is not None:
                self._vectors.move_to_end(key)
                return cached
            pending = self._pending.get(key)
            if pending is None:
                mine = self._pending[key] = _Embedding()
        if pending is not None:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            assert pending.vector is not None
            return pending.vector
        try:
            vector = as_vector(
                embedder.embed_query(query), dim=embedder.dim, who=f"embedder {embedder.name!r}"
            )
            vector.setflags(write=False)
            mine.vector = vector
        except BaseException as exc:
            mine.error = exc
            raise
        finally:
            with self._lock:
                del self._pending[key]
                if mine.vector is not None and self.size > 0:
                    self._vectors[key] = mine.vector
                    if len(self._vectors) > self.size:
                        self._vectors.popitem(last=False)
            mine.done.set()
        return vector


@dataclass(frozen=True)
class SearchRequest:
    """A checked search (``Store.search`` validates every argument into one)."""

    query: str
    mode: SearchMode
    limit: int
    where: ChunkFilter
    min_score: float
    mmr: float | None
    rerank: bool
    index: VectorIndexKind
    pool: int | None
    exact: bool
    fuse: Fuse
    kind: str | Sequence[str] | None


def pool_size(request: SearchRequest) -> int:
    """How many candidates each leg proposes."""
    pool = request.pool
    if pool is None:
        # Hybrid scores every candidate on its own; a deep pool only finds
        # chunks that one leg ranks low and the other high.
        pool = (
            request.limit
            if request.mode != "hybrid" and request.mmr is None and not request.rerank
            else max(request.limit * 5, HYBRID_POOL)
        )
    return min(max(pool, request.limit), MAX_POOL)


def search(
    engine: Engine,
    request: SearchRequest,
    *,
    query_vector: Callable[[str], Vectors],
    reranker: Reranker | None,
) -> list[SearchResult]:
    """Run ``request`` on ``engine``; ``query_vector`` embeds the query (cached)."""
    pool = pool_size(request)
    query, mode = request.query, request.mode
    vector = None
    if mode != "text" and query.strip():
        vector = query_vector(query)
    with engine.read() as tx:
        vector_hits: list[tuple[int, float]] = []
        text_hits: list[tuple[int, float]] = []
        if _names_nothing(tx, engine, request.where):
            return []
        if vector is not None:
            vector_hits = [
                (i, fusion.vector_score(s))
                for i, s in engine.vector_leg(
                    tx, vector, pool, request.where, index=request.index, exact=request.exact
                )
            ]
        if mode != "vector":
            if mode == "hybrid" and request.fuse == "pointwise":
                text_hits = text_candidates(engine, tx, query, pool, request.where)
            else:  # text mode and RRF rank by the leg's own order
                text_hits = engine.text_leg(tx, query, pool, request.where)
        fused = _fuse(engine, tx, request, vector, vector_hits, text_hits)
        fused = [f for f in fused if f.score >= request.min_score]
        if request.mmr is not None:
            fused = _mmr(engine, tx, fused, request.mmr, request.limit)
        elif not request.rerank:
            fused = fused[: request.limit]
        results = _results(engine, tx, fused)
    if request.rerank:
        assert reranker is not None
        results = _rerank(reranker, query, results, request.limit, request.min_score)
    return results


def text_candidates(
    engine: Engine, tx: Transaction, query: str, pool: int, where: ChunkFilter
) -> list[tuple[int, float]]:
    """The text leg of a pointwise-fused search, which only proposes candidates
    (each is then scored on its own cosine and coverage): the chunks holding one of
    the query's rare words (``COMMON_SHARE``) when they fill the pool, else the
    chunks holding any of its words."""
    rare = engine.rare_words(tx, query, COMMON_SHARE)
    if rare:
        hits = engine.text_leg(tx, " ".join(rare), pool, where)
        if len(hits) >= pool:
            return hits
    return engine.text_leg(tx, query, pool, where)


def _names_nothing(tx: Transaction, engine: Engine, where: ChunkFilter) -> bool:
    """Whether the kinds, collections and sources ``where`` names hold no chunk.

    The legs filter inside their own queries, after the text index has matched:
    searching an empty knowledge base in a memory of 80k code chunks read every
    code chunk's text match (3-120 ms) to return nothing. The names are indexed
    columns, so this check is one index probe.
    """
    if where.kinds is None and where.collections is None and where.sources is None:
        return False
    names = ChunkFilter(kinds=where.kinds, collections=where.collections, sources=where.sources)
    sql, params = names.sql(engine.dialect)
    found = tx.execute(f"SELECT c.id FROM chunks c WHERE {sql} LIMIT 1", params).fetchone()
    return found is None


def _fuse(
    engine: Engine,
    tx: Transaction,
    request: SearchRequest,
    query_vector: Vectors | None,
    vector_hits: list[tuple[int, float]],
    text_hits: list[tuple[int, float]],
) -> list[fusion.Fused]:
    if request.mode == "vector":
        return [
            fusion.Fused(i, s, vector_score=s, vector_rank=r)
            for r, (i, s) in enumerate(vector_hits, start=1)
        ]
    ids = list(dict.fromkeys([i for i, _ in vector_hits] + [i for i, _ in text_hits]))
    params = fusion.params_for(request.kind, request.query)
    coverages = engine.text_match(tx, request.query, ids, joined_names=params.joined_names)
    if request.mode == "text":
        ranked = [
            fusion.Fused(i, coverages.get(i, 0.0), text_score=coverages.get(i, 0.0), text_rank=r)
            for r, (i, _) in enumerate(text_hits, start=1)
        ]
        return sorted(ranked, key=lambda f: (-f.score, f.text_rank or 0))
    if request.fuse == "rrf":
        return fusion.rrf(vector_hits, [(i, coverages.get(i, 0.0)) for i, _ in text_hits])
    cosines = dict(vector_hits)
    missing = [i for i in ids if i not in cosines]
    if missing and query_vector is not None:
        cosines.update(engine.cosines(tx, query_vector, missing))
    return fusion.pointwise(vector_hits, text_hits, cosines, coverages, params=params)


def _mmr(
    engine: Engine, tx: Transaction, fused: list[fusion.Fused], lambda_: float, limit: int
) -> list[fusion.Fused]:
    vectors = engine.vectors(tx, [f.id for f in fused])
    by_id = {f.id: f for f in fused}
    order = fusion.mmr(
        [(f.id, vectors.get(f.id), f.score) for f in fused], lambda_=lambda_, limit=limit
    )
    return [by_id[i] for i in order]


def chunk_rows(engine: Engine, tx: Transaction, ids: Sequence[int]) -> dict[int, Row]:
    """Chunks by id, with the columns :attr:`Engine.chunk_columns` names."""
    rows: dict[int, Row] = {}
    for part, marks in in_lists(ids):
        for row in tx.execute(
            f"SELECT {engine.chunk_columns} FROM chunks c WHERE c.id IN ({marks})", part
        ):
            rows[row["id"]] = row
    return rows


def _results(engine: Engine, tx: Transaction, fused: list[fusion.Fused]) -> list[SearchResult]:
    if not fused:
        return []
    rows = chunk_rows(engine, tx, [f.id for f in fused])
    results = []
    for f in fused:
        row = rows.get(f.id)
        if row is None:
            continue
        results.append(
            SearchResult(
                id=f.id,
                kind=row["kind"],
                collection=row["collection"],
                source=row["source"],
                position=row["position"],
                text=row["text"],
                metadata=json.loads(row["metadata"]),
                ts=row["ts"],
                score=f.score,
                vector_score=f.vector_score,
                text_score=f.text_score,
                vector_rank=f.vector_rank,
                text_rank=f.text_rank,
            )
        )
    return results


def _rerank(
    reranker: Reranker, query: str, results: list[SearchResult], limit: int, min_score: float
) -> list[SearchResult]:
    if not results:
        return results
    scores = list(reranker.rerank(query, [r.text for r in results]))
    if len(scores) != len(results):
        raise RemembrancesError(f"reranker returned {len(scores)} scores for {len(results)} texts")
    for result, score in zip(results, scores, strict=True):
        value = float(score)
        if not math.isfinite(value):
            value = 0.0
        # Logits (cross-encoders) become probabilities; scores in [0, 1] stay.
        result.score = value if 0.0 <= value <= 1.0 else 1.0 / (1.0 + math.exp(-value))
    results.sort(key=lambda r: -r.score)
    return [r for r in results if r.score >= min_score][:limit]
