"""Running the API: loopback by default, a bearer token whenever it listens elsewhere."""

from __future__ import annotations

import ipaddress
import logging
import sys
from collections.abc import Sequence

from ..errors import InvalidInputError, RemembrancesError
from ..service import RemembrancesService
from .app import build_app
from .guard import MAX_BODY_BYTES


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def warm(svc: RemembrancesService) -> None:
    """Load the model and the vector index before the first request, so that it
    costs what the others do (a hook's first call otherwise pays both)."""
    load = getattr(svc.embedder, "load", None)
    try:
        if callable(load):
            load()
        svc.store.warm()
    except RemembrancesError as exc:  # the routes will report it, request by request
        logging.getLogger(__name__).warning("could not warm up: %s", exc)


def serve(
    svc: RemembrancesService,
    roots: Sequence[str] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    token: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> None:
    """Serve until interrupted. Anything reachable from another machine needs a token."""
    if not is_loopback(host) and not token:
        raise InvalidInputError(
            f"binding to {host} makes the memory reachable from other machines: give a "
            "bearer token with --token or REMEMBRANCES_TOKEN (or bind to 127.0.0.1)"
        )
    if max_body_bytes < 1:
        raise InvalidInputError("max_body_bytes must be at least 1")
    import uvicorn

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    app = build_app(svc, roots, token=token, max_body_bytes=max_body_bytes, close_on_shutdown=True)
    warm(svc)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
