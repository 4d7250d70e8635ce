"""Which grammar parses which file, loaded from the per-language wheels.

Each official ``tree-sitter-<lang>`` wheel ships its compiled parser, so nothing
is fetched at run time (``tree-sitter-language-pack`` 1.x downloads grammars on
first use and fails offline). Grammars load lazily: indexing a Python project
never imports the Swift parser.

A file's language comes from its name, but ``.h`` is both C's and C++'s: a C file
that the C++ grammar reads better is parsed as C++ (``SourceParser``), and the
tree says which grammar parsed it (``grammar_of``).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from tree_sitter import Language, Parser, Query, QueryCursor, Tree


@dataclass(frozen=True)
class Grammar:
    """A language we index: its name, its files, and where its parser lives."""

    name: str
    module: str
    function: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()


GRAMMARS: tuple[Grammar, ...] = (
    Grammar("python", "tree_sitter_python", "language", (".py", ".pyi", ".pyw")),
    Grammar("javascript", "tree_sitter_javascript", "language", (".js", ".mjs", ".cjs", ".jsx")),
    Grammar("typescript", "tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts")),
    Grammar("tsx", "tree_sitter_typescript", "language_tsx", (".tsx",)),
    Grammar("go", "tree_sitter_go", "language", (".go",)),
    Grammar("rust", "tree_sitter_rust", "language", (".rs",)),
    Grammar("java", "tree_sitter_java", "language", (".java",)),
    Grammar("c", "tree_sitter_c", "language", (".c", ".h")),
    Grammar(
        "cpp",
        "tree_sitter_cpp",
        "language",
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
    ),
    Grammar("csharp", "tree_sitter_c_sharp", "language", (".cs",)),
    Grammar(
        "ruby",
        "tree_sitter_ruby",
        "language",
        (".rb", ".rake", ".gemspec"),
        ("Rakefile", "Gemfile"),
    ),
    Grammar("php", "tree_sitter_php", "language_php", (".php", ".phtml")),
    Grammar("kotlin", "tree_sitter_kotlin", "language", (".kt", ".kts")),
    Grammar("swift", "tree_sitter_swift", "language", (".swift",)),
    Grammar(
        "bash",
        "tree_sitter_bash",
        "language",
        (".sh", ".bash", ".zsh"),
        (".bashrc", ".bash_profile", ".profile"),
    ),
    Grammar("markdown", "tree_sitter_markdown", "language", (".md", ".markdown", ".mdx")),
)

BY_NAME: dict[str, Grammar] = {g.name: g for g in GRAMMARS}
_BY_EXTENSION: dict[str, str] = {ext: g.name for g in GRAMMARS for ext in g.extensions}
_BY_FILENAME: dict[str, str] = {f: g.name for g in GRAMMARS for f in g.filenames}

#: Aliases users type for ``languages=``.
ALIASES: dict[str, str] = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
    "c#": "csharp",
    "cs": "csharp",
    "c_sharp": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "sh": "bash",
    "shell": "bash",
    "md": "markdown",
}

_lock = threading.Lock()
_languages: dict[str, Language] = {}


def language_for_path(path: str | PurePath) -> str | None:
    """The language of a file from its name, or None when we have no grammar for it."""
    name = PurePath(path).name
    if name in _BY_FILENAME:
        return _BY_FILENAME[name]
    suffix = PurePath(name).suffix.lower()
    return _BY_EXTENSION.get(suffix)


def canonical(name: str) -> str | None:
    """``"TS"`` -> ``"typescript"``; None for a language we do not know."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in BY_NAME else None


def language(name: str) -> Language:
    """The tree-sitter Language for ``name`` (loaded once per process)."""
    found = _languages.get(name)
    if found is not None:
        return found
    with _lock:
        found = _languages.get(name)
        if found is None:
            grammar = BY_NAME[name]
            module = importlib.import_module(grammar.module)
            factory: Callable[[], Any] = getattr(module, grammar.function)
            found = Language(factory())
            _languages[name] = found
    return found


def grammar_of(tree: Tree, default: str) -> str:
    """The name of the grammar that parsed ``tree``: ``default`` unless a ``SourceParser``
    chose another one (a C++ header named ``.h`` has a C++ tree)."""
    if tree.language == language(default):
        return default
    for name, loaded in list(_languages.items()):
        if loaded == tree.language:
            return name
    return default


class SourceParser:
    """Parses the files of one language (not thread-safe; make one per use).

    A C file (``.c``, ``.h``) comes back as a C++ tree when the C++ grammar reads it
    better, as it does a C++ header named ``.h``: when the C tree writes a C++ keyword
    where a type goes (``namespace ui {`` and ``class W {...}`` parse as C functions of
    the types ``namespace`` and ``class``, without an error), or when the C tree has
    errors and the C++ tree fewer of them. C that uses ``class`` as a name
    (``int class;``, ``p->class``, ``struct class *c``) stays C.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._parser = Parser(language(name))

    def parse(self, source: bytes) -> Tree:
        tree = self._parser.parse(source)
        if self.name == "c":
            return _c_or_cpp(tree, source)
        return tree


def parser(name: str) -> SourceParser:
    """A new parser for ``name`` (parsers are not thread-safe; make one per use)."""
    return SourceParser(name)


#: C++ keywords where the C grammar expects a type name: no C program names a type so.
_CPP_KEYWORD_TYPES = "".join(
    f"(({parent} type: (type_identifier) @cpp)"
    ' (#any-of? @cpp "namespace" "class" "template" "typename" "using"))'
    for parent in ("function_definition", "declaration")
)
_ERRORS = "(ERROR) @error (MISSING) @error"
_checks: dict[tuple[str, str], Query] = {}


def _count(name: str, pattern: str, tree: Tree) -> int:
    query = _checks.get((name, pattern))
    if query is None:
        grammar = language(name)  # outside the lock, which loading takes
        with _lock:
            query = _checks.setdefault((name, pattern), Query(grammar, pattern))
    return sum(len(nodes) for nodes in QueryCursor(query).captures(tree.root_node).values())


def _errors(name: str, tree: Tree) -> int:
    return _count(name, _ERRORS, tree) if tree.root_node.has_error else 0


def _c_or_cpp(tree: Tree, source: bytes) -> Tree:
    """``tree`` (C), or the C++ tree of ``source`` when it reads the file better."""
    cpp_keywords = _count("c", _CPP_KEYWORD_TYPES, tree)
    if not cpp_keywords and not tree.root_node.has_error:
        return tree
    cpp = Parser(language("cpp")).parse(source)
    if cpp_keywords or _errors("cpp", cpp) < _errors("c", tree):
        return cpp
    return tree
