"""What the CLI prints about results: removals, event hits, symbols."""

from __future__ import annotations

from pathlib import Path

from .conftest import Run, as_json


def test_events_rm_with_one_unknown_id_says_what_was_and_was_not_removed(run: Run) -> None:
    first = as_json(run("events", "log", "the first thing", "--json"))
    second = as_json(run("events", "log", "the second thing", "--json"))
    result = run("events", "rm", str(first["id"]), "999")
    assert result.exit_code == 1
    assert f"removed 1 event(s): {first['id']}; no event with id 999" in result.stderr
    left = {e["id"] for e in as_json(run("events", "list", "--json"))}
    assert left == {second["id"]}
    done = run("events", "rm", str(second["id"]))
    assert done.exit_code == 0
    assert f"removed 1 event(s): {second['id']}" in done.stdout


def test_event_hits_in_search_show_the_subject_not_the_internal_id(run: Run) -> None:
    for i in range(3):  # the event we look for gets an id that is not 1
        run("events", "log", f"unrelated note {i}", "--subject", f"misc{i}")
    logged = as_json(
        run("events", "log", "deployed the payment service", "--subject", "deploys", "--json")
    )
    result = run("search", "payment service deployed", "--kind", "event", "-n", "1")
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "[event]" in line)
    assert "deploys" in header
    assert f"[event] {logged['id']}" not in header
    assert "UTC" in header  # when it happened


def test_code_symbol_prints_the_docstring_as_text_not_a_python_repr(
    run: Run, tmp_path: Path
) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "jobs.py").write_text(
        "def retry(job):\n"
        '    """Run a job again.\n\n    Gives up after three tries."""\n'
        "    return job()\n"
    )
    (repo / "jobs.go").write_text(
        "package jobs\n\n// Retry runs a job again.\n// It gives up after three tries.\n"
        "func Retry(job func() error) error {\n\treturn job()\n}\n"
    )
    run("code", "index", str(repo))
    python = run("code", "symbol", "retry")
    assert python.exit_code == 0, python.output
    assert "Run a job again." in python.stdout
    assert "Gives up after three tries." in python.stdout
    assert "\\n" not in python.stdout and "'Run a job" not in python.stdout
    go = run("code", "symbol", "Retry")
    assert "// It gives up after three tries." in go.stdout or "It gives up" in go.stdout
    assert "\\n" not in go.stdout and "'Retry runs" not in go.stdout
