"""OpenAI embeddings, and any server that speaks the OpenAI embeddings API
(vLLM, LM Studio, llama.cpp, TEI, LiteLLM...), through the official ``openai`` SDK.

Wire: ``POST {base_url}/embeddings`` with ``{"model", "input": [...],
"encoding_format": "base64", "dimensions"?}`` and ``Authorization: Bearer KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import EmbedderUnavailableError, EmbeddingError
from .remote import DEFAULT_TIMEOUT, Kind, RemoteEmbedder, import_sdk
from .retry import RetryPolicy, TransientError, parse_retry_after

DEFAULT_MODEL = "text-embedding-3-small"
OFFICIAL_HOST = "api.openai.com"
#: (native dimension, accepts ``dimensions``) for OpenAI's own models.
MODELS: dict[str, tuple[int, bool]] = {
    "text-embedding-3-small": (1536, True),
    "text-embedding-3-large": (3072, True),
    "text-embedding-ada-002": (1536, False),
}
MAX_INPUT_TOKENS = 8191
#: The API's per-request limits: 2048 inputs, 300k tokens (estimated conservatively).
MAX_BATCH = 2048
MAX_BATCH_TOKENS = 250_000
RETRYABLE_STATUS = {408, 409, 429}


class OpenAIEmbedder(RemoteEmbedder):
    """``openai:MODEL`` (``@DIMS`` for a shorter output, where the model allows it).

    The key comes from ``api_key=`` or ``OPENAI_API_KEY``; the server from
    ``base_url=`` or ``OPENAI_BASE_URL``. A compatible server other than OpenAI's
    may run without a key. Models that are not OpenAI's have their dimension
    detected by one probe request.
    """

    provider = "openai"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimensions: int | None = None,
        dim: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        batch_size: int = MAX_BATCH,
        concurrency: int = 4,
        max_input_tokens: int = MAX_INPUT_TOKENS,
    ) -> None:
        known = MODELS.get(model)
        if dimensions is not None and known is not None and not known[1]:
            raise EmbedderUnavailableError(
                f"OpenAI model {model!r} has a fixed dimension of {known[0]}; "
                "drop the @DIMS / dimensions option or use a text-embedding-3 model"
            )
        super().__init__(
            model,
            dimensions=dimensions,
            dim=dim if dim is not None else (known[0] if known else None),
            batch_size=min(batch_size, MAX_BATCH),
            max_batch_tokens=MAX_BATCH_TOKENS,
            max_input_tokens=max_input_tokens,
            concurrency=concurrency,
            timeout=timeout,
            retry=retry,
        )
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None or OFFICIAL_HOST in base_url:
                raise EmbedderUnavailableError(
                    "the openai embedder needs an API key: set OPENAI_API_KEY (from Python, "
                    "api_key=... works too), or point OPENAI_BASE_URL at a compatible server "
                    "that needs no key"
                )
            api_key = "no-key"  # compatible servers without auth still get a header
        self._sdk = import_sdk("openai", provider="openai", extra="openai")
        self.base_url = base_url or f"https://{OFFICIAL_HOST}/v1"
        # max_retries=0: our retry loop is the only one (see retry.py).
        self._client = self._sdk.OpenAI(
            api_key=api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    def describe(self) -> str:
        return f"openai embedder {self.name!r} at {self.base_url}"

    def _request(self, texts: list[str], kind: Kind) -> Sequence[Sequence[float]]:
        options: dict[str, Any] = {}
        if self.dimensions is not None:
            options["dimensions"] = self.dimensions
        response = self._client.embeddings.create(model=self.model, input=texts, **options)
        data = sorted(response.data, key=lambda item: item.index)
        return [item.embedding for item in data]

    def _failure(self, exc: Exception) -> Exception:
        sdk = self._sdk
        where = self.describe()
        if isinstance(exc, sdk.APITimeoutError):
            return TransientError(f"no answer within {self.timeout:g}s (timeout)")
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__
            if cause is not None and "connect" not in type(cause).__name__.lower():
                # the server took the connection and then dropped it mid-answer
                return TransientError(f"the connection broke: {type(cause).__name__}: {cause}")
            return TransientError(f"could not connect: {exc}")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            message = _message(exc)
            if status == 429 and _code(exc) == "insufficient_quota":
                # billing, not a rate limit: no retry fixes it
                return EmbeddingError(
                    f"{where}: the account is out of quota (HTTP 429: {message.rstrip('.')}); "
                    "check the plan and billing of this key"
                )
            if status in RETRYABLE_STATUS or status >= 500:
                return TransientError(
                    f"HTTP {status}: {message}", retry_after=parse_retry_after(exc.response.headers)
                )
            if status in (401, 403):
                return EmbeddingError(
                    f"{where} refused the API key (HTTP {status}: {message}); "
                    "check OPENAI_API_KEY or api_key=..."
                )
            if status == 404:
                return EmbeddingError(
                    f"{where}: model {self.model!r} not found (HTTP 404: {message})"
                )
            return EmbeddingError(f"{where} rejected the request (HTTP {status}): {message}")
        return EmbeddingError(
            f"{where} sent a response that could not be read ({type(exc).__name__}: {exc}); "
            "is the server really OpenAI-compatible?"
        )


def _code(exc: Any) -> str | None:
    """The error's ``code`` or ``type`` in OpenAI's error body (``insufficient_quota``)."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict):
        value = inner.get("code") or inner.get("type")
        return None if value is None else str(value)
    return None


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))
