"""Running one planned search per domain layer and reading its hits as context items.

The enricher depends on the layers' documented search methods only
(``kb.search``, ``events.search``, ``code.search``), whose hits share one
contract (:class:`~remembrances.records.Hit`): each brings its own label (where
it comes from), text and score, so nothing here guesses at field names.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..errors import MissingExtraError
from ..formatting import code_label, event_label
from ..fts_query import query_terms
from .heuristic import HeuristicPlanner
from .plan import EnrichmentPlan

if TYPE_CHECKING:
    from ..code import CodeIndexer
    from ..code.records import CodeHit, CodeSymbol
    from ..events.records import Event
    from ..kb.records import KBHit
    from ..service import RemembrancesService

#: A Markdown heading line at the start of a KB chunk: the origin already names it.
_LEADING_MARKDOWN_HEADING = re.compile(r"\A[ \t]*#{1,6}[ \t][^\n]*\n+")
#: A reStructuredText title (a line, then a line of one repeated punctuation character).
_LEADING_TITLE = re.compile(r"\A([^\s][^\n]*)\n(([=\-`:'\"~^_*+#])\3{2,})[ \t]*\n+")
#: Front matter longer than this many lines is shown as it is.
MAX_FRONT_MATTER_LINES = 60
_YAML_KEY = re.compile(r"[\w-]+:(?:\s|$)")

#: The enricher's sources are the service's layers (``svc.kb``, ``svc.events``,
#: ``svc.code``); each hit's kind is "kb", "event" or "code".
SECTION_TITLES = {"kb": "Knowledge base", "events": "Events", "code": "Code"}
_KIND_OF_SOURCE = {"kb": "kb", "events": "event", "code": "code"}

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ContextItem:
    """One piece of memory to show, with where it came from (a :class:`~remembrances.records.Hit`).

    ``source`` is the layer that found it ("kb", "events", "code"); ``origin`` is
    the hit's label. ``score`` is the layer's normalised score (None when the
    layer listed items without a query, e.g. events in a time window). ``key``
    identifies the underlying record for de-duplication.
    """

    source: str
    origin: str
    text: str
    score: float | None
    key: str
    language: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)
    #: Where in ``text`` the part that matched best lies (a KB passage joins chunks):
    #: a cut to fit a budget keeps it.
    focus: tuple[int, int] | None = field(default=None, compare=False)
    #: When an event happened, and its place in its conversation: the order to tell
    #: a time window's events in.
    when: tuple[datetime, int] | None = field(default=None, compare=False)
    #: Whether the hit holds a word of the query (None: not known). One that does not
    #: must reach the gate itself to come along (:meth:`ContextEnricher._filter`).
    holds_words: bool | None = field(default=None, compare=False)

    @property
    def source_kind(self) -> str:
        return _KIND_OF_SOURCE.get(self.source, self.source)

    @property
    def label(self) -> str:
        return self.origin

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.source_kind,
            "label": self.origin,
            "text": self.text,
            "score": None if self.score is None else round(self.score, 6),
            "language": self.language,
            "metadata": dict(self.metadata),
        }


def _score(value: float | None) -> float | None:
    """A layer's score; NaN (no score) counts as unscored."""
    if value is None:
        return None
    score = float(value)
    return score if math.isfinite(score) else None


def kb_item(hit: KBHit, query: str = "") -> ContextItem:
    text = hit.text
    front = front_matter_end(text)
    # Front matter stays in the indexed text (its words are found) but is not shown:
    # its title is the label's, the rest took the block's room ("owner: alice"); unless
    # it holds a word of ``query`` besides its title ("who is oncall?", "oncall: bob")
    if front and not _asked_of(text[:front], query):
        text = text[front:]
    text = _without_leading_headings(text)  # the label names the headings
    key = f"kb:{hit.source}:{hit.chunk_id}"
    focus = None
    if hit.best_span is not None:
        shift = len(hit.text) - len(text)
        focus = (max(hit.best_span[0] - shift, 0), max(hit.best_span[1] - shift, 0))
    return ContextItem(
        "kb", hit.label, text, _score(hit.score), key, metadata=hit.metadata, focus=focus
    )


def _asked_of(front_matter: str, query: str) -> bool:
    """Whether front matter holds a word of ``query`` outside its ``title:`` line (a word
    of five letters or more also by its first five: "owners", "owner")."""
    said = [line for line in front_matter.splitlines() if not line.startswith("title:")]
    held = set(query_terms("\n".join(said)))
    held |= {w[:5] for w in held if len(w) >= 5}
    return any(w in held or (len(w) >= 5 and w[:5] in held) for w in query_terms(query))


