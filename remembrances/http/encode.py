"""Library results as JSON values: the same shape the CLI prints under ``--json``.

The server answers with exactly what ``remembrances ... --json`` would print for the
same call, so a CLI pointed at a server (``--url``) prints the same output.
"""

from __future__ import annotations

from typing import Any

from ..formatting import jsonable, record_fields

__all__ = ["jsonable", "record", "records"]


def record(obj: Any) -> Any:
    """One record (dataclass, report, mapping) as a JSON object without its internals."""
    return {str(k): jsonable(v) for k, v in record_fields(obj).items()}


def records(items: Any) -> list[Any]:
    return [record(i) for i in items]
