"""Running one planned search per domain layer and reading its hits as context items.

The enricher depends on the layers' documented search methods only
(``kb.search``, ``events.search``, ``code.search``) and reads their hits through
the small adapters below, which look for a field under the names the layers are
likely to use (attribute or mapping key, then the hit's ``metadata``). A layer
that renames a field then loses an origin label, not the whole turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .plan import EnrichmentPlan

#: Markdown heading lines at the start of a KB chunk: the origin already names them.
_LEADING_HEADINGS = re.compile(r"\A(?:[ \t]*#{1,6}[ \t][^\n]*\n+)+")

SECTION_TITLES = {"kb": "Knowledge base", "events": "Events", "code": "Code"}


@dataclass(frozen=True)
class ContextItem:
    """One piece of memory to show, with where it came from.

    ``score`` is the layer's normalised score (None when the layer listed items
    without a query, e.g. events in a time window). ``key`` identifies the
    underlying record for de-duplication.
    """

    source: str
    origin: str
    text: str
    score: float | None
    key: str
    language: str | None = None


def field_of(hit: Any, *names: str) -> Any:
    """The first of ``names`` that ``hit`` has (attribute, key, or metadata entry)."""
    for container in _containers(hit):
        for name in names:
            if isinstance(container, Mapping):
                value = container.get(name)
            else:
                value = getattr(container, name, None)
            if value is not None and not callable(value):
                return value
    return None


def _containers(hit: Any) -> list[Any]:
    found = [hit]
    for nested in ("chunk", "result", "hit", "document", "event", "symbol"):
        inner = hit.get(nested) if isinstance(hit, Mapping) else getattr(hit, nested, None)
        if inner is not None and not isinstance(inner, str | int | float):
            found.append(inner)
    for container in list(found):
        meta = (
            container.get("metadata")
            if isinstance(container, Mapping)
            else getattr(container, "metadata", None)
        )
        if isinstance(meta, Mapping):
            found.append(meta)
    return found


def score_of(hit: Any) -> float | None:
    value = field_of(hit, "score", "relevance", "similarity")
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return score if score == score else None  # NaN counts as unscored


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value).encode("utf-8", "replace").decode("utf-8")


def _heading(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Sequence):
        return " › ".join(_text(v).strip() for v in value if _text(v).strip())
    return _text(value)


def format_time(value: Any) -> str:
    """An event time as ``YYYY-MM-DD HH:MM UTC`` (accepts datetime, epoch or ISO text)."""
    moment = _moment(value)
    if moment is None:  # unreadable text is shown as it is
        return value.strip() if isinstance(value, str) else ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _moment(value: Any) -> datetime | None:
    """An aware datetime from a datetime, epoch seconds or ISO text; None if unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def kb_item(hit: Any) -> ContextItem:
    document = _text(field_of(hit, "title", "source", "document_id", "doc_id", "path", "id"))
    source = _text(field_of(hit, "source", "path", "document_id", "doc_id"))
    heading = _heading(field_of(hit, "heading_path", "headings", "heading", "section"))
    for separator in (" > ", " › "):
        # A document's title is often its first heading too; say it once.
        if heading.startswith(document + separator):
            heading = heading[len(document) + len(separator) :]
        heading = heading.replace(separator, " › ")
    if heading == document:
        heading = ""
    origin = " › ".join(p for p in (document, heading) if p) or "document"
    if source and source != document:
        origin = f"{origin} ({source})"
    text = _LEADING_HEADINGS.sub("", _text(field_of(hit, "text", "content", "body")))
    key = _text(field_of(hit, "chunk_id", "id")) or f"{source}#{text[:80]}"
    return ContextItem("kb", origin, text, score_of(hit), f"kb:{source}:{key}")


def event_item(hit: Any) -> ContextItem:
    subject = _text(field_of(hit, "subject", "topic", "source")) or "event"
    when = format_time(field_of(hit, "occurred_at", "ts", "timestamp", "time", "created_at"))
    origin = f"{subject} · {when}" if when else subject
    text = _text(field_of(hit, "content", "text", "body"))
    key = _text(field_of(hit, "event_id", "id")) or f"{subject}#{when}#{text[:80]}"
    return ContextItem("events", origin, text, score_of(hit), f"events:{key}")


