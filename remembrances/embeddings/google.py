"""Google Gemini API embeddings through the official ``google-genai`` SDK.

Wire: ``POST {base_url}/v1beta/models/{model}:batchEmbedContents`` with
``{"requests": [{"model": "models/M", "content": {"parts": [{"text": ...}]},
"taskType": "RETRIEVAL_DOCUMENT"|"RETRIEVAL_QUERY", "outputDimensionality"?}]}``
and the header ``x-goog-api-key: KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import EmbedderUnavailableError, EmbeddingError
from .remote import DEFAULT_TIMEOUT, Kind, RemoteEmbedder, import_sdk
from .retry import RetryPolicy, TransientError, parse_retry_after

DEFAULT_MODEL = "gemini-embedding-001"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
#: batchEmbedContents takes at most 100 requests.
MAX_BATCH = 100
# model -> (native dimension, smallest output dimensionality, context tokens)
MODELS: dict[str, tuple[int, int, int]] = {
    "gemini-embedding-001": (3072, 128, 2048),
    "text-embedding-004": (768, 1, 2048),
}
UNKNOWN_CONTEXT = 2048
TASK_TYPES: dict[str, str] = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GoogleEmbedder(RemoteEmbedder):
    """``google:MODEL`` (``@DIMS`` for a shorter output, e.g. 768 or 1536).

    Documents and queries use ``task_type`` RETRIEVAL_DOCUMENT/RETRIEVAL_QUERY.
    The key comes from ``api_key=``, ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``.
    """

    provider = "google"

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
        max_input_tokens: int | None = None,
    ) -> None:
        model = model.removeprefix("models/")
        known = MODELS.get(model)
        if dimensions is not None and known is not None and not known[1] <= dimensions <= known[0]:
            raise EmbedderUnavailableError(
                f"Google model {model!r} outputs between {known[1]} and {known[0]} dimensions, "
                f"not {dimensions}"
            )
        super().__init__(
            model,
            dimensions=dimensions,
            dim=dim if dim is not None else (known[0] if known else None),
            batch_size=min(batch_size, MAX_BATCH),
            max_input_tokens=max_input_tokens or (known[2] if known else UNKNOWN_CONTEXT),
            concurrency=concurrency,
            timeout=timeout,
            retry=retry,
        )
        api_key = (
            api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY") or None
        )
        if api_key is None:
            raise EmbedderUnavailableError(
                "the google embedder needs an API key: set GOOGLE_API_KEY (or GEMINI_API_KEY) "
                "(from Python, api_key=... works too)"
            )
        genai = import_sdk("google.genai", provider="google", extra="google")
        self._types = import_sdk("google.genai.types", provider="google", extra="google")
        self._errors = import_sdk("google.genai.errors", provider="google", extra="google")
        self._timeouts, self._transport = _httpx_failures()
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        # retry_options=None: the SDK makes one attempt; our retry loop is the only one.
        options = self._types.HttpOptions(
            base_url=self.base_url,
            api_version=API_VERSION,
            timeout=max(int(self.timeout * 1000), 1),
            retry_options=None,
        )
        self._client = genai.Client(api_key=api_key, http_options=options)

    def describe(self) -> str:
        return f"google embedder {self.name!r} at {self.base_url}"

    def _request(self, texts: list[str], kind: Kind) -> Sequence[Sequence[float]]:
        config = self._types.EmbedContentConfig(
            task_type=TASK_TYPES[kind], output_dimensionality=self.dimensions
        )
        response = self._client.models.embed_content(
            model=self.model, contents=texts, config=config
        )
        embeddings = response.embeddings or []
        return [list(e.values or []) for e in embeddings]

    def _failure(self, exc: Exception) -> Exception:
        where = self.describe()
        if isinstance(exc, self._timeouts):
            return TransientError(f"no answer within {self.timeout:g}s (timeout)")
        if isinstance(exc, self._transport):
            return TransientError(f"could not connect: {exc}")
        if isinstance(exc, self._errors.APIError):
            status = int(exc.code or 0)
            message = exc.message or str(exc)
            headers = getattr(exc.response, "headers", None)
            if status in (408, 429) or status >= 500:
                return TransientError(
                    f"HTTP {status}: {message}", retry_after=parse_retry_after(headers)
                )
            if status in (401, 403) or "API key" in message:
                return EmbeddingError(
                    f"{where} refused the API key (HTTP {status}: {message}); "
                    "check GOOGLE_API_KEY / GEMINI_API_KEY or api_key=..."
                )
            return EmbeddingError(f"{where} rejected the request (HTTP {status}): {message}")
        return EmbeddingError(
            f"{where} sent a response that could not be read ({type(exc).__name__}: {exc})"
        )


def _httpx_failures() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """Timeout and transport exception classes of whichever httpx the SDK uses."""
    timeouts: list[type[BaseException]] = []
    transport: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            module: Any = __import__(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        transport.append(module.TransportError)
    return tuple(timeouts), tuple(transport)
