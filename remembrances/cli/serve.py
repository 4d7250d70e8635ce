"""``serve-mcp``: the memory as an MCP server for agents."""

from __future__ import annotations

from pathlib import Path

import click

from .app import State, cli, pass_state


@cli.command(
    "serve-mcp",
    epilog="Example:  remembrances --db ~/notes/memory.db serve-mcp --allow-root ~/code",
)
@click.option(
    "--allow-root",
    "roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A directory the ingest/index tools may read (repeatable) [default: the current directory].",
)
@click.option(
    "--http",
    is_flag=True,
    help="Serve streamable HTTP on 127.0.0.1 instead of stdio.",
)
@click.option("--port", default=8765, show_default=True, help="Port for --http.")
@pass_state
def serve_mcp(state: State, roots: tuple[Path, ...], http: bool, port: int) -> None:
    """Run the MCP server (stdio by default). Logs go to stderr; stdout is the protocol."""
    from ..mcp import serve

    serve(
        state.service(create=True),
        [str(r) for r in roots] or None,
        transport="streamable-http" if http else "stdio",
        port=port,
    )
