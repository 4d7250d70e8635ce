"""A deterministic embedder for tests and benchmarks: no model, no network, fast.

Feature hashing of lower-cased word tokens and their character trigrams into
``dim`` buckets with a hashed sign. Texts that share words get similar vectors,
which is enough to test ranking, filters and fusion with known answers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from .base import Vectors

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic bag-of-words vectors; ``calls`` counts texts embedded."""

    def __init__(self, dim: int = 64) -> None:
        if dim < 8:
            raise ValueError("HashEmbedder needs dim >= 8")
        self.dim = dim
        self.name = f"hash:{dim}"
        self.calls = 0

    def _vector(self, text: str) -> Vectors:
        vec = np.zeros(self.dim, dtype=np.float32)
        vec[0] = 0.01  # never all-zero, even for text without words
        for word in _WORD.findall(text.lower()):
            features = [word] + [word[i : i + 3] for i in range(max(len(word) - 2, 0))]
            for j, feature in enumerate(features):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                vec[bucket] += sign * (1.0 if j == 0 else 0.3)
        return vec

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> Vectors:
        return self._vector(text)
