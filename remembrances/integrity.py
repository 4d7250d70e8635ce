"""Checking (and repairing) a memory, and saving what can be read of a damaged one.

The checks themselves are the engine's (``storage/sqlite_integrity.py`` for a
SQLite file: its pages, FTS5, vec0, triggers and blobs); what is engine-neutral
lives here: re-chunking the documents and events a recovery found without their
searchable text, through the layers' public methods.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInputError, RemembrancesError
from .storage import sqlite_integrity
from .storage.reports import CheckReport, RecoveryReport
from .storage.sqlite_engine import SqliteEngine
from .store import Store

if TYPE_CHECKING:
    from .service import RemembrancesService

__all__ = ["CheckReport", "RecoveryReport", "check", "diagnose", "recover"]


def check(store: Store, *, repair: bool = False) -> CheckReport:
    """Verify that the derived indexes agree with the chunks and the model record.

    ``repair`` rebuilds them from the chunks. A file with damaged pages is
    diagnosed instead (see :func:`diagnose`): its indexes cannot be trusted or
    rebuilt in place.
    """
    return store.engine.check(repair=repair)


def diagnose(path: str | os.PathLike[str]) -> CheckReport:
    """What is wrong with a damaged file and how many rows of each table can be read."""
    return sqlite_integrity.diagnose(path)


def recover(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> RecoveryReport:
    """Copy every readable row of a damaged memory into a new file at ``target``.

    Rows on damaged pages are lost; everything else is copied as it was (vectors
    included), the full-text and vector indexes are rebuilt from the chunks, and a
    KB document that lost chunks is chunked and embedded again from its stored text.
    """
    target = Path(target)
    if target.exists():
        raise InvalidInputError(f"{str(target)!r} exists; recover into a new file")
    report = RecoveryReport(str(target))
    try:
        with Store(target, create=True) as store:
            _create_layers(store)
            assert isinstance(store.engine, SqliteEngine)
            sqlite_integrity.salvage(source, store.engine, report)
            from .code import tables as code_tables  # the code layer, only when recovering

            with store.transaction() as tx:
                code_tables.mark_recovered(tx)
    except BaseException:
        # Nothing is in it yet, and a retry would be refused for the file's existence.
        for leftover in (target, *(Path(f"{target}{end}") for end in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        raise
    _rechunk_documents(target, report)
    return report


def _create_layers(store: Store) -> None:
    from .service import RemembrancesService

    layers = RemembrancesService(store)
    for layer in (layers.kb, layers.events, layers.code):  # each creates its tables
        assert layer is not None


def _rechunk_documents(target: Path, report: RecoveryReport) -> None:
    """Documents and events whose chunks were lost: chunk and embed their saved text again."""
    from .service import RemembrancesService
    from .service import open as open_memory

    with Store(target) as store:
        layers = RemembrancesService(store)
        short = layers.kb.incomplete_documents()
        events = layers.events.unindexed()
    if not short and not events:
        return
    try:
        memory = open_memory(target)
    except RemembrancesError as exc:
        report.incomplete += [f"KB {c}/{s} (cannot embed: {exc})" for c, s in short]
        report.incomplete += [f"event {e} (cannot embed: {exc})" for e in events]
        return
    with memory:
        done, failed = _rebuild(memory, short, events)
    report.readded += done
    report.incomplete += failed


def _rebuild(
    memory: RemembrancesService, short: list[tuple[str, str]], events: list[int]
) -> tuple[list[str], list[str]]:
    """Chunk and embed again the documents and events whose chunks are missing, from
    their stored text: (what was rebuilt, what could not be, with why)."""
    done: list[str] = []
    failed: list[str] = []
    for collection, source in short:
        try:
            memory.kb.rebuild(source, collection=collection)
            done.append(f"{collection}/{source}")
        except RemembrancesError as exc:
            failed.append(f"KB {collection}/{source}: {exc}")
    for event_id in events:
        event = memory.events.get(event_id)
        try:
            # Indexed again from its row, same id: a conversation turn stays a turn
            # (session, position, speaker, the turn before it in what is embedded).
            memory.events.reindex([event_id])
            done.append(f"event {event_id} ({event.subject or 'no subject'})")
        except (RemembrancesError, ValueError) as exc:
            failed.append(f"event {event_id} ({event.content[:60]!r}): {exc}")
    return done, failed


def check_layers(memory: RemembrancesService, report: CheckReport, *, repair: bool) -> None:
    """What the store's check cannot see: chunks whose document or event is gone, and
    documents and events missing their chunks. ``repair`` deletes the first and
    rebuilds the second from their stored text (which needs the embedder)."""
    strays = [("kb", c, s) for c, s in memory.kb.stray_chunks()]
    strays += [("event", "events", s) for s in memory.events.stray_chunks()]
    if strays:
        names = ", ".join(f"{k} {c}/{s}" for k, c, s in strays[:5])
        more = f" and {len(strays) - 5} more" if len(strays) > 5 else ""
        report.problems.append(f"chunks of a document or event that is gone: {names}{more}")
        if repair:
            for kind, collection, source in strays:
                memory.store.delete_source(kind, source, collection=collection)
            report.repaired.append(f"deleted the chunks of {len(strays)} gone source(s)")
    short = memory.kb.incomplete_documents()
    events = memory.events.unindexed()
    missing = [f"KB {c}/{s}" for c, s in short] + [f"event {e}" for e in events]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        report.problems.append(f"missing some of their chunks: {', '.join(missing[:5])}{more}")
        if repair:
            done, failed = _rebuild(memory, short, events)
            if done:
                report.repaired.append(f"chunked again from their stored text: {len(done)}")
            if failed:
                report.problems.append(f"could not be rebuilt: {'; '.join(failed[:3])}")
