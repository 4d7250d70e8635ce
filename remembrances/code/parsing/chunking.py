"""Searchable chunks for a parsed file: one per symbol, split when it is long.

A class's chunk shows its own code with each method elided to its first line
(the methods have chunks of their own), so no code is indexed twice and a hit
on a class reads like its outline. What a function defines inside itself
(closures, local classes) stays in the function's chunk and has none of its
own. Code outside every symbol (imports, top-level statements) and files
without symbols get ``file`` chunks. A symbol longer than the budget becomes
several parts that all point back to it; nothing is truncated.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from ...fts_query import split_identifier
from ...records import Chunk
from .symbols import ExtractedSymbol

DEFAULT_CHUNK_CHARS = 2000
#: What is defined inside these is part of their code, not a chunk of its own: a
#: closure is how its function works, and on its own it read like the function
#: while the function's chunk, cut to the closure's first line, no longer did.
LOCAL_SCOPES = ("function", "method")
ELISION = " …"
MAX_TERMS = 120
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
#: Identifiers with an inner case change (``getUser``, ``GetUser``, ``HTTPServer``):
#: the only ones FTS5 would not split into words by itself.
_CAMEL = re.compile(
    r"(?<![A-Za-z0-9])(?:[a-z][a-z0-9]*[A-Z]|[A-Z][a-z0-9]+[A-Z]|[A-Z]{2,}[a-z])[A-Za-z0-9]*"
)


def split_words(*texts: str) -> list[str]:
    """Lower-cased parts of camelCase identifiers in ``texts`` (``getUserName`` -> get user name).

    FTS5 splits ``snake_case`` at the underscore by itself but not camelCase, so
    these parts go into the indexed text to make ``get user name`` find it.
    """
    words: dict[str, None] = {}
    for text in texts:
        for token in dict.fromkeys(_CAMEL.findall(text)):
            for part in split_identifier(token):
                words[part.lower()] = None
            if len(words) >= MAX_TERMS:
                return list(words)
    return list(words)


def split_code(code: str, budget: int) -> list[tuple[str, int]]:
    """``code`` in pieces of at most ``budget`` characters, cut at line ends where possible.

    Returns ``(text, first_line_offset)`` pairs.
    """
    if len(code) <= budget:
        return [(code, 0)]
    parts: list[tuple[str, int]] = []
    current: list[str] = []
    size = 0
    start_line = 0
    # Lines end at "\n" only, as the parser counts them (str.splitlines would also
    # break at form feeds and other separators and shift every line number after).
    breaks = code.count("\n")
    for line_no, line in enumerate(code.split("\n")):
        line = line + "\n" if line_no < breaks else line
        if not line:
            continue
        while len(line) > budget:  # one enormous line (minified code): cut it
            if current:
                parts.append(("".join(current), start_line))
                current, size = [], 0
            parts.append((line[:budget], line_no))
            line = line[budget:]
            start_line = line_no
        if size + len(line) > budget and current:
            parts.append(("".join(current), start_line))
            current, size, start_line = [], 0, line_no
        if not current:
            start_line = line_no
        current.append(line)
        size += len(line)
    if current:
        parts.append(("".join(current), start_line))
    return [(text, offset) for text, offset in parts if text.strip()]


def _first_line(source: bytes, symbol: ExtractedSymbol, language: str) -> str:
    """A symbol's first line (its signature, for a decorated Python definition)."""
    line = source[symbol.start_byte : symbol.end_byte].split(b"\n", 1)[0].decode("utf-8", "replace")
    if language == "python" and line.lstrip().startswith("@"):
        line = symbol.signature
    return line.rstrip()


class _Lines:
    """Where each line of a file begins: the line of a byte by bisection. Counting
    newlines from the file's start for each symbol made chunking quadratic (16,000
    one-line functions in a generated file took 3.9 s)."""

    def __init__(self, source: bytes) -> None:
        self._breaks = [m.start() for m in re.finditer(b"\n", source)]

    def of(self, byte: int) -> int:
        """The 1-based line that ``byte`` lies on."""
        return bisect_left(self._breaks, byte) + 1


