"""The ``remembrances`` command: every capability of the library from a terminal.

Each command is a few lines over one public API call; the logic lives in the library.
click and rich come with the ``cli`` extra; without them the command says so.
"""

from __future__ import annotations

import sys

try:
    from . import code, copying, evaluation, events, kb, maintenance, memory, serve  # noqa: F401
    from .app import cli
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    _missing: ImportError | None = exc
else:
    _missing = None


def main() -> None:
    if _missing is not None:
        sys.stderr.write(
            f"remembrances: the command line needs {_missing.name or 'click and rich'}; "
            "install it with: pip install 'remembrances[cli]'\n"
        )
        sys.exit(1)
    cli(prog_name="remembrances")


__all__ = ["cli", "main"]
