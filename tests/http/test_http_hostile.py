"""Hostile requests: each gets a status code and a one-line typed message, and loses nothing."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import REPO, Server, ServerFactory, free_port, start_server, stop


def refused(response: httpx.Response, status: int, error: str | None = None) -> str:
    assert response.status_code == status, response.text
    answer = response.json()
    assert set(answer) == {"error", "message"}
    assert "\n" not in answer["message"] and answer["message"].strip()
    if error is not None:
        assert answer["error"] == error, answer
    return str(answer["message"])


def test_bad_bodies_get_422_with_the_field_named(http: httpx.Client) -> None:
    message = refused(http.post("/v1/search", json={"query": 1, "limt": 3}), 422, "InvalidRequest")
    assert "query" in message and "limt" in message
    refused(http.post("/v1/search", json={"query": "x", "limit": 0}), 422)
    refused(http.post("/v1/search", json={"query": "x", "mode": "fuzzy"}), 422)
    for guess in (True, "1", 2.5):  # strict: not read as a number
        assert "limit" in refused(http.post("/v1/search", json={"query": "x", "limit": guess}), 422)
    assert "repair" in refused(http.post("/v1/check", json={"repair": "yes"}), 422)
    refused(http.post("/v1/search", content=b"{not json", headers={"content-type": "application/json"}), 400)  # fmt: skip
    refused(http.post("/v1/search", content=b'{"query": "\xff\xfe"}', headers={"content-type": "application/json"}), 400, "InvalidRequest")  # fmt: skip
    refused(http.get("/v1/nowhere"), 404, "NotFound")
    refused(http.put("/v1/search"), 405, "MethodNotAllowed")
    refused(http.post("/v1/kb/documents", content=b"\x00\x01binary"), 415)
    refused(http.delete("/v1/events/0"), 422)
    refused(http.delete("/v1/events/abc"), 422)
    refused(http.get("/v1/kb/document"), 422)  # source missing


SEND_JSON = "send one JSON object with 'Content-Type: application/json'"


def test_malformed_json_is_a_400_that_says_where_it_breaks(http: httpx.Client) -> None:
    for raw, where in (
        (b'{"query": ', "line 1 column 11"),  # cut short
        (b'{"query": "x",\n "limit": }', "line 2 column 11"),
        (b"{'query': 'x'}", "line 1 column 2"),  # Python, not JSON
        (b'{"query": "x"} trailing', "line 1 column 16"),
    ):
        response = http.post(
            "/v1/search", content=raw, headers={"content-type": "application/json"}
        )
        message = refused(response, 400, "InvalidRequest")
        assert message.startswith("the body is not valid JSON: ") and where in message, message
        assert message.endswith(SEND_JSON)
    # no body at all, where a route needs one
    for route in ("/v1/search", "/v1/enrich", "/v1/kb/documents"):
        response = http.post(route, content=b"", headers={"content-type": "application/json"})
        assert refused(response, 400, "InvalidRequest") == f"the body is empty; {SEND_JSON}"
    # well-formed JSON that does not match the schema is still the 422 naming the field
    wrong = http.post("/v1/search", content=b'{"query": 3}', headers={"content-type": "application/json"})  # fmt: skip
    assert refused(wrong, 422, "InvalidRequest") == "query: Input should be a valid string"
    refused(http.post("/v1/search", json=[1]), 422, "InvalidRequest")


def test_a_body_not_sent_as_json_is_a_415_that_names_the_header(http: httpx.Client) -> None:
    document = b'{"text": "Sent as a form.", "source": "form-sent"}'
    for content_type, sent in (
        ("application/x-www-form-urlencoded", "as 'application/x-www-form-urlencoded'"),  # curl -d
        ("text/plain", "as 'text/plain'"),
        (None, "without a Content-Type"),
    ):
        headers = {"content-type": content_type} if content_type else {}
        response = http.post("/v1/kb/documents", content=document, headers=headers)
        message = refused(response, 415, "InvalidRequest")
        assert message == f"the body was sent {sent}; {SEND_JSON}"
    refused(http.get("/v1/kb/document", params={"source": "form-sent"}), 404)  # nothing stored
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        headers = {"content-type": content_type}
        assert (
            http.post("/v1/search", content=b'{"query": "x"}', headers=headers).status_code == 200
        )


def test_library_errors_keep_their_type(http: httpx.Client) -> None:
    empty = http.post("/v1/kb/documents", json={"text": "", "source": "empty"})
    refused(empty, 400, "InvalidInputError")
    blank_source = http.post("/v1/kb/documents", json={"text": "x", "source": "  "})
    refused(blank_source, 400, "InvalidInputError")
    refused(http.post("/v1/events", json={"content": "x", "at": "not a time"}), 400, "InvalidInputError")  # fmt: skip
    refused(http.post("/v1/events/search", json={"last": "forever"}), 400, "InvalidInputError")
    refused(http.get("/v1/code/outline", params={"file": "nowhere.py"}), 404, "NotFoundError")
    assert http.get("/v1/kb/documents").json() == []  # nothing half-written


@pytest.mark.parametrize(
    "query", ['"unbalanced', "NEAR(a b", "a OR AND NOT b", "col:value*", "💥 \u202e", "x" * 5000]
)
def test_search_operators_and_odd_text_are_plain_words(http: httpx.Client, query: str) -> None:
    for path in ("/v1/search", "/v1/kb/search", "/v1/code/search", "/v1/events/search"):
        response = http.post(path, json={"query": query})
        assert response.status_code in (200, 400), response.text
        if response.status_code == 400:
            refused(response, 400, "InvalidInputError")
    enriched = http.post("/v1/enrich", json={"prompt": query})
    assert enriched.status_code == 200 and enriched.json()["prompt"] == query


def post_raw(http: httpx.Client, path: str, raw: str) -> httpx.Response:
    """A body sent as written: ``\\ud800`` stays a JSON escape for a lone surrogate."""
    return http.post(path, content=raw.encode(), headers={"content-type": "application/json"})


def test_a_lone_surrogate_escape_gets_a_documented_answer(http: httpx.Client) -> None:
    # enrich never fails on a hostile prompt: the prompt comes back as the CLI prints it
    enriched = post_raw(http, "/v1/enrich", '{"prompt": "deploy \\ud800"}')
    assert enriched.status_code == 200, enriched.text
    assert enriched.json() == {"prompt": "deploy \ufffd", "context": ""}
    for path, raw in (
        ("/v1/search", '{"query": "\\ud800"}'),
        ("/v1/kb/search", '{"query": "\\ud800"}'),
        ("/v1/events/search", '{"query": "\\ud800"}'),
        ("/v1/code/search", '{"query": "\\ud800"}'),
        ("/v1/events", '{"content": "\\ud800"}'),
        ("/v1/kb/documents", '{"text": "x", "source": "\\ud800"}'),
        ("/v1/enrich", '{"prompt": "x", "user": "\\ud800"}'),
    ):
        refused(post_raw(http, path, raw), 400, "InvalidInputError")


def test_errors_of_other_libraries_are_sent_as_documented_classes(http: httpx.Client) -> None:
    # pathspec refuses a lone backslash with its own ValueError subclass
    bad_glob = http.post("/v1/kb/ingest", json={"path": ".", "patterns": ["\\"]})
    refused(bad_glob, 400, "InvalidInputError")


def test_unknown_query_parameters_are_refused_like_unknown_body_fields(
    http: httpx.Client,
) -> None:
    message = refused(http.get("/v1/events", params={"page": 0, "limt": 1}), 422, "InvalidRequest")
    assert "'page', 'limt'" in message
    assert "subject, since, until, last, limit, session, user, offset" in message  # it takes
    assert http.get("/v1/events", params={"limit": 1}).status_code == 200
    for path in ("/v1/stats", "/v1/events/subjects", "/v1/code/projects", "/v1/kb/documents"):
        message = refused(http.get(path, params={"limt": 1}), 422, "InvalidRequest")
        assert "'limt'" in message
    misspelt = refused(http.get("/v1/kb/document", params={"source": "x", "colection": "y"}), 422)
    assert "'colection'" in misspelt and "source, collection" in misspelt
    refused(http.delete("/v1/events/1", params={"force": 1}), 422, "InvalidRequest")
    refused(http.post("/v1/search", params={"limit": 3}, json={"query": "x"}), 422)
    assert http.get("/health", params={"probe": 1}).status_code == 200


def test_a_parameter_or_field_given_twice_is_refused_not_the_last_one_taken(
    http: httpx.Client,
) -> None:
    """Behind a gateway that adds the caller's own ``user``, a last-one-wins reading
    of ``?user=chen&user=dara`` read dara's events."""
    log = {"messages": [{"role": "user", "content": "my locker code is 4417"}]}
    assert http.post(
        "/v1/events/conversations", json={**log, "session": "d1", "user": "dara"}
    ).is_success
    twice = refused(http.get("/v1/events?user=chen&user=dara"), 422, "InvalidRequest")
    assert "parameter 'user' given more than once" in twice
    refused(http.get("/v1/events?subject=a&subject=b&limit=1"), 422, "InvalidRequest")
    for route, raw in (
        ("/v1/enrich", b'{"prompt": "my locker code?", "user": "chen", "user": "dara"}'),
        ("/v1/events", b'{"content": "x", "metadata": {"a": 1, "a": 2}}'),  # nested too
    ):
        response = http.post(route, content=raw, headers={"content-type": "application/json"})
        message = refused(response, 422, "InvalidRequest")
        assert "given more than once in an object" in message and "4417" not in response.text
    assert http.get("/v1/events", params={"limit": 10}).json()[0]["content"] != "x"
    assert http.get("/v1/events?user=dara").json()[0]["content"] == "my locker code is 4417"
    same_value = b'{"prompt": "my locker code?", "user": "dara"}'  # one of each: answered
    answer = http.post(
        "/v1/enrich", content=same_value, headers={"content-type": "application/json"}
    )
    assert "4417" in answer.json()["context"]


