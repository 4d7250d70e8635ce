"""Commands over the whole file: init, stats, search across sources, enrich."""

from __future__ import annotations

import click

from .app import State, cli, json_option, pass_state
from .render import hits_view, records

MODES = click.Choice(["hybrid", "vector", "text"])


@cli.command(epilog="Example:  remembrances --db team.db --embedder local init")
@json_option
@pass_state
def init(state: State) -> None:
    """Create the memory file (and its directory) and record the embedder it uses."""
    existed = state.db.exists()
    svc = state.service(create=True)
    stats = svc.stats()
    data = {
        "path": str(state.db),
        "created": not existed,
        "embedder": stats["embedder"],
        "dim": stats["dim"],
    }
    verb = "already exists" if existed else "created"
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
@click.option("--kind", "kinds", multiple=True, help="Only these sources (kb, event, code...).")
@click.option("--collection", "collections", multiple=True, help="Only these collections.")
@click.option("--min-score", type=float, default=0.0, show_default=True)
@click.option("--since", default=None, help="Only chunks at/after this ISO time.")
@click.option("--until", default=None, help="Only chunks at/before this ISO time.")
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
) -> None:
    """Search everything (documents, events, code) by meaning and words at once."""
    hits = state.service().store.search(
        query,
        mode=mode,  # type: ignore[arg-type]
        limit=limit,
        kind=list(kinds) or None,
        collection=list(collections) or None,
        min_score=min_score,
        since=since,
        until=until,
    )
    data = records(hits)
    state.out.emit(data, hits_view(state.out, data))


@cli.command(
    epilog='Example:  remembrances enrich "fix the retry bug in upload_file, it broke yesterday"'
)
@click.argument("prompt")
@json_option
@pass_state
def enrich(state: State, prompt: str) -> None:
    """Print the memory that helps with PROMPT, as an agent would get it (empty if none)."""
    context = state.service().enrich_context(prompt)
    if state.out.as_json:
        state.out.json({"prompt": prompt, "context": context})
    elif context:
        click.echo(context)
    else:
        state.out.err.print("nothing relevant in memory", style="dim")


@cli.command(epilog="Example:  remembrances check --repair")
@click.option("--repair", is_flag=True, help="Rebuild the indexes that disagree with the chunks.")
@json_option
@pass_state
def check(state: State, repair: bool) -> None:
    """Verify that the full-text and vector indexes agree with the chunks (exit 1 if not)."""
    report = state.service().check(repair=repair)
    data = report.to_dict()
    human = "\n".join(
        [f"{data['chunks']:,} chunks, {data['vectors']:,} vectors"]
        + [f"problem: {p}" for p in report.problems]
        + [f"repaired: {r}" for r in report.repaired]
        + ["ok" if report.ok else "problems found; run again with --repair"]
    )
    state.out.emit(data, human)
    if not report.ok:
        raise SystemExit(1)
