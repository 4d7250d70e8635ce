"""What every embedding service behind an HTTP API needs, written once.

A provider module says how to send one batch and how to read its failures; this
base class does the rest the same way for all of them: input checks, model
prefixes, truncation, batching to the provider's limits, bounded concurrency,
retries, dimension detection and validation of every vector before it leaves.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, ClassVar, Literal

import numpy as np

from ..errors import EmbedderUnavailableError, EmbeddingError, InvalidInputError
from ..validation import check_text
from .base import Vectors, as_matrix, as_vector, with_vectors_done
from .prefixes import Prefixes, prefixes_for
from .retry import RetryPolicy, TransientError, call_with_retries
from .truncation import batches, truncate

Kind = Literal["document", "query"]

#: Seconds one HTTP request may take before it counts as a (retryable) timeout.
DEFAULT_TIMEOUT = 60.0
PROBE_TEXT = "dimension probe"
#: A call is split over the concurrent requests, but not into requests smaller than this.
MIN_REQUEST_TEXTS = 16
#: Texts per request counted in ``call_size``: a call stays small enough that an
#: interrupted ingest loses little (each call's vectors are cached when it returns).
MAX_CALL_REQUEST = 128


def install_hint(extra: str) -> str:
    return f"pip install 'remembrances[{extra}]'"


def import_sdk(module: str, *, provider: str, extra: str) -> Any:
    """Import a provider SDK only when that provider is used (they are slow to import)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderUnavailableError(
            f"the {provider} embedder needs the {module!r} package; run: {install_hint(extra)}"
        ) from exc


