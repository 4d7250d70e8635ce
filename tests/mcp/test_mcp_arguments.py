"""Bad arguments get one line a model can act on; unknown ones are refused; the version is set."""

from __future__ import annotations

from mcp import ClientSession

import remembrances

from .conftest import call, text_of
from .test_mcp_server import Drive


def _one_line(text: str) -> None:
    assert "\n" not in text, text
    assert "http" not in text and "pydantic" not in text.lower(), text


def test_argument_errors_are_one_line(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        too_many = await call(session, "kb_search", query="x", limit=1000)
        assert too_many.is_error
        _one_line(text_of(too_many))
        assert "limit" in text_of(too_many) and "100" in text_of(too_many)

        missing = await call(session, "memory_search")
        assert missing.is_error
        _one_line(text_of(missing))
        assert "query: Field required" in text_of(missing)

        typo = await call(session, "memory_search", query="x", kinds=["evnts"])
        assert typo.is_error
        _one_line(text_of(typo))
        assert "kinds.0" in text_of(typo) and "'event'" in text_of(typo)

        several = await call(session, "events_search", limit="many", since=5)
        assert several.is_error
        _one_line(text_of(several))
        assert "limit" in text_of(several) and "since" in text_of(several)

    drive(scenario)


def test_numbers_are_not_guessed_from_other_types(drive: Drive) -> None:
    """The schema says integer: ``true``, ``"3"`` and ``3.0`` are refused, not read as 1 or 3."""

    async def scenario(session: ClientSession) -> None:
        for guess in (True, "3", 3.0):
            wrong = await call(session, "kb_search", query="x", limit=guess)
            assert wrong.is_error and "limit" in text_of(wrong), guess
            _one_line(text_of(wrong))
        assert (await call(session, "kb_search", query="x", min_score="0.5")).is_error
        assert not (await call(session, "kb_search", query="x", limit=3, min_score=0)).is_error

    drive(scenario)


def test_unknown_arguments_are_refused_and_named(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        await call(session, "kb_add_document", text="alpha beta", source="a.md")
        wrong = await call(session, "kb_search", query="alpha", colection="notes")
        assert wrong.is_error
        _one_line(text_of(wrong))
        assert "'colection'" in text_of(wrong) and "collection" in text_of(wrong)
        right = await call(session, "kb_search", query="alpha", collection="default")
        assert not right.is_error and right.structured_content["count"] == 1

    drive(scenario)


def test_kinds_is_an_enum_in_the_schema_and_the_plural_works(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        kinds = tools["memory_search"].input_schema["properties"]["kinds"]
        assert "enum" in str(kinds) and "'event'" in str(kinds)
        await call(session, "events_log", content="deployed the payment service", subject="ops")
        plural = await call(session, "memory_search", query="payment", kinds=["events"])
        assert not plural.is_error
        assert [h["kind"] for h in plural.structured_content["results"]] == ["event"]
        # a fact saved for a user comes back in a search scoped to that user
        saved = await call(session, "events_log", content="Ana is allergic to peanuts.", user="ana")
        assert not saved.is_error, text_of(saved)
        scoped = await call(session, "events_search", query="allergic", user="ana")
        assert [h["content"] for h in scoped.structured_content["results"]] == [
            "Ana is allergic to peanuts."
        ]

    drive(scenario)


def test_the_server_reports_its_version(drive: Drive) -> None:
    async def scenario(session: ClientSession) -> None:
        info = (await session.initialize()).server_info
        assert info.name == "remembrances"
        assert info.version == remembrances.__version__ != ""

    drive(scenario)
