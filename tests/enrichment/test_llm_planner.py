"""LLMPlanner through the real openai and google-genai SDKs against a local server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from remembrances.enrichment import (
    ChatUnavailableError,
    EnrichmentPlan,
    GoogleChat,
    HeuristicPlanner,
    LLMPlanner,
    OpenAIChat,
    PlanError,
    plan_from_json,
)

from .chat_server import ChatServer

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)
PROMPT = "can you explain why fetch_with_retry failed during yesterday's deploy?"


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer().running() as running:
        yield running


def openai_model(server: ChatServer, name: str) -> OpenAIChat:
    return OpenAIChat(name, base_url=server.url + "/v1", api_key="test-key")


def planner(primary: object, fallback: object = None, *, timeout: float = 20.0) -> LLMPlanner:
    return LLMPlanner(primary, fallback, timeout=timeout, now=lambda: NOW)  # type: ignore[arg-type]


def test_a_good_plan_is_used_and_says_so(server: ChatServer) -> None:
    plan = planner(openai_model(server, "good")).plan(PROMPT)
    assert plan.planner == "llm:openai:good"
    assert plan.kb_query == "retry backoff policy"
    assert plan.code_query == "fetch_with_retry RetryPolicy"
    assert plan.events_since == datetime(2026, 11, 20, tzinfo=UTC)
    assert plan.events_until is None
    assert (plan.kb_limit, plan.code_limit, plan.events_limit) == (3, 5, 2)
    request = server.requests[-1]["body"]
    assert request["model"] == "good"
    assert request["response_format"] == {"type": "json_object"}
    assert request["messages"][1]["content"] == PROMPT
    assert "2026-11-21T15:30:00+00:00" in request["messages"][0]["content"]


def test_the_model_is_told_the_time_in_the_users_zone(server: ChatServer) -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    planner(openai_model(server, "good")).plan(PROMPT, tz=tokyo)
    assert "2026-11-22T00:30:00+09:00" in server.requests[-1]["body"]["messages"][0]["content"]
    # When no model answers, the rules plan in that zone too: yesterday is the 21st there.
    plan = planner(openai_model(server, "error"), timeout=1.0).plan(PROMPT, tz=tokyo)
    assert plan.planner == "heuristic (fallback)"
    assert plan.events_since == datetime(2026, 11, 20, 15, tzinfo=UTC)


@pytest.mark.parametrize("bad", ["prose", "wrong", "error", "hang"])
def test_a_failing_primary_falls_back_to_the_second_model(server: ChatServer, bad: str) -> None:
    plan = planner(openai_model(server, bad), openai_model(server, "good"), timeout=1.0).plan(
        PROMPT
    )
    assert plan.planner == "llm:openai:good"
    assert plan.code_query == "fetch_with_retry RetryPolicy"
    assert len(plan.notes["errors"]) == 1 and f"openai:{bad}" in plan.notes["errors"][0]


@pytest.mark.parametrize("bad", ["prose", "wrong", "error", "hang"])
def test_when_every_model_fails_the_heuristic_plan_is_used(server: ChatServer, bad: str) -> None:
    plan = planner(openai_model(server, bad), openai_model(server, "error"), timeout=1.0).plan(
        PROMPT
    )
    expected = HeuristicPlanner(now=lambda: NOW).plan(PROMPT)
    assert plan.planner == "heuristic (fallback)"
    assert plan.code_query == expected.code_query and "fetch_with_retry" in plan.code_query
    assert plan.events_since == expected.events_since
    assert len(plan.notes["errors"]) == 2


class StuckModel:
    """A user's own ChatModel whose client ignores its timeout (a server that trickles
    its answer byte by byte holds an SDK call this way)."""

    name = "stuck"

    def __init__(self) -> None:
        self.release = threading.Event()

    def complete(self, system: str, user: str, *, timeout: float) -> str:
        self.release.wait(30)
        return "{}"


def test_a_model_that_never_returns_does_not_starve_the_fallback(server: ChatServer) -> None:
    stuck = StuckModel()
    llm = planner(stuck, openai_model(server, "good"), timeout=0.3)
    try:
        plans = [llm.plan(PROMPT) for _ in range(6)]
    finally:
        stuck.release.set()
        llm.close()
    assert [p.planner for p in plans] == ["llm:openai:good"] * 6
    # after two late answers the stuck model is skipped, not waited for again
    assert "past their deadline" in plans[-1].notes["errors"][0]


def test_an_unreachable_server_falls_back() -> None:
    dead = OpenAIChat("good", base_url="http://127.0.0.1:9/v1", api_key="k")
    plan = planner(dead, timeout=1.0).plan(PROMPT)
    assert plan.planner == "heuristic (fallback)"
    assert "fetch_with_retry" in plan.code_query


def test_a_missing_key_is_a_clear_error_that_also_falls_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = OpenAIChat("gpt-4o-mini")
    with pytest.raises(ChatUnavailableError, match="OPENAI_API_KEY"):
        model.complete("s", "u", timeout=1)
    assert planner(model).plan(PROMPT).planner == "heuristic (fallback)"


def test_google_adapter_speaks_gemini(server: ChatServer) -> None:
    model = GoogleChat("gemini-good", api_key="test-key", base_url=server.url)
    plan = planner(model).plan(PROMPT)
    assert plan.planner == "llm:google:gemini-good"
    assert plan.code_query == "fetch_with_retry RetryPolicy"
    request = server.requests[-1]
    assert request["path"].endswith("/models/gemini-good:generateContent")
    assert request["body"]["generationConfig"]["responseMimeType"] == "application/json"


def test_google_failure_falls_back_to_openai(server: ChatServer) -> None:
    google = GoogleChat("gemini-error", api_key="k", base_url=server.url)
    plan = planner(google, openai_model(server, "good")).plan(PROMPT)
    assert plan.planner == "llm:openai:good"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "null",
        "[]",
        '{"kb_query": "x"}',
        '{"kb_query": "x", "code_query": 3, "events_query": ""}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "kb_limit": -1}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "kb_limit": 500}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "kb_limit": true}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "kb_limit": NaN}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "events_since": "monday"}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "events_since": 5}',
        '{"kb_query": "", "code_query": "", "events_query": "", '
        '"events_since": "2026-02-01", "events_until": "2026-01-01"}',
        "[" * 100_000,
        '{"kb_query": "x", "code_query": "", "events_query": "", "parts": {"kb_query": "y"}}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "parts": ["y"]}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "parts": [{"kb_query": 1}]}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "parts": [{"kb_query": 0}]}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "events_recent": "yes"}',
        '{"kb_query": "x", "code_query": "", "events_query": "", "parts": ['
        + ", ".join(['{"kb_query": "y"}'] * 4)
        + "]}",
    ],
)
def test_plans_that_break_the_schema_are_refused(text: str) -> None:
    with pytest.raises(PlanError):
        plan_from_json(text, planner="llm:test")


def test_a_plans_json_form_reads_back_as_the_same_plan() -> None:
    plan = HeuristicPlanner().plan(
        "Our team runs an inventory service for three warehouses, with orders from a web "
        "shop and a partner feed, reconciled every night against what the scanners "
        "reported; the code was written by a contractor and the documentation is thin, "
        "so most of what we know lives in people's heads and in old chat threads. We "
        "would like to keep changes small, with tests for anything we touch.\n\n"
        "How should we handle HTTP 429 rate limits from the payment API?"
    )
    assert plan.parts
    again = plan_from_json(json.dumps(plan.to_dict()), planner=plan.planner)
    assert again == plan
    recent = HeuristicPlanner().plan("what was the latest deploy error?")
    assert recent.events_recent
    assert plan_from_json(json.dumps(recent.to_dict()), planner="heuristic") == recent
    # parts with no query are no parts; a plan without "parts" keeps its defaults'
    empty = (
        '{"kb_query": "x", "code_query": "", "events_query": "", "parts": [{}, {"kb_query": ""}]}'
    )
    assert plan_from_json(empty, planner="llm:test").parts == ()
    kept = plan_from_json(
        '{"kb_query": "x", "code_query": "", "events_query": ""}', planner="llm:test", defaults=plan
    )
    assert kept.parts == plan.parts


def test_schema_accepts_nulls_naive_times_and_integral_floats() -> None:
    plan = plan_from_json(
        '{"kb_query": null, "code_query": "a\\u0000  b", "events_query": "x", '
        '"events_since": "2026-11-20T10:00:00", "kb_limit": 2.0, "code_limit": null}',
        planner="llm:test",
    )
    assert plan.kb_query == "" and plan.code_query == "a b"
    assert plan.events_since == datetime(2026, 11, 20, 10, tzinfo=UTC)
    assert plan.kb_limit == 2 and plan.code_limit == EnrichmentPlan().code_limit
