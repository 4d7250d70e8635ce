"""An ingest interrupted by a provider outage resumes without paying for vectors twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import Store
from remembrances.embeddings import Embedder, RetryPolicy, create
from remembrances.errors import EmbeddingError
from remembrances.records import Chunk

from .conftest import Sleeps
from .wire_servers import KEY, OK, Fail, OpenAIServer


def _two_slots(server: OpenAIServer, sleeps: Sleeps) -> Embedder:
    """16 texts a request, two requests at once: a store call is 32 texts."""
    return create(
        "openai:text-embedding-3-small@16",
        api_key=KEY,
        base_url=server.base_url,
        batch_size=16,
        concurrency=2,
        retry=RetryPolicy(attempts=3, base_delay=0.001, sleep=sleeps),
    )


def test_ingest_resumes_after_a_500_storm(tmp_path: Path, sleeps: Sleeps) -> None:
    chunks = [Chunk(f"note {i}: the {i}th thing worth remembering") for i in range(150)]
    with OpenAIServer(16) as server:
        embedder = _two_slots(server, sleeps)
        # The store hands the embedder call_size texts per call (16 per request × 2
        # slots) and caches each call's vectors; two calls succeed, then the provider fails.
        assert embedder.call_size == 32
        survived = 2 * embedder.call_size
        server.plan(OK, OK, OK, OK)
        server.default = Fail(500)
        with Store(tmp_path / "memory.db", embedder=embedder) as store:
            with pytest.raises(EmbeddingError, match="HTTP 500"):
                store.put_source("kb", "notes.md", chunks)
            assert store.count(kind="kb") == 0  # nothing half-written
        assert server.texts_embedded == survived

        # The provider recovers; a new process reopens the file and runs the ingest again.
        server.default = OK
        reopened = create(
            embedder.name, api_key=KEY, base_url=server.base_url, retry=RetryPolicy(attempts=1)
        )
        with Store(tmp_path / "memory.db", embedder=reopened) as store:
            report = store.put_source("kb", "notes.md", chunks)
            assert (report.cached, report.embedded) == (survived, 150 - survived)
            assert store.count(kind="kb") == 150
            assert server.texts_embedded == 150  # every text embedded exactly once
            hit = store.search(chunks[77].text, mode="vector", limit=1)[0]
            assert hit.text == chunks[77].text


def test_an_ingest_keeps_the_providers_request_slots_busy(tmp_path: Path) -> None:
    chunks = [Chunk(f"note {i}: something else worth remembering") for i in range(256)]
    with OpenAIServer(16) as server:
        server.delay = 0.2  # long enough for all four requests to overlap on a busy machine
        embedder = create(
            "openai:text-embedding-3-small@16",
            api_key=KEY,
            base_url=server.base_url,
            concurrency=4,
            retry=RetryPolicy(attempts=1),
        )
        with Store(tmp_path / "memory.db", embedder=embedder) as store:
            report = store.put_source("kb", "notes.md", chunks)
        assert report.embedded == 256
        # one store call of 256 texts went out as 4 requests at once, not 4 in a row
        assert server.max_in_flight == 4
        assert len(server.embed_requests) == 4


def test_the_requests_that_answered_are_kept_when_another_one_fails(
    tmp_path: Path, sleeps: Sleeps
) -> None:
    # one call goes as several requests at once; when one failed, the vectors the
    # others returned were thrown away and paid for again on the retry
    chunks = [Chunk(f"turn {i}: something said in a long conversation") for i in range(150)]
    with OpenAIServer(16) as server:
        embedder = _two_slots(server, sleeps)
        server.plan(OK, OK, OK, OK, OK)  # the third call: one request answers, one fails
        server.default = Fail(400)
        with Store(tmp_path / "memory.db", embedder=embedder) as store:
            with pytest.raises(EmbeddingError, match="HTTP 400"):
                store.put_source("kb", "chat.md", chunks)
            assert store.count(kind="kb") == 0  # nothing half-written
        assert server.texts_embedded == 5 * 16
        server.default = OK
        with Store(tmp_path / "memory.db", embedder=embedder) as store:
            report = store.put_source("kb", "chat.md", chunks)
        assert (report.cached, report.embedded) == (80, 70)
        assert server.texts_embedded == 150  # every text embedded exactly once
