"""Option parsing shared by several commands: metadata pairs, progress hookup."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from .output import Output


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


def accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


@contextmanager
def progress_for(out: Output, what: str, fn: Callable[..., Any]) -> Iterator[dict[str, Any]]:
    """Keyword arguments that hook ``fn``'s ``progress`` callback (if it has one) to a bar.

    The callback may be called as ``(done)``, ``(done, total)``, ``(phase, done,
    total)`` or with a report object carrying ``done``/``total`` attributes.
    """
    if not out.show_progress:
        yield {}
        return
    with out.progress(what) as task:
        if not accepts(fn, "progress"):  # no counts to show: an indeterminate bar
            yield {}
            return

        def report(*args: Any, **kwargs: Any) -> None:
            if args and isinstance(args[0], str):  # (phase, done, total)
                task.describe(f"{what}: {args[0]}")
                args = args[1:]
            done = kwargs.get("done", args[0] if args else None)
            total = kwargs.get("total", args[1] if len(args) > 1 else None)
            if done is not None and not isinstance(done, int):
                total = getattr(done, "total", total)
                done = getattr(done, "done", None)
            if isinstance(total, int):
                task.total(total)
            if isinstance(done, int):
                task.done(done)

        yield {"progress": report}
