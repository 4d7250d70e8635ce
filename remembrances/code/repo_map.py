"""The ranked repository map: what matters in a repository, in a token budget.

Files are ranked by personalised PageRank over the reference graph
(``graph.py``): a file many files use ranks high, and with a focus the random
walk restarts at the focus files (and the files defining the focus symbols), so
their neighbourhood ranks high. Each file's rank then flows along its edges to
the definitions it uses, which ranks the symbols. The map is the longest prefix
of the ranked definitions whose rendering fits the budget: ``path:`` lines with
the signatures indented under them (enclosing classes included), the layout a
model reads best. Definitions in test files keep a tenth of their score, as in code
search: a test suite's helpers are used by every test.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidInputError, NotFoundError
from ..storage.transaction import Transaction
from ..store import Store
from . import graph, tables
from .checks import check_name, check_project_name
from .pagerank import pagerank
from .ranking import TEST_FILE_FACTOR, is_test
from .tables import SymbolSpan

DEFAULT_BUDGET_TOKENS = 1024
MAX_BUDGET_TOKENS = 1_000_000
MAX_FOCUS = 200
#: Weight of the uses of a focus symbol's name, and of a private name.
FOCUS_NAME_BOOST = 10.0
PRIVATE_NAME_FACTOR = 0.1
#: A name defined in more files than this is probably generic (``args``, ``key``).
MANY_DEFINERS = 5
GENERIC_NAME_FACTOR = 0.1
#: A long descriptive name (``next_run_time``, ``formatDate``) says precisely what it uses.
DESCRIPTIVE_NAME_LENGTH = 8
DESCRIPTIVE_NAME_BOOST = 10.0
#: Share of the random jumps that land anywhere when there is a focus, so the
#: rest of the repository is still ranked.
FOCUS_BACKGROUND = 0.05
#: Symbols shown per (file, name): same-named methods of different classes.
MAX_SYMBOLS_PER_NAME = 3
#: Kinds that add to a type defined elsewhere, under its name: shown as themselves.
BLOCKS = frozenset({"impl", "extension"})
INDENT = "  "

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """About four characters a token: what LLM tokenizers average on code and prose."""
    return (len(text) + 3) // 4


def name_weight(name: str) -> float:
    """How much a use of ``name`` says about which definition is meant (after aider's map).

    Descriptive names weigh more; private, dunder and one- or two-letter names less.
    """
    weight = 1.0
    if name.startswith("__") and name.endswith("__"):
        weight *= GENERIC_NAME_FACTOR
    elif name.startswith("_"):
        weight *= PRIVATE_NAME_FACTOR
    if len(name) <= 2:
        weight *= GENERIC_NAME_FACTOR
    core = name.strip("_")
    snake = "_" in core
    camel = any(c.isupper() for c in core) and any(c.islower() for c in core)
    if (snake or camel) and len(name) >= DESCRIPTIVE_NAME_LENGTH:
        weight *= DESCRIPTIVE_NAME_BOOST
    return weight


@dataclass(frozen=True)
class MapSymbol:
    qualified_name: str
    kind: str
    signature: str
    start_line: int
    end_line: int
    rank: float  # 0 for an enclosing symbol shown only for context


@dataclass
class MapFile:
    path: str
    rank: float
    symbols: list[MapSymbol] = field(default_factory=list)


@dataclass
class RepoMap:
    project: str
    text: str
    tokens: int  # of ``text``, as the token counter counts
    budget_tokens: int
    files: list[MapFile]
    focus_files: list[str]  # the focus as resolved: files ...
    focus_symbols: list[str]  # ... and qualified names

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"budget_tokens must be an integer, not {type(value).__name__}")
    if not 1 <= value <= MAX_BUDGET_TOKENS:
        raise InvalidInputError(f"budget_tokens must be between 1 and {MAX_BUDGET_TOKENS}")
    return value


def _check_focus(focus: Any) -> list[str]:
    if focus is None:
        return []
    if isinstance(focus, str | os.PathLike):
        focus = [focus]
    if not isinstance(focus, Iterable):
        raise InvalidInputError(f"focus must be a list of paths or names, not {type(focus)}")
    items = []
    for value in focus:
        if not isinstance(value, str | os.PathLike):
            raise InvalidInputError(f"focus items must be strings, not {type(value).__name__}")
        text = check_name(os.fspath(value), "focus item")
        if "\x00" in text:
            raise InvalidInputError(f"focus item {text[:80]!r} is binary")
        items.append(text)
    if len(items) > MAX_FOCUS:
        raise InvalidInputError(f"focus has {len(items)} items; at most {MAX_FOCUS}")
    return items


class RepoMapper:
    """Renders repository maps from the code index (reached as ``svc.code.repo_map``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # The last graph read per project, valid while its code_graphs row is unchanged
        # (every index run that writes or removes a file updates that row).
        self._cache: dict[int, tuple[tuple[Any, ...], dict[int, str], graph.Edges]] = {}
        self._lock = threading.Lock()

    def repo_map(
        self,
        project: str,
        *,
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        focus: Sequence[str | os.PathLike[str]] | str | None = None,
        token_counter: TokenCounter | None = None,
        strict_focus: bool = True,
    ) -> RepoMap:
        name = check_project_name(project)
        budget = check_budget(budget_tokens)
        wanted = _check_focus(focus)
        count = token_counter or estimate_tokens
        with self.store.snapshot() as tx:
            found = tables.project(tx, name)
            project_id, root = found.id, found.root
            files, edges = self._graph(tx, project_id)
            chosen = _resolve_focus(tx, name, root, files, wanted, strict_focus)
            ranked, file_rank = _rank(files, edges, chosen)
            # Enough candidates to fill the budget: every shown line costs a few tokens.
            wanted_count = budget // 3 + len(chosen.definitions) + 20
            if len(ranked) < wanted_count:
                ranked += _unused(tx, files, ranked, file_rank)
            candidates = ranked[:wanted_count]
            symbols = tables.symbol_spans(tx, {f for _, f, _ in candidates})

        low, high = 0, len(candidates)
        while low < high:  # the longest prefix that fits; the text grows with k
            middle = (low + high + 1) // 2
            if count(_render(candidates[:middle], files, symbols)[0]) <= budget:
                low = middle
            else:
                high = middle - 1
        text, map_files = _render(candidates[:low], files, symbols)
        return RepoMap(
            project=name,
            text=text,
            tokens=count(text),
            budget_tokens=budget,
            files=map_files,
            focus_files=sorted(files[f] for f in chosen.files),
            focus_symbols=sorted(chosen.qualified_names),
        )

    def rebuild_graph(self, project: str) -> int:
        """Rebuild a project's whole reference graph now; returns its number of edges.

        Index runs keep the graph current themselves (a full build once, then
        updates per changed file); this measures a build (benchmarks) or redoes one.
        """
        name = check_project_name(project)
        with self.store.transaction() as tx:
            return graph.build(tx, tables.project(tx, name).id)

    def graph_updates(self, project: str) -> int | None:
        """Incremental updates of the project's graph since its last full build
        (None before the first build)."""
        name = check_project_name(project)
        with self.store.snapshot() as tx:
            state = graph.state(tx, tables.project(tx, name).id)
        return None if state is None else int(state[2])

    def _graph(self, tx: Transaction, project_id: int) -> tuple[dict[int, str], graph.Edges]:
        state = graph.state(tx, project_id)
        with self._lock:
            cached = self._cache.get(project_id)
        if state is not None and cached is not None and cached[0] == tuple(state):
            return cached[1], cached[2]
        files = tables.file_paths(tx, project_id)
        edges = graph.edges(tx, project_id)
        if state is not None:
            with self._lock:
                self._cache[project_id] = (tuple(state), files, edges)
        return files, edges


@dataclass
class _Focus:
    files: set[int] = field(default_factory=set)  # focus files and the focus symbols' files
    definitions: list[tuple[int, str]] = field(default_factory=list)  # (file, name) to show first
    names: set[str] = field(default_factory=set)  # focus symbols' names
    qualified_names: set[str] = field(default_factory=set)
    file_names: set[tuple[int, str]] = field(default_factory=set)  # top-level names of focus files


def _resolve_focus(
    tx: Transaction,
    project: str,
    root: str,
    files: dict[int, str],
    wanted: list[str],
    strict: bool,
) -> _Focus:
    """Each item is a file (path, relative or absolute, a unique path suffix, or a path
    elsewhere that ends with an indexed one) or a symbol."""
    focus = _Focus()
    by_path = {p: i for i, p in files.items()}
    for item in wanted:
        rel = item.replace("\\", "/")
        if os.path.isabs(item):
            rel = os.path.relpath(os.path.realpath(item), root).replace(os.sep, "/")
        rel = rel.removeprefix("./")
        matches = [by_path[rel]] if rel in by_path else []
        if not matches:
            matches = [i for p, i in by_path.items() if p.endswith("/" + rel)]
        if not matches:  # a path from another machine (a container's trace): its tail
            whole = item.replace("\\", "/")
            inside = [(len(p), i) for p, i in by_path.items() if whole.endswith("/" + p)]
            longest = max((n for n, _ in inside), default=0)
            matches = [i for n, i in inside if n == longest]
        if matches:
            focus.files.update(matches)
            continue
        symbols = tables.find_symbols(
            tx, item.replace("::", "."), project=project, limit=20, ignore_case=False
        )
        symbols = [s for s in symbols if s.path in by_path]
        if not symbols and not strict:
            continue
        if not symbols:
            raise NotFoundError(
                f"focus {item!r} is neither an indexed file nor a symbol of project {project!r}"
            )
        for symbol in symbols:
            file_id = by_path[symbol.path]
            focus.files.add(file_id)
            if (file_id, symbol.name) not in focus.definitions:
                focus.definitions.append((file_id, symbol.name))
            focus.names.add(symbol.name)
            focus.qualified_names.add(symbol.qualified_name)
    if focus.files:
        focus.file_names = graph.definitions_in(tx, focus.files)
    return focus


def _unused(
    tx: Transaction,
    files: dict[int, str],
    ranked: list[tuple[float, int, str]],
    file_rank: dict[int, float],
) -> list[tuple[float, int, str]]:
    """The definitions no other file uses, after the used ones: a small project whose
    files stand alone (scripts, independent modules) has few uses or none, and its map
    was empty. Ordered by their file's rank (files in path order when ranks tie), and
    scored under every used definition."""
    shown = {(f, n) for _, f, n in ranked}
    # a share of the least used definition's score, so that a map's ranks go down
    scale = (
        min((t[0] for t in ranked), default=1.0)
        / 2
        / max(max(file_rank.values(), default=0.0), 1e-12)
    )
    unused = [(file_rank[f] * scale, f, n) for f, n in graph.definitions_in(tx, files) - shown]
    return sorted(unused, key=lambda t: (-t[0], files[t[1]], t[2]))


def _rank(
    files: dict[int, str], edges: graph.Edges, focus: _Focus
) -> tuple[list[tuple[float, int, str]], dict[int, float]]:
    """(score, file id, name) of every used definition, best first; and each file's rank."""
    ids = sorted(files)
    nodes = len(ids)
    node_of = {f: n for n, f in enumerate(ids)}
    id_array = np.array(ids, dtype=np.int64)
    # One-letter names make no edges: such a use is a local variable nearly every time
    # (``except ... as e``), and a file's rank flows whole along the edges it has, however
    # light. Weighed like two-letter names, Django's TimeFormat.e and .s led its map.
    telling = np.array([len(text.strip("_")) > 1 for text in edges.names], dtype=bool)
    keep = np.isin(edges.src, id_array) & np.isin(edges.dst, id_array)
    if len(edges.name):
        keep &= telling[edges.name]
    src = np.searchsorted(id_array, edges.src[keep])
    dst = np.searchsorted(id_array, edges.dst[keep])
    name = edges.name[keep]
    factor = np.array([name_weight(text) for text in edges.names])
    for at, text in enumerate(edges.names):
        if text in focus.names:
            factor[at] *= FOCUS_NAME_BOOST
    definers = np.zeros(len(edges.names))
    if len(name):
        pairs = np.unique(name * nodes + dst)  # one key per (name, defining file)
        definers = np.bincount(pairs // nodes, minlength=len(edges.names)).astype(np.float64)
    many = np.where(definers > MANY_DEFINERS, GENERIC_NAME_FACTOR, 1.0)
    weight = np.sqrt(edges.refs[keep]) * factor[name] * many[name] / np.maximum(definers[name], 1.0)
    jump = None
    if focus.files:
        jump = np.full(nodes, FOCUS_BACKGROUND / max(nodes, 1))
        for f in focus.files:
            jump[node_of[f]] += (1.0 - FOCUS_BACKGROUND) / len(focus.files)
    rank = pagerank(nodes, src, dst, weight, jump)
    scores: dict[tuple[int, str], float] = {}
    if len(name):
        out = np.bincount(src, weights=weight, minlength=nodes)
        flow = rank[src] * weight / out[src]
        keys, inverse = np.unique(name * nodes + dst, return_inverse=True)
        totals = np.bincount(inverse.reshape(-1), weights=flow)
        for key, total in zip(keys.tolist(), totals.tolist(), strict=True):
            scores[(ids[key % nodes], edges.names[key // nodes])] = total
    # A test suite's helpers are used by every test and led the map (greenlet's
    # ``TestCase.setUp``): a test file's definitions keep TEST_FILE_FACTOR of their
    # score, as in code search, unless the map is focused on that file.
    demoted = {f for f in ids if f not in focus.files and is_test(files[f])}
    for key in scores:
        if key[0] in demoted:
            scores[key] *= TEST_FILE_FACTOR
    # First the focus symbols, in the order given; then the focus files' own
    # top-level definitions (used ones first); then everything by rank.
    top = max(scores.values(), default=0.0) + 1.0
    for key in focus.file_names:
        scores[key] = top + scores.get(key, 0.0)
    for at, key in enumerate(focus.definitions):
        scores[key] = 3 * top + (len(focus.definitions) - at)
    ranked = sorted(((s, f, n) for (f, n), s in scores.items()), key=lambda t: (-t[0], t[1], t[2]))
    kept = {f: TEST_FILE_FACTOR if f in demoted else 1.0 for f in ids}
    return ranked, {f: float(rank[node_of[f]]) * kept[f] for f in ids}


def _shown_as(s: SymbolSpan, by_position: dict[int, SymbolSpan]) -> tuple[int | None, str]:
    """What one line of a file's map stands for: a qualified name, except that a Rust impl
    block (a Swift extension) is named after its type but is a block of its own, and
    ``impl Display for Foo`` is shown over its ``fmt``, not the struct's line."""
    if s.kind in BLOCKS:
        return s.position, s.qualified_name
    holder = by_position.get(s.parent) if s.parent is not None else None
    return (s.parent if holder is not None and holder.kind in BLOCKS else None), s.qualified_name


def _render(
    selected: list[tuple[float, int, str]],
    files: dict[int, str],
    symbols: dict[int, list[SymbolSpan]],
) -> tuple[str, list[MapFile]]:
    chosen: dict[int, dict[str, float]] = {}
    for score, file_id, name in selected:  # best first: files keep their best score's order
        chosen.setdefault(file_id, {}).setdefault(name, score)
    lines: list[str] = []
    out: list[MapFile] = []
    for file_id, names in chosen.items():
        in_file = symbols.get(file_id, [])
        by_position = {s.position: s for s in in_file}

        # One definition per qualified name, the first: ``@overload`` stubs took three
        # lines each of click's map; a property is shown by its getter, not its setter;
        # a class defined twice (``if TYPE_CHECKING:``) once, with every method; an impl
        # block as itself (``_shown_as``).
        key = {s.position: _shown_as(s, by_position) for s in in_file}
        first: dict[tuple[int | None, str], int] = {}
        for s in in_file:
            first.setdefault(key[s.position], s.position)

        shown: dict[int, float] = {}
        taken: dict[str, int] = {}
        for s in in_file:
            if first[key[s.position]] != s.position:
                continue
            if s.name in names and taken.get(s.name, 0) < MAX_SYMBOLS_PER_NAME:
                taken[s.name] = taken.get(s.name, 0) + 1
                shown[s.position] = names[s.name]
                parent = s.parent
                while parent is not None and parent in by_position:  # enclosing classes
                    shown.setdefault(first[key[parent]], 0.0)
                    parent = by_position[parent].parent
        if not shown:
            continue
        entry = MapFile(files[file_id], max(names.values()))
        lines.append(f"{files[file_id]}:")
        for s in in_file:
            if s.position not in shown:
                continue
            depth, parent = 1, s.parent
            while parent is not None and parent in by_position:
                depth, parent = depth + 1, by_position[parent].parent
            lines.append(INDENT * depth + (s.signature or f"{s.kind} {s.name}"))
            entry.symbols.append(
                MapSymbol(
                    s.qualified_name,
                    s.kind,
                    s.signature,
                    s.start_line,
                    s.end_line,
                    shown[s.position],
                )
            )
        out.append(entry)
    return "\n".join(lines), out


__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "MapFile",
    "MapSymbol",
    "RepoMap",
    "RepoMapper",
    "estimate_tokens",
]
