"""``serve`` and ``serve-mcp``: the memory as an HTTP API and as an MCP server."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from ..errors import MissingExtraError
from ..http.guard import MAX_BODY_BYTES  # the standard library only
from .app import F, State, cli, pass_state


def allow_root_option(what: str) -> Callable[[F], F]:
    """``--allow-root``: both servers read files only under these directories."""
    return click.option(
        "--allow-root",
        "roots",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help=f"A directory the ingest/index {what} may read (repeatable) "
        "[default: the current directory].",
    )


@cli.command(
    "serve-mcp",
    epilog="Example:  remembrances --db ~/notes/memory.db serve-mcp --allow-root ~/code",
)
@allow_root_option("tools")
@click.option(
    "--http",
    is_flag=True,
    help="Serve streamable HTTP on 127.0.0.1 instead of stdio.",
)
@click.option("--port", default=8765, show_default=True, help="Port for --http.")
@pass_state
def serve_mcp(state: State, roots: tuple[Path, ...], http: bool, port: int) -> None:
    """Run the MCP server (stdio by default). Logs go to stderr; stdout is the protocol."""
    with _extra("mcp"):
        from ..mcp import serve

    svc = state.service(create=True)
    if http:  # stdout is not the protocol here: say where the server is
        state.out.err.print(
            f"serving MCP for {state.db} at http://127.0.0.1:{port}/mcp (Ctrl-C to stop)",
            markup=False,
            soft_wrap=True,
        )
    serve(
        svc,
        [str(r) for r in roots] or None,
        transport="streamable-http" if http else "stdio",
        port=port,
    )


@cli.command(
    epilog="Examples:\n\n  remembrances --db ~/notes/memory.db serve --allow-root ~/code\n\n"
    "  REMEMBRANCES_TOKEN=$(openssl rand -hex 32) remembrances serve --host 0.0.0.0",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8766, show_default=True, help="Port to listen on.")
@click.option(
    "--token",
    default=None,
    help="Bearer token every request must send [default: $REMEMBRANCES_TOKEN]; "
    "required unless the host is a loopback address.",
)
@allow_root_option("routes")
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=1),
    default=MAX_BODY_BYTES,
    show_default=True,
    help="Largest request body accepted (larger ones get 413).",
)
@pass_state
def serve(
    state: State,
    host: str,
    port: int,
    token: str | None,
    roots: tuple[Path, ...],
    max_body_bytes: int,
) -> None:
    """Serve the HTTP API (JSON; OpenAPI at /docs and /openapi.json; /health) until Ctrl-C."""
    with _extra("http"):
        import uvicorn  # noqa: F401  (here: the server imports it only once it starts)

        from ..http.server import is_loopback
        from ..http.server import serve as run

    token = token or os.environ.get("REMEMBRANCES_TOKEN") or None
    if not token and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} is reachable from other machines: set a bearer token with "
            "--token or REMEMBRANCES_TOKEN"
        )
    svc = state.service(create=True)
    state.out.err.print(
        f"serving {state.db} on http://{host}:{port} (OpenAPI at /docs; Ctrl-C to stop)",
        markup=False,
    )
    run(
        svc,
        [str(r) for r in roots] or None,
        host=host,
        port=port,
        token=token,
        max_body_bytes=max_body_bytes,
    )


@contextlib.contextmanager
def _extra(name: str) -> Iterator[None]:
    """Say which extra to install when a server's packages are missing."""
    try:
        yield
    except ImportError as exc:
        raise MissingExtraError(
            f"this server needs {exc.name or 'a package'} from the {name} extra: "
            f"pip install 'remembrances[{name}]'"
        ) from exc
