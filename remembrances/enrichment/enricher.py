"""ContextEnricher: the memory that helps with a prompt, fast, and never an error.

Agent frameworks call this before every model turn, so it must not be the reason
a turn fails or stalls: every source runs in parallel under one deadline, a
source that fails or is late is dropped (and logged), and anything unexpected
anywhere yields "" rather than an exception. The errors are the caller's own: a
malformed scope or time zone, and a closed memory.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING

from ..errors import ClosedError, InvalidInputError, NotFoundError
from .budget import Limits, fit
from .code_focus import code_aware, wait_idle
from .config import EnricherConfig
from .daemon_pool import DaemonPool
from .heuristic import HeuristicPlanner
from .plan import EnrichmentPlan, QueryPlanner, takes_time_zone
from .render import render_block
from .sources import (
    SEARCHES,
    ContextItem,
    SourceSearch,
    in_collections,
    in_project,
    scoped,
    wanted,
)
from .time_phrases import check_time_zone

if TYPE_CHECKING:
    from ..service import RemembrancesService

log = logging.getLogger(__name__)

_SPACES = re.compile(r"\s+")
#: A Markdown heading line and the code index's elision of a section's subsections:
#: the same text as a KB passage and as a code section differs only by them.
_HEADING = re.compile(r"^ {0,3}#{1,6}\s.*$|\s…$", re.MULTILINE)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Enrichment:
    """What one call did: the block, the plan, what was kept and dropped, and timings (ms)."""

    text: str
    plan: EnrichmentPlan | None = None
    items: dict[str, list[ContextItem]] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


#: The longest ``close()`` waits for searches still running past their deadlines.
CLOSE_WAIT = 2.0
#: A gated source's hits are kept down to this fraction of its ``min_score``.
ITEM_FLOOR = 0.5


class ContextEnricher:
    """Plans, searches the KB, events and code in parallel, filters, and formats.

    ``service`` is the :class:`~remembrances.RemembrancesService` whose ``kb``,
    ``events`` and ``code`` layers are searched. ``planner`` defaults to
    :class:`HeuristicPlanner`. Safe to call from many threads at once.
    """

    def __init__(
        self,
        service: RemembrancesService,
        config: EnricherConfig | None = None,
        planner: QueryPlanner | None = None,
    ) -> None:
        self.service = service
        self.config = config if config is not None else EnricherConfig()
        self.planner: QueryPlanner = planner if planner is not None else HeuristicPlanner()
        self._pool: DaemonPool | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._warmed = False

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self.config.enabled = bool(value)

    def enrich_context(
        self,
        prompt: str,
        *,
        user: str | None = None,
        session: str | None = None,
        project: str | None = None,
        collections: str | Sequence[str] | None = None,
        tz: str | tzinfo | None = None,
    ) -> str:
        """The context block for ``prompt``, or "" when nothing relevant (or anything fails).

        ``user``/``session`` keep the events to one user's or one conversation's;
        ``collections`` keeps the documents to those collections (all of them when
        None); ``project`` keeps the code to one indexed project. ``tz`` is the
        user's time zone (an IANA name or a ``tzinfo``), whose days "yesterday" and
        "this morning" mean (default: the planner's, the machine's zone). A malformed
        scope or zone is an :class:`~remembrances.errors.InvalidInputError`, never an
        unscoped answer.
        """
        return self.enrich(
            prompt, user=user, session=session, project=project, collections=collections, tz=tz
        ).text

    def enrich(
        self,
        prompt: str,
        *,
        user: str | None = None,
        session: str | None = None,
        project: str | None = None,
        collections: str | Sequence[str] | None = None,
        tz: str | tzinfo | None = None,
    ) -> Enrichment:
        """Like :meth:`enrich_context`, with the plan, the items and the timings."""
        from ..events.conversation import scope_name

        # Not "": the agent would run on without memory, and nobody would know why.
        self.service.check_open()
        if self._closed:
            raise ClosedError("this enricher was closed; open the memory again to enrich")
        # Checked before the catch-all: a bad scope must not become "" or, worse, no scope
        # (an unknown project is a NotFoundError naming the indexed ones).
        user = None if user is None else scope_name(user, "user")
        session = None if session is None else scope_name(session, "session")
        shelves = None if collections is None else _collections(collections)
        zone = None if tz is None else check_time_zone(tz)
        # planners written before plan() took a time zone still work without one
        if zone is not None and not takes_time_zone(self.planner):
            raise InvalidInputError(
                f"the planner {type(self.planner).__name__} (or the one it falls back to) "
                "takes no time zone (tz); give its plan() a keyword tz=None to accept one"
            )
        try:
            project = None if project is None else self._indexed(project)
        except (NotFoundError, InvalidInputError):
            raise
        except Exception:  # the memory cannot say which projects it holds: no context
            log.exception("context enrichment failed; the turn continues without memory")
            return Enrichment("")
        try:
            return self._enrich(prompt, user, session, project, shelves, zone)
        except Exception:
            log.exception("context enrichment failed; the turn continues without memory")
            return Enrichment("")

    def _indexed(self, project: str) -> str:
        from ..code.checks import check_project_name

        name = check_project_name(project)
        indexed = [p.name for p in self.service.code.projects()]
        if name not in indexed:
            raise NotFoundError(
                f"no indexed code project {name!r}; the projects are: "
                + (", ".join(map(repr, indexed)) or "none yet (index one with code.index)")
            )
        return name

    def _enrich(
        self,
        prompt: str,
        user: str | None,
        session: str | None,
        project: str | None,
        collections: tuple[str, ...] | None = None,
        zone: tzinfo | None = None,
    ) -> Enrichment:
        config = self.config
        if not config.enabled or not isinstance(prompt, str) or not prompt.strip():
            return Enrichment("")
        warming = time.perf_counter()
        self._warm()
        started = time.perf_counter()
        if zone is None:
            plan = self.planner.plan(prompt)
        else:
            plan = replace(self.planner.plan(prompt, tz=zone), zone=zone)
        planned = time.perf_counter()
        result = Enrichment("", plan=plan)
        result.timings["warm_ms"] = (started - warming) * 1000
        result.timings["plan_ms"] = (planned - started) * 1000

        # A prompt naming code gets its definitions first (code_focus.py).
        base = SEARCHES if project is None else in_project(SEARCHES, project)
        base = base if collections is None else in_collections(base, collections)
        searches = code_aware(base, prompt, config.timeout_for("code"), project)
        sources = [s for s in config.sources if wanted(s, plan) or searches[s] is not base[s]]
        searches = scoped(searches, session, user, previous_turn=config.previous_turn)
        found = self._search(plan, sources, result, searches)
        searched = time.perf_counter()
        result.timings["search_ms"] = (searched - planned) * 1000

        ranked = self._filter(found, config)
        limits = Limits(
            total_chars=config.max_chars,
            section_chars={s: config.section_chars_for(s) for s in config.sources},
            item_chars=config.item_chars,
            total_tokens=config.max_tokens,
            section_tokens={s: config.section_tokens_for(s) for s in config.sources},
            tokenizer=config.tokenizer,
        )
        chosen = fit(ranked, config.sources, limits, header=config.header)
        if plan.has_time_window and chosen.get("events"):
            # chosen by relevance, told as they happened: the prompt asked about a time.
            # Those of its window come first: "what did we decide yesterday about the
            # database?" told September's decisions before yesterday's.
            chosen["events"].sort(
                key=lambda pair: (not _inside(pair[0], plan), pair[0].when or (_EPOCH, 0))
            )
        result.items = {s: [item for item, _ in parts] for s, parts in chosen.items() if parts}
        result.text = render_block(chosen, config.sources, header=config.header)
        result.timings["format_ms"] = (time.perf_counter() - searched) * 1000
        result.timings["total_ms"] = (time.perf_counter() - started) * 1000
        return result

    def _warm(self) -> None:
        """Pay the one-time costs (the model load, the vector index load) before any
        source's deadline starts: in a fresh process they alone can exceed a timeout
        meant for a search, and every source would be dropped."""
        if self._warmed:
            return
        # Only some embedders have a model to load (the local one does).
        for owner, method in ((self.service.embedder, "load"), (self.service.store, "warm")):
            load = getattr(owner, method, None)
            if callable(load):
                try:
                    load()
                except Exception as exc:  # the sources report it, each on its own
                    log.debug("warming %s.%s failed: %s", type(owner).__name__, method, exc)
        self._warmed = True

    def _executor(self) -> DaemonPool:
        with self._lock:
            if self._closed:  # a new pool's threads would outlive every close
                raise ClosedError("this enricher was closed; open the memory again to enrich")
            if self._pool is None:
                self._pool = DaemonPool(self.config.max_workers, "remembrances-enrich")
            return self._pool

    def _search(
        self,
        plan: EnrichmentPlan,
        sources: list[str],
        result: Enrichment,
        searches: Mapping[str, SourceSearch] = SEARCHES,
    ) -> dict[str, list[ContextItem]]:
        if not sources:
            return {}
        pool = self._executor()
        futures: dict[str, Future[tuple[list[ContextItem], float]]] = {
            source: pool.submit(_timed, searches[source], self.service, plan) for source in sources
        }
        started = time.monotonic()
        deadlines = {s: started + self.config.timeout_for(s) for s in sources}
        pending = dict(futures)
        found: dict[str, list[ContextItem]] = {}
        while pending:
            now = time.monotonic()
            for source in [s for s in pending if not pending[s].done() and now >= deadlines[s]]:
                pending.pop(source).cancel()
                reason = f"timed out after {self.config.timeout_for(source):g} s"
                log.warning("enrichment source %r dropped: %s", source, reason)
                result.dropped[source] = reason
            for source in [s for s in pending if pending[s].done()]:
                future = pending.pop(source)
                if future.cancelled():  # the memory is closing
                    result.dropped[source] = "cancelled: the memory was closed"
                    continue
                error = future.exception()
                if error is not None:
                    reason = f"{type(error).__name__}: {error}"
                    log.warning("enrichment source %r dropped: %s", source, reason)
                    result.dropped[source] = reason[:500]
                    continue
                items, elapsed = future.result()
                found[source] = items
                result.timings[f"{source}_ms"] = elapsed
            if pending:
                next_deadline = min(deadlines[s] for s in pending)
                wait(
                    pending.values(),
                    timeout=max(next_deadline - time.monotonic(), 0.0),
                    return_when=FIRST_COMPLETED,
                )
        return found

    @staticmethod
    def _filter(
        found: dict[str, list[ContextItem]], config: EnricherConfig
    ) -> dict[str, list[ContextItem]]:
        """Gate each source on its best hit, then drop weak, empty and duplicate hits.

        A source speaks only when its best hit reaches the source's ``min_score``
        (an unrelated prompt's best hit stays under it); then its other hits come
        along down to ``ITEM_FLOOR`` × ``min_score``, since a question's second
        and third hits are often the ones that answer it (docs/enrichment.md).
        """
        seen_keys: set[str] = set()
        seen_texts: list[str] = []
        ranked: dict[str, list[ContextItem]] = {}
        for source in config.sources:
            threshold = config.min_score_for(source)
            items = [i for i in found.get(source, []) if i.text.strip()]
            scores = [i.score for i in items if i.score is not None]
            # Unscored items (a named symbol's definition, events listed by time) are
            # certain matches: they let the source speak whatever its search scored.
            certain = any(i.score is None for i in items)
            if scores and not certain and max(scores) < threshold:
                ranked[source] = []
                continue
            kept = []
            for item in items:
                if item.score is not None and item.score < threshold * ITEM_FLOOR:
                    continue
                if item.score is not None and item.score < threshold and item.holds_words is False:
                    continue  # under the gate on meaning alone: a guess
                normal = _normal(
                    item.text, prose=item.source == "kb" or item.language == "markdown"
                )
                if item.key in seen_keys or any(normal in t for t in seen_texts):
                    continue
                seen_keys.add(item.key)
                seen_texts.append(normal)
                kept.append(item)
            ranked[source] = kept
        return ranked

    def close(self) -> None:
        """Let late searches finish, for up to ``CLOSE_WAIT`` seconds: they read the store.
        One still waiting for an embedder is left behind (a daemon thread): after its
        retries it finds the store closed, and nobody reads its answer."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        started = time.monotonic()
        if pool is not None:
            pool.close(CLOSE_WAIT)
        wait_idle(max(CLOSE_WAIT - (time.monotonic() - started), 0.0))  # code_focus.py's


def _timed(
    search: SourceSearch, service: RemembrancesService, plan: EnrichmentPlan
) -> tuple[list[ContextItem], float]:
    started = time.perf_counter()
    items = search(service, plan)
    return items, (time.perf_counter() - started) * 1000


def _inside(item: ContextItem, plan: EnrichmentPlan) -> bool:
    """Whether an event item happened in the plan's time window."""
    if item.when is None:
        return True
    at = item.when[0]
    since, until = plan.events_since, plan.events_until
    return (since is None or at >= since) and (until is None or at <= until)


def _collections(value: str | Sequence[str]) -> tuple[str, ...]:
    """The collections a scope names: one name or several, each a valid name. None of
    them need exist yet (a new user has no notes): such a scope finds no document."""
    from ..validation import check_name

    names = [value] if isinstance(value, str) else value
    if isinstance(names, bytes | bytearray) or not isinstance(names, Sequence):
        raise InvalidInputError("collections must be a name or a list of names")
    if not names:
        raise InvalidInputError("collections is an empty list; pass None for every collection")
    return tuple(dict.fromkeys(check_name(name, "collection") for name in names))


def _normal(text: str, *, prose: bool) -> str:
    """``text`` as compared for repeats: spaced and cased alike, and ``prose`` (a KB
    passage, a Markdown section) without its headings. A repository's docs are in the
    KB and, as sections, in the code index: a passage was told twice, once under each."""
    body = _HEADING.sub(" ", text) if prose else text
    if len(body.strip()) < 20:  # little but headings: compare the text as it is
        body = text
    return _SPACES.sub(" ", body).strip().lower()
