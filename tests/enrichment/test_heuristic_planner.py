"""HeuristicPlanner on a table of prompts: what each source is asked, and when."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remembrances.enrichment import EnrichmentPlan, HeuristicPlanner, QueryPlanner

# Saturday 21 November 2026, 15:30 UTC.
NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)


@pytest.fixture
def planner() -> HeuristicPlanner:
    return HeuristicPlanner(now=lambda: NOW)


def words(query: str) -> set[str]:
    return set(re.findall(r"[\w./-]+", query.lower()))


@pytest.mark.parametrize(
    ("prompt", "code_has", "kb_has", "nowhere"),
    [
        (
            "Can you please explain how the retry backoff works for HTTP 429 errors?",
            ["HTTP 429"],
            ["retry", "backoff", "429"],
            ["please", "can", "explain", "you"],
        ),
        (
            "fix the bug in remembrances/store.py where Store.search raises KeyError: missing id",
            ["remembrances/store.py", "Store.search", "KeyError: missing id"],
            ["raises"],
            ["fix", "bug"],
        ),
        (
            "why does parse_config() fail with TypeError: 'NoneType' object is not subscriptable",
            ["parse_config", "TypeError: 'NoneType' object is not subscriptable"],
            ["fail"],
            ["why", "does", "()"],
        ),
        (
            "show me the VectorIndex class and how top_k works",
            ["VectorIndex", "top_k"],
            ["VectorIndex"],
            ["show", "me"],
        ),
        (
            "How does getUserName handle unicode in src/users/names.ts?",
            ["getUserName", "src/users/names.ts"],
            ["unicode", "handle"],
            ["how", "does"],
        ),
        (
            'Where is "connection pool exhausted" logged?',
            ["connection pool exhausted"],
            ["connection pool exhausted", "logged"],
            ["where"],
        ),
        (
            "could you look at the sqlite-vec and FTS5 setup with sha256 hashes",
            ["sqlite-vec", "FTS5", "sha256"],
            ["setup", "hashes"],
            ["could", "look"],
        ),
    ],
)
def test_keeps_identifiers_paths_errors_and_drops_request_words(
    planner: HeuristicPlanner,
    prompt: str,
    code_has: list[str],
    kb_has: list[str],
    nowhere: list[str],
) -> None:
    plan = planner.plan(prompt)
    assert plan.planner == "heuristic"
    for term in code_has:
        assert term in plan.code_query, (term, plan.code_query)
    for term in kb_has:
        assert term in plan.kb_query, (term, plan.kb_query)
    for word in nowhere:
        assert word not in words(plan.kb_query), (word, plan.kb_query)
    # Events and code are searched with the prompt as said (measured on conversation
    # memory and on the development suite's code sets).
    assert plan.events_query == plan.code_query == " ".join(prompt.split())


def test_identifiers_raise_the_code_count(planner: HeuristicPlanner) -> None:
    with_code = planner.plan("what does Store.search return")
    without = planner.plan("what is our policy on vacation days")
    assert with_code.code_limit > without.code_limit
    assert without.code_limit >= 1 and without.kb_limit >= 1


@pytest.mark.parametrize(
    ("prompt", "since", "until"),
    [
        (
            "what did we decide about the migration yesterday?",
            "2026-11-20T00:00",
            "2026-11-20T23:59:59.999999",
        ),
        ("what happened since Monday?", "2026-11-16T00:00", "now"),
        ("deploy incidents in the last 3 days", "2026-11-18T15:30", "now"),
        ("errors over the past 24 hours", "2026-11-20T15:30", "now"),
        ("what did I do this morning", "2026-11-21T00:00", "now"),
        ("notes from earlier today", "2026-11-21T00:00", "now"),
        ("what changed last week", "2026-11-09T00:00", "now"),
        ("what changed this week", "2026-11-16T00:00", "now"),
        ("the outage two days ago", "2026-11-18T15:30", "2026-11-20T15:30"),
        ("what happened on 2026-11-02", "2026-11-02T00:00", "2026-11-02T23:59:59.999999"),
        ("anything since 2026-10-01?", "2026-10-01T00:00", "now"),
        ("the meeting on Tuesday", "2026-11-17T00:00", "2026-11-17T23:59:59.999999"),
        ("what did we ship last month", "2026-10-01T00:00", "now"),
        # Said on Saturday 21 November: this weekend so far, and the one before.
        ("what happened over the weekend?", "2026-11-21T00:00", "now"),
        ("what broke last weekend?", "2026-11-14T00:00", "2026-11-15T23:59:59.999999"),
        ("what happened on Nov 17?", "2026-11-17T00:00", "2026-11-17T23:59:59.999999"),
        (
            "the outage on the 3rd of November 2025",
            "2025-11-03T00:00",
            "2025-11-03T23:59:59.999999",
        ),
        ("incidents in October", "2026-10-01T00:00", "2026-10-31T23:59:59.999999"),
        ("anything in December?", "2025-12-01T00:00", "2025-12-31T23:59:59.999999"),
        ("what did we ship the week before last", "2026-11-02T00:00", "2026-11-08T23:59:59.999999"),
        ("what changed since Nov 17?", "2026-11-17T00:00", "now"),
        ("the weekend before last", "2026-11-07T00:00", "2026-11-08T23:59:59.999999"),
        # a relative phrase says when; a date beside it is the subject
        (
            "why did the Nov 17 release break yesterday?",
            "2026-11-20T00:00",
            "2026-11-20T23:59:59.999999",
        ),
        ("what did we plan in May 2023?", "2023-05-01T00:00", "2023-05-31T23:59:59.999999"),
        # a search errs wide (above), a listing does not: it ends with the period named
        ("what happened last week?", "2026-11-09T00:00", "2026-11-15T23:59:59.999999"),
        ("what did we do last month?", "2026-10-01T00:00", "2026-10-31T23:59:59.999999"),
        ("what did we decide last week?", "2026-11-09T00:00", "2026-11-15T23:59:59.999999"),
        ("what happened during last week?", "2026-11-09T00:00", "2026-11-15T23:59:59.999999"),
        ("what happened in last week?", "2026-11-09T00:00", "2026-11-15T23:59:59.999999"),
        # "the last week" and "the past month" are the last 7 or 30 days, up to now
        ("what happened in the last week?", "2026-11-09T00:00", "now"),
        ("what happened over the past month?", "2026-10-01T00:00", "now"),
    ],
)
def test_time_phrases_become_a_utc_window(
    planner: HeuristicPlanner, prompt: str, since: str, until: str
) -> None:
    plan = planner.plan(prompt)
    assert plan.events_since == datetime.fromisoformat(since).replace(tzinfo=UTC)
    expected_until = NOW if until == "now" else datetime.fromisoformat(until).replace(tzinfo=UTC)
    assert plan.events_until == expected_until
    assert plan.events_since is not None and plan.events_since.utcoffset() == timedelta(0)
    assert plan.events_limit > HeuristicPlanner().events_limit


def test_time_phrase_is_not_searched_as_words(planner: HeuristicPlanner) -> None:
    plan = planner.plan("what did we decide about the database migration yesterday?")
    assert {"decide", "database", "migration"} <= words(plan.events_query)
    assert "yesterday" not in words(plan.events_query) | words(plan.kb_query)


@pytest.mark.parametrize(
    "prompt",
    [
        "get the last friday of the current month",
        "the last day of each month is a holiday",
        "deploys run every Monday",
        "we back up each day at noon",
        "we deploy every other Monday",
        "the report is sent every second Friday",
        "standups are every Monday, Wednesday and Friday",
        "we release every 2 weeks on Monday",
        "the cache is flushed twice a week on Tuesday",
        "payroll runs every two weeks on Friday",
        "we back up three times a week on Sunday",
        "the audit is biweekly on Monday",
    ],
)
def test_a_place_in_a_period_or_a_recurrence_is_not_a_window(
    planner: HeuristicPlanner, prompt: str
) -> None:
    # The phrase is the question's subject, not when it happened: searched as words.
    plan = planner.plan(prompt)
    assert plan.events_since is None and plan.events_until is None
    assert plan.kb_query == plan.code_query == prompt
    # The same words as a time still are one, and so is a window "of" something else.
    assert planner.plan("what did we decide last friday?").events_since is not None
    assert planner.plan("show me the last 3 days of logs").events_since is not None
    assert planner.plan("what did we deploy on Monday and Thursday?").events_since is not None
    assert planner.plan("every deploy since Monday failed").events_since is not None
    for windowed in (
        "why did the backup only run twice a week last month?",
        "we have been deploying every 2 weeks since January, what broke?",
        "the job runs every 3 days since Monday",
    ):
        assert planner.plan(windowed).events_since is not None, windowed


def test_a_date_stays_in_the_kb_and_code_queries(planner: HeuristicPlanner) -> None:
    # "January 31st" is words a note or code may hold; "yesterday" is not.
    plan = planner.plan("what happens when I add one month to January 31st?")
    assert plan.events_since is not None
    assert "January 31st" in plan.kb_query and "January 31st" in plan.code_query
    assert "January" not in plan.events_query
    assert planner.plan("the Feb 30 outage report").events_since is None  # not a date
    assert planner.plan("I may march in the parade").events_since is None  # verbs


@pytest.mark.parametrize(
    "prompt",
    [
        "Python 3 may break this",
        "you may 1) restart the worker",
        "round to 2 dec places",
        "print a number in oct?",
        "show the value in dec and hex",
        "sort in march order",
        "what happened in June 2099?",  # still to come
    ],
)
def test_prose_that_looks_like_a_date_is_no_window(planner: HeuristicPlanner, prompt: str) -> None:
    assert planner.plan(prompt).events_since is None


def test_feb_29_is_the_latest_leap_day() -> None:
    later = HeuristicPlanner(now=lambda: datetime(2029, 3, 1, tzinfo=UTC)).plan("on Feb 29")
    assert later.events_since == datetime(2028, 2, 29, tzinfo=UTC)


def test_hedges_are_dropped_but_not_the_words_they_resemble(planner: HeuristicPlanner) -> None:
    assert "Maybe" in planner.plan("how does the Maybe type work in Haskell?").kb_query
    assert "bit" in planner.plan("how do I flip a bit flag").kb_query.split()
    told = planner.plan("could you maybe tell me a little about the reloader?").kb_query
    assert "maybe" not in told and "little" not in told and "reloader" in told


@pytest.mark.parametrize(
    "prompt",
    ["what happened on Dec 31 9999?", "in December 9999", "on 9999-12-31", "on Jan 1 0001"],
)
@pytest.mark.parametrize("hours", [0, 5, -5])
def test_dates_at_the_calendars_edges_plan_without_error(prompt: str, hours: int) -> None:
    # A window past year 9999 or before year 1 cannot be built: no window, no error.
    planner = HeuristicPlanner(now=lambda: NOW, tz=timezone(timedelta(hours=hours)))
    plan = planner.plan(prompt)
    if plan.events_since is not None:
        assert plan.events_until is None or plan.events_since <= plan.events_until


def test_last_and_latest_favour_recent_events(planner: HeuristicPlanner) -> None:
    assert planner.plan("why did the last deploy fail?").events_recent
    assert planner.plan("show the latest incident").events_recent
    assert not planner.plan("why did the deploy fail?").events_recent
    # "last" in a time phrase names the window, not the newest
    assert not planner.plan("what happened last week?").events_recent
    assert not planner.plan("deploys in the last 3 days").events_recent
    # what holds today: a later fact replaces an older one
    for prompt in ("am I still vegetarian?", "what do I drink these days?", "where do I live now?"):
        assert planner.plan(prompt).events_recent, prompt


@pytest.mark.parametrize(
    "prompt",
    [
        "format a timedelta like '2 hours ago'",
        'which function prints "yesterday" or "3 days ago" for a datetime?',
        "what does `today` mean in the template?",
        'parse "last week" with dateparser',
    ],
)
def test_a_quoted_time_phrase_is_text_to_look_up_not_a_time(
    planner: HeuristicPlanner, prompt: str
) -> None:
    # quoted strings are protected terms: the phrase is what the code or notes hold
    plan = planner.plan(prompt)
    assert plan.events_since is None and plan.events_until is None
    assert not plan.events_recent and "time_phrase" not in plan.notes
    quoted = re.findall(r"['\"`]([^'\"`]+)['\"`]", prompt)
    for query in (plan.kb_query, plan.code_query, plan.events_query):
        assert all(q in query for q in quoted), query
    # outside the quotes a phrase is still a time; a prompt quoted whole is the prompt,
    # and apostrophes and inch marks are no quotes
    for said in (
        '"what did we decide last week?"',
        "we rolled 'em back last week, did it break the admins' dashboards?",
        'the 27" monitor I ordered last week vs the 32" one',
    ):
        assert planner.plan(said).events_since is not None, said
    assert "decisions" in planner.plan('"what did we decide last week?"').events_query
    plan = planner.plan("what did we say yesterday about the '2 hours ago' format?")
    assert plan.events_since == datetime(2026, 11, 20, tzinfo=UTC)
    assert "2 hours ago" in plan.code_query


def test_a_time_phrase_alone_still_asks_the_event_log(planner: HeuristicPlanner) -> None:
    plan = planner.plan("What happened yesterday?")
    assert plan.events_query == "" and plan.kb_query == "" and plan.code_query == ""
    assert plan.has_time_window


def test_a_day_ends_before_the_next_midnight() -> None:
    """``until`` is inclusive: an event at today's 00:00 is not yesterday's."""
    plan = HeuristicPlanner(now=lambda: NOW).plan("what did we talk about yesterday?")
    midnight = datetime(2026, 11, 21, tzinfo=UTC)
    assert plan.events_since == midnight - timedelta(days=1)
    assert plan.events_until is not None and plan.events_until < midnight


@pytest.fixture
def los_angeles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's zone is Los Angeles' for the test (the suite runs in UTC)."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def test_days_are_the_machines_by_default_and_a_plans_zone_wins(los_angeles: None) -> None:
    # 15:30 UTC is 07:30 PST on the 21st: yesterday is the 20th in Los Angeles.
    planner = HeuristicPlanner(now=lambda: NOW)
    plan = planner.plan("what happened yesterday")
    assert plan.events_since == datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
    # A zone given to the planner, or to one plan, is used instead.
    assert HeuristicPlanner(now=lambda: NOW, tz=UTC).plan("yesterday?").events_since == (
        datetime(2026, 11, 20, tzinfo=UTC)
    )
    # 00:30 on the 22nd in Tokyo: yesterday is the 21st there.
    plan = planner.plan("what happened yesterday", tz=ZoneInfo("Asia/Tokyo"))
    assert plan.events_since == datetime(2026, 11, 20, 15, 0, tzinfo=UTC)


def test_the_machines_days_keep_daylight_saving_in_any_season(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        # Noon in Berlin on 1 July (UTC+2), planned in November (UTC+1): yesterday is
        # the 30th of June in Berlin, as events.log reads a naive 00:30 that day.
        summer = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
        plan = HeuristicPlanner(now=lambda: summer).plan("what did we deploy yesterday?")
        assert plan.events_since == datetime(2026, 6, 29, 22, 0, tzinfo=UTC)
        assert plan.events_since == datetime(2026, 6, 30, 0, 0).astimezone(UTC)
        # The day the clocks go back is 25 hours long.
        after = datetime(2026, 10, 26, 12, 0, tzinfo=UTC)
        plan = HeuristicPlanner(now=lambda: after).plan("what happened yesterday?")
        assert plan.events_until is not None and plan.events_since is not None
        assert plan.events_until - plan.events_since > timedelta(hours=24, minutes=59)
    finally:
        monkeypatch.setenv("TZ", "UTC")
        time.tzset()


def test_days_follow_the_given_time_zone_and_come_out_in_utc() -> None:
    tokyo = timezone(timedelta(hours=9))
    # 15:30 UTC is 00:30 on the 22nd in Tokyo, so "yesterday" there is the 21st.
    plan = HeuristicPlanner(now=lambda: NOW, tz=tokyo).plan("what happened yesterday")
    assert plan.events_since == datetime(2026, 11, 20, 15, 0, tzinfo=UTC)
    assert plan.events_until == datetime(2026, 11, 21, 14, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(
    "prompt",
    [
        *("", "   ", "hi", "thanks!", "can you please help me?", "ok", "perfect", "go on"),
        *("thanks, that worked!", "no, the other one", "try again", "yes please"),
        *("sorry, I meant the first one", "what time is it?"),
        *("how does it work?", "does this work?", "why is my code not working?"),
        # about the assistant, not a fact to look up
        *("I like you", "do you like me?", "are you working?", "can you use the other one?"),
    ],
)
def test_prompts_without_content_plan_nothing(planner: HeuristicPlanner, prompt: str) -> None:
    plan = planner.plan(prompt)
    assert (plan.kb_query, plan.code_query, plan.events_query) == ("", "", "")
    assert not plan.has_time_window


@pytest.mark.parametrize(
    "prompt",
    [
        "\udcff lone surrogate in parse_config",
        "\x00\x01binary\x02 Store.search",
        'AND OR NOT NEAR( "unbalanced * ^ -',
        "x" * 200_000,
        "🙂 émoji naïve café 数据库 迁移",
    ],
)
def test_hostile_prompts_give_a_clean_plan(planner: HeuristicPlanner, prompt: str) -> None:
    plan = planner.plan(prompt)
    for query in (plan.kb_query, plan.code_query, plan.events_query):
        query.encode("utf-8")  # no lone surrogates survive
        assert "\x00" not in query
        assert len(query) <= 1000


def test_non_string_prompt_is_planned_as_text(planner: HeuristicPlanner) -> None:
    assert planner.plan(None).kb_query == ""  # type: ignore[arg-type]


def test_is_a_query_planner() -> None:
    assert isinstance(HeuristicPlanner(), QueryPlanner)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_plans_without_error(prompt: str) -> None:
    plan = HeuristicPlanner(now=lambda: NOW).plan(prompt)
    assert isinstance(plan, EnrichmentPlan)
    for query in (plan.kb_query, plan.code_query, plan.events_query):
        query.encode("utf-8")
    if plan.events_since is not None and plan.events_until is not None:
        assert plan.events_since <= plan.events_until


def test_reply_words_beside_other_words_stay_in_the_queries(planner: HeuristicPlanner) -> None:
    plan = planner.plan("limit the user to picking one value from a fixed list")
    assert "one" in words(plan.kb_query) and "one" in words(plan.events_query)
    other = planner.plan("no, the other branch")  # "branch" is news: searched as said
    assert other.kb_query == other.events_query == "no, the other branch"


def test_the_kb_gets_the_prompt_less_its_request_phrases(planner: HeuristicPlanner) -> None:
    # Sentence order stays (the model embeds sentences, not keyword lists); request
    # phrases go, except inside a quoted string or a path.
    plan = planner.plan(
        'Can you please explain why "find the user" fails in src/check/find.py for admins?'
    )
    assert plan.kb_query == 'why "find the user" fails in src/check/find.py for admins?'
    assert plan.code_query == plan.events_query  # as said
    assert "please" in words(plan.code_query)


@pytest.mark.parametrize(
    "prompt",
    [
        "return check(find(items), write=True) raises an error",
        "why does https://example.com/api/check/find?write=1 return 404",
        "the Write-Ahead Log grows without bound",
    ],
)
def test_code_and_urls_keep_words_that_are_request_phrases_in_prose(
    planner: HeuristicPlanner, prompt: str
) -> None:
    query = planner.plan(prompt).kb_query
    for kept in ("check", "find", "write"):
        if kept in prompt.lower():
            assert kept in query.lower(), (kept, query)


TRACEBACK = """I get this when I open the home page:

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/flask/app.py", line 1498, in __call__
    return self.wsgi_app(environ, start_response)
  File "/venv/lib/python3.11/site-packages/flask/app.py", line 1473, in wsgi_app
    response = self.full_dispatch_request()
  File "/app/views.py", line 12, in index
    return redirect(url_for("profile", user=name))
  File "/venv/lib/python3.11/site-packages/flask/app.py", line 1084, in url_for
    return self.handle_url_build_error(error, endpoint, values)
