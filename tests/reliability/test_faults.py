"""A full disk and an unwritable file give clear errors and corrupt nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import remembrances
from remembrances import Chunk, ReadOnlyError, StorageError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.integrity import check

FILL_UNTIL_FULL = textwrap.dedent(
    """
    import resource, signal, sys
    from remembrances import Store, Chunk, StorageError
    from remembrances.embeddings import HashEmbedder
    store = Store(sys.argv[1], embedder=HashEmbedder(64))
    # From here on the process may not grow any file past the limit: a full disk.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        for i in range(100000):
            store.put_source("kb", f"big{i}", [Chunk(f"bulk text {i} " + "x" * 20000)])
    except StorageError as exc:
        print("STORAGE", exc)
        sys.exit(0)
    print("NEVER FULL")
    sys.exit(1)
    """
)


def test_disk_full_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "full.db"
    store = Store(path, embedder=HashEmbedder(64))
    store.put_source("kb", "keep", [Chunk("this document must survive a full disk")])
    store.close()
    limit = os.path.getsize(path) + 2_000_000
    result = subprocess.run(
        [sys.executable, "-c", FILL_UNTIL_FULL, str(path), str(limit)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "STORAGE" in result.stdout and ("full" in result.stdout or "I/O" in result.stdout)
    store = Store(path, embedder=HashEmbedder(64))
    assert check(store).ok
    assert store.get_source("kb", "keep")[0].text == "this document must survive a full disk"
    written = store.count(kind="kb")
    # Whatever was written before the disk filled is whole.
    for chunk in store.get_source("kb", "big0"):
        assert chunk.text.startswith("bulk text 0")
    assert written >= 1
    store.put_source("kb", "after", [Chunk("writes work again once there is space")])


#: What a script run as nobody starts with: sqlite-vec loaded while still root (the
#: checkout and its .venv may lie in a private folder that nobody cannot read; a loaded
#: library is not read again).
AS_NOBODY = textwrap.dedent(
    """
    import os, sys
    import apsw, sqlite_vec
    import remembrances
    from remembrances import Chunk, ReadOnlyError, StorageError, Store
    from remembrances.embeddings import HashEmbedder
    preload = apsw.Connection(":memory:")
    preload.enable_load_extension(True)
    preload.load_extension(sqlite_vec.loadable_path())
    """
)


def _as_nobody(body: str, *args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``AS_NOBODY`` + ``body`` (which drops to nobody itself) in ``cwd``, not the
    checkout, which nobody may not be able to enter."""
    return subprocess.run(
        [sys.executable, "-c", AS_NOBODY + textwrap.dedent(body), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": "/tmp"},
        cwd=cwd,
    )


READ_ONLY = """
    os.setgid(65534); os.setuid(65534)  # nobody: cannot write the file or its folder
    store = Store(sys.argv[1], embedder=HashEmbedder(64))
    print("HIT", store.search("readable")[0].source)
    try:
        store.put_source("kb", "new", [Chunk("should not be written")])
    except ReadOnlyError as exc:
        print("REFUSED", exc)
    """


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to drop to nobody"
)
def test_unwritable_file_opens_for_search_and_refuses_writes() -> None:
    # pytest's tmp_path lives under a root-only folder; nobody must reach this one.
    folder = Path(tempfile.mkdtemp(prefix="remembrances-ro-", dir="/tmp"))
    path = folder / "ro.db"
    store = Store(path, embedder=HashEmbedder(64))
    store.put_source("kb", "doc", [Chunk("a readable document")])
    store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    folder.chmod(0o755)
    for p in folder.iterdir():
        p.chmod(0o644)
    result = _as_nobody(READ_ONLY, path, cwd=folder)
    assert "HIT doc" in result.stdout, result.stderr
    assert "REFUSED" in result.stdout and "not writable" in result.stdout
    assert Store(path, embedder=HashEmbedder(64)).count() == 1
    shutil.rmtree(folder)