@dataclass(frozen=True)
class Elided:
    """A symbol's code with its children cut to their first lines.

    ``lines[i]`` is the source line that line ``i`` of ``code`` shows, and
    ``ends[i]`` the last source line it stands for (an elided child's last line).
    """

    code: str
    own: bool  # anything but whitespace left of the parent's own code
    lines: list[int]
    ends: list[int]


def _elided(
    source: bytes,
    lines_of: _Lines,
    start: int,
    end: int,
    children: Sequence[ExtractedSymbol],
    language: str,
) -> Elided:
    """Code of ``start:end`` with each child replaced by its first line."""
    pieces: list[str] = []
    lines: list[int] = []
    ends: list[int] = []
    own = False
    position = start

    def add(text: str, first_line: int, last_line: int | None = None) -> None:
        # One entry per "\n"-separated line of the code so far; the last one is
        # open, and the first line of ``text`` continues it.
        count = text.count("\n")
        new_lines = list(range(first_line, first_line + count + 1))[1 if lines else 0 :]
        lines.extend(new_lines)
        ends.extend(new_lines)
        if last_line is not None:
            ends[-1] = max(ends[-1], last_line)
        pieces.append(text)

    for child in children:
        gap = source[position : child.start_byte].decode("utf-8", "replace")
        own = own or bool(gap.strip())
        add(gap, lines_of.of(position))
        add(
            _first_line(source, child, language) + ELISION,
            lines_of.of(child.start_byte),
            child.end_line,
        )
        position = child.end_byte
    tail = source[position:end].decode("utf-8", "replace")
    own = own or bool(tail.strip())
    add(tail, lines_of.of(position))
    return Elided("".join(pieces), own, lines, ends)


def _part_lines(elided: Elided, text: str, offset: int) -> tuple[int, int, list[list[int]]]:
    """A part's first and last source line, and where its numbering jumps.

    The jumps are ``[line in the part (0-based), source line]`` pairs, one per run
    of consecutive source lines; a part without elisions has a single run.
    """
    count = text.rstrip("\n").count("\n") + 1
    shown = elided.lines[offset : offset + count] or [elided.lines[-1]]
    covered = elided.ends[offset : offset + count] or [elided.ends[-1]]
    runs = [[0, shown[0]]]
    for i in range(1, len(shown)):
        if shown[i] != shown[i - 1] + 1:
            runs.append([i, shown[i]])
    return shown[0], max(covered), runs


def name_words(name: str) -> str:
    """``getUserName`` / ``get_user_name`` -> ``get user name``."""
    parts: list[str] = []
    for token in _WORD.findall(name.replace("_", " ")):
        parts.extend(p.lower() for p in split_identifier(token))
    return " ".join(parts)


def _leading_comment(docstring: str, code: str) -> str:
    """The docstring when it is a comment above the symbol (outside its code), else ""."""
    first_line = docstring.strip().split("\n", 1)[0][:80]
    return docstring[:500] if first_line and first_line not in code else ""


def _header(path: str, language: str, kind: str, qualified: str, docstring: str, code: str) -> str:
    lines = [f"{path} · {language} {kind} {qualified}"]
    if kind != "file":  # the name's words once more: a hit on the name outranks a mention
        lines.append(name_words(qualified.rsplit(".", 1)[-1]))
    comment = _leading_comment(docstring, code)
    if comment:
        lines.append(comment)
    terms = split_words(qualified, path.rsplit("/", 1)[-1], code)
    if terms:
        lines.append("terms: " + " ".join(terms))
    return "\n".join(lines)


def embedded_code(code: str, docstring: str, context: Sequence[str]) -> str:
    """What the embedding model reads: the code as a reader would see it.

    The header is for the text index only; on CoSQA's dev split, embedding any
    header line in front of the code lowered the vector leg's nDCG@10 by about
    0.01 (benchmarks/results/quality.md). A comment that sits above the symbol is
    kept, and a later part of a long symbol is read under the symbol's first line.
    The enclosing definitions' first lines (``class Session:`` above a method) are
    not: they made the methods of one class read alike, and leaving them out raised
    the development suite's self-supervised fit half from 0.562 to 0.591 nDCG@10
    (code sets 0.747 -> 0.748; benchmarks/results/devsuite.md).
    """
    comment = _leading_comment(docstring, code)
    lines = [comment] if comment else []
    lines += [c + ELISION for c in context]
    return "\n".join([*lines, code])


