"""The code_repo_map tool over a real server and a real index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcp import ClientSession

from tests.code.test_repo_map import FILES, write

from .conftest import call, text_of

Drive = Callable[..., None]


def test_repo_map_tool(drive: Drive, workspace: Path) -> None:
    write(workspace / "calls", FILES)

    async def scenario(session: ClientSession) -> None:
        report = await call(session, "code_index_project", path="calls")
        assert not report.is_error, text_of(report)

        ranked = await call(session, "code_repo_map", project="calls", budget_tokens=200)
        assert not ranked.is_error, text_of(ranked)
        assert text_of(ranked).startswith("core/clock.py:\n  def now() -> float")
        data = ranked.structured_content
        assert data["files"][0]["path"] == "core/clock.py"
        assert data["tokens"] <= 200 and data["budget_tokens"] == 200

        focused = await call(
            session, "code_repo_map", project="calls", focus=["Scheduler.next_run"]
        )
        assert focused.structured_content["focus_symbols"] == ["Scheduler.next_run"]
        assert text_of(focused).startswith("core/scheduler.py:")

        unknown = await call(session, "code_repo_map", project="calls", focus=["no_such_name"])
        assert unknown.is_error and "neither an indexed file nor a symbol" in text_of(unknown)
        too_small = await call(session, "code_repo_map", project="calls", budget_tokens=0)
        assert too_small.is_error

    drive(scenario)


def test_structured_results_hold_what_the_text_shows_and_no_ids(
    drive: Drive, workspace: Path
) -> None:
    write(workspace / "calls", FILES)

    async def scenario(session: ClientSession) -> None:
        await call(session, "code_index_project", path="calls")
        found = await call(session, "memory_search", query="seconds since the epoch", limit=1)
        hit = found.structured_content["results"][0]
        # the code, not the header the index embeds with it (path, kind, name, words)
        assert hit["text"].startswith("def now() -> float:"), hit["text"]
        assert "code_offset" not in hit["metadata"] and "terms:" not in hit["text"]
        logged = await call(
            session,
            "events_log_conversation",
            messages=[{"role": "user", "content": "hello"}],
            session="s1",
        )
        events = logged.structured_content["events"]
        assert events and not any("id" in event for event in events)
        # a user's own metadata key of that name on another kind cuts nothing
        await call(
            session,
            "kb_add_document",
            text="Pools hold 40 connections each.",
            source="pools.md",
            metadata={"code_offset": 6},
        )
        kb = await call(session, "memory_search", query="connections pools", kinds=["kb"])
        top = kb.structured_content["results"][0]
        assert top["text"] == "Pools hold 40 connections each."
        assert top["metadata"]["code_offset"] == 6
        assert "Pools hold 40" in text_of(kb)

    drive(scenario)


def test_references_in_a_changed_file_say_so_in_the_text(drive: Drive, workspace: Path) -> None:
    write(workspace / "calls", FILES)

    async def scenario(session: ClientSession) -> None:
        await call(session, "code_index_project", path="calls")
        clock = workspace / "calls" / "core" / "clock.py"
        clock.write_text('"""Added since."""\n' + clock.read_text())
        refs = await call(session, "code_references", name="now", project="calls")
        shown = [line for line in text_of(refs).splitlines() if line.startswith("   ")]
        changed = [r for r in refs.structured_content["results"] if r["stale"]]
        marked = sum("(changed since indexed)" in line for line in shown)
        assert changed and marked == len(changed), text_of(refs)

    drive(scenario)
