"""Time phrases in a prompt ("yesterday", "since Monday", "last 3 days") as a UTC window.

Day boundaries are taken in the planner's time zone (the machine's unless told
otherwise, per planner or per call) and the window is returned in UTC, because events are stored and compared in UTC.
Windows err on the wide side: "last week" starts at the previous week's Monday and
runs until now, so an event is not lost to an argument about what the phrase means.
"""

from __future__ import annotations

import calendar
import re
import time as _time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import InvalidInputError

_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_UNITS = {
    "minute": timedelta(minutes=1),
    "min": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "hr": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
    "month": timedelta(days=30),
    "year": timedelta(days=365),
}
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "couple of": 2,
    "few": 3,
}
_N = r"(\d{1,4}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|couple of|few)"
_UNIT = r"(minute|min|hour|hr|day|week|month|year)s?"
_DAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
#: A month by name or its short form ("Sept" too; full names first: the first that matches wins).
_SHORT_MONTHS = ["sept", *dict.fromkeys(m[:3] for m in _MONTHS if m != "may")]
_MONTH = rf"(?P<month>{'|'.join([*_MONTHS, *_SHORT_MONTHS])})\.?"
_DATE_DAY = r"(?P<day>\d{1,2})(?P<ordinal>st|nd|rd|th)?"
#: A year of this century or the last: "in October 1500 users" is no year.
_YEAR = r"(?:,?\s+(?P<year>(?:19|20)\d\d))?"
#: Month names that are also common words: a month only as "May", "in May 2023", "May 3".
_WORD_MONTHS = frozenset({"may", "march"})
#: Rules whose phrase is a date a note or a line of code may hold as words ("January
#: 31st", "2026-11-02"); the others ("yesterday", "last week") only say when.
_ABSOLUTE = frozenset({"since_date", "on_date", "month_day", "day_month", "month"})
_ISO_DATE = r"(\d{4}-\d{2}-\d{2})"


@dataclass(frozen=True)
class TimeWindow:
    since: datetime | None
    until: datetime | None
    phrase: str
    #: A date ("January 31st"), which a note or code may also hold as words.
    absolute: bool = False
    #: Where the period named ends, when the window runs on to now to err wide ("last
    #: week": its Sunday). A prompt that only lists the period asks for this much.
    period_until: datetime | None = None


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(r"\b" + text + r"\b", re.IGNORECASE)


# Order matters: longer, more specific phrases first.
_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "last_n",
        _pattern(
            rf"(?:in\s+|over\s+|during\s+|within\s+)?(?:the\s+)?(?:last|past|previous)\s+{_N}\s+{_UNIT}"
        ),
    ),
    ("ago", _pattern(rf"{_N}\s+{_UNIT}\s+ago")),
    ("since_day", _pattern(rf"since\s+(?:last\s+)?{_DAY}")),
    ("since_date", _pattern(rf"since\s+{_ISO_DATE}")),
    ("since_yesterday", _pattern(r"since\s+yesterday")),
    ("on_date", _pattern(rf"(?:on\s+)?{_ISO_DATE}")),
    (
        "weekend",
        _pattern(
            r"(?:over\s+|during\s+|on\s+)?(?:the|this|last|past)\s+weekend(?P<before>\s+before\s+last)?"
        ),
    ),
    ("week_before_last", _pattern(r"(?:in\s+|during\s+)?the\s+week\s+before\s+last")),
    ("part_of_today", _pattern(r"(?:earlier\s+)?this\s+(morning|afternoon|evening)|tonight")),
    ("last_night", _pattern(r"last\s+night")),
    (
        "yesterday",
        _pattern(
            r"(?:the\s+day\s+before\s+yesterday|yesterday(?:\s+(?:morning|afternoon|evening))?)"
        ),
    ),
    ("today", _pattern(r"(?:earlier\s+)?today")),
    ("this_unit", _pattern(r"(?:earlier\s+)?this\s+(week|month|year)")),
    (
        "last_unit",
        _pattern(
            r"(?:in\s+|during\s+|over\s+)?(?:the\s+)?(?:last|past|previous)\s+(hour|day|week|month|year)"
        ),
    ),
    ("on_day", _pattern(rf"(?:on\s+|last\s+)?{_DAY}")),
    ("recently", _pattern(r"recently|lately|just now")),
    # Dates come after the phrases above: "why did the Nov 17 release break yesterday?"
    # asks about yesterday. "Nov 17", "on November 17th", "17 November": that day, the
    # latest one without a year; "since Nov 17": from it.
    (
        "month_day",
        _pattern(rf"(?P<since>since\s+)?(?:on\s+)?{_MONTH}\s+{_DATE_DAY}(?![\d:]){_YEAR}"),
    ),
    (
        "day_month",
        _pattern(
            rf"(?P<since>since\s+)?(?:on\s+)?(?P<the>the\s+)?{_DATE_DAY}\s+(?P<of>of\s+)?{_MONTH}{_YEAR}"
        ),
    ),
    # "in October", "during Sept 2025": that month, the latest one without a year.
    ("month", _pattern(rf"(?:(?P<since>since\s+)|(?:in|during|throughout)\s+){_MONTH}{_YEAR}")),
]


