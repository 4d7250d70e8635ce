"""RemembrancesService: the KB, the event log and the code index over one file."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from datetime import tzinfo
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import embeddings
from .embeddings.base import Embedder
from .errors import ClosedError, InvalidInputError
from .integrity import CheckReport, check, check_layers
from .postgres.url import is_postgres_url
from .records import SOURCE_KINDS
from .storage.processes import check_same_process
from .storage.reports import CompactReport
from .store import Reranker, Store

if TYPE_CHECKING:
    from .code import CodeIndexer
    from .enrichment import ContextEnricher
    from .events import EventLog
    from .kb import KnowledgeBase

DEFAULT_PATH = Path(".remembrances") / "memory.db"


def default_path() -> Path | str:
    """``REMEMBRANCES_DB`` if set, else ``./.remembrances/memory.db``. A
    ``postgresql://`` URL stays a string (as a Path its ``//`` would collapse, and a
    new SQLite file named after the URL would be opened instead of the server)."""
    value = os.environ.get("REMEMBRANCES_DB")
    if is_postgres_url(value):
        return str(value)
    return Path(value or DEFAULT_PATH)


def source_kinds(memory: Any) -> set[str]:
    """The kinds a search can be limited to: the layers' own, and any other stored.
    Asked on every search that names kinds: a local memory reads only the kinds, not
    the whole of ``stats()``."""
    store = getattr(memory, "store", None)
    if isinstance(store, Store):
        return set(SOURCE_KINDS) | set(store.kinds())
    stored = memory.stats().get("chunks_by_kind") or {}
    return set(SOURCE_KINDS) | {str(k) for k in stored}


class RemembrancesService:
    """One memory file and one embedder; the domain layers hang off it."""

    def __init__(self, store: Store) -> None:
        if not isinstance(store, Store):  # a path would fail later, inside a layer
            raise InvalidInputError(
                f"RemembrancesService takes a Store, not {type(store).__name__}; to open a "
                "memory file use remembrances.open(path)"
            )
        self.store = store
        self._opened_in = os.getpid()
        self._lock = threading.Lock()

    # The layers are built on first use, so opening a file for one of them does not
    # import (or migrate) the others.
    @cached_property
    def kb(self) -> KnowledgeBase:
        from .kb import KnowledgeBase

        with self._lock:
            return KnowledgeBase(self.store)

    @cached_property
    def events(self) -> EventLog:
        from .events import EventLog

        with self._lock:
            return EventLog(self.store)

    @cached_property
    def code(self) -> CodeIndexer:
        from .code import CodeIndexer

        with self._lock:
            return CodeIndexer(self.store)

    @property
    def holds_code(self) -> bool:
        """Whether code was ever indexed in this memory (the code layer's tables exist):
        without, nothing needs the code layer, nor the code extra it imports."""
        return self.store.meta("schema:code") is not None

    @cached_property
    def enricher(self) -> ContextEnricher:
        from .enrichment import ContextEnricher

        with self._lock:
            return ContextEnricher(self)

    def enrich_context(
        self,
        prompt: str,
        *,
        user: str | None = None,
        session: str | None = None,
        project: str | None = None,
        collections: str | Sequence[str] | None = None,
        tz: str | tzinfo | None = None,
    ) -> str:
        """The memory that helps with ``prompt``, as a compact block ("" when none);
        ``user``/``session`` keep its events to one user's or one conversation's,
        ``collections`` its documents to those collections, and ``project`` its code to
        one indexed project's. ``tz`` (an IANA name such as ``"Asia/Tokyo"``) is the
        user's time zone, whose days "yesterday" means; the machine's by default."""
        return self.enricher.enrich_context(
            prompt, user=user, session=session, project=project, collections=collections, tz=tz
        )

    @property
    def path(self) -> str:
        return self.store.path

    @property
    def embedder(self) -> Embedder | None:
        return self.store.embedder

    def upgrade(self) -> list[str]:
        """Create or upgrade every layer's tables now; returns the layers upgraded.

        The layers otherwise do this on first use; a memory opened read-only never
        writes, so an older one must be upgraded once this way (CLI: ``init``).
        """
        self.store.check_writable("upgrade the schema")
        upgraded = []
        for layer in ("kb", "events", "code"):
            before = self.store.meta(f"schema:{layer}")
            getattr(self, layer)  # building a layer migrates its tables
            if before is not None and before != self.store.meta(f"schema:{layer}"):
                upgraded.append(layer)
        return upgraded

    def stats(self) -> dict[str, Any]:
        return self.store.stats()

    def check(self, *, repair: bool = False) -> CheckReport:
        """Verify that the indexes agree with the chunks, and the chunks with the
        documents and events they index; ``repair`` rebuilds what disagrees."""
        report = check(self.store, repair=repair)
        if not report.damaged:
            check_layers(self, report, repair=repair)
        return report

    def compact(self) -> CompactReport:
        """Drop cached vectors no chunk uses and give the space back (``Store.compact``)."""
        return self.store.compact()

    def check_open(self) -> None:
        """Raise ``ClosedError`` when this memory was closed, or was opened by the process
        this one was forked from (``storage/processes.py``)."""
        check_same_process(self._opened_in, repr(self.path))
        if self.store.closed:
            raise ClosedError(f"the memory {self.path!r} was closed; open it again to use it")

    def close(self) -> None:
        enricher = self.__dict__.get("enricher")  # only if it was ever built
        if enricher is not None and os.getpid() == self._opened_in:
            enricher.close()  # (a forked child has none of its threads to wait for)
        self.store.close()

    def __enter__(self) -> RemembrancesService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open(
    path: str | os.PathLike[str] | None = None,
    *,
    embedder: Embedder | str | None = None,
    read_only: bool = False,
    reranker: Reranker | None = None,
    create: bool | None = None,
) -> RemembrancesService:
    """Open (or create) a memory file, or a memory on a PostgreSQL server
    (``postgresql://user@host/db?memory=name``, docs/scale-out.md).

    ``embedder`` is an :class:`Embedder` or a spec (``"local"``, ``"openai:..."``).
    Without one, an existing file is opened with the embedder it was written
    with, and a new file gets ``REMEMBRANCES_EMBEDDER`` or the offline default.
    ``create`` is as for :class:`Store`: by default a new path or an empty file
    becomes a memory and a file holding anything else is refused; True makes a
    memory of any SQLite file, False opens only an existing memory.
    """
    location: str | Path = default_path() if path is None else os.fspath(path)
    if not is_postgres_url(location):  # a postgresql:// URL is not a path
        location = Path(location)
    if isinstance(embedder, str):  # a bad spec is refused before the file is touched
        embedder = embeddings.create(embedder)
    # Opened once, without an embedder: a file names the model it was written with,
    # and the guard then checks the one given against that record.
    store = Store(location, read_only=read_only, reranker=reranker, create=create)
    try:
        store.attach_embedder(
            embedder if embedder is not None else embeddings.create(store.embedder_name)
        )
    except BaseException:
        store.close()
        raise
    return RemembrancesService(store)
