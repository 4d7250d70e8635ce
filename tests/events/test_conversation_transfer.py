"""Conversation turns through export/import and ``check --recover``: they stay turns
(session, position, speaker, role, user), and an import's events land all or none.
Real files, hash embedder."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import remembrances
from remembrances import RemembrancesService
from remembrances.cli import cli
from remembrances.errors import InvalidInputError
from remembrances.transfer import export_jsonl, import_jsonl

from ..conftest import FlakyEmbedder

AT = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
CHAT = [
    {"role": "user", "content": "I adopted a cat named Miso last week.", "name": "ana"},
    {"role": "assistant", "content": "Congratulations! How is Miso?"},
    {"speaker": "ana", "text": "She sleeps on my keyboard.", "caption": "a cat on a laptop"},
]
OTHER = [{"speaker": "bob", "text": "I run on Sundays."}, {"speaker": "cy", "text": "Where?"}]


def _fill(svc: RemembrancesService) -> None:
    svc.events.log_conversation(CHAT, session="s1", user="ana", at=AT, metadata={"app": "x"})
    svc.events.log_conversation(OTHER, session="s2", at=AT)
    svc.events.log("Deployed v2.3", subject="deploys", at=AT, user="ops")


def _turns(svc: RemembrancesService, session: str) -> list[tuple[Any, ...]]:
    return [
        (e.position, e.subject, e.role, e.user, e.content, e.metadata, e.occurred_at)
        for e in svc.events.turns(session)
    ]


def _export(svc: RemembrancesService) -> str:
    out = io.StringIO()
    export_jsonl(svc, out)
    return out.getvalue()


def test_export_then_import_keeps_turns_as_turns(location: str, tmp_path: Path) -> None:
    """From a SQLite file or a PostgreSQL memory into a SQLite file."""
    with remembrances.open(location, embedder="hash:64") as source:
        _fill(source)
        dump = _export(source)
        expected = {s: _turns(source, s) for s in ("s1", "s2")}
    with remembrances.open(tmp_path / "b.db", embedder="hash:64") as target:
        report = import_jsonl(target, io.StringIO(dump))
        assert report.counts["event"] == 6
        for session, turns in expected.items():
            assert _turns(target, session) == turns
        assert target.events.sessions(user="ana") == {"s1": 3}
        hit = target.events.search("keyboard", session="s1", window=1, limit=1)[0]
        assert hit.content == "She sleeps on my keyboard." and hit.before[0].position == 1
        assert target.events.search("laptop", user="ana", limit=1)  # the caption is indexed
        plain = target.events.list(subject="deploys")
        assert [(e.content, e.user, e.session) for e in plain] == [("Deployed v2.3", "ops", None)]
        # Importing the same export again adds nothing.
        import_jsonl(target, io.StringIO(dump))
        assert target.events.count() == 6


def _lines(*records: dict[str, Any]) -> io.StringIO:
    header = {"type": "remembrances-export", "version": 1}
    return io.StringIO("\n".join(json.dumps(r) for r in (header, *records)) + "\n")


def _turn(session: str, position: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "event", "subject": "ana", "content": text, "at": AT.isoformat(),
            "session": session, "position": position, "role": None, **extra}  # fmt: skip


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ((_turn("a", 0, "fine"), _turn("b", 0, "")), "has no text"),
        ((_turn("a", 0, "fine"), _turn("b", -1, "hi")), "needs a position"),
        ((_turn("a", 0, "fine"), _turn("b", "1", "hi")), "needs a position"),
        ((_turn("a", 0, "fine"), _turn("a", 0, "again")), "two turns at one position"),
        ((_turn("a", 0, "x", user="u"), _turn("a", 1, "y", user="v")), "one user"),
        ((_turn("a", 0, "fine"), _turn("", 0, "hi")), "session is empty"),
        ((_turn("a", 0, "fine"), _turn("b", 0, "hi", at="soon")), "ISO 8601"),
        ((_turn("a", 0, "fine"), _turn("b", 0, "x" * 1_000_001)), "characters"),
        ((_turn("a", 0, "fine"), _turn("b", 0, "\udcff")), "Unicode"),
        ((_turn("a", 0, "fine"), {"type": "event", "subject": "x"}), "no 'content'"),
        ((_turn("a", 0, "fine"), {"type": "event", "content": "x", "metadata": [1]}), "mapping"),
        ((_turn("a", 0, "fine"), {"type": "event", "content": "x", "sesion": "a"}), "unknown"),
        ((_turn("a", 0, "fine"), {"type": "event", "content": ""}), "empty"),
    ],
)  # fmt: skip
def test_a_bad_event_record_imports_no_event(
    tmp_path: Path, records: tuple[dict[str, Any], ...], message: str
) -> None:
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        svc.events.log("kept", subject="before")
        with pytest.raises(InvalidInputError, match=message):
            import_jsonl(svc, _lines(*records))
        assert [e.content for e in svc.events.list()] == ["kept"]
        assert svc.store.count() == 1 and svc.check().problems == []


def test_an_embedder_failing_half_way_takes_the_imported_turns_back(tmp_path: Path) -> None:
    records = (
        _turn("a", 0, "first session is fine"),
        _turn("b", 0, "this one FAILs to embed"),
        {"type": "event", "content": "plain", "subject": "x"},
    )
    path = tmp_path / "m.db"
    with remembrances.open(path, embedder=FlakyEmbedder(64)) as svc:
        svc.events.log_conversation([{"speaker": "ana", "text": "old turn"}], session="a")
        with pytest.raises(Exception, match="unavailable"):
            import_jsonl(svc, _lines(*records))
        assert [e.content for e in svc.events.list()] == ["old turn"]
        assert svc.store.count() == 1 and svc.check().problems == []


def test_importing_a_session_owned_by_another_user_imports_nothing(tmp_path: Path) -> None:
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        svc.events.log_conversation([{"speaker": "x", "text": "mine"}], session="b", user="u")
        records = (_turn("a", 0, "fine"), _turn("b", 0, "theirs", user="v"))
        with pytest.raises(InvalidInputError, match="already belongs to user 'u'"):
            import_jsonl(svc, _lines(*records))
        assert [e.content for e in svc.events.list()] == ["mine"]


def test_a_session_of_another_user_stops_the_import_at_its_line(tmp_path: Path) -> None:
    """The message says what was stored: the document before the line, no event, and
    nothing after it (the code project)."""
    code = tmp_path / "proj"
    code.mkdir()
    (code / "a.py").write_text("def hello():\n    return 1\n")
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        svc.events.log_conversation([{"speaker": "x", "text": "mine"}], session="b")
        records = (
            {"type": "kb_document", "source": "keys", "text": "Rotate keys every 90 days."},
            {"type": "event", "subject": "ops", "content": "Rolled back 2.3"},
            _turn("b", 0, "theirs", user="v"),
            {"type": "code_project", "name": "proj", "root": str(code)},
        )
        with pytest.raises(InvalidInputError) as error:
            import_jsonl(svc, _lines(*records))
        assert str(error.value).startswith(
            "line 4: session 'b' already belongs to no user in this memory, not user 'v'; "
            "no event of this import was stored (the import stopped there: the records "
            "before it were stored, except events"
        )
        assert [d.source for d in svc.kb.list()] == ["keys"]
        assert [e.content for e in svc.events.list()] == ["mine"]
        assert svc.code.projects() == []


def test_an_event_error_found_at_the_end_says_the_other_records_were_stored(
    tmp_path: Path,
) -> None:
    """Two turns at one position is found when the events are written, last: by then
    every other record is stored, the one after it too, and the message says so."""
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        records = (
            _turn("a", 0, "fine"),
            {"type": "kb_document", "source": "after.md", "text": "Stored all the same."},
            _turn("a", 0, "again"),
        )
        with pytest.raises(InvalidInputError) as error:
            import_jsonl(svc, _lines(*records))
        assert "two turns at one position" in str(error.value)
        assert "every record but the events was stored" in str(error.value)
        assert [d.source for d in svc.kb.list()] == ["after.md"] and svc.events.list() == []


def test_recover_indexes_lost_turns_as_turns(tmp_path: Path) -> None:
    source = tmp_path / "lost.db"
    with remembrances.open(source, embedder="hash:64") as svc:
        _fill(svc)
        svc.events.log_conversation([{"speaker": "ana", "text": "forget this"}], session="s3")
        svc.events.delete(svc.events.turns("s3")[0].id)
        expected = {s: _turns(svc, s) for s in ("s1", "s2")}
        ids = {e.id for s in ("s1", "s2") for e in svc.events.turns(s)}
        with svc.store.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE kind = 'event'")  # as if on a damaged page
    out = tmp_path / "saved.db"
    result = CliRunner().invoke(cli, ["--db", str(source), "check", "--recover", str(out)])
    assert result.exit_code == 0, result.output
    with remembrances.open(out) as svc:
        assert svc.check().problems == []
        for session, turns in expected.items():
            assert _turns(svc, session) == turns
        assert {e.id for s in ("s1", "s2") for e in svc.events.turns(s)} == ids  # same ids
        hit = svc.events.search("keyboard", session="s1", window=1, limit=1)[0]
        assert hit.content == "She sleeps on my keyboard." and hit.before[0].position == 1
        assert {e.session for e in svc.events.search("Sundays", user="ana", limit=9)} == {"s1"}
        assert svc.events.search("Sundays", session="s2", limit=1)[0].content == OTHER[0]["text"]
        assert svc.events.search("deployed", user="ops", limit=1)[0].content == "Deployed v2.3"
        # a deleted turn stays deleted: its digest was saved too
        again = [{"speaker": "ana", "text": "forget this"}]
        assert svc.events.log_conversation(again, session="s3").added == []
