"""Progress bars: counts, phases and rates on a terminal; nothing when not one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
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


def test_kb_ingest_counts_the_chunks_it_embeds_as_their_own_phase(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nbody {i}\n\n## More\n\nmore {i}\n")
    calls: list[tuple[str, int, int]] = []
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        svc.kb.ingest(docs, progress=lambda *a: calls.append(a))
    embedding = [c for c in calls if c[0] == "embedding"]
    assert embedding, calls
    assert embedding[0][1] == 0 and embedding[-1][1] == embedding[-1][2] == 6  # 6 chunks
    after = calls[calls.index(embedding[-1]) + 1 :]
    assert after and after[-1] == ("files", 3, 3)  # the files' bar comes back at the end


def test_a_new_phase_starts_without_the_last_phases_rate() -> None:
    out, _ = _terminal_output()
    with out.progress("indexing") as task:
        task.describe("indexing: parsed")
        task.total(1000)
        task.done(1000)
        task.describe("indexing: embedded")
        task.total(10)
        rate = out_rate(task)
    assert rate == ""


def out_rate(task: object) -> str:
    progress = task._progress  # type: ignore[attr-defined]
    return str(progress.tasks[task._task].fields["rate"])  # type: ignore[attr-defined]


def test_code_index_no_embed_then_backfill_from_the_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from remembrances.cli import cli

    db = str(tmp_path / "m.db")
    repo = _repo(tmp_path / "repo")
    runner = CliRunner()
    indexed = runner.invoke(
        cli, ["--db", db, "--embedder", "hash:64", "code", "index", str(repo), "--no-embed"]
    )
    assert indexed.exit_code == 0, indexed.output
    with remembrances.open(db) as svc:
        assert svc.code.stats("repo").pending_embeddings == 3
        assert svc.code.search("f1", mode="text")  # searchable by words already
    done = runner.invoke(cli, ["--db", db, "code", "backfill", "--json"])
    assert done.exit_code == 0, done.output
    assert '"repo": 3' in done.stdout and '"pending_embeddings": 0' in done.stdout
    with remembrances.open(db) as svc:
        assert svc.code.stats("repo").pending_embeddings == 0
    nope = runner.invoke(cli, ["--db", db, "code", "backfill", "--project", "nope"])
    assert nope.exit_code == 1 and "no code project named 'nope'" in nope.stderr


def test_eval_shows_a_bar_per_phase_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from remembrances.cli import cli, output
    from tests.cli.test_cli_layers import _beir

    monkeypatch.setattr(output, "_is_tty", lambda: True)
    result = CliRunner().invoke(
        cli, ["--embedder", "hash:64", "eval", str(_beir(tmp_path / "beir")), "--mode", "text"]
    )
    assert result.exit_code == 0, result.output
    assert "searching 2 queries, mode text" in result.stderr
    assert "0:00:0" in result.stderr  # a bar with its elapsed time, not a bare line
    assert "nDCG@10" in result.stdout
