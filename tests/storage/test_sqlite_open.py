"""Opening a SQLite memory file while another connection writes to it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import apsw

from remembrances import Chunk, Store
from remembrances.embeddings import HashEmbedder


def test_opening_a_new_file_waits_for_a_writer_that_holds_it(tmp_path: Path) -> None:
    """A new file is in rollback mode: turning on WAL while another connection holds its
    write lock was "locked" at once, whatever the busy timeout (two processes creating
    one memory at once). It now waits for the lock like any write."""
    path = tmp_path / "new.db"
    holder = apsw.Connection(str(path))
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def release() -> None:
        time.sleep(0.3)
        holder.execute("COMMIT")
        released.set()

    threading.Thread(target=release).start()
    with Store(path, embedder=HashEmbedder(8)) as store:
        assert released.is_set()
        assert store.put_source("note", "a", [Chunk("opened after the writer")]) is not None
    holder.close()
