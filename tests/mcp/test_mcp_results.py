"""MCP results tell the truth about what happened and name things as a user knows them."""

from __future__ import annotations

from mcp import ClientSession

from .conftest import call, text_of
from .test_mcp_server import Drive


def test_deleting_a_missing_document_is_an_error_not_a_claim(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        await call(session, "kb_add_document", text="keep this one", source="keep.md")
        missing = await call(session, "kb_delete_document", source="tmp.md")
        assert missing.is_error
        assert "deleted tmp.md" not in text_of(missing)
        assert "no document 'tmp.md'" in text_of(missing)
        assert "nothing was deleted" in text_of(missing)
        gone = await call(session, "kb_delete_document", source="keep.md")
        assert not gone.is_error and gone.structured_content["deleted"] is True
        assert text_of(gone) == "deleted keep.md"

    drive(scenario)


def test_a_missing_document_names_its_collection_and_the_tool_to_list_with(
    drive: Drive,
) -> None:
    async def scenario(session: ClientSession) -> None:
        await call(
            session, "kb_add_document", text="rotate keys", source="n.md", collection="notes"
        )
        elsewhere = await call(session, "kb_get_document", source="n.md")
        assert elsewhere.is_error and "it is in collection 'notes'" in text_of(elsewhere)
        unknown = await call(session, "kb_get_document", source="zzz-unknown.md")
        assert "the kb_list_documents tool" in text_of(unknown)
        assert "remembrances kb list" not in text_of(unknown)

    drive(scenario)


def test_event_hits_in_search_memory_show_subject_and_time_not_the_id(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        for i in range(3):
            await call(session, "events_log", content=f"unrelated note {i}", subject=f"m{i}")
        await call(
            session,
            "events_log",
            content="deployed the payment service",
            subject="deploys",
            at="2026-11-01T09:00:00Z",
        )
        found = await call(session, "memory_search", query="payment service", kinds=["event"])
        assert not found.is_error
        first_line = text_of(found).splitlines()[0]
        assert "event: deploys · 2026-11-01 09:00 UTC" in first_line, first_line
        hit = found.structured_content["results"][0]
        assert "source" not in hit  # it was the event's internal id ("4")
        assert hit["subject"] == "deploys"
        assert hit["at"].startswith("2026-11-01T09:00:00")

    drive(scenario)