werkzeug.routing.exceptions.BuildError: Could not build url for endpoint 'profile'.
"""


def test_a_pasted_traceback_is_searched_by_its_error_and_last_frames(
    planner: HeuristicPlanner,
) -> None:
    plan = planner.plan(TRACEBACK)
    for query in (plan.kb_query, plan.code_query):
        assert "BuildError" in query and "handle_url_build_error" in query
        assert "/app/views.py" in query  # the user's own frame
        assert "wsgi_app" not in query and "__call__" not in query  # the entry points
    # the exception comes first, where an embedding reads it for sure
    assert plan.code_query.index("BuildError") < plan.code_query.index("/app/views.py")
    assert plan.code_query.startswith("I get this when I open the home page:")


def test_a_windows_traceback_keeps_the_users_frame(planner: HeuristicPlanner) -> None:
    windows = (
        "Traceback (most recent call last):\n"
        '  File "C:\\Users\\me\\app\\views.py", line 12, in index\n'
        "    data = json.loads(body)\n"
        '  File "C:\\Python311\\Lib\\json\\decoder.py", line 337, in decode\n'
        "    obj, end = self.raw_decode(s)\n"
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
    )
    query = planner.plan(windows).code_query
    assert "views.py" in query and "decoder.py" in query and "JSONDecodeError" in query


@pytest.mark.parametrize(
    "prompt",
    [
        *("where do I work?", "who does she work for?", "what do we need?", "what do I like?"),
        *("do you remember where I work?", "can you remind me what I like?"),
        *("what do you think I need?", "which one do I like?"),
    ],
)
def test_a_meta_word_is_the_topic_when_a_person_is_its_subject(
    planner: HeuristicPlanner, prompt: str
) -> None:
    # "work", "like" and "need" are meta in "how does it work?"; these asked nothing
    plan = planner.plan(prompt)
    assert plan.events_query == prompt
    assert plan.kb_query