def code_item(hit: Any) -> ContextItem:
    path = _text(field_of(hit, "path", "file", "file_path", "relative_path", "source"))
    start = field_of(hit, "start_line", "line_start", "line")
    end = field_of(hit, "end_line", "line_end")
    lines = ""
    if isinstance(start, int):
        lines = f":{start}" if not isinstance(end, int) or end == start else f":{start}-{end}"
    name = _text(field_of(hit, "qualified_name", "qualname", "name", "symbol"))
    kind = _text(field_of(hit, "kind", "symbol_kind"))
    project = _text(field_of(hit, "project", "project_name"))
    origin = f"{path}{lines}" if path else "code"
    if name and name != path:
        origin += f" {name}" + (f" ({kind})" if kind else "")
    if project:
        origin = f"[{project}] {origin}"
    text = _text(field_of(hit, "code", "text", "content"))
    language = field_of(hit, "language", "lang")
    key = f"{project}:{path}{lines}:{name}" if path or name else _text(field_of(hit, "id"))
    return ContextItem(
        "code",
        origin,
        text,
        score_of(hit),
        f"code:{key}",
        language=_language(language),
    )


def _language(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    cleaned = re.sub(r"[^a-z0-9+#_-]", "", value.lower())
    return cleaned or None


SourceSearch = Callable[[Any, EnrichmentPlan], list[ContextItem]]


def search_kb(service: Any, plan: EnrichmentPlan) -> list[ContextItem]:
    hits = service.kb.search(plan.kb_query, limit=plan.kb_limit)
    return [kb_item(h) for h in hits]


#: With "last"/"latest" in the prompt, an event this much older than the newest hit
#: needs twice the score to rank level with it.
RECENT_HALF_LIFE = timedelta(days=7)


def search_events(service: Any, plan: EnrichmentPlan) -> list[ContextItem]:
    """Events for the plan; a time phrase favours its window instead of hiding the rest.

    "Why did the deploy fail last week?" should still find a failure logged
    eight days ago, so with a query the window's events come first and the
    others follow (each keeps its own score for the gate). Without a query the
    window is all there is to go on, and selects.
    """
    query = plan.events_query or None
    limit = plan.events_limit
    if query is None or not plan.has_time_window:
        hits = service.events.search(
            query, since=plan.events_since, until=plan.events_until, limit=limit
        )
    else:
        inside = service.events.search(
            query, since=plan.events_since, until=plan.events_until, limit=limit
        )
        seen = {field_of(h, "id") for h in inside}
        anywhere = service.events.search(query, limit=limit)
        hits = inside + [h for h in anywhere if field_of(h, "id") not in seen]
    if plan.events_recent and hits:
        hits = _newest_favoured(hits)
    return [event_item(h) for h in hits]


def _newest_favoured(hits: list[Any]) -> list[Any]:
    times = [_moment(field_of(h, "occurred_at", "ts", "timestamp")) for h in hits]
    newest = max((t for t in times if t is not None), default=None)
    if newest is None:
        return hits

    def weight(pair: tuple[Any, datetime | None]) -> float:
        hit, moment = pair
        age = (newest - moment) if moment is not None else RECENT_HALF_LIFE * 4
        return float((score_of(hit) or 0.0) * 0.5 ** (age / RECENT_HALF_LIFE))

    return [h for h, _ in sorted(zip(hits, times, strict=True), key=weight, reverse=True)]


def search_code(service: Any, plan: EnrichmentPlan) -> list[ContextItem]:
    hits = service.code.search(plan.code_query, limit=plan.code_limit)
    return [code_item(h) for h in hits]


SEARCHES: dict[str, SourceSearch] = {
    "kb": search_kb,
    "events": search_events,
    "code": search_code,
}


def wanted(source: str, plan: EnrichmentPlan) -> bool:
    """Whether the plan asks anything of ``source`` (events may ask by time alone)."""
    if plan.limit(source) <= 0:
        return False
    if source == "events":
        return bool(plan.events_query) or plan.has_time_window
    return bool(plan.query(source))
