"""``code``: repositories indexed by symbol, searchable by words and names."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.text import Text
from rich.tree import Tree

from ..formatting import STALE_LINE
from .app import State, cli, json_option, pass_state
from .options import MODES
from .output import when
from .render import first, hits_view, record, records


@cli.group(epilog="Example:  remembrances code index . && remembrances code search 'retry uploads'")
def code() -> None:
    """Code: index repositories, search, find symbols, outlines, references."""


@code.command(epilog="Example:  remembrances code index ~/src/app --project app --language python")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--project", default=None, help="Project name [default: the directory name].")
@click.option("--language", "languages", multiple=True, help="Only these languages.")
@click.option(
    "--no-embed",
    is_flag=True,
    help="Make it searchable by words now; embed later with `code backfill`.",
)
@json_option
@pass_state
def index(
    state: State, path: Path, project: str | None, languages: tuple[str, ...], no_embed: bool
) -> None:
    """Index (or incrementally re-index) a repository."""
    indexer = state.service(create=True).code
    extra: dict[str, Any] = {"embed": False} if no_embed else {}
    with state.out.progress(f"indexing {path}") as bar:
        report = indexer.index(
            path, project=project, languages=list(languages) or None, **extra, progress=bar
        )
    data = record(report)
    shown: dict[str, Any] = {
        k: len(v) if isinstance(v, list) else v
        for k, v in data.items()
        if k != "skipped"  # files_skipped counts them
    }
    timings = data.get("timings")
    if isinstance(timings, dict):
        shown["timings"] = {k: f"{v:.2f}s" for k, v in timings.items()}
    state.out.emit(data, state.out.mapping(shown, title=f"indexed {path}"))


@code.command(epilog="Example:  remembrances code index . --no-embed && remembrances code backfill")
@click.option("--project", default=None, help="Only this project [default: every project].")
@json_option
@pass_state
def backfill(state: State, project: str | None) -> None:
    """Embed the code chunks still waiting for vectors (after `code index --no-embed`)."""
    indexer = state.service(write=True).code
    names = [project] if project is not None else [p["name"] for p in records(indexer.projects())]
    done: dict[str, int] = {}
    for name in names:
        with state.out.progress(f"embedding {name}") as bar:
            done[name] = indexer.backfill(name, progress=bar)
    pending = sum(indexer.stats(name).pending_embeddings for name in names)
    data = {"embedded": done, "pending_embeddings": pending}
    human = ", ".join(f"{name}: {n:,} embedded" for name, n in done.items()) or "no projects"
    state.out.emit(data, f"{human}; {pending:,} still waiting")


@code.command(epilog="Example:  remembrances code search 'where do we retry failed uploads' -n 5")
@click.argument("query")
@click.option("--project", default=None)
@click.option("-n", "--limit", default=10, show_default=True)
@click.option("--language", "languages", multiple=True)
@click.option("--kind", "kinds", multiple=True, help="function, method, class...")
@click.option("--path", default=None, help="Only files under this relative path.")
@click.option("--min-score", type=float, default=0.0, help="Only hits scoring at least this.")
@click.option("--mode", type=MODES, default="hybrid", show_default=True)
@json_option
@pass_state
def search(
    state: State,
    query: str,
    project: str | None,
    limit: int,
    languages: tuple[str, ...],
    kinds: tuple[str, ...],
    path: str | None,
    min_score: float,
    mode: str,
) -> None:
    """Search code by plain words or identifiers; hits show file:lines and highlighted code."""
    hits = state.service().code.search(
        query,
        project=project,
        limit=limit,
        languages=list(languages) or None,
        kinds=list(kinds) or None,
        path=path,
        min_score=min_score,
        mode=mode,  # type: ignore[arg-type]  # click.Choice checked it
    )
    data = records(hits)
    state.out.emit(data, hits_view(state.out, data, mode))


@code.command(epilog="Example:  remembrances code symbol Session.send --kind method")
@click.argument("name")
@click.option("--project", default=None)
@click.option("--kind", default=None)
@click.option("-n", "--limit", default=100, show_default=True)
@json_option
@pass_state
def symbol(state: State, name: str, project: str | None, kind: str | None, limit: int) -> None:
    """Find a symbol by name or qualified name."""
    found = state.service().code.find_symbol(name, project=project, kind=kind, limit=limit)
    data = _all_or_say(state, records(found), limit, "symbols")
    state.out.emit(data, hits_view(state.out, data))


def _all_or_say(state: State, data: list[Any], limit: int, what: str) -> list[Any]:
    """The results, saying on stderr when the limit may have cut them: a long answer
    cut without a word looked complete."""
    if len(data) >= limit:
        state.out.err.print(
            f"the first {limit:,} {what}; there may be more (pass --limit for more)", style="dim"
        )
    return data


def _tree(node: Tree, items: Any) -> Tree:
    for item in items or []:
        data = record(item)
        label = (
            f"[magenta]{escape(str(data.get('kind', '')))}[/] "
            f"{escape(str(first(data, 'qualified_name', 'name')))} "
            f"[dim]{first(data, 'start_line', default='')}-{first(data, 'end_line', default='')}[/]"
        )
        _tree(node.add(label), data.get("children"))
    return node


@code.command(epilog="Example:  remembrances code outline src/app/upload.py --project app")
@click.argument("file")
@click.option("--project", default=None)
@json_option
@pass_state
def outline(state: State, file: str, project: str | None) -> None:
    """Show the nested symbols of one indexed file."""
    symbols = state.service().code.outline(file, project=project)
    data = records(symbols)
    state.out.emit(data, _tree(Tree(Text(file)), symbols))


@code.command(epilog="Example:  remembrances code refs upload_file --project app")
@click.argument("name")
@click.option("--project", default=None)
@click.option("-n", "--limit", default=1000, show_default=True)
@json_option
@pass_state
def refs(state: State, name: str, project: str | None, limit: int) -> None:
    """Where an identifier occurs (found by the parser, not by substring)."""
    found = state.service().code.references(name, project=project, limit=limit)
    data = _all_or_say(state, records(found), limit, "references")
    if not data:
        state.out.emit(data, "no references")
        return
    several = len({d["project"] for d in data}) > 1  # then "where" names the project
    rows = [
        (
            (f"[{d['project']}] " if several else "") + f"{d['path']}:{d['line']}",
            d.get("symbol") or "",
            "def" if d.get("is_definition") else "",
            (STALE_LINE if d.get("stale") else "") + d.get("line_text", "").strip(),
        )
        for d in data
    ]
    state.out.emit(data, state.out.table(("where", "in", "", "line"), rows))


@code.command(
    "map", epilog="Example:  remembrances code map app --tokens 2048 --focus src/app/upload.py"
)
@click.argument("project")
@click.option(
    "--tokens",
    "budget_tokens",  # the library's name: its errors then name --tokens
    type=int,
    default=None,
    help="Token budget [default: 1024, the library's DEFAULT_BUDGET_TOKENS].",
)
@click.option(
    "--focus", multiple=True, help="A file or symbol to rank the map towards (repeatable)."
)
@json_option
@pass_state
def map_(state: State, project: str, budget_tokens: int | None, focus: tuple[str, ...]) -> None:
    """The most important files and signatures of a project, ranked, within a token budget."""
    from ..code.repo_map import DEFAULT_BUDGET_TOKENS  # one default for the CLI, MCP and API

    budget = DEFAULT_BUDGET_TOKENS if budget_tokens is None else budget_tokens
    code = state.service().code
    result = code.repo_map(project, budget_tokens=budget, focus=list(focus) or None)
    data = record(result)
    # plain text: signatures hold brackets rich would read as markup, and must not wrap
    text = Text(
        result.text or f"(nothing fits in {budget} tokens)", no_wrap=True, overflow="ignore"
    )
    state.out.emit(data, text)


@code.command(epilog="Example:  remembrances code projects --json")
@json_option
@pass_state
def projects(state: State) -> None:
    """Indexed projects with their roots and counts."""
    data = records(state.service().code.projects())
    columns = sorted({k for d in data for k in d}, key=lambda k: (k != "name", k != "root", k))
    rows = [[when(d[c]) if c.endswith("_at") else d.get(c) for c in columns] for d in data]
    state.out.emit(data, state.out.table(columns or ("name",), rows))


@code.command(epilog="Example:  remembrances code rm app")
@click.argument("project")
@json_option
@pass_state
def rm(state: State, project: str) -> None:
    """Remove a project with its files, symbols and chunks."""
    files = state.service(write=True).code.remove(project)
    state.out.emit(
        {"project": project, "files": files}, f"removed project {project} ({files} files)"
    )


@code.command(epilog="Example:  remembrances code watch . --interval 5")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--project", default=None)
@click.option("--language", "languages", multiple=True, help="Only these languages.")
@click.option("--interval", type=click.FloatRange(min=0.2), default=2.0, show_default=True)
@click.option("--once", is_flag=True, hidden=True, help="One pass, then exit (for tests).")
@pass_state
def watch(
    state: State,
    path: Path,
    project: str | None,
    languages: tuple[str, ...],
    interval: float,
    once: bool,
) -> None:
    """Keep a repository's index current until Ctrl-C (only changed files are re-indexed)."""
    indexer = state.service(create=True).code
    if not state.url:  # a server refuses to watch: say nothing before it does
        state.out.err.print(f"watching {path} (Ctrl-C to stop)")

    def indexed(report: object) -> None:
        data = record(report)
        state.out.note(
            f"{data.get('files_indexed', 0)} indexed, {data.get('files_removed', 0)} removed, "
            f"{data.get('files_unchanged', 0)} unchanged"
        )

    with contextlib.suppress(KeyboardInterrupt):
        indexer.watch(
            path,
            project=project,
            languages=list(languages) or None,
            interval=interval,
            on_index=indexed,
            max_runs=1 if once else None,
        )
    state.out.err.print("stopped")
