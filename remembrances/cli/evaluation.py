"""``eval``: retrieval quality on the user's own BEIR-layout data."""

from __future__ import annotations

from pathlib import Path

import click

from .app import State, cli, json_option, pass_state
from .render import record


@cli.command(
    "eval",
    epilog="Example:  remembrances --embedder local eval ./my-beir-set --split dev --kind kb",
)
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="test", show_default=True, help="Which qrels/<split>.tsv to use.")
@click.option("--kind", type=click.Choice(["kb", "code"]), default="kb", show_default=True)
@click.option("-k", "k", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(["text", "vector", "hybrid"]),
    help="Search modes to measure (repeatable) [default: all three].",
)
@json_option
@pass_state
def evaluate(
    state: State, directory: Path, split: str, kind: str, k: int, modes: tuple[str, ...]
) -> None:
    """Measure nDCG, recall and MRR of each search mode on a BEIR-layout folder
    (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv), in a temporary store."""
    from ..embeddings import create as create_embedder
    from ..evaluation import MODES
    from ..evaluation import evaluate as run

    # Each phase (loading the corpus, then each mode's queries) gets its own bar.
    with state.out.progress(f"evaluating {directory.name}") as task:
        result = run(
            directory,
            split=split,
            embedder=create_embedder(state.embedder),
            kind=kind,  # type: ignore[arg-type]
            modes=modes or MODES,  # type: ignore[arg-type]
            k=k,
            progress=task.describe,
        )
    if state.out.as_json:
        state.out.json(record(result))
        return
    rows = []
    for mode, m in result.metrics.items():
        ms = 1000 * result.search_seconds.get(mode, 0.0) / max(m.queries, 1)
        rows.append((mode, f"{m.ndcg:.3f}", f"{m.recall:.3f}", f"{m.mrr:.3f}", f"{ms:.1f}"))
    title = (
        f"{result.dataset} ({split}): {result.documents} docs, {result.queries} queries, "
        f"embedder {result.embedder}, ingest {result.ingest_seconds:.1f}s"
    )
    state.out.console.print(
        state.out.table(("mode", f"nDCG@{k}", f"recall@{k}", f"MRR@{k}", "ms/query"), rows, title)
    )
