"""``watch`` re-indexes a repository when its files change."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from remembrances.code import CodeIndexer, IndexReport
from tests.code.repo_builder import write


def test_watch_reindexes_on_change_until_stopped(code: CodeIndexer, tmp_path: Path) -> None:
    root = tmp_path / "live"
    write(root / "a.py", "def first():\n    pass\n")
    reports: list[IndexReport] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=code.watch,
        args=(root,),
        kwargs={"interval": 0.05, "stop_event": stop, "on_index": reports.append},
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not reports and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reports and reports[0].files_indexed == 1
        write(root / "b.py", "def second():\n    pass\n")
        while not code.find_symbol("second") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [s.path for s in code.find_symbol("second")] == ["b.py"]
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert reports[-1].files_indexed == 1 and reports[-1].files_unchanged == 1


def test_watch_stops_after_max_runs(code: CodeIndexer, tmp_path: Path) -> None:
    root = tmp_path / "once"
    write(root / "a.py", "def only():\n    pass\n")
    report = code.watch(root, interval=0.01, max_runs=1)
    assert report.files_indexed == 1
    assert [s.name for s in code.find_symbol("only")] == ["only"]
