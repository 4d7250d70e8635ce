"""The root command: global options, the shared state every command gets, error handling."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable
from functools import cached_property, update_wrapper
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from ..errors import RemembrancesError
from .output import Output

if TYPE_CHECKING:  # the service (numpy, apsw...) is imported only when a file is opened
    from ..service import RemembrancesService

F = TypeVar("F", bound=Callable[..., Any])

#: Exceptions that are the user's to fix: a one-line message and exit code 1.
USER_ERRORS: tuple[type[BaseException], ...] = (RemembrancesError, OSError, ValueError)


class MemoryLocation(click.ParamType):  # type: ignore[type-arg]
    """``--db``: a memory file's path, or a ``postgresql://`` URL kept as it is."""

    name = "path|url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Path):
            return value
        from ..postgres.url import is_postgres_url

        if is_postgres_url(value):
            return value
        problem = _not_a_file_path(value)
        if problem:
            self.fail(problem, param, ctx)
        return Path(value)


def _not_a_file_path(value: str) -> str | None:
    """Why ``value`` cannot name a memory file, or None. SQLite would report a folder
    as a disk I/O error, and a trailing slash would quietly make a file of the folder."""
    if not value.strip():
        return "an empty string is not a file path"
    path = Path(value)
    if path.is_dir():
        return f"{value!r} is a directory; give a file path in it, such as {path / 'memory.db'}"
    if value.endswith(("/", os.sep)):
        return f"{value!r} ends with a slash; give a file path, such as {path / 'memory.db'}"
    return None


class State:
    """What the global options chose; the service is opened on first use."""

    def __init__(
        self,
        db: Path | str | None,
        embedder: str | None,
        as_json: bool,
        debug: bool,
        url: str | None = None,
    ) -> None:
        self._db = db
        self.url = url
        self.embedder = embedder
        self.as_json = as_json
        self.debug = debug
        self._service: RemembrancesService | None = None
        # The command being run and its arguments, for error messages in its words.
        self.command: click.Command | None = None
        self.arguments: dict[str, Any] = {}

    @cached_property
    def db(self) -> Path | str:
        """``--db``, else ``$REMEMBRANCES_DB``, else ``./.remembrances/memory.db``
        (a ``postgresql://`` URL stays a string: docs/scale-out.md)."""
        if self._db is not None:
            return self._db
        from ..postgres.url import is_postgres_url
        from ..service import default_path

        value = os.environ.get("REMEMBRANCES_DB")
        if is_postgres_url(value):
            return str(value)
        problem = _not_a_file_path(value) if value else None
        if problem:
            raise click.UsageError(f"REMEMBRANCES_DB: {problem}")
        return default_path()

    @cached_property
    def out(self) -> Output:
        return Output(as_json=self.as_json)

    def service(
        self, *, write: bool = False, create: bool = False, adopt: bool = False
    ) -> RemembrancesService:
        """The memory file, opened once.

        Reading commands open an existing memory read-only: they never write, not even
        a schema upgrade. Writing ones (``write``) open it for writing; those that add
        (``create``) may also start a new one at a new path or in an empty file; only
        ``init`` (``adopt``) makes a memory of a SQLite file that holds something else.
        """
        if self._service is None and self.url:
            from ..http.client import RemoteMemory

            # The client answers the same calls with the records the server sent.
            remote = RemoteMemory(self.url, token=os.environ.get("REMEMBRANCES_TOKEN") or None)
            self._service = cast("RemembrancesService", remote)
        if self._service is None:
            if isinstance(self.db, Path) and not self.db.exists():
                if not create:
                    raise click.ClickException(
                        f"no memory file at {self.db}; create one with `remembrances init` "
                        "or point --db / REMEMBRANCES_DB at an existing one"
                    )
                self.db.parent.mkdir(parents=True, exist_ok=True)
            from .. import open as open_memory

            mode = True if adopt else (None if create else False)
            read_only = not (write or create or adopt)
            self._service = open_memory(
                self.db, embedder=self.embedder, create=mode, read_only=read_only
            )
        return self._service

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
            self._service = None


class RootGroup(click.Group):
    """Turns library errors into one-line messages (exit 1) unless --debug is given."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            raise click.Abort() from None
        except Exception as exc:
            state = ctx.find_object(State)
            if state is None or state.debug:
                raise
            raise click.ClickException(_one_line(exc, state)) from None
        finally:
            state = ctx.find_object(State)
            if state is not None:
                state.close()


def _one_line(exc: BaseException, state: State | None = None) -> str:
    message = " ".join(str(exc).split()) or type(exc).__name__
    command = state.command if state is not None else None
    arguments = state.arguments if state is not None else {}
    message = _undecodable(message, command, arguments) or _cli_words(message, command)
    if isinstance(exc, USER_ERRORS):
        return message
    return f"unexpected {type(exc).__name__}: {message} (rerun with --debug for the traceback)"


def _option_names(group: click.Group) -> dict[str, str]:
    """Python parameter names (``older_than``) -> the option that sets them (``--older-than``)."""
    names: dict[str, str] = {}
    for command in group.commands.values():
        if isinstance(command, click.Group):
            names.update(_option_names(command))
        for param in command.params:
            longest = max(param.opts, key=len) if param.opts else ""
            if param.name and "_" in param.name and longest.startswith("--"):
                names[param.name] = longest
    return names


def _command_options(command: click.Command | None) -> dict[str, str]:
    """The running command's options by parameter name (``limit`` -> ``-n/--limit``)."""
    if command is None:
        return {}
    return {
        param.name: "/".join(param.opts)
        for param in command.params
        if isinstance(param, click.Option) and param.name and param.opts
    }


