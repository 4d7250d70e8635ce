"""What a planner decides: one query per source, how many results, and when.

A plan is plain data so that any planner (rules, a chat model, a user's own)
can produce it and the enricher can run it without knowing where it came from.
The JSON form (:func:`plan_from_json`) is what a chat model is asked to write;
it is checked field by field because model output is untrusted input.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from typing import Any, Protocol, runtime_checkable

#: Per-source result counts are clamped to this range.
MAX_SOURCE_LIMIT = 20
#: Planned queries longer than this are cut; a query is a handful of words, not a prompt.
MAX_QUERY_CHARS = 1000
#: A plan has at most this many parts (``EnrichmentPlan.parts``): each is one more
#: search of every source.
MAX_PARTS = 3

SOURCES = ("kb", "events", "code")


@dataclass(frozen=True)
class PartQueries:
    """Each source's query for one part of a long prompt (its question, a paragraph)."""

    kb_query: str = ""
    code_query: str = ""
    events_query: str = ""


class PlanError(ValueError):
    """A plan that does not match the schema (a chat model wrote something else)."""


@dataclass(frozen=True)
class EnrichmentPlan:
    """Per-source queries; an empty query or a limit of 0 skips that source.

    ``kb_query`` is semantic (a phrase), ``code_query`` what the code does with
    the identifiers named, ``events_query`` the topic. ``events_since``/``events_until``
    are aware UTC datetimes (or None): with an events query they favour events in
    the window, without one they select it. ``events_recent`` favours newer
    events (the prompt said "last", "latest", "recent"). ``events_recap`` asks for the
    latest conversation as it went, without a query ("where did we leave off?"); with
    a window and a query, for the window's events likeliest to match it, listed
    ("what did we decide last week?").
    ``parts`` hold further queries for parts of a long prompt (its question after a
    paragraph of background): each source is searched with its query and with
    theirs, and a hit found more than once counts at its best score.
    ``planner`` names who produced the plan,
    e.g. ``"heuristic"`` or ``"llm:gpt-4o-mini"``, or ``"heuristic (fallback)"``.
    """

    kb_query: str = ""
    code_query: str = ""
    events_query: str = ""
    events_since: datetime | None = None
    events_until: datetime | None = None
    kb_limit: int = 4
    code_limit: int = 4
    events_limit: int = 4
    events_recent: bool = False
    events_recap: bool = False
    parts: tuple[PartQueries, ...] = ()
    planner: str = "heuristic"
    notes: dict[str, Any] = field(default_factory=dict, compare=False)
    #: The zone a call gave (``enrich_context(tz=...)``): its days are the window's, and
    #: the block shows event times in it.
    zone: tzinfo | None = field(default=None, compare=False)

    def query(self, source: str) -> str:
        return str(getattr(self, f"{source}_query"))

    def queries(self, source: str) -> list[str]:
        """The source's query, then its parts' (each once); [] when the query is empty."""
        main = self.query(source)
        if not main:
            return []
        found = [main]
        for part in self.parts:
            query = str(getattr(part, f"{source}_query"))
            if query and query not in found:
                found.append(query)
        return found

    def limit(self, source: str) -> int:
        return int(getattr(self, f"{source}_limit"))

    @property
    def has_time_window(self) -> bool:
        return self.events_since is not None or self.events_until is not None

    def with_planner(self, planner: str) -> EnrichmentPlan:
        return replace(self, planner=planner)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kb_query": self.kb_query,
            "code_query": self.code_query,
            "events_query": self.events_query,
            "events_since": None if self.events_since is None else self.events_since.isoformat(),
            "events_until": None if self.events_until is None else self.events_until.isoformat(),
            "kb_limit": self.kb_limit,
            "code_limit": self.code_limit,
            "events_limit": self.events_limit,
            "events_recent": self.events_recent,
            "events_recap": self.events_recap,
            **({"parts": [asdict(part) for part in self.parts]} if self.parts else {}),
            "planner": self.planner,
            **({"zone": str(self.zone)} if self.zone is not None else {}),
        }


@runtime_checkable
class QueryPlanner(Protocol):
    """Turns a raw prompt into an :class:`EnrichmentPlan`.

    ``tz`` is the user's time zone, whose days "yesterday" means; the enricher passes
    it only when its caller gives one, so a planner without the keyword still works
    (and refuses a call that gives a zone).
    """

    def plan(self, prompt: str, *, tz: tzinfo | None = None) -> EnrichmentPlan: ...


def takes_time_zone(planner: object) -> bool:
    """Whether ``planner.plan`` accepts ``tz`` (by name or ``**options``), and so does
    the planner it falls back to (its ``heuristic``, as :class:`LLMPlanner` has)."""
    plan = getattr(planner, "plan", None)
    if plan is None:
        return False
    try:
        parameters = inspect.signature(plan).parameters.values()
    except (TypeError, ValueError):  # a callable without a readable signature
        return False
    if not any(p.name == "tz" or p.kind is p.VAR_KEYWORD for p in parameters):
        return False
    fallback = getattr(planner, "heuristic", None)
    return fallback is None or takes_time_zone(fallback)


