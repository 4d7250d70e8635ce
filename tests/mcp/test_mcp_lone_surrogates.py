"""Lone surrogate escapes in a client's JSON-RPC line become U+FFFD; nothing else changes."""

from __future__ import annotations

import json

import pytest

from remembrances.mcp.lone_surrogates import without_lone_surrogates


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ('"cut \\ud83d"', "cut \ufffd"),  # a high surrogate alone
        ('"\\ude00 low first"', "\ufffd low first"),
        ('"\\ud83d\\ude00 pair"', "\U0001f600 pair"),  # an escaped pair is an emoji: kept
        ('"not one: \\\\ud800"', "not one: \\ud800"),  # an escaped backslash, then text
        ('"\\\\\\ud800"', "\\\ufffd"),  # a backslash, then a lone surrogate
        ('"plain \\u00e9 and \\n"', "plain é and \n"),
    ],
)
def test_only_lone_surrogates_are_replaced(sent: str, read: str) -> None:
    assert json.loads(without_lone_surrogates(sent.encode())) == read