class MachineZone(tzinfo):
    """The machine's time zone as the C library reads it (``TZ``, /etc/localtime),
    daylight saving included: the offset of each moment, as ``datetime.astimezone()``
    gives it to the naive times ``events.log`` takes. (A fixed offset read from the
    clock put "yesterday" an hour off across a clock change, or for a planner whose
    ``now`` is in another season.)"""

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(seconds=self._local(dt).tm_gmtoff)

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=1) if self._local(dt).tm_isdst > 0 else timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        return self._local(dt).tm_zone

    def fromutc(self, dt: datetime) -> datetime:
        stamp = (dt.replace(tzinfo=None) - datetime(1970, 1, 1)).total_seconds()
        return dt + timedelta(seconds=_time.localtime(stamp).tm_gmtoff)

    @staticmethod
    def _local(dt: datetime | None) -> _time.struct_time:
        """The C library's view of the wall time ``dt`` (now, for None)."""
        if dt is None:
            return _time.localtime()
        wall = (dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, 0, 0, -1)
        return _time.localtime(_time.mktime(wall))

    def __repr__(self) -> str:
        return "MachineZone()"


def local_zone() -> tzinfo:
    """The machine's time zone: what "yesterday" means when no zone is given."""
    return MachineZone()


def check_time_zone(value: object) -> tzinfo:
    """``value`` as a time zone: a ``tzinfo``, or an IANA name (``"Europe/Berlin"``,
    ``"UTC"``) read from the system's zone database (or the ``tzdata`` package)."""
    if isinstance(value, tzinfo):
        try:  # a zone that cannot say its offset would fail inside, and answer ""
            offset = datetime.now(UTC).astimezone(value).utcoffset()
        except Exception as exc:
            raise InvalidInputError(f"tz {value!r} is not a usable time zone: {exc}") from exc
        if offset is None or abs(offset) >= timedelta(hours=24):
            raise InvalidInputError(
                f"tz {value!r} is not a usable time zone: no offset from UTC under 24 hours"
            )
        return value
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(
            f"tz must be an IANA time zone name such as 'Europe/Berlin', not {value!r}"
        )
    if value.strip().upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(value.strip())
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInputError(
            f"unknown time zone {value!r}: give an IANA name such as 'America/New_York'"
        ) from exc


def find_time_window(
    prompt: str,
    *,
    now: datetime | None = None,
    tz: tzinfo = UTC,
    quoted: Sequence[tuple[int, int]] = (),
) -> tuple[TimeWindow | None, str]:
    """The first time phrase in ``prompt`` as a window, and the prompt without it.

    A phrase inside one of the ``quoted`` spans (start, end) is text being asked
    about, not a time: "format a timedelta like '2 hours ago'"."""
    current = (now or datetime.now(UTC)).astimezone(tz)
    for rule, match in _phrases(prompt):
        if any(start < match.end() and match.start() < end for start, end in quoted):
            continue
        try:
            window = _window(rule, match, current, tz)
            if window is None:
                continue
            since, until = (None if t is None else t.astimezone(UTC) for t in window)
        except (OverflowError, ValueError):  # the calendar's edges: "on Dec 31 9999"
            continue
        if since is not None and until is not None and since > until:
            continue  # a date still to come ("in June 2099"): no past to look at
        rest = (prompt[: match.start()] + " " + prompt[match.end() :]).strip()
        period = _period_end(rule, match, current, tz)
        period_until = None if period is None else min(period, current).astimezone(UTC)
        return TimeWindow(since, until, match.group(0), rule in _ABSOLUTE, period_until), rest
    return None, prompt


