"""Option parsing shared by several commands: metadata pairs, search modes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

#: ``--mode`` of every search command.
MODES = click.Choice(["hybrid", "vector", "text"])


def parse_metadata(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    """``KEY=VALUE`` pairs; a value that parses as JSON (numbers, true, lists) is kept typed."""
    if not pairs:
        return None
    metadata: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--meta")
        try:
            metadata[key.strip()] = json.loads(raw)
        except ValueError:
            metadata[key.strip()] = raw
    return metadata


def meta_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--meta",
        "meta",
        multiple=True,
        metavar="KEY=VALUE",
        help="Metadata to store with it (repeatable; JSON values are kept typed).",
    )(fn)
