"""Rendering search results for people, prompts and programs: text, XML and JSON.

The helpers take any result the library returns: a store ``SearchResult``, a KB
hit, an event, a code hit, or anything with ``to_dict()`` (or a dataclass, or a
mapping). They look for the body under ``text``/``content``/``code`` and build the
label from whichever of title, heading path, subject, time, symbol name, path
and lines are present, so a new kind of result needs no new formatter.

The XML block is meant for prompts: stored text is untrusted, so every attribute
and every body is escaped (a document holding ``</result>`` cannot close the
element) and characters XML cannot carry are replaced by U+FFFD.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from .errors import InvalidInputError

Style = Literal["text", "xml", "json"]

BODY_FIELDS = ("text", "content", "code", "body", "snippet")
#: Left out of XML attributes by default: bulky or only useful for debugging.
HIDDEN_ATTRIBUTES = frozenset(
    {"metadata", "vector_score", "text_score", "vector_rank", "text_rank", "embed_text"}
)
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME_START = re.compile(r"[^A-Za-z_]")
_NAME_REST = re.compile(r"[^A-Za-z0-9_.-]")


def as_record(result: Any) -> dict[str, Any]:
    """A plain dict for any result: ``to_dict()``, a dataclass or a mapping."""
    if isinstance(result, Mapping):
        return dict(result)
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return dict(data)
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return dataclasses.asdict(result)
    raise InvalidInputError(
        f"cannot format a {type(result).__name__}: give a mapping, a dataclass or an "
        "object with to_dict()"
    )


def body_of(record: Mapping[str, Any]) -> str:
    for name in BODY_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            return value
    return ""


def label_of(record: Mapping[str, Any]) -> str:
    """Where a result comes from, in a few words: "Guide › Install (guide.md)"."""
    parts: list[str] = []
    name = _first(record, "title", "subject", "qualified_name", "name")
    heading = record.get("heading_path")
    heading_parts = heading.split(" > ") if isinstance(heading, str) and heading else []
    if name and heading_parts and heading_parts[0] == name:
        heading_parts = heading_parts[1:]  # the title is the top heading: say it once
    if name:
        parts.append(name)
    parts.extend(heading_parts)
    head = " › ".join(parts)
    location = _first(record, "path", "source", "file")
    start, end = record.get("start_line"), record.get("end_line")
    if location and isinstance(start, int):
        location += f":{start}" if not isinstance(end, int) or end == start else f":{start}-{end}"
    when = _value(record.get("occurred_at"))
    pieces = [p for p in (head, location if location != name else "", when or "") if p]
    return " · ".join(pieces)


def _first(record: Mapping[str, Any], *names: str) -> str:
    for name in names:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _value(value: Any) -> str | None:
    """A scalar as attribute text; None when it has no place in an attribute."""
    if value is None or isinstance(value, Mapping | list | tuple | set):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if math.isfinite(value) else None
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _clip(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[: max(max_chars - 1, 0)].rstrip() + "…"


def _check_max(max_chars: Any) -> None:
    if max_chars is not None and (
        isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1
    ):
        raise InvalidInputError("max_chars must be a positive integer or None")


def format_text(results: Iterable[Any], *, max_chars: int | None = None) -> str:
    """Numbered results for a terminal or a log: a label line, then the text."""
    _check_max(max_chars)
    blocks = []
    for n, result in enumerate(results, start=1):
        record = as_record(result)
        header = [f"[{n}]"]
        kind = record.get("kind")
        if isinstance(kind, str) and kind:
            header.append(kind)
        label = label_of(record)
        if label:
            header.append(label)
        score = _value(record.get("score"))
        if score is not None:
            header.append(f"(score {score})")
        blocks.append(" ".join(header) + "\n" + _clip(body_of(record), max_chars))
    return _SURROGATE.sub("\ufffd", "\n\n".join(blocks))


def xml_text(text: str) -> str:
    """Text safe inside an XML element."""
    text = _XML_ILLEGAL.sub("\ufffd", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attribute(value: str) -> str:
    """A double-quoted attribute value; newlines and tabs survive as character refs."""
    escaped = xml_text(value).replace('"', "&quot;")
    return '"' + escaped.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;") + '"'


def xml_name(name: str) -> str:
    """A valid XML name for a field name (invalid characters become ``_``)."""
    cleaned = _NAME_REST.sub("_", name) or "_"
    return ("_" + cleaned) if _NAME_START.match(cleaned[0]) else cleaned


def format_xml(
    results: Iterable[Any],
    *,
    root: str = "context",
    item: str = "result",
    fields: Iterable[str] | None = None,
    max_chars: int | None = None,
) -> str:
    """An XML block for a prompt: one element per result, its fields as attributes.

    ``fields`` chooses the attributes (default: every scalar field except the
    body and the debugging scores). Returns "" for no results, so an empty search
    adds nothing to a prompt.
    """
    _check_max(max_chars)
    chosen = None if fields is None else list(fields)
    lines = []
    for result in results:
        record = as_record(result)
        body = body_of(record)
        names = chosen if chosen is not None else list(record)
        attributes = []
        for name in names:
            if name in BODY_FIELDS or (chosen is None and name in HIDDEN_ATTRIBUTES):
                continue
            value = _value(record.get(name))
            if value is not None:
                attributes.append(f" {xml_name(name)}={xml_attribute(value)}")
        tag = xml_name(item)
        lines.append(f"<{tag}{''.join(attributes)}>{xml_text(_clip(body, max_chars))}</{tag}>")
    if not lines:
        return ""
    tag = xml_name(root)
    return f"<{tag}>\n" + "\n".join(lines) + f"\n</{tag}>"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if value is None or isinstance(value, bool | int):
        return value
    return str(value)


def format_json(results: Iterable[Any], *, indent: int | None = None) -> str:
    """A JSON array of the results' dicts (NaN and infinities become null)."""
    return json.dumps([_jsonable(as_record(r)) for r in results], ensure_ascii=False, indent=indent)


def format_results(results: Iterable[Any], style: Style = "text", **options: Any) -> str:
    """Dispatch on ``style``: "text", "xml" or "json"."""
    if style == "text":
        return format_text(results, **options)
    if style == "xml":
        return format_xml(results, **options)
    if style == "json":
        return format_json(results, **options)
    raise InvalidInputError(f"style must be 'text', 'xml' or 'json', not {style!r}")


#: Fields a client never needs: vectors and hashes (the CLI and the HTTP API hide them).
HIDDEN_FIELDS = frozenset({"embedding", "vector", "vectors", "content_hash", "embed_text"})


def record_fields(obj: Any) -> dict[Any, Any]:
    """The public fields of any record the library returns (a bare value as ``value``).

    Unlike :func:`as_record` it accepts anything, so the CLI and the HTTP API can
    print whatever a call returned; each then converts the values its own way.
    """
    if isinstance(obj, Mapping):
        data = dict(obj)
    elif hasattr(obj, "to_dict"):
        data = dict(obj.to_dict())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        data = dataclasses.asdict(obj)
    elif hasattr(obj, "__dict__"):
        data = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    else:
        return {"value": obj}
    return {k: v for k, v in data.items() if k not in HIDDEN_FIELDS}


#: Record fields that hold a time: every interface shows them as ISO 8601 UTC.
TIME_FIELDS = frozenset(
    {"ts", "at", "created_at", "updated_at", "indexed_at", "recorded_at", "occurred_at"}
)


def iso_time(value: Any) -> Any:
    """Epoch seconds or a datetime as ISO 8601 UTC; anything else unchanged."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat()
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(float(value), UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return value
    return value
