"""Token budgets without a tokenizer: a conservative estimate, truncation and batching.

Providers count tokens with tokenizers we do not ship. The estimate here errs on
the high side (ASCII text averages about four characters per token with the
common BPE vocabularies; we assume three; any other character counts as a whole
token), so a text cut to fit the estimate fits the real limit, and a batch packed
to the estimate stays under the provider's per-request limit.
"""

from __future__ import annotations

from collections.abc import Sequence

ASCII_CHARS_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    if text.isascii():
        return -(-len(text) // ASCII_CHARS_PER_TOKEN)
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return -(-ascii_chars // ASCII_CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def truncate(text: str, max_tokens: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` that fits ``max_tokens`` (estimated), and whether
    anything was cut. Over-long inputs are cut rather than sent to fail."""
    if len(text) <= max_tokens or estimate_tokens(text) <= max_tokens:
        return text, False
    if text.isascii():
        return text[: max_tokens * ASCII_CHARS_PER_TOKEN], True
    budget = max_tokens * ASCII_CHARS_PER_TOKEN  # in thirds of a token
    for i, ch in enumerate(text):
        budget -= 1 if ch < "\x80" else ASCII_CHARS_PER_TOKEN
        if budget < 0:
            return text[:i], True
    return text, False  # pragma: no cover - the estimate said it was too long


def batches(
    texts: Sequence[str], *, max_items: int, max_tokens: int | None = None
) -> list[list[int]]:
    """Indices of ``texts`` grouped into requests of at most ``max_items`` texts and
    (when given) at most ``max_tokens`` estimated tokens, in order."""
    out: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, text in enumerate(texts):
        cost = estimate_tokens(text) if max_tokens is not None else 0
        full = len(current) >= max_items or (
            max_tokens is not None and current and used + cost > max_tokens
        )
        if full:
            out.append(current)
            current, used = [], 0
        current.append(i)
        used += cost
    if current:
        out.append(current)
    return out
