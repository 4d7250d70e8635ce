"""Typed library errors as HTTP status codes, with the library's one-line message.

The body is always ``{"error": "<ErrorClass>", "message": "<one line>"}`` so a
client (the CLI's ``--url`` path among them) can raise the same typed error again.
"""

from __future__ import annotations

from .. import errors as e

#: Most specific first: the first class an exception is an instance of decides.
STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (e.NotFoundError, 404),
    (e.InvalidInputError, 400),  # InvalidVectorError included
    (e.RerankerNotConfiguredError, 400),
    (e.ReadOnlyError, 403),
    (e.EmbedderMismatchError, 409),
    (e.SchemaVersionError, 409),
    (e.EmbeddingError, 502),  # the embedding provider failed after its retries
    (e.EmbedderUnavailableError, 503),
    (e.StorageError, 503),  # disk full, I/O error, locked for too long
    (e.RemembrancesError, 400),
    (ValueError, 400),
    (OSError, 400),  # a path that cannot be read is the caller's to fix
)


def status_for(exc: BaseException) -> int:
    for kind, status in STATUS:
        if isinstance(exc, kind):
            return status
    return 500


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def body(error: str, message: str) -> dict[str, str]:
    return {"error": error, "message": message}
