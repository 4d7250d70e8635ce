"""The ``remembrances`` command: every capability of the library from a terminal.

Each command is a few lines over one public API call; the logic lives in the library.
"""

from __future__ import annotations

from . import code, evaluation, events, kb, maintenance, memory, serve  # noqa: F401
from .app import cli


def main() -> None:
    cli(prog_name="remembrances")


__all__ = ["cli", "main"]