def _cli_words(message: str, command: click.Command | None = None) -> str:
    """The library names Python parameters; a CLI user needs the options that set them."""
    names = _option_names(cli)
    if names:
        # whole words only: not part of a path, a longer name or a keyword argument
        pattern = r"(?<![\w./-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w/=-])"
        message = re.sub(pattern, lambda m: names[m.group(1)], message)
    own = _command_options(command)
    if own:
        # Plain words (limit, at, since) are renamed only where they are the subject of
        # the message ("limit must be", "at 'x' is not", "since (...) is after until
        # (...)", "limit: Input should be"), never in its prose ("the limit is 10").
        words = "|".join(map(re.escape, sorted(own, key=len, reverse=True)))
        subject = (
            rf"(?:^|(?<=; )|(?<=after )|(?<=before ))({words})"
            r"(?=:| (?:must|is|reaches|has|cannot)\b| ['\"(])"
        )
        message = re.sub(subject, lambda m: own[m.group(1)], message)
        message = re.sub(rf"\bpass ({words})=\.\.\.", lambda m: f"pass {own[m.group(1)]}", message)
    message = re.sub(r" ?\(Python: [^()]*(?:\([^()]*\)[^()]*)*\)", "", message)
    return re.sub(r"\(--(\w[\w-]*) ([^,()]+), or \w+=[^)]* in Python\)", r"(--\1 \2)", message)


#: What Python makes of a byte in argv that is not UTF-8 (``surrogateescape``).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _undecodable(message: str, command: click.Command | None, arguments: dict[str, Any]) -> str:
    """The library calls a non-UTF-8 byte from the shell a "lone surrogate": say which
    argument holds it and which byte it is, in terms a shell user can act on."""
    if "surrogate" not in message or command is None:
        return ""
    params = {p.name: p for p in command.params if p.name}
    for name, value in arguments.items():
        for text in value if isinstance(value, tuple) else (value,):
            found = _SURROGATE.search(text) if isinstance(text, str) else None
            if found is None or name not in params:
                continue
            param, char = params[name], found.group()
            what = f"the {name}" if isinstance(param, click.Argument) else "/".join(param.opts)
            at = len(text[: found.start()].encode("utf-8")) + 1  # counted as the shell does
            byte = f" is 0x{ord(char) - 0xDC00:02x}" if char >= "\udc80" else ""
            return f"{what} is not valid UTF-8 (byte {at}{byte}); check your terminal's encoding"
    return ""


def pass_state(fn: F) -> F:
    """Give a command the shared :class:`State` as its first argument."""

    @click.pass_context
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        state = ctx.find_object(State)
        assert state is not None
        state.command, state.arguments = ctx.command, dict(kwargs)
        if kwargs.pop("as_json", False):
            state.as_json = True
            state.__dict__.pop("out", None)
        return fn(state, *args, **kwargs)

    return update_wrapper(wrapper, fn)  # type: ignore[return-value]


def json_option(fn: F) -> F:
    """``--json`` on every command (it is also accepted before the command name)."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print machine-readable JSON instead of tables."
    )(fn)


@click.group(
    cls=RootGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Example:  remembrances --db notes.db kb ingest docs/ && remembrances search 'install'",
)
@click.option(
    "--db",
    type=MemoryLocation(),
    default=None,
    help="Memory file, or postgresql://user@host/db?memory=NAME "
    "[default: $REMEMBRANCES_DB or ./.remembrances/memory.db].",
)
@click.option(
    "--embedder",
    metavar="SPEC",
    default=None,
    help="Embedder spec: local (default), hash:64, openai:MODEL, voyage:MODEL, google:MODEL, "
    "ollama:MODEL [default: the one the file was written with, or $REMEMBRANCES_EMBEDDER].",
)
@click.option(
    "--url",
    envvar="REMEMBRANCES_URL",
    default=None,
    help="Send commands to a running `remembrances serve` instead of opening the file "
    "[default: $REMEMBRANCES_URL; the token comes from $REMEMBRANCES_TOKEN].",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs on errors.")
@click.version_option(package_name="remembrances")
@click.pass_context
def cli(
    ctx: click.Context,
    db: Path | str | None,
    embedder: str | None,
    url: str | None,
    as_json: bool,
    debug: bool,
) -> None:
    """Memory for AI agents in one SQLite file: documents, events and code, searchable
    by meaning and by words."""
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if ctx.invoked_subcommand in SERVING:
        url = None  # a server serves its own file, whatever the shell points at
    elif url and ctx.invoked_subcommand in LOCAL_ONLY:
        raise click.UsageError(
            f"{ctx.invoked_subcommand} works on a local file; run it without --url "
            "(unset REMEMBRANCES_URL)"
        )
    ctx.obj = State(db, embedder, as_json, debug, url or None)


#: Commands that serve the file themselves, and commands that only make sense on one.
SERVING = frozenset({"serve", "serve-mcp"})
LOCAL_ONLY = frozenset({"init", "reembed", "export", "import", "copy"})
