"""The one place that turns hits and times into text, XML and JSON.

Every interface renders through here: the CLI (its tables and ``--json``), the
MCP server (text for models, structured results), the HTTP API (JSON) and the
context enricher (its labels). Each hit carries a ``label``, the few words that
say where it comes from, built by :func:`document_label`, :func:`event_label` or
:func:`code_label` (``Guide › Install (guide.md)``, ``ops · 2026-11-01 09:00
UTC``, ``[app] src/a.py:3-9 Cart.total (method)``); :func:`label_of` builds the
same label from a hit's dict, so a client holding JSON (the CLI talking to a
server) says the same. Times are aware UTC datetimes in Python, ISO 8601 in
JSON (:func:`iso_time`) and ``2026-11-01 09:00 UTC`` in text (:func:`human_time`).

The helpers take any result the library returns: a store ``SearchResult``, a KB
hit, an event, a code hit, or anything with ``to_dict()`` (or a dataclass, or a
mapping). They look for the body under ``text``/``content``/``code``.

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
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal

from .errors import InvalidInputError

Style = Literal["text", "xml", "json"]

BODY_FIELDS = ("text", "content", "code", "body", "snippet")
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: reStructuredText's inline markup in a title: ``literal``, :role:`text` (or
#: :role:`text <target>`), `text <url>`_ and `text`_; a label shows the text.
_RST_INLINE = re.compile(
    r"``([^`]+)``"
    r"|(?::[\w.+-]+:)`([^`<]+?)(?:\s*<[^`>]*>)?`"
    r"|`([^`<]+?)(?:\s*<[^`>]*>)?`__?"
)
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


def field(record: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` with a value, in ``record`` and then in its metadata."""
    found = record.get("metadata")
    meta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    for name in names:
        for source in (record, meta):
            value = source.get(name)
            if value not in (None, "", [], {}):
                return value
    return None


#: The kinds of hit; a chunk kind of the caller's own is labelled like a document.
HIT_KINDS = ("kb", "event", "code")


def kind_of(record: Mapping[str, Any]) -> str:
    """Which layer a hit's dict comes from: "kb", "event", "code", or its own kind.

    A code hit's ``kind`` is its symbol's kind ("function"), so code is recognised
    by its language or line numbers; "events" (the layer's name) means "event".
    """
    kind = record.get("kind")
    if kind == "events":
        return "event"
    if kind in HIT_KINDS:
        return str(kind)
    if "language" in record or "line_text" in record or "start_line" in record:
        return "code"
    if "subject" in record and ("occurred_at" in record or "content" in record):
        return "event"
    return str(kind) if isinstance(kind, str) else ""


def document_label(title: Any, heading_path: Any, source: Any) -> str:
    """``Guide › Setup › Linux (guide.md)``: the document, the headings, its source."""
    title_text, source_text = _plain(_clean(title)), _clean(source)
    headings = [_plain(h) for h in _headings(heading_path)]
    if title_text and headings and headings[0] == title_text:
        headings = headings[1:]  # the title is the top heading: say it once
    label = " › ".join([title_text, *headings] if title_text else headings)
    if not label:
        return source_text or "document"
    return f"{label} ({source_text})" if source_text and source_text != label else label


def event_label(
    subject: Any, when: Any, user: Any = None, zone: tzinfo | None = None, role: Any = None
) -> str:
    """``ops · 2026-11-01 09:00 UTC``: what the event is about and when it happened (in
    ``zone``, when given); ``user (alice) · ...`` for a turn of alice's conversations (a
    memory shared by several users says whose turn a "user" turn is), ``assistant
    (alice's chat) · ...`` for another role's turn there ("assistant (alice)" read as if
    the assistant were alice)."""
    subject_text = _clean(subject) or "(no subject)"
    whose = _clean(user)
    if whose:
        said_by_other = _clean(role) not in ("", "user")
        subject_text += f" ({whose}'s chat)" if said_by_other else f" ({whose})"
    moment = human_time(when, zone=zone)
    return f"{subject_text} · {moment}" if moment else subject_text


def code_label(
    path: Any,
    start_line: Any = None,
    end_line: Any = None,
    name: Any = None,
    kind: Any = None,
    project: Any = None,
) -> str:
    """``[app] src/cart.py:3-9 Cart.total (method)``: where the code is and what it is."""
    where = _clean(path)
    if isinstance(start_line, int) and not isinstance(start_line, bool):
        same = not isinstance(end_line, int) or end_line == start_line
        where += f":{start_line}" if same else f":{start_line}-{end_line}"
    label = where or "code"
    name_text = _clean(name)
    if name_text and name_text != where:
        label += f" {name_text}" + (f" ({_clean(kind)})" if _clean(kind) else "")
    if _clean(project):
        label = f"[{_clean(project)}] {label}"
    return label


