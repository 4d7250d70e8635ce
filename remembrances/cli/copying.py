"""``copy``: a whole memory to another file or PostgreSQL memory, vectors included."""

from __future__ import annotations

from pathlib import Path

import click

from .app import MemoryLocation, State, cli, json_option, pass_state
from .render import record


@cli.command(
    "copy",
    epilog="Examples:\n\n  remembrances copy memory.db 'postgresql://agent@db/memories?memory=team'\n\n"
    "  remembrances copy 'postgresql://agent@db/memories?memory=team' backup.db",
)
@click.argument("source", type=MemoryLocation())
@click.argument("destination", type=MemoryLocation())
@click.option(
    "--replace",
    is_flag=True,
    help="Overwrite a destination that already holds a memory (refused otherwise).",
)
@json_option
@pass_state
def copy_(state: State, source: Path | str, destination: Path | str, replace: bool) -> None:
    """Copy the memory at SOURCE to DESTINATION (each a file or a postgresql:// URL)
    with its vectors, times, model and code index: nothing is re-embedded. The
    destination is written in one transaction; a failed copy leaves nothing."""
    from ..memory_copy import copy_memory

    with state.out.progress("copying") as bar:
        report = copy_memory(source, destination, replace=replace, progress=bar)
    data = record(report)
    state.out.emit(data, state.out.mapping(data, title="copied"))
