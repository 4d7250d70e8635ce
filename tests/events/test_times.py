"""Time parsing for the event log: everything ends up as aware UTC."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from remembrances import InvalidInputError
from remembrances.events.times import (
    CLOCK_SKEW,
    from_micros,
    parse_duration,
    to_micros,
    to_utc,
    window,
)


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is America/New_York for the test (naive times are local)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def sao_paulo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is America/Sao_Paulo: on 2018-02-17 its clocks went back at midnight,
    so 23:00-23:59 of that day happened twice."""
    monkeypatch.setenv("TZ", "America/Sao_Paulo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", timedelta(minutes=30)),
        ("12h", timedelta(hours=12)),
        ("7d", timedelta(days=7)),
        ("4w", timedelta(weeks=4)),
        ("1h30m", timedelta(minutes=90)),
        (" 2 days ", timedelta(days=2)),
        ("1.5h", timedelta(minutes=90)),
        ("45s", timedelta(seconds=45)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    assert parse_duration(text, "last") == expected


@pytest.mark.parametrize(
    "bad", ["", "7", "7x", "-1d", "0d", "d", "7d; DROP TABLE", math.nan, math.inf, -5, True, []]
)
def test_bad_durations(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="last"):
        parse_duration(bad, "last")


def test_numbers_and_timedeltas_are_durations() -> None:
    assert parse_duration(90, "x") == timedelta(seconds=90)
    assert parse_duration(timedelta(hours=1), "x") == timedelta(hours=1)
    with pytest.raises(InvalidInputError):
        parse_duration(timedelta(0), "x")


def test_iso_strings_in_any_zone_become_utc() -> None:
    expected = datetime(2026, 3, 8, 10, 0, tzinfo=UTC)
    for text in (
        "2026-03-08T10:00:00Z",
        "2026-03-08T10:00:00+00:00",
        "2026-03-08T20:00:00+10:00",
        "2026-03-08T03:00:00-07:00",
    ):
        value = to_utc(text, "at")
        assert value == expected and value.tzinfo is UTC


def test_naive_times_are_local_time_including_dst(new_york: None) -> None:
    # New York switches to EDT (UTC-4) on 2026-03-08 at 02:00.
    assert to_utc(datetime(2026, 3, 7, 12, 0), "at") == datetime(2026, 3, 7, 17, 0, tzinfo=UTC)
    assert to_utc(datetime(2026, 3, 9, 12, 0), "at") == datetime(2026, 3, 9, 16, 0, tzinfo=UTC)
    assert to_utc("2026-03-09T12:00:00", "at") == datetime(2026, 3, 9, 16, 0, tzinfo=UTC)


def test_epoch_seconds_and_micros_round_trip() -> None:
    value = to_utc(1_795_000_000.123456, "at")
    assert value.tzinfo is UTC
    micros = to_micros(value)
    assert from_micros(micros) == value
    aware = datetime(2026, 11, 21, 5, 6, 7, 890123, tzinfo=ZoneInfo("Australia/Sydney"))
    assert from_micros(to_micros(to_utc(aware, "at"))) == aware


@pytest.mark.parametrize(
    "bad", ["yesterday", "2026-13-01", "", math.nan, True, b"2026-01-01", [2026], 1e300]
)
def test_bad_times(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="at"):
        to_utc(bad, "at")


def test_window_takes_the_later_start_and_refuses_reversed_bounds() -> None:
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    start, end = window(since="2026-11-01T00:00:00Z", last="1d", now=now)
    assert (start, end) == (now - timedelta(days=1), now + CLOCK_SKEW)  # ends now
    start, _ = window(since="2026-11-21T06:00:00-03:00", last="7d", now=now)
    assert start == datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
    with pytest.raises(InvalidInputError, match="after until"):
        window(since="2026-11-21T00:00:00Z", until="2026-11-20T00:00:00Z")
    # a since after now with last: the window is empty, not "swap them" (no until given)
    start, end = window(since="2026-12-01T00:00:00Z", last="7d", now=now)
    assert start is not None and end is not None and start > end
    assert window() == (None, None)
    fixed = timezone(timedelta(hours=5, minutes=30))
    assert window(until=datetime(2026, 1, 1, 5, 30, tzinfo=fixed))[1] == datetime(
        2026, 1, 1, tzinfo=UTC
    )


def test_an_until_written_as_a_date_ends_with_that_day() -> None:
    last_moment = datetime(2026, 11, 25, 23, 59, 59, 999999).astimezone(UTC)  # local, as dates are
    for day in ("2026-11-25", " 2026-11-25 ", "20261125"):
        start, end = window(since=day, until=day)
        assert end == last_moment and start == datetime(2026, 11, 25).astimezone(UTC)
    # a time given is the time meant
    assert window(until="2026-11-25T00:00:00Z")[1] == datetime(2026, 11, 25, tzinfo=UTC)
    assert window(until="2026-11-25T00:00")[1] == datetime(2026, 11, 25).astimezone(UTC)


def test_a_dates_end_keeps_an_hour_said_twice(sao_paulo: None) -> None:
    start, end = window(since="2018-02-17", until="2018-02-17")
    second_pass = datetime(2018, 2, 18, 2, 30, tzinfo=UTC)  # 23:30 local, the second time
    assert start is not None and end is not None and start <= second_pass <= end
    assert end == datetime(2018, 2, 18, 2, 59, 59, 999999, tzinfo=UTC)


def test_the_last_dates_end_with_the_latest_time_an_event_may_have() -> None:
    # the day after 9999-12-31 cannot be written; it was an OverflowError (an HTTP 500)
    for day in ("9999-12-31", "9999-12-30", "99991231"):
        _, end = window(until=day)
        assert end is not None and end.year == 9999
        to_micros(end)  # in range: a search with it runs
