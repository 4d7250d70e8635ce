"""Lone UTF-16 surrogates in the JSON-RPC lines a client sends over stdio.

JavaScript's ``JSON.stringify`` writes a string cut through an emoji as ``"\\ud83d"``:
valid JSON, but the MCP SDK's parser refuses it, drops the message and answers
nothing, so the client waits forever for that request. Each lone ``\\uD800``-``\\uDFFF``
escape is rewritten as ``\\ufffd`` (the replacement character, as invalid UTF-8 bytes
already become) on the way in, and the call gets its answer.
"""

from __future__ import annotations

import os
import re
import threading
from typing import BinaryIO

#: A surrogate pair (kept), a lone surrogate (replaced), or any other escape (kept,
#: matched so that ``\\\\ud800``, an escaped backslash before "ud800", is left alone).
_ESCAPE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
    rb"|\\."
)


def without_lone_surrogates(line: bytes) -> bytes:
    if b"\\u" not in line:
        return line
    return _ESCAPE.sub(lambda m: b"\\ufffd" if len(m.group(0)) == 6 else m.group(0), line)


def filter_stdin() -> None:
    """Put a pipe on fd 0, fed line by line from the real stdin with lone surrogate
    escapes rewritten; the SDK then reads the pipe as it would read stdin."""
    try:
        source = os.dup(0)
    except OSError:  # no stdin at all: nothing to read, nothing to filter
        return
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    threading.Thread(
        target=_pump, args=(os.fdopen(source, "rb"), os.fdopen(write_end, "wb", buffering=0)),
        name="remembrances-mcp-stdin", daemon=True,
    ).start()  # fmt: skip


def _pump(source: BinaryIO, sink: BinaryIO) -> None:
    with source, sink:  # the sink's end of file is the client's
        try:
            for line in source:
                sink.write(without_lone_surrogates(line))
        except OSError:  # the server stopped reading
            return