class RemoteEmbedder:
    """An :class:`~remembrances.embeddings.base.Embedder` backed by a web API.

    Subclasses set ``provider`` and implement :meth:`_request` (one batch, no
    retries) and :meth:`_failure` (turn an SDK exception into a
    :class:`TransientError`, worth retrying, or an :class:`EmbeddingError`).

    Counters: ``calls`` texts embedded as documents, ``requests`` HTTP requests
    that returned vectors, ``truncated`` inputs cut to fit the model.
    """

    provider: ClassVar[str] = "remote"

    def __init__(
        self,
        model: str,
        *,
        dimensions: int | None = None,
        dim: int | None = None,
        batch_size: int,
        max_batch_tokens: int | None = None,
        max_input_tokens: int,
        concurrency: int = 4,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        prefixes: Prefixes | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise EmbedderUnavailableError(f"the {self.provider} embedder needs a model name")
        for value, what in ((dimensions, "dimensions"), (dim, "dim")):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise EmbedderUnavailableError(f"{what} must be a positive integer, not {value!r}")
        if batch_size < 1 or concurrency < 1 or max_input_tokens < 1:
            raise EmbedderUnavailableError(
                "batch_size, concurrency and max_input_tokens must be >= 1"
            )
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise EmbedderUnavailableError("timeout must be a positive number of seconds")
        self.model = model.strip()
        self.dimensions = dimensions
        self.name = f"{self.provider}:{self.model}" + (f"@{dimensions}" if dimensions else "")
        self._dim = dimensions or dim
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.max_input_tokens = max_input_tokens
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy()
        self.prefixes = prefixes if prefixes is not None else prefixes_for(self.model)
        self.calls = 0
        self.requests = 0
        self.truncated = 0
        self._lock = threading.Lock()  # counters
        self._probe_lock = threading.Lock()  # one dimension probe at a time

    # -- what a provider implements ---------------------------------------------------

    def _request(self, texts: list[str], kind: Kind) -> Sequence[Sequence[float]]:
        """Embed one batch with one HTTP request; raise on any failure."""
        raise NotImplementedError

    def _failure(self, exc: Exception) -> Exception:
        """A :class:`TransientError` for failures worth retrying, else an error to raise."""
        return EmbeddingError(f"{self.describe()}: {type(exc).__name__}: {exc}")

    def describe(self) -> str:
        """Where requests go, for error messages."""
        return f"embedding provider {self.name!r}"

    # -- the Embedder interface -------------------------------------------------------

    @property
    def dim(self) -> int:
        """Known per model, given by ``dim=``/``dimensions=``, or detected by one probe."""
        if self._dim is None:
            with self._probe_lock:
                if self._dim is None:
                    self._dim = self._probe_dim()
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    @property
    def known_dim(self) -> int | None:
        """The dimension without asking the provider: None until known."""
        return self._dim

    @property
    def call_size(self) -> int:
        """Texts per ``embed_documents`` call that keep every request slot busy
        (the Store batches by it)."""
        return max(MIN_REQUEST_TEXTS, min(self.batch_size, MAX_CALL_REQUEST)) * self.concurrency

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        prepared = [self._prepare(t, i, self.prefixes.document) for i, t in enumerate(texts)]
        dim = self.dim
        out = np.zeros((len(prepared), dim), dtype=np.float32)
        # Spread a call over the request slots: 256 texts with concurrency 4 go as
        # 4 requests of 64 at once, not one of 256.
        slots = max(1, min(self.concurrency, len(prepared) // MIN_REQUEST_TEXTS))
        per_request = max(1, min(self.batch_size, -(-len(prepared) // slots)))
        groups = batches(prepared, max_items=per_request, max_tokens=self.max_batch_tokens)

        finished: list[int] = []

        def run(group: list[int]) -> None:
            matrix = self._embed_batch([prepared[i] for i in group], "document", dim)
            out[group] = matrix
            with self._lock:
                self.calls += len(group)
                finished.extend(group)

        try:
            self._run_all(run, groups)
        except Exception as exc:
            with_vectors_done(exc, {i: out[i] for i in finished})  # paid for: keep them
            raise
        return out

    def embed_query(self, text: str) -> Vectors:
        prepared = self._prepare(text, 0, self.prefixes.query)
        dim = self.dim
        return as_vector(self._embed_batch([prepared], "query", dim)[0], dim=dim, who=self.name)

    def close(self) -> None:
        """Release the HTTP connections (the embedder is unusable afterwards)."""
        close = getattr(getattr(self, "_client", None), "close", None)
        if callable(close):
            close()

    # -- the machinery ----------------------------------------------------------------

    def _prepare(self, text: Any, i: int, prefix: str) -> str:
        check_text(text, f"text {i}")
        cut, was_cut = truncate(prefix + text, self.max_input_tokens)
        if was_cut:
            with self._lock:
                self.truncated += 1
        return cut

    def _embed_batch(self, texts: list[str], kind: Kind, dim: int) -> Vectors:
        vectors = call_with_retries(
            lambda: self._call(texts, kind), self.retry, who=self.describe()
        )
        return as_matrix(vectors, count=len(texts), dim=dim, who=self.describe())

    def _call(self, texts: list[str], kind: Kind) -> Sequence[Sequence[float]]:
        try:
            vectors = self._request(texts, kind)
        except (TransientError, EmbeddingError, InvalidInputError):
            raise
        except Exception as exc:
            raise self._failure(exc) from exc
        with self._lock:
            self.requests += 1
        return vectors

    def _probe_dim(self) -> int:
        vectors = call_with_retries(
            lambda: self._call([PROBE_TEXT], "document"), self.retry, who=self.describe()
        )
        try:
            length = len(vectors[0])
        except (TypeError, IndexError) as exc:
            raise EmbeddingError(
                f"{self.describe()} returned no vector for the dimension probe"
            ) from exc
        if length < 1:
            raise EmbeddingError(f"{self.describe()} returned an empty vector")
        return length

    def _run_all(self, run: Callable[[list[int]], None], groups: list[list[int]]) -> None:
        """Run batches at most ``concurrency`` at a time; the first failure stops the rest."""
        if len(groups) <= 1 or self.concurrency == 1:
            for group in groups:
                run(group)
            return
        pool = ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(groups)), thread_name_prefix=self.provider
        )
        try:
            futures: list[Future[None]] = [pool.submit(run, g) for g in groups]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:
                if future in done and future.exception() is not None:
                    raise future.exception()  # type: ignore[misc]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