def front_matter_end(text: str) -> int:
    """Where the YAML front matter ``text`` starts with ends (its closing ``---`` or
    ``...`` line and the blank lines after it); 0 when it has none: the first line is
    ``---``, the next a ``key:``, and a closing line comes within
    ``MAX_FRONT_MATTER_LINES``."""
    if not text.startswith("---"):
        return 0
    lines = text.split("\n", MAX_FRONT_MATTER_LINES + 1)
    if lines[0].strip() != "---" or len(lines) < 3 or not _YAML_KEY.match(lines[1]):
        return 0
    at = len(lines[0]) + 1
    for line in lines[1 : MAX_FRONT_MATTER_LINES + 1]:
        at += len(line) + 1
        if line.strip() in ("---", "...") and line[:1] in "-.":
            while text.startswith("\n", at):
                at += 1
            return min(at, len(text))
    return 0


def _without_leading_headings(text: str) -> str:
    """``text`` without the heading lines it starts with. A reStructuredText title's
    underline is at least as long as the title, which tells it from a line followed
    by a code fence or a rule (``foo()`` then three backticks)."""
    while True:
        if heading := _LEADING_MARKDOWN_HEADING.match(text):
            text = text[heading.end() :]
        elif (title := _LEADING_TITLE.match(text)) and len(title.group(2)) >= len(
            title.group(1).rstrip()
        ):
            text = text[title.end() :]
        else:
            return text


def event_item(
    hit: Event, *, shown: frozenset[int] = frozenset(), zone: tzinfo | None = None
) -> ContextItem:
    """An event as an item; a conversation turn searched with ``window=1`` comes with
    the turn said before it (:func:`said_before`) unless that turn is among ``shown``.
    ``zone``: the user's, to tell the time in (UTC otherwise)."""
    key = f"events:{hit.id}"
    text = hit.content
    before = said_before(hit, shown)
    if before:  # after the turn itself, so a budget cut drops the context first
        text = f"{text}\n{before}"
    return ContextItem(
        "events",
        hit.label
        if zone is None
        else event_label(hit.subject, hit.occurred_at, hit.user, zone, role=hit.role),
        text,
        _score(hit.score),
        key,
        metadata=hit.metadata,
        when=(hit.occurred_at, hit.position or 0),
        holds_words=None if hit.text_score is None else hit.text_score > 0,
    )


#: The turn before a matched one is shown cut to this many characters.
PREVIOUS_TURN_CHARS = 200


def said_before(hit: Event, shown: frozenset[int] = frozenset()) -> str:
    """``↳ after Caroline: Did you make it yourself?``: the turn just before ``hit``
    in its session, when another speaker said it; "" otherwise (and when that turn
    is among ``shown``, the hits themselves).

    A reply ("Yeah, I made it in pottery class yesterday.") often means little
    without the question it answers. Measured on LoCoMo: see EnricherConfig.previous_turn.
    """
    if not hit.before or hit.position is None:
        return ""
    turn = hit.before[-1]
    if turn.position != hit.position - 1 or turn.id in shown:
        return ""
    if not turn.subject or turn.subject == hit.subject:
        return ""
    said = " ".join(turn.content.split())
    if len(said) > PREVIOUS_TURN_CHARS:
        said = said[: PREVIOUS_TURN_CHARS - 2].rsplit(" ", 1)[0] + " …"
    return f"↳ after {turn.subject}: {said}" if said else ""


def _code_key(project: str, path: str, start: int, end: int, name: str, symbol: int | None) -> str:
    """The same key for a search hit and a definition looked up by name (shown once): the
    symbol's, so that a later part of a long symbol and its whole definition are one;
    a file's chunk (no symbol) by its lines."""
    if symbol is not None:
        return f"code:{project}:symbol:{symbol}"
    lines = f":{start}" if end == start else f":{start}-{end}"
    return f"code:{project}:{path}{lines}:{name}"


def code_item(hit: CodeHit) -> ContextItem:
    # A later part of a long symbol starts mid-body: show whose body it is, its first
    # line elided as the code index elides it (``def send(self): …``).
    code = f"{hit.signature} …\n{hit.code}" if hit.part > 1 and hit.signature else hit.code
    return ContextItem(
        "code",
        hit.label,
        code,
        _score(hit.score),
        _code_key(
            hit.project, hit.path, hit.start_line, hit.end_line, hit.qualified_name, hit.symbol_id
        ),
        language=_language(hit.language),
    )


