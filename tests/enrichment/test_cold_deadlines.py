"""A fresh process's one-time loads do not count against a source's deadline."""

from __future__ import annotations

import time
from pathlib import Path

import remembrances
from remembrances.embeddings import HashEmbedder
from remembrances.enrichment import ContextEnricher, EnricherConfig, HeuristicPlanner

from .corpus import NOW, populate


class SlowToLoad(HashEmbedder):
    """A real (hashing) embedder whose first use pays a load, as the local model does."""

    def __init__(self, dim: int, seconds: float) -> None:
        super().__init__(dim)
        self.seconds = seconds
        self.loaded = False

    def load(self) -> None:
        if not self.loaded:
            time.sleep(self.seconds)
            self.loaded = True

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.load()
        return super().embed_query(text)


def test_model_load_in_a_fresh_process_does_not_drop_the_sources(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with remembrances.open(path, embedder=HashEmbedder(64)) as svc:
        populate(svc, tmp_path / "code")
    # A fresh open: the index is not loaded, the model "loads" for 0.6 s; each source
    # may take 0.4 s, which the searches themselves do easily.
    embedder = SlowToLoad(64, 0.6)
    embedder.name = "hash:64"
    with remembrances.open(path, embedder=embedder) as svc:
        assert svc.store._index is None
        enricher = ContextEnricher(
            svc, EnricherConfig(timeout=0.4), planner=HeuristicPlanner(now=lambda: NOW)
        )
        result = enricher.enrich("how should we handle HTTP 429 rate limits from the payment API?")
        assert result.dropped == {}, result.dropped
        # Every source answered in time (what the hash embedder's scores let through
        # the gate is not this test's concern).
        assert {"kb_ms", "events_ms", "code_ms"} <= set(result.timings), result.timings
        assert result.text.startswith("Relevant memory")
        assert result.timings["warm_ms"] >= 600
        assert svc.store._index is not None and svc.store._index.loaded
        enricher.close()
