"""One file in, its symbols, chunks and identifier positions out.

This is the unit of work a parsing process runs: it reads the file itself and
hashes exactly the bytes it parsed, so the stored hash always describes the
stored symbols even when the file changes while the index runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ...discovery import is_binary
from ...records import Chunk
from .chunking import DEFAULT_CHUNK_CHARS, file_chunks
from .identifiers import encode_positions, identifier_positions
from .languages import grammar_of, parser
from .symbols import ExtractedSymbol, extract_symbols


@dataclass(frozen=True)
class ParseTask:
    absolute: str
    path: str  # relative to the project root, with forward slashes
    language: str
    max_bytes: int
    budget: int = DEFAULT_CHUNK_CHARS


@dataclass(frozen=True)
class FileAnalysis:
    path: str
    language: str
    content_hash: str = ""
    size: int = 0
    lines: int = 0
    has_error: bool = False
    symbols: list[ExtractedSymbol] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    skipped: str | None = None  # why the file was not indexed after all


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_lines(data: bytes) -> list[str]:
    """A file's lines as the parser numbers them: split at "\\n" only.

    (``str.splitlines`` also breaks at form feeds and other separators, which
    shifts every line after them.)
    """
    return [line.removesuffix("\r") for line in data.decode("utf-8", "replace").split("\n")]


def read_checked(absolute: str, max_bytes: int) -> tuple[bytes | None, str | None]:
    """The file's bytes, or the reason it cannot be indexed."""
    try:
        with open(absolute, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return None, "vanished while indexing"
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if len(data) > max_bytes:
        return None, f"larger than the size limit ({max_bytes:,} bytes)"
    if is_binary(data):
        return None, "binary"
    return data, None


def analyze_source(
    path: str, language: str, data: bytes, *, budget: int = DEFAULT_CHUNK_CHARS
) -> FileAnalysis:
    tree = parser(language).parse(data)
    symbols = extract_symbols(language, tree, data)
    # A chunk says the language its text is in: a C++ header named .h is C++ there (a
    # search for languages=["cpp"] finds it); the file keeps the language of its name.
    chunks = file_chunks(path, grammar_of(tree, language), data, symbols, budget=budget)
    names = {
        name: encode_positions(positions)
        for name, positions in identifier_positions(language, tree, data).items()
    }
    return FileAnalysis(
        path=path,
        language=language,
        content_hash=file_hash(data),
        size=len(data),
        lines=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
        has_error=tree.root_node.has_error,
        symbols=symbols,
        chunks=chunks,
        names=names,
    )


def analyze(task: ParseTask) -> FileAnalysis:
    """Read, hash and parse one file (runs in a worker process for large trees)."""
    data, reason = read_checked(task.absolute, task.max_bytes)
    if data is None:
        return FileAnalysis(path=task.path, language=task.language, skipped=reason)
    return analyze_source(task.path, task.language, data, budget=task.budget)
