"""``events import`` and ``eval`` on conversations, through the CLI on a real file."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Run, as_json

CHAT = [
    {"role": "user", "content": "I adopted a cat named Miso last week."},
    {"role": "assistant", "content": [{"type": "text", "text": "Congratulations! How is Miso?"}]},
    {"role": "user", "content": "She sleeps on my keyboard all day."},
]


def test_import_a_json_transcript_then_again(run: Run, tmp_path: Path) -> None:
    file = tmp_path / "chat.json"
    file.write_text(json.dumps(CHAT), encoding="utf-8")
    first = as_json(run("events", "import", str(file), "--user", "alice", "--json"))
    assert first["added"] == 3 and first["sessions"][0]["session"] == "chat"
    again = as_json(run("events", "import", str(file), "--user", "alice", "--json"))
    assert (again["added"], again["already_stored"]) == (0, 3)
    hits = as_json(
        run("events", "search", "keyboard", "--session", "chat", "--window", "1", "--json")
    )
    assert hits[0]["content"] == CHAT[2]["content"]
    assert [t["position"] for t in hits[0]["before"]] == [1]
    human = run("events", "search", "keyboard", "--user", "alice", "--window", "1", "-n", "1")
    assert human.exit_code == 0 and "Congratulations" in human.stdout
    assert as_json(run("events", "list", "--user", "bob", "--json")) == []
    # the conversations are listed from a terminal too, per user
    assert as_json(run("events", "sessions", "--json")) == {"chat": 3}
    assert as_json(run("events", "sessions", "--user", "bob", "--json")) == {}
    assert "chat" in run("events", "sessions", "--user", "alice").stdout
    # two neighbouring hits: each turn is one row (a hit is not repeated as context)
    both = run("events", "search", "Miso", "--user", "alice", "--window", "1", "-n", "3")
    assert both.stdout.count("Congratulations") == 1 and both.stdout.count("adopted") == 1


def test_import_jsonl_sessions(run: Run, tmp_path: Path) -> None:
    file = tmp_path / "log.jsonl"
    lines = [
        {"session": "a", "speaker": "Ann", "text": "We moved to Lisbon."},
        {"session": "b", "speaker": "Ben", "text": "I run on Sundays."},
        {"session": "a", "speaker": "Cy", "text": "How is Lisbon?"},
    ]
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    report = as_json(run("events", "import", str(file), "--json"))
    assert {s["session"]: s["added"] for s in report["sessions"]} == {"a": 2, "b": 1}


def test_a_bad_transcript_writes_nothing(run: Run, tmp_path: Path) -> None:
    run("init")
    file = tmp_path / "bad.jsonl"
    file.write_text(
        json.dumps({"session": "a", "speaker": "Ann", "text": "fine"})
        + "\n"
        + json.dumps({"session": "b", "speaker": "Ben", "text": ""})
        + "\n",
        encoding="utf-8",
    )
    bad = run("events", "import", str(file))
    assert bad.exit_code == 1 and "no text" in bad.stderr and "Traceback" not in bad.output
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "not UTF-8" in run("events", "import", str(binary)).stderr
    shapeless = tmp_path / "odd.json"
    shapeless.write_text(json.dumps([{"from": "x", "body": "y"}]), encoding="utf-8")
    assert "needs 'role' and 'content'" in run("events", "import", str(shapeless)).stderr
    assert as_json(run("events", "list", "--json")) == []


def test_eval_reads_conversations_and_questions(run: Run, tmp_path: Path) -> None:
    file = tmp_path / "set.jsonl"
    rows = [
        {"type": "message", "session": "s1", "id": "m1", "speaker": "Ann", "text": "My dog Rex is a beagle."},
        {"type": "message", "session": "s1", "id": "m2", "speaker": "Ben", "text": "I bake sourdough bread."},
        {"type": "message", "session": "s2", "id": "m3", "speaker": "Ann", "text": "Rex chased a squirrel."},
        {"type": "question", "question": "What breed is Ann's dog Rex?", "evidence": ["m1"]},
        {"type": "question", "question": "What bread does Ben bake?", "evidence": ["m2"]},
    ]  # fmt: skip
    file.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = as_json(run("eval", str(file), "-k", "1", "--json"))
    assert (result["conversations"], result["turns"], result["questions"]) == (1, 3, 2)
    assert result["methods"]["bm25"]["recall"]["1"] == 1.0
    assert result["methods"]["events.search"]["questions_found"] == 2
    assert result["enrich_found"] is not None and result["enrich_kept"] is not None
    human = run("eval", str(file), "--no-enrich")
    assert human.exit_code == 0 and "events.search" in human.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"type": "question", "question": "x"}), encoding="utf-8")
    failed = run("eval", str(bad))
    assert failed.exit_code == 1 and "evidence" in failed.stderr


def test_an_import_refused_in_a_later_session_keeps_none_of_the_earlier_ones(
    run: Run, tmp_path: Path
) -> None:
    owned = tmp_path / "b.json"
    owned.write_text(json.dumps([{"speaker": "Ben", "text": "I run on Sundays."}]), "utf-8")
    assert run("events", "import", str(owned), "--user", "bob").exit_code == 0
    file = tmp_path / "two.jsonl"
    lines = [  # session "a" is new; session "b" belongs to bob, and this file is alice's
        {"session": "a", "speaker": "Ann", "text": "We moved to Lisbon."},
        {"session": "b", "speaker": "Ann", "text": "Hello Ben."},
    ]
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    refused = run("events", "import", str(file), "--user", "alice")
    assert refused.exit_code == 1 and "belongs to another user" in refused.stderr
    assert as_json(run("events", "list", "--session", "a", "--json")) == []
    assert len(as_json(run("events", "list", "--json"))) == 1  # bob's turn only
