"""Through a server: documents keep their identity (``kb add FILE`` after an ingest
updates the ingested document), deferred code embedding (``code backfill``) and the
repository map (``code map``), each the same as on a local file. Real server, real files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from remembrances.cli import cli

from .conftest import Server, ServerFactory

APP = {
    "upload.py": "from .retry import retry\n\n\nclass Uploader:\n"
    "    def upload_file(self, path):\n        return retry(lambda: self.send(path))\n\n"
    "    def send(self, path):\n        return path\n",
    "retry.py": "def retry(fn, times=3):\n    for _ in range(times - 1):\n        try:\n"
    "            return fn()\n        except OSError:\n            pass\n    return fn()\n",
}


@pytest.fixture
def served(serve: ServerFactory, tmp_path: Path) -> Iterator[Server]:
    server = serve(db=tmp_path / "served.db")
    notes = server.root / "notes"
    (notes / "ops").mkdir(parents=True)
    (notes / "deploy.md").write_text("# Deploys\n\nThe VPN needs MFA first.\n", encoding="utf-8")
    (notes / "ops" / "deploy.md").write_text("# Ops deploys\n\nFridays only.\n", encoding="utf-8")
    (notes / "cli.md").write_text("# CLI\n\nUse --json for scripts.\n", encoding="utf-8")
    app = server.root / "app"
    app.mkdir()
    for name, text in APP.items():
        (app / name).write_text(text, encoding="utf-8")
    yield server


def both(runner: CliRunner, server: Server, db: Path, *args: str) -> tuple[str, str]:
    """The command on a local file and through the server: same exit code, same stderr."""
    local = runner.invoke(cli, ["--db", str(db), *args])
    remote = runner.invoke(cli, ["--url", server.url, *args])
    assert local.exit_code == remote.exit_code, (args, local.output, remote.output)
    assert remote.stderr == local.stderr, args
    return local.stdout, remote.stdout


def test_kb_add_after_ingest_updates_the_ingested_document(
    runner: CliRunner, served: Server, tmp_path: Path
) -> None:
    notes = served.root / "notes"
    local_db = tmp_path / "local.db"
    both(runner, served, local_db, "kb", "ingest", str(notes))
    (notes / "cli.md").write_text("# CLI\n\nUse --json for scripts; -q for quiet.\n", "utf-8")
    for args in (
        ("kb", "add", str(notes / "cli.md"), "--json"),
        ("kb", "get", "notes/cli.md"),  # a spelling of the file, resolved by the server
        ("kb", "get", "deploy.md"),  # two documents end with it: the error names both
    ):
        local, remote = both(runner, served, local_db, *args)
        assert remote == local, args
    local, remote = both(runner, served, local_db, "kb", "list", "--json")
    listed = [
        sorted((d["source"], d["chunks"]) for d in json.loads(out)) for out in (local, remote)
    ]
    assert listed[0] == listed[1] and [s for s, _ in listed[1]] == [
        "cli.md", "deploy.md", "ops/deploy.md"
    ]  # fmt: skip
    again = runner.invoke(cli, ["--url", served.url, "kb", "add", str(notes / "cli.md"), "--json"])
    assert json.loads(again.stdout)["source"] == "cli.md"


def test_kb_add_of_a_file_the_server_cannot_see_still_stores_its_text(
    runner: CliRunner, served: Server, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("Kept outside the server's roots.", encoding="utf-8")
    result = runner.invoke(cli, ["--url", served.url, "kb", "add", str(outside), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["source"] == str(outside)
    with served.client() as http:
        found = http.get("/v1/kb/source-of-file", params={"path": str(outside)}).json()
    assert found == {"source": None}  # its file was not recorded: the server cannot see it


def test_resolve_and_source_of_file_endpoints(served: Server) -> None:
    notes = served.root / "notes"
    with served.client() as http:
        ok = http.post("/v1/kb/ingest", json={"path": "notes"})
        assert ok.status_code == 200, ok.text
        resolve = "/v1/kb/resolve"
        assert http.get(resolve, params={"spelling": "cli.md"}).json() == {"source": "cli.md"}
        assert http.get(resolve, params={"spelling": "notes/cli.md"}).json()["source"] == "cli.md"
        ambiguous = http.get(resolve, params={"spelling": "deploy.md"})
        assert ambiguous.status_code == 200 and ambiguous.json()["source"] == "deploy.md"
        assert http.get(resolve, params={"spelling": "ops/deploy.md"}).json()["source"] == (
            "ops/deploy.md"
        )
        missing = http.get(resolve, params={"spelling": "nope.md"})
        assert missing.status_code == 404 and "nope.md" in missing.json()["message"]
        of_file = "/v1/kb/source-of-file"
        assert http.get(of_file, params={"path": str(notes / "ops" / "deploy.md")}).json() == {
            "source": "ops/deploy.md"
        }
        assert http.get(of_file, params={"path": str(notes / "gone.md")}).json() == {"source": None}
        for path, params in (
            (resolve, {"spelling": ""}),
            (resolve, {"spelling": "x" * 20_000}),
            (resolve, {"spelling": "a\x00b"}),
            (resolve, {"spelling": "cli.md", "collection": ""}),
            (resolve, {}),
            (of_file, {"path": ""}),
            (of_file, {"path": "a\x00b"}),
            (of_file, {"path": "x", "collection": "y" * 20_000}),
        ):
            answer = http.get(path, params=params)
            assert answer.status_code in (400, 404, 414, 422), (path, params, answer.text)
            if answer.status_code != 414:  # a URL too long for the server to read at all
                assert "\n" not in answer.json()["message"]


def test_code_backfill_and_map_through_a_server(
    runner: CliRunner, served: Server, tmp_path: Path
) -> None:
    app = served.root / "app"
    local_db = tmp_path / "local.db"
    for args in (("code", "index", str(app), "--project", "app", "--no-embed", "--json"),):
        local = runner.invoke(cli, ["--db", str(local_db), *args])
        remote = runner.invoke(cli, ["--url", served.url, *args])
        assert local.exit_code == remote.exit_code == 0, (local.output, remote.output)
        assert json.loads(remote.stdout)["pending_embeddings"] > 0
    for args in (
        ("code", "backfill", "--json"),
        ("code", "backfill", "--project", "app"),  # nothing left: 0 embedded
        ("code", "map", "app", "--tokens", "200"),
        ("code", "map", "app", "--focus", "retry.py", "--json"),
        ("code", "backfill", "--project", "nope"),
        ("code", "map", "nope"),
        ("code", "map", "app", "--tokens", "0"),
    ):
        local_out, remote_out = both(runner, served, local_db, *args)
        assert remote_out == local_out, args
    stats = runner.invoke(cli, ["--url", served.url, "stats", "--json"])
    assert json.loads(stats.stdout)["pending_embeddings"] == 0
    mapped = runner.invoke(cli, ["--url", served.url, "code", "map", "app"])
    assert "retry.py:" in mapped.stdout and "def retry(fn, times=3)" in mapped.stdout


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/code/backfill", {"project": ""}),
        ("/v1/code/backfill", {"project": "app", "limit": 0}),
        ("/v1/code/backfill", {"project": ["app"]}),
        ("/v1/code/map", {"project": "app", "budget_tokens": -5}),
        ("/v1/code/map", {"project": "app", "budget_tokens": 10**9}),
        ("/v1/code/map", {"project": "app", "focus": "x" * 100_000}),
        ("/v1/code/map", {"project": "app", "focus": ["\x00"]}),
        ("/v1/code/map", {"project": "app", "extra": True}),
        ("/v1/kb/documents", {"text": "x", "source": "s", "file": "a\x00b"}),
    ],
)
def test_hostile_bodies_are_one_line_errors(
    served: Server, path: str, body: dict[str, object]
) -> None:
    with served.client() as http:
        http.post("/v1/code/index", json={"path": "app", "project": "app"})
        answer = http.post(path, json=body)
    if path == "/v1/kb/documents":  # an unusable file name: the text is stored all the same
        assert answer.status_code == 200, answer.text
        return
    assert answer.status_code in (400, 404, 422), answer.text
    assert "\n" not in answer.json()["message"]


def test_openapi_describes_the_new_routes(served: Server) -> None:
    spec = httpx.get(served.url + "/openapi.json").json()
    for route in ("/v1/kb/resolve", "/v1/kb/source-of-file", "/v1/code/backfill",
                  "/v1/code/stats", "/v1/code/map", "/v1/events/conversations"):  # fmt: skip
        assert route in spec["paths"], route