def symbol_item(symbol: CodeSymbol, text: str) -> ContextItem:
    """A definition found by name, shown as its search hit would be (unscored: certain)."""
    where = (symbol.path, symbol.start_line, symbol.end_line, symbol.qualified_name)
    return ContextItem(
        "code",
        code_label(*where, symbol.kind, symbol.project),
        text,
        None,
        _code_key(symbol.project, *where, symbol.id),
        language=_language(symbol.language),
    )


def _language(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    cleaned = re.sub(r"[^a-z0-9+#_-]", "", value.lower())
    return cleaned or None


SourceSearch = Callable[["RemembrancesService", EnrichmentPlan], list[ContextItem]]


#: A passage whose meaning is this far from the query is not shown, whatever words it
#: shares: every word of a reply such as "hmm, not quite" can sit in a passage about
#: something else (cosine 0.05-0.14), and full coverage alone scores 0.023, over the KB
#: gate. Over the development suite's seven docs sets, with the planner's KB query, the
#: 163 answers ranked in the top 3 had cosines of 0.216 and more (three under 0.25, where
#: the floor was first set); "how can I roll back?" reads 0.24 close to the one section
#: that answers it (docs/enrichment.md).
KB_MIN_COSINE = 0.20


def search_kb(
    service: RemembrancesService,
    plan: EnrichmentPlan,
    *,
    collections: tuple[str, ...] | None = None,
) -> list[ContextItem]:
    found = []
    for query in plan.queries("kb"):
        hits = service.kb.search(query, limit=plan.kb_limit, collection=collections)
        found.append([h for h in hits if h.vector_score is None or h.vector_score >= KB_MIN_COSINE])
    return [kb_item(h, plan.kb_query) for h in distinct_passages(found, plan.kb_limit)]


def distinct_passages(found: list[list[KBHit]], limit: int) -> list[KBHit]:
    """:func:`best_of` for KB hits: two queries may find one section as two passages
    that share chunks (each joins the chunks around its own best one); the better
    passage stands for both."""
    merged = best_of(found, sum(map(len, found)), key=lambda h: (h.collection, h.chunk_id))
    kept: list[KBHit] = []
    for hit in merged:
        if not any(hit.overlaps(k) for k in kept):
            kept.append(hit)
    return kept[:limit]


class _Scored(Protocol):
    @property
    def score(self) -> float | None: ...


_Found = TypeVar("_Found", bound=_Scored)


def best_of(
    found: list[list[_Found]], limit: int, *, key: Callable[[_Found], Hashable]
) -> list[_Found]:
    """The best ``limit`` hits of searches with a prompt's queries (its own and its
    parts', ``EnrichmentPlan.queries``), best first, each once at its best score (an
    unscored hit, certain, first); the one search's hits as they came when there was
    one. A score is the hit's own evidence for its query, not its rank, so scores for
    different queries can be ranked together (docs/search.md), though a short query's
    words are easier to cover in full."""
    if len(found) == 1:
        return found[0]

    def rank(hit: _Found) -> float:
        return math.inf if hit.score is None else hit.score

    best: dict[Hashable, _Found] = {}
    for hits in found:
        for hit in hits:
            seen = best.get(key(hit))
            if seen is None or rank(hit) > rank(seen):
                best[key(hit)] = hit
    ranked = sorted(best.values(), key=rank, reverse=True)
    return ranked[:limit]


#: With "last"/"latest" in the prompt, an event this much older than the newest hit
#: needs twice the score to rank level with it.
RECENT_HALF_LIFE = timedelta(days=7)


def search_events(
    service: RemembrancesService,
    plan: EnrichmentPlan,
    *,
    session: str | None = None,
    user: str | None = None,
    previous_turn: bool = True,
) -> list[ContextItem]:
    """Events for the plan; a time phrase favours its window instead of hiding the rest.

    "Why did the deploy fail last week?" should still find a failure logged
    eight days ago, so with a query the window's events come first and the
    others follow (each keeps its own score for the gate). Without a query the
    window is all there is to go on, and selects. ``session``/``user`` scope
    every search to one conversation or one user's events; ``previous_turn``
    shows each turn with the one said before it (:func:`said_before`).
    """
    query = plan.events_query or None
    limit = plan.events_limit
    scope: dict[str, Any] = {"session": session, "user": user, "window": int(previous_turn)}

    def search(**window: Any) -> list[Event]:
        """The query's and its parts' best events (or, without a query, the window's)."""
        queries: list[str | None] = [*plan.queries("events")] if query else [None]
        found = [service.events.search(q, limit=limit, **window, **scope) for q in queries]
        return best_of(found, limit, key=lambda event: event.id)

    if query is None and plan.events_recap and not plan.has_time_window:
        hits = latest_conversation(service, limit, session=session, user=user)
    elif query is not None and plan.events_recap and plan.has_time_window:
        # A window recapped about one thing ("what did we decide last week?"): its
        # events likeliest to be about it, listed in order like any recap (a recap is
        # no guess: unscored, the gate does not weigh it). A window that holds no more
        # than the limit is listed whole: a search leaves out the events that share no
        # word with the query ("Agreed. Let's cap the pools at 40." for "decide").
        since, until = plan.events_since, plan.events_until
        if service.events.count(since=since, until=until, session=session, user=user) <= limit:
            hits = service.events.list(
                since=since, until=until, limit=limit, session=session, user=user
            )
        else:
            hits = search(since=since, until=until)
        hits = sorted(hits, key=lambda h: (h.occurred_at, h.position or 0))
        shown = frozenset(h.id for h in hits)
        return [replace(event_item(h, shown=shown, zone=plan.zone), score=None) for h in hits]
    elif query is None and plan.events_since is not None and plan.events_until is not None:
        hits = _spread_over(service, plan.events_since, plan.events_until, limit, scope)
    elif query is None or not plan.has_time_window:
        hits = search(since=plan.events_since, until=plan.events_until)
    else:
        inside = search(since=plan.events_since, until=plan.events_until)
        seen = {h.id for h in inside}
        anywhere = search()
        hits = inside + [h for h in anywhere if h.id not in seen]
    if plan.events_recent and hits:
        hits = _newest_favoured(hits)
    elif query is None:  # a window's (or conversation's) newest events, told in order
        hits = sorted(hits, key=lambda h: (h.occurred_at, h.position or 0))
    shown = frozenset(h.id for h in hits)
    return [event_item(h, shown=shown, zone=plan.zone) for h in hits]


def latest_conversation(
    service: RemembrancesService, limit: int, *, session: str | None, user: str | None
) -> list[Event]:
    """The last ``limit`` turns of the latest conversation in scope, newest first: the
    ``session`` given, else the latest; the newest events when no conversation was
    logged. "Where did we leave off?" is asked as a conversation starts: a session of
    fewer than two turns is recapped by the user's previous one (when ``user`` is
    given: a session alone does not say whose other conversations to look at). A chat
    that holds nothing but such a question (a client logs its transcript before it
    asks; or a chat opened with it and left) is not the one recapped."""
    if session is not None:
        turns = service.events.list(session=session, user=user, limit=limit)
        if len(turns) >= 2 or user is None:
            return turns
    sessions = service.events.sessions(user=user)
    found = _latest_held(service, sessions, user, other_than=session)
    if found is None:
        if session is not None:
            return turns
        found = next(iter(sessions), None)
    return service.events.list(session=found, user=user, limit=limit)


#: One-turn sessions read to find the latest that is not only a recap question; past
#: them, the latest of two turns or more (each costs a read: a memory may hold
#: thousands of one-message sessions).
ONE_TURN_SESSIONS_READ = 10


def _latest_held(
    service: RemembrancesService,
    sessions: Mapping[str, int],
    user: str | None,
    *,
    other_than: str | None,
) -> str | None:
    """The most recently active session in ``sessions`` (session -> turns) that holds
    more than a recap question, ``other_than`` excepted; None when there is none."""
    read = 0
    for name, turns in sessions.items():
        if name == other_than:
            continue
        if turns >= 2:
            return name
        if read < ONE_TURN_SESSIONS_READ:
            read += 1
            said = service.events.list(session=name, user=user, limit=1)
            # read as the planner reads a prompt: the question the chat was opened with
            if said and not HeuristicPlanner().plan(said[0].content).events_recap:
                return name
    return None


def _spread_over(
    service: RemembrancesService,
    since: datetime,
    until: datetime,
    limit: int,
    scope: Mapping[str, Any],
) -> list[Event]:
    """A window's events spread over it: the latest of each of ``limit`` equal
    stretches, then the next latest of each, and so on, one turn of a conversation
    before a second. "What happened in October?" showed the last four days of October
    alone; filled up with the newest events, "what happened this week?" gave a chat's
    turns the places of the same day's decision and code review (a turn is shown with
    the one before it)."""
    newest = service.events.search(None, since=since, until=until, limit=limit, **scope)
    if len(newest) < limit:
        return newest  # the window holds no more than that
    step = (until - since) / limit
    stretches = [
        service.events.search(
            None, since=since + step * i, until=since + step * (i + 1), limit=limit, **scope
        )
        for i in range(limit)
    ]
    spread = [found[depth] for depth in range(limit) for found in stretches if depth < len(found)]
    picked: dict[int, Event] = {}
    told: set[str] = set()  # conversations one of whose turns is picked
    for event in spread:
        if len(picked) < limit and (event.session is None or event.session not in told):
            picked.setdefault(event.id, event)
            if event.session is not None:
                told.add(event.session)
    for event in spread:  # places left: the other turns, in the same order
        if len(picked) < limit:
            picked.setdefault(event.id, event)
    return list(picked.values())


def _newest_favoured(hits: list[Event]) -> list[Event]:
    newest = max(h.occurred_at for h in hits)

    def weight(hit: Event) -> float:
        age = newest - hit.occurred_at
        return float((_score(hit.score) or 0.0) * 0.5 ** (age / RECENT_HALF_LIFE))

    return sorted(hits, key=weight, reverse=True)


def scoped(
    searches: Mapping[str, SourceSearch],
    session: str | None,
    user: str | None,
    *,
    previous_turn: bool = True,
) -> Mapping[str, SourceSearch]:
    """``searches`` with the events search kept to one session and/or user (and
    without the turn before each match when ``previous_turn`` is off).

    Documents and code are shared by every user of a memory; only events (the
    conversations) belong to a user or a session.
    """
    if session is None and user is None and previous_turn:
        return searches

    def events(service: RemembrancesService, plan: EnrichmentPlan) -> list[ContextItem]:
        return search_events(service, plan, session=session, user=user, previous_turn=previous_turn)

    return {**searches, "events": events}


def code_layer(service: RemembrancesService) -> CodeIndexer | None:
    """The memory's code index; None when no code was ever indexed, or without the code
    extra (tree-sitter, said once in the log): the enricher then reads documents and
    events only."""
    if not service.holds_code:
        return None
    try:
        return service.code
    except MissingExtraError as exc:
        _say_once(f"enrichment leaves code out: {exc}")
        return None


_SAID: set[str] = set()
_SAID_LOCK = threading.Lock()


def _say_once(message: str) -> None:
    """Log ``message`` the first time only; the sources run in threads at once, and
    ``functools.cache`` let two first calls both log it."""
    with _SAID_LOCK:
        if message in _SAID:
            return
        _SAID.add(message)
    log.warning(message)


def search_code(
    service: RemembrancesService, plan: EnrichmentPlan, *, project: str | None = None
) -> list[ContextItem]:
    code = code_layer(service)
    if code is None:
        return []
    found = [
        [code_item(h) for h in code.search(query, limit=plan.code_limit, project=project)]
        for query in plan.queries("code")
    ]
    return best_of(found, plan.code_limit, key=lambda item: item.key)


def in_project(searches: Mapping[str, SourceSearch], project: str) -> Mapping[str, SourceSearch]:
    """``searches`` with the code search kept to one indexed project (a memory may
    hold several repositories; a coding assistant works in one)."""

    def code(service: RemembrancesService, plan: EnrichmentPlan) -> list[ContextItem]:
        return search_code(service, plan, project=project)

    return {**searches, "code": code}


def in_collections(
    searches: Mapping[str, SourceSearch], collections: tuple[str, ...]
) -> Mapping[str, SourceSearch]:
    """``searches`` with the knowledge base kept to some collections: a memory shared
    by many users keeps each one's notes in a collection of their own, and a shared one."""

    def kb(service: RemembrancesService, plan: EnrichmentPlan) -> list[ContextItem]:
        return search_kb(service, plan, collections=collections)

    return {**searches, "kb": kb}


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
        return bool(plan.events_query) or plan.has_time_window or plan.events_recap
    return bool(plan.query(source))
