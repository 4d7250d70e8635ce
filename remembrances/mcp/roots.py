"""Which directories an agent may point the ingest and index tools at.

An MCP client is a model acting on someone's behalf: it must not be able to read
``~/.ssh`` into memory by asking for ``../../.ssh``. Paths are resolved (symlinks
included) before they are compared, so neither ``..`` nor a symlink leads out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import InvalidInputError, NotFoundError


class AllowedRoots:
    """An allow-list of directory trees; relative paths are taken from the first root."""

    def __init__(self, roots: Sequence[str | os.PathLike[str]] | None = None) -> None:
        chosen = list(roots) if roots else [Path.cwd()]
        self.roots = [Path(r).expanduser().resolve(strict=False) for r in chosen]

    def check(self, path: str) -> Path:
        """The resolved path, if it exists and lies inside a root; else a clear refusal."""
        if not isinstance(path, str) or not path.strip():
            raise InvalidInputError(
                "path is empty; give a file or directory inside " + self.describe()
            )
        if "\x00" in path:
            raise InvalidInputError("path contains a NUL character")
        given = Path(path).expanduser()
        candidate = given if given.is_absolute() else self.roots[0] / given
        if not os.path.lexists(candidate):
            raise NotFoundError(
                f"{path!r} does not exist (relative paths start at {self.roots[0]})"
            )
        resolved = candidate.resolve(strict=True)
        for root in self.roots:
            if resolved == root or resolved.is_relative_to(root):
                return resolved
        raise InvalidInputError(
            f"{path!r} resolves to {resolved}, outside the allowed roots ({self.describe()}); "
            "start the server with --allow-root to permit it"
        )

    def describe(self) -> str:
        return ", ".join(str(r) for r in self.roots)
