"""The self-supervised code set: a function's docstring asks for the function.

Each library's ``.py`` files are copied with every function and method docstring
removed (a body that was only a docstring becomes ``pass``), so the answer cannot be
found by matching the query against itself. The query is the first sentence of the
removed docstring; the answer is the function's qualified name in its file. A
sentence shared by several functions lists them all. At most ``PER_LIBRARY``
queries per library are kept, chosen by hash (stable across runs).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Part of the corpus key: bump when the stripping changes, so caches are rebuilt.
VERSION = ""
PER_LIBRARY = 80
MIN_WORDS, MAX_WORDS = 4, 40


@dataclass(frozen=True)
class Docstring:
    path: str
    qualname: str
    first_sentence: str


def first_sentence(doc: str) -> str | None:
    para = inspect.cleandoc(doc).split("\n\n", 1)[0]
    para = " ".join(para.split())
    match = re.match(r"(.+?[.!?])(\s|$)", para)
    sentence = match.group(1) if match else para
    n = len(sentence.split())
    if not MIN_WORDS <= n <= MAX_WORDS or sentence.startswith((":", "..", ">>>")):
        return None
    return sentence


def strip_docstrings(source: str, rel: str) -> tuple[str, list[Docstring]]:
    """``source`` without function docstrings, and what was removed."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    found: list[Docstring] = []
    cuts: list[tuple[int, int, str | None]] = []  # 0-based first, last line, replacement

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = node.body[0]
                if (
                    isinstance(first, ast.Expr)
                    and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)
                    and first.lineno > node.lineno  # not on the ``def`` line
                    and first.end_lineno is not None
                    # nothing else on the docstring's lines
                    and lines[first.lineno - 1][: first.col_offset].strip() == ""
                    and (len(node.body) == 1 or node.body[1].lineno > first.end_lineno)
                ):
                    indent = lines[first.lineno - 1][: first.col_offset]
                    filler = f"{indent}pass\n" if len(node.body) == 1 else None
                    cuts.append((first.lineno - 1, first.end_lineno - 1, filler))
                    sentence = first_sentence(first.value.value)
                    if sentence:
                        found.append(Docstring(rel, prefix + node.name, sentence))
                # Nested functions are part of their parent's chunk: not queried.
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body, prefix)
                visit(getattr(node, "orelse", []), prefix)

    visit(tree.body, "")
    for start, end, filler in sorted(cuts, reverse=True):
        lines[start : end + 1] = [filler] if filler else []
    stripped = "".join(lines)
    ast.parse(stripped)  # the copy must still be valid Python
    return stripped, found


def questions(found: list[Docstring], library: str) -> list[dict[str, object]]:
    by_sentence: dict[str, list[str]] = {}
    for d in found:
        by_sentence.setdefault(d.first_sentence, []).append(f"{d.path}:{d.qualname}")
    ranked = sorted(
        by_sentence.items(),
        key=lambda item: hashlib.sha256(f"{library}\0{item[0]}".encode()).hexdigest(),
    )
    return [{"q": q, "answers": answers} for q, answers in ranked[:PER_LIBRARY]]


def _stripped(files: list[Path], src_root: Path) -> Iterator[tuple[str, str, list[Docstring]]]:
    for path in files:
        rel = path.relative_to(src_root).as_posix()
        source = path.read_text(encoding="utf-8")
        try:
            stripped, docs = strip_docstrings(source, rel)
        except SyntaxError:
            stripped, docs = source, []
        yield rel, stripped, docs


def write_stripped(files: list[Path], src_root: Path, dest: Path) -> None:
    """Copy ``files`` under ``dest`` without their function docstrings."""
    for rel, stripped, _ in _stripped(files, src_root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(stripped, encoding="utf-8")


def docstrings(files: list[Path], src_root: Path) -> list[Docstring]:
    """The first sentences removed from ``files``, in file order."""
    return [d for _, _, docs in _stripped(files, src_root) for d in docs]
