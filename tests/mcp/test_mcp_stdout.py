"""Nothing but protocol on stdout: every line the server writes is a JSON-RPC message."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def test_stdout_carries_only_json_rpc(tmp_path: Path) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "kb_ingest_path", "arguments": {"path": "/etc"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "kb_add_document", "arguments": {"text": "hi there", "source": "s"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "memory_stats", "arguments": {}}},
        # A lone surrogate (JavaScript's JSON for a string cut through an emoji): the
        # SDK's parser refused the message and nothing answered it; now it is stored
        # with U+FFFD in its place.
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "kb_add_document", "arguments": {"text": "bad \ud800", "source": "t"}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "memory_search", "arguments": {"query": "\"a\" AND (b OR"}}},
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("REMEMBRANCES_DB", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "remembrances.cli", "--db", str(tmp_path / "m.db"),
         "--embedder", "hash:64", "serve-mcp"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    try:
        assert server.stdin is not None and server.stdout is not None
        replies = {}
        for message in messages:
            wait = "id" in message
            server.stdin.write(json.dumps(message) + "\n")  # ASCII: the surrogate as \\ud800
            server.stdin.flush()
            if wait:
                while message["id"] not in replies:
                    ready, _, _ = select.select([server.stdout], [], [], 120)
                    assert ready, f"no reply to request {message['id']}"
                    line = server.stdout.readline()
                    assert line, "server closed stdout"
                    reply = json.loads(line)  # anything but JSON here fails the test
                    assert reply["jsonrpc"] == "2.0"
                    if "id" in reply:
                        replies[reply["id"]] = reply
        assert replies[2]["result"]["isError"] is True
        assert replies[3]["result"].get("isError") in (None, False)
        assert replies[4]["result"]["structuredContent"]["chunks"] == 1
        assert replies[6]["result"].get("isError") in (None, False)  # still serving
        assert replies[5]["result"].get("isError") in (None, False)
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=30)
        server.stdout.close()  # type: ignore[union-attr]
        server.stderr.close()  # type: ignore[union-attr]
