"""What the code layer accepts from callers: project names, languages, roots, names.

The checks are :mod:`remembrances.validation`'s, as in every layer; what is particular to code (language names, a root that must be a
directory) is here, so the writer and the reader check the same things alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import validation
from ..errors import InvalidInputError
from .parsing.languages import BY_NAME, canonical

MAX_PROJECT_NAME = 200
#: Names, qualified names, kinds and paths a caller looks up.
MAX_NAME = 1000


def check_name(value: Any, what: str, *, limit: int = MAX_NAME) -> str:
    """``value`` without surrounding blanks, if it is usable text."""
    return validation.check_name(value, what, limit=limit, strip=True)


def check_project_name(name: Any) -> str:
    return check_name(name, "project name", limit=MAX_PROJECT_NAME)


def check_languages(languages: Iterable[str] | str | None) -> list[str] | None:
    if languages is None:
        return None
    if isinstance(languages, str):
        languages = [languages]
    names = []
    for value in languages:
        name = canonical(value) if isinstance(value, str) else None
        if name is None:
            raise InvalidInputError(
                f"unknown language {value!r}; supported: {', '.join(sorted(BY_NAME))}"
            )
        names.append(name)
    return names


def check_root(path: Any) -> Path:
    if not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path must be a path, not {type(path).__name__}")
    try:
        root = Path(path).expanduser().resolve()
        os.fsencode(root)
    except (OSError, ValueError, RuntimeError) as exc:  # UnicodeError is a ValueError
        raise InvalidInputError(f"cannot resolve {path!r}: {exc}") from exc
    if not root.is_dir():
        raise InvalidInputError(f"{str(path)!r} is not a directory; give the repository's root")
    return root
