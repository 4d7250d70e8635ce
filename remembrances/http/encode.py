"""Library results as JSON values: the same shape the CLI prints under ``--json``.

The server answers with exactly what ``remembrances ... --json`` would print for the
same call, so a CLI pointed at a server (``--url``) prints the same output.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..formatting import record_fields


def record(obj: Any) -> Any:
    """One record (dataclass, report, mapping) as a JSON object without its internals."""
    return {str(k): jsonable(v) for k, v in record_fields(obj).items()}


def records(items: Any) -> list[Any]:
    return [record(i) for i in items]


def jsonable(value: Any) -> Any:
    """A value ``json.dumps`` accepts, converted the way the CLI's JSON output does."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None  # JSON has no NaN
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return str(value)
