"""The MCP server: the memory as tools any agent can call (``remembrances serve-mcp``)."""

from __future__ import annotations

from .roots import AllowedRoots
from .server import build_server, serve

__all__ = ["AllowedRoots", "build_server", "serve"]
