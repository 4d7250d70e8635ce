"""Splitting documents into chunks that fit an embedder and keep their place.

A document is first cut into sections at its headings (Markdown, reStructuredText,
AsciiDoc, Org; plain text has one section). A section that fits is one chunk;
a longer one is cut at the coarsest boundary that works: paragraphs, then lines,
then sentences, then words, and only as a last resort between characters. The
pieces are packed greedily up to ``size`` characters, and each chunk after the
first in a section starts with up to ``overlap`` characters of the one before
(snapped to a word start), so a sentence cut in two is still whole in one chunk.

A Markdown table or fenced code block cut in two leaves its second half without
the rows that say what the columns are, or without the fence that says it is code.
Such a chunk carries that opening (the table's header and delimiter rows, the
opening fence line) as its ``lead``: it is embedded before the chunk's text and
shown before a passage that starts there.

Sizes are in characters (code points), never bytes, so a multi-byte character is
never cut; a hard cut also avoids splitting a base character from its combining
marks. Every chunk is an exact slice of the document (``text[start:end]``) with
surrounding whitespace trimmed, so no text is lost or changed: only whitespace
between chunks can be missing from them.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from .errors import InvalidInputError

Format = Literal["markdown", "rst", "asciidoc", "org", "text"]
FORMATS: tuple[str, ...] = ("markdown", "rst", "asciidoc", "org", "text")

DEFAULT_SIZE = 1200
DEFAULT_OVERLAP = 150
MIN_SIZE = 16
MAX_SIZE = 100_000
#: Headings longer than this are shortened in heading paths (they are labels).
MAX_HEADING_CHARS = 200
HEADING_SEPARATOR = " > "

_SUFFIX_FORMATS: dict[str, Format] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".rest": "rst",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".asc": "asciidoc",
    ".org": "org",
    ".txt": "text",
    ".text": "text",
}


@dataclass(frozen=True)
class TextChunk:
    """One chunk: ``text == document[start:end]``, under the headings that contain it."""

    text: str
    start: int
    end: int
    headings: tuple[str, ...] = ()
    section: int = 0
    #: The opening of the table or code fence this chunk starts inside (not in ``text``).
    lead: str = ""

    @property
    def heading_path(self) -> str:
        return HEADING_SEPARATOR.join(self.headings)

    def embed_text(self, title: str | None = None) -> str:
        """What is embedded: the heading path (after the title), the lead, the text.

        The heading path carries meaning the chunk's own words often lack ("Linux"
        under "Install"); the title is left out when the first heading repeats it.
        """
        path = list(self.headings)
        if title and title.strip() and (not path or path[0].strip() != title.strip()):
            path.insert(0, title.strip())
        body = f"{self.lead}\n{self.text}" if self.lead else self.text
        if not path:
            return body
        return f"{HEADING_SEPARATOR.join(path)}\n\n{body}"


@dataclass(frozen=True)
class Chunker:
    """Chunking settings: target ``size`` and ``overlap``, both in characters."""

    size: int = DEFAULT_SIZE
    overlap: int = DEFAULT_OVERLAP

    def __post_init__(self) -> None:
        for name in ("size", "overlap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidInputError(f"chunk {name} must be an integer, not {value!r}")
        if not MIN_SIZE <= self.size <= MAX_SIZE:
            raise InvalidInputError(
                f"chunk size must be from {MIN_SIZE} to {MAX_SIZE:,} characters, not {self.size}"
            )
        if not 0 <= self.overlap <= self.size // 2:
            raise InvalidInputError(
                f"chunk overlap must be from 0 to half the size ({self.size // 2}), "
                f"not {self.overlap}"
            )

    @property
    def fingerprint(self) -> str:
        """Identifies the settings: a document chunked differently must be re-chunked."""
        # v2: chunks inside tables and fences lead; v3: no headings in HTML comments
        return f"v3:{self.size}:{self.overlap}"

    def split(self, text: str, *, format: Format = "markdown") -> list[TextChunk]:
        if format not in FORMATS:
            raise InvalidInputError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
        blocks = markdown_blocks(text) if format == "markdown" else []
        starts = [b.body_start for b in blocks]
        chunks: list[TextChunk] = []
        for number, (start, end, headings) in enumerate(sections(text, format)):
            for s, e in self._split_section(text, start, end):
                chunks.append(
                    TextChunk(text[s:e], s, e, headings, number, _lead(blocks, starts, s))
                )
        return chunks

    def _split_section(self, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        start, end = _trim(text, start, end)
        if start >= end:
            return
        if end - start <= self.size:
            yield start, end
            return
        # Pieces leave room for a full overlap, so snapping to a word start is the
        # only thing that makes an overlap shorter than configured.
        pieces = _pieces(text, start, end, self.size - self.overlap, 0)
        chunk_start, chunk_end = pieces[0]
        last_end = -1
        for piece_start, piece_end in pieces[1:]:
            if piece_end - chunk_start <= self.size:
                chunk_end = piece_end
                continue
            s, e = _trim(text, chunk_start, chunk_end)
            new_start = piece_start
            if s < e and e > last_end:
                yield s, e
                last_end = e
                new_start = self._overlap_start(text, s, e)
                if piece_end - new_start > self.size:  # a long run of whitespace between
                    new_start = piece_start
            chunk_start, chunk_end = new_start, piece_end
        s, e = _trim(text, chunk_start, chunk_end)
        if s < e and e > last_end:
            yield s, e

    def _overlap_start(self, text: str, prev_start: int, prev_end: int) -> int:
        """Where the next chunk starts: at most ``overlap`` back from the previous end."""
        if self.overlap == 0:
            return prev_end
        lowest = max(prev_end - self.overlap, prev_start + 1)
        for i in range(lowest, prev_end):
            if not text[i].isspace() and text[i - 1].isspace():
                return i
        i = lowest
        while i < prev_end and (text[i].isspace() or _joins_previous(text[i])):
            i += 1
        return i


def format_for(name: str | None, default: Format = "markdown") -> Format:
    """The format a file name implies; ``default`` for other names.

    Markdown is the default for names given to ``add`` (agents write Markdown, and
    text without headings degrades to paragraphs); ingest uses "text" for files
    of other types, so a CSV line starting with ``#`` is not taken for a heading.
    """
    if not name:
        return default
    lowered = name.lower()
    dot = lowered.rfind(".")
    slash = max(lowered.rfind("/"), lowered.rfind("\\"))
    suffix = lowered[dot:] if dot > slash else ""
    return _SUFFIX_FORMATS.get(suffix, default)


def chunk_text(
    text: str,
    *,
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    format: Format = "markdown",
) -> list[TextChunk]:
    """Chunks of ``text``; see :class:`Chunker`."""
    return Chunker(size, overlap).split(text, format=format)


# -- sections ---------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
#: An HTML comment opening a line (CommonMark's HTML block of type 2).
_HTML_COMMENT = re.compile(r"^ {0,3}<!--")


def _opens_fence(line: str) -> str | None:
    """The fence ``line`` opens (its backticks or tildes), or None. A backtick fence's
    info string holds no backtick: "```x``` is inline code" opens nothing (CommonMark)."""
    match = _FENCE.match(line)
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


def _closes_fence(line: str, fence: str) -> bool:
    """Whether ``line`` closes ``fence``: the same character, at least as many, and
    nothing after but spaces ("```bash" inside a ``` block is code, not its end)."""
    match = _FENCE.match(line)
    return (
        match is not None
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= len(fence)
        and not match.group(2).strip()
    )


_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RST_ADORN = re.compile(r"^([=\-`:'\"~^_*+#<>.!$%&(),/;?@\[\\\]{|}])\1{2,}[ \t]*$")
_ADOC = re.compile(r"^(={1,6})[ \t]+(\S.*?)[ \t]*$")
_ORG = re.compile(r"^(\*+)[ \t]+(\S.*?)[ \t]*$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d+[.)])[ \t]")


@dataclass(frozen=True)
class _Heading:
    start: int  # offset of the heading's first line
    end: int  # offset just after its last line
    level: int
    title: str


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(offset, offset after the newline, line without its newline) for each line."""
    out = []
    offset = 0
    for line in text.splitlines(keepends=True):
        out.append((offset, offset + len(line), line.rstrip("\r\n")))
        offset += len(line)
    return out


def _markdown_headings(text: str) -> list[_Heading]:
    lines = _lines(text)
    found: list[_Heading] = []
    fence: str | None = None
    begin = 0
    if lines and lines[0][2].strip() == "---":  # YAML front matter is not a heading
        for j in range(1, len(lines)):
            if lines[j][2].strip() in ("---", "..."):
                begin = j + 1
                break
    comment = False
    for i in range(begin, len(lines)):
        offset, after, line = lines[i]
        if fence is not None:
            if _closes_fence(line, fence):
                fence = None
            continue
        if comment:  # an HTML comment's lines are not Markdown ("# generated by cog")
            comment = "-->" not in line
            continue
        opened = _HTML_COMMENT.match(line)
        if opened:
            comment = "-->" not in line[opened.end() :]
            continue
        fence = _opens_fence(line)
        if fence is not None:
            continue
        atx = _ATX.match(line)
        if atx:
            found.append(_Heading(offset, after, len(atx.group(1)), (atx.group(2) or "").strip()))
            continue
        setext = _SETEXT.match(line)
        if setext and i > begin:
            prev_offset, _, prev = lines[i - 1]
            paragraph_start = i - 1 == begin or not lines[i - 2][2].strip()
            if (
                prev.strip()
                and paragraph_start
                and not prev.startswith(("    ", "\t"))
                and not _LIST_ITEM.match(prev)
                and not _ATX.match(prev)
                and not _HTML_COMMENT.match(prev)
                and not (found and found[-1].end > prev_offset)
            ):
                level = 1 if setext.group(1)[0] == "=" else 2
                found.append(_Heading(prev_offset, after, level, prev.strip()))
    return found


def _rst_headings(text: str) -> list[_Heading]:
    lines = _lines(text)
    styles: list[tuple[str, bool]] = []
    found: list[_Heading] = []
    for i in range(1, len(lines)):
        under = _RST_ADORN.match(lines[i][2])
        title = lines[i - 1][2]
        if not under or not title.strip() or _RST_ADORN.match(title) or title[0].isspace():
            continue
        if len(lines[i][2].rstrip()) < len(title.rstrip()):
            continue
        if found and found[-1].end > lines[i - 1][0]:
            continue
        over = i >= 2 and lines[i - 2][2].rstrip() == lines[i][2].rstrip()
        if not over and i >= 2 and lines[i - 2][2].strip():
            continue  # a paragraph's last line followed by a rule is not a title
        style = (under.group(1), over)
        if style not in styles:
            styles.append(style)
        start = lines[i - 2][0] if over else lines[i - 1][0]
        found.append(_Heading(start, lines[i][1], styles.index(style) + 1, title.strip()))
    return found


_FENCE_LINES = ("----", "```", "#+begin_src", "#+end_src", "#+begin_example", "#+end_example")


def _prefix_headings(text: str, pattern: re.Pattern[str]) -> list[_Heading]:
    found: list[_Heading] = []
    fence = False
    for offset, after, line in _lines(text):
        if line.lower().startswith(_FENCE_LINES):
            fence = not fence
            continue
        match = None if fence else pattern.match(line)
        if match:
            found.append(_Heading(offset, after, len(match.group(1)), match.group(2).strip()))
    return found


def sections(text: str, format: Format = "markdown") -> list[tuple[int, int, tuple[str, ...]]]:
    """``(start, end, heading path)`` spans that cover the whole text, in order.

    A section holding nothing but its heading is joined to the next one, so a
    chapter heading followed at once by a sub-heading does not become a chunk alone.
    """
    if format == "markdown":
        headings = _markdown_headings(text)
    elif format == "rst":
        headings = _rst_headings(text)
    elif format == "asciidoc":
        headings = _prefix_headings(text, _ADOC)
    elif format == "org":
        headings = _prefix_headings(text, _ORG)
    else:
        headings = []
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    first = headings[0].start if headings else len(text)
    carry: int | None = None
    if first > 0:
        if headings and format == "markdown" and _front_matter_only(text[:first]):
            carry = 0  # front matter belongs with the first section
        else:
            spans.append((0, first, ()))
    stack: list[tuple[int, str]] = []
    for k, heading in enumerate(headings):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, _label(heading.title)))
        end = headings[k + 1].start if k + 1 < len(headings) else len(text)
        start = heading.start if carry is None else carry
        if k + 1 < len(headings) and not text[heading.end : end].strip():
            carry = start  # heading only: it leads the next section instead
            continue
        carry = None
        spans.append((start, end, tuple(t for _, t in stack)))
    return spans


def _label(title: str) -> str:
    """A heading as a path element: never empty, never longer than a label should be."""
    if not title:
        return "(untitled)"
    return title if len(title) <= MAX_HEADING_CHARS else title[: MAX_HEADING_CHARS - 1] + "…"


def _front_matter_only(preamble: str) -> bool:
    lines = preamble.strip().splitlines()
    return len(lines) >= 2 and lines[0].strip() == "---" and lines[-1].strip() in ("---", "...")


# -- tables and fences -----------------------------------------------------------------

#: A block's head longer than this is not copied onto the chunks inside the block.
MAX_BLOCK_HEAD_CHARS = 500
#: A GFM table's delimiter row: ``|---|:--:|``, ``--- | ---`` (at least one pipe).
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


@dataclass(frozen=True)
class Block:
    """A table or fenced code block: ``head`` (its header and delimiter rows, or its
    opening fence line) ends where its body starts."""

    head: str
    body_start: int
    end: int


def _lead(blocks: Sequence[Block], starts: Sequence[int], start: int) -> str:
    """The head of the block whose body holds ``start`` (``starts``: the bodies' starts)."""
    k = bisect.bisect_right(starts, start) - 1
    return blocks[k].head if k >= 0 and start < blocks[k].end else ""


def markdown_blocks(text: str) -> list[Block]:
    """The tables and fenced code blocks of a Markdown ``text``, in order."""
    lines = _lines(text)
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        _, after, line = lines[i]
        fence = _opens_fence(line)
        if fence is not None:
            j = i + 1
            while j < len(lines) and not _closes_fence(lines[j][2], fence):
                j += 1
            end = lines[min(j, len(lines) - 1)][1]
            blocks.append(Block(_capped(line.strip()), after, end))
            i = j + 1
            continue
        if (
            i + 1 < len(lines)
            and "|" in lines[i + 1][2]
            and _TABLE_DELIMITER.match(lines[i + 1][2])
            and len(_cells(line)) == len(_cells(lines[i + 1][2]))  # GFM: as many columns
        ):
            j = i + 2  # rows run to a blank line or the next heading or fence (GFM)
            while j < len(lines) and lines[j][2].strip() and not _ends_table(lines[j][2]):
                j += 1
            head = _capped(f"{line.strip()}\n{lines[i + 1][2].strip()}")
            blocks.append(Block(head, lines[i + 1][1], lines[j - 1][1]))
            i = j
            continue
        i += 1
    return blocks


def _cells(row: str) -> list[str]:
    """A table row's cells: split at the pipes not escaped, the outer ones dropped."""
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return re.split(r"(?<!\\)\|", row)


def _ends_table(line: str) -> bool:
    return bool(_ATX.match(line)) or _opens_fence(line) is not None


def _capped(head: str) -> str:
    """A head too long to copy onto every chunk of its block is left out (a crafted
    100,000-character header row made a 0.7 MB document take 194 MB)."""
    return head if len(head) <= MAX_BLOCK_HEAD_CHARS else ""


# -- pieces -----------------------------------------------------------------------------

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_LINE = re.compile(r"\n\s*")
_SENTENCE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？])")
_WORD = re.compile(r"\s+")
_LEVELS = (_PARAGRAPH, _LINE, _SENTENCE, _WORD)


