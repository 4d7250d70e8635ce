"""Export a memory file to JSON Lines and import it back, through the public API.

The export holds what the memory *means*, not how it is stored: documents with
their text, events with their times, the roots of indexed code projects, and the
chunks of any other kind a program stored directly. Vectors are left out: they
belong to one model, and importing re-embeds with the target file's embedder (the
embedding cache makes a re-import into the same model cheap). So an export is
also the way to move memory to another model, or to another engine later.

Each line is one JSON object with a ``type``; the first is a header.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .errors import InvalidInputError
from .progress import Progress
from .records import Chunk

if TYPE_CHECKING:
    from .events.archive import EventImport
    from .service import RemembrancesService

FORMAT = "remembrances-export"
VERSION = 1
#: Chunk kinds owned by a domain layer: exported through that layer, not as chunks.
DOMAIN_KINDS = frozenset({"kb", "event", "code"})


@dataclass
class TransferReport:
    """How many records of each type were written or read, and what was skipped."""

    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- export ---------------------------------------------------------------------------


def export_records(svc: RemembrancesService, report: TransferReport) -> Iterator[dict[str, Any]]:
    """Every record of the export, header first."""
    yield {
        "type": FORMAT,
        "version": VERSION,
        "embedder": svc.store.embedder_name,
        "exported_at": datetime.now(UTC).isoformat(),
    }
    yield from _layer(report, "kb", lambda: _kb_documents(svc))
    yield from _layer(report, "events", lambda: _events(svc))
    yield from _layer(report, "code", lambda: _code_projects(svc))
    yield from _chunk_sources(svc)


def _layer(
    report: TransferReport, name: str, records: Callable[[], Iterable[dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """A domain layer's records; a layer that is not installed is noted, not fatal."""
    try:
        yield from records()
    except ImportError as exc:
        report.skipped.append({"what": name, "reason": f"layer not available: {exc}"})


def _kb_documents(svc: RemembrancesService) -> Iterator[dict[str, Any]]:
    for doc in svc.kb.list():
        full = svc.kb.get(doc.source, collection=doc.collection)
        yield {
            "type": "kb_document",
            "source": full.source,
            "collection": full.collection,
            "title": full.title,
            "metadata": full.metadata,
            "format": full.format,
            "text": full.text,
        }


def _events(svc: RemembrancesService, page: int = 1000) -> Iterator[dict[str, Any]]:
    from .events.archive import event_record  # turns keep session, position, role, user

    log = svc.events
    for offset in range(0, log.count(), page):
        for event in log.list(limit=page, offset=offset):
            yield event_record(event)


def _code_projects(svc: RemembrancesService) -> Iterator[dict[str, Any]]:
    if not svc.holds_code:
        return
    for project in svc.code.projects():
        yield {"type": "code_project", "name": project.name, "root": project.root}


def _chunk_sources(svc: RemembrancesService) -> Iterator[dict[str, Any]]:
    store = svc.store
    for kind, collection, source in store.sources():
        if kind in DOMAIN_KINDS:
            continue
        chunks = store.get_source(kind, source, collection=collection)
        yield {
            "type": "chunks",
            "kind": kind,
            "collection": collection,
            "source": source,
            "chunks": [
                {"text": c.text, "metadata": c.metadata, "ts": _epoch(c.ts)} for c in chunks
            ],
        }


def _epoch(moment: datetime | None) -> float | None:
    """A chunk's time as the export has always written it: epoch seconds."""
    return None if moment is None else moment.timestamp()


def export_jsonl(svc: RemembrancesService, out: IO[str]) -> TransferReport:
    """Write the export to ``out``, one JSON object per line."""
    report = TransferReport()
    for record in export_records(svc, report):
        out.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
        report.count(record["type"])
    report.counts.pop(FORMAT, None)
    return report


# -- import ---------------------------------------------------------------------------


def read_jsonl(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) pairs; the header is checked, blank lines skipped."""
    first = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InvalidInputError(f"line {number} is not JSON: {exc}") from exc
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise InvalidInputError(f"line {number} is not an object with a 'type'")
        if first:
            first = False
            if record["type"] != FORMAT:
                raise InvalidInputError(
                    "this is not a remembrances export (the first line must be its header)"
                )
            if int(record.get("version", 0)) > VERSION:
                raise InvalidInputError(
                    f"export version {record.get('version')} is newer than this version "
                    "of remembrances understands; upgrade to import it"
                )
            continue
        yield number, record
    if first:
        raise InvalidInputError("the export is empty")


def import_records(
    svc: RemembrancesService,
    records: Iterable[tuple[int, dict[str, Any]]],
    *,
    progress: Progress | None = None,
) -> TransferReport:
    """Store each record through its layer's public API. Documents and chunk sources
    replace what has the same name; identical events are stored once; the events
    are stored all or none, after the other records (events/archive.py).

    ``progress("imported", done, None)`` counts the records stored (the total of a
    stream is not known ahead)."""
    from .events.archive import EventImport

    report = TransferReport()
    events = EventImport(svc.events)
    try:
        _import(svc, records, report, events, progress)
    except InvalidInputError as exc:
        stored = sum(n for kind, n in report.counts.items() if kind != "event")
        if not stored:
            raise
        raise InvalidInputError(
            f"{exc} (the import stopped there: the records before it were stored, except "
            "events, and importing again after a fix is safe)"
        ) from exc
    try:
        events.write(svc.events)  # last, all or none
    except InvalidInputError as exc:
        if not any(n for kind, n in report.counts.items() if kind != "event"):
            raise
        raise InvalidInputError(
            f"{exc} (every record but the events was stored, and importing again after a "
            "fix is safe)"
        ) from exc
    return report


def _import(
    svc: RemembrancesService,
    records: Iterable[tuple[int, dict[str, Any]]],
    report: TransferReport,
    events: EventImport,
    progress: Progress | None,
) -> None:
    done = 0
    for number, record in records:
        kind = record["type"]
        try:
            if kind == "kb_document":
                svc.kb.add(
                    record["text"],
                    source=record["source"],
                    title=record.get("title"),
                    metadata=record.get("metadata"),
                    collection=record.get("collection", "default"),
                    format=record.get("format"),
                )
            elif kind == "event":
                events.add(number, record)
            elif kind == "code_project":
                root = record.get("root")
                if not root or not Path(root).is_dir():
                    report.skipped.append(
                        {"what": f"line {number}: code project {record.get('name')}",
                         "reason": f"its root {root!r} is not a directory here; index it again"}
                    )  # fmt: skip
                    continue
                svc.code.index(root, project=record.get("name"))
            elif kind == "chunks":
                chunks = [
                    Chunk(c["text"], metadata=c.get("metadata") or {}, ts=c.get("ts"))
                    for c in record["chunks"]
                ]
                svc.store.put_source(
                    record["kind"],
                    record["source"],
                    chunks,
                    collection=record.get("collection", "default"),
                )
            else:
                report.skipped.append(
                    {"what": f"line {number}", "reason": f"unknown record type {kind!r}"}
                )
                continue
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(
                f"line {number} ({kind}) is missing or has a bad {exc}"
            ) from exc
        report.count(kind)
        done += 1
        if progress is not None:
            progress("imported", done, None)


def import_jsonl(
    svc: RemembrancesService,
    lines: Iterable[str],
    *,
    progress: Progress | None = None,
) -> TransferReport:
    return import_records(svc, read_jsonl(lines), progress=progress)
