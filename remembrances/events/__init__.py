"""The event log: what happened and when, searchable by words, meaning and time."""

from __future__ import annotations

from .event_log import EventLog
from .records import Event
from .times import parse_duration, to_utc

__all__ = ["Event", "EventLog", "parse_duration", "to_utc"]
