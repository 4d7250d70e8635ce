"""The event log: what happened and when, searchable by words, meaning and time."""

from __future__ import annotations

from .event_log import EventLog, scope_where
from .records import Event
from .times import parse_duration, to_utc

__all__ = ["Event", "EventLog", "parse_duration", "scope_where", "to_utc"]