#: "the last Friday of the month", "the first day of each year": a place in a period
#: ("the last 3 days of logs" is a window: what follows "of" is not a period).
_PLACE_IN_PERIOD = re.compile(
    r"\s+of\s+(?:(?:the|each|every|this|that|next|last|a)\s+)?"
    r"(?:(?:current|previous|following)\s+)?(?:week|month|year|quarter)\b",
    re.IGNORECASE,
)
#: "every Monday", "each day", "every other Monday", "every Monday and Thursday",
#: "every 2 weeks on Monday", "twice a week on Tuesday": a recurrence.
_RECURRENCE = re.compile(
    r"\b(?:every|each)\s+(?:(?:other|second|third|fourth|alternate|\d{1,2}(?:st|nd|rd|th)?)\s+)?"
    rf"(?:{_DAY}(?:,\s*|\s+(?:and|or)\s+))*$",
    re.IGNORECASE,
)
#: ... and before a weekday only: "every 2 weeks on Monday" ("every 2 weeks last month"
#: and "twice a week since October" are windows).
_RECURRENCE_ON_DAY = re.compile(
    rf"\b(?:every\s+(?:other\s+|{_N}\s+)?{_UNIT}"
    rf"|(?:once|twice|{_N}\s+times)\s+a\s+(?:week|month)|(?:bi)?weekly)\s+$",
    re.IGNORECASE,
)
_ON_WEEKDAY = re.compile(rf"(?:on\s+)?{_DAY}s?", re.IGNORECASE)
#: How far before a phrase the recurrence is looked for (the words and spaces between).
_RECURRENCE_REACH = 60


