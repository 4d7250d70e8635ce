"""The planner that asks a chat model, and falls back rather than fail.

A model understands prompts the rules cannot ("that thing Bob broke before the
demo"), but it is slow, can be down, and can answer with prose instead of JSON.
So each model gets a deadline, its answer is validated against the plan schema,
and any failure moves on: primary model, then fallback model, then the
heuristic planner, which cannot fail. The plan says which one produced it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime, tzinfo

from .chat import ChatModel
from .heuristic import HeuristicPlanner
from .plan import MAX_SOURCE_LIMIT, PLAN_SCHEMA, EnrichmentPlan, QueryPlanner, plan_from_json
from .time_phrases import local_zone

log = logging.getLogger(__name__)

#: The prompt sent to the model is cut to this many characters.
MAX_PROMPT_CHARS = 8000
#: Calls to one model still running (past their deadline, their answers unused) before
#: that model is skipped: a server that trickles its answer holds a thread each.
MAX_LATE_CALLS = 2

SYSTEM_PROMPT = """\
You plan memory searches for an AI assistant. Given the user's message, write the \
search queries that would find helpful context in three stores:
- kb: documents and notes. kb_query is a short semantic phrase of the topic.
- code: an indexed codebase. code_query says what the code does, in plain words, \
with every identifier (snake_case, CamelCase, dotted.names), file path and error \
message the message names.
- events: a log of past events. events_query is the topic; events_since and \
events_until bound the time (ISO 8601 in UTC) when the message mentions a time \
("yesterday", "last week"), else null. When the message asks what was said in the \
latest conversation and names no topic ("where did we leave off?"), set events_recap \
to true and events_query to "".
Leave out request words ("please", "can you", "explain", "fix"). Use "" for a \
store that cannot help and 0 for its limit. Limits are 0 to {max_limit}.
The current time is {now}, in the user's time zone.
Answer with one JSON object only, matching this schema:
{schema}"""


class LLMPlanner:
    """Plan with ``primary``; on error, timeout or invalid JSON try ``fallback``, then rules.

    ``timeout`` is the deadline per model in seconds. The resulting plan's
    ``planner`` is ``"llm:<model name>"`` or ``"heuristic (fallback)"``, and
    ``notes["errors"]`` lists what went wrong with the models tried before it.
    """

    def __init__(
        self,
        primary: ChatModel,
        fallback: ChatModel | None = None,
        *,
        timeout: float = 5.0,
        heuristic: QueryPlanner | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self.timeout = timeout
        self.heuristic = heuristic or HeuristicPlanner(now=now)
        self.now = now or (lambda: datetime.now(UTC))
        # Model calls run in each model's own threads, so a client that ignores its
        # timeout holds neither the turn nor the fallback's threads; a model still
        # busy with MAX_LATE_CALLS answers past their deadline is skipped until one
        # returns.
        self._lock = threading.Lock()
        self._pools: dict[int, ThreadPoolExecutor] = {}
        self._late: dict[int, int] = {}
        for model in (primary, fallback):
            if model is None or id(model) in self._pools:
                continue
            self._pools[id(model)] = ThreadPoolExecutor(
                max_workers=MAX_LATE_CALLS + 4, thread_name_prefix="remembrances-plan"
            )
            self._late[id(model)] = 0
            # Importing an SDK takes about a second: do it now, off the caller's
            # thread, rather than inside the first plan's deadline.
            warm_up = getattr(model, "warm_up", None)
            if callable(warm_up):
                self._pools[id(model)].submit(_quietly, warm_up)

    @property
    def name(self) -> str:
        return f"llm:{self.primary.name}"

    def plan(self, prompt: str, *, tz: tzinfo | None = None) -> EnrichmentPlan:
        """``tz``: the user's zone, whose days "yesterday" means (default: the machine's)."""
        text = prompt if isinstance(prompt, str) else str(prompt)
        zone = tz or local_zone()
        text = text.encode("utf-8", "replace").decode("utf-8")[:MAX_PROMPT_CHARS]
        errors: list[str] = []
        defaults = EnrichmentPlan()
        for model in (self.primary, self.fallback):
            if model is None:
                continue
            try:
                answer = self._ask(model, text, zone)
                plan = plan_from_json(answer, planner=f"llm:{model.name}", defaults=defaults)
                if errors:
                    plan.notes["errors"] = list(errors)
                return plan
            except Exception as exc:  # any failure means: try the next planner
                reason = f"{model.name}: {type(exc).__name__}: {exc}"
                log.warning("LLM planner %s failed, falling back: %s", model.name, exc)
                errors.append(reason[:500])
        planned = self.heuristic.plan(text) if tz is None else self.heuristic.plan(text, tz=tz)
        plan = planned.with_planner("heuristic (fallback)")
        plan.notes["errors"] = errors
        return plan

    def _ask(self, model: ChatModel, prompt: str, zone: tzinfo) -> str:
        system = SYSTEM_PROMPT.format(
            max_limit=MAX_SOURCE_LIMIT,
            now=self.now().astimezone(zone).isoformat(timespec="seconds"),
            schema=json.dumps(PLAN_SCHEMA),
        )
        key = id(model)
        with self._lock:
            if self._late[key] >= MAX_LATE_CALLS:
                raise TimeoutError(
                    f"still waiting for {self._late[key]} earlier answers past their deadline"
                )
        future = self._pools[key].submit(model.complete, system, prompt, timeout=self.timeout)
        try:
            # A little slack over the client's own timeout, so its error wins when it has one.
            return future.result(timeout=self.timeout + 0.5)
        except FutureTimeout as exc:
            if not future.cancel():  # running: late until it returns
                with self._lock:
                    self._late[key] += 1
                future.add_done_callback(lambda _: self._returned(key))
            raise TimeoutError(f"no answer within {self.timeout:g} s") from exc

    def _returned(self, key: int) -> None:
        with self._lock:
            self._late[key] -= 1

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)


def _quietly(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception as exc:  # the real call reports it, with a fallback
        log.debug("chat model warm-up failed: %s", exc)
