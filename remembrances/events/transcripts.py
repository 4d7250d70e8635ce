"""Transcript files: chat messages saved as JSON or JSON Lines, read into sessions.

What ``remembrances events import`` reads. A file holds one of:
- a JSON list of messages (one session);
- a JSON object ``{"messages": [...], "session": ..., "user": ..., "at": ...}``;
- a JSON list of such objects (several sessions);
- JSON Lines, one message per line; a line's ``session`` (and ``user``) puts it in
  that session, lines without one go to the default session.
Every session is checked (:func:`conversation.read_messages`) before anything is
logged, so a bad message anywhere in the file writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from .conversation import read_messages, scope_name

#: Larger transcript files are refused before they are read.
MAX_FILE_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class TranscriptSession:
    session: str
    messages: list[dict[str, Any]]
    user: str | None = None
    at: Any = None


def _object(data: Mapping[str, Any], default: str, where: str) -> TranscriptSession:
    unknown = set(data) - {"messages", "session", "user", "at"}
    if unknown or "messages" not in data:
        raise InvalidInputError(
            f"{where}: a session object has 'messages' and optionally 'session', 'user', 'at'"
            + (f" (unknown keys {sorted(unknown)[:5]})" if unknown else "")
        )
    session = data.get("session") or default
    return TranscriptSession(
        scope_name(session, f"{where} session"),
        data["messages"],
        None if data.get("user") is None else scope_name(data["user"], f"{where} user"),
        data.get("at"),
    )


def read_transcripts(path: str | Path, *, session: str | None = None) -> list[TranscriptSession]:
    """The sessions in a transcript file; ``session`` names the default one
    (the file's name without its extension when not given)."""
    file = Path(path)
    default = (
        scope_name(session, "session") if session is not None else file.stem.strip() or "session"
    )
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidInputError(f"{file} is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
        raw = file.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read {file}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{file} is not UTF-8 text (byte {exc.start}); a transcript is JSON or JSON Lines"
        ) from exc
    sessions = _parse(text, file, default)
    if not sessions:
        raise InvalidInputError(f"{file} holds no messages")
    for s in sessions:
        try:
            read_messages(s.messages)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{file}, session {s.session!r}: {exc}") from exc
    return sessions


def _parse(text: str, file: Path, default: str) -> list[TranscriptSession]:
    stripped = text.strip()
    if not stripped:
        return []
    if file.suffix.lower() != ".jsonl" and stripped[0] in "[{":
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None  # perhaps JSON Lines after all
        if isinstance(data, Mapping):
            return [_object(data, default, str(file))]
        if isinstance(data, list):
            if data and all(isinstance(d, Mapping) and "messages" in d for d in data):
                return [
                    _object(d, f"{default}-{i}", f"{file} item {i}") for i, d in enumerate(data)
                ]
            return [TranscriptSession(default, data)]
    return _lines(text, file, default)


def _lines(text: str, file: Path, default: str) -> list[TranscriptSession]:
    groups: dict[str, list[dict[str, Any]]] = {}
    users: dict[str, str | None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"{file}:{number} is not JSON: {exc.msg}") from exc
        if not isinstance(row, dict):
            raise InvalidInputError(f"{file}:{number}: each line is one message (a JSON object)")
        session = row.pop("session", None) or default
        session = scope_name(session, f"{file}:{number} session")
        user = row.pop("user", None)
        user = None if user is None else scope_name(user, f"{file}:{number} user")
        if session in users and users[session] != user:
            raise InvalidInputError(f"{file}:{number}: session {session!r} has two users")
        users[session] = user
        groups.setdefault(session, []).append(row)
    return [TranscriptSession(s, m, users[s]) for s, m in groups.items()]
