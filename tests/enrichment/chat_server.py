"""A local chat server speaking the OpenAI and Gemini wire formats, for the real SDKs.

The model name in each request picks the behaviour: ``good`` answers with the
plan in ``ChatServer.plan``, ``prose`` answers with text that is not JSON,
``wrong`` with JSON that breaks the schema, ``error`` with HTTP 500, and
``hang`` never answers (until the server stops).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatServer:
    def __init__(self) -> None:
        self.plan: dict[str, Any] = {
            "kb_query": "retry backoff policy",
            "code_query": "fetch_with_retry RetryPolicy",
            "events_query": "deploy outage",
            "events_since": "2026-11-20T00:00:00Z",
            "events_until": None,
            "kb_limit": 3,
            "code_limit": 5,
            "events_limit": 2,
            "note": "extra keys are ignored",
        }
        self.requests: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def content_for(self, model: str) -> tuple[int, str | None]:
        if "hang" in model:
            self.stop.wait(30)
            return 500, None
        if "error" in model:
            return 500, None
        if "prose" in model:
            return 200, "Sure! Here is a plan: search the docs for retries."
        if "wrong" in model:
            return 200, json.dumps({"kb_query": 42, "code_query": "", "events_query": ""})
        return 200, "```json\n" + json.dumps(self.plan) + "\n```"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body})
                if self.path.endswith("/chat/completions"):
                    model = body["model"]
                else:  # /v1beta/models/<model>:generateContent
                    model = self.path.rsplit("/", 1)[-1].split(":")[0]
                status, content = server.content_for(model)
                if status != 200 or content is None:
                    payload = {"error": {"message": "model exploded", "code": status}}
                elif self.path.endswith("/chat/completions"):
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                else:
                    payload = {
                        "candidates": [
                            {
                                "content": {"role": "model", "parts": [{"text": content}]},
                                "finishReason": "STOP",
                                "index": 0,
                            }
                        ]
                    }
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    @contextmanager
    def running(self) -> Iterator[ChatServer]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.stop.set()
            self._server.shutdown()
            self._server.server_close()
