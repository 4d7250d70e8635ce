"""Times for the event log: everything becomes an aware UTC datetime before it is used.

Comparing local-time strings with UTC strings puts a time filter off by the UTC
offset, so nothing here compares strings: times are parsed once, converted to
UTC and stored and compared as integer microseconds since the epoch. A naive
datetime (or an ISO string without an offset) is local time, as Python's own
``datetime.astimezone`` reads it; in a DST change's repeated hour that is the
first occurrence.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import InvalidInputError

#: How far another clock may run ahead of this one and its times still count as now (a
#: provider's message times, another machine's events).
CLOCK_SKEW = timedelta(minutes=2)

TimeLike = datetime | str | int | float
DurationLike = timedelta | str | int | float

_UNITS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "w": 604800,
    "wk": 604800,
    "week": 604800,
    "weeks": 604800,
}
_DURATION = re.compile(r"\s*(?:\d+(?:\.\d+)?\s*[a-zA-Z]+\s*)+")
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]+)")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: An ISO date without a time (``2026-11-25``, ``20261125``).
_DATE_ONLY = re.compile(r"\d{4}-?\d{2}-?\d{2}")
_DAY = timedelta(days=1)
_MICROSECOND = timedelta(microseconds=1)
#: The range of times an event may have (datetime's own limits, with room for offsets).
_MIN_US = -62_135_596_800_000_000 + 86_400_000_000
_MAX_US = 253_402_300_799_000_000 - 86_400_000_000


def now_utc() -> datetime:
    return datetime.now(UTC)


def to_utc(value: Any, what: str) -> datetime:
    """An aware UTC datetime for a datetime, an ISO 8601 string or epoch seconds."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidInputError(
                f"{what} {text[:64]!r} is not an ISO 8601 time such as "
                "2026-11-20T15:00:00+01:00 (or 2026-11-20, or ...Z for UTC)"
            ) from exc
    if isinstance(value, datetime):
        try:
            return value.astimezone(UTC)  # naive: read as local time
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidInputError(f"{what} {value!r} cannot be converted to UTC") from exc
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(
            f"{what} must be a datetime, an ISO 8601 string or epoch seconds, "
            f"not {type(value).__name__}"
        )
    if not math.isfinite(value):
        raise InvalidInputError(f"{what} must be a finite number of seconds")
    try:
        return _EPOCH + timedelta(seconds=value)
    except OverflowError as exc:
        raise InvalidInputError(f"{what} {value!r} is out of range") from exc


def to_micros(value: datetime) -> int:
    """Microseconds since the epoch: exact, so equal times compare equal."""
    delta = value - _EPOCH
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if not _MIN_US <= micros <= _MAX_US:
        raise InvalidInputError(f"time {value.isoformat()} is out of range")
    return micros


def from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(micros))


def parse_duration(value: Any, what: str) -> timedelta:
    """``"30m"``, ``"12h"``, ``"7d"``, ``"4w"``, ``"1h30m"``, a timedelta or seconds."""
    if isinstance(value, timedelta):
        duration = value
    elif isinstance(value, str):
        if not _DURATION.fullmatch(value):
            raise InvalidInputError(
                f"{what} {value[:64]!r} is not a duration; use a number and a unit "
                "such as 30m, 12h, 7d or 4w (units: s, m, h, d, w)"
            )
        seconds = 0.0
        for number, unit in _PART.findall(value):
            factor = _UNITS.get(unit.lower())
            if factor is None:
                raise InvalidInputError(
                    f"{what} {value!r} has an unknown unit {unit!r}; use s, m, h, d or w"
                )
            seconds += float(number) * factor
        duration = _seconds(seconds, what)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise InvalidInputError(f"{what} must be a finite number of seconds")
        duration = _seconds(float(value), what)
    else:
        raise InvalidInputError(
            f"{what} must be a duration like '7d' or a timedelta, not {type(value).__name__}"
        )
    if duration <= timedelta(0):
        raise InvalidInputError(f"{what} must be longer than zero")
    return duration


def _seconds(seconds: float, what: str) -> timedelta:
    try:
        return timedelta(seconds=seconds)
    except OverflowError as exc:
        raise InvalidInputError(f"{what} is too long") from exc


def _end_of_day(date: str) -> datetime:
    """The last microsecond before the next day's local midnight, in UTC: a day whose
    clocks go back keeps its repeated hour; the last days datetime can hold end with
    the latest time an event may have."""
    latest = from_micros(_MAX_US)
    try:
        end = (datetime.fromisoformat(date) + _DAY).astimezone(UTC) - _MICROSECOND
    except (OverflowError, OSError, ValueError):
        return latest
    return min(end, latest)


def window(
    since: Any = None, until: Any = None, last: Any = None, *, now: datetime | None = None
) -> tuple[datetime | None, datetime | None]:
    """The ``[since, until]`` window in UTC; ``last`` narrows ``since`` to ``now - last``.

    An ``until`` written as a date (``"2026-11-25"``) ends with that day, as the
    enricher's "on 2026-11-25" does: read as its midnight, ``since`` and ``until`` of
    one date selected nothing.
    """
    start = None if since is None else to_utc(since, "since")
    end = None if until is None else to_utc(until, "until")
    if end is not None and isinstance(until, str) and _DATE_ONLY.fullmatch(until.strip()):
        end = _end_of_day(until.strip())
    if start is not None and end is not None and start > end:
        raise InvalidInputError(
            f"since ({start.isoformat()}) is after until ({end.isoformat()}); swap them"
        )
    if last is not None:
        current = now or now_utc()
        try:
            recent = current - parse_duration(last, "last")
        except OverflowError as exc:
            raise InvalidInputError("last reaches too far back") from exc
        start = recent if start is None else max(start, recent)
        if end is None:  # "the last 7 days" end now: an event dated next month is not in them
            end = current + CLOCK_SKEW  # (a since later than that leaves the window empty)
    return start, end