def _chunk(
    *,
    path: str,
    language: str,
    kind: str,
    name: str,
    qualified: str,
    code: str,
    docstring: str,
    metadata: dict[str, object],
    context: Sequence[str] = (),
) -> Chunk:
    header = _header(path, language, kind, qualified, docstring, code)
    text = header + "\n" + code
    embed = embedded_code(code, docstring, context)
    meta = {
        "path": path,
        "language": language,
        "kind": kind,
        "name": name,
        "qualified_name": qualified,
        "code_offset": len(header) + 1,
        **metadata,
    }
    # a chunk with no code to read (a blank file) embeds its header instead
    return Chunk(text=text, metadata=meta, embed_text=embed if embed.strip() else None)


def file_chunks(
    path: str,
    language: str,
    source: bytes,
    symbols: Sequence[ExtractedSymbol],
    *,
    budget: int = DEFAULT_CHUNK_CHARS,
) -> list[Chunk]:
    """Every chunk of one file, in source order of their symbols."""
    children: dict[int | None, list[ExtractedSymbol]] = {}
    for symbol in symbols:
        children.setdefault(symbol.parent, []).append(symbol)
    by_index = {s.index: s for s in symbols}
    chunks: list[Chunk] = []

    top = children.get(None, [])
    lines_of = _Lines(source)
    elided = _elided(source, lines_of, 0, len(source), top, language)
    if elided.own or not symbols:
        pieces = split_code(elided.code, budget)
        for part, (text, offset) in enumerate(pieces, start=1):
            start_line, end_line, runs = _part_lines(elided, text, offset)
            chunks.append(
                _chunk(
                    path=path,
                    language=language,
                    kind="file",
                    name=path.rsplit("/", 1)[-1],
                    qualified=path,
                    code=text,
                    docstring="",
                    metadata={
                        "symbol": None,
                        "parent": None,
                        "signature": "",
                        "start_line": start_line,
                        "end_line": end_line,
                        **({"line_runs": runs} if len(runs) > 1 else {}),
                        "part": part,
                        "parts": len(pieces),
                    },
                )
            )

    for symbol in symbols:
        if _is_local(symbol, by_index):
            continue  # shown inside its function's chunk
        kids = [] if symbol.kind in LOCAL_SCOPES else children.get(symbol.index, [])
        elided = _elided(source, lines_of, symbol.start_byte, symbol.end_byte, kids, language)
        indent = _indent(source, symbol.start_byte)
        pieces = split_code(elided.code, budget)
        parent = by_index[symbol.parent].qualified_name if symbol.parent is not None else None
        for part, (text, offset) in enumerate(pieces, start=1):
            if len(pieces) == 1:  # the whole symbol, whatever its children cover
                start_line, end_line = symbol.start_line, symbol.end_line
                _, _, runs = _part_lines(elided, text, offset)
            else:
                start_line, end_line, runs = _part_lines(elided, text, offset)
            chunks.append(
                _chunk(
                    path=path,
                    language=language,
                    kind=symbol.kind,
                    name=symbol.name,
                    qualified=symbol.qualified_name,
                    code=text,
                    docstring=symbol.docstring,
                    context=([_first_line(source, symbol, language)] if part > 1 else []),
                    metadata={
                        "symbol": symbol.index,
                        "parent": parent,
                        "signature": symbol.signature,
                        "docstring": symbol.docstring[:500],
                        "start_line": start_line,
                        "end_line": end_line,
                        **({"line_runs": runs} if len(runs) > 1 else {}),
                        **({"indent": indent} if indent and part == 1 else {}),
                        "part": part,
                        "parts": len(pieces),
                    },
                )
            )
    return chunks


def _is_local(symbol: ExtractedSymbol, by_index: dict[int, ExtractedSymbol]) -> bool:
    """Whether ``symbol`` is defined inside a function (a closure, a local class)."""
    parent = symbol.parent
    while parent is not None:
        enclosing = by_index[parent]
        if enclosing.kind in LOCAL_SCOPES:
            return True
        parent = enclosing.parent
    return False


def _indent(source: bytes, start: int) -> str:
    """The whitespace before ``start`` on its line: what a reader's first line lacks."""
    before = source[source.rfind(b"\n", 0, start) + 1 : start].decode("utf-8", "replace")
    return before if before.isspace() else ""
