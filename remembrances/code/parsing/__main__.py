"""A parsing worker process: ``python -m remembrances.code.parsing`` (see workers.py)."""

from __future__ import annotations

from remembrances.code.parsing.workers import main

main()
