"""Streamable HTTP: the same tools, served on 127.0.0.1 only."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .conftest import REPO, text_of


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(port: int, server: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("server did not start listening")


def _local_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses (none on a bare container)."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return []
    return sorted({str(i[4][0]) for i in infos if not str(i[4][0]).startswith("127.")})


def test_http_transport_serves_tools_on_loopback_only(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("REMEMBRANCES_DB", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "remembrances.cli", "--db", str(tmp_path / "m.db"),
         "--embedder", "hash:64", "serve-mcp", "--http", "--port", str(port)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        _wait_for(port, server)

        async def scenario() -> None:
            with anyio.fail_after(60):
                async with (
                    streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    tools = {t.name for t in (await session.list_tools()).tools}
                    assert "memory_enrich_context" in tools and len(tools) == 19 + 5  # 5 old names
                    added = await session.call_tool(
                        "kb_add_document", {"text": "Over HTTP.", "source": "h"}
                    )
                    assert not added.is_error, text_of(added)

        anyio.run(scenario)
        for address in _local_addresses():
            with socket.socket() as s:
                s.settimeout(0.5)
                assert s.connect_ex((address, port)) != 0, f"listening on {address}"
    finally:
        server.terminate()
        server.wait(timeout=30)
