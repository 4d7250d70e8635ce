"""Adjacent matching chunks of one section are one hit: a passage.

A section longer than a chunk is stored as overlapping chunks, and a question
about it often matches two or three of them. Shown as separate hits they push
other sections out of the top few, and the best-scoring chunk is not always the
one that holds the answer: on the development suite's docs questions the answer's
own section ranked first through its neighbouring chunk in about one question
in eight (benchmarks/RESULTS.md, "Passages"). So the chunks that match, taken
best first, join the passage of a chunk they overlap in the same section (same
document and heading path), up to ``MAX_CHUNKS`` chunks; the passage is the
document's text from its first chunk's start to its last chunk's end and keeps its
best chunk's score. A chunker without overlap joins nothing.
Code search folds a long symbol's parts into one hit the same way
(``code/ranking.py``).

A chunk after the first of its section starts with the end of the previous one,
cut at a word, so mostly mid-sentence ("from 0.59 to 0.73 on the test halves").
A passage that starts so is extended back to the start of its sentence, at most
``chunking.MAX_LEAD_CHARS`` and never across a line break
(:func:`~remembrances.chunking.sentence_lead`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..records import SearchResult

#: Chunks one passage may join: three default chunks are about 3,300 characters.
MAX_CHUNKS = 3
#: Candidates asked of the store per hit, so that joining still fills the limit.
CANDIDATES_PER_HIT = 3


@dataclass
class Passage:
    """Chunks of one section, adjacent in the document; ``best`` scored highest."""

    best: SearchResult
    parts: list[SearchResult] = field(default_factory=list)
    #: Text of the document just before the first part: the start of its sentence.
    lead: str = ""

    @property
    def first(self) -> SearchResult:
        return self.parts[0]

    @property
    def start(self) -> int:
        """Where the first part starts in the document (-1 when not stored)."""
        return _offsets(self.parts[0])[0]

    @property
    def text(self) -> str:
        """The document's text the parts cover, each overlap written once (joined
        parts overlap: :meth:`_joins`)."""
        text, end = self.lead + self.parts[0].text, _offsets(self.parts[0])[1]
        for part in self.parts[1:]:
            start, part_end = _offsets(part)
            text += part.text[end - start :]
            end = part_end
        return text

    @property
    def best_span(self) -> tuple[int, int]:
        """Where the best chunk's text lies in :attr:`text`."""
        offset = len(self.lead)
        if len(self.parts) > 1:
            first, best = _offsets(self.parts[0])[0], _offsets(self.best)[0]
            offset += max(best - first, 0)
        return offset, offset + len(self.best.text)

    def _joins(self, result: SearchResult) -> bool:
        """Whether ``result`` is the chunk just before or after this passage in its
        section. Chunks of one section overlap (by the chunker's ``overlap``) and
        chunks of two sections never do, even where both sections have the same
        heading path (two "## Example" in a row): overlapping text is what joins."""
        if len(self.parts) >= MAX_CHUNKS or not _same_section(self.best, result):
            return False
        start, end = _offsets(result)
        first, last = _offsets(self.parts[0]), _offsets(self.parts[-1])
        if min(start, first[0]) < 0:
            return False  # stored before chunks kept their offsets: nothing to join by
        if result.position == self.parts[0].position - 1:
            return end > first[0]
        if result.position == self.parts[-1].position + 1:
            return start < last[1]
        return False

    def _add(self, result: SearchResult) -> None:
        self.parts.append(result)
        self.parts.sort(key=lambda p: p.position)


def passages(results: Sequence[SearchResult], limit: int) -> list[Passage]:
    """``results`` (best first) joined into at most ``limit`` passages, best first."""
    found: list[Passage] = []
    for result in results:
        home = next((p for p in found if p._joins(result)), None)
        if home is not None:
            home._add(result)
        elif len(found) < limit:
            found.append(Passage(result, [result]))
    return found


def _same_section(a: SearchResult, b: SearchResult) -> bool:
    return (a.collection, a.source, a.metadata.get("heading_path")) == (
        b.collection,
        b.source,
        b.metadata.get("heading_path"),
    )


def _offsets(result: SearchResult) -> tuple[int, int]:
    """The chunk's ``[start, end)`` in its document; (-1, -1) when not stored."""
    start, end = result.metadata.get("char_start"), result.metadata.get("char_end")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end:
        return start, end
    return -1, -1
