"""``kb``: documents in the knowledge base."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import click

from ..discovery import decode_text
from ..errors import AmbiguousNameError, InvalidInputError, NotFoundError
from .app import State, cli, json_option, pass_state
from .options import MODES, meta_option, parse_metadata
from .render import hits_view, record, records


def _check_patterns(
    ctx: click.Context, param: click.Parameter, patterns: tuple[str, ...]
) -> tuple[str, ...]:
    """``--pattern`` checked as the library reads it, before anything is opened."""
    from ..errors import InvalidInputError
    from ..kb.discovery import file_patterns

    try:
        file_patterns(patterns)
    except InvalidInputError as exc:
        raise click.BadParameter(str(exc)) from None
    return patterns


#: ``--pattern`` of ``kb ingest`` and ``kb watch``.
_pattern_option = click.option(
    "--pattern",
    "patterns",
    multiple=True,
    callback=_check_patterns,
    help="Only files matching (repeatable).",
)


def _nothing_matched(state: State, path: Path, patterns: tuple[str, ...]) -> None:
    """Say so when the patterns chose no file: a typo would otherwise look like success."""
    shown = " ".join(f"--pattern {p!r}" for p in patterns)
    # '[' with no ']' after it is a literal '[' to the matcher, as to git and fnmatch
    literal = any("[" in p and "]" not in p[p.rindex("[") :] for p in patterns)
    hint = " ('[' without a closing ']' matches a literal '[')" if literal else ""
    note = f"note: no file under {path} matches {shown}{hint}"
    state.out.err.print(note, markup=False, soft_wrap=True)  # one line, greppable


@cli.group(
    epilog="Example:  remembrances kb ingest docs/ && remembrances kb search 'install on linux'"
)
def kb() -> None:
    """Documents: add, ingest folders, search, get, remove, list, watch."""


@kb.command(
    epilog="Examples:\n\n  remembrances kb add notes/deploy.md\n\n"
    "  echo 'The VPN needs MFA.' | remembrances kb add - --source it/vpn --title VPN"
)
@click.argument(
    "file", type=click.Path(exists=True, allow_dash=True, dir_okay=False, path_type=Path)
)
@click.option("--source", default=None, help="Stable name for the document [default: FILE].")
@click.option("--title", default=None)
@click.option("--collection", default="default", show_default=True)
@meta_option
@json_option
@pass_state
def add(
    state: State,
    file: Path,
    source: str | None,
    title: str | None,
    collection: str,
    meta: tuple[str, ...],
) -> None:
    """Add FILE (or - for stdin) as one document, replacing an earlier version."""
    if str(file) == "-":
        if source is None:
            raise click.UsageError("--source is required when reading from stdin")
        data, what = sys.stdin.buffer.read(), "stdin"
    else:
        data, what = file.read_bytes(), str(file)
    text, reason = decode_text(data)  # the rules an ingest reads files by
    if text is None:
        raise click.ClickException(f"{what}: {reason}; kb add takes text")
    knowledge = state.service(create=True).kb
    extra: dict[str, Any] = {}
    # A local memory knows its files; through --url the server has no view of them.
    if str(file) != "-" and hasattr(knowledge, "source_of_file"):
        # the document this file already is (added or ingested before), else its path
        source = source or knowledge.source_of_file(file, collection=collection)
        extra["file"] = file
    report = knowledge.add(
        text,
        source=source or str(file),
        title=title,
        metadata=parse_metadata(meta),
        collection=collection,
        **extra,
    )
    data = record(report)
    state.out.emit(
        data,
        f"{data.get('status', 'stored')}: {data.get('source')} ({data.get('chunks', '?')} chunks)",
    )


@kb.command(epilog="Example:  remembrances kb ingest ~/notes --collection notes --pattern '*.md'")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--collection", default="default", show_default=True)
@_pattern_option
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Skip files larger than this [default: 10000000].",
)
@click.option(
    "--include-hidden",
    is_flag=True,
    help="Also ingest hidden files and folders (names starting with '.'); an ingest "
    "without it leaves their documents as they are.",
)
@json_option
@pass_state
def ingest(
    state: State,
    path: Path,
    collection: str,
    patterns: tuple[str, ...],
    max_bytes: int | None,
    include_hidden: bool,
) -> None:
    """Ingest a file or directory tree; unchanged files are skipped, deleted ones removed."""
    knowledge = state.service(create=True).kb
    extra: dict[str, Any] = {} if max_bytes is None else {"max_bytes": max_bytes}
    if include_hidden:  # only when asked: an older server refuses the field
        extra["include_hidden"] = True
    with state.out.progress(f"ingesting {path}") as bar:
        report = knowledge.ingest(
            path, collection=collection, patterns=list(patterns) or None, **extra, progress=bar
        )
    data = record(report)
    state.out.emit(data, state.out.mapping(_counts(data), title=f"ingested {path}"))
    if patterns and not any(data.get(k) for k in ("added", "updated", "unchanged", "skipped")):
        _nothing_matched(state, path, patterns)
    if not state.out.as_json:
        for skipped in data.get("skipped") or []:
            state.out.note(f"skipped {skipped['path']}: {skipped['reason']}")


def _counts(data: dict[str, object]) -> dict[str, object]:
    """Lists of paths shown as counts in the summary table."""
    return {k: len(v) if isinstance(v, list) else v for k, v in data.items()}


@kb.command(epilog="Example:  remembrances kb search 'how do I rotate the API key?' -n 3")
@click.argument("query")
@click.option("-n", "--limit", default=5, show_default=True)
@click.option("--collection", default=None)
@click.option("--min-score", type=float, default=None)
@click.option("--mode", type=MODES, default="hybrid", show_default=True)
@json_option
@pass_state
def search(
    state: State, query: str, limit: int, collection: str | None, min_score: float | None, mode: str
) -> None:
    """Search documents by meaning and keywords."""
    knowledge = state.service().kb
    hits = knowledge.search(
        query,
        limit=limit,
        collection=collection,
        min_score=min_score,
        mode=mode,  # type: ignore[arg-type]  # click.Choice checked it
    )
    data = records(hits)
    state.out.emit(data, hits_view(state.out, data, mode))
    if not hits and collection is not None and hasattr(knowledge, "collections"):
        held = knowledge.collections()  # a typo read as "nothing relevant" otherwise
        if collection not in held:
            names = ", ".join(held) if held else "none yet"
            state.out.err.print(
                f"collection {collection!r} holds no documents (collections: {names})",
                style="dim",
            )


@kb.command(epilog="Example:  remembrances kb get notes/deploy.md")
@click.argument("source")
@click.option(
    "--collection",
    default=None,
    help="The document's collection [default: 'default', else the one that holds it].",
)
@json_option
@pass_state
def get(state: State, source: str, collection: str | None) -> None:
    """Print a stored document's text (--json: with its metadata).

    SOURCE may also be the document's file path, or any unambiguous part of it.
    """
    knowledge = state.service().kb
    try:
        found = knowledge.get(source, collection=collection or "default")
    except AmbiguousNameError:
        raise  # "default" holds several: which one is the user's to say
    except NotFoundError:
        holders = [] if collection is not None else _collections_holding(knowledge, source)
        if len(holders) != 1:
            raise  # its message names the collections that hold it
        found = knowledge.get(source, collection=holders[0])
    data = record(found)
    if state.out.as_json:
        state.out.json(data)
    else:
        click.echo(data.get("text") or "")


def _collections_holding(knowledge: Any, source: str) -> list[str]:
    """The collections other than "default" where ``source`` names one document."""
    if not hasattr(knowledge, "collections"):
        return []  # through --url: the server's error says where it is
    holders = []
    for name in knowledge.collections():
        if name == "default":
            continue
        try:
            knowledge.resolve(source, collection=name)
        except (NotFoundError, InvalidInputError):
            continue
        holders.append(name)
    return holders


@kb.command(epilog="Example:  remembrances kb rm notes/old.md")
@click.argument("source")
@click.option("--collection", default="default", show_default=True)
@json_option
@pass_state
def rm(state: State, source: str, collection: str) -> None:
    """Remove a document (SOURCE as for kb get)."""
    knowledge = state.service(write=True).kb
    name = knowledge.resolve(source, collection=collection)  # its error names what exists
    if not knowledge.delete(name, collection=collection):
        raise click.ClickException(f"no document {source!r} in collection {collection!r}")
    # the name it had ("api/why.md"), not the spelling given ("why.md")
    state.out.emit({"source": name, "collection": collection, "deleted": True}, f"removed {name}")


@kb.command("list", epilog="Example:  remembrances kb list --collection notes")
@click.option("--collection", default=None)
@json_option
@pass_state
def list_(state: State, collection: str | None) -> None:
    """List stored documents."""
    docs = records(state.service().kb.list(collection=collection))
    rows = [
        (
            d.get("source"),
            d.get("collection"),
            d.get("title") or "",
            d.get("chunks"),
            d.get("chars"),
        )
        for d in docs
    ]
    state.out.emit(
        docs, state.out.table(("source", "collection", "title", "chunks", "chars"), rows)
    )


@kb.command(epilog="Example:  remembrances kb watch ~/notes --interval 5")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--collection", default="default", show_default=True)
@_pattern_option
@click.option("--interval", type=click.FloatRange(min=0.2), default=2.0, show_default=True)
@click.option("--once", is_flag=True, hidden=True, help="One pass, then exit (for tests).")
@pass_state
def watch(
    state: State,
    path: Path,
    collection: str,
    patterns: tuple[str, ...],
    interval: float,
    once: bool,
) -> None:
    """Keep a directory in sync until Ctrl-C: changed files are re-ingested, deleted removed."""
    knowledge = state.service(create=True).kb
    if not state.url:  # a server refuses to watch: say nothing before it does
        state.out.err.print(f"watching {path} (Ctrl-C to stop)")
    stop = threading.Event()

    def changed(report: object) -> None:
        data = record(report)
        parts = [
            f"{k}: {', '.join(map(str, data[k]))}"
            for k in ("added", "updated", "removed")
            if data.get(k)
        ]
        if parts:
            state.out.note("; ".join(parts))

    if once:
        changed(knowledge.ingest(path, collection=collection, patterns=list(patterns) or None))
        return
    knowledge.watch(
        path,
        collection=collection,
        patterns=list(patterns) or None,
        interval=interval,
        stop_event=stop,
        on_change=changed,
    )
    state.out.err.print("stopped")
