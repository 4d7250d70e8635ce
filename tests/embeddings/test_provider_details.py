"""What each provider does differently: wire options, limits, auth and model handling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from remembrances.embeddings import RetryPolicy, create
from remembrances.embeddings.ollama import ollama_host
from remembrances.embeddings.remote import RemoteEmbedder
from remembrances.errors import EmbedderUnavailableError, EmbeddingError

from .conftest import Sleeps
from .wire_servers import (
    DROP,
    KEY,
    Fail,
    GoogleServer,
    OllamaServer,
    OpenAIServer,
    VoyageServer,
    fake_vector,
    unit,
)


def _create(spec: str, policy: RetryPolicy, **options: object) -> RemoteEmbedder:
    embedder = create(spec, retry=policy, **options)
    assert isinstance(embedder, RemoteEmbedder)
    return embedder


# -- OpenAI and compatible servers ------------------------------------------------------


def test_openai_asks_base64_with_dimensions_and_sorts_by_index(policy: RetryPolicy) -> None:
    with OpenAIServer(8) as server:
        server.reverse_order = True
        embedder = _create(
            "openai:text-embedding-3-large@8", policy, api_key=KEY, base_url=server.base_url
        )
        matrix = embedder.embed_documents(["first", "second", "third"])
        request = server.embed_requests[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "text-embedding-3-large"
    assert request.body["dimensions"] == 8
    assert request.body["encoding_format"] == "base64"
    assert request.body["input"] == ["first", "second", "third"]
    for row, text in zip(matrix, ["first", "second", "third"], strict=True):
        np.testing.assert_allclose(row, unit(fake_vector(text, 8)), atol=1e-6)


def test_openai_known_model_dimension_needs_no_request(policy: RetryPolicy) -> None:
    with OpenAIServer(8) as server:
        embedder = _create(
            "openai:text-embedding-3-small", policy, api_key=KEY, base_url=server.base_url
        )
        assert embedder.dim == 1536
        assert "dimensions" not in str(server.requests)
        assert server.requests == []


def test_compatible_server_without_key_probes_the_dimension_once(
    policy: RetryPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIServer(24) as server:
        server.authorised = lambda headers: True  # type: ignore[method-assign]
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        embedder = _create("openai:nomic-embed-text-v1.5", policy)
        assert embedder.dim == 24
        assert embedder.dim == 24
        assert server.embed_requests[0].body["input"] == ["dimension probe"]
        embedder.embed_query("q")
        assert len(server.embed_requests) == 2
        # an open model served behind an OpenAI-compatible API still gets its prefixes
        assert server.embed_requests[1].body["input"] == ["search_query: q"]
        assert embedder.calls == 0


def test_a_file_that_records_the_dimension_is_opened_without_asking_the_provider(
    policy: RetryPolicy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # every open sent a dimension probe: one request per CLI command, and while the
    # server was down no command opened the file at all, check and export included
    import remembrances

    with OpenAIServer(24) as server:
        server.authorised = lambda headers: True  # type: ignore[method-assign]
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with remembrances.open(
            tmp_path / "m.db", embedder=_create("openai:my-embed", policy)
        ) as memory:
            memory.kb.add("Deploys run on Friday.", source="deploys.md")
        sent = len(server.embed_requests)
        server.default = Fail(500)
        with remembrances.open(
            tmp_path / "m.db", embedder=_create("openai:my-embed", policy)
        ) as memory:
            assert memory.embedder is not None and memory.embedder.dim == 24
            assert [h.source for h in memory.kb.search("Friday", mode="text")] == ["deploys.md"]
            assert memory.stats()["chunks"] == 1
        assert len(server.embed_requests) == sent


def test_openai_out_of_quota_is_not_retried_as_a_rate_limit(policy: RetryPolicy) -> None:
    # billing, which no retry fixes: it was retried six times, then reported as a rate limit
    with OpenAIServer(8) as server:
        server.plan(Fail(429, code="insufficient_quota"))
        embedder = _create(
            "openai:text-embedding-3-small@8", policy, api_key=KEY, base_url=server.base_url
        )
        with pytest.raises(EmbeddingError, match=r"out of quota .*check the plan and billing"):
            embedder.embed_query("q")
        assert len(server.embed_requests) == 1


def test_a_connection_dropped_by_the_server_is_not_reported_as_no_connection(
    policy: RetryPolicy,
) -> None:
    with OpenAIServer(8) as server:
        server.default = DROP
        embedder = _create(
            "openai:text-embedding-3-small@8", policy, api_key=KEY, base_url=server.base_url
        )
        with pytest.raises(EmbeddingError) as error:
            embedder.embed_query("q")
        message = str(error.value)
        assert "the connection broke" in message and "could not connect" not in message
        assert ".." not in message


def test_openai_bad_key_is_not_retried(policy: RetryPolicy, sleeps: Sleeps) -> None:
    with OpenAIServer(8) as server:
        embedder = _create(
            "openai:text-embedding-3-small@8", policy, api_key="wrong", base_url=server.base_url
        )
        with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
            embedder.embed_documents(["x"])
        assert len(server.embed_requests) == 1 and sleeps == []


def test_openai_fixed_dimension_model_refuses_dims() -> None:
    with pytest.raises(EmbedderUnavailableError, match="fixed dimension"):
        create("openai:text-embedding-ada-002@256", api_key=KEY)


def test_openai_retry_after_ms_header(policy: RetryPolicy, sleeps: Sleeps) -> None:
    with OpenAIServer(8) as server:
        server.plan(Fail(429, {"retry-after-ms": "1500"}))
        embedder = _create(
            "openai:text-embedding-3-small@8", policy, api_key=KEY, base_url=server.base_url
        )
        embedder.embed_documents(["x"])
    assert sleeps == [1.5]


# -- Voyage ---------------------------------------------------------------------------------


def test_voyage_sends_input_type_and_output_dimension(policy: RetryPolicy) -> None:
    with VoyageServer(8) as server:
        embedder = _create("voyage:voyage-3.5@512", policy, api_key=KEY, base_url=server.base_url)
        assert embedder.dim == 512
        embedder.embed_documents(["a document"])
        embedder.embed_query("a query")
        documents, query = (r.body for r in server.embed_requests)
    assert documents["input_type"] == "document" and query["input_type"] == "query"
    assert documents["output_dimension"] == 512
    assert documents["model"] == "voyage-3.5"
    assert documents["truncation"] is True
    assert documents["input"] == ["a document"] and query["input"] == ["a query"]


def test_voyage_rejects_dimensions_the_model_lacks() -> None:
    with pytest.raises(EmbedderUnavailableError, match="cannot output 300"):
        create("voyage:voyage-3.5@300", api_key=KEY)


def test_voyage_batches_by_estimated_tokens(policy: RetryPolicy) -> None:
    with VoyageServer(8) as server:
        # voyage-3-large: 120k tokens per request (we pack to 90%); 4 texts of ~30k tokens
        embedder = _create(
            "voyage:voyage-3-large", policy, api_key=KEY, base_url=server.base_url, dim=8
        )
        embedder.embed_documents(["abc " * 22_500] * 4)
        sizes = [len(r.body["input"]) for r in server.embed_requests]
    assert sorted(sizes) == [1, 3]
    assert embedder.truncated == 0


# -- Google ---------------------------------------------------------------------------------


def test_google_uses_task_types_and_batches_of_100(policy: RetryPolicy) -> None:
    with GoogleServer(8) as server:
        embedder = _create(
            "google:text-embedding-004",
            policy,
            api_key=KEY,
            base_url=server.root,
            dim=8,
            concurrency=1,  # one request at a time: each as full as the API allows
        )
        embedder.embed_documents([f"doc {i}" for i in range(250)])
        embedder.embed_query("question")
        requests = server.embed_requests
    documents, query = requests[:-1], requests[-1]
    assert sorted(len(r.body["requests"]) for r in documents) == [50, 100, 100]
    assert all(r.path == "/v1beta/models/text-embedding-004:batchEmbedContents" for r in requests)
    assert {q["taskType"] for r in documents for q in r.body["requests"]} == {"RETRIEVAL_DOCUMENT"}
    assert [q["taskType"] for q in query.body["requests"]] == ["RETRIEVAL_QUERY"]
    assert query.body["requests"][0]["model"] == "models/text-embedding-004"
    assert requests[0].headers["x-goog-api-key"] == KEY


def test_google_key_from_gemini_api_key(
    policy: RetryPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    with GoogleServer(128) as server:
        monkeypatch.setenv("GEMINI_API_KEY", KEY)
        embedder = _create("google:gemini-embedding-001@128", policy, base_url=server.root)
        embedder.embed_query("q")
        assert server.embed_requests[0].body["requests"][0]["outputDimensionality"] == 128


def test_google_bad_key_is_a_clear_error(policy: RetryPolicy) -> None:
    with GoogleServer(128) as server:
        embedder = _create(
            "google:gemini-embedding-001@128", policy, api_key="nope", base_url=server.root
        )
        with pytest.raises(EmbeddingError, match="GOOGLE_API_KEY"):
            embedder.embed_query("q")
        assert len(server.embed_requests) == 1


# -- Ollama ---------------------------------------------------------------------------------


def test_ollama_unknown_model_says_how_to_pull_it(policy: RetryPolicy, sleeps: Sleeps) -> None:
    with OllamaServer(8) as server:
        embedder = _create("ollama:missing-model", policy, host=server.root, dim=8)
        with pytest.raises(EmbeddingError, match="ollama pull missing-model"):
            embedder.embed_documents(["x"])
        assert len(server.requests) == 1 and sleeps == []


def test_ollama_host_that_is_not_ollama_is_explained(policy: RetryPolicy) -> None:
    with OpenAIServer(8) as server:  # answers 404 for /api/embed
        embedder = _create("ollama:nomic-embed-text", policy, host=server.root)
        with pytest.raises(EmbeddingError, match="no /api/embed endpoint"):
            embedder.embed_query("q")


def test_ollama_probes_unknown_models_and_reads_ollama_host(
    policy: RetryPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OllamaServer(12) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.root.removeprefix("http://"))
        monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "ollama:custom-embed")
        embedder = create(retry=policy)
        assert isinstance(embedder, RemoteEmbedder)
        assert (embedder.name, embedder.dim) == ("ollama:custom-embed", 12)
        embedder.embed_documents(["plain"])  # no prefixes for a model we do not know
        assert [r.body["input"] for r in server.requests] == [["dimension probe"], ["plain"]]
        assert server.requests[1].body["truncate"] is True


def test_ollama_connection_refused_fails_fast_and_says_so(
    policy: RetryPolicy, sleeps: Sleeps
) -> None:
    with OllamaServer(8) as server:
        root = server.root  # the server is gone: its port refuses connections
    embedder = _create("ollama:nomic-embed-text", policy, host=root)
    with pytest.raises(EmbeddingError) as failure:
        embedder.embed_query("q")
    message = str(failure.value)
    assert f"cannot reach Ollama at {root}" in message and "ollama serve" in message
    assert "rate-limit" not in message
    assert sleeps == []  # not retried: a refused connection is not a rate limit


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "http://127.0.0.1:11434"),
        ("localhost", "http://localhost:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:9999", "http://127.0.0.1:9999"),
        ("https://ollama.example.com", "https://ollama.example.com:443"),
        ("http://10.0.0.5:8080/", "http://10.0.0.5:8080"),
        ("[::1]", "http://[::1]:11434"),
        ("[::1]:7000", "http://[::1]:7000"),
    ],
)
def test_ollama_host_forms(value: str | None, expected: str) -> None:
    assert ollama_host(value) == expected
