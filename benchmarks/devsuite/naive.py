"""The naive pipeline the default must beat: paragraphs or ``ast`` symbols, BM25, MiniLM, RRF.

Nothing here comes from the package but the embedder (the same default local model),
so the comparison is between remembrances' chunking, indexing and fusion and what
anyone would write in an afternoon.

- Docs are cut at blank lines; a paragraph shorter than ``MIN_PARAGRAPH`` characters
  (a heading, an rst underline, a directive line) is joined to the next one.
- Code is cut with :mod:`ast`: every function and method is a chunk (its decorators
  and source), every class a chunk of its lines up to its first method (header,
  docstring, attributes). Labels are qualified names (``Class.method``).
- BM25 (k1 = 1.2, b = 0.75) over lower-cased words, with identifiers split at
  underscores and case changes, and a short English stop list.
- RRF fuses the two top-100 lists with k = 60.
"""

from __future__ import annotations

import ast
import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MIN_PARAGRAPH = 80
POOL = 100
RRF_K = 60

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "we",
        "our",
        "not",
        "no",
    ]
)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class NaiveChunk:
    path: str  # relative to the corpus root, with forward slashes
    label: str  # qualified name for code, "" for docs
    text: str


def words(text: str) -> list[str]:
    """Lower-cased words; ``get_encoding`` and ``getEncoding`` both give get, encoding."""
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in STOP_WORDS]


def paragraphs(text: str) -> list[str]:
    out: list[str] = []
    pending = ""
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if not block:
            continue
        pending = f"{pending}\n\n{block}" if pending else block
        if len(pending) >= MIN_PARAGRAPH:
            out.append(pending)
            pending = ""
    if pending:
        if out:
            out[-1] = f"{out[-1]}\n\n{pending}"
        else:
            out.append(pending)
    return out


def doc_chunks(root: Path, files: Sequence[Path]) -> list[NaiveChunk]:
    chunks = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        chunks.extend(NaiveChunk(rel, "", p) for p in paragraphs(text))
    return chunks


def symbol_chunks(root: Path, files: Sequence[Path]) -> list[NaiveChunk]:
    chunks: list[NaiveChunk] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        lines = source.splitlines()
        _walk(tree.body, "", lines, rel, chunks)
    return chunks


def _start(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])  # type: ignore[attr-defined]


def _walk(
    body: Sequence[ast.stmt], prefix: str, lines: list[str], rel: str, out: list[NaiveChunk]
) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            text = "\n".join(lines[_start(node) - 1 : node.end_lineno])
            out.append(NaiveChunk(rel, prefix + node.name, text))
        elif isinstance(node, ast.ClassDef):
            first_def = next(
                (
                    _start(n)
                    for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                ),
                (node.end_lineno or node.lineno) + 1,
            )
            text = "\n".join(lines[_start(node) - 1 : first_def - 1])
            out.append(NaiveChunk(rel, prefix + node.name, text))
            _walk(node.body, f"{prefix}{node.name}.", lines, rel, out)
        elif isinstance(node, ast.If | ast.Try):
            # Definitions under ``if TYPE_CHECKING:`` / ``try: import ...`` are still module level.
            _walk(node.body, prefix, lines, rel, out)
            _walk(getattr(node, "orelse", []), prefix, lines, rel, out)


class BM25:
    """Okapi BM25 over a fixed list of texts."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        docs = [Counter(words(t)) for t in texts]
        self.n = len(docs)
        lengths = np.array([sum(d.values()) for d in docs], dtype=np.float64)
        self.norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, d in enumerate(docs):
            for term, tf in d.items():
                ids, tfs = postings.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(tf)
        self.postings = {
            t: (np.array(ids, dtype=np.int64), np.array(tfs, dtype=np.float64))
            for t, (ids, tfs) in postings.items()
        }

    def search(self, query: str, k: int = POOL) -> list[tuple[int, float]]:
        scores = np.zeros(self.n)
        for term in set(words(query)):
            posting = self.postings.get(term)
            if posting is None:
                continue
            ids, tfs = posting
            idf = math.log(1 + (self.n - len(ids) + 0.5) / (len(ids) + 0.5))
            scores[ids] += idf * tfs * (self.k1 + 1) / (tfs + self.norm[ids])
        return top(scores, k, positive=True)


def top(
    scores: npt.NDArray[np.float64], k: int, *, positive: bool = False
) -> list[tuple[int, float]]:
    k = min(k, len(scores))
    if k == 0:
        return []
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return [(int(i), float(scores[i])) for i in idx if not positive or scores[i] > 0]


def rrf(*lists: Sequence[tuple[int, float]], k: int = RRF_K) -> list[tuple[int, float]]:
    fused: dict[int, float] = {}
    for ranked in lists:
        for rank, (i, _) in enumerate(ranked, 1):
            fused[i] = fused.get(i, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def texts_key(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:16]
