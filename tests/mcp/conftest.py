"""The MCP server as a subprocess (``remembrances serve-mcp``), driven by the SDK's client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

REPO = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def mcp_session(
    db: Path, cwd: Path, *extra: str, errlog_path: Path | None = None
) -> AsyncIterator[ClientSession]:
    """A client session over stdio with a fresh server process on ``db``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "remembrances.cli",
            "--db",
            str(db),
            "--embedder",
            "hash:64",
            "serve-mcp",
            *extra,
        ],
        cwd=str(cwd),
        env={"PYTHONPATH": str(REPO), "REMEMBRANCES_DB": "", "PYTHONUNBUFFERED": "1"},
    )
    errlog = (errlog_path or cwd / "server-stderr.log").open("w")
    try:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    finally:
        errlog.close()


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def call(session: ClientSession, tool: str, /, **arguments: Any) -> CallToolResult:
    return await session.call_tool(tool, arguments)


Scenario = Callable[[ClientSession], Awaitable[None]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The directory the server is started in (its default allowed root)."""
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def drive(workspace: Path, tmp_path: Path) -> Callable[..., None]:
    """``drive(scenario, *extra_args)`` runs an async scenario against a fresh server."""

    def run(scenario: Scenario, *extra: str) -> None:
        async def main() -> None:
            with anyio.fail_after(120):
                async with mcp_session(tmp_path / "memory.db", workspace, *extra) as session:
                    await scenario(session)

        anyio.run(main)

    return run


__all__ = ["REPO", "call", "mcp_session", "os", "text_of"]
