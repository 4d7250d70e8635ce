"""``events``: the temporal log of things that happened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Group
from rich.text import Text

from ..enrichment.config import DEFAULT_MIN_SCORE
from ..formatting import human_time
from .app import State, cli, json_option, pass_state
from .options import MODES, meta_option, parse_metadata
from .output import snippet
from .render import first, record, records


@cli.group(
    epilog="Example:  remembrances events log 'Deployed v2.3 to prod' --subject deploys "
    "&& remembrances events search deploy --last 7d"
)
def events() -> None:
    """Events: log, import conversations, search, list, remove, prune, subjects."""


def _table(state: State, items: list[dict[str, Any]], title: str = "") -> Any:
    """Events as a table; the score column only when the events were scored (a search)."""
    scored = any(e.get("score") is not None for e in items)
    rows = []
    for e in items:
        row = [
            first(e, "id", "event_id", default=""),
            _time(first(e, "occurred_at", "at", "ts")),
            e.get("subject") or "",
            snippet(str(first(e, "content", "text", default="")), 160),
        ]
        if scored:
            score = e.get("score")
            row.append("" if score is None else f"{score:.3f}")
        rows.append(row)
    return state.out.table(COLUMNS + (("score",) if scored else ()), rows, title=title)


COLUMNS = ("id", "at", "subject", "content")


def _scope(session: str | None, user: str | None, window: int = 0) -> dict[str, Any]:
    """Only the conversation options given: a server (--url) may not know them."""
    given = {"session": session, "user": user, "window": window or None}
    return {k: v for k, v in given.items() if v is not None}


def _time(value: Any) -> str:
    return human_time(value) or "-"


@events.command(
    epilog="Example:  remembrances events log 'Alice fixed the upload retry bug' "
    "--subject uploads --at 2026-11-20T15:00:00+01:00"
)
@click.argument("content")
@click.option("--subject", default="", help="What it is about.")
@click.option("--at", default=None, help="When it happened (ISO 8601) [default: now].")
@click.option("--user", default=None, help="Whose memory it is (searches scoped to them find it).")
@meta_option
@json_option
@pass_state
def log(
    state: State,
    content: str,
    subject: str,
    at: str | None,
    user: str | None,
    meta: tuple[str, ...],
) -> None:
    """Record an event (the same subject, content and time are stored once)."""
    event = state.service(create=True).events.log(
        content, subject=subject, at=at, metadata=parse_metadata(meta), user=user
    )
    data = record(event)
    state.out.emit(data, _table(state, [data], title="logged"))


def _window_options(fn: Any) -> Any:
    for option in reversed(
        (
            click.option("--subject", default=None, help="Only this subject."),
            click.option("--since", default=None, help="ISO time; events at or after it."),
            click.option("--until", default=None, help="ISO time; events at or before it."),
            click.option("--last", default=None, help="A window: 30m, 12h, 7d, 4w."),
            click.option("--session", default=None, help="Only this conversation session."),
            click.option("--user", default=None, help="Only this user's events."),
            click.option("-n", "--limit", default=10, show_default=True),
        )
    ):
        fn = option(fn)
    return fn


@events.command(epilog="Example:  remembrances events search 'upload failures' --last 7d")
@click.argument("query", required=False)
@_window_options
@click.option("--recency", default=None, help="Weight recent events: a half-life such as 3d.")
@click.option(
    "--window",
    default=0,
    show_default=True,
    help="Show each conversation turn found with this many turns before and after it.",
)
@click.option("--min-score", type=float, default=None, help="Only hits scoring at least this.")
@click.option("--mode", type=MODES, default="hybrid", show_default=True)
@json_option
@pass_state
def search(
    state: State,
    query: str | None,
    subject: str | None,
    since: str | None,
    until: str | None,
    last: str | None,
    session: str | None,
    user: str | None,
    limit: int,
    recency: str | None,
    window: int,
    min_score: float | None,
    mode: str,
) -> None:
    """Search events by text and meaning within a time window (no QUERY: newest first)."""
    hits = state.service().events.search(
        query,
        subject=subject,
        since=since,
        until=until,
        last=last,
        limit=limit,
        recency=recency,
        min_score=min_score,
        mode=mode,  # type: ignore[arg-type]  # click.Choice checked it
        **_scope(session, user, window),
    )
    data = records(hits)
    shown: list[dict[str, Any]] = []
    seen = {hit["id"] for hit in data}  # a neighbour that is a hit, or shown already: once

    def around(turns: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        fresh = [t for t in turns or [] if t["id"] not in seen]
        seen.update(t["id"] for t in fresh)
        return [{**t, "id": "", "score": None} for t in fresh]  # unnumbered: context

    for hit in data:  # neighbouring turns (--window) around their hit
        shown += [*around(hit.get("before")), hit, *around(hit.get("after"))]
    view = _table(state, shown)
    gate = DEFAULT_MIN_SCORE["events"]
    best = max((float(h.get("score") or 0.0) for h in data), default=None)
    if query and mode == "hybrid" and recency is None and best is not None and best < gate:
        # as kb and code search say "nothing here looks related"
        view = Group(
            view,
            Text(
                f"(the best score is {best:.4f}, under the enricher's events gate ({gate:g}): "
                "enrich_context would leave these out; see docs/search.md)",
                style="dim",
            ),
        )
    state.out.emit(data, view)


@events.command("list", epilog="Example:  remembrances events list --subject deploys -n 20")
@_window_options
@json_option
@pass_state
def list_(
    state: State,
    subject: str | None,
    since: str | None,
    until: str | None,
    last: str | None,
    session: str | None,
    user: str | None,
    limit: int,
) -> None:
    """List events, newest first."""
    items = state.service().events.list(
        subject=subject,
        since=since,
        until=until,
        last=last,
        limit=limit,
        **_scope(session, user),
    )
    data = records(items)
    state.out.emit(data, _table(state, data))


@events.command(epilog="Example:  remembrances events rm 42 43")
@click.argument("ids", nargs=-1, required=True, type=int)
@json_option
@pass_state
def rm(state: State, ids: tuple[int, ...]) -> None:
    """Remove events by id (ids are shown by list and search)."""
    log_ = state.service(write=True).events
    deleted: list[int] = []
    missing: list[int] = []
    for event_id in dict.fromkeys(ids):
        (deleted if log_.delete(event_id) else missing).append(event_id)
    removed = f"removed {len(deleted)} event(s)" + (
        f": {', '.join(map(str, deleted))}" if deleted else ""
    )
    if missing:  # say what was removed as well as what was not there
        raise click.ClickException(f"{removed}; no event with id {', '.join(map(str, missing))}")
    state.out.emit({"deleted": len(deleted), "ids": deleted}, removed)


@events.command(epilog="Example:  remembrances events prune --older-than 90d")
@click.option("--older-than", required=True, help="Age such as 90d or 12w, or an ISO time.")
@json_option
@pass_state
def prune(state: State, older_than: str) -> None:
    """Delete events that happened before a cut-off (retention)."""
    deleted = state.service(write=True).events.prune(older_than=older_than)
    state.out.emit({"deleted": deleted}, f"pruned {deleted} event(s)")
    if deleted:  # their cached vectors and pages stay until then
        state.out.note("`remembrances compact` gives their space back to the disk")


@events.command(epilog="Example:  remembrances events forget --user alice")
@click.option("--session", help="Forget this conversation's turns.")
@click.option("--user", help="Forget everything logged for this user.")
@json_option
@pass_state
def forget(state: State, session: str | None, user: str | None) -> None:
    """Delete a session's turns, or all of a user's events, leaving nothing of them
    (not even the digests that keep removed turns from being logged again)."""
    if (session is None) == (user is None):
        raise click.UsageError("give --session or --user (one of them)")
    log_ = state.service(write=True).events
    if session is not None:
        deleted, whose = log_.forget_session(session), f"session {session!r}"
    else:
        deleted, whose = log_.forget_user(str(user)), f"user {user!r}"
    state.out.emit({"deleted": deleted}, f"forgot {deleted} event(s) of {whose}")


@events.command(epilog="Example:  remembrances events subjects --json")
@json_option
@pass_state
def subjects(state: State) -> None:
    """Distinct subjects with how many events each has."""
    counts = state.service().events.subjects()
    state.out.emit(counts, state.out.table(("subject", "events"), list(counts.items())))


@events.command(epilog="Example:  remembrances events sessions --user alice")
@click.option("--user", default=None, help="Only this user's conversations.")
@json_option
@pass_state
def sessions(state: State, user: str | None) -> None:
    """Conversations (sessions) with how many turns each has, most recently active first."""
    counts = state.service().events.sessions(user=user)
    state.out.emit(counts, state.out.table(("session", "turns"), list(counts.items())))


@events.command(
    "import",
    epilog="Example:  remembrances events import chat.jsonl --session support-42 --user alice",
)
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--session", default=None, help="Session id [default: the file name].")
@click.option("--user", default=None, help="Whose conversation it is (for scoped searches).")
@click.option("--at", default=None, help="When messages without a time happened [default: now].")
@json_option
@pass_state
def import_(
    state: State, file: Path, session: str | None, user: str | None, at: str | None
) -> None:
    """Log a conversation transcript (JSON or JSON Lines chat messages: role/content or
    speaker/text); importing it again adds only new turns."""
    from ..events.transcripts import read_transcripts

    sessions = read_transcripts(file, session=session)  # all checked before any write
    log_ = state.service(create=True).events
    total = sum(len(s.messages) for s in sessions)
    results = []
    with state.out.progress(f"importing {file.name}") as task:
        task.total(total)
        done = 0
        try:
            for part in sessions:

                def progress(_phase: str, n: int, _total: int | None, base: int = done) -> None:
                    task.done(base + n)  # one count over every session's turns

                results.append(
                    log_.log_conversation(
                        part.messages,
                        session=part.session,
                        user=part.user or user,
                        at=part.at or at,
                        progress=progress,
                    )
                )
                done += len(part.messages)
                task.done(done)
        except Exception:  # a later session refused: the file is imported whole or not at all
            for event in (e for r in results for e in r.added):
                log_.delete(event.id)
            raise
    data = {
        "sessions": [
            {"session": r.session, "added": len(r.added), "already_stored": r.already_stored}
            for r in results
        ],
        "added": sum(len(r.added) for r in results),
        "already_stored": sum(r.already_stored for r in results),
    }
    rows = [(r.session, len(r.added), r.already_stored) for r in results]
    state.out.emit(
        data,
        state.out.table(("session", "added", "already stored"), rows, title=f"imported {file}"),
    )
