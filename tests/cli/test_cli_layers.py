"""kb, events, code, export/import and eval commands through click's runner, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Run, as_json


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "deploy.md").write_text(
        "# Deploy\n\nWe deploy with make ship.\n\n## Rollback\n\nRun make rollback.\n"
    )
    (root / "vpn.txt").write_text("The office VPN needs MFA since March.\n")
    (root / "blob.md").write_bytes(b"\x00\x01\x02binary\xff")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    (root / "upload.py").write_text(
        "class Uploader:\n"
        '    """Sends files."""\n\n'
        "    def upload_file(self, path, retries=3):\n"
        '        """Upload one file, retrying failed uploads."""\n'
        "        return self.send(path)\n\n"
        "    def send(self, path):\n"
        "        return True\n\n\n"
        "def main():\n"
        "    Uploader().upload_file('x')\n"
    )
    return root


# -- kb ----------------------------------------------------------------------------------


def test_kb_ingest_list_search_get_rm(run: Run, notes: Path) -> None:
    report = as_json(run("kb", "ingest", str(notes), "--json"))
    assert sorted(report["added"]) == ["deploy.md", "vpn.txt"]
    assert [s["path"] for s in report["skipped"]] == ["blob.md"]

    again = as_json(run("kb", "ingest", str(notes), "--json"))
    assert again["added"] == [] and again["unchanged"] == 2

    docs = as_json(run("kb", "list", "--json"))
    assert {d["title"] for d in docs} >= {"Deploy"}
    source = next(d["source"] for d in docs if d["title"] == "Deploy")

    hits = as_json(run("kb", "search", "how do I run make rollback?", "--json", "-n", "1"))
    assert hits[0]["heading_path"].endswith("Rollback")

    human = run("kb", "search", "roll back")
    assert human.exit_code == 0 and "Rollback" in human.stdout
    # a collection's name mistyped: said, not read as "nothing relevant"
    typo = run("kb", "search", "roll back", "--collection", "defualt")
    assert typo.exit_code == 0 and "no results" in typo.stdout
    assert "collection 'defualt' holds no documents (collections: default)" in typo.stderr

    got = run("kb", "get", source)
    assert got.exit_code == 0 and "make rollback" in got.stdout

    assert as_json(run("kb", "rm", source, "--json"))["deleted"] is True
    gone = run("kb", "get", source)
    assert gone.exit_code == 1 and "no document" in gone.stderr


def test_kb_ingest_human_output_lists_skipped_files(run: Run, notes: Path) -> None:
    result = run("kb", "ingest", str(notes))
    assert result.exit_code == 0
    assert "skipped blob.md" in result.stdout


def test_kb_ingest_takes_hidden_files_on_request(run: Run, tmp_path: Path) -> None:
    (tmp_path / "n" / ".private").mkdir(parents=True)
    (tmp_path / "n" / "a.md").write_text("# A\n\nalpha\n")
    (tmp_path / "n" / ".private" / "s.md").write_text("# S\n\nsecret\n")
    plain = as_json(run("kb", "ingest", str(tmp_path / "n"), "--json"))
    assert plain["added"] == ["a.md"]
    hidden = as_json(run("kb", "ingest", str(tmp_path / "n"), "--include-hidden", "--json"))
    assert hidden["added"] == [".private/s.md"]
    assert as_json(run("kb", "ingest", str(tmp_path / "n"), "--json"))["removed"] == []


def test_kb_ingest_refuses_patterns_that_cannot_select_a_file(run: Run, notes: Path) -> None:
    for pattern in ("\\", "", "# docs"):
        result = run("kb", "ingest", str(notes), "--pattern", pattern)
        assert result.exit_code == 2, (pattern, result.output)
        assert "Invalid value for '--pattern'" in result.stderr and "'*.md'" in result.stderr
    only_negations = run("kb", "ingest", str(notes), "--pattern", "!*.md")
    assert only_negations.exit_code == 2 and "select no file" in only_negations.stderr
    kept = run("kb", "ingest", str(notes), "--pattern", "*.md", "--pattern", "!blob.md", "--json")
    assert as_json(kept)["added"] == ["deploy.md"]


def test_kb_ingest_says_when_the_patterns_matched_nothing(run: Run, notes: Path) -> None:
    result = run("kb", "ingest", str(notes), "--pattern", "[", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["added"] == []
    assert f"no file under {notes} matches --pattern '['" in result.stderr
    assert "literal '['" in result.stderr


def test_kb_add_from_a_file_and_from_stdin(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nAlpha text.\n")
    added = as_json(
        run("kb", "add", str(doc), "--meta", "team=ops", "--meta", "year=2026", "--json")
    )
    assert added["status"] == "added"
    stored = as_json(run("kb", "get", str(doc), "--json"))
    assert stored["metadata"] == {"team": "ops", "year": 2026}

    piped = as_json(run("kb", "add", "-", "--source", "it/vpn", "--json", input="VPN needs MFA."))
    assert piped["source"] == "it/vpn"
    assert "MFA" in run("kb", "get", "it/vpn").stdout


def test_kb_add_bad_input(run: Run, tmp_path: Path) -> None:
    stdin_without_source = run("kb", "add", "-", input="text")
    assert stdin_without_source.exit_code == 2
    empty = run("kb", "add", "-", "--source", "x", input="   ")
    assert empty.exit_code == 1 and "empty" in empty.stderr
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"caf\xe9 \xff")
    not_utf8 = run("kb", "add", str(bad))
    assert not_utf8.exit_code == 1
    assert "utf-8" in not_utf8.stderr.lower() and "Traceback" not in not_utf8.output
    assert run("kb", "add", str(tmp_path / "missing.md")).exit_code == 2
    bad_meta = run("kb", "add", "-", "--source", "x", "--meta", "novalue", input="t")
    assert bad_meta.exit_code == 2
    # the rules an ingest reads files by, and the byte a user can find: not Python's
    # "lone surrogate", and no NUL-holding file stored that an ingest would skip
    piped = run("kb", "add", "-", "--source", "x", input=b"ab\xffcd text")
    assert piped.exit_code == 1 and "stdin: not valid UTF-8 (byte 3 is 0xff)" in piped.stderr
    (tmp_path / "utf16.md").write_bytes("# Notes\n".encode("utf-16"))
    assert "UTF-16 text" in run("kb", "add", str(tmp_path / "utf16.md")).stderr
    (tmp_path / "nul.md").write_bytes(b"# Notes\n\x00\x01")
    assert "binary file" in run("kb", "add", str(tmp_path / "nul.md")).stderr
    assert run("kb", "list", "--json").stdout.count('"source"') == 0


def test_kb_rm_missing_document_is_a_user_error(run: Run) -> None:
    run("init")
    result = run("kb", "rm", "nope")
    assert result.exit_code == 1 and "no document" in result.stderr


def test_kb_get_finds_the_one_collection_that_holds_it(run: Run) -> None:
    run("kb", "add", "-", "--source", "runbook.md", "--collection", "ops", input="Restart it.")
    got = run("kb", "get", "runbook.md")  # not in "default": the one collection with it
    assert got.exit_code == 0 and got.stdout.strip() == "Restart it."
    run("kb", "add", "-", "--source", "runbook.md", "--collection", "dev", input="Rebuild it.")
    both = run("kb", "get", "runbook.md")  # two hold it: the error says which
    assert both.exit_code == 1 and "'dev'" in both.stderr and "'ops'" in both.stderr
    assert run("kb", "get", "runbook.md", "--collection", "dev").stdout.strip() == "Rebuild it."
    # a name several documents of "default" answer to stays that collection's question
    run("kb", "add", "-", "--source", "a/index.md", input="A.")
    run("kb", "add", "-", "--source", "b/index.md", input="B.")
    run("kb", "add", "-", "--source", "index.md", "--collection", "notes", input="Notes.")
    several = run("kb", "get", "index.md")
    assert several.exit_code == 1 and "could be any of" in several.stderr


def test_kb_rm_says_the_name_it_removed(run: Run, tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "why.md").write_text("# Why\n\nBecause.\n")
    run("kb", "ingest", str(tmp_path))
    result = run("kb", "rm", "why.md")  # a part of its name
    assert result.exit_code == 0 and result.stdout.strip() == "removed api/why.md"


def test_kb_watch_once_syncs_the_directory(run: Run, notes: Path) -> None:
    result = run("kb", "watch", str(notes), "--once")
    assert result.exit_code == 0, result.output
    assert "added" in result.stdout
    assert len(as_json(run("kb", "list", "--json"))) == 2


# -- events ------------------------------------------------------------------------------


def test_an_event_logged_for_a_user_is_found_in_their_scope(run: Run) -> None:
    as_json(run("events", "log", "Bob is on call next week", "--json"))
    mine = as_json(run("events", "log", "Ana is on call this week", "--user", "ana", "--json"))
    assert mine["user"] == "ana"
    listed = as_json(run("events", "list", "--user", "ana", "--json"))
    assert [e["content"] for e in listed] == ["Ana is on call this week"]


def test_events_log_search_list_subjects_rm_prune(run: Run) -> None:
    old = as_json(
        run("events", "log", "Moved the CI to new runners", "--subject", "ci",
            "--at", "2020-01-01T10:00:00+10:00", "--json")
    )  # fmt: skip
    assert old["occurred_at"] == "2020-01-01T00:00:00+00:00"
    new = as_json(run("events", "log", "Deploy failed: disk full", "--subject", "deploy", "--json"))
    assert new["subject"] == "deploy" and isinstance(new["id"], int)

    found = as_json(run("events", "search", "deploy failure", "--json"))
    assert found[0]["content"] == "Deploy failed: disk full"
    words = as_json(run("events", "search", "disk", "--mode", "text", "--json"))
    assert [e["content"] for e in words] == ["Deploy failed: disk full"]
    floor = found[0]["score"]
    kept = as_json(run("events", "search", "deploy failure", "--min-score", str(floor), "--json"))
    assert [e["score"] for e in kept] == [floor]
    recent = as_json(run("events", "search", "--last", "7d", "--json"))
    assert [e["subject"] for e in recent] == ["deploy"]
    listed = as_json(run("events", "list", "--json"))
    assert [e["subject"] for e in listed] == ["deploy", "ci"]  # newest first
    assert as_json(run("events", "subjects", "--json")) == {"ci": 1, "deploy": 1}

    human = run("events", "list")
    assert human.exit_code == 0 and "2020-01-01 00:00 UTC" in human.stdout

    pruned = run("events", "prune", "--older-than", "365d", "--json")
    assert as_json(pruned) == {"deleted": 1}
    assert "remembrances compact" in pruned.stderr  # how to give the space back
    assert as_json(run("events", "rm", str(new["id"]), "--json")) == {
        "deleted": 1,
        "ids": [new["id"]],
    }
    assert as_json(run("events", "list", "--json")) == []


def test_search_of_everything_can_keep_to_one_users_events(run: Run, tmp_path: Path) -> None:
    for user, pet in (("alice", "Biscuit"), ("bob", "Pixel")):
        chat = tmp_path / f"{user}.jsonl"
        chat.write_text(json.dumps({"role": "user", "content": f"my dog is called {pet}"}) + "\n")
        assert run("events", "import", str(chat), "--user", user).exit_code == 0
    run("kb", "add", "-", "--source", "dogs.md", input="Dog names: how to name a dog.")
    both = {h["text"] for h in as_json(run("search", "dog called", "--json"))}
    assert {"user: my dog is called Biscuit", "user: my dog is called Pixel"} <= both
    alices = {h["text"] for h in as_json(run("search", "dog called", "--user", "alice", "--json"))}
    assert "user: my dog is called Pixel" not in alices
    assert {"user: my dog is called Biscuit", "Dog names: how to name a dog."} <= alices


def test_events_bad_input(run: Run) -> None:
    run("init")
    bad_time = run("events", "log", "x", "--at", "yesterday-ish")
    assert bad_time.exit_code == 1 and "Traceback" not in bad_time.output
    bad_window = run("events", "search", "x", "--last", "3")
    assert bad_window.exit_code == 1 and "duration" in bad_window.stderr
    missing = run("events", "rm", "12345")
    assert missing.exit_code == 1 and "12345" in missing.stderr
    assert run("events", "rm", "abc").exit_code == 2
    assert run("events", "prune").exit_code == 2


# -- code --------------------------------------------------------------------------------


def test_code_index_search_symbol_outline_refs_projects_rm(run: Run, repo: Path) -> None:
    report = as_json(run("code", "index", str(repo), "--json"))
    assert report["project"] == "app" and report["files_indexed"] == 1
    assert as_json(run("code", "index", str(repo), "--json"))["files_unchanged"] == 1

    hits = as_json(run("code", "search", "retry failed uploads", "--json", "-n", "1"))
    assert hits[0]["qualified_name"] == "Uploader.upload_file"
    human = run("code", "search", "retry failed uploads", "-n", "1")
    assert "upload.py:4-6" in human.stdout and "def upload_file" in human.stdout
    # --min-score and --mode as for the KB and events
    every = as_json(run("code", "search", "retry failed uploads", "--json"))
    assert all(h["score"] == round(h["score"], 6) for h in every)  # rounded as kb/events
    floor = (every[0]["score"] + every[-1]["score"]) / 2
    kept = as_json(
        run("code", "search", "retry failed uploads", "--min-score", str(floor), "--json")
    )
    assert kept and len(kept) < len(every) and all(h["score"] >= floor for h in kept)
    words = as_json(run("code", "search", "uploads", "--mode", "text", "--json"))
    assert words and all(h["text_score"] > 0 for h in words)
    assert run("code", "search", "x", "--min-score", "2").exit_code == 1

    across = run("search", "retry failed uploads", "--kind", "code", "-n", "1")
    assert "upload.py:4-6" in across.stdout and "def upload_file" in across.stdout
    assert "· python" not in across.stdout  # the chunk's header is not shown as code

    symbols = as_json(run("code", "symbol", "Uploader.send", "--json"))
    assert [(s["kind"], s["start_line"]) for s in symbols] == [("method", 8)]

    outline = as_json(run("code", "outline", "upload.py", "--project", "app", "--json"))
    assert outline[0]["name"] == "Uploader"
    assert [c["name"] for c in outline[0]["children"]] == ["upload_file", "send"]
    tree = run("code", "outline", "upload.py")
    assert "Uploader.send" in tree.stdout

    refs = as_json(run("code", "refs", "upload_file", "--json"))
    assert sorted(r["line"] for r in refs) == [4, 13]

    projects = as_json(run("code", "projects", "--json"))
    assert [p["name"] for p in projects] == ["app"]
    assert as_json(run("code", "rm", "app", "--json")) == {"project": "app", "files": 1}
    assert as_json(run("code", "projects", "--json")) == []


def test_code_symbol_and_refs_say_when_the_limit_may_have_cut_them(
    run: Run, tmp_path: Path
) -> None:
    # 100 of 929 `__init__` methods and 1,000 of 5,089 uses looked complete, and there
    # was no --limit
    repo = tmp_path / "many"
    repo.mkdir()
    (repo / "classes.py").write_text(
        "".join(f"class C{i}:\n    def __init__(self):\n        C0()\n" for i in range(120))
    )
    assert run("code", "index", str(repo), "--project", "many").exit_code == 0
    first = run("code", "symbol", "__init__", "--json")
    assert len(as_json(first)) == 100 and "there may be more" in first.stderr
    every = run("code", "symbol", "__init__", "--json", "-n", "500")
    assert len(as_json(every)) == 120 and "there may be more" not in every.stderr
    refs = run("code", "refs", "C0", "--json", "--limit", "50")
    assert len(as_json(refs)) == 50 and "the first 50 references" in refs.stderr
    assert len(as_json(run("code", "refs", "C0", "--json"))) == 121
    bad = run("code", "symbol", "__init__", "-n", "0")
    assert bad.exit_code == 1 and "-n/--limit must be an integer from 1 to 10000" in bad.stderr
    # nothing found: said, not an empty table
    assert run("code", "refs", "nowhere").stdout.strip() == "no references"


def test_code_refs_name_the_project_when_there_are_several(
    run: Run, repo: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "upload.py").write_text((repo / "upload.py").read_text())
    assert run("code", "index", str(repo), "--project", "app").exit_code == 0
    assert "[app]" not in run("code", "refs", "upload_file").stdout  # one project: no need
    assert run("code", "index", str(copy), "--project", "copy").exit_code == 0
    table = run("code", "refs", "upload_file").stdout
    assert "[app]" in table and "[copy]" in table


def test_code_refs_say_when_a_file_changed_since_it_was_indexed(run: Run, repo: Path) -> None:
    assert run("code", "index", str(repo), "--project", "app").exit_code == 0
    assert "changed since indexed" not in run("code", "refs", "upload_file").stdout
    upload = repo / "upload.py"
    upload.write_text('"""Module docstring, added since."""\n' + upload.read_text())
    # the line now at a stored number may be another one: said, not shown as the use
    lines = [
        line
        for line in run("code", "refs", "upload_file").stdout.splitlines()
        if "upload.py:" in line
    ]
    assert lines and all("(changed since indexed)" in line for line in lines), lines


def test_brackets_in_data_are_shown_as_written(run: Run, tmp_path: Path) -> None:
    """Tables, trees and messages print data, not rich markup: ``d[key]`` stayed ``d``."""
    root = tmp_path / "brackets"
    root.mkdir()
    (root / "k.py").write_text("def f(d):\n    return d[key]\n")
    (root / "g.md").write_text("# Guide [draft]\n\nSome text.\n")
    assert run("code", "index", str(root), "--project", "b").exit_code == 0
    assert "return d[key]" in run("code", "refs", "key").stdout
    assert "Guide [draft]" in run("code", "outline", "g.md").stdout
    run("events", "log", "[shared a photo] of the [red]kiln[/red]")
    listed = run("events", "list").stdout
    assert "[shared a photo]" in listed and "[red]kiln[/red]" in listed


def test_code_watch_once(run: Run, repo: Path) -> None:
    result = run("code", "watch", str(repo), "--once")
    assert result.exit_code == 0, result.output
    assert "1 indexed" in result.stdout


def test_code_bad_input(run: Run, tmp_path: Path) -> None:
    run("init")
    assert run("code", "index", str(tmp_path / "missing")).exit_code == 2
    unknown = run("code", "rm", "nope")
    assert unknown.exit_code == 1 and "Traceback" not in unknown.output
    bad_language = run("code", "index", str(tmp_path), "--language", "klingon")
    assert bad_language.exit_code == 1 and "klingon" in bad_language.stderr


# -- export / import ---------------------------------------------------------------------


def test_export_then_import_into_a_file_with_another_model(
    run: Run, notes: Path, repo: Path, tmp_path: Path
) -> None:
    run("kb", "ingest", str(notes))
    run("events", "log", "Deploy failed: disk full", "--subject", "deploy",
        "--at", "2026-01-02T03:04:05+00:00")  # fmt: skip
    run("code", "index", str(repo))
    dump = tmp_path / "dump.jsonl"
    exported = as_json(run("export", str(dump), "--json"))
    assert exported["counts"] == {"kb_document": 2, "event": 1, "code_project": 1}
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert lines[0]["type"] == "remembrances-export"
    assert not any("embedding" in json.dumps(line) for line in lines)

    other = tmp_path / "other.db"
    assert run("--embedder", "hash:32", "init", db=other).exit_code == 0
    imported = as_json(run("import", str(dump), "--json", db=other))
    assert imported["counts"] == exported["counts"]
    events = as_json(run("events", "list", "--json", db=other))
    assert events[0]["occurred_at"] == "2026-01-02T03:04:05+00:00"
    assert len(as_json(run("kb", "list", "--json", db=other))) == 2
    assert as_json(run("stats", "--json", db=other))["embedder"] == "hash:32"

    # importing twice changes nothing: documents replace, identical events are one
    as_json(run("import", str(dump), "--json", db=other))
    assert len(as_json(run("events", "list", "--json", db=other))) == 1


def test_export_to_stdout(run: Run, notes: Path) -> None:
    run("kb", "ingest", str(notes))
    result = run("export", "-")
    assert result.exit_code == 0
    types = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert types == ["remembrances-export", "kb_document", "kb_document"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("not json\n", "line 1"),
        ('{"type": "something-else"}\n', "not a remembrances export"),
        ('{"type": "remembrances-export", "version": 99}\n{"type": "event"}\n', "newer"),
        ('{"type": "remembrances-export", "version": 1}\n{"type": "event"}\n', "line 2"),
        ('{"type": "remembrances-export", "version": 1}\n[1, 2]\n', "line 2"),
    ],
)
def test_import_bad_files(run: Run, tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    result = run("import", str(bad))
    assert result.exit_code == 1, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_export_to_a_missing_folder_says_which_folder(run: Run, tmp_path: Path) -> None:
    run("init")
    target = tmp_path / "nowhere" / "x.jsonl"
    result = run("export", str(target))
    assert result.exit_code == 1
    assert f"cannot write {target}: the folder {target.parent} does not exist" in result.stderr
    assert "Errno" not in result.stderr


def test_import_of_a_non_utf8_file_names_the_line_and_byte(run: Run, tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.jsonl"
    data = (
        b'{"type": "remembrances-export", "version": 1}\n{"type": "event", "content": "caf\xe9"}\n'
    )
    latin1.write_bytes(data)
    result = run("import", str(latin1))
    assert result.exit_code == 1
    byte = data.index(b"\xe9") + 1  # counted from 1, in the whole file
    assert f"latin1.jsonl is not UTF-8 text (line 2, byte {byte} is 0xe9)" in result.stderr
    assert "an export file is UTF-8 JSON lines" in result.stderr
    assert "codec" not in result.stderr
    piped = run("import", "-", input=b"\xff\n")
    assert piped.exit_code == 1 and "stdin is not UTF-8 text (line 1, byte 1" in piped.stderr


# -- eval --------------------------------------------------------------------------------


def _beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    docs = {
        "d1": "Rollback: run make rollback to return to the previous release.",
        "d2": "The office VPN needs multi-factor authentication.",
        "d3": "Lunch is served at noon in the cafeteria.",
    }
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items())
    )
    queries = {"q1": "how to roll back a release", "q2": "VPN authentication"}
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return root


def test_eval_reports_each_mode(run: Run, tmp_path: Path) -> None:
    data = as_json(run("eval", str(_beir(tmp_path / "beir")), "--json"))
    assert data["documents"] == 3 and data["queries"] == 2
    assert set(data["metrics"]) == {"text", "vector", "hybrid"}
    assert data["metrics"]["text"]["ndcg"] == pytest.approx(1.0)
    human = run("eval", str(tmp_path / "beir"), "--mode", "text")
    assert human.exit_code == 0 and "nDCG@10" in human.stdout


def test_eval_bad_folder(run: Run, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("eval", str(empty))
    assert result.exit_code == 1 and "corpus" in result.stderr


def test_a_doc_comment_is_numbered_above_the_signature(run: Run, tmp_path: Path) -> None:
    root = tmp_path / "java"
    root.mkdir()
    (root / "UserService.java").write_text(
        "public class UserService {\n"
        "    /** Finds a user; returns null if absent. */\n"
        "    public User find(String id) {\n"
        "        return users.get(id);\n"
        "    }\n"
        "}\n"
    )
    assert run("code", "index", str(root), "--project", "j").exit_code == 0
    shown = [line.strip() for line in run("code", "symbol", "UserService.find").stdout.splitlines()]
    assert "2 // Finds a user; returns null if absent." in shown
    assert "3 public User find(String id)" in shown
