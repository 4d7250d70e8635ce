"""How the CLI talks back: rich tables for people, JSON for scripts, progress on stderr."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Protocol

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..formatting import human_time

SNIPPET_CHARS = 240


class ProgressTask(Protocol):
    """What long-running commands report to: a total once known, then done counts.

    It is also a :class:`remembrances.progress.Progress`: pass it as ``progress=``
    to any long call, and each phase the call names gets its own count and rate.
    """

    def __call__(self, phase: str, done: int, total: int | None, /) -> None: ...

    def total(self, total: int | None) -> None: ...

    def done(self, completed: int) -> None: ...

    def advance(self, amount: int = 1) -> None: ...

    def describe(self, text: str) -> None: ...


class _Silent:
    def __call__(self, phase: str, done: int, total: int | None, /) -> None:
        pass

    def total(self, total: int | None) -> None:
        pass

    def done(self, completed: int) -> None:
        pass

    def advance(self, amount: int = 1) -> None:
        pass

    def describe(self, text: str) -> None:
        pass


class _RichTask:
    def __init__(self, progress: Progress, task: Any, what: str = "") -> None:
        self._progress = progress
        self._task = task
        self._what = what

    def __call__(self, phase: str, done: int, total: int | None, /) -> None:
        self.describe(f"{self._what}: {phase}" if self._what else phase)
        if total is not None:
            self.total(total)
        self.done(done)

    def total(self, total: int | None) -> None:
        self._progress.update(self._task, total=total)

    def done(self, completed: int) -> None:
        self._progress.update(self._task, completed=completed)

    def advance(self, amount: int = 1) -> None:
        self._progress.advance(self._task, amount)

    def describe(self, text: str) -> None:
        task = self._progress.tasks[self._task]
        if task.description != text:  # a new phase: its own count and rate
            self._progress.reset(self._task, description=text)


class Output:
    """One per invocation. Data goes to stdout; progress and notes go to stderr."""

    def __init__(self, *, as_json: bool = False, quiet: bool | None = None) -> None:
        self.as_json = as_json
        self.console = Console(highlight=False, soft_wrap=False)
        self.err = Console(stderr=True, highlight=False)
        # Progress only when a person is watching: not in pipes, logs or --json.
        self.show_progress = not as_json and (quiet is False or (quiet is None and _is_tty()))

    # -- data ----------------------------------------------------------------------

    def json(self, data: Any) -> None:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=_json_default))

    def emit(self, data: Any, human: Any = None) -> None:
        """Print ``data`` as JSON under --json, else ``human`` (a renderable or a string)."""
        if self.as_json:
            self.json(data)
        elif isinstance(human, str):  # data, not markup: "[app] u.py", "d[key]"
            # not wrapped at the console's width: a pipe has 80 columns, and a map's
            # signature cut onto a new line loses its indentation
            self.console.print(human, markup=False, soft_wrap=True)
        elif human is not None:
            # in a pipe (80 columns) nothing is wrapped but tables: a signature or a
            # code line cut onto a new line loses its indentation
            piped = not self.console.is_terminal and not isinstance(human, Table)
            self.console.print(human, soft_wrap=piped)

    def note(self, message: str) -> None:
        """A line for people (stderr under --json, so stdout stays parseable)."""
        (self.err if self.as_json else self.console).print(message, markup=False, soft_wrap=True)

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str = ""
    ) -> Table:
        table = Table(title=Text(title) if title else None, show_lines=False, expand=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            # Text, not markup: a cell is data ("[app] u.py:4", "d[key]"), never styling
            table.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
        return table

    def mapping(self, data: Mapping[str, Any], title: str = "") -> Table:
        return self.table(("key", "value"), [(k, _cell(v)) for k, v in data.items()], title)

    def code(self, text: str, language: str | None, start_line: int = 1) -> Syntax:
        # In a pipe every line is kept whole (its width is the longest line's), as
        # :meth:`emit` prints it; a terminal wraps long lines under their number.
        piped = not self.console.is_terminal
        return Syntax(
            text,
            language or "text",
            line_numbers=True,
            start_line=max(1, start_line),
            word_wrap=not piped,
            code_width=max(map(len, text.split("\n")), default=1) if piped else None,
            theme="ansi_dark",
        )

    # -- progress --------------------------------------------------------------------

    @contextmanager
    def progress(self, what: str, total: int | None = None) -> Iterator[ProgressTask]:
        if not self.show_progress:
            yield _Silent()
            return
        columns = (
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=self.err, transient=False) as progress:
            task = progress.add_task(what, total=total, rate="")
            yield _RateTask(progress, task, what)


class _RateTask(_RichTask):
    """Adds a rate column ("123.4/s"): items done since the phase began, per second."""

    def __init__(self, progress: Progress, task: Any, what: str = "") -> None:
        super().__init__(progress, task, what)
        self._started = time.perf_counter()

    def _refresh_rate(self) -> None:
        done = self._progress.tasks[self._task].completed
        elapsed = time.perf_counter() - self._started
        rate = f"{done / elapsed:,.1f}/s" if done and elapsed > 0 else ""
        self._progress.update(self._task, rate=rate)

    def describe(self, text: str) -> None:
        if self._progress.tasks[self._task].description != text:
            self._started = time.perf_counter()
            self._progress.update(self._task, rate="")  # not the last phase's rate
        super().describe(text)

    def done(self, completed: int) -> None:
        super().done(completed)
        self._refresh_rate()

    def advance(self, amount: int = 1) -> None:
        super().advance(amount)
        self._refresh_rate()


def _is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def _cell(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """One line of a hit's text, for tables."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def when(ts: float | str | datetime | None) -> str:
    """A time (epoch seconds, ISO text or a datetime) as a readable UTC time."""
    return human_time(ts, seconds=True) or "-"
