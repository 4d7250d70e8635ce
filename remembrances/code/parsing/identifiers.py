"""Identifier occurrences, as the parser sees them: what ``references`` answers from.

A substring search for ``send`` also finds ``resend`` and ``"send"`` in a string;
the syntax tree knows which tokens are names. Each file stores, per distinct
name, the positions where it occurs.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left

from tree_sitter import Query, QueryCursor, Tree

from .languages import grammar_of, language

_IDENTIFIER_TYPES: dict[str, tuple[str, ...]] = {
    "python": ("identifier",),
    "javascript": (
        "identifier",
        "property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "private_property_identifier",
    ),
    "typescript": (
        "identifier",
        "property_identifier",
        "type_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "private_property_identifier",
    ),
    "go": ("identifier", "field_identifier", "type_identifier", "package_identifier"),
    "rust": ("identifier", "field_identifier", "type_identifier"),
    "java": ("identifier", "type_identifier"),
    "c": ("identifier", "field_identifier", "type_identifier"),
    "cpp": ("identifier", "field_identifier", "type_identifier", "namespace_identifier"),
    "csharp": ("identifier",),
    "ruby": ("identifier", "constant"),
    "php": ("name",),
    "kotlin": ("identifier",),
    "swift": ("simple_identifier", "type_identifier"),
    "bash": ("variable_name",),
    "markdown": (),
}
_IDENTIFIER_TYPES["tsx"] = _IDENTIFIER_TYPES["typescript"]
_EXTRA_PATTERNS: dict[str, str] = {
    "bash": "(command_name (word) @id) (function_definition name: (word) @id)",
}

#: Identifiers that name modules, not symbols: the path of a Python import. Counted,
#: ``from django.db import models`` made every file a user of any method named
#: ``django`` or ``db``, and such methods led the repository map.
_MODULE_PATHS: dict[str, str] = {
    "python": """
        (import_from_statement module_name: (dotted_name (identifier) @module))
        (import_from_statement module_name: (relative_import (dotted_name (identifier) @module)))
        (import_statement name: (dotted_name (identifier) @module))
        (import_statement name: (aliased_import name: (dotted_name (identifier) @module)))
    """,
}

_NEWLINE = re.compile(rb"\n")
_lock = threading.Lock()
_queries: dict[str, Query | None] = {}
_module_queries: dict[str, Query] = {}


def identifiers_query(lang: str) -> Query | None:
    if lang in _queries:
        return _queries[lang]
    with _lock:
        if lang not in _queries:
            grammar = language(lang)
            types = [
                t for t in _IDENTIFIER_TYPES.get(lang, ()) if grammar.id_for_node_kind(t, True)
            ]
            source = " ".join(f"({t}) @id" for t in types) + " " + _EXTRA_PATTERNS.get(lang, "")
            _queries[lang] = Query(grammar, source) if source.strip() else None
    return _queries[lang]


def _module_path_starts(lang: str, tree: Tree) -> set[int]:
    """Where the identifiers of import paths start (``_MODULE_PATHS``)."""
    pattern = _MODULE_PATHS.get(lang)
    if pattern is None:
        return set()
    with _lock:
        if lang not in _module_queries:
            _module_queries[lang] = Query(language(lang), pattern)
    nodes = QueryCursor(_module_queries[lang]).captures(tree.root_node).get("module", [])
    return {node.start_byte for node in nodes}


def identifier_positions(lang: str, tree: Tree, source: bytes) -> dict[str, list[tuple[int, int]]]:
    """``{name: [(line, column), ...]}`` with 1-based lines and byte columns; the module
    paths of imports are left out. The tree's own grammar decides (a ``.h`` may be C++)."""
    lang = grammar_of(tree, lang)
    query = identifiers_query(lang)
    if query is None:
        return {}
    nodes = QueryCursor(query).captures(tree.root_node).get("id", [])
    modules = _module_path_starts(lang, tree)
    newlines = [m.start() for m in _NEWLINE.finditer(source)]
    by_name: dict[bytes, list[tuple[int, int]]] = {}
    for node in nodes:
        start, end = node.byte_range
        if end - start > 200 or end <= start or start in modules:
            continue
        line = bisect_left(newlines, start)  # newlines before the token
        column = start - (newlines[line - 1] + 1 if line else 0)
        by_name.setdefault(source[start:end], []).append((line + 1, column + 1))
    found: dict[str, list[tuple[int, int]]] = {}
    for raw, positions in by_name.items():
        found.setdefault(raw.decode("utf-8", "replace"), []).extend(positions)
    for positions in found.values():
        positions.sort()  # captures do not always come in document order
    return found


def encode_positions(positions: list[tuple[int, int]]) -> str:
    """Compact storage: ``"12:5 40:9"``."""
    return " ".join(f"{line}:{column}" for line, column in positions)


def decode_positions(encoded: str) -> list[tuple[int, int]]:
    out = []
    for item in encoded.split():
        line, _, column = item.partition(":")
        out.append((int(line), int(column)))
    return out
