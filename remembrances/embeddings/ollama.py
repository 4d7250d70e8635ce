"""Ollama embeddings over its HTTP API (there is no official SDK we need).

Wire: ``POST {host}/api/embed`` with ``{"model", "input": [...], "truncate": true,
"dimensions"?}`` -> ``{"embeddings": [[...], ...]}``. No key: Ollama runs locally,
so the texts never leave the machine unless ``OLLAMA_HOST`` points elsewhere.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..errors import EmbeddingError
from .prefixes import family
from .remote import DEFAULT_TIMEOUT, Kind, RemoteEmbedder, import_sdk
from .retry import RetryPolicy, TransientError, parse_retry_after

DEFAULT_MODEL = "nomic-embed-text"
DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_PORT = 11434
#: Native dimensions of the default tags of common embedding models in Ollama's
#: library; other tags (sizes) differ, so they are probed instead.
MODELS: dict[str, int] = {
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "bge-m3": 1024,
    "bge-large": 1024,
    "snowflake-arctic-embed": 1024,
    "snowflake-arctic-embed2": 1024,
    "embeddinggemma": 768,
}
#: Ollama's default context for embedding requests; it truncates beyond it itself,
#: but we cut first so that the ``truncated`` counter tells the truth.
MAX_INPUT_TOKENS = 2048


def ollama_host(host: str | None = None) -> str:
    """``OLLAMA_HOST`` as Ollama itself reads it: scheme and port are optional."""
    value = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in value:
        value = "http://" + value
    scheme, _, rest = value.partition("://")
    hostport, slash, path = rest.partition("/")
    if hostport.startswith("0.0.0.0"):  # a bind address, not somewhere to connect to
        hostport = "127.0.0.1" + hostport[len("0.0.0.0") :]
    if ":" not in hostport.rsplit("]", 1)[-1]:  # no port (IPv6 addresses are bracketed)
        hostport += ":443" if scheme == "https" else f":{DEFAULT_PORT}"
    return f"{scheme}://{hostport}{slash}{path}".rstrip("/")


def _known_dim(model: str) -> int | None:
    tag = model.split(":", 1)[1] if ":" in model else "latest"
    return MODELS.get(family(model)) if tag == "latest" else None


class OllamaEmbedder(RemoteEmbedder):
    """``ollama:MODEL`` with the host from ``host=`` or ``OLLAMA_HOST``.

    Models trained with instruction prefixes (nomic-embed-text, mxbai-embed-large,
    e5, embeddinggemma...) get them for queries and documents automatically.
    """

    provider = "ollama"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        host: str | None = None,
        base_url: str | None = None,
        dimensions: int | None = None,
        dim: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        batch_size: int = 32,
        concurrency: int = 2,
        max_input_tokens: int = MAX_INPUT_TOKENS,
    ) -> None:
        super().__init__(
            model,
            dimensions=dimensions,
            dim=dim if dim is not None else _known_dim(model),
            batch_size=batch_size,
            max_input_tokens=max_input_tokens,
            concurrency=concurrency,
            timeout=timeout,
            retry=retry,
        )
        self._httpx = import_sdk("httpx", provider="ollama", extra="ollama")
        self.host = ollama_host(host or base_url)
        self._client = self._httpx.Client(base_url=self.host, timeout=self.timeout)

    def describe(self) -> str:
        return f"ollama embedder {self.name!r} at {self.host}"

    def _request(self, texts: list[str], kind: Kind) -> Sequence[Sequence[float]]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "truncate": True}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        response = self._client.post("/api/embed", json=body)
        status = response.status_code
        if status != 200:
            message = _error_text(response.text)
            if status in (408, 429) or status >= 500:
                raise TransientError(
                    f"HTTP {status}: {message}", retry_after=parse_retry_after(response.headers)
                )
            if status == 404 and "model" in message.lower():
                raise EmbeddingError(
                    f"{self.describe()}: {message}; pull the model with: ollama pull {self.model}"
                )
            if status == 404:
                raise EmbeddingError(
                    f"{self.describe()} has no /api/embed endpoint ({message}); is it Ollama "
                    "0.3.4 or newer?"
                )
            raise EmbeddingError(
                f"{self.describe()} rejected the request (HTTP {status}): {message}"
            )
        try:
            payload = json.loads(response.text)
        except ValueError as exc:
            raise EmbeddingError(
                f"{self.describe()} sent a response that is not valid JSON: {response.text[:200]!r}"
            ) from exc
        if not isinstance(payload, dict) or not isinstance(payload.get("embeddings"), list):
            raise EmbeddingError(
                f"{self.describe()} sent no 'embeddings' list (got {str(payload)[:200]!r}); "
                "is this an Ollama server (0.3.4 or newer)?"
            )
        return payload["embeddings"]  # type: ignore[no-any-return]

    def _failure(self, exc: Exception) -> Exception:
        httpx = self._httpx
        if isinstance(exc, httpx.TimeoutException):
            return TransientError(f"no answer within {self.timeout:g}s (timeout)")
        if isinstance(exc, httpx.ConnectError):
            # Nothing listens there: retrying for seconds would not start it.
            return EmbeddingError(
                f"cannot reach Ollama at {self.host} ({exc}); is `ollama serve` running? "
                "(set OLLAMA_HOST if it listens elsewhere)"
            )
        if isinstance(exc, httpx.TransportError):
            return TransientError(f"the connection failed ({exc}); is Ollama still running?")
        return super()._failure(exc)


def _error_text(body: str) -> str:
    try:
        payload = json.loads(body)
    except ValueError:
        return body[:200] or "(empty body)"
    if isinstance(payload, dict) and payload.get("error"):
        return str(payload["error"])
    return body[:200]
