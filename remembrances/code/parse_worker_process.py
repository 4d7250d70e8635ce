"""Entry point of a parsing worker process (kept out of the package's imports)."""

from __future__ import annotations

from remembrances.code.parse_workers import main

if __name__ == "__main__":
    main()
