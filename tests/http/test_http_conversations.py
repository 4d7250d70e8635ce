"""Conversations over HTTP and through the CLI's ``--url``: enrich scoped to a user or a
session, on a real server over a real file (hash embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from click.testing import CliRunner

import remembrances
from remembrances.cli import cli
from remembrances.http.client import RemoteMemory
from tests.days import yesterday_only_in

from .conftest import Server, ServerFactory

AT = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
ANA = [
    {"role": "user", "content": "My pottery class is on Thursdays."},
    {"role": "assistant", "content": "Which glaze will you use in the pottery class?"},
    {"role": "user", "content": "A blue glaze for the pottery mugs."},
]
BOB = [
    {"role": "user", "content": "My pottery class is on Mondays."},
    {"role": "user", "content": "A green glaze for the pottery teapot."},
]
PROMPT = "which day is the pottery class?"


def populate(db: Path) -> None:
    with remembrances.open(db, embedder="hash:64") as svc:
        svc.events.log_conversation(ANA, session="ana-1", user="ana", at=AT)
        svc.events.log_conversation(BOB, session="bob-1", user="bob", at=AT)


@pytest.fixture
def chats(serve: ServerFactory, tmp_path: Path) -> Iterator[Server]:
    db = tmp_path / "chats.db"
    populate(db)
    yield serve(db=db)


def enrich(http: httpx.Client, **body: object) -> str:
    answer = http.post("/v1/enrich", json={"prompt": PROMPT, **body})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["context"])


def test_enrich_is_scoped_to_a_user_or_a_session(chats: Server) -> None:
    with chats.client() as http:
        both = enrich(http)
        assert "Thursdays" in both and "Mondays" in both  # unscoped: the scope is what differs
        ana = enrich(http, user="ana")
        assert "Thursdays" in ana and "Mondays" not in ana and "green" not in ana
        bob = enrich(http, session="bob-1")
        assert "Mondays" in bob and "Thursdays" not in bob and "blue" not in bob
        assert enrich(http, user="ana", session="bob-1") == ""
        for bad, message in (
            (b'{"prompt": "x", "user": ""}', "user is empty"),
            (b'{"prompt": "x", "session": "' + b"s" * 100_000 + b'"}', "the limit is 256"),
            (b'{"prompt": "x", "user": "\\ud800"}', "user"),  # a lone surrogate, escaped
            (b'{"prompt": "x", "user": "\xff\xfe"}', "UTF-8"),  # not UTF-8 at all
            (b'{"prompt": "x", "user": 5}', "user"),
            (b'{"prompt": "x", "sesion": "ana-1"}', "sesion"),
        ):
            answer = http.post(
                "/v1/enrich", content=bad, headers={"Content-Type": "application/json"}
            )
            assert answer.status_code in (400, 422), (bad[:60], answer.text)
            assert message in answer.json()["message"], (bad[:60], answer.text)


def test_cli_enrich_scope_is_the_same_through_a_server(
    runner: CliRunner, chats: Server, tmp_path: Path
) -> None:
    local_db = tmp_path / "local.db"
    populate(local_db)
    for args in (("--user", "ana"), ("--session", "bob-1"), ("--user", "bob", "--json")):
        local = runner.invoke(cli, ["--db", str(local_db), "enrich", PROMPT, *args])
        remote = runner.invoke(cli, ["--url", chats.url, "enrich", PROMPT, *args])
        assert local.exit_code == remote.exit_code == 0, (local.output, remote.output)
        assert remote.stdout == local.stdout
        mine, theirs = ("Thursdays", "Mondays") if "ana" in args else ("Mondays", "Thursdays")
        assert mine in remote.stdout and theirs not in remote.stdout, remote.stdout
    for args in (("--user", " "), ("--session", "")):
        local = runner.invoke(cli, ["--db", str(local_db), "enrich", PROMPT, *args])
        remote = runner.invoke(cli, ["--url", chats.url, "enrich", PROMPT, *args])
        assert local.exit_code == remote.exit_code != 0
        assert "is empty" in local.stderr and remote.stderr == local.stderr


CHAT = [
    {"role": "user", "content": "I adopted a cat named Miso last week."},
    {"role": "assistant", "content": [{"type": "text", "text": "Congratulations! How is Miso?"}]},
    {"role": "user", "content": "She sleeps on my keyboard all day."},
]


def test_log_a_conversation_then_search_it_scoped_with_its_turns(serve: ServerFactory) -> None:
    server = serve()
    with server.client() as http:
        body = {"messages": CHAT, "session": "chat", "user": "alice", "at": "2026-11-20T18:00Z"}
        first = http.post("/v1/events/conversations", json=body)
        assert first.status_code == 200, first.text
        logged = first.json()
        assert (logged["session"], logged["user"], logged["added"]) == ("chat", "alice", 3)
        assert [e["position"] for e in logged["events"]] == [0, 1, 2]
        assert logged["events"][1]["subject"] == "assistant"
        again = http.post("/v1/events/conversations", json={**body, "messages": [*CHAT, {
            "role": "assistant", "content": "Cats pick the warmest spot."}]})  # fmt: skip
        assert (again.json()["added"], again.json()["already_stored"]) == (1, 3)
        http.post("/v1/events", json={"content": "She sleeps on the keyboard, said Bob."})

        found = http.post(
            "/v1/events/search",
            json={"query": "sleeps keyboard", "session": "chat", "window": 1, "limit": 1},
        ).json()
        assert [h["content"] for h in found] == [CHAT[2]["content"]]
        assert [t["position"] for t in found[0]["before"]] == [1]
        assert [t["position"] for t in found[0]["after"]] == [3]
        by_user = http.post("/v1/events/search", json={"query": "keyboard", "user": "alice"})
        assert {h["session"] for h in by_user.json()} == {"chat"}
        anyone = http.post("/v1/events/search", json={"query": "keyboard", "limit": 10})
        assert None in {h["session"] for h in anyone.json()}  # the scope kept Bob's event out
        listed = http.get("/v1/events", params={"session": "chat", "limit": 10}).json()
        assert sorted(e["position"] for e in listed) == [0, 1, 2, 3]
        assert http.get("/v1/events", params={"user": "bob"}).json() == []
        # a plain event can be a user's too: a search scoped to them finds it
        noted = http.post(
            "/v1/events", json={"content": "Alice is allergic to cats.", "user": "alice"}
        )
        assert noted.status_code == 200 and noted.json()["user"] == "alice"
        mine = http.post("/v1/events/search", json={"query": "allergic", "user": "alice"}).json()
        assert [h["content"] for h in mine][:1] == ["Alice is allergic to cats."]


def test_enrich_keeps_the_documents_to_the_collections_given(
    serve: ServerFactory, runner: CliRunner, tmp_path: Path
) -> None:
    db = tmp_path / "kb.db"
    with remembrances.open(db, embedder="hash:64") as svc:
        for user in ("ana", "bob"):
            svc.kb.add(f"{user} glazes pottery mugs blue", source="n.md", collection=user)
    server = serve(db=db)
    prompt = "which pottery mugs glazes blue?"
    with server.client() as http:
        assert "ana glazes" in enrich(http, prompt=prompt) and "bob glazes" in enrich(
            http, prompt=prompt
        )
        mine = enrich(http, prompt=prompt, collections=["bob"])
        assert "bob glazes" in mine and "ana glazes" not in mine
        bad = http.post("/v1/enrich", json={"prompt": prompt, "collections": "bob"})
        assert bad.status_code == 422  # a list, as the schema says
    for where in (["--db", str(db)], ["--url", server.url]):
        told = runner.invoke(cli, [*where, "enrich", prompt, "--collection", "ana"])
        assert told.exit_code == 0 and "ana glazes" in told.output, told.output
        assert "bob glazes" not in told.output


def test_forget_a_user_or_a_session_over_http_and_the_cli(chats: Server, runner: CliRunner) -> None:
    with chats.client() as http:
        first = http.get("/v1/events", params={"user": "ana", "limit": 10}).json()
        assert http.delete(f"/v1/events/{first[0]['id']}").is_success  # leaves a digest
        for body in ({}, {"user": "ana", "session": "ana-1"}):
            answer = http.post("/v1/events/forget", json=body)
            assert answer.status_code == 400 and "either session or user" in answer.text
        spaced = http.post("/v1/events/forget", json={"user": "ana "})
        assert spaced.status_code == 400 and "whitespace" in spaced.text
        assert http.post("/v1/events/forget", json={"user": "ana"}).json() == {"deleted": 2}
        assert http.get("/v1/events", params={"user": "ana"}).json() == []
        assert len(http.get("/v1/events", params={"user": "bob"}).json()) == 2
        assert enrich(http, user="ana") == ""
    with remembrances.open(chats.db, embedder="hash:64", read_only=True) as svc:
        with svc.store.snapshot() as tx:
            rows = tx.execute("SELECT user_id FROM removed_turns").fetchall()
        assert [r["user_id"] for r in rows] == []  # ana's digest went too
    told = runner.invoke(cli, ["--url", chats.url, "events", "forget", "--session", "bob-1"])
    assert told.exit_code == 0 and "forgot 2 event(s) of session 'bob-1'" in told.output
    neither = runner.invoke(cli, ["--url", chats.url, "events", "forget"])
    assert neither.exit_code == 2 and "--session or --user" in neither.output
    with chats.client() as http:
        assert http.get("/v1/events", params={"limit": 10}).json() == []


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"messages": [{"role": "user", "content": ""}], "session": "s"}, 400, "no text"),
        ({"messages": [{"who": "x", "said": "hi"}], "session": "s"}, 400, "role"),
        ({"messages": [{"role": "user", "content": "hi", "at": "soon"}], "session": "s"}, 400,
         "ISO 8601"),
        ({"messages": [{"role": "user", "content": "x" * 1_000_001}], "session": "s"}, 400,
         "characters"),
        ({"messages": [{"role": "user", "content": "hi"}], "session": ""}, 400, "session is empty"),
        ({"messages": [{"role": "user", "content": "fine"}, {"role": "user", "content": "\ud800"}],
          "session": "s"}, 400, "Unicode"),
        ({"messages": "hi", "session": "s"}, 422, "messages"),
        ({"messages": [], "session": "s", "extra": 1}, 422, "extra"),
        ({"messages": [{"role": "user", "content": "hi"}]}, 422, "session"),
    ],
)  # fmt: skip
def test_hostile_conversations_write_nothing(
    server: Server, body: dict[str, object], status: int, message: str
) -> None:
    import json

    with server.client() as http:
        before = http.get("/v1/events", params={"limit": 1000}).json()
        # Sent as raw JSON so a lone surrogate travels as the escape a client would send.
        raw = json.dumps(body).encode()
        answer = http.post(
            "/v1/events/conversations", content=raw, headers={"Content-Type": "application/json"}
        )
        assert answer.status_code == status, answer.text
        assert message in answer.json()["message"], answer.text
        assert http.get("/v1/events", params={"limit": 1000}).json() == before


@pytest.mark.parametrize(
    "body",
    [{"query": "x", "window": 21}, {"query": "x", "window": -1}, {"query": "x", "window": "one"},
     {"query": "x", "session": ""}, {"query": "x", "user": " "}, {"query": "x", "mode": "fuzzy"},
     {"query": "x", "min_score": "high"}, {"query": "x", "sesion": "a"}],
)  # fmt: skip
def test_hostile_event_searches_are_one_line_errors(
    server: Server, body: dict[str, object]
) -> None:
    with server.client() as http:
        answer = http.post("/v1/events/search", json=body)
    assert answer.status_code in (400, 422), answer.text
    assert answer.json()["error"] in ("InvalidInputError", "InvalidRequest")
    assert "\n" not in answer.json()["message"]


def test_cli_import_and_scoped_search_are_the_same_through_a_server(
    runner: CliRunner, serve: ServerFactory, tmp_path: Path
) -> None:
    import json

    server = serve()
    file = tmp_path / "chat.json"
    file.write_text(json.dumps(CHAT), encoding="utf-8")
    local_db = tmp_path / "local.db"
    for args in (
        ("events", "import", str(file), "--user", "alice", "--at", "2026-11-20T18:00:00Z"),
        ("events", "import", str(file), "--user", "alice", "--json"),
        ("events", "search", "keyboard", "--session", "chat", "--window", "1"),
        ("events", "search", "keyboard", "--user", "alice", "--window", "1", "--json"),
        ("events", "list", "--session", "chat"),
        ("events", "list", "--user", "bob", "--json"),
        ("events", "import", str(file), "--user", "bob"),  # the session is alice's: refused
    ):
        local = runner.invoke(cli, ["--db", str(local_db), *args])
        remote = runner.invoke(cli, ["--url", server.url, *args])
        assert local.exit_code == remote.exit_code, (args, local.output, remote.output)
        if "--json" in args and "search" in args:  # recorded_at differs between the files
            mine, theirs = json.loads(local.stdout), json.loads(remote.stdout)
            assert [h["content"] for h in mine] == [h["content"] for h in theirs] != []
            assert [len(h["before"]) for h in mine] == [len(h["before"]) for h in theirs]
        else:
            assert remote.stdout == local.stdout, args
            assert remote.stderr == local.stderr, args


def test_enrich_reads_yesterday_in_the_zone_given(serve: ServerFactory, tmp_path: Path) -> None:
    # The server's clock is the real one, and its zone UTC (the suite's).
    only_tokyo = yesterday_only_in(ZoneInfo("Asia/Tokyo"))
    only_utc = yesterday_only_in(UTC, ZoneInfo("Asia/Tokyo"))
    db = tmp_path / "days.db"
    with remembrances.open(db, embedder="hash:64") as svc:
        svc.events.log("Shipped the billing export", at=only_tokyo)
        svc.events.log("Fixed the flaky login test", at=only_utc)
    server = serve(db=db)
    with server.client() as http:
        answer = http.post("/v1/enrich", json={"prompt": "what happened yesterday?"})
        assert "flaky login" in answer.json()["context"]
        assert "billing export" not in answer.json()["context"]
        body = {"prompt": "what happened yesterday?", "tz": "Asia/Tokyo"}
        context = http.post("/v1/enrich", json=body).json()["context"]
        assert "billing export" in context and "flaky login" not in context
        answer = http.post("/v1/enrich", json={"prompt": "x", "tz": "Mars/Olympus"})
        assert answer.status_code == 400 and "Mars/Olympus" in answer.json()["message"]
    # The remote client sends a ZoneInfo by its name; a zone without one is refused.
    remote_memory = RemoteMemory(server.url)
    tokyo = remote_memory.enrich_context("what happened yesterday?", tz=ZoneInfo("Asia/Tokyo"))
    assert "billing export" in tokyo and "flaky login" not in tokyo
    with pytest.raises(remembrances.InvalidInputError, match="no IANA name"):
        remote_memory.enrich_context("x", tz=timezone(timedelta(hours=9)))
    # The CLI's --url sends --tz along.
    remote = CliRunner().invoke(
        cli, ["--url", server.url, "enrich", "what happened yesterday?", "--tz", "Asia/Tokyo"]
    )
    assert remote.exit_code == 0 and "billing export" in remote.stdout, remote.output
