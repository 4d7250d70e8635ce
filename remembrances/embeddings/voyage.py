"""Voyage AI embeddings through the official ``voyageai`` SDK.

Wire: ``POST {base_url}/embeddings`` with ``{"input": [...], "model",
"input_type": "document"|"query", "truncation": true, "output_dimension"?,
"encoding_format": "base64"}`` and ``Authorization: Bearer KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import EmbedderUnavailableError, EmbeddingError
from .remote import DEFAULT_TIMEOUT, Kind, RemoteEmbedder, import_sdk
from .retry import RetryPolicy, TransientError, parse_retry_after

DEFAULT_MODEL = "voyage-3.5"
MAX_BATCH = 1000


# model -> (native dimension, other output dimensions, context tokens, tokens per request)
MODELS: dict[str, tuple[int, tuple[int, ...], int, int]] = {
    "voyage-3.5": (1024, (256, 512, 2048), 32_000, 320_000),
    "voyage-3.5-lite": (1024, (256, 512, 2048), 32_000, 1_000_000),
    "voyage-3-large": (1024, (256, 512, 2048), 32_000, 120_000),
    "voyage-code-3": (1024, (256, 512, 2048), 32_000, 120_000),
    "voyage-3": (1024, (), 32_000, 320_000),
    "voyage-3-lite": (512, (), 32_000, 1_000_000),
    "voyage-finance-2": (1024, (), 32_000, 120_000),
    "voyage-multilingual-2": (1024, (), 32_000, 120_000),
    "voyage-law-2": (1024, (), 16_000, 120_000),
    "voyage-code-2": (1536, (), 16_000, 120_000),
}
#: For models not listed above: the smallest limits of the current generation.
UNKNOWN_LIMITS = (16_000, 120_000)


class VoyageEmbedder(RemoteEmbedder):
    """``voyage:MODEL`` (``@DIMS`` for 256/512/2048 on models that offer them).

    Documents and queries are embedded with ``input_type`` "document"/"query".
    The key comes from ``api_key=`` or ``VOYAGE_API_KEY``.
    """

    provider = "voyage"

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
        batch_size: int = 128,
        concurrency: int = 4,
        max_input_tokens: int | None = None,
    ) -> None:
        known = MODELS.get(model)
        if dimensions is not None and known is not None and dimensions not in (known[0], *known[1]):
            raise EmbedderUnavailableError(
                f"Voyage model {model!r} cannot output {dimensions} dimensions; it offers "
                f"{sorted((known[0], *known[1]))}"
            )
        context, per_request = (known[2], known[3]) if known else UNKNOWN_LIMITS
        super().__init__(
            model,
            dimensions=dimensions,
            dim=dim if dim is not None else (known[0] if known else None),
            batch_size=min(batch_size, MAX_BATCH),
            max_batch_tokens=int(per_request * 0.9),
            max_input_tokens=max_input_tokens or context,
            concurrency=concurrency,
            timeout=timeout,
            retry=retry,
        )
        api_key = api_key or os.environ.get("VOYAGE_API_KEY") or None
        if api_key is None:
            raise EmbedderUnavailableError(
                "the voyage embedder needs an API key: set VOYAGE_API_KEY (from Python, "
                "api_key=... works too)"
            )
        self._sdk = import_sdk("voyageai", provider="voyage", extra="voyage")
        self._errors = self._sdk.error
        util = import_sdk("voyageai.util", provider="voyage", extra="voyage")
        # The SDK picks the endpoint from the key (MongoDB Atlas keys start with "al-").
        self.base_url = (base_url or util.get_default_base_url(api_key)).rstrip("/")
        # max_retries=0: our retry loop is the only one (see retry.py).
        self._client = self._sdk.Client(
            api_key=api_key, max_retries=0, timeout=self.timeout, base_url=self.base_url
        )

    def describe(self) -> str:
        return f"voyage embedder {self.name!r} at {self.base_url}"

    def _request(self, texts: list[str], kind: Kind) -> Sequence[Sequence[float]]:
        result = self._client.embed(
            texts,
            model=self.model,
            input_type=kind,
            truncation=True,
            output_dimension=self.dimensions,
        )
        return list(result.embeddings)

    def _failure(self, exc: Exception) -> Exception:
        errors = self._errors
        where = self.describe()
        if isinstance(exc, errors.Timeout):
            return TransientError(f"no answer within {self.timeout:g}s (timeout)")
        if isinstance(exc, errors.APIConnectionError):
            return TransientError(f"could not connect: {exc}")
        status = getattr(exc, "http_status", None)
        message = getattr(exc, "user_message", None) or str(exc)
        if isinstance(exc, errors.VoyageError) and isinstance(status, int):
            if status in (408, 429) or status >= 500:
                return TransientError(
                    f"HTTP {status}: {message}", retry_after=parse_retry_after(exc.headers)
                )
            if status in (401, 403):
                return EmbeddingError(
                    f"{where} refused the API key (HTTP {status}: {message}); "
                    "check VOYAGE_API_KEY or api_key=..."
                )
            if 200 <= status < 300:
                return EmbeddingError(f"{where} sent a response that is not valid JSON: {message}")
            return EmbeddingError(f"{where} rejected the request (HTTP {status}): {message}")
        return EmbeddingError(
            f"{where} sent a response that could not be read ({type(exc).__name__}: {exc})"
        )
