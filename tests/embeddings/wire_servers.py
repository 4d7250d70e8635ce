"""Local HTTP servers that speak the embedding providers' real wire formats.

Each one listens on 127.0.0.1 (ephemeral port) in a thread, checks the path and
the auth header the real service checks, records every request body, answers
with the real JSON shapes (base64 float32 when the client asks for it), and can
be told to misbehave: HTTP errors with Retry-After, malformed JSON, vectors of
the wrong length, or no answer at all. The real SDKs are pointed at them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import numpy as np

KEY = "test-key-123"


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic vector per text, so a test can tell which text a row came from."""
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    values: list[float] = (
        np.random.default_rng(seed).standard_normal(dim).astype(np.float32).tolist()
    )
    return values


def unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    return (v / np.linalg.norm(v)).astype(np.float32)


@dataclass
class Fail:
    """Answer with this HTTP status (in the provider's error format)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    #: The error's code in the body, where the provider has one (``insufficient_quota``).
    code: str | None = None


OK = "ok"
MALFORMED = "malformed"
WRONG_DIM = "wrong_dim"
HANG = "hang"
DROP = "drop"  # close the connection without an answer
Behaviour = str | Fail


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class WireServer:
    """The parts every provider shares; subclasses define paths, auth and JSON shapes."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.requests: list[Recorded] = []
        self.texts_embedded = 0
        self.in_flight = 0
        self.max_in_flight = 0
        #: Seconds each successful answer takes (to make concurrency observable).
        self.delay = 0.0
        self.default: Behaviour = OK
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- lifecycle ---------------------------------------------------------------

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- scripting ----------------------------------------------------------------

    def plan(self, *behaviours: Behaviour) -> None:
        """Behaviours for the next embedding requests, in order; then ``default``."""
        with self._lock:
            self._script.extend(behaviours)

    def _next(self) -> Behaviour:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    @property
    def embed_requests(self) -> list[Recorded]:
        return [r for r in self.requests if self.is_embed_path(r.path)]

    # -- what a provider defines ---------------------------------------------------

    def is_embed_path(self, path: str) -> bool:
        raise NotImplementedError

    def authorised(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization") == f"Bearer {KEY}"

    def texts(self, body: Any) -> list[str]:
        raise NotImplementedError

    def wanted_dim(self, body: Any) -> int:
        return self.dim

    def ok_body(self, body: Any, vectors: list[list[float]]) -> Any:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"message": message, "code": status}}

    # -- serving -------------------------------------------------------------------

    def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(Recorded("POST", path, headers, body))
        if not self.is_embed_path(path):
            return self._json(404, self.error_body(404, f"no route {path}"))
        if not self.authorised(headers):
            return self._json(401, self.error_body(401, "invalid api key"))
        behaviour = self._next()
        if behaviour == HANG:
            self._release.wait(10)
            return 200, {}, b""
        if behaviour == DROP:
            return 200, {}, b""
        if isinstance(behaviour, Fail):
            error = self.error_body(behaviour.status, "scripted failure")
            if behaviour.code is not None and isinstance(error.get("error"), dict):
                error["error"].update(code=behaviour.code, type=behaviour.code)
            status, extra, payload = self._json(behaviour.status, error)
            return status, {**extra, **behaviour.headers}, payload
        if behaviour == MALFORMED:
            return 200, {"Content-Type": "application/json"}, b'{"data": [{"embedding": '
        texts = self.texts(body)
        if self.delay:
            with self._lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._release.wait(self.delay)
            with self._lock:
                self.in_flight -= 1
        dim = self.wanted_dim(body) - (1 if behaviour == WRONG_DIM else 0)
        vectors = [fake_vector(t, dim) for t in texts]
        with self._lock:
            self.texts_embedded += len(texts)
        return self._json(200, self.ok_body(body, vectors))

    @staticmethod
    def _json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, extra, payload = server._respond(self.path, headers, raw)
                if status == 200 and not payload:  # hung: drop the connection
                    self.close_connection = True
                    return
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def _b64(vector: list[float]) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


