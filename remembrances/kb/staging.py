"""Staging a document: checking it, fingerprinting it and cutting it into chunks.

Staging reads nothing but the document and the stored row it would replace, and
writes nothing: the knowledge base embeds and writes staged documents later (one
at a time for ``add``, in groups for an ingest). A document whose fingerprint
equals the stored one is not staged at all: it is reported unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..chunking import FORMATS, HEADING_SEPARATOR, Chunker, format_for
from ..errors import InvalidInputError
from ..records import Chunk
from ..store import content_hash
from ..validation import check_name, check_text, encode_metadata
from .records import AddReport

MAX_DOCUMENT_CHARS = 10_000_000
#: Chunk metadata keys the knowledge base sets itself; user metadata may not use them.
RESERVED_KEYS = frozenset({"heading_path", "char_start", "char_end", "_block_head"})
#: ``[[note]]`` and ``[[note|shown]]`` (Obsidian, Logseq): a title shows the words.
_WIKILINK = re.compile(r"\[\[([^\[\]|]+)(?:\|([^\[\]]+))?\]\]")
#: ``title: ...`` on a line of YAML front matter (a plain or quoted scalar).
_FRONT_TITLE = re.compile(r"^title:[ \t]*(['\"]?)(.+?)\1[ \t]*$", re.MULTILINE)


def _link_text(match: re.Match[str]) -> str:
    return (match.group(2) or match.group(1)).strip()


def front_matter_title(text: str) -> str | None:
    """The ``title:`` of a Markdown file's YAML front matter (notes vaults name a note
    there, and its first heading may be "Pricing tiers with [[Anna Schmidt]]")."""
    text = text.replace("\r\n", "\n")
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    found = _FRONT_TITLE.search(text[3:end])
    title = found.group(2).strip() if found else ""
    if found and not found.group(1):  # a plain scalar ends where a comment starts
        title = re.sub(r"\s+#.*$", "", title)
    if title[:1] in ("|", ">"):  # a block scalar: its lines follow; the heading serves
        return None
    return title or None


def check_metadata(metadata: Any) -> tuple[dict[str, Any], str]:
    encoded = encode_metadata(metadata, reserved=RESERVED_KEYS)
    return json.loads(encoded), encoded


def below_title(heading_path: str, title: str | None) -> str:
    """The heading path without a first heading that only repeats the title.

    "Guide > Install > Linux" in a document titled "Guide" is shown as
    "Install > Linux": the title is shown beside it anyway.
    """
    parts = heading_path.split(HEADING_SEPARATOR) if heading_path else []
    if title and parts and parts[0].strip() == title.strip():
        parts = parts[1:]
    return HEADING_SEPARATOR.join(parts)


@dataclass(frozen=True)
class FileStamp:
    """Where an ingested document came from, and what it looked like then.

    ``settings`` names the chunker and the ingest metadata: a file whose stamp
    matches needs no reading at all.
    """

    path: str
    size: int
    mtime_ns: int
    settings: str


@dataclass
class StagedDocument:
    """A document chunked and ready to embed and write."""

    source: str
    collection: str
    title: str | None
    metadata_json: str
    format: str
    text: str
    content_hash: str
    fingerprint: str
    chunks: list[Chunk]
    status: str
    file: FileStamp | None = None
    label: str = ""


@dataclass
class Committed:
    """What writing a group of staged documents did."""

    embedded: int = 0
    cached: int = 0
    chunks: int = 0
    reports: list[AddReport] = field(default_factory=list)


@dataclass(frozen=True)
class StoredStamp:
    """What is stored of the document a staged one would replace."""

    fingerprint: str
    chunks: int
    file_size: int | None
    file_mtime_ns: int | None
    settings: str | None


def stage(
    chunker: Chunker,
    text: Any,
    *,
    source: Any,
    title: Any,
    metadata: Any,
    collection: Any,
    format: Any,
    stored: StoredStamp | None,
    file: FileStamp | None = None,
) -> StagedDocument | AddReport:
    """Check and chunk a document; an :class:`AddReport` ("unchanged") when ``stored``
    has the same fingerprint. The caller updates a changed file stamp of an
    unchanged document (``AddReport`` then says "unchanged" too)."""
    source = check_name(source, "source")
    collection = check_name(collection, "collection")
    text = check_text(
        text,
        f"document {source!r}",
        limit=MAX_DOCUMENT_CHARS,
        hint="split it into several documents",
    )
    if title is not None:
        title = check_name(title, "title")
    if format is None:
        format = format_for(source)
    if format not in FORMATS:
        raise InvalidInputError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    user_metadata, metadata_json = check_metadata(metadata)
    digest = content_hash(text)
    # A title left out is derived from the text (and file name, part of the
    # source), so "derived" stands for it and nothing is parsed to compare.
    fingerprint = hashlib.sha256(
        json.dumps([digest, title, metadata_json, format, chunker.fingerprint, source]).encode()
    ).hexdigest()
    if stored is not None and stored.fingerprint == fingerprint:
        return AddReport(source, collection, "unchanged", stored.chunks)
    pieces = chunker.split(text, format=format)
    if title is None:  # front matter's title, the first heading, else the file's name
        headed = next((p.headings[0] for p in pieces if p.headings), None)
        title = front_matter_title(text) if format == "markdown" else None
        title = title or (_WIKILINK.sub(_link_text, headed) if headed else None)
        title = title or (Path(file.path).name if file else None)
    chunks = [
        Chunk(
            text=piece.text,
            metadata={
                **user_metadata,
                "heading_path": piece.heading_path,
                "char_start": piece.start,
                "char_end": piece.end,
                **({"_block_head": piece.lead} if piece.lead else {}),
            },
            embed_text=piece.embed_text(title),
        )
        for piece in pieces
    ]
    return StagedDocument(
        source=source,
        collection=collection,
        title=title,
        metadata_json=metadata_json,
        format=format,
        text=text,
        content_hash=digest,
        fingerprint=fingerprint,
        chunks=chunks,
        status="added" if stored is None else "updated",
        file=file,
    )
