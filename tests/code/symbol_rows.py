"""The symbols one source text gives, as rows a test compares whole."""

from __future__ import annotations

from typing import Any

from remembrances.code.parsing.analysis import analyze_source


def symbol_rows(
    path: str, language: str, source: str, *, docstrings: bool = False
) -> list[tuple[Any, ...]]:
    """(kind, qualified name, start line, end line, signature[, docstring]) of every symbol."""
    symbols = analyze_source(path, language, source.encode()).symbols
    return [
        (s.kind, s.qualified_name, s.start_line, s.end_line, s.signature)
        + ((s.docstring,) if docstrings else ())
        for s in symbols
    ]