class OpenAIServer(WireServer):
    """``POST /v1/embeddings``; ``Authorization: Bearer``; base64 when asked."""

    reverse_order = False

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def is_embed_path(self, path: str) -> bool:
        return path == "/v1/embeddings"

    def texts(self, body: Any) -> list[str]:
        value = body["input"]
        return [value] if isinstance(value, str) else list(value)

    def wanted_dim(self, body: Any) -> int:
        return int(body.get("dimensions") or self.dim)

    def ok_body(self, body: Any, vectors: list[list[float]]) -> Any:
        as_b64 = body.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": i, "embedding": _b64(v) if as_b64 else v}
            for i, v in enumerate(vectors)
        ]
        if self.reverse_order:
            data.reverse()
        tokens = sum(len(t.split()) for t in self.texts(body))
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def error_body(self, status: int, message: str) -> Any:
        kind = "rate_limit_exceeded" if status == 429 else "server_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


class VoyageServer(OpenAIServer):
    """``POST /v1/embeddings`` like OpenAI, with ``input_type`` and ``{"detail"}`` errors."""

    def wanted_dim(self, body: Any) -> int:
        return int(body.get("output_dimension") or self.dim)

    def ok_body(self, body: Any, vectors: list[list[float]]) -> Any:
        as_b64 = body.get("encoding_format") == "base64"
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "embedding": _b64(v) if as_b64 else v, "index": i}
                for i, v in enumerate(vectors)
            ],
            "model": body["model"],
            "usage": {"total_tokens": sum(len(t.split()) for t in self.texts(body))},
        }

    def error_body(self, status: int, message: str) -> Any:
        return {"detail": message}


_GOOGLE_PATH = re.compile(r"^/v1beta/models/([^/:]+):batchEmbedContents$")


class GoogleServer(WireServer):
    """``POST /v1beta/models/{model}:batchEmbedContents``; ``x-goog-api-key``."""

    def is_embed_path(self, path: str) -> bool:
        return _GOOGLE_PATH.match(path) is not None

    def authorised(self, headers: dict[str, str]) -> bool:
        return headers.get("x-goog-api-key") == KEY

    def texts(self, body: Any) -> list[str]:
        return ["".join(p["text"] for p in r["content"]["parts"]) for r in body["requests"]]

    def wanted_dim(self, body: Any) -> int:
        return int(body["requests"][0].get("outputDimensionality") or self.dim)

    def ok_body(self, body: Any, vectors: list[list[float]]) -> Any:
        return {"embeddings": [{"values": v} for v in vectors]}

    def error_body(self, status: int, message: str) -> Any:
        names = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}
        return {
            "error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
        }


class OllamaServer(WireServer):
    """``POST /api/embed`` -> ``{"embeddings": [[...]]}``; no auth; 404 for unknown models."""

    models: tuple[str, ...] = ("nomic-embed-text", "nomic-embed-text:latest", "custom-embed")

    def is_embed_path(self, path: str) -> bool:
        return path == "/api/embed"

    def authorised(self, headers: dict[str, str]) -> bool:
        return True

    def texts(self, body: Any) -> list[str]:
        value = body["input"]
        return [value] if isinstance(value, str) else list(value)

    def wanted_dim(self, body: Any) -> int:
        return int(body.get("dimensions") or self.dim)

    def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        body = json.loads(raw) if raw else {}
        if self.is_embed_path(path) and body.get("model") not in self.models:
            with self._lock:
                self.requests.append(Recorded("POST", path, headers, body))
            message = f'model "{body.get("model")}" not found, try pulling it first'
            return self._json(404, {"error": message})
        return super()._respond(path, headers, raw)

    def ok_body(self, body: Any, vectors: list[list[float]]) -> Any:
        return {"model": body["model"], "embeddings": vectors, "total_duration": 1000}

    def error_body(self, status: int, message: str) -> Any:
        return {"error": message}
