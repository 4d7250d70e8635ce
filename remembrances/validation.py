"""The checks every public entry point applies to the text it is given.

One place, so that the store, the domain layers and the embedders refuse the same
things with the same words: non-strings, blank text, text over a limit, and lone
surrogates (what decoding invalid UTF-8 with ``surrogateescape`` leaves behind,
which SQLite and every provider would reject later, less clearly).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import InvalidInputError


def check_unicode(value: str, what: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{what} is not valid Unicode (lone surrogate at {exc.start}); decode it as UTF-8"
        ) from exc
    return value


def check_text(value: Any, what: str, *, limit: int | None = None, blank_ok: bool = False) -> str:
    """``value`` if it is usable text, else an :class:`InvalidInputError` naming ``what``."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, not {type(value).__name__}")
    if not blank_ok and not value.strip():
        raise InvalidInputError(f"{what} is empty")
    if limit is not None and len(value) > limit:
        raise InvalidInputError(f"{what} is {len(value):,} characters; the limit is {limit:,}")
    return check_unicode(value, what)


def check_choices(
    values: str | Iterable[str] | None, valid: Iterable[str], what: str
) -> list[str] | None:
    """``values`` as known names (a plural such as "events" or "classes" is accepted).

    A filter value nothing could match is a typo, not an empty result: it is an
    :class:`InvalidInputError` that lists the valid names.
    """
    if values is None:
        return None
    known = set(valid)
    chosen: list[str] = []
    for value in [values] if isinstance(values, str) else list(values):
        if not isinstance(value, str):
            raise InvalidInputError(f"{what} must be a string, not {type(value).__name__}")
        name = value if value in known else value.strip().lower()
        plural = (name[:-1] if name.endswith("s") else "", name[:-2] if name.endswith("es") else "")
        for singular in (name, *plural):
            if singular and singular in known:
                chosen.append(singular)
                break
        else:
            raise InvalidInputError(
                f"unknown {what} {value!r}; use one of: {', '.join(sorted(known))}"
            )
    return chosen
