"""Progress bars: counts, phases and rates on a terminal; nothing when not one."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

import remembrances
from remembrances.cli.options import progress_for
from remembrances.cli.output import Output


def _terminal_output() -> tuple[Output, io.StringIO]:
    out = Output(quiet=False)
    buffer = io.StringIO()
    out.err = Console(file=buffer, force_terminal=True, width=160)
    return out, buffer


def _repo(root: Path) -> Path:
    root.mkdir()
    for i in range(3):
        (root / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return root


def test_code_index_progress_shows_phases_and_counts(tmp_path: Path) -> None:
    out, buffer = _terminal_output()
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        index = svc.code.index
        with progress_for(out, "indexing", index) as hook:
            assert "progress" in hook
            report = index(_repo(tmp_path / "repo"), **hook)
    assert report.files_indexed == 3
    shown = buffer.getvalue()
    assert "indexing: embedded" in shown or "indexing: written" in shown
    assert "3/3" in shown
    assert "/s" in shown  # a rate


def test_no_progress_hook_without_a_terminal(tmp_path: Path) -> None:
    out = Output(quiet=None)  # pytest's stderr is not a terminal
    with (
        remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc,
        progress_for(out, "indexing", svc.code.index) as hook,
    ):
        assert hook == {}
    assert not Output(as_json=True, quiet=False).show_progress  # never under --json


def test_kb_ingest_progress_counts_files(tmp_path: Path) -> None:
    out, buffer = _terminal_output()
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nbody {i}\n")
    with (
        remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc,
        progress_for(out, "ingesting", svc.kb.ingest) as hook,
    ):
        assert "progress" in hook
        report = svc.kb.ingest(docs, **hook)
    assert len(report.added) == 4
    shown = buffer.getvalue()
    assert "ingesting: files" in shown
    assert "4/4" in shown


def test_a_function_without_a_progress_parameter_gets_an_indeterminate_bar(
    tmp_path: Path,
) -> None:
    out, buffer = _terminal_output()

    def export(path: Path) -> None:  # takes no progress callback
        path.write_text("done")

    with progress_for(out, "exporting", export) as hook:
        assert hook == {}
        export(tmp_path / "out.txt")
    assert "exporting" in buffer.getvalue()
