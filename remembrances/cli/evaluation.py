"""``eval``: retrieval quality on the user's own data: BEIR-layout documents or code,
or conversations with questions (LoCoMo layout, or JSONL messages and questions)."""

from __future__ import annotations

from pathlib import Path

import click

from .app import State, cli, json_option, pass_state
from .render import record


@cli.command(
    "eval",
    epilog="Examples:  remembrances --embedder local eval ./my-beir-set --split dev --kind kb\n\n"
    "           remembrances eval ../shared/eval/locomo-dev   (conversations: evidence recall)",
)
@click.argument("directory", type=click.Path(exists=True, path_type=Path))
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
@click.option(
    "--conversations/--documents",
    "conversations",
    default=None,
    help="Read DIRECTORY as conversations with questions (LoCoMo JSON, or JSONL of messages "
    "and questions) [default: a folder with corpus.jsonl is documents, anything else "
    "conversations].",
)
@click.option(
    "--db-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Conversations: keep one store per conversation here and reuse it next time.",
)
@click.option("--no-enrich", is_flag=True, help="Conversations: skip enrich_context.")
@json_option
@pass_state
def evaluate(
    state: State,
    directory: Path,
    split: str,
    kind: str,
    k: int,
    modes: tuple[str, ...],
    conversations: bool | None,
    db_dir: Path | None,
    no_enrich: bool,
) -> None:
    """Measure retrieval quality: nDCG, recall and MRR of each search mode on a BEIR-layout
    folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv), or evidence recall@5 and @K on
    conversations (each logged into its own store; see docs/events.md)."""
    if conversations is None:
        conversations = not (directory / "corpus.jsonl").is_file()
    if conversations:
        _conversations(state, directory, k, db_dir, not no_enrich)
        return
    if not directory.is_dir():
        raise click.UsageError(f"{directory} is a file; a BEIR-layout set is a folder")
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
            progress=task,
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


def _conversations(state: State, path: Path, k: int, db_dir: Path | None, enrich: bool) -> None:
    from ..conversation_eval import evaluate as run
    from ..embeddings import create as create_embedder

    with state.out.progress(f"evaluating {path.name}") as task:
        result = run(
            path,
            embedder=create_embedder(state.embedder),
            db_dir=db_dir,
            k=(5, k),
            enrich=enrich,
            progress=task,
        )
    if state.out.as_json:
        state.out.json(record(result))
        return
    title = (
        f"{result.dataset}: {result.conversations} conversations, {result.turns} turns, "
        f"{result.questions} questions, embedder {result.embedder}"
    )
    state.out.console.print(state.out.table(result.header(), result.rows(), title))
