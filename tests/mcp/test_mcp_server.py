"""The MCP server over stdio: tools, results, tool errors, path refusal."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from mcp import ClientSession

from tests.days import yesterday_only_in

from .conftest import call, text_of

TOOLS = {
    "kb_add_document", "kb_ingest_path", "kb_search", "kb_get_document", "kb_delete_document",
    "kb_list_documents",
    "events_log", "events_search", "events_log_conversation",
    "code_index_project", "code_search", "code_find_symbol", "code_outline", "code_references",
    "code_projects", "code_repo_map",
    "memory_search", "memory_enrich_context", "memory_stats",
}  # fmt: skip
#: The names before issue 17, kept one release as aliases.
OLD_NAMES = {
    "save_event": "events_log", "search_events": "events_search",
    "log_conversation": "events_log_conversation", "search_memory": "memory_search",
    "enrich_context": "memory_enrich_context",
}  # fmt: skip

Drive = Callable[..., None]


def test_lists_every_tool_with_a_schema_and_a_description(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS | set(OLD_NAMES)
        assert all(re.fullmatch(r"(kb|events|code|memory)_[a-z_]+", name) for name in TOOLS)
        for old, new in OLD_NAMES.items():
            assert tools[old].input_schema == tools[new].input_schema
            assert tools[old].annotations == tools[new].annotations
            assert (tools[old].description or "").startswith(f"Deprecated alias of {new}")
        for tool in tools.values():
            assert tool.description and len(tool.description) > 20, tool.name
            assert tool.input_schema["type"] == "object"
        assert tools["kb_search"].input_schema["required"] == ["query"]
        assert tools["kb_ingest_path"].input_schema["required"] == ["path"]
        assert tools["kb_search"].annotations.read_only_hint is True
        assert tools["kb_delete_document"].annotations.destructive_hint is True

    drive(scenario)


def test_knowledge_base_tools(drive: Drive, workspace: Path) -> None:
    notes = workspace / "notes"
    notes.mkdir()
    (notes / "vpn.md").write_text("# VPN\n\nThe office VPN needs MFA since March.\n")
    (notes / "blob.md").write_bytes(b"\xff\xfe\x00\x00binary")

    async def scenario(session: ClientSession) -> None:
        added = await call(
            session,
            "kb_add_document",
            text="# Deploys\n\nWe deploy with `make ship` on Fridays.",
            source="runbook/deploy",
            title="Deploys",
            metadata={"team": "ops"},
        )
        assert not added.is_error, text_of(added)
        assert added.structured_content["status"] == "added"

        ingested = await call(session, "kb_ingest_path", path="notes")
        assert not ingested.is_error, text_of(ingested)
        assert ingested.structured_content["added"] == ["vpn.md"]
        assert ingested.structured_content["skipped"][0]["path"] == "blob.md"

        found = await call(session, "kb_search", query="how do we deploy?", limit=1)
        assert not found.is_error
        assert "make ship" in text_of(found)
        hit = found.structured_content["results"][0]
        assert hit["source"] == "runbook/deploy"
        assert "chunk_id" not in hit and "id" not in hit  # no internal ids

        doc = await call(session, "kb_get_document", source="runbook/deploy")
        assert "make ship" in doc.structured_content["text"]

        gone = await call(session, "kb_delete_document", source="runbook/deploy")
        assert not gone.is_error and gone.structured_content["deleted"] is True
        missing = await call(session, "kb_get_document", source="runbook/deploy")
        assert missing.is_error
        assert "no document" in text_of(missing)

    drive(scenario)


def test_search_memory_enrich_and_stats(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        empty = await call(session, "memory_enrich_context", prompt="what is the capital of Peru?")
        assert not empty.is_error
        assert empty.structured_content == {"context": ""}

        await call(
            session,
            "kb_add_document",
            text="To roll back a deploy run make rollback VERSION=previous.",
            source="rollback",
        )
        hits = await call(session, "memory_search", query="roll back deploy", kinds=["kb"])
        assert hits.structured_content["count"] >= 1
        assert hits.structured_content["results"][0]["source"] == "rollback"
        elsewhere = await call(session, "memory_search", query="roll back deploy",
                               collections=["other"])  # fmt: skip
        assert elsewhere.structured_content["count"] == 0
        timed = await call(session, "memory_search", query="roll back deploy", since="2020-01-01")
        assert "rollback" not in [h["source"] for h in timed.structured_content["results"]]

        context = await call(
            session,
            "memory_enrich_context",
            prompt="how do I roll back a deploy with make rollback?",
        )
        assert "make rollback" in context.structured_content["context"]

        stats = await call(session, "memory_stats")
        assert stats.structured_content["chunks_by_kind"] == {"kb": 1}
        assert stats.structured_content["embedder"] == "hash:64"
        assert "path" not in stats.structured_content

        for user, pet in (("alice", "Biscuit"), ("bob", "Pixel")):
            said = [{"role": "user", "content": f"my dog is called {pet}"}]
            await call(session, "events_log_conversation", messages=said, session=user, user=user)
        scoped = await call(session, "memory_search", query="dog called", user="alice")
        texts = {h["text"] for h in scoped.structured_content["results"]}
        assert "user: my dog is called Biscuit" in texts
        assert "user: my dog is called Pixel" not in texts

        # "yesterday" in the user's zone: an hour that is yesterday in Tokyo, not in UTC
        hour = yesterday_only_in(ZoneInfo("Asia/Tokyo"))
        await call(session, "events_log", content="Shipped the billing export", at=hour.isoformat())
        asked = {"prompt": "what happened yesterday?"}
        here = await call(session, "memory_enrich_context", **asked)
        assert "billing export" not in here.structured_content["context"]
        there = await call(session, "memory_enrich_context", **asked, tz="Asia/Tokyo")
        assert "billing export" in there.structured_content["context"]
        bad = await call(session, "memory_enrich_context", **asked, tz="Mars/Olympus")
        assert bad.is_error and "unknown time zone" in text_of(bad)

    drive(scenario)


def test_code_tools(drive: Drive, workspace: Path) -> None:
    repo = workspace / "app"
    repo.mkdir()
    (repo / "upload.py").write_text(
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

    async def scenario(session: ClientSession) -> None:
        report = await call(session, "code_index_project", path="app")
        assert not report.is_error, text_of(report)
        assert report.structured_content["files_indexed"] == 1

        hits = await call(session, "code_search", query="retry failed uploads", project="app")
        top = hits.structured_content["results"][0]
        assert top["qualified_name"] == "Uploader.upload_file"
        assert "upload.py:4-6" in text_of(hits)
        assert "symbol_id" not in top and "start_byte" not in top
        scoped = await call(
            session, "memory_enrich_context", prompt="retry failed uploads", project="app"
        )
        assert "upload_file" in scoped.structured_content["context"]
        unknown = await call(session, "memory_enrich_context", prompt="uploads", project="nope")
        assert unknown.is_error and "'app'" in text_of(unknown)
        words = await call(session, "code_search", query="uploads", mode="text", min_score=0.5)
        found = words.structured_content["results"]
        assert found and all(h["score"] >= 0.5 for h in found)
        strict = await call(session, "code_search", query="retry failed uploads", min_score=0.99)
        assert strict.structured_content["results"] == []

        memory = await call(session, "memory_search", query="retry failed uploads", kinds=["code"])
        assert "upload.py:4-6" in text_of(memory)
        assert "· python" not in text_of(memory) and "def upload_file" in text_of(memory)

        symbol = await call(session, "code_find_symbol", name="Uploader.upload_file")
        assert symbol.structured_content["results"][0]["kind"] == "method"

        outline = await call(session, "code_outline", file="upload.py", project="app")
        assert "class Uploader" in text_of(outline)
        assert "  method Uploader.send" in text_of(outline)

        refs = await call(session, "code_references", name="upload_file", project="app")
        lines = sorted(r["line"] for r in refs.structured_content["results"])
        assert lines == [4, 13]
        assert "there may be more" not in text_of(refs)
        one = await call(session, "code_references", name="upload_file", limit=1)
        assert one.structured_content["count"] == 1
        assert "(the first 1 places; there may be more" in text_of(one)

        projects = await call(session, "code_projects")
        assert [p["name"] for p in projects.structured_content["projects"]] == ["app"]

    drive(scenario)


def test_paths_outside_the_allowed_roots_are_refused(
    drive: Drive, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secrets"
    outside.mkdir()
    (outside / "key.md").write_text("the secret key is hunter2")
    os.symlink(outside, workspace / "link")

    async def scenario(session: ClientSession) -> None:
        for path in ("../secrets", str(outside), "link", "link/key.md", "/etc"):
            for tool in ("kb_ingest_path", "code_index_project"):
                result = await call(session, tool, path=path)
                assert result.is_error, (tool, path)
                assert "outside the allowed roots" in text_of(result), text_of(result)
        missing = await call(session, "kb_ingest_path", path="nope")
        assert missing.is_error and "does not exist" in text_of(missing)
        stats = await call(session, "memory_stats")
        assert stats.structured_content["chunks"] == 0  # nothing was read

    drive(scenario)


def test_allow_root_widens_the_allow_list(drive: Drive, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "note.md").write_text("# Note\n\nAllowed elsewhere.\n")

    async def scenario(session: ClientSession) -> None:
        result = await call(session, "kb_ingest_path", path=str(other))
        assert not result.is_error, text_of(result)
        assert result.structured_content["added"] == ["note.md"]

    drive(scenario, "--allow-root", str(other))


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("kb_add_document", {"text": "   ", "source": "x"}, "empty"),
        ("kb_add_document", {"text": "ok", "source": "x", "metadata": "not a mapping"}, "metadata"),
        ("events_log", {"content": "x", "at": "last tuesday"}, ""),
        ("kb_search", {"query": "x", "limit": 0}, "limit"),
        ("kb_search", {"query": "x" * 200_000}, "limit"),
        ("memory_search", {"query": "x", "mode": "sideways"}, "mode"),
        ("kb_get_document", {"source": "missing"}, "no document"),
        ("code_outline", {"file": "nope.py"}, ""),
        ("nonexistent_tool", {}, "nonexistent_tool"),
    ],
)
def test_bad_calls_are_tool_errors_and_the_server_keeps_running(
    drive: Drive, tool: str, arguments: dict[str, object], message: str
) -> None:
    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool(tool, arguments)
        assert result.is_error, text_of(result)
        assert message.lower() in text_of(result).lower(), text_of(result)
        stats = await call(session, "memory_stats")  # still alive
        assert not stats.is_error

    drive(scenario)


def test_hostile_queries_are_not_errors(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        await call(session, "kb_add_document", text='Quotes "and" (parens) AND stuff', source="q")
        for query in ['"unbalanced', "AND OR NOT", "NEAR(a b", "col:*", "🙂'\\", "?"]:
            for tool in ("kb_search", "memory_search", "code_search"):
                result = await call(session, tool, query=query)
                assert not result.is_error, (tool, query, text_of(result))

    drive(scenario)


def test_event_tools(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        saved = await call(
            session,
            "events_log",
            content="Deploy failed: disk full on web-2",
            subject="deploy",
            at="2026-11-01T10:00:00+01:00",
            metadata={"host": "web-2"},
        )
        assert not saved.is_error, text_of(saved)
        assert saved.structured_content["occurred_at"] == "2026-11-01T09:00:00+00:00"
        assert "id" not in saved.structured_content
        await call(session, "events_log", content="Upgraded the database", subject="db")

        found = await call(session, "events_search", query="deploy disk full")
        assert found.structured_content["results"][0]["subject"] == "deploy"
        assert "deploy" in text_of(found) and "2026-11-01 09:00 UTC" in text_of(found)

        window = await call(
            session, "events_search", since="2026-10-31T00:00:00Z", until="2026-11-02T00:00:00Z"
        )
        assert [e["subject"] for e in window.structured_content["results"]] == ["deploy"]

        by_subject = await call(session, "events_search", subject="db")
        assert [e["content"] for e in by_subject.structured_content["results"]] == [
            "Upgraded the database"
        ]
        none = await call(session, "events_search", query="deploy", last="1h", subject="deploy")
        assert none.structured_content["count"] == 0
        assert "No matching events" in text_of(none)

        bad = await call(session, "events_search", last="forever")
        assert bad.is_error and "duration" in text_of(bad)

        words = await call(session, "events_search", query="database", mode="text", recency="3d")
        assert [e["content"] for e in words.structured_content["results"]] == [
            "Upgraded the database"
        ]
        strict = await call(session, "events_search", query="deploy disk full", min_score=1.0)
        assert strict.structured_content["count"] == 0
        wrong = await call(session, "events_search", query="x", mode="fuzzy")
        assert wrong.is_error

    drive(scenario)


def test_conversation_tool(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        messages = [
            {"role": "user", "content": "I signed up for a pottery class."},
            {"role": "assistant", "content": [{"type": "text", "text": "What will you make?"}]},
            {"role": "user", "content": "A blue plate."},
        ]
        logged = await call(session, "events_log_conversation", messages=messages,
                            session="chat-1", user="mel", metadata={"app": "pottery"})  # fmt: skip
        assert not logged.is_error, text_of(logged)
        assert logged.structured_content["added"] == 3 and "3 turn(s) added" in text_of(logged)
        turns = logged.structured_content["events"]
        assert [t["metadata"]["app"] for t in turns] == ["pottery"] * 3
        again = await call(
            session, "events_log_conversation", messages=messages, session="chat-1", user="mel"
        )
        assert again.structured_content["added"] == 0
        assert again.structured_content["already_stored"] == 3

        found = await call(
            session, "events_search", query="blue plate", session="chat-1", window=1, limit=1
        )
        hit = found.structured_content["results"][0]
        assert hit["content"] == "A blue plate." and hit["session"] == "chat-1"
        assert [t["content"] for t in hit["before"]] == ["What will you make?"]
        assert "↑ assistant: What will you make?" in text_of(found)
        other = await call(session, "events_search", query="blue plate", user="someone-else")
        assert other.structured_content["count"] == 0

        bad = await call(
            session,
            "events_log_conversation",
            messages=[{"role": "user", "content": ""}],
            session="x",
        )
        assert bad.is_error and "no text" in text_of(bad)
        listed = await call(session, "events_search", session="x")
        assert listed.structured_content["count"] == 0

        prompt = "what did I make, a blue plate?"
        mine = await call(session, "memory_enrich_context", prompt=prompt, user="mel")
        assert "A blue plate." in mine.structured_content["context"]
        theirs = await call(session, "memory_enrich_context", prompt=prompt, user="someone-else")
        assert theirs.structured_content["context"] == ""
        elsewhere = await call(session, "memory_enrich_context", prompt=prompt, session="chat-2")
        assert elsewhere.structured_content["context"] == ""
        blank = await call(session, "memory_enrich_context", prompt=prompt, user=" ")
        assert blank.is_error and "user is empty" in text_of(blank)
        # what a lone surrogate becomes on the way in ("zed\ud800", "zed\udfff"): refused,
        # as Python and HTTP refuse the surrogate, not one user for both
        for tool, args in (
            ("memory_enrich_context", {"prompt": prompt, "user": "zed\ufffd"}),
            ("events_search", {"query": "plate", "session": "chat\ufffd"}),
            ("events_log", {"content": "x", "user": "zed\ufffd"}),
            ("events_log_conversation", {"messages": [{"role": "user", "content": "hi"}],
                                         "session": "s", "user": "zed\ufffd"}),
        ):  # fmt: skip
            refused = await call(session, tool, **args)
            assert refused.is_error and "U+FFFD" in text_of(refused), tool

        await call(session, "kb_add_document", text="Mel's kiln is booked for Friday.",
                   source="kiln.md", collection="user-mel")  # fmt: skip
        kiln = "when is my kiln booked?"
        mel = await call(session, "memory_enrich_context", prompt=kiln, collections=["user-mel"])
        assert "Friday" in mel.structured_content["context"]
        other = await call(session, "memory_enrich_context", prompt=kiln, collections=["user-x"])
        assert other.structured_content["context"] == ""
        empty = await call(session, "memory_enrich_context", prompt=kiln, collections=[])
        assert empty.is_error and "empty list" in text_of(empty)

    drive(scenario)


def test_old_tool_names_answer_as_the_new_ones(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        await call(session, "save_event", content="Deployed v2 to prod", subject="deploys",
                   at="2026-11-01T09:00:00Z")  # fmt: skip
        logged = await call(
            session, "log_conversation", messages=[{"role": "user", "content": "hi"}], session="s"
        )
        assert not logged.is_error and "1 turn(s) added" in text_of(logged)
        for old, new, arguments in (
            ("search_events", "events_search", {"query": "deployed"}),
            ("search_memory", "memory_search", {"query": "deployed prod"}),
            ("enrich_context", "memory_enrich_context", {"prompt": "when did we deploy v2?"}),
        ):
            before, after = (
                await call(session, old, **arguments),
                await call(session, new, **arguments),
            )
            assert not before.is_error and text_of(before) == text_of(after), old
            assert before.structured_content == after.structured_content
        found = await call(session, "events_search", query="deployed")
        assert "deploys · 2026-11-01 09:00 UTC" in text_of(found)
        refused = await call(session, "save_event", content="x", colour="red")
        assert refused.is_error and "save_event has no argument 'colour'" in text_of(refused)

    drive(scenario)
