"""A prompt about the conversation itself ("where did we leave off?") gets the latest
conversation as it went, not a search for "talk" or "session". Real store, hash
embedder, the heuristic planner."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

import remembrances
from remembrances import RemembrancesService
from remembrances.enrichment import HeuristicPlanner, sources
from remembrances.enrichment.plan import PlanError, plan_from_json

NOW = datetime(2026, 11, 26, 15, 0, tzinfo=UTC)
RATE_LIMITS = [
    {"role": "user", "content": "I want to add rate limiting to the public API."},
    {"role": "assistant", "content": "A token bucket per API key, kept in Redis."},
    {"role": "user", "content": "Which limit should we start with?"},
    {"role": "assistant", "content": "100 requests per minute, more for paid plans."},
]
BACKUPS = [
    {"role": "user", "content": "The nightly backup job failed with a disk full error."},
    {"role": "assistant", "content": "Rotate backups older than 14 days."},
    {"role": "user", "content": "Also compress them."},
    {"role": "assistant", "content": "Done: rotated after 14 days, compressed with zstd."},
]
BOBS = [{"role": "user", "content": "Bob's question about invoices."}]

RECAPS = [
    "where did we leave off?",
    "Where were we?",
    "summarise our last conversation",
    "what did we talk about last time?",
    "can you recap our previous session?",
    "catch me up",
    "what did we decide?",
    "what were we talking about?",
    "continue where we left off",
]


@pytest.fixture
def memory(location: str) -> Iterator[RemembrancesService]:
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.kb.add("Sessions are stored in signed cookies.", source="sessions.md")
        svc.events.log_conversation(
            RATE_LIMITS, session="a1", user="alice", at=NOW - timedelta(days=2)
        )
        svc.events.log_conversation(
            BACKUPS, session="a2", user="alice", at=NOW - timedelta(hours=3)
        )
        svc.events.log_conversation(BOBS, session="b1", user="bob", at=NOW - timedelta(hours=1))
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        yield svc


@pytest.mark.parametrize("prompt", RECAPS)
def test_a_recap_prompt_plans_the_latest_conversation_and_no_search(prompt: str) -> None:
    plan = HeuristicPlanner(now=lambda: NOW).plan(prompt)
    assert plan.events_recap and not plan.has_time_window
    assert (plan.kb_query, plan.code_query, plan.events_query) == ("", "", "")


@pytest.mark.parametrize(
    "prompt",
    [
        "what is a session?",  # a word about conversations is not a recap
        "how do I talk to the database?",
        "what did we decide about backups?",  # a topic: searched
        "where were the logs stored?",
        "summarise the deploy guide",
    ],
)
def test_a_prompt_with_a_topic_is_searched(prompt: str) -> None:
    plan = HeuristicPlanner(now=lambda: NOW).plan(prompt)
    assert not plan.events_recap and plan.events_query


@pytest.mark.parametrize(
    "prompt", ["yes, we agreed", "sure, I decided", "ok you said yes", "this conversation is great"]
)
def test_a_reply_about_the_conversation_is_not_a_recap(prompt: str) -> None:
    """Said, not asked: the agent has the turns it answers; a recap would repeat them."""
    assert not HeuristicPlanner(now=lambda: NOW).plan(prompt).events_recap


def test_a_recap_of_a_day_lists_that_day() -> None:
    plan = HeuristicPlanner(now=lambda: NOW).plan("what did we talk about yesterday?")
    assert plan.has_time_window and not plan.events_recap and plan.events_query == ""


def test_a_windows_decisions_are_searched_for_not_listed(location: str) -> None:
    # A busy week: twelve routine events newer than the decision would fill a listing.
    plan = HeuristicPlanner(now=lambda: NOW).plan("what did we decide last week?")
    assert plan.has_time_window and "decide" in plan.events_query
    assert plan.kb_query == plan.code_query == ""  # nothing to look up elsewhere
    with remembrances.open(location, embedder="local") as svc:
        svc.events.log(
            "We decided to pin werkzeug below 3.1 until the proxy fix lands",
            subject="decision",
            at=NOW - timedelta(days=8),
        )
        for hour in range(12):
            svc.events.log(
                f"Nightly build {hour} passed", subject="ci", at=NOW - timedelta(days=3, hours=hour)
            )
        # a decision of two months ago says "decided" too: outside the window, left out
        svc.events.log(
            "We decided to drop Python 3.8", subject="decision", at=NOW - timedelta(days=60)
        )
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        block = svc.enrich_context("what did we decide last week?")
    assert "pin werkzeug" in block, block
    assert "Python 3.8" not in block, block
    # a reply before the question names no decision to look for: the day is listed
    reply = HeuristicPlanner(now=lambda: NOW).plan("agreed. what did we talk about yesterday?")
    assert reply.has_time_window and reply.events_query == ""


#: A conversation that settled something, logged the day before ``NOW``.
BILLING = [
    "We need to pick a database for the billing service.",
    "Options are PostgreSQL or DynamoDB. What are your constraints?",
    "We need strong transactions and already run Postgres 15 elsewhere.",
    "Then PostgreSQL is the better fit. Decision: billing uses PostgreSQL 15.",
    "Agreed. Let's also cap connection pools at 40 per service.",
    "Noted: pool size 40. Next is the migration for the invoices table.",
]


def billing_messages() -> list[dict[str, str]]:
    return [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(BILLING)]


def test_a_quiet_windows_decisions_are_all_listed(location: str) -> None:
    # six turns in the window, under the limit: all of them, not only those a search
    # for "decide" finds ("Agreed. Let's also cap ..." shares no word with it)
    said = BILLING
    messages = billing_messages()
    with remembrances.open(location, embedder="local") as svc:
        svc.events.log_conversation(messages, session="s", user="ana", at=NOW - timedelta(days=1))
        svc.events.log("Deployed 2.3", subject="deploys", at=NOW - timedelta(days=9))
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        block = svc.enrich_context("what did we decide yesterday?", user="ana")
    positions = [block.find(text) for text in said]
    assert -1 not in positions and positions == sorted(positions), block
    assert "Deployed 2.3" not in block


def test_a_question_about_a_decision_finds_the_turn_that_made_it(location: str) -> None:
    # "decide" and "Decision" stem apart: the deciding turn scored under the item floor
    planner = HeuristicPlanner(now=lambda: NOW)
    assert planner.plan("what did we decide about the database?").events_query.endswith("decisions")
    assert "decisions" not in planner.plan("yes, we agreed on the database").events_query
    messages = billing_messages()
    with remembrances.open(location, embedder="local") as svc:
        svc.events.log_conversation(messages, session="s", user="ana", at=NOW - timedelta(days=1))
        svc.enricher.planner = planner
        block = svc.enrich_context("what did we decide yesterday about the database?", user="ana")
    assert "Decision: billing uses PostgreSQL 15." in block, block


def test_where_did_we_leave_off_shows_the_latest_conversation_in_order(
    memory: RemembrancesService,
) -> None:
    block = memory.enrich_context("where did we leave off?", user="alice")
    said = [m["content"] for m in BACKUPS]
    positions = [block.find(text) for text in said]
    assert -1 not in positions and positions == sorted(positions), block
    assert "rate limiting" not in block and "invoices" not in block
    assert "signed cookies" not in block  # nothing was searched


def test_a_recap_keeps_to_its_scope(memory: RemembrancesService) -> None:
    # unscoped: the latest conversation of anyone, labelled with its user
    assert "(bob)" in memory.enrich_context("where were we?")
    assert "rate limiting" in memory.enrich_context("where were we?", session="a1")
    assert memory.enrich_context("where were we?", user="carol") == ""


def test_a_conversation_that_just_started_recaps_the_users_previous_one(
    memory: RemembrancesService,
) -> None:
    """Asked at the start of a session: the user's last conversation, not the empty new
    one; with no user given, a session does not say whose other conversations to read."""
    memory.events.log_conversation(
        [{"role": "user", "content": "where did we leave off?"}], session="a3", user="alice"
    )
    block = memory.enrich_context("where did we leave off?", user="alice", session="a3")
    assert "Rotate backups older than 14 days." in block and "rate limiting" not in block
    alone = memory.enrich_context("where did we leave off?", session="a3")
    assert "Rotate backups" not in alone


def test_chats_opened_with_the_question_and_left_are_never_the_one_recapped(
    memory: RemembrancesService,
) -> None:
    """A client logs its transcript before it asks: a new chat holds the question (and
    its system prompt, which is left out), an abandoned one held only the question."""
    opened = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "where did we leave off?"},
    ]
    for session in ("a3", "a4"):  # a3 opened and left, a4 just opened
        memory.events.log_conversation(opened, session=session, user="alice")
        for scope in ({"session": session}, {}):  # in the new chat, or by user alone
            block = memory.enrich_context("where did we leave off?", user="alice", **scope)
            assert "Rotate backups older than 14 days." in block, (session, scope, block)
            assert "You are a helpful assistant" not in block


def test_many_chats_opened_and_left_are_passed_over(memory: RemembrancesService) -> None:
    # each such chat is read to see what it holds, a few at most: past them, the latest
    # conversation of two turns or more (a read per chat timed the source out at 10,000)
    opened = [{"role": "user", "content": "where did we leave off?"}]
    for n in range(3 * sources.ONE_TURN_SESSIONS_READ):
        memory.events.log_conversation(opened, session=f"left-{n}", user="alice")
    block = memory.enrich_context("where did we leave off?", user="alice", session="left-0")
    assert "Rotate backups older than 14 days." in block, block


def test_a_long_conversation_is_recapped_by_its_last_turns(location: str) -> None:
    chat = [{"role": "user", "content": f"step number {i} of the migration"} for i in range(40)]
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.events.log_conversation(chat, session="long", at=NOW)
        enrichment = svc.enricher.enrich("where did we leave off?")
    texts = [item.text for item in enrichment.items["events"]]
    assert texts[-1] == "step number 39 of the migration"
    assert "step number 0 of the migration" not in texts
    assert texts == sorted(texts, key=lambda t: int(t.split()[2]))


def test_without_conversations_a_recap_shows_the_newest_events(location: str) -> None:
    with remembrances.open(location, embedder="hash:64") as svc:
        assert svc.enrich_context("where did we leave off?") == ""
        svc.events.log("Shipped release 2.4", subject="deploy", at=NOW - timedelta(days=1))
        svc.events.log("Rolled back release 2.3", subject="deploy", at=NOW - timedelta(days=9))
        block = svc.enrich_context("where did we leave off?")
    assert block.find("Rolled back release 2.3") < block.find("Shipped release 2.4")
    assert "Shipped release 2.4" in block


def test_a_models_plan_may_ask_for_a_recap() -> None:
    raw = '{"kb_query": "", "code_query": "", "events_query": "", "events_recap": true}'
    assert plan_from_json(raw, planner="llm:test").events_recap
    with pytest.raises(PlanError, match="events_recap"):
        plan_from_json(raw.replace("true", '"yes"'), planner="llm:test")


def test_a_time_windows_turns_are_told_in_the_order_they_were_said(location: str) -> None:
    """Chosen by relevance, shown as they happened: a reply reads after what it answers."""
    said = [
        {"speaker": "Caroline", "text": "I went to a support group about counseling today."},
        {"speaker": "Melanie", "text": "That sounds empowering!"},
        {"speaker": "Caroline", "text": "I want to study counseling next year, Caroline says."},
        {"speaker": "Melanie", "text": "You would be great at that."},
    ]
    yesterday = NOW - timedelta(days=1)
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.events.log_conversation(said, session="c", at=yesterday)
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        enrichment = svc.enricher.enrich("what did Caroline say about counseling yesterday?")
    shown = [item.text.split("\n")[0] for item in enrichment.items["events"]]
    assert len(shown) >= 2
    assert shown == [m["text"] for m in said if m["text"] in shown]


def test_a_listed_window_is_shown_across_its_days_not_its_last_ones(location: str) -> None:
    # three notes a day through October: "what happened in October?" showed the last
    # four days of it alone
    with remembrances.open(location, embedder="hash:64") as svc:
        october = datetime(2026, 10, 1, tzinfo=UTC)
        svc.events.log_many(
            [
                {
                    "content": f"Diary {day + 1} Oct, {hour}h.",
                    "at": october + timedelta(day, hours=hour),
                }
                for day in range(31)
                for hour in (9, 13, 17)
            ]
        )
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        result = svc.enricher.enrich("what happened in October?")
        said = " ".join(item.text for item in result.items["events"])
        days = sorted({int(day) for day in re.findall(r"Diary (\d+) Oct", said)})
        assert len(days) >= 6 and days[0] <= 5 and days[-1] >= 27, days


def test_a_busy_days_chat_does_not_crowd_out_its_decisions(location: str) -> None:
    # "what happened this week?" kept a chat's turns and dropped the same day's decision
    # and code review: the places left after one event a stretch went to the newest
    monday = datetime(2026, 11, 23, tzinfo=UTC)
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.events.log_many(
            [
                {"content": f"Standup note of day {day}.", "at": monday + timedelta(day, hours=9)}
                for day in range(3)
            ]
            + [
                {"content": "Code review: stop using slugify.", "at": NOW - timedelta(hours=5)},
                {
                    "content": "Decided to use LRI for the config cache.",
                    "at": NOW - timedelta(hours=4),
                },
            ]
        )
        svc.events.log_conversation(
            [*RATE_LIMITS, *BACKUPS], session="busy", at=NOW - timedelta(hours=1)
        )
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        said = " ".join(
            i.text for i in svc.enricher.enrich("what happened this week?").items["events"]
        )
    assert "Decided to use LRI" in said and "Code review" in said, said
    assert all(f"day {day}" in said for day in range(3)), said


def test_the_windows_events_are_told_before_the_older_ones_found(location: str) -> None:
    # "what did we decide yesterday about the database?" showed September's decision
    # first and yesterday's last, in the order they happened
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.events.log(
            "Decided to shard the database by region.",
            subject="decision",
            at=NOW - timedelta(days=60),
        )
        svc.events.log(
            "Decided to use PostgreSQL for the database.",
            subject="decision",
            at=NOW - timedelta(days=1),
        )
        svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
        result = svc.enricher.enrich("what did we decide yesterday about the database?")
        told = [item.text for item in result.items["events"]]
        assert told[0].endswith("Decided to use PostgreSQL for the database.")
        assert any("shard" in text for text in told[1:])  # found too, after
