"""Hours that are "yesterday" in one time zone and not in another, from the real clock
(for tests through a server or a CLI, whose planner reads the time itself)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo


def _yesterday(now: datetime, zone: tzinfo) -> tuple[datetime, datetime]:
    today = datetime.combine(now.astimezone(zone).date(), time(0), tzinfo=zone)
    return today - timedelta(days=1), today


def yesterday_only_in(zone: tzinfo, other: tzinfo = UTC) -> datetime:
    """A whole hour of the last three days that is yesterday in ``zone``, not in ``other``."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    (start, end), (o_start, o_end) = _yesterday(now, zone), _yesterday(now, other)
    hours = (now - timedelta(hours=n) for n in range(1, 73))
    return next(h for h in hours if start <= h < end and not o_start <= h < o_end)