#: The schema a chat model is shown; ``plan_from_json`` enforces the same rules.
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kb_query": {"type": "string", "description": "semantic query for documents and notes"},
        "code_query": {
            "type": "string",
            "description": "what the code does, with the identifiers and paths named",
        },
        "events_query": {"type": "string", "description": "topic of past events"},
        "events_since": {"type": ["string", "null"], "description": "ISO 8601 UTC or null"},
        "events_until": {"type": ["string", "null"], "description": "ISO 8601 UTC or null"},
        "events_recap": {
            "type": "boolean",
            "description": "the message asks what was said in the latest conversation",
        },
        "kb_limit": {"type": "integer", "minimum": 0, "maximum": MAX_SOURCE_LIMIT},
        "code_limit": {"type": "integer", "minimum": 0, "maximum": MAX_SOURCE_LIMIT},
        "events_limit": {"type": "integer", "minimum": 0, "maximum": MAX_SOURCE_LIMIT},
    },
    "required": ["kb_query", "code_query", "events_query"],
}

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)


def plan_from_json(
    text: str, *, planner: str, defaults: EnrichmentPlan | None = None
) -> EnrichmentPlan:
    """Parse and validate a model's JSON plan; raises :class:`PlanError` on any deviation.

    Extra keys are ignored (models add commentary fields); wrong types, missing
    required keys, out-of-range limits and unparseable times are errors, because a
    half-understood plan is worse than the heuristic one.
    """
    if not isinstance(text, str) or not text.strip():
        raise PlanError("the model returned no text")
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PlanError(f"the model's plan is not JSON: {exc}") from exc
    return plan_from_dict(data, planner=planner, defaults=defaults)


def plan_from_dict(
    data: Any, *, planner: str, defaults: EnrichmentPlan | None = None
) -> EnrichmentPlan:
    if not isinstance(data, dict):
        raise PlanError(f"the plan must be a JSON object, not {type(data).__name__}")
    base = defaults or EnrichmentPlan()
    values: dict[str, Any] = {}
    for key in ("kb_query", "code_query", "events_query"):
        if key not in data:
            raise PlanError(f"the plan has no {key!r}")
        value = data[key]
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise PlanError(f"{key} must be a string, not {type(value).__name__}")
        values[key] = _clean_query(value)
    for key in ("kb_limit", "code_limit", "events_limit"):
        if key not in data or data[key] is None:
            continue
        value = data[key]
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise PlanError(f"{key} must be an integer, not {value!r}")
        if not 0 <= value <= MAX_SOURCE_LIMIT:
            raise PlanError(f"{key} must be from 0 to {MAX_SOURCE_LIMIT}, not {value}")
        values[key] = value
    if data.get("parts") is not None:
        values["parts"] = _parts(data["parts"])
    for key in ("events_recap", "events_recent"):
        flag = data.get(key)
        if flag is not None:
            if not isinstance(flag, bool):
                raise PlanError(f"{key} must be true or false, not {flag!r}")
            values[key] = flag
    for key in ("events_since", "events_until"):
        values[key] = _utc_time(data.get(key), key)
    since, until = values["events_since"], values["events_until"]
    if since is not None and until is not None and since > until:
        raise PlanError(f"events_since ({since}) is after events_until ({until})")
    return replace(base, planner=planner, **values)


def _parts(value: Any) -> tuple[PartQueries, ...]:
    """``parts`` as :meth:`EnrichmentPlan.to_dict` writes them (optional: a model is
    not asked for them); a part with no query is left out."""
    if not isinstance(value, list) or len(value) > MAX_PARTS:
        raise PlanError(f"parts must be a list of at most {MAX_PARTS} objects")
    parts = []
    for part in value:
        if not isinstance(part, dict):
            raise PlanError(f"each part must be an object, not {type(part).__name__}")
        queries = {}
        for key in ("kb_query", "code_query", "events_query"):
            query = part.get(key)
            if query is not None and not isinstance(query, str):
                raise PlanError(f"a part's {key} must be a string, not {type(query).__name__}")
            queries[key] = _clean_query(query or "")
        if any(queries.values()):
            parts.append(PartQueries(**queries))
    return tuple(parts)


def _clean_query(value: str) -> str:
    # Lone surrogates cannot reach SQLite; control characters only add noise.
    value = value.encode("utf-8", "replace").decode("utf-8")
    value = " ".join(_CONTROL.sub(" ", value).split())
    return value[:MAX_QUERY_CHARS]


def _utc_time(value: Any, key: str) -> datetime | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PlanError(f"{key} must be an ISO 8601 string or null, not {type(value).__name__}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise PlanError(f"{key} {value!r} is not an ISO 8601 time") from exc
    if moment.tzinfo is None:  # the model is told to write UTC
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
