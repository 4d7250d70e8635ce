"""Turning per-leg rankings into one ranking with scores in [0, 1].

Raw RRF scores are tiny (at most 2/61 with k = 60) and cannot be thresholded, so
every fused score is rescaled to [0, 1]: 1.0 means first in both legs.
"""

from __future__ import annotations

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
    """Reciprocal rank fusion of two best-first lists of ``(id, leg score)``."""
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
