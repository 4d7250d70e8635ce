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

#: Fields a client never needs: vectors and hashes (the CLI hides the same ones).
HIDDEN = frozenset({"embedding", "vector", "vectors", "content_hash", "embed_text"})


def record(obj: Any) -> Any:
    """One record (dataclass, report, mapping) as a JSON object without its internals."""
    if isinstance(obj, Mapping):
        data = dict(obj)
    elif hasattr(obj, "to_dict"):
        data = dict(obj.to_dict())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        data = dataclasses.asdict(obj)
    elif hasattr(obj, "__dict__"):
        data = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    else:
        return {"value": jsonable(obj)}
    return {str(k): jsonable(v) for k, v in data.items() if k not in HIDDEN}


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
