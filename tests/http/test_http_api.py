"""Every route over a real server and a real file: the same answers as the Python API."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import httpx

import remembrances

from .conftest import Server, ServerFactory

ROUTES = {
    ("get", "/health"), ("get", "/v1/stats"), ("post", "/v1/check"), ("post", "/v1/compact"), ("post", "/v1/search"),
    ("post", "/v1/enrich"), ("post", "/v1/kb/documents"), ("get", "/v1/kb/documents"),
    ("get", "/v1/kb/document"), ("delete", "/v1/kb/document"), ("post", "/v1/kb/ingest"),
    ("post", "/v1/kb/search"), ("post", "/v1/events"), ("get", "/v1/events"),
    ("post", "/v1/events/search"), ("delete", "/v1/events/{event_id}"),
    ("post", "/v1/events/prune"), ("post", "/v1/events/forget"), ("get", "/v1/events/subjects"), ("get", "/v1/events/sessions"), ("post", "/v1/code/index"),
    ("post", "/v1/code/search"), ("get", "/v1/code/symbols"), ("get", "/v1/code/outline"),
    ("get", "/v1/code/references"), ("get", "/v1/code/projects"),
    ("delete", "/v1/code/projects/{project}"), ("post", "/v1/events/conversations"),
    ("get", "/v1/kb/resolve"), ("get", "/v1/kb/source-of-file"), ("post", "/v1/code/backfill"),
    ("get", "/v1/code/stats"), ("post", "/v1/code/map"),
}  # fmt: skip


def ok(response: httpx.Response) -> object:
    assert response.status_code == 200, response.text
    return response.json()


def test_health_and_openapi_describe_every_route(http: httpx.Client) -> None:
    assert ok(http.get("/health")) == {"status": "ok", "version": "0.1.0"}
    spec = ok(http.get("/openapi.json"))
    assert isinstance(spec, dict)
    described = {(method, path) for path, item in spec["paths"].items() for method in item}
    assert described == ROUTES
    search = spec["paths"]["/v1/search"]["post"]
    assert "404" in search["responses"] and "requestBody" in search


def test_knowledge_base_round_trip(http: httpx.Client) -> None:
    added = ok(
        http.post(
            "/v1/kb/documents",
            json={
                "text": "# Deploys\n\nThe VPN needs MFA before a deploy to production.",
                "source": "it/vpn",
                "title": "VPN",
                "metadata": {"team": "ops"},
            },
        )
    )
    assert added["source"] == "it/vpn" and added["status"] == "added"
    hits = ok(http.post("/v1/kb/search", json={"query": "VPN MFA", "limit": 3}))
    assert isinstance(hits, list) and hits[0]["source"] == "it/vpn"
    assert "embedding" not in hits[0]
    scoped = {"query": "VPN MFA", "collection": ["default", "other"], "where": {"team": "ops"}}
    assert [h["source"] for h in ok(http.post("/v1/kb/search", json=scoped))] == ["it/vpn"]  # type: ignore[index]
    scoped["where"] = {"team": "dev"}
    assert ok(http.post("/v1/kb/search", json=scoped)) == []
    doc = ok(http.get("/v1/kb/document", params={"source": "it/vpn"}))
    assert isinstance(doc, dict)
    assert doc["title"] == "VPN" and "MFA" in doc["text"] and doc["metadata"]["team"] == "ops"
    listed = ok(http.get("/v1/kb/documents"))
    assert [d["source"] for d in listed] == ["it/vpn"]  # type: ignore[union-attr]
    assert ok(http.delete("/v1/kb/document", params={"source": "it/vpn"}))["deleted"] is True  # type: ignore[index]
    gone = http.get("/v1/kb/document", params={"source": "it/vpn"})
    assert gone.status_code == 404 and gone.json()["error"] == "NotFoundError"
    again = http.delete("/v1/kb/document", params={"source": "it/vpn"})
    assert again.status_code == 404


def test_events_round_trip(http: httpx.Client) -> None:
    logged = ok(
        http.post(
            "/v1/events",
            json={"content": "Alice fixed the upload retry bug", "subject": "uploads",
                  "at": "2026-11-20T15:00:00+00:00"},
        )
    )  # fmt: skip
    assert isinstance(logged, dict) and logged["subject"] == "uploads"
    ok(http.post("/v1/events", json={"content": "Old outage", "at": "2020-01-01T00:00:00Z"}))
    old_note = {"content": "Old note", "subject": "notes", "at": "2020-01-02T00:00:00Z"}
    ok(http.post("/v1/events", json=old_note))
    pages = [ok(http.get("/v1/events", params={"limit": 1, "offset": n})) for n in range(4)]
    assert [[e["content"] for e in page] for page in pages] == [  # type: ignore[union-attr]
        ["Alice fixed the upload retry bug"],
        ["Old note"],
        ["Old outage"],
        [],
    ]
    assert ok(
        http.post("/v1/events/prune", json={"older_than": "2021-01-01", "subject": "notes"})
    ) == {"deleted": 1}
    hits = ok(http.post("/v1/events/search", json={"query": "upload retry", "limit": 5}))
    assert hits[0]["content"] == "Alice fixed the upload retry bug"  # type: ignore[index]
    listed = ok(http.get("/v1/events", params={"subject": "uploads"}))
    assert [e["content"] for e in listed] == ["Alice fixed the upload retry bug"]  # type: ignore[union-attr]
    assert ok(http.get("/v1/events/subjects"))["uploads"] == 1  # type: ignore[index]
    assert ok(http.post("/v1/events/prune", json={"older_than": "2021-01-01T00:00:00Z"})) == {
        "deleted": 1
    }
    assert ok(http.delete(f"/v1/events/{logged['id']}")) == {"deleted": 1}
    missing = http.delete(f"/v1/events/{logged['id']}")
    assert missing.status_code == 404 and str(logged["id"]) in missing.json()["message"]


def test_code_round_trip(server: Server, http: httpx.Client) -> None:
    repo = server.root / "app"
    repo.mkdir(exist_ok=True)
    (repo / "upload.py").write_text(
        "class Uploader:\n"
        "    def upload_file(self, path):\n"
        '        """Send one file, retrying on failure."""\n'
        "        return retry(lambda: self.send(path))\n\n\n"
        "def retry(fn):\n    return fn()\n",
        encoding="utf-8",
    )
    report = ok(http.post("/v1/code/index", json={"path": str(repo), "project": "app"}))
    assert isinstance(report, dict) and report["files_indexed"] == 1
    hits = ok(http.post("/v1/code/search", json={"query": "upload file retry", "project": "app"}))
    assert any("upload.py" in str(h) for h in hits)  # type: ignore[union-attr]
    strict = {"query": "upload file retry", "min_score": 0.99}
    assert ok(http.post("/v1/code/search", json=strict)) == []  # hybrid scores are far lower
    words = ok(http.post("/v1/code/search", json={**strict, "mode": "text"}))
    assert words and all(h["score"] >= 0.99 for h in words)  # type: ignore[index,union-attr]
    symbols = ok(http.get("/v1/code/symbols", params={"name": "Uploader.upload_file"}))
    assert symbols[0]["qualified_name"] == "Uploader.upload_file"  # type: ignore[index]
    outline = ok(http.get("/v1/code/outline", params={"file": "upload.py", "project": "app"}))
    assert [s["name"] for s in outline] == ["Uploader", "retry"]  # type: ignore[union-attr]
    assert outline[0]["children"][0]["name"] == "upload_file"  # type: ignore[index]
    refs = ok(http.get("/v1/code/references", params={"name": "retry", "project": "app"}))
    assert len(refs) >= 2  # type: ignore[arg-type]
    one = {"name": "retry", "project": "app", "limit": 1}
    assert len(ok(http.get("/v1/code/references", params=one))) == 1  # type: ignore[arg-type]
    assert http.get("/v1/code/symbols", params={"name": "retry", "limit": 0}).status_code == 422
    assert [p["name"] for p in ok(http.get("/v1/code/projects"))] == ["app"]  # type: ignore[union-attr]
    assert ok(http.delete("/v1/code/projects/app")) == {"project": "app", "files": 1}
    assert ok(http.get("/v1/code/projects")) == []


def test_a_project_named_with_slashes_is_removed_through_its_url(
    server: Server, http: httpx.Client
) -> None:
    repo = server.root / "slashed"
    repo.mkdir(exist_ok=True)
    (repo / "lib.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    for project in ("acme/app", "acme/lib", "a b/ü/../x"):
        ok(http.post("/v1/code/index", json={"path": str(repo), "project": project}))
    # percent-encoded, as the CLI's client sends it, and with the slash as it is
    assert ok(http.delete("/v1/code/projects/acme%2Fapp")) == {"project": "acme/app", "files": 1}
    assert ok(http.delete("/v1/code/projects/acme/lib")) == {"project": "acme/lib", "files": 1}
    odd = "/v1/code/projects/a%20b%2F%C3%BC%2F..%2Fx"
    assert ok(http.delete(odd)) == {"project": "a b/ü/../x", "files": 1}
    gone = http.delete("/v1/code/projects/acme%2Fapp")  # the project's 404, not the route's
    assert gone.status_code == 404 and gone.json()["error"] == "NotFoundError", gone.text
    assert "acme/app" in gone.json()["message"]
    assert ok(http.get("/v1/code/projects")) == []


def test_search_enrich_stats_check(http: httpx.Client) -> None:
    ok(http.post("/v1/kb/documents", json={"text": "Rotate the API key every 90 days.",
                                           "source": "keys"}))  # fmt: skip
    hits = ok(http.post("/v1/search", json={"query": "rotate API key", "kinds": ["kb"]}))
    assert hits[0]["source"] == "keys" and hits[0]["kind"] == "kb"  # type: ignore[index]
    assert hits[0]["label"] == "keys"  # type: ignore[index]
    ok(http.post("/v1/events", json={"content": "rotated the API key", "subject": "ops",
                                     "at": "2026-11-01T09:00:00Z"}))  # fmt: skip
    for kinds in (["event"], ["events"]):  # the plural is what people type
        (event,) = ok(http.post("/v1/search", json={"query": "rotated", "kinds": kinds}))  # type: ignore[misc]
        assert event["ts"] == "2026-11-01T09:00:00+00:00"  # ISO text, as the CLI prints it
        assert event["label"] == "ops · 2026-11-01 09:00 UTC"
    for user, pet in (("alice", "Biscuit"), ("bob", "Pixel")):
        said = [{"role": "user", "content": f"my dog is called {pet}"}]
        body = {"messages": said, "session": f"{user}-1", "user": user}
        ok(http.post("/v1/events/conversations", json=body))
    query = {"query": "dog called", "kinds": ["event"]}
    both = ok(http.post("/v1/search", json=query))
    assert {h["text"] for h in both} >= {
        "user: my dog is called Biscuit",
        "user: my dog is called Pixel",
    }  # type: ignore[index]
    alices = ok(http.post("/v1/search", json={**query, "user": "alice"}))
    assert "user: my dog is called Pixel" not in {h["text"] for h in alices}  # type: ignore[index]
    assert "user: my dog is called Biscuit" in {h["text"] for h in alices}  # type: ignore[index]
    typo = http.post("/v1/search", json={"query": "x", "kinds": ["evnt"]})
    assert typo.status_code == 400 and "use one of" in typo.json()["message"]
    enriched = ok(http.post("/v1/enrich", json={"prompt": "how often do we rotate the API key?"}))
    assert isinstance(enriched, dict) and "90 days" in enriched["context"]
    stats = ok(http.get("/v1/stats"))
    assert isinstance(stats, dict) and stats["embedder"].startswith("hash")
    report = ok(http.post("/v1/check", json={}))
    assert isinstance(report, dict) and report["ok"] is True and report["chunks"] >= 1
    compacted = ok(http.post("/v1/compact"))
    assert isinstance(compacted, dict) and compacted["vectors_dropped"] >= 0
    assert compacted["bytes_after"] > 0


def test_compact_over_http_gives_the_python_record(server: Server, http: httpx.Client) -> None:
    from remembrances.http.client import RemoteMemory

    ok(http.post("/v1/kb/documents", json={"text": "Old runbook.", "source": "old"}))
    assert http.request("DELETE", "/v1/kb/document", params={"source": "old"}).status_code == 200
    report = RemoteMemory(server.url).compact()
    assert report.vectors_dropped == 1 and 0 < report.bytes_after <= report.bytes_before
    assert RemoteMemory(server.url).compact().vectors_dropped == 0


def test_ingest_reads_only_inside_the_allowed_roots(
    server: Server, http: httpx.Client, tmp_path: Path
) -> None:
    notes = server.root / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "a.md").write_text("# A\n\nInside the root.", encoding="utf-8")
    report = ok(http.post("/v1/kb/ingest", json={"path": "notes", "collection": "notes"}))
    assert len(report["added"]) == 1  # type: ignore[index]
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.md").write_text("the secret", encoding="utf-8")
    (server.root / "link").symlink_to(secret)
    for path in (str(secret), "notes/../../", "link", "/etc"):
        refused = http.post("/v1/kb/ingest", json={"path": path})
        assert refused.status_code == 400, (path, refused.text)
        assert "outside the allowed roots" in refused.json()["message"]
        refused = http.post("/v1/code/index", json={"path": path})
        assert refused.status_code == 400, (path, refused.text)
    missing = http.post("/v1/kb/ingest", json={"path": "nope"})
    assert missing.status_code == 404
    nul = http.post("/v1/kb/ingest", json={"path": "no\x00tes"})
    assert nul.status_code == 400 and nul.json()["error"] == "InvalidInputError"
    found = ok(http.post("/v1/search", json={"query": "secret"}))
    assert all("secret" not in h["text"] for h in found)  # type: ignore[union-attr]


def test_the_server_loads_the_vector_index_before_the_first_request(
    serve: ServerFactory, tmp_path: Path
) -> None:
    db = tmp_path / "existing.db"
    with remembrances.open(db, embedder="hash:64") as svc:
        svc.kb.add("Rotate the API key every 90 days.", source="keys")
    server = serve(db=db)
    with server.client() as http:
        first = ok(http.get("/v1/stats"))  # no search has run yet
    assert isinstance(first, dict) and first["index_bytes"] > 0


def test_the_app_mounts_inside_another_asgi_app(tmp_path: Path) -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from remembrances.http.app import build_app
    from remembrances.http.server import warm

    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as memory:
        memory.kb.add("Deploys run every Friday.", source="deploys.md")
        warm(memory)
        host = FastAPI()
        host.mount("/memory", build_app(memory, token="a-long-secret"))
        with TestClient(host) as client:
            assert client.get("/memory/health").status_code == 200
            asked = {"prompt": "when do deploys run?"}
            assert client.post("/memory/v1/enrich", json=asked).status_code == 401
            answer = client.post(
                "/memory/v1/enrich", json=asked, headers={"Authorization": "Bearer a-long-secret"}
            )
            assert answer.status_code == 200 and "Friday" in answer.json()["context"]


def test_a_server_stopped_by_sigterm_closes_the_memory(
    serve: ServerFactory, tmp_path: Path
) -> None:
    # A service stopped the usual way leaves the file whole: copied alone (no -wal), it
    # holds what was written. Before, the WAL stayed beside it and the copy was empty.
    server = serve()
    with server.client() as http:
        assert http.post("/v1/events", json={"content": "Rolled back 2.3"}).status_code == 200
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=30)
    assert not Path(f"{server.db}-wal").exists()
    copy = tmp_path / "copy.db"
    shutil.copyfile(server.db, copy)
    with remembrances.open(copy, embedder="hash:64") as memory:
        assert [e.content for e in memory.events.list()] == ["Rolled back 2.3"]


def test_watch_through_a_server_is_refused_before_it_says_it_watches(
    server: Server, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from remembrances.cli import cli

    for command in (["kb", "watch"], ["code", "watch"]):
        result = CliRunner().invoke(cli, ["--url", server.url, *command, str(tmp_path)])
        assert result.exit_code == 1, result.output
        assert "runs next to the files" in result.stderr
        assert "watching" not in result.stderr
