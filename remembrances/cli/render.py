"""Hits and records as rich renderables: a header with the hit's label, then its
text or highlighted code. Labels, times and fields come from
:mod:`remembrances.formatting`, the one place that turns hits into text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ..formatting import (
    TIME_FIELDS,
    chunk_code,
    field,
    iso_time,
    kind_of,
    label_of,
    record_fields,
)
from .output import Output, snippet


def record(obj: Any) -> dict[str, Any]:
    """A plain dict for any record the library returns, its times as ISO 8601 text."""
    return {k: iso_time(v) if k in TIME_FIELDS else v for k, v in record_fields(obj).items()}


def records(items: Iterable[Any]) -> list[dict[str, Any]]:
    return [record(i) for i in items]


def first(data: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """The first present, non-empty value among ``keys`` (top level, then metadata)."""
    value = field(data, *keys)
    return default if value is None else value


def is_code(data: Mapping[str, Any]) -> bool:
    return kind_of(data) == "code"


def hit_view(out: Output, data: Mapping[str, Any], rank: int) -> RenderableType:
    """One search hit: a header with score and origin, then its text (code highlighted)."""
    score = data.get("score")
    header = Text()
    header.append(f"{rank:>2}. ", style="bold")
    if isinstance(score, int | float):
        header.append(f"{score:.3f} ", style="cyan")
    kind = first(data, "kind", "source_kind")
    if kind:
        header.append(f"[{kind}] ", style="magenta")
    header.append(label_of(data) or "?", style="green")
    text = chunk_code(data, str(first(data, "code", "text", "content", default="")))
    if is_code(data) and not text:  # a symbol record: its signature stands for the code
        doc = first(data, "docstring")
        language = str(first(data, "language", default=""))
        text = str(first(data, "signature", default=""))
        if doc and language == "python":  # the docstring is the body's first line
            text += "\n" + _doc_comment(str(doc), language)
        elif doc:  # the doc comment sits above: numbered up to the signature's line
            comment = _doc_comment(str(doc), language)
            start = int(first(data, "start_line", default=1))
            above = comment.count("\n") + 1
            text = f"{comment}\n{text}"
            data = {**data, "line_runs": [[0, max(start - above, 1)]]}
    if is_code(data):
        body: RenderableType = code_view(out, data, text)
    else:
        body = Text(snippet(text, 600))
    return Group(header, body, Text(""))


#: Code lines shown per hit; the rest is named, not silently dropped.
CODE_LINES = 40


def code_view(out: Output, data: Mapping[str, Any], text: str) -> RenderableType:
    """Code numbered with its own source lines, also across elided children."""
    language = str(first(data, "language"))
    lines = text.split("\n")
    if lines and not lines[-1].strip():
        lines.pop()
    runs = data.get("line_runs") or [[0, int(first(data, "start_line", default=1))]]
    shown = lines[:CODE_LINES]
    blocks: list[RenderableType] = []
    for i, (begin, line) in enumerate(runs):
        end = runs[i + 1][0] if i + 1 < len(runs) else len(shown)
        if begin < len(shown) and end > begin:
            blocks.append(out.code("\n".join(shown[begin:end]), language, int(line)))
    if len(lines) > len(shown):
        end_line = first(data, "end_line")
        blocks.append(
            Text(
                f"… {len(lines) - len(shown)} more lines"
                + (f" (to line {end_line})" if end_line else ""),
                style="dim",
            )
        )
    return Group(*blocks)


#: Languages whose comments start with "#"; the others (C-like) use "//".
_HASH_COMMENTS = frozenset({"bash", "ruby", "perl", "r", "shell", "make", "yaml", "toml"})


def _doc_comment(doc: str, language: str) -> str:
    """A docstring shown below a signature as the language would write it."""
    lines = doc.strip().splitlines()
    if language == "python":
        return "\n".join(['    """' + lines[0], *("    " + ln for ln in lines[1:])]) + '"""'
    mark = "#" if language in _HASH_COMMENTS else "//"
    return "\n".join(f"{mark} {ln}".rstrip() for ln in lines)


#: A hybrid search whose best hit scores under this found nothing related: unrelated
#: questions' best hits scored at most 0.0084 on real projects' docs and 0.0027 on their
#: code (benchmarks/bench_gate.py), and the enricher's gates start at 0.01.
UNRELATED_BELOW = 0.01


def hits_view(out: Output, hits: list[dict[str, Any]], mode: str | None = None) -> RenderableType:
    """The hits, and a word when a search's hits all look unrelated (``mode``: the
    search's; only the hybrid score estimates the chance that a hit is relevant)."""
    if not hits:
        return Text("no results", style="dim")
    views: list[RenderableType] = [hit_view(out, h, i) for i, h in enumerate(hits, start=1)]
    best = max(float(h.get("score") or 0.0) for h in hits)
    if mode == "hybrid" and best < UNRELATED_BELOW:
        views.append(
            Text(
                f"(the best score is {best:.4f}: nothing here looks related to the query; "
                "a score is the chance a hit is relevant, see docs/search.md)",
                style="dim",
            )
        )
    return Group(*views)