def _phrases(prompt: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Each rule's matches in rule order, less those that name a place in a period or a
    recurrence rather than a time ("get the last Friday of the month", "deploys run
    every Monday"): the phrase stays in the prompt, as words to search for."""
    for rule, pattern in _RULES:
        for match in pattern.finditer(prompt):
            if _PLACE_IN_PERIOD.match(prompt, match.end()):
                continue
            reach = max(match.start() - _RECURRENCE_REACH, 0)
            if _RECURRENCE.search(prompt, reach, match.start()):
                continue
            on_day = _ON_WEEKDAY.fullmatch(match.group(0))
            if on_day and _RECURRENCE_ON_DAY.search(prompt, reach, match.start()):
                continue
            yield rule, match


def _midnight(day: date, tz: tzinfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=tz)


def _day_end(day: date, tz: tzinfo) -> datetime:
    """The last microsecond of ``day``: a window's ``until`` is inclusive, and an event
    at the next midnight belongs to the next day only."""
    return _midnight(day + timedelta(days=1), tz) - timedelta(microseconds=1)


def _date_window(
    rule: str, match: re.Match[str], now: datetime, tz: tzinfo
) -> tuple[datetime | None, datetime | None] | None:
    """A date's window: the day, or the month for "in October"; from it for "since".

    Month names that are words ("may", "march") and short forms ("oct", "dec") are
    prose unless the phrase says more: "in dec and hex", "2 dec places", "Python 3
    may break" are no dates; "in Dec 2025", "the 3rd of may", "on May 3" are.
    """
    typed = match.group("month").rstrip(".")
    name = typed.lower()
    year = match.group("year")
    said_year = int(year) if year else None
    full = name in _MONTHS
    if rule == "month" and not said_year and (not full or (name in _WORD_MONTHS and typed == name)):
        return None
    if (
        rule == "day_month"
        and not (match.group("ordinal") or match.group("of") or match.group("the") or said_year)
        and (not full or name in _WORD_MONTHS)
    ):
        return None
    if rule == "month_day" and name in _WORD_MONTHS and typed == name and not said_year:
        return None
    month = _month_number(name)
    today = now.date()
    if rule == "month":
        year_of = said_year or (today.year if month <= today.month else today.year - 1)
        first = date(year_of, month, 1)
        if match.group("since"):
            return _midnight(first, tz), now
        last = first.replace(day=calendar.monthrange(year_of, month)[1])
        return _midnight(first, tz), min(_day_end(last, tz), now)
    number = int(match.group("day"))
    for year_of in (said_year,) if said_year else range(today.year, today.year - 8, -1):
        try:
            day = date(year_of, month, number)
        except ValueError:
            continue  # "Feb 29" of a year that has none: an earlier one
        if day <= today or said_year:
            if match.group("since"):
                return _midnight(day, tz), now
            return _midnight(day, tz), _day_end(day, tz)
    return None  # "Feb 30": no such day


def _month_number(name: str) -> int:
    """1-12 for a lower-case month name or short form."""
    return next(i for i, full in enumerate(_MONTHS, 1) if full.startswith(name[:3]))


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _period_end(rule: str, match: re.Match[str], now: datetime, tz: tzinfo) -> datetime | None:
    """The end of the week, month or year "last week/month/year" names (its window
    runs on to now). "The last week" and "the past month" are the last 7 or 30 days,
    and "since last week" runs until now."""
    named = re.fullmatch(
        r"(?:(?:in|during|over)\s+)?(?:last|previous)\s+\w+", match.group(0).lower()
    )
    since = match.string[: match.start()].rstrip().lower().endswith("since")
    if rule != "last_unit" or named is None or since:
        return None
    period, today = match.group(1).lower(), now.date()
    if period == "week":
        return _day_end(today - timedelta(days=today.weekday() + 1), tz)
    if period == "month":
        return _day_end(today.replace(day=1) - timedelta(days=1), tz)
    if period == "year":
        return _day_end(date(today.year - 1, 12, 31), tz)
    return None


def _last_weekday(today: date, name: str) -> date:
    """The most recent ``name`` day, today included."""
    back = (today.weekday() - _DAYS.index(name.lower())) % 7
    return today - timedelta(days=back)


def _window(
    rule: str, match: re.Match[str], now: datetime, tz: tzinfo
) -> tuple[datetime | None, datetime | None] | None:
    today = now.date()
    start_of_today = _midnight(today, tz)
    if rule == "last_n":
        span = _count(match.group(1)) * _UNITS[match.group(2).lower()]
        return now - span, now
    if rule == "ago":
        span = _count(match.group(1)) * _UNITS[match.group(2).lower()]
        unit = _UNITS[match.group(2).lower()]
        # "3 days ago" is a point in time; a window one unit wide each side holds it.
        return now - span - unit, now - span + unit
    if rule == "since_day":
        return _midnight(_last_weekday(today, match.group(1)), tz), now
    if rule in ("since_date", "on_date"):
        try:
            day = date.fromisoformat(match.group(1))
        except ValueError:
            return None
        if rule == "since_date":
            return _midnight(day, tz), now
        return _midnight(day, tz), _day_end(day, tz)
    if rule in ("month_day", "day_month", "month"):
        return _date_window(rule, match, now, tz)
    if rule == "weekend":
        saturday = _last_weekday(today, "saturday")
        words = match.group(0).lower().split()
        if ("last" in words or "past" in words) and today - saturday < timedelta(days=2):
            saturday -= timedelta(days=7)  # said during a weekend: the one before
        if match.group("before"):  # the weekend before last
            saturday -= timedelta(days=7)
        return _midnight(saturday, tz), min(_day_end(saturday + timedelta(days=1), tz), now)
    if rule == "week_before_last":
        monday = today - timedelta(days=today.weekday() + 14)
        return _midnight(monday, tz), _day_end(monday + timedelta(days=6), tz)
    if rule == "since_yesterday":
        return _midnight(today - timedelta(days=1), tz), now
    if rule == "part_of_today":
        part = (match.group(1) or "evening").lower()
        starts = {"morning": 0, "afternoon": 12, "evening": 17}
        return start_of_today + timedelta(hours=starts[part]), now
    if rule == "last_night":
        return start_of_today - timedelta(hours=7), start_of_today + timedelta(hours=6)
    if rule == "yesterday":
        if match.group(0).lower().startswith("the day before"):
            day = today - timedelta(days=2)
            return _midnight(day, tz), _day_end(day, tz)
        return _midnight(today - timedelta(days=1), tz), _day_end(today - timedelta(days=1), tz)
    if rule == "today":
        return start_of_today, now
    if rule == "this_unit":
        period = match.group(1).lower()
        if period == "week":
            return _midnight(today - timedelta(days=today.weekday()), tz), now
        if period == "month":
            return _midnight(today.replace(day=1), tz), now
        return _midnight(today.replace(month=1, day=1), tz), now
    if rule == "last_unit":
        period = match.group(1).lower()
        if period == "hour":
            return now - timedelta(hours=1), now
        if period == "day":
            return now - timedelta(days=1), now
        if period == "week":
            monday = today - timedelta(days=today.weekday() + 7)
            return _midnight(monday, tz), now
        if period == "month":
            first = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
            return _midnight(first, tz), now
        return _midnight(date(today.year - 1, 1, 1), tz), now
    if rule == "on_day":
        text = match.group(0).lower()
        day = _last_weekday(today, match.group(1))
        if text.startswith("last") and day == today:
            day -= timedelta(days=7)
        if day == today and not text.startswith(("on", "last")):
            # A bare "Friday" said on a Friday more likely means last week's.
            day -= timedelta(days=7)
        return _midnight(day, tz), _day_end(day, tz)
    if rule == "recently":
        return now - timedelta(days=7), now
    return None
