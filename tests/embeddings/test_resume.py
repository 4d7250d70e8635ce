"""An ingest interrupted by a provider outage resumes without paying for vectors twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import Store
from remembrances.embeddings import RetryPolicy, create
from remembrances.errors import EmbeddingError
from remembrances.records import Chunk

from .conftest import Sleeps
from .wire_servers import KEY, OK, Fail, OpenAIServer

STORE_BATCH = 64  # remembrances.store.EMBED_BATCH: the store caches after each batch


def test_ingest_resumes_after_a_500_storm(tmp_path: Path, sleeps: Sleeps) -> None:
    chunks = [Chunk(f"note {i}: the {i}th thing worth remembering") for i in range(150)]
    with OpenAIServer(16) as server:
        embedder = create(
            "openai:text-embedding-3-small@16",
            api_key=KEY,
            base_url=server.base_url,
            batch_size=16,
            concurrency=2,
            retry=RetryPolicy(attempts=3, base_delay=0.001, sleep=sleeps),
        )
        # The first store batch (4 requests of 16) succeeds, then the provider fails.
        server.plan(OK, OK, OK, OK)
        server.default = Fail(500)
        with Store(tmp_path / "memory.db", embedder=embedder) as store:
            with pytest.raises(EmbeddingError, match="HTTP 500"):
                store.put_source("kb", "notes.md", chunks)
            assert store.count(kind="kb") == 0  # nothing half-written
        assert server.texts_embedded == STORE_BATCH

        # The provider recovers; a new process reopens the file and runs the ingest again.
        server.default = OK
        reopened = create(
            embedder.name, api_key=KEY, base_url=server.base_url, retry=RetryPolicy(attempts=1)
        )
        with Store(tmp_path / "memory.db", embedder=reopened) as store:
            report = store.put_source("kb", "notes.md", chunks)
            assert (report.cached, report.embedded) == (STORE_BATCH, 150 - STORE_BATCH)
            assert store.count(kind="kb") == 150
            assert server.texts_embedded == 150  # every text embedded exactly once
            hit = store.search(chunks[77].text, mode="vector", limit=1)[0]
            assert hit.text == chunks[77].text
