"""Retries for embedding calls: exponential backoff with jitter, honouring Retry-After.

Providers' own SDK retries are switched off so that this is the only retry loop:
one policy, one place that decides what is worth retrying, and one clear error
after the last attempt.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import EmbeddingError

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying (rate limit, server error, timeout, connection).

    ``retry_after`` is the server's requested wait in seconds, when it gave one.
    """

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry.

    The delay before retry ``n`` (1-based) is ``base_delay * 2**(n-1)`` capped at
    ``max_delay``, with "full jitter" (a uniform draw in [delay/2, delay]) so that
    parallel batches do not retry in lockstep. A server's ``Retry-After`` replaces
    the computed delay, capped at ``max_retry_after``.
    """

    attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("RetryPolicy delays must not be negative")

    def delay(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.base_delay * 2 ** (retry - 1), self.max_delay)
        return random.uniform(ceiling / 2, ceiling)


def parse_retry_after(headers: Mapping[str, Any] | Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        value = headers.get("retry-after")
    except AttributeError:
        return None
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except (TypeError, ValueError):
            pass
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except (TypeError, ValueError):
        pass
    import email.utils  # only for an HTTP-date Retry-After; costly to import up front

    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def call_with_retries(fn: Callable[[], T], policy: RetryPolicy, *, who: str) -> T:
    """Run ``fn`` until it succeeds, retrying only on :class:`TransientError`.

    Anything else (bad key, bad request, invalid vectors) is raised at once:
    retrying cannot fix it.
    """
    for attempt in range(1, policy.attempts + 1):
        try:
            return fn()
        except TransientError as exc:
            if attempt == policy.attempts:
                why = (
                    "The service is rate-limiting this key"
                    if exc.reason.startswith("HTTP 429")
                    else "The service may be down or overloaded"
                )
                raise EmbeddingError(
                    f"{who} failed after {policy.attempts} attempts; last error: "
                    f"{exc.reason.rstrip('.?! ')}. {why}; try again later."
                ) from exc
            policy.sleep(policy.delay(attempt, exc.retry_after))
    raise AssertionError("unreachable")  # pragma: no cover