FOLDER = """
    # Import what the calls below use while still root (the interpreter's own library
    # may lie where nobody cannot read): one write to a throwaway memory does it.
    with remembrances.open(sys.argv[3], embedder="hash:64") as warm:
        warm.events.log("x", subject="t")
    os.setgid(65534); os.setuid(65534)  # nobody: may write the file, not its folder
    with remembrances.open(sys.argv[1], embedder="hash:64") as memory:
        try:
            memory.events.log("x", subject="t")
        except ReadOnlyError as exc:
            print("WRITE", exc)
    try:
        remembrances.open(sys.argv[2], embedder="hash:64")
    except StorageError as exc:
        print("CREATE", exc)
    """


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to drop to nobody"
)
def test_a_folder_that_is_not_writable_is_named_as_the_reason() -> None:
    # the message blamed a file that was writable, and a new memory there failed with
    # the base error and SQLite's "unable to open database file"
    folder = Path(tempfile.mkdtemp(prefix="remembrances-rodir-", dir="/tmp"))
    path, warm = folder / "mem.db", Path(tempfile.mkdtemp(dir="/tmp")) / "warm.db"
    with remembrances.open(path, embedder="hash:64") as memory:
        memory.kb.add("hello", source="a.md")
        memory.store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    folder.chmod(0o755)
    for p in folder.iterdir():
        p.chmod(0o666)
    result = _as_nobody(FOLDER, path, folder / "new.db", warm, cwd=folder)
    lines = " ".join(result.stdout.split())
    assert "WRITE" in lines and f"its folder {str(folder)!r} is not writable" in lines, (
        result.stdout + result.stderr
    )
    assert "CREATE" in lines and "its folder is not writable by this user" in lines
    assert not (folder / "new.db").exists()
    shutil.rmtree(folder)
    shutil.rmtree(warm.parent)


def _read_only_mount(source: Path, target: Path) -> bool:
    """Bind ``source`` read-only at ``target`` (root with mount rights only)."""
    bind = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
    if bind.returncode != 0:
        return False
    remount = subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], capture_output=True)
    if remount.returncode != 0:
        subprocess.run(["umount", str(target)], capture_output=True)
        return False
    return True


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to mount a folder"
)
def test_a_memory_on_a_read_only_file_system_is_searched_and_checked(tmp_path: Path) -> None:
    # a read-only volume or snapshot: SQLite cannot make the -shm file, and opening
    # failed with "unable to open database file" for every command, reads too
    source, target = tmp_path / "source", tmp_path / "mounted"
    source.mkdir(), target.mkdir()
    with remembrances.open(source / "mem.db", embedder="hash:64") as memory:
        memory.kb.add("The VPN needs MFA.", source="vpn")
        # a snapshot copied while the memory was open: its last write is in the -wal
        memory.kb.add("The wiki moved to Confluence.", source="wiki")
        (source / "pending").mkdir()
        for name in ("mem.db", "mem.db-wal"):
            shutil.copyfile(source / name, source / "pending" / name)
    if not _read_only_mount(source, target):
        pytest.skip("mount is not permitted here")
    try:
        for read_only in (False, True):
            with remembrances.open(target / "mem.db", read_only=read_only) as memory:
                assert memory.kb.search("vpn")[0].source == "vpn"
                assert memory.kb.count() == 2  # the last write too
                assert memory.check().ok
                reason = "read_only=True" if read_only else "on a read-only file system"
                with pytest.raises(ReadOnlyError, match=reason):
                    memory.kb.add("more", source="more")
        assert sorted(p.name for p in target.iterdir()) == ["mem.db", "pending"]  # no -shm
        # an immutable read would not see the -wal's write: refused, not silently stale
        with pytest.raises(StorageError, match="its -wal file holds changes"):
            remembrances.open(target / "pending" / "mem.db", read_only=True)
    finally:
        subprocess.run(["umount", str(target)], capture_output=True)
