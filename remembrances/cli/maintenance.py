"""Commands that move a whole file: reembed, export, import."""

from __future__ import annotations

import click

from .. import embeddings
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
@click.option("--batch-size", type=click.IntRange(1, 4096), default=64, show_default=True)
@json_option
@pass_state
def reembed(state: State, spec: str | None, batch_size: int) -> None:
    """Re-embed everything with another model, then switch the file to it.

    New vectors are computed first (resumable; the file keeps working meanwhile)
    and swapped in one transaction. Restart other processes using the file afterwards.
    """
    spec = spec or state.embedder
    if not spec:
        raise click.UsageError("give the new model with --embedder SPEC")
    if not state.db.exists():
        raise click.ClickException(f"no memory file at {state.db}")
    from ..reembed import reembed as run

    new = embeddings.create(spec)
    with state.out.progress(f"re-embedding for {new.name}") as task:

        def progress(done: int, total: int) -> None:
            task.total(total)
            task.done(done)

        report = run(state.db, new, batch_size=batch_size, progress=progress)
    data = record(report)
    state.out.emit(data, state.out.mapping(data, title="re-embedded"))