@pytest.fixture
def small_server(serve: ServerFactory) -> Server:
    return serve("--max-body-bytes", "2048")


def test_request_size_is_capped_before_parsing(small_server: Server) -> None:
    with small_server.client() as http:
        big = {"text": "word " * 1000, "source": "big"}
        refused(http.post("/v1/kb/documents", json=big), 413, "RequestTooLarge")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the cap still applies
            yield b'{"text": "'
            for _ in range(100):
                yield b"y" * 100
            yield b'", "source": "streamed"}'

        streamed = http.post(
            "/v1/kb/documents", content=chunks(), headers={"content-type": "application/json"}
        )
        refused(streamed, 413, "RequestTooLarge")
        small = http.post("/v1/kb/documents", json={"text": "small enough", "source": "s"})
        assert small.status_code == 200, small.text
        assert [d["source"] for d in http.get("/v1/kb/documents").json()] == ["s"]


def test_a_token_is_required_when_one_is_set(serve: ServerFactory) -> None:
    server = serve("--token", "s3cret-token")
    with server.client() as anonymous:
        assert anonymous.get("/health").status_code == 200  # probes need no token
        refused(anonymous.get("/v1/stats"), 401, "Unauthorized")
        refused(anonymous.get("/openapi.json"), 401)
    with server.client("wrong") as wrong:
        refused(wrong.post("/v1/kb/documents", json={"text": "x", "source": "x"}), 401)
    with server.client("s3cret-token") as right:
        assert right.get("/v1/stats").status_code == 200
        assert right.get("/v1/kb/documents").json() == []  # the refused write wrote nothing


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    process = start_server(tmp_path / "m.db", root, "--host", "0.0.0.0", "--port", str(free_port()))
    try:
        _, err = process.communicate(timeout=60)
    finally:
        stop(process)
    assert process.returncode == 2
    assert b"--token" in err and b"REMEMBRANCES_TOKEN" in err
    assert not (tmp_path / "m.db").exists()


def test_binding_beyond_loopback_with_a_token_serves(serve: ServerFactory) -> None:
    server = serve("--host", "0.0.0.0", env={"REMEMBRANCES_TOKEN": "from-env"})
    with server.client() as anonymous:
        refused(anonymous.get("/v1/stats"), 401)
    with server.client("from-env") as right:
        assert right.get("/v1/stats").status_code == 200


def test_default_bind_is_loopback_only(server: Server) -> None:
    listening = subprocess.run(
        ["ss", "-ltnp"], capture_output=True, text=True, check=False, cwd=REPO
    ).stdout
    port = server.url.rsplit(":", 1)[1]
    lines = [line for line in listening.splitlines() if f":{port} " in line]
    assert lines and all(f"127.0.0.1:{port} " in line for line in lines), listening
