"""The HTTP API and the CLI show the same fields of a record, each converted its own way."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from remembrances.cli import render
from remembrances.formatting import HIDDEN_FIELDS
from remembrances.http import encode


@dataclass
class Hit:
    text: str = "the VPN needs MFA"
    ts: float = 1_700_000_000.0
    score: float = math.nan
    embedding: bytes = b"\x00" * 16
    content_hash: str = "abc"
    metadata: dict[str, Any] = field(default_factory=lambda: {"team": "ops"})


class Report:
    def __init__(self) -> None:
        self.files = 2
        self.vectors = [[0.1, 0.2]]
        self._private = "not shown"


@pytest.mark.parametrize("obj", [Hit(), vars(Hit()), Report()], ids=["dataclass", "dict", "object"])
def test_both_hide_the_same_internals(obj: Any) -> None:
    served, printed = encode.record(obj), render.record(obj)
    assert set(served) == set(printed)
    assert not set(served) & (HIDDEN_FIELDS | {"_private"})
    json.dumps(served, allow_nan=False)  # the API's answer is plain JSON


def test_each_converts_values_its_own_way() -> None:
    served, printed = encode.record(Hit()), render.record(Hit())
    assert served["score"] is None and math.isnan(printed["score"])  # JSON has no NaN
    assert printed["ts"] == "2023-11-14T22:13:20+00:00"  # the CLI shows times as ISO
    assert render.record(served)["ts"] == printed["ts"]  # ... also from a server's answer
    assert served["metadata"] == printed["metadata"] == {"team": "ops"}
    assert encode.record(3) == render.record(3) == {"value": 3}
