"""The pure parts: token estimates, truncation, batching, Retry-After and backoff."""

from __future__ import annotations

import email.utils
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from remembrances.embeddings.prefixes import family, prefixes_for
from remembrances.embeddings.retry import (
    RetryPolicy,
    TransientError,
    call_with_retries,
    parse_retry_after,
)
from remembrances.embeddings.truncation import batches, estimate_tokens, truncate
from remembrances.errors import EmbeddingError

from .conftest import Sleeps


@given(st.text(max_size=400), st.integers(min_value=1, max_value=200))
def test_truncation_keeps_a_prefix_that_fits(text: str, max_tokens: int) -> None:
    cut, was_cut = truncate(text, max_tokens)
    assert text.startswith(cut)
    assert estimate_tokens(cut) <= max_tokens
    assert was_cut == (cut != text)
    if not was_cut:
        assert estimate_tokens(text) <= max_tokens


def test_non_ascii_counts_a_token_per_character() -> None:
    assert estimate_tokens("abcdef") == 2
    assert estimate_tokens("日本語") == 3
    assert truncate("日本語のテキスト", 3) == ("日本語", True)
    assert truncate("ab日本", 2) == ("ab日", True)


def test_batches_respect_items_and_tokens() -> None:
    texts = ["a" * 30, "b" * 30, "c" * 30, "d" * 3]  # 10, 10, 10, 1 tokens
    assert batches(texts, max_items=2) == [[0, 1], [2, 3]]
    assert batches(texts, max_items=10, max_tokens=20) == [[0, 1], [2, 3]]
    assert batches(["x" * 300], max_items=5, max_tokens=10) == [[0]]  # alone if too big
    assert batches([], max_items=3) == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-4"}, 0.0),
        ({}, None),
        (None, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str] | None, expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    value = parse_retry_after({"retry-after": when})
    assert value is not None and 25 <= value <= 31


def test_backoff_grows_is_capped_and_honours_retry_after() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, max_retry_after=10.0)
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delay = policy.delay(retry, None)
        assert ceiling / 2 <= delay <= ceiling
    assert policy.delay(1, 7.0) == 7.0
    assert policy.delay(1, 600.0) == 10.0


def test_only_transient_errors_are_retried(sleeps: Sleeps) -> None:
    policy = RetryPolicy(attempts=5, base_delay=0.0, sleep=sleeps)
    outcomes: list[Exception | str] = [TransientError("HTTP 429"), TransientError("HTTP 503"), "ok"]

    def flaky() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert call_with_retries(flaky, policy, who="svc") == "ok"
    assert len(sleeps) == 2

    def broken() -> str:
        raise EmbeddingError("bad key")

    with pytest.raises(EmbeddingError, match="bad key"):
        call_with_retries(broken, policy, who="svc")
    assert len(sleeps) == 2


@pytest.mark.parametrize("bad", [{"attempts": 0}, {"base_delay": -1.0}])
def test_policy_validation(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**bad)  # type: ignore[arg-type]


def test_prefix_families() -> None:
    assert family("hf.co/nomic-ai/nomic-embed-text-v1.5:Q8_0") == "nomic-embed-text-v1.5"
    assert prefixes_for("nomic-embed-text:latest").query == "search_query: "
    assert prefixes_for("mxbai-embed-large").document == ""
    assert prefixes_for("text-embedding-3-small").query == ""
