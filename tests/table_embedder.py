"""An embedder that reads its vectors from a table: exact, chosen vectors for the
vector-index tests, with no model in the way."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class TableEmbedder:
    """Text ``"v<i> ..."`` embeds as row ``i`` of a fixed table, query ``"q<i>"`` as query ``i``."""

    def __init__(self, docs: np.ndarray, queries: np.ndarray) -> None:
        self.name = f"table:{docs.shape[1]}"
        self.dim = docs.shape[1]
        self.docs = docs
        self.queries = queries

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.docs[int(t.split()[0][1:])] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.queries[int(text[1:])]
