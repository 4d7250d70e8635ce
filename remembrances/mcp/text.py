"""Compact, id-free renderings of library results for a model to read.

Labels and times come from :mod:`remembrances.formatting` (the one renderer), so
a model reads the same ``ops · 2026-11-01 09:00 UTC`` as the CLI and the enricher.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ..formatting import (
    HIDDEN_FROM_MODELS,
    STALE_LINE,
    TIME_FIELDS,
    chunk_code,
    field,
    iso_time,
    label_of,
)

HIDDEN = HIDDEN_FROM_MODELS
TEXT_CHARS = 1200


def plain(obj: Any) -> Any:
    """A JSON-safe value for any record the library returns, without internals."""
    if isinstance(obj, Mapping):
        return {
            str(k): plain(iso_time(v) if k in TIME_FIELDS else v)
            for k, v in obj.items()
            if k not in HIDDEN
        }
    if hasattr(obj, "to_dict"):
        return plain(obj.to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return plain({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    if isinstance(obj, list | tuple | set | frozenset):
        return [plain(v) for v in obj]
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, float):
        return round(obj, 4)
    if obj is None or isinstance(obj, str | int | bool):
        return obj
    if hasattr(obj, "__dict__"):
        return plain({k: v for k, v in vars(obj).items() if not k.startswith("_")})
    return str(obj)


def origin(data: Mapping[str, Any]) -> str:
    """Where a hit came from: its label (see :func:`remembrances.formatting.label_of`)."""
    return label_of(data) or "?"


def hits(items: Iterable[Any], *, empty: str = "No results.") -> tuple[str, list[Any]]:
    """Numbered hits with score, origin and text; and the structured list."""
    data = [_code_hit(_event_hit(plain(i))) for i in items]
    if not data:
        return empty, []
    lines = []
    for n, hit in enumerate(data, start=1):
        score = hit.get("score") if isinstance(hit, Mapping) else None
        kind = field(hit, "kind") if isinstance(hit, Mapping) else None
        head = f"{n}." + (f" [{score:.2f}]" if isinstance(score, int | float) else "")
        head += f" {kind}:" if kind else ""
        head += f" {origin(hit)}" if isinstance(hit, Mapping) else f" {hit}"
        body = (
            field(hit, "code", "text", "content", "line_text", "signature")
            if isinstance(hit, Mapping)
            else None
        )
        lines.append(head)
        for turn in hit.get("before") or [] if isinstance(hit, Mapping) else []:
            lines.append(f"   ↑ {turn.get('subject')}: {_short(turn.get('content'))}")
        stale = STALE_LINE if isinstance(hit, Mapping) and hit.get("stale") else ""
        if body or stale:
            text = (stale + str(body or "")).rstrip()
            text = text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"
            lines.append("   " + text.replace("\n", "\n   "))
        for turn in hit.get("after") or [] if isinstance(hit, Mapping) else []:
            lines.append(f"   ↓ {turn.get('subject')}: {_short(turn.get('content'))}")
    return "\n".join(lines), data


def _event_hit(hit: Any) -> Any:
    """A store hit on an event names its subject and time, not the event's internal id."""
    if not isinstance(hit, dict) or hit.get("kind") != "event" or "content" in hit:
        return hit
    hit = dict(hit)
    hit.pop("source", None)
    meta = hit.get("metadata")
    if isinstance(meta, dict) and "subject" in meta:
        hit["subject"] = meta["subject"]
        # the event layer's scope keys (turns: session, user, role) are fields, not metadata
        scope = ("subject", "session", "user", "role", "position")
        hit.update({k: meta[k] for k in scope[1:] if meta.get(k) is not None})
        hit["metadata"] = {k: v for k, v in meta.items() if k not in scope}
    if hit.get("ts") is not None:
        hit["at"] = iso_time(hit.pop("ts"))
    return hit


def _code_hit(hit: Any) -> Any:
    """A store hit on a code chunk holds its code, not the header the index embeds with
    it (path, kind and name again, and the words of its names), in both forms."""
    text = hit.get("text") if isinstance(hit, dict) else None
    if not isinstance(text, str) or chunk_code(hit, text) == text:
        return hit
    meta = hit.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != "code_offset"}
    return {**hit, "text": chunk_code(hit, text), "metadata": meta}


def _short(text: Any) -> str:
    """A neighbouring conversation turn on one line."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1] + "…"


def outline(nodes: Iterable[Any]) -> tuple[str, list[Any]]:
    """A file's symbol tree, one indented line per symbol."""
    data = [plain(n) for n in nodes]
    lines: list[str] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            lines.append(
                f"{'  ' * depth}{item.get('kind', '')} {item.get('qualified_name') or item.get('name')}"
                f" (lines {item.get('start_line')}-{item.get('end_line')})"
            )
            walk(item.get("children") or [], depth + 1)

    walk(data, 0)
    return "\n".join(lines) or "No symbols.", data


def summary(obj: Any) -> tuple[str, Any]:
    """A report or a record as ``key: value`` lines, and its structured form."""
    data = plain(obj)
    if isinstance(data, Mapping):
        lines = []
        for key, value in data.items():
            shown = (
                value
                if isinstance(value, str | int | float | bool) or value is None
                else (json.dumps(value, ensure_ascii=False))
            )
            if isinstance(shown, str) and len(shown) > TEXT_CHARS:
                shown = shown[: TEXT_CHARS - 1] + "…"
            lines.append(f"{key}: {shown}")
        return "\n".join(lines) or "(empty)", data
    return str(data), data
