"""Turning the vector and text legs' hits into one ranking with scores in [0, 1].

The default, :func:`calibrated`, mixes each leg's rescaled scores with a weight
chosen per query and scales the result by the query's confidence, so a score
means about the same for every query and ``min_score`` can threshold it.
:func:`rrf` (rank-only fusion, rescaled so 1.0 means first in both legs) stays
for comparison: with a weak leg it ranks far below the strong leg alone
(benchmarks/results/quality.md). How scores are computed: docs/search.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RRF_K = 60
#: BM25 value mapped to a text score of 0.5 (see :func:`text_score`).
BM25_HALF = 10.0


@dataclass
class Fused:
    id: int
    score: float
    vector_score: float | None = None
    text_score: float | None = None
    vector_rank: int | None = None
    text_rank: int | None = None


def vector_score(cosine: float) -> float:
    """Cosine similarity clipped to [0, 1]: unrelated text sits near 0."""
    return float(min(max(cosine, 0.0), 1.0))


def text_score(bm25: float) -> float:
    """BM25 (higher is better) squashed into [0, 1) by ``x / (x + BM25_HALF)``."""
    bm25 = max(bm25, 0.0)
    return float(bm25 / (bm25 + BM25_HALF))


def rrf(
    vector_hits: Sequence[tuple[int, float]],
    text_hits: Sequence[tuple[int, float]],
    *,
    k: int = RRF_K,
) -> list[Fused]:
    """Reciprocal rank fusion of two best-first lists of ``(id, leg score)``.

    Kept for comparison (benchmarks/bench_quality.py): it ignores how far apart
    the scores are, so a weak leg pulls good hits down as much as a strong one.
    """
    fused: dict[int, Fused] = {}
    for rank, (chunk_id, score) in enumerate(vector_hits, start=1):
        item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
        item.vector_rank, item.vector_score = rank, score
        item.score += 1.0 / (k + rank)
    for rank, (chunk_id, score) in enumerate(text_hits, start=1):
        item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
        item.text_rank, item.text_score = rank, score
        item.score += 1.0 / (k + rank)
    best = 2.0 / (k + 1)
    for item in fused.values():
        item.score = min(item.score / best, 1.0)
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))


@dataclass(frozen=True)
class FusionParams:
    """The calibrated convex fusion's settings (fitted on SciFact train and CoSQA dev).

    The text leg's weight is ``sigmoid(text_bias + text_slope * log(peak))``
    where ``peak`` is the best BM25 over the BM25 at rank ``peak_rank``: a text
    leg whose best hit stands out from the rest has found rare query words
    together (trust it); a flat one has matched a common word or two (don't).
    """

    text_bias: float = -5.0
    text_slope: float = 6.0
    peak_rank: int = 10
    #: Scores at this rank (or the pool's last, if shorter) map to 0 in each leg.
    floor_rank: int = 100


#: For searches across kinds (and kinds we have no benchmark for): fitted on
#: SciFact train and CoSQA dev together, for the largest gain over the better
#: leg on the worse of the two sets.
DEFAULT_PARAMS = FusionParams()

#: Per kind, fitted on that kind's training split only (``bench_quality.py --fit``):
#: prose (SciFact train) gains from a strong text leg, while on code (CoSQA dev)
#: web-style queries rarely share words with the function, so text counts only
#: when its best hit stands far above the rest. Events are prose too, but no
#: benchmark measured them; they take the KB's setting.
_PROSE = FusionParams(text_bias=-1.0, text_slope=2.0, peak_rank=20)
KIND_PARAMS: dict[str, FusionParams] = {
    "kb": _PROSE,
    "event": _PROSE,
    "code": FusionParams(text_bias=-4.0, text_slope=3.0, peak_rank=20),
}


def params_for(kind: str | Sequence[str] | None) -> FusionParams:
    """The fusion settings for a search filtered to ``kind`` (one kind), else the default."""
    if isinstance(kind, str):
        return KIND_PARAMS.get(kind, DEFAULT_PARAMS)
    if kind is not None and len(kind) == 1:
        return KIND_PARAMS.get(next(iter(kind)), DEFAULT_PARAMS)
    return DEFAULT_PARAMS


def _spread(values: Sequence[float], floor_rank: int) -> tuple[float, float]:
    """``(best, floor)``: a leg's scores are rescaled so these map to 1 and 0."""
    best = values[0]
    floor = values[min(floor_rank, len(values)) - 1]
    return best, floor


def text_weight(bm25: Sequence[float], params: FusionParams = DEFAULT_PARAMS) -> float:
    """How much the text leg counts for this query, from how peaked its scores are."""
    if not bm25 or bm25[0] <= 0:
        return 0.0
    reference = bm25[min(params.peak_rank, len(bm25)) - 1]
    peak = bm25[0] / max(reference, 1e-9)
    z = params.text_bias + params.text_slope * math.log(max(peak, 1.0))
    return 1.0 / (1.0 + math.exp(-min(max(z, -50.0), 50.0)))


def calibrated(
    vector_hits: Sequence[tuple[int, float]],
    text_hits: Sequence[tuple[int, float]],
    *,
    params: FusionParams = DEFAULT_PARAMS,
) -> list[Fused]:
    """Convex fusion of per-leg rescaled scores, weighted per query, in [0, 1].

    ``vector_hits`` carry cosine similarities, ``text_hits`` raw BM25 (higher is
    better), both best first. Each leg is rescaled so its best hit is 1 and its
    hit at ``floor_rank`` is 0 (a hit missing from a leg counts 0 there), then
    mixed with the text weight of :func:`text_weight`. That ordering is scaled
    by the query's *confidence* (the weighted best cosine and best squashed
    BM25), so the top hit of a query with no good match scores low instead of
    1.0, and ``min_score`` means the same thing for every query; see
    docs/search.md.
    """
    if not vector_hits and not text_hits:
        return []
    w_text = text_weight([s for _, s in text_hits], params) if vector_hits else 1.0
    if not text_hits:
        w_text = 0.0
    fused: dict[int, Fused] = {}
    confidence = 0.0
    if vector_hits:
        best, floor = _spread([s for _, s in vector_hits], params.floor_rank)
        confidence += (1.0 - w_text) * vector_score(best)
        for rank, (chunk_id, cosine) in enumerate(vector_hits, start=1):
            item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
            item.vector_rank, item.vector_score = rank, vector_score(cosine)
            scaled = (cosine - floor) / (best - floor) if best > floor else 1.0
            item.score += (1.0 - w_text) * min(max(scaled, 0.0), 1.0)
    if text_hits:
        best, floor = _spread([s for _, s in text_hits], params.floor_rank)
        confidence += w_text * text_score(best)
        for rank, (chunk_id, bm25) in enumerate(text_hits, start=1):
            item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
            item.text_rank, item.text_score = rank, text_score(bm25)
            scaled = (bm25 - floor) / (best - floor) if best > floor else 1.0
            item.score += w_text * min(max(scaled, 0.0), 1.0)
    ranked = sorted(fused.values(), key=lambda f: (-f.score, f.id))
    for item in ranked:  # scaled after sorting: a zero confidence keeps the order
        item.score = min(max(item.score * confidence, 0.0), 1.0)
    return ranked


def mmr(
    candidates: Sequence[tuple[int, np.ndarray | None, float]],
    *,
    lambda_: float,
    limit: int,
) -> list[int]:
    """Maximal marginal relevance: trade relevance for novelty with weight ``lambda_``.

    ``candidates`` are ``(id, unit vector or None, relevance in [0, 1])``; a
    candidate without a vector counts as similar to nothing.
    """
    chosen: list[int] = []
    chosen_vectors: list[np.ndarray] = []
    remaining = list(candidates)
    while remaining and len(chosen) < limit:
        best_index, best_value = 0, -np.inf
        for index, (_, vector, relevance) in enumerate(remaining):
            redundancy = 0.0
            if vector is not None and chosen_vectors:
                redundancy = float(max(float(v @ vector) for v in chosen_vectors))
            value = lambda_ * relevance - (1.0 - lambda_) * redundancy
            if value > best_value:
                best_index, best_value = index, value
        chunk_id, vector, _ = remaining.pop(best_index)
        chosen.append(chunk_id)
        if vector is not None:
            chosen_vectors.append(vector)
    return chosen