def chunk_code(record: Mapping[str, Any], text: str) -> str:
    """A code chunk's ``text`` without the header the index embeds with it (path, kind,
    name, the words of its names), which its ``code_offset`` ends; any other record's
    text as it is, whatever its own metadata holds (a KB document's ``code_offset`` key
    is the user's)."""
    offset = field(record, "code_offset")
    if record.get("kind") != "code" or "code" in record or not isinstance(offset, int):
        return text
    return text[offset:] if 0 < offset < len(text) else text


#: Before a code reference's line when its file changed since it was indexed: the line
#: now at that number may be another one (indexing again brings references up to date).
STALE_LINE = "(changed since indexed) "


def label_of(record: Mapping[str, Any]) -> str:
    """A hit's label from its dict: its own ``label`` if it has one, else built here."""
    given = record.get("label")
    if isinstance(given, str) and given:
        return given
    kind = kind_of(record)
    if kind == "event":
        return event_label(
            field(record, "subject"),
            field(record, "occurred_at", "at", "ts"),
            field(record, "user"),
            role=field(record, "role"),
        )
    if kind == "code":
        chunk = record.get("kind") == "code"  # a store hit: the symbol is in its metadata
        meta = record.get("metadata")
        return code_label(
            field(record, "path", "file", "source"),
            field(record, "start_line", "line"),
            field(record, "end_line"),
            field(record, "qualified_name", "symbol", "name"),
            (meta.get("kind") if isinstance(meta, Mapping) else None)
            if chunk
            else record.get("kind"),
            field(record, "project") or (record.get("collection") if chunk else None),
        )
    if not any(field(record, n) for n in ("title", "heading_path", "source", "path", "file")):
        return ""
    return document_label(
        field(record, "title"),
        field(record, "heading_path"),
        field(record, "source", "path", "file"),
    )


def _clean(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return _SURROGATE.sub("\ufffd", str(value)).strip()


def _plain(title: str) -> str:
    """A title without reStructuredText's inline markup (``cacheutils`` - Caches is
    "cacheutils - Caches"); Markdown's is left as written."""
    return _RST_INLINE.sub(lambda m: next(g for g in m.groups() if g is not None), title)


def _headings(value: Any) -> list[str]:
    """A heading path ("A > B", "A › B" or a list) as its headings."""
    if isinstance(value, str):
        parts = value.replace(" › ", " > ").split(" > ")
    elif isinstance(value, list | tuple):
        parts = [_clean(v) for v in value]
    else:
        return []
    return [p.strip() for p in parts if p.strip()]


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


def format_json(results: Iterable[Any], *, indent: int | None = None) -> str:
    """A JSON array of the results' dicts (NaN and infinities become null)."""
    return json.dumps([jsonable(as_record(r)) for r in results], ensure_ascii=False, indent=indent)


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
#: Search debugging: the legs' scores and ranks (left out of XML attributes by default).
DEBUG_FIELDS = frozenset({"vector_score", "text_score", "vector_rank", "text_rank"})
#: Never shown to a model (MCP): internal ids and offsets, besides the above.
HIDDEN_FROM_MODELS = (
    HIDDEN_FIELDS
    | DEBUG_FIELDS
    | {"id", "chunk_id", "symbol_id", "parent_id", "position", "last_position", "start_byte",
       "end_byte", "char_start", "char_end"}
)  # fmt: skip
#: Left out of XML attributes by default: bulky or only useful for debugging.
HIDDEN_ATTRIBUTES = DEBUG_FIELDS | {"metadata", "embed_text"}


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
    {"ts", "at", "created_at", "updated_at", "indexed_at", "recorded_at", "occurred_at",
     "exported_at"}
)  # fmt: skip


def moment(value: Any) -> datetime | None:
    """An aware UTC datetime from a datetime (naive means UTC), epoch seconds or ISO
    text; None when ``value`` is none of those."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    return None


def iso_time(value: Any) -> Any:
    """A time (epoch seconds or a datetime) as ISO 8601 UTC; anything else unchanged."""
    if isinstance(value, str):
        return value
    found = moment(value)
    return value if found is None else found.isoformat()


def human_time(value: Any, *, seconds: bool = False, zone: tzinfo | None = None) -> str:
    """A time as people read it: ``2026-11-01 09:00 UTC``, or in ``zone`` with its name
    (``2026-11-01 18:00 JST``); "" for none, unreadable text shown as it is."""
    found = moment(value)
    if found is None:
        return value.strip() if isinstance(value, str) else ""
    shown = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    if zone is None:
        return found.strftime(f"{shown} UTC")
    local = found.astimezone(zone)
    return f"{local.strftime(shown)} {local.tzname() or local.strftime('%z')}"


def jsonable(value: Any) -> Any:
    """A value ``json.dumps`` accepts: NaN and infinities become null, datetimes ISO
    text, records their dicts (the HTTP API answers with these)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)  # lone surrogates cannot be encoded
    if value is None or isinstance(value, bool | int):
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
