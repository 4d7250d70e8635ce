"""The last retry's message names the cause it saw, not a guess."""

from __future__ import annotations

import pytest

from remembrances.embeddings.retry import RetryPolicy, TransientError, call_with_retries
from remembrances.errors import EmbeddingError


@pytest.mark.parametrize(
    ("reason", "said", "not_said"),
    [
        ("HTTP 429: slow down", "rate-limiting this key", "down or overloaded"),
        ("HTTP 503: busy", "down or overloaded", "rate-limiting"),
        ("no answer within 5s (timeout)", "down or overloaded", "rate-limiting"),
    ],
)
def test_the_final_error_names_what_happened(reason: str, said: str, not_said: str) -> None:
    def fail() -> None:
        raise TransientError(reason)

    policy = RetryPolicy(attempts=2, sleep=lambda _seconds: None)
    with pytest.raises(EmbeddingError) as failure:
        call_with_retries(fail, policy, who="embedder 'x'")
    assert said in str(failure.value) and not_said not in str(failure.value)
    assert reason in str(failure.value)
