"""Code-aware enrichment: a prompt that names code gets those definitions first.

A prompt like "why does `Scheduler.next_run` skip a tick?" is about one
definition; semantic search may or may not rank it first. When the prompt names
identifiers (backticked, dotted, snake_case, camelCase, ``name()``) or source
paths, the code section starts with the definitions of the functions and methods
named (location, signature, docstring and code, cut to the budget like any item),
then the semantic hits, then the definitions of the classes named, where the names
are used and the repository map around their files. A class is a container: a
question that names one ("in `Response`, raise an error on a 4xx status") is
about something in it, which the semantic hits find, and a class's source would
fill the section. A prompt that names no code is searched exactly as before.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, NotFoundError
from ..formatting import code_label
from .daemon_pool import DaemonPool
from .plan import EnrichmentPlan
from .prompt_parts import split_prompt
from .sources import ContextItem, SourceSearch, code_layer, symbol_item

if TYPE_CHECKING:
    from ..code import CodeIndexer, CodeSymbol
    from ..service import RemembrancesService

log = logging.getLogger(__name__)

#: At most this many names from one prompt are looked up, in the order they appear.
MAX_NAMES = 6
#: Definitions shown per name (a name can be defined in several places) ...
MAX_DEFINITIONS = 2
#: Kinds that hold other definitions: shown after the semantic hits (module docstring).
CONTAINERS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "module", "namespace", "impl", "object"}
)
#: ... chosen among this many; the others are listed by location, up to MAX_LISTED.
MAX_CANDIDATES = 500
MAX_LISTED = 60
MAX_USES = 8
#: Frames of a pasted stack trace whose enclosing definitions are shown.
MAX_FRAMES = 3
MAP_TOKENS = 300
#: Share of it by which the code source answers with whatever it has.
ANSWER_SHARE = 0.8
_POOL: DaemonPool | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> DaemonPool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = DaemonPool(4, "remembrances-code-focus")
        return _POOL


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_EXTENSIONS = "py|pyi|js|mjs|cjs|jsx|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|cs|rb|php|kt|swift|sh|md"
#: A source path, relative or absolute (stack traces print absolute ones).
_PATH = re.compile(rf"(?<![\w/.-])(/?(?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS}))(?![\w/])")
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_CANDIDATES = re.compile(
    rf"(?<![\w.])(?:"
    rf"{_IDENT}(?:(?:\.|::){_IDENT})+"  # dotted: Scheduler.next_run, a::b
    rf"|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # snake_case
    rf"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # SCREAMING_CASE
    rf"|[a-z]+[A-Z][A-Za-z0-9]*"  # camelCase
    rf"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with two humps
    rf"|{_IDENT}(?=\()"  # a call: run(
    rf")(?![\w])"
)
_WHOLE_NAME = re.compile(rf"{_IDENT}(?:(?:\.|::){_IDENT})*")
#: A word in capitals (``LRI``, ``URL``, ``DEBUG``) names a class or a constant as often
#: as it is an acronym of prose; it is looked up after the names above, in a prompt
#: that is not all capitals, and only an exact, case-sensitive definition counts.
_CAPITALS = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]{2,}(?![\w(]|\.\w)")
#: Dotted words that are prose, not code.
_PROSE = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a"})


def wait_idle(timeout: float) -> None:
    """Let searches still running in the background finish, for up to ``timeout``
    seconds (call before closing the service: they read the store). The pool is the
    process's, shared by every memory: another memory's lookups are not cancelled, and
    its daemon threads never hold the process open."""
    with _POOL_LOCK:
        pool = _POOL
    if pool is not None:
        pool.wait(timeout)


def code_names(prompt: str) -> tuple[list[str], list[str]]:
    """(identifiers, paths) the prompt names, in order of appearance, without repeats.

    Beside pasted material (``prompt_parts.py``), the names the prose writes come
    first, and names only the paste writes and defines are not looked up: the user
    has that code.
    """
    parts = split_prompt(prompt)
    if parts.pasted:
        asked = set(_names_in(parts.ask)[0])
        names, paths = _names_in(parts.ask + "\n" + parts.pasted)
        defined = parts.names_defined()
        kept = [n for n in names if n in asked or n.rsplit(".", 1)[-1] not in defined]
        return kept[:MAX_NAMES], paths
    names, paths = _names_in(prompt)
    return names[:MAX_NAMES], paths


def _names_in(prompt: str) -> tuple[list[str], list[str]]:
    paths: list[str] = []
    names: list[str] = []
    for match in _PATH.finditer(prompt):
        if match.group(1) not in paths:
            paths.append(match.group(1))
    spans = [m.span(1) for m in _PATH.finditer(prompt)]
    found: list[tuple[int, str]] = []
    for match in _BACKTICKED.finditer(prompt):
        inner = match.group(1).strip().removesuffix("()")
        if _WHOLE_NAME.fullmatch(inner):
            found.append((match.start(), inner))
    for match in _CANDIDATES.finditer(prompt):
        if any(a <= match.start() < b for a, b in spans):
            continue  # part of a path
        found.append((match.start(), match.group(0)))
    for _, name in sorted(found):
        name = name.replace("::", ".")
        if name.lower() in _PROSE or name in names:
            continue
        names.append(name)
    if any(ch.islower() for ch in prompt):
        for match in _CAPITALS.finditer(prompt):
            if match.group(0) not in names and not any(a <= match.start() < b for a, b in spans):
                names.append(match.group(0))
    return names, paths[:MAX_NAMES]


#: A line of a source path, as compilers and stack traces print it: ``server.go:38``,
#: ``File "app/views.py", line 12``.
_LINE = re.compile(r'\s*(?::|",\s*line\s+)(\d{1,7})\b')


def code_lines(prompt: str) -> list[tuple[str, int]]:
    """(path, line) pairs the prompt names (a pasted stack trace), innermost frame
    first: a Python traceback ends with it, Go, Java and Node traces start with it."""
    found: list[tuple[str, int]] = []
    python = False
    for match in _PATH.finditer(prompt):
        line = _LINE.match(prompt, match.end(1))
        if line and (match.group(1), int(line.group(1))) not in found:
            found.append((match.group(1), int(line.group(1))))
            python = python or "line" in line.group(0)
    return (found[::-1] if python else found)[:MAX_FRAMES]


def code_aware(
    searches: Mapping[str, SourceSearch], prompt: str, timeout: float, project: str | None = None
) -> Mapping[str, SourceSearch]:
    """``searches`` with the code search putting what the prompt names first (in
    ``project`` only, when given).

    Returns ``searches`` itself when the prompt names no code.
    """
    names, paths = code_names(prompt) if isinstance(prompt, str) else ([], [])
    if not names and not paths:
        return searches
    semantic = searches.get("code")

    def search(service: RemembrancesService, plan: EnrichmentPlan) -> list[ContextItem]:
        # The semantic search and the map run beside the definitions, so a slow
        # one cannot make the enricher drop the definitions with it.
        started = time.monotonic()
        answer_by = started + timeout * ANSWER_SHARE
        pending = None
        if semantic is not None and plan.code_query:
            pending = _pool().submit(semantic, service, plan)
        try:
            named = _named(service, prompt, names, paths, answer_by, project)
        except Exception as exc:  # the semantic hits still count
            log.warning("code-aware enrichment failed: %s", exc)
            named = ([], [])
        first, after = named
        if pending is None:
            return first + after
        try:
            semantic_items = pending.result(timeout=max(answer_by - time.monotonic(), 0.0))
            return first + _in_place(semantic_items, after)
        except FutureTimeout:
            pending.cancel()
            log.warning("semantic code search was late; the named definitions go alone")
        except Exception:
            if not first and not after:
                raise  # as without this module: the enricher drops the source
            log.warning("semantic code search failed; the named definitions go alone")
        return first + after

    return {**searches, "code": search}


def _named(
    service: RemembrancesService,
    prompt: str,
    names: list[str],
    paths: list[str],
    answer_by: float,
    project: str | None = None,
) -> tuple[list[ContextItem], list[ContextItem]]:
    """(before the semantic hits, after them): the named functions' and methods'
    definitions (and where else the names are defined); then the named classes'
    definitions, their uses and the map around them.

    Only the definitions are looked up here (indexed lookups, milliseconds); the
    uses and the maps run in the pool and come along if they are done by
    ``answer_by``, so a name used in thousands of places cannot make the enricher
    drop the source, definitions and all.
    """
    code = code_layer(service)
    if code is None:
        return [], []
    roots = {p.name: p.root for p in code.projects() if project in (None, p.name)}
    definitions: list[ContextItem] = []
    containers: list[ContextItem] = []  # named classes: after the semantic hits
    used: list[CodeSymbol] = []  # the definitions whose uses to show
    focus: dict[str, list[str]] = {}  # project -> files and symbols to map around
    listed: list[ContextItem] = []
    words = _words(prompt)
    for name in names:
        shown, others = _definitions(code, name, words, project, paths)
        for symbol in shown:
            item = _definition_item(symbol, roots.get(symbol.project))
            (containers if symbol.kind in CONTAINERS else definitions).append(item)
            focus.setdefault(symbol.project, []).append(symbol.qualified_name)
            if all(
                (s.project, s.qualified_name) != (symbol.project, symbol.qualified_name)
                for s in used
            ):
                used.append(symbol)
        listed.extend(_others_item(name, others))
    for path in paths:
        for project in roots:
            focus.setdefault(project, []).append(path)
    for path, line in code_lines(prompt):  # the definition a trace's frame is in
        for symbol in _enclosing(code, path, line, roots):
            item = _definition_item(symbol, roots.get(symbol.project))
            if all(item.key != d.key for d in definitions):
                definitions.append(item)
    uses = [_pool().submit(_uses_item, code, symbol) for symbol in used]
    maps = [_pool().submit(_map_item, code, p, wanted) for p, wanted in focus.items()]
    after = containers + _done_by(uses, answer_by) + _done_by(maps, answer_by)
    return definitions + listed, after


def _in_place(semantic: list[ContextItem], after: list[ContextItem]) -> list[ContextItem]:
    """The semantic hits, then what goes after them; a hit that is (a part of) a class
    the prompt names gives its place to the class's whole definition, which is then not
    repeated (a class's tail part, ``def __ne__ …``, said nothing of how to use it)."""
    named = {item.key: item for item in after}
    merged = [named.pop(item.key, item) for item in semantic]
    return merged + [item for item in after if item.key in named]


def _enclosing(
    code: CodeIndexer, path: str, line: int, roots: Mapping[str, str]
) -> list[CodeSymbol]:
    """The innermost definition around ``line`` of ``path`` in each project that has the
    file; a path from elsewhere (a container's trace) is matched by its tail."""
    parts = path.replace("\\", "/").lstrip("/").split("/")
    found = []
    for project in roots:
        for start in range(len(parts)):
            try:
                nodes = code.outline("/".join(parts[start:]), project=project)
            except (NotFoundError, InvalidInputError):  # not this tail: try a shorter one
                continue
            inner = None
            while nodes:
                around = [n for n in nodes if n.symbol.start_line <= line <= n.symbol.end_line]
                if not around:
                    break
                inner = around[0]
                nodes = inner.children
            if inner is not None and inner.symbol.kind != "section":
                found.append(inner.symbol)
            break
    return found


def _done_by(pending: list[Future[list[ContextItem]]], answer_by: float) -> list[ContextItem]:
    """The items of the lookups that finish by ``answer_by``, in order; the rest are
    left to finish in the background (wait_idle)."""
    items: list[ContextItem] = []
    for future in pending:
        try:
            items.extend(future.result(timeout=max(answer_by - time.monotonic(), 0.0)))
        except FutureTimeout:
            future.cancel()  # a first map of a large project reads its graph; next time is quick
        except Exception as exc:
            log.warning("code lookup for enrichment failed: %s", exc)
    return items


def _definitions(
    code: CodeIndexer,
    name: str,
    words: set[str],
    project: str | None = None,
    paths: list[str] | None = None,
) -> tuple[list[CodeSymbol], list[CodeSymbol]]:
    """(shown, others): the definitions of ``name``, the likeliest meant first.

    Exact (case-sensitive) matches only: find_symbol also tries ignoring case.
    A name may start with its module (``encodings.cp500.Codec.encode``). When a
    name is defined in several places, a file the prompt names decides first
    (``UserService.find`` in ``ts/userService.ts``), then the prompt's other words
    (``cp1252`` picks ``encodings/cp1252.py``), then the last definition of a
    name and kind in its file (the one that runs: ``@overload`` stubs and TypeScript
    overload signatures come before the implementation), then a definition whose
    qualified name is the name itself (``Pool`` means the class ``Pool`` before
    the method ``BaseContext.Pool``), then classes and functions, then code
    outside tests, then the definition in the file most other files use (the
    reference graph). Type stubs are shown only when nothing else defines the name.
    """
    candidates = code.find_symbol(name, project=project, limit=MAX_CANDIDATES)
    # case-sensitive: find_symbol also tries ignoring case (a package's own name may
    # lead: ``click.core.Command.main`` in a project indexed from ``src/click``)
    found = [s for s in candidates if s.is_named(name) or name.endswith(f".{s.qualified_name}")]
    if len(found) <= 1:
        return found, []
    own = _words(name)
    users: dict[tuple[str, str], int] = {}
    file_users = getattr(code, "file_users", None)
    if callable(file_users):
        for project in {s.project for s in found}:
            counts = file_users(project, {s.path for s in found if s.project == project})
            users.update({(project, path): n for path, n in counts.items()})
    kinds = {"class": 0, "function": 0, "method": 0, "struct": 0, "interface": 0}
    # The last of a kind: a Rust struct and its impl blocks share a name, and the
    # struct is the definition (the last rule is for overloads, which share a kind).
    last: dict[tuple[str, str, str, str], int] = {}
    for s in found:
        where = (s.project, s.path, s.qualified_name, s.kind)
        last[where] = max(last.get(where, 0), s.start_line)
    named = [p.replace("\\", "/").lstrip("/") for p in paths or []]

    def in_named_file(s: CodeSymbol) -> bool:
        return any(
            p == s.path or p.endswith("/" + s.path) or s.path.endswith("/" + p) for p in named
        )

    found.sort(
        key=lambda s: (
            not in_named_file(s),
            -len((words - own) & _words(f"{s.path} {s.qualified_name}")),
            s.start_line < last[(s.project, s.path, s.qualified_name, s.kind)],
            s.qualified_name != name,
            kinds.get(s.kind, 1),
            s.path.count("test"),
            -users.get((s.project, s.path), 0),
            s.path,
        )
    )
    # A type stub (``datastructures.pyi``, ``index.d.ts``) declares what a file beside it
    # implements: shown only when nothing else defines the name, or the prompt names it.
    implemented = [s for s in found if not _is_stub(s.path) or in_named_file(s)]
    shown = (implemented or found)[:MAX_DEFINITIONS]
    return shown, [s for s in found if s not in shown]


def _is_stub(path: str) -> bool:
    return path.endswith((".pyi", ".d.ts", ".d.mts", ".d.cts"))


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")


def _words(text: str) -> set[str]:
    """Lower-case words of three or more characters: whole identifiers (``iso8859_4``)
    and their parts split at ``_`` and ``.`` (``iso8859``)."""
    words = {w.lower() for w in _TOKEN.findall(text)}
    return words | {w.lower() for w in _WORD.findall(text.replace("_", " "))}


def _others_item(name: str, others: list[CodeSymbol]) -> list[ContextItem]:
    """Where else ``name`` is defined: an agent sees the name is ambiguous, and where."""
    if not others:
        return []
    lines = [
        code_label(s.path, s.start_line, s.end_line, s.qualified_name, s.kind, s.project)
        for s in others[:MAX_LISTED]
    ]
    if len(others) > MAX_LISTED:
        lines.append(f"... {len(others) - MAX_LISTED} more")
    places = "place" if len(others) == 1 else "places"
    origin = f"{name} is also defined in {len(others)} more {places}"
    return [ContextItem("code", origin, "\n".join(lines), None, f"code:definitions:{name}")]


def _definition_item(symbol: CodeSymbol, root: str | None) -> ContextItem:
    """The definition as a search hit would show it (same key, so it is not repeated)."""
    text = _source_text(root, symbol)
    if not text:
        text = symbol.signature + (f"\n{symbol.docstring}" if symbol.docstring else "")
    return symbol_item(symbol, text)


#: How a line of a comment block starts (the doc comment above a definition).
_COMMENT = ("//", "/*", "*", "#", "--")
_COMMENT_OPENERS = ("//", "/*", "#", "--")
#: Lines longer than this are minified code: the definition's own bytes are shown.
_LONG_LINE = 1000
#: A doc comment above a definition shows at most this many lines (its summary comes
#: first); the rest is elided. rxjs's ``debounceTime`` has 57 lines of JSDoc, and the
#: item's budget ran out before the signature.
MAX_DOC_COMMENT_LINES = 8


def _source_text(root: str | None, symbol: CodeSymbol) -> str:
    """The definition's lines from the file, with the doc comment above them when the
    docstring is not inside (Java, Go, Rust, C#...: ``/** Finds a user. */``); on a
    minified line, only the definition's own bytes (the line would not fit a budget)."""
    if root is None:
        return ""
    # here, not at the top: the code layer needs tree-sitter (the code extra), and an
    # enricher without indexed code must work without it
    from ..code.parsing.analysis import source_lines

    try:
        data = (Path(root) / symbol.path).read_bytes()
    except OSError:
        return ""
    lines = source_lines(data)
    own = lines[symbol.start_line - 1 : symbol.end_line]
    if any(len(line) > _LONG_LINE for line in own):
        return data[symbol.start_byte : symbol.end_byte].decode("utf-8", "replace")
    start = symbol.start_line
    first = symbol.docstring.strip().split("\n", 1)[0].strip()
    if first and first not in "\n".join(own):
        while start > 1 and lines[start - 2].strip().startswith(_COMMENT):
            start -= 1
    comment = lines[start - 1 : symbol.start_line - 1]
    # From a line that opens a comment: the walk up stops at a block comment's line
    # without a star, and its "*/" alone was shown above the definition.
    while comment and not comment[0].strip().startswith(_COMMENT_OPENERS):
        comment = comment[1:]
    if len(comment) > MAX_DOC_COMMENT_LINES:
        # its first lines and its last (a "*/" closes the block before the code)
        kept = comment[: MAX_DOC_COMMENT_LINES - 2]
        indent = comment[-1][: len(comment[-1]) - len(comment[-1].lstrip())]
        left = len(comment) - len(kept) - 1
        comment = [*kept, f"{indent}… ({left} more lines of the doc comment)", comment[-1]]
    return "\n".join([*comment, *own])


def _uses_item(code: CodeIndexer, symbol: CodeSymbol) -> list[ContextItem]:
    """Where the definition's name is used. References are tokens of the name, so a
    method that other classes define too (``_process``) would list their uses as well:
    only the lines in its own class, or naming its class, are kept then, and when none
    is, the list says it is of the name."""
    project, name = symbol.project, symbol.name
    refs, lines_seen = [], set()
    for ref in code.references(name, project=project, limit=200):
        # a line once: `import x as x` and `json=json` hold the name twice
        if not ref.is_definition and (ref.path, ref.line) not in lines_seen:
            lines_seen.add((ref.path, ref.line))
            refs.append(ref)
    if not refs:
        return []
    owner = symbol.qualified_name.rpartition(".")[0]
    if owner:
        defined = {s.qualified_name for s in code.find_symbol(name, project=project, limit=50)}
        if len(defined) > 1:
            own = [r for r in refs if _in_owner(r.symbol, r.line_text, owner)]
            if own:
                refs, name = own, symbol.qualified_name
            else:
                name = f"the name {name} ({len(defined)} definitions of it)"
    shown = refs[:MAX_USES]
    lines = [
        f"{r.path}:{r.line}" + (f" in {r.symbol}" if r.symbol else "") + f": {r.line_text.strip()}"
        for r in shown
    ]
    if len(refs) > len(shown):
        lines.append(f"... {len(refs) - len(shown)} more")
    origin = f"[{project}] uses of {name}"
    return [ContextItem("code", origin, "\n".join(lines), None, f"code:uses:{project}:{name}")]


def _in_owner(enclosing: str | None, line: str, owner: str) -> bool:
    """Whether a use is in ``owner`` (``self._process()`` in its own methods) or names
    it (``StripCommentsFilter._process(...)``)."""
    return (
        (enclosing or "").startswith(owner + ".")
        or enclosing == owner
        or (re.search(rf"\b{re.escape(owner.rsplit('.', 1)[-1])}\b", line) is not None)
    )


def _map_item(code: CodeIndexer, project: str, focus: list[str]) -> list[ContextItem]:
    repo_map: Callable[..., Any] | None = getattr(code, "repo_map", None)
    if repo_map is None:
        return []
    result = repo_map(
        project,
        budget_tokens=MAP_TOKENS,
        focus=list(dict.fromkeys(focus)),
        strict_focus=False,
    )
    if not result.text or not (result.focus_files or result.focus_symbols):
        return []  # nothing named is in this project: its general map is not about the prompt
    return [
        ContextItem(
            "code",
            f"[{project}] repository map",
            result.text,
            None,
            f"code:map:{project}",
        )
    ]


__all__ = ["code_aware", "code_names", "wait_idle"]
