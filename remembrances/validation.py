"""The checks every public entry point applies to the text it is given.

One place, so that the store, the domain layers and the embedders refuse the same
things with the same words: non-strings, blank text, text over a limit, and lone
surrogates (what decoding invalid UTF-8 with ``surrogateescape`` leaves behind,
which SQLite and every provider would reject later, less clearly). Names
(collections, sources, projects, sessions), metadata and score thresholds are
checked here too; a domain layer chooses only its limits and reserved keys.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from .errors import InvalidInputError

#: Longest name (collection, source, title, subject) a layer accepts unless it sets its own.
MAX_NAME_CHARS = 4096
#: Largest metadata, as UTF-8 JSON, that any record may carry.
MAX_METADATA_BYTES = 1_000_000
#: Deepest nesting of mappings and lists in metadata. Python's JSON reads it back by
#: recursion: a value nested near the interpreter's limit was stored, then could not
#: be read from a deeper call stack, and the searches that found it failed.
MAX_METADATA_DEPTH = 64


#: Control characters: text of nothing else is blank, and a name typed by people (a
#: project, a session, a user) holds none (a NUL or a newline broke listings).
_CONTROL = {code: None for code in [*range(0x20), 0x7F]}


def check_unicode(value: str, what: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{what} is not valid Unicode (lone surrogate at {exc.start}); decode it as UTF-8"
        ) from exc
    return value


def check_text(
    value: Any, what: str, *, limit: int | None = None, blank_ok: bool = False, hint: str = ""
) -> str:
    """``value`` if it is usable text, else an :class:`InvalidInputError` naming ``what``.

    ``hint`` says what to do instead when the text is over ``limit``.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        raise InvalidInputError(
            f"{what} is binary data, not a string; decode it to text (UTF-8) first"
        )
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, not {type(value).__name__}")
    if not blank_ok and not value.translate(_CONTROL).strip():
        raise InvalidInputError(f"{what} is empty" if not value.strip() else f"{what} is blank")
    if limit is not None and len(value) > limit:
        advice = f" ({hint})" if hint else ""
        raise InvalidInputError(
            f"{what} is {len(value):,} characters; the limit is {limit:,}{advice}"
        )
    return check_unicode(value, what)


def check_name(
    value: Any,
    what: str,
    *,
    limit: int = MAX_NAME_CHARS,
    strip: bool = False,
    blank_ok: bool = False,
) -> str:
    """A name that identifies something (a collection, a source, a project, a session).

    ``strip`` is for names typed by people, where surrounding spaces are never
    meant (a project, a session); names that are stored keys as given (a
    document's source) keep them, so the same spelling finds the same row.
    """
    if strip and isinstance(value, str):
        value = value.strip()
        if value.translate(_CONTROL) != value:
            at = next(i for i, ch in enumerate(value) if ord(ch) in _CONTROL)
            raise InvalidInputError(
                f"{what} holds a control character (U+{ord(value[at]):04X} at {at}); "
                "use printable characters"
            )
    return check_text(value, what, limit=limit, blank_ok=blank_ok)


def encode_metadata(value: Any, what: str = "metadata", *, reserved: Collection[str] = ()) -> str:
    """``value`` as the JSON text stored for it: a mapping with string keys, at most 1 MB.

    Keys are sorted, so equal metadata is equal text (events deduplicate on it).
    Values JSON cannot hold are stored as their ``str()``; NaN and infinities are
    refused (SQLite's JSON functions would reject the row later). ``reserved``
    names keys the library sets itself.
    """
    if value is None:
        return "{}"
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a mapping, not {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise InvalidInputError(f"{what} keys must be strings (JSON), got {key!r}")
    _check_depth(value, what)
    taken = sorted(set(reserved).intersection(value))
    if taken:
        raise InvalidInputError(f"{what} keys {taken} are set by the library; rename them")
    try:
        encoded = json.dumps(
            dict(value), ensure_ascii=False, allow_nan=False, sort_keys=True, default=str
        )
        size = len(encoded.encode("utf-8"))
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise InvalidInputError(f"{what} cannot be stored as JSON: {exc}") from exc
    if size > MAX_METADATA_BYTES:
        raise InvalidInputError(
            f"{what} is {size:,} bytes as JSON; the limit is {MAX_METADATA_BYTES:,}"
        )
    return encoded


def _check_depth(value: Any, what: str) -> None:
    """Refuse metadata nested deeper than ``MAX_METADATA_DEPTH`` (walked without
    recursion, so a value nested a million deep is refused, not a crash)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, Mapping | list | tuple):
            continue
        if depth > MAX_METADATA_DEPTH:
            raise InvalidInputError(
                f"{what} is nested deeper than {MAX_METADATA_DEPTH} levels; flatten it"
            )
        if id(item) in seen:  # it refers to itself: json.dumps says so
            continue
        seen.add(id(item))
        children = item.values() if isinstance(item, Mapping) else item
        stack.extend((child, depth + 1) for child in children)


def check_metadata(
    value: Any, what: str = "metadata", *, reserved: Collection[str] = ()
) -> dict[str, Any]:
    """``value`` as it will be stored and read back (see :func:`encode_metadata`)."""
    decoded: dict[str, Any] = json.loads(encode_metadata(value, what, reserved=reserved))
    return decoded


def check_limit(value: Any, maximum: int, what: str = "limit") -> int:
    """How many results to return: an integer from 1 to ``maximum`` (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInputError(f"{what} must be an integer from 1 to {maximum}")
    return value


#: The largest integer SQLite stores (a signed 64-bit rowid).
MAX_ID = 2**63 - 1


def check_id(value: Any, what: str = "id") -> int:
    """A row id: an integer SQLite can hold (a bigger one is no row, not an overflow)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{what} must be an integer, not {value!r}")
    if not -MAX_ID - 1 <= value <= MAX_ID:
        raise InvalidInputError(f"{what} {value} is out of range (ids are 64-bit integers)")
    return value


def check_offset(value: Any, what: str = "offset") -> int:
    """How many results to skip: a non-negative integer SQLite can hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise InvalidInputError(f"{what} must be an integer from 0 to {MAX_ID}")
    return value


def check_min_score(value: Any, what: str = "min_score") -> float:
    """A score threshold: a finite number from 0 to 1, the range of every fused score."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise InvalidInputError(f"{what} must be a number from 0 to 1, not {value!r}")
    return float(value)


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
