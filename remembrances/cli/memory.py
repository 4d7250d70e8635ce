"""Commands over the whole file: init, stats, search across sources, enrich."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..discovery import decode_text
from ..errors import CorruptFileError, InvalidInputError
from ..records import SOURCE_KINDS
from ..storage.filters import as_timestamp
from ..validation import check_choices
from .app import State, cli, json_option, pass_state
from .options import MODES
from .render import hits_view, records


@cli.command(epilog="Example:  remembrances --db team.db --embedder local init")
@json_option
@pass_state
def init(state: State) -> None:
    """Create the memory file (and its directory) and record the embedder it uses.

    On an existing memory written by an older version, upgrade its schema (the
    reading commands never write, so they ask for this).
    """
    from ..storage.sqlite_connection import file_kind  # the store's modules load only when needed

    existed = isinstance(state.db, Path) and file_kind(state.db) == "memory"
    svc = state.service(create=True, adopt=True)
    upgraded = bool(svc.upgrade()) if not state.url else False
    stats = svc.stats()
    data = {
        "path": str(state.db),
        "created": not existed,
        "upgraded": upgraded,
        "embedder": stats["embedder"],
        "dim": stats["dim"],
    }
    verb = "upgraded" if upgraded else ("already exists" if existed else "created")
    state.out.emit(data, f"{state.db} {verb} (embedder {stats['embedder']}, {stats['dim']} dims)")


@cli.command(epilog="Example:  remembrances stats --json")
@json_option
@pass_state
def stats(state: State) -> None:
    """Show what the file holds: chunks per source, pending embeddings, embedder, size."""
    data = state.service().stats()
    state.out.emit(data, state.out.mapping(data, title="memory"))


@cli.command(epilog="Example:  remembrances search 'how do we retry uploads' --kind code --limit 5")
@click.argument("query")
@click.option("-n", "--limit", default=10, show_default=True, help="How many results.")
@click.option("--mode", type=MODES, default="hybrid", show_default=True)
@click.option("--kind", "kinds", multiple=True, help="Only these sources: kb, event, code.")
@click.option("--collection", "collections", multiple=True, help="Only these collections.")
@click.option("--min-score", type=float, default=0.0, show_default=True)
@click.option("--since", default=None, help="Only events at/after this ISO time.")
@click.option("--until", default=None, help="Only events at/before this ISO time.")
@click.option("--user", default=None, help="Only this user's events (documents and code stay).")
@click.option("--session", default=None, help="Only this conversation's events.")
@json_option
@pass_state
def search(
    state: State,
    query: str,
    limit: int,
    mode: str,
    kinds: tuple[str, ...],
    collections: tuple[str, ...],
    min_score: float,
    since: str | None,
    until: str | None,
    user: str | None,
    session: str | None,
) -> None:
    """Search everything (documents, events, code) by meaning and words at once.

    Only events have a time: with --since/--until the search covers events only
    (and says so when other kinds were asked for).
    """
    svc = state.service()
    as_timestamp(since, "since"), as_timestamp(until, "until")  # a bad time: no note first
    if (since or until) and (not kinds or set(kinds) - {"event", "events"}):
        state.out.err.print(
            "note: --since/--until select events only (documents and code have no time); "
            "searching events",
            markup=False,
        )
        kinds = ("event",)
    hits = svc.store.search(
        query,
        mode=mode,  # type: ignore[arg-type]
        limit=limit,
        kind=_kinds(svc, kinds),
        collection=list(collections) or None,
        min_score=min_score,
        since=since,
        until=until,
        kind_where=_events_of(svc, user, session),
    )
    data = records(hits)
    state.out.emit(data, hits_view(state.out, data, mode))


def _events_of(
    svc: object, user: str | None, session: str | None
) -> dict[str, dict[str, str]] | None:
    """``--user``/``--session`` as the search's scope for events (documents and code are
    shared). Imported only when asked: through a server the CLI loads no store (the
    server narrows a user and a session to the session itself)."""
    if user is None and session is None:
        return None
    from ..events import EventLog, scope_where
    from ..service import RemembrancesService

    if user is not None and session is not None and isinstance(svc, RemembrancesService):
        events: EventLog = svc.events
        return {"event": events.scope(user, session)}
    return {"event": scope_where(user, session)}


def _kinds(svc: object, kinds: tuple[str, ...]) -> list[str] | None:
    """``--kind`` values as known kinds. The layers' kinds are checked without a look
    at the file (through --url a stats() call per search is a second request); only
    another kind, one a program stored directly, asks the file what it holds."""
    if not kinds:
        return None
    try:
        return check_choices(list(kinds), SOURCE_KINDS, "--kind")
    except InvalidInputError:
        from ..service import source_kinds

        return check_choices(list(kinds), source_kinds(svc), "--kind")


@cli.command(
    epilog='Examples:  remembrances enrich "fix the retry bug in upload_file, it broke yesterday"'
    "\n\n  jq -r .prompt hook.json | remembrances enrich -"
)
@click.argument("prompt")
@click.option("--user", default=None, help="Only this user's events (conversations).")
@click.option("--session", default=None, help="Only this conversation's events.")
@click.option("--project", default=None, help="Only this indexed project's code.")
@click.option(
    "--collection",
    "collections",
    multiple=True,
    help="Only the documents of this collection (repeat for several).",
)
@click.option(
    "--tz",
    default=None,
    metavar="ZONE",
    help='The user\'s time zone, whose days "yesterday" means (e.g. Europe/Berlin; '
    "default: this machine's).",
)
@json_option
@pass_state
def enrich(
    state: State,
    prompt: str,
    user: str | None,
    session: str | None,
    project: str | None,
    collections: tuple[str, ...],
    tz: str | None,
) -> None:
    """Print the memory that helps with PROMPT, as an agent would get it (empty if none).

    PROMPT - reads it from stdin: a long paste does not fit on a command line.
    """
    if prompt == "-":
        piped, reason = decode_text(sys.stdin.buffer.read())
        if piped is None:
            raise click.ClickException(f"stdin: {reason}; enrich takes a text prompt")
        prompt = piped
    svc = state.service()
    if not state.url:
        # A file too old to read as it is (read-only: no upgrade) is an error here, as in
        # every reading command; enrich_context would drop each source and print nothing.
        for layer in ("kb", "events", "code"):
            if layer == "code" and not svc.holds_code:
                continue  # no code indexed: enrich leaves it out, extra or not
            getattr(svc, layer)
    context = svc.enrich_context(
        prompt,
        user=user,
        session=session,
        project=project,
        collections=collections or None,
        tz=tz,
    )
    if state.out.as_json:
        state.out.json({"prompt": prompt, "context": context})
    elif context:
        click.echo(context)
    else:
        state.out.err.print("nothing relevant in memory", style="dim")


@cli.command(
    epilog="Examples:  remembrances check --repair\n\n"
    "  remembrances --db damaged.db check --recover saved.db"
)
@click.option("--repair", is_flag=True, help="Rebuild the indexes that disagree with the chunks.")
@click.option(
    "--recover",
    "recover_to",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="OUT.db",
    help="Damaged file: copy every readable row into the new memory OUT.db.",
)
@json_option
@pass_state
def check(state: State, repair: bool, recover_to: Path | None) -> None:
    """Verify that the full-text and vector indexes agree with the chunks (exit 1 if not).

    A damaged file (SQLite found bad pages) is diagnosed: what can still be read,
    and how to save it with --recover.
    """
    from ..integrity import diagnose

    if isinstance(state.db, Path) and not state.db.exists():
        state.service()  # the usual "no memory file" error
    if recover_to is not None:
        _recover(state, recover_to)
        return
    try:
        report = state.service(write=repair).check(repair=repair)
    except CorruptFileError:
        report = diagnose(state.db)
    data = report.to_dict()
    lines = [f"{data['chunks']:,} chunks, {data['vectors']:,} vectors"]
    lines += [f"problem: {p}" for p in report.problems]
    lines += [f"repaired: {r}" for r in report.repaired]
    if getattr(report, "damaged", False):  # (a server's report through --url has no such part)
        readable = ", ".join(f"{n:,} {t}" for t, n in report.readable.items() if n)
        lines.append(f"still readable: {readable or 'nothing'}")
        lines.append(
            f"--repair cannot fix damaged pages; save what is readable into a new file with: "
            f"remembrances --db {state.db} check --recover NEW.db"
        )
    else:
        lines.append("ok" if report.ok else "problems found; run again with --repair")
    state.out.emit(data, "\n".join(lines))
    if not report.ok:
        raise SystemExit(1)


def _recover(state: State, target: Path) -> None:
    from ..integrity import recover

    report = recover(state.db, target)
    data = report.to_dict()
    lines = [f"saved into {target}: " + ", ".join(f"{n:,} {t}" for t, n in report.saved.items())]
    lines += [f"unreadable, lost: {t}" for t in report.unreadable]
    lines += [f"re-chunked from its saved text: {d}" for d in report.readded]
    lines += [f"still missing: {m}" for m in report.incomplete]
    lines.append(
        f"check it with `remembrances --db {target} check`; code projects are re-read on the "
        "next `code index`"
    )
    state.out.emit(data, "\n".join(lines))
