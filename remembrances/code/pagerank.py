"""Personalised PageRank by power iteration over a sparse weighted graph.

A few dozen lines of numpy do what the map needs; networkx would be a large
dependency for one function. Edges are parallel arrays; a node without
out-edges hands its rank to the personalisation vector (the usual treatment of
dangling nodes), so rank is conserved and always sums to one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

DAMPING = 0.85
TOLERANCE = 1e-9
MAX_ITERATIONS = 100


def pagerank(
    nodes: int,
    src: npt.NDArray[np.int64],
    dst: npt.NDArray[np.int64],
    weight: npt.NDArray[np.float64],
    personalization: npt.NDArray[np.float64] | None = None,
    *,
    damping: float = DAMPING,
) -> npt.NDArray[np.float64]:
    """Rank of each node; ``personalization`` (non-negative) is where random jumps land."""
    if nodes == 0:
        return np.zeros(0)
    if personalization is None or not personalization.sum() > 0:
        jump = np.full(nodes, 1.0 / nodes)
    else:
        jump = personalization / personalization.sum()
    out = np.bincount(src, weights=weight, minlength=nodes)
    share = weight / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    rank = jump.copy()
    for _ in range(MAX_ITERATIONS):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=nodes)
        new = damping * (flow + rank[dangling].sum() * jump) + (1.0 - damping) * jump
        done = np.abs(new - rank).sum() < TOLERANCE * nodes
        rank = new
        if done:
            break
    return rank


__all__ = ["pagerank"]
