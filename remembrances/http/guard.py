"""What every request passes before it reaches a route: the bearer token and the size cap.

A plain ASGI layer, so it runs before any body is parsed: an oversized body is
refused after reading at most ``max_body_bytes`` of it (whether or not it declared
a Content-Length), and a request without the token never reaches the service.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .errors import body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The default cap on a request body: a large document fits, a runaway upload does not.
MAX_BODY_BYTES = 16 * 1024 * 1024

#: Paths answered without a token: a load balancer or a hook may probe them.
OPEN_PATHS = frozenset({"/health"})


def _own_path(scope: Scope) -> str:
    """The request's path inside this app: mounted at ``/memory`` in another app,
    ``/memory/health`` is its ``/health`` (Starlette keeps the prefix in ``path``)."""
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


class Guard:
    def __init__(self, app: ASGIApp, *, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if self.token is not None and _own_path(scope) not in OPEN_PATHS:
            scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.token):
                await _reply(
                    send,
                    401,
                    "Unauthorized",
                    "missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                    "with the token the server was started with",
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body_bytes):
            await self._too_large(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:  # read the whole body here (bounded) and replay it to the app
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await self._too_large(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # after the body: wait for the disconnect

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await _reply(
            send,
            413,
            "RequestTooLarge",
            f"request body over {self.max_body_bytes:,} bytes; send less at a time or start "
            "the server with a larger --max-body-bytes",
        )


async def _reply(
    send: Send,
    status: int,
    error: str,
    message: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    payload = json.dumps(body(error, message)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
