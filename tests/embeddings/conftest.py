"""One case per provider: its wire server, its spec, and how to point the real SDK at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from remembrances.embeddings import RetryPolicy, create
from remembrances.embeddings.remote import RemoteEmbedder

from .wire_servers import KEY, GoogleServer, OllamaServer, OpenAIServer, VoyageServer, WireServer

ENV_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "VOYAGE_API_KEY",
    "VOYAGE_API_KEY_PATH",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "OLLAMA_HOST",
    "REMEMBRANCES_EMBEDDER",
)


@dataclass
class Case:
    """A provider under test. ``dim`` is what the server returns by default."""

    provider: str
    server_class: type[WireServer]
    spec: str
    dim: int
    options: Callable[[WireServer], dict[str, Any]]
    document_prefix: str = ""
    query_prefix: str = ""

    def document(self, text: str) -> str:
        """The text the server sees for a document (prefixes included)."""
        return self.document_prefix + text

    def query(self, text: str) -> str:
        return self.query_prefix + text

    def texts_of(self, server: WireServer, request_index: int) -> list[str]:
        return server.texts(server.embed_requests[request_index].body)


CASES = [
    Case(
        "openai",
        OpenAIServer,
        "openai:text-embedding-3-small@16",
        16,
        lambda s: {"api_key": KEY, "base_url": s.base_url},  # type: ignore[attr-defined]
    ),
    Case(
        "voyage",
        VoyageServer,
        "voyage:voyage-3.5@256",
        256,
        lambda s: {"api_key": KEY, "base_url": s.base_url},  # type: ignore[attr-defined]
    ),
    Case(
        "google",
        GoogleServer,
        "google:gemini-embedding-001@128",
        128,
        lambda s: {"api_key": KEY, "base_url": s.root},
    ),
    Case(
        "ollama",
        OllamaServer,
        "ollama:nomic-embed-text",
        768,
        lambda s: {"host": s.root},
        document_prefix="search_document: ",
        query_prefix="search_query: ",
    ),
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real keys or hosts from the developer's shell may leak into a test."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


class Sleeps(list[float]):
    """Records the delays the retry loop asked for instead of sleeping them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def policy(sleeps: Sleeps) -> RetryPolicy:
    return RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05, sleep=sleeps)


@pytest.fixture(params=CASES, ids=[c.provider for c in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def server(case: Case) -> Iterator[WireServer]:
    with case.server_class(case.dim) as s:
        yield s


@pytest.fixture
def make(case: Case, server: WireServer, policy: RetryPolicy) -> Callable[..., RemoteEmbedder]:
    """Build the case's embedder through create(), pointed at its server."""

    def build(**overrides: Any) -> RemoteEmbedder:
        options = {**case.options(server), "retry": policy, **overrides}
        embedder = create(case.spec, **options)
        assert isinstance(embedder, RemoteEmbedder)
        return embedder

    return build
