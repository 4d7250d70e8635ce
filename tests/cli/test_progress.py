"""Progress bars: counts, phases and rates on a terminal; nothing when not one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

import remembrances
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
    with (
        remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc,
        out.progress("indexing") as bar,
    ):
        report = svc.code.index(_repo(tmp_path / "repo"), progress=bar)
    assert report.files_indexed == 3
    shown = buffer.getvalue()
    assert "indexing: embedded" in shown or "indexing: written" in shown
    assert "3/3" in shown
    assert "/s" in shown  # a rate


def test_no_bar_without_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = Output(quiet=None)  # pytest's stderr is not a terminal
    assert not out.show_progress
    with (
        remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc,
        out.progress("indexing") as bar,
    ):
        report = svc.code.index(_repo(tmp_path / "repo"), progress=bar)
    assert report.files_indexed == 3
    assert "indexing" not in capsys.readouterr().err
    assert not Output(as_json=True, quiet=False).show_progress  # never under --json


def test_kb_ingest_progress_counts_files(tmp_path: Path) -> None:
    out, buffer = _terminal_output()
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nbody {i}\n")
    with (
        remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc,
        out.progress("ingesting") as bar,
    ):
        report = svc.kb.ingest(docs, progress=bar)
    assert len(report.added) == 4
    shown = buffer.getvalue()
    assert "ingesting: files" in shown
    assert "4/4" in shown


def test_a_call_without_progress_reports_gets_an_indeterminate_bar(tmp_path: Path) -> None:
    out, buffer = _terminal_output()
    with out.progress("exporting"):  # nothing reports a count
        (tmp_path / "out.txt").write_text("done")
    shown = buffer.getvalue()
    assert "exporting" in shown and "0/?" in shown


def test_every_long_call_reports_phase_done_total(tmp_path: Path) -> None:
    """One callback shape for all of them (issue 17 item 2): no call-specific adapters."""
    from remembrances.reembed import reembed
    from remembrances.transfer import import_jsonl

    calls: list[tuple[object, ...]] = []

    def record(phase: str, done: int, total: int | None) -> None:
        assert isinstance(phase, str) and isinstance(done, int)
        assert total is None or isinstance(total, int)
        calls.append((phase, done, total))

    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        svc.events.log_conversation(
            [{"role": "user", "content": "hello there"}], session="s1", progress=record
        )
        assert calls[-1] == ("embedding", 1, 1)
        svc.code.index(_repo(tmp_path / "repo"), embed=False)
        svc.code.backfill("repo", progress=record)
        assert calls[-1] == ("embedded", 3, 3)
        lines = [
            '{"type": "remembrances-export", "version": 1}',
            '{"type": "event", "content": "imported", "subject": "x"}',
        ]
        report = import_jsonl(svc, lines, progress=record)
        assert report and calls[-1] == ("imported", 1, None)
    reembed(tmp_path / "m.db", remembrances.embeddings.create("hash:32"), progress=record)
    assert calls[-1][0] == "embedding" and calls[-1][1] == calls[-1][2]


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
