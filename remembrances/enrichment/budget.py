"""Fitting items into character and token budgets without cutting mid-sentence.

Context that ends in half a word or half a statement misleads more than it
helps, so text is cut at the last sentence end or line break that fits (code at
line breaks only), with a word boundary as the last resort, and marked with an
ellipsis. Budgets are checked on the rendered text itself, so the block never
exceeds them whatever the rendering adds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..chunking import MAX_LEAD_CHARS, markdown_blocks, sentence_lead
from .render import render_block, render_section
from .sources import ContextItem

Tokenizer = Callable[[str], int]
ELLIPSIS = " …"
LEADING_ELLIPSIS = "… "
#: A cut that leaves less than this many characters is not worth showing.
MIN_CUT_CHARS = 40

_SENTENCE_END = re.compile(r"(?<=[.!?;:])[\"')\]]*\s+|\n+")
_LINE_END = re.compile(r"\n")
_SPACE = re.compile(r"\s+")


def cut_points(text: str, *, code: bool) -> list[int]:
    """Offsets where ``text`` may be cut, best kinds first within each, ascending."""
    pattern = _LINE_END if code else _SENTENCE_END
    points = sorted({m.start() for m in pattern.finditer(text) if m.start() > 0})
    return points


def cut_text(text: str, max_chars: int, *, code: bool = False) -> str:
    """``text`` if it fits in ``max_chars``, else its longest prefix ending at a boundary."""
    if len(text) <= max_chars:
        return text
    room = max_chars - len(ELLIPSIS)
    if room <= 0:
        return ""
    points = [p for p in cut_points(text, code=code) if p <= room]
    if not points and not code:
        points = [m.start() for m in _SPACE.finditer(text) if 0 < m.start() <= room]
    if not points:
        return ""
    return text[: points[-1]].rstrip() + ELLIPSIS


@dataclass(frozen=True)
class Limits:
    """Budgets; ``None`` means unlimited. Token budgets apply only with a tokenizer."""

    total_chars: int | None
    section_chars: Mapping[str, int | None]
    item_chars: int | None
    total_tokens: int | None = None
    section_tokens: Mapping[str, int | None] | None = None
    tokenizer: Tokenizer | None = None


def _within(text: str, chars: int | None, tokens: int | None, tokenizer: Tokenizer | None) -> bool:
    if chars is not None and len(text) > chars:
        return False
    return tokens is None or tokenizer is None or int(tokenizer(text)) <= tokens


def fit(
    ranked: Mapping[str, Sequence[ContextItem]],
    order: Sequence[str],
    limits: Limits,
    *,
    header: str,
) -> dict[str, list[tuple[ContextItem, str]]]:
    """Choose and cut items so that every section and the whole block fit.

    Items are taken round-robin by rank across sources, so one verbose source
    cannot crowd out the others' best hit; in the first round each best hit is cut
    to an equal share of the block, so a small block holds every source's best hit
    rather than all of the first one's.
    """
    chosen: dict[str, list[tuple[ContextItem, str]]] = {s: [] for s in order}
    queues = {s: list(ranked.get(s, ())) for s in order}
    speaking = sum(1 for q in queues.values() if q)
    share = limits.total_chars // speaking if limits.total_chars and speaking > 1 else None
    depth = max((len(q) for q in queues.values()), default=0)
    section_tokens = limits.section_tokens or {}

    def fits(source: str) -> bool:
        section = render_section(source, chosen[source])
        if not _within(
            section,
            limits.section_chars.get(source),
            section_tokens.get(source),
            limits.tokenizer,
        ):
            return False
        block = render_block(chosen, order, header=header)
        return _within(block, limits.total_chars, limits.total_tokens, limits.tokenizer)

    def _try(source: str, text: str) -> bool:
        item = chosen[source][-1][0]
        chosen[source][-1] = (item, text)
        return fits(source)

    for rank in range(depth):
        for source in order:
            queue = queues[source]
            if rank >= len(queue):
                continue
            item = queue[rank]
            code = source == "code"
            whole = item.text.strip("\n") if code else item.text.strip()
            text = whole
            if limits.item_chars is not None:
                text = cut_text(
                    _from_focus(item, whole, limits.item_chars), limits.item_chars, code=code
                )
            if rank == 0 and share is not None:
                # what the section's heading, the label and a fence take of the share
                room = share - len(render_section(source, [(item, "")])) - len(header) - 2
                if room >= MIN_CUT_CHARS and len(text) > room:
                    # cut from the whole text: item.focus counts from its start
                    text = cut_text(_from_focus(item, whole, room), room, code=code) or text
            if not text:
                continue
            chosen[source].append((item, text))
            if fits(source):
                continue
            # Too long as it is: the longest boundary cut that fits, if any is worth it.
            attempt = functools.partial(_try, source)
            best = _longest_fitting(text, cut_points(text, code=code), attempt)
            if best is None and not code:
                words = [m.start() for m in _SPACE.finditer(text)]
                best = _longest_fitting(text, words, attempt)
            if best is None:
                chosen[source].pop()
            else:
                chosen[source][-1] = (item, best)
    return chosen


def _from_focus(item: ContextItem, text: str, max_chars: int) -> str:
    """``text``, or its end from the start of the sentence where the best-matching
    part begins, when a cut to ``max_chars`` would lose that part."""
    if item.focus is None or len(text) <= max_chars:
        return text
    lead = len(item.text) - len(item.text.lstrip())
    start, end = item.focus[0] - lead, item.focus[1] - lead
    if start <= 0 or len(cut_text(text, max_chars).removesuffix(ELLIPSIS)) >= end:
        return text  # the cut keeps the best part anyway
    start -= len(sentence_lead(text[max(start - MAX_LEAD_CHARS, 0) : start]))
    head = _opening_head(text, start) if item.source == "kb" else ""
    return f"{head}\n" * bool(head) + LEADING_ELLIPSIS + text[start:].lstrip()


def _opening_head(text: str, start: int) -> str:
    """The head of the table or code fence ``text`` opens with, when ``start`` is in its
    body: a passage cut to its best part keeps the rows that say what its columns are."""
    blocks = markdown_blocks(text[:start] + "\n")  # the block as far as the cut
    first = blocks[0] if blocks else None
    if first is None or not first.head or text[: first.body_start].strip() != first.head:
        return ""
    return first.head if first.body_start <= start else ""


def _longest_fitting(text: str, points: Sequence[int], fits: Callable[[str], bool]) -> str | None:
    """Binary search for the longest ``text[:point] + ELLIPSIS`` that fits."""
    candidates = [p for p in points if p >= MIN_CUT_CHARS]
    best = None
    low, high = 0, len(candidates) - 1
    while low <= high:
        middle = (low + high) // 2
        attempt = text[: candidates[middle]].rstrip() + ELLIPSIS
        if fits(attempt):
            best, low = attempt, middle + 1
        else:
            high = middle - 1
    return best