#: How far back :func:`sentence_lead` looks for the start of a sentence.
MAX_LEAD_CHARS = 160


def sentence_lead(before: str) -> str:
    """The start of the sentence that ``before`` (the text just before a cut) leaves
    unfinished: what follows its last sentence end or line break. "" when ``before``
    ends at one, or holds none (then the sentence starts further back than we look).

    A chunk after the first of its section starts inside the previous one's end, cut
    at a word, so text shown from a chunk's start usually starts mid-sentence.
    """
    ends = [m.end() for m in _SENTENCE.finditer(before)]
    ends += [m.end() for m in _LINE.finditer(before)]
    if not ends or max(ends) == len(before):
        return ""
    return before[max(ends) :]


def _pieces(text: str, start: int, end: int, limit: int, level: int) -> list[tuple[int, int]]:
    """Contiguous spans covering ``[start, end)``, each at most ``limit`` long."""
    if end - start <= limit:
        return [(start, end)]
    for depth in range(level, len(_LEVELS)):
        cuts = [m.end() for m in _LEVELS[depth].finditer(text, start, end) if start < m.end() < end]
        if cuts:
            out: list[tuple[int, int]] = []
            bounds = [start, *dict.fromkeys(cuts), end]
            for a, b in itertools.pairwise(bounds):
                out.extend(_pieces(text, a, b, limit, depth + 1))
            return out
    out = []
    while end - start > limit:
        cut = start + limit
        while cut > start + 1 and _joins_previous(text[cut]):
            cut -= 1  # keep a character with its combining marks
        out.append((start, cut))
        start = cut
    out.append((start, end))
    return out


def _joins_previous(ch: str) -> bool:
    return (
        unicodedata.combining(ch) != 0
        or ch in "\u200d\ufe0e\ufe0f"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or unicodedata.category(ch) in ("Mn", "Me")
    )


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
