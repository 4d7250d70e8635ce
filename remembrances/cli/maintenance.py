"""Commands over a whole file: reembed, compact, export, import."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from .app import State, cli, json_option, pass_state
from .render import record


@cli.command(
    epilog="Example:  remembrances --db memory.db reembed --embedder openai:text-embedding-3-small"
)
@click.option(
    "--embedder",
    "spec",
    metavar="SPEC",
    default=None,
    help="The new embedder (required here or as the global --embedder).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(1, 4096),
    default=None,
    help="Texts per embedder call [default: what the embedder asks for; 64 for local ones].",
)
@json_option
@pass_state
def reembed(state: State, spec: str | None, batch_size: int | None) -> None:
    """Re-embed everything with another model, then switch the file to it.

    New vectors are computed first (resumable; the file keeps working meanwhile)
    and swapped in one transaction. Restart other processes using the file afterwards.
    """
    spec = spec or state.embedder
    if not spec:
        raise click.UsageError("give the new model with --embedder SPEC")
    if isinstance(state.db, Path) and not state.db.exists():
        raise click.ClickException(f"no memory file at {state.db}")
    from ..embeddings import create as create_embedder
    from ..reembed import reembed as run

    new = create_embedder(spec)
    with state.out.progress(f"re-embedding for {new.name}") as bar:
        report = run(state.db, new, batch_size=batch_size, progress=bar)
    data = record(report)
    state.out.emit(data, state.out.mapping(data, title="re-embedded"))


@cli.command(epilog="Example:  remembrances --db memory.db compact")
@json_option
@pass_state
def compact(state: State) -> None:
    """Drop cached vectors no document, event or code uses, and shrink the file.

    Deleted and pruned text keeps its vector cached (adding it back is free); this
    drops those. The file is rewritten: that needs free disk space for two copies of
    what it keeps (one in the temp folder, one in the WAL), and other writers wait.
    """
    report = state.service(write=True).compact()
    data = record(report)
    line = (
        f"dropped {report.vectors_dropped:,} unused cached vectors; "
        f"{_mb(report.bytes_before)} -> {_mb(report.bytes_after)}"
    )
    if not report.settled:
        line += (
            f" once the reads still open on the file end ({_mb(report.bytes_on_disk)} "
            "on disk until then)"
        )
    state.out.emit(data, line)


def _mb(size: int) -> str:
    return f"{size / 1_048_576:,.1f} MB"


@cli.command(
    "export",
    epilog="Example:  remembrances export backup.jsonl   (or - for stdout: ... export - | gzip)",
)
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@json_option
@pass_state
def export_(state: State, file: Path) -> None:
    """Write documents, events, code project roots and other chunks as JSON Lines
    (no vectors: importing re-embeds with the target file's model)."""
    from ..transfer import export_jsonl

    svc = state.service()
    if str(file) == "-":
        report = export_jsonl(svc, sys.stdout)
        state.out.err.print(_summary(report.counts), markup=False)
        return
    try:
        handle = file.open("w", encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {file}: {_why(file, exc)}") from None
    with handle:
        report = export_jsonl(svc, handle)
    _show(state, record(report), f"exported to {file}")


@cli.command(
    "import",
    epilog="Example:  remembrances --db new.db --embedder local import backup.jsonl",
)
@click.argument(
    "file", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path)
)
@json_option
@pass_state
def import_(state: State, file: Path) -> None:
    """Read an export: documents and chunk sources replace those with the same name,
    identical events are stored once, code projects are re-indexed from their roots."""
    from ..transfer import import_jsonl

    stdin = str(file) == "-"
    try:
        handle = sys.stdin.buffer if stdin else file.open("rb")
    except OSError as exc:
        raise click.ClickException(f"cannot read {file}: {_why(file, exc)}") from None
    svc = state.service(create=True)
    try:
        with state.out.progress(f"importing {file}") as bar:
            lines = _utf8_lines(handle, "stdin" if stdin else str(file))
            report = import_jsonl(svc, lines, progress=bar)
    finally:
        if not stdin:
            handle.close()
    _show(state, record(report), f"imported {file}")


def _utf8_lines(handle: Iterable[bytes], name: str) -> Iterator[str]:
    """The lines of an export, decoded one by one: a byte that is not UTF-8 is named by
    its line and its offset in the file (a text-mode read reports neither)."""
    offset = 0
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise click.ClickException(
                f"{name} is not UTF-8 text (line {number}, byte {offset + exc.start + 1} is "
                f"0x{raw[exc.start]:02x}): an export file is UTF-8 JSON lines"
            ) from None
        offset += len(raw)


def _why(file: Path, exc: OSError) -> str:
    """What to fix, rather than Python's ``[Errno 2] No such file or directory: ...``."""
    folder = file.parent
    if isinstance(exc, FileNotFoundError) and not folder.is_dir():
        return f"the folder {folder} does not exist"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "nothing"


def _show(state: State, data: dict[str, Any], what: str) -> None:
    if state.out.as_json:
        state.out.json(data)
        return
    state.out.console.print(f"{what}: {_summary(data['counts'])}", markup=False)
    for skipped in data["skipped"]:
        state.out.note(f"skipped {skipped['what']}: {skipped['reason']}")
