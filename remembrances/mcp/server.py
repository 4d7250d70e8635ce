"""Tools over the public API, one small function each.

stdout belongs to the protocol: logs go to stderr, and nothing here prints. A
failing call becomes a tool error (``is_error``) with the library's message; the
server keeps running.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AfterValidator, Field, ValidationError

from .. import __version__
from ..code.reader import MAX_REFERENCES, MAX_SYMBOLS
from ..code.repo_map import DEFAULT_BUDGET_TOKENS
from ..errors import NotFoundError, RemembrancesError
from ..service import RemembrancesService, source_kinds
from ..validation import check_choices
from . import text as render
from .lone_surrogates import filter_stdin
from .roots import AllowedRoots

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
Long-term memory in one local file: a knowledge base of documents, a log of events
and an index of code repositories, all searchable by meaning and by words.
Call memory_enrich_context with the user's request to get the memory that helps with
it; use the kb_*, events_* and code_* tools for specific lookups and to remember things."""

#: Every tool is named ``<area>_<action>``: kb_, events_, code_ or memory_ (all of
#: it). These earlier names still answer, for one release, as listed aliases.
ALIASES = {
    "save_event": "events_log",
    "log_conversation": "events_log_conversation",
    "search_events": "events_search",
    "search_memory": "memory_search",
    "enrich_context": "memory_enrich_context",
}

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DELETE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

# strict: ``true``, ``"3"`` or ``3.0`` for a number is a mistake to report, not to guess
Limit = Annotated[int, Field(ge=1, le=100, strict=True, description="Maximum number of results.")]
MinScore = Annotated[float, Field(ge=0, le=1, strict=True, allow_inf_nan=False)]
Mode = Literal["hybrid", "vector", "text"]
#: The plural spellings are accepted too: "events" is what people type.
SourceKind = Literal["kb", "event", "code", "events"]


#: Scopes: events belong to a user and a conversation; code to an indexed project.
def _readable_id(value: str | None) -> str | None:
    """An id read from the client's line: the stdio filter turns a lone surrogate into
    U+FFFD (lone_surrogates.py), and "zed\\ud800" and "zed\\udfff" were one user, where
    Python and HTTP refuse both."""
    if value is not None and "\ufffd" in value:
        raise ValueError(
            "an id holds U+FFFD, the mark of a character that could not be read (a lone "
            "surrogate); send the id as valid text"
        )
    return value


ReadableId = AfterValidator(_readable_id)
UserScope = Annotated[str | None, Field(description="Only this user's events."), ReadableId]
SessionScope = Annotated[
    str | None, Field(description="Only this conversation's events."), ReadableId
]
ProjectScope = Annotated[str | None, Field(description="Only this indexed project's code.")]
CollectionsScope = Annotated[
    list[str] | None, Field(description="Only the documents of these collections.")
]


def _result(message: str, data: Any) -> CallToolResult:
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(
        content=[TextContent(type="text", text=message)], structured_content=structured
    )


def _tool_errors(fn: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
    """Library errors become tool errors with their message; anything else is logged."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except (RemembrancesError, ValueError, OSError) as exc:
            raise ToolError(_for_a_model(str(exc) or type(exc).__name__)) from exc
        except Exception as exc:
            log.exception("tool %s failed", fn.__name__)
            raise ToolError(
                f"internal error in {fn.__name__}: {type(exc).__name__}: {exc}"
            ) from exc

    return wrapper


#: Library hints that name a command a model cannot run, and the tool that does it.
_TOOL_HINTS = {"`remembrances kb list` (Python: kb.list())": "the kb_list_documents tool"}


def _for_a_model(message: str) -> str:
    for command, tool_name in _TOOL_HINTS.items():
        message = message.replace(command, tool_name)
    return message


def _hits(items: Any, empty: str) -> CallToolResult:
    message, data = render.hits(items, empty=empty)
    return _result(message, {"results": data, "count": len(data)})


def _cut(result: CallToolResult, found: int, limit: int, what: str) -> CallToolResult:
    """Say in the text when the limit may have cut the list: cut without a word, the
    first 100 of 929 ``__init__`` methods looked like all of them."""
    if found >= limit:
        block = result.content[0]
        assert isinstance(block, TextContent)
        block.text += f"\n\n(the first {limit:,} {what}; there may be more: pass a larger limit)"
    return result


def _summary(obj: Any) -> CallToolResult:
    message, data = render.summary(obj)
    return _result(message, data)


def _argument_errors(tool: str, error: ValidationError) -> str:
    """pydantic's report on bad arguments, as one line a model can act on."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return f"bad arguments for {tool}: " + "; ".join(problems)


class _Server(MCPServer[Any]):
    """The SDK's server, with argument errors on one line and unknown arguments refused."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parameters: dict[str, list[str]] = {}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | Any:
        known = self.parameters.get(name)
        unknown = sorted(set(arguments) - set(known)) if known is not None else []
        if unknown:  # silently ignoring them would drop what the caller meant
            raise ToolError(
                f"{name} has no argument {', '.join(map(repr, unknown))}; "
                f"it takes: {', '.join(known or []) or 'none'}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_argument_errors(name, exc.__cause__)) from exc.__cause__
            raise


def build_server(
    svc: RemembrancesService, roots: Sequence[str] | None = None, *, name: str = "remembrances"
) -> MCPServer[Any]:
    """An MCP server over ``svc``; ingest and index tools accept paths under ``roots`` only."""
    allowed = AllowedRoots(roots)
    server = _Server(name, instructions=INSTRUCTIONS, log_level="WARNING", version=__version__)

    registered: dict[str, tuple[Callable[..., CallToolResult], ToolAnnotations]] = {}

    def add(
        fn: Callable[..., CallToolResult],
        name: str,
        description: str | None,
        notes: ToolAnnotations,
    ) -> None:
        server.add_tool(_tool_errors(fn), name=name, description=description, annotations=notes)
        server.parameters[name] = list(inspect.signature(fn).parameters)

    def tool(annotations: ToolAnnotations) -> Callable[[Callable[..., CallToolResult]], Any]:
        def register(fn: Callable[..., CallToolResult]) -> Any:
            add(fn, fn.__name__, fn.__doc__, annotations)
            registered[fn.__name__] = (fn, annotations)
            return fn

        return register

    # -- knowledge base ---------------------------------------------------------------

    @tool(WRITE)
    def kb_add_document(
        text: Annotated[str, Field(description="The document text (Markdown welcome).")],
        source: Annotated[
            str, Field(description="A stable name or path; re-adding it replaces the document.")
        ],
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        collection: str = "default",
    ) -> CallToolResult:
        """Add a document to the knowledge base, or replace the one with the same source."""
        report = svc.kb.add(
            text, source=source, title=title, metadata=metadata, collection=collection
        )
        return _summary(report)

    @tool(WRITE)
    def kb_ingest_path(
        path: Annotated[str, Field(description="A file or directory inside the allowed roots.")],
        collection: str = "default",
        patterns: list[str] | None = None,
        include_hidden: Annotated[
            bool,
            Field(description="Also hidden files and folders (names starting with '.')."),
        ] = False,
    ) -> CallToolResult:
        """Ingest a file or a directory tree of text documents (Markdown, text, reST...);
        unchanged files are skipped, deleted ones removed."""
        target = allowed.check(path)
        report = svc.kb.ingest(
            target, collection=collection, patterns=patterns, include_hidden=include_hidden
        )
        return _summary(report)

    @tool(READ)
    def kb_search(
        query: str,
        limit: Limit = 5,
        collection: str | None = None,
        min_score: MinScore | None = None,
        mode: Mode = "hybrid",
    ) -> CallToolResult:
        """Search the knowledge base by meaning and keywords."""
        hits = svc.kb.search(
            query, limit=limit, collection=collection, min_score=min_score, mode=mode
        )
        return _hits(hits, "No matching documents.")

    @tool(READ)
    def kb_get_document(source: str, collection: str | None = None) -> CallToolResult:
        """Get a stored document's text and metadata by its source (or its file path)."""
        kwargs = {} if collection is None else {"collection": collection}
        return _summary(svc.kb.get(source, **kwargs))

    @tool(READ)
    def kb_list_documents(
        collection: str | None = None,
        limit: Annotated[
            int, Field(ge=1, le=1000, strict=True, description="At most this many.")
        ] = 100,
    ) -> CallToolResult:
        """List the stored documents: source, collection, title, size (no text)."""
        docs = render.plain(svc.kb.list(collection=collection, limit=limit))
        lines = [
            f"{d['collection']}/{d['source']}" + (f" ({d['title']})" if d.get("title") else "")
            for d in docs
        ]
        return _result("\n".join(lines) or "No documents.", {"documents": docs})

    @tool(DELETE)
    def kb_delete_document(source: str, collection: str | None = None) -> CallToolResult:
        """Delete a document from the knowledge base (by source, or its file path)."""
        kwargs = {} if collection is None else {"collection": collection}
        try:
            source = svc.kb.resolve(source, **kwargs)
        except NotFoundError as exc:  # its message names the documents that do exist
            raise ToolError(f"{_for_a_model(str(exc))}; nothing was deleted") from exc
        if not svc.kb.delete(source, **kwargs):
            raise ToolError(
                f"no document {source!r} in collection {collection or 'default'!r}; "
                "nothing was deleted"
            )
        return _result(f"deleted {source}", {"source": source, "deleted": True})

    # -- events ---------------------------------------------------------------------

    @tool(WRITE)
    def events_log(
        content: Annotated[str, Field(description="What happened, in a sentence or a paragraph.")],
        subject: Annotated[
            str, Field(description="What it is about (a topic, a person, a ticket).")
        ] = "",
        at: Annotated[
            str | None, Field(description="When it happened (ISO 8601); default now.")
        ] = None,
        metadata: dict[str, Any] | None = None,
        user: Annotated[
            str | None,
            Field(
                description="Whose memory it is: a search or enrich scoped to that user finds it."
            ),
            ReadableId,
        ] = None,
    ) -> CallToolResult:
        """Record an event in the temporal log (identical events are stored once)."""
        return _summary(
            svc.events.log(content, subject=subject, at=at, metadata=metadata, user=user)
        )

    @tool(WRITE)
    def events_log_conversation(
        messages: Annotated[
            list[dict[str, Any]],
            Field(
                description="Chat messages in order: {'role', 'content'} (content a string or "
                "a list of {'type': 'text', 'text'} blocks) or {'speaker', 'text'}; optional "
                "'name', 'at' (ISO 8601), 'metadata', 'caption' (of a shared image). Tool "
                "calls and tool results may be sent as they are: they are left out."
            ),
        ],
        session: Annotated[str, Field(description="The conversation's id."), ReadableId],
        user: Annotated[
            str | None, Field(description="Whose conversation it is."), ReadableId
        ] = None,
        at: Annotated[
            str | None,
            Field(
                description="When messages without a time happened; default now. It does "
                "not make them new: messages repeating the session's last ones are taken for "
                "a re-send unless each has its own 'at'."
            ),
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(description="Metadata for every turn (a message's own is merged over it)."),
        ] = None,
    ) -> CallToolResult:
        """Remember a conversation: each message becomes a turn of the session; sending the
        whole transcript again adds only the new turns."""
        logged = svc.events.log_conversation(
            messages, session=session, user=user, at=at, metadata=metadata
        )
        message = (
            f"session {logged.session}: {len(logged.added)} turn(s) added, "
            f"{logged.already_stored} already stored"
            + (
                f", {logged.skipped} left out (tool calls and results, instructions)"
                if logged.skipped
                else ""
            )
        )
        return _result(message, render.plain(logged))

    @tool(READ)
    def events_search(
        query: Annotated[
            str | None, Field(description="Words to look for; omit to list newest first.")
        ] = None,
        subject: str | None = None,
        since: Annotated[
            str | None, Field(description="ISO time; only events at or after it.")
        ] = None,
        until: Annotated[
            str | None, Field(description="ISO time; only events at or before it.")
        ] = None,
        last: Annotated[str | None, Field(description="A window such as 30m, 12h, 7d, 4w.")] = None,
        limit: Limit = 10,
        session: SessionScope = None,
        user: UserScope = None,
        window: Annotated[
            int,
            Field(
                ge=0,
                le=20,
                strict=True,
                description="Turns around each conversation hit to include.",
            ),
        ] = 0,
        min_score: MinScore | None = None,
        mode: Mode = "hybrid",
        recency: Annotated[
            str | None,
            Field(description="A half-life such as 3d: newer events rank higher."),
        ] = None,
    ) -> CallToolResult:
        """Search or list events by text, subject, conversation, user and time window."""
        hits = svc.events.search(
            query,
            subject=subject,
            since=since,
            until=until,
            last=last,
            limit=limit,
            session=session,
            user=user,
            window=window,
            min_score=min_score,
            mode=mode,
            recency=recency,
        )
        return _hits(hits, "No matching events.")

    # -- code -------------------------------------------------------------------------

    @tool(WRITE)
    def code_index_project(
        path: Annotated[str, Field(description="A repository directory inside the allowed roots.")],
        project: Annotated[
            str | None, Field(description="Project name; default the directory name.")
        ] = None,
        languages: list[str] | None = None,
    ) -> CallToolResult:
        """Index (or incrementally re-index) a code repository for code_* searches."""
        target = allowed.check(path)
        report = svc.code.index(target, project=project, languages=languages)
        return _summary(report)

    @tool(READ)
    def code_search(
        query: Annotated[str, Field(description="Plain words or identifiers.")],
        project: str | None = None,
        limit: Limit = 10,
        languages: list[str] | None = None,
        kinds: list[str] | None = None,
        path: Annotated[
            str | None, Field(description="Only files under this relative path.")
        ] = None,
        min_score: MinScore = 0.0,
        mode: Mode = "hybrid",
    ) -> CallToolResult:
        """Search indexed code; each hit has the symbol, its file:lines and its code."""
        hits = svc.code.search(
            query,
            project=project,
            limit=limit,
            languages=languages,
            kinds=kinds,
            path=path,
            min_score=min_score,
            mode=mode,
        )
        return _hits(hits, "No matching code.")

    @tool(READ)
    def code_find_symbol(
        name: Annotated[str, Field(description="A name or qualified name, e.g. Session.send.")],
        project: str | None = None,
        kind: str | None = None,
        limit: Annotated[int, Field(ge=1, le=MAX_SYMBOLS, strict=True)] = 100,
    ) -> CallToolResult:
        """Find symbols by name or qualified name (the first ``limit``)."""
        found = svc.code.find_symbol(name, project=project, kind=kind, limit=limit)
        return _cut(_hits(found, f"No symbol {name!r}."), len(found), limit, "symbols")

    @tool(READ)
    def code_outline(
        file: Annotated[str, Field(description="A file path relative to the project root.")],
        project: str | None = None,
    ) -> CallToolResult:
        """The nested symbol outline of one indexed file."""
        message, data = render.outline(svc.code.outline(file, project=project))
        return _result(message, {"file": file, "outline": data})

    @tool(READ)
    def code_references(
        name: str,
        project: str | None = None,
        limit: Annotated[int, Field(ge=1, le=MAX_REFERENCES, strict=True)] = 1000,
    ) -> CallToolResult:
        """Where an identifier occurs in indexed code (syntax-aware, not substring; the
        first ``limit`` places)."""
        found = svc.code.references(name, project=project, limit=limit)
        return _cut(_hits(found, f"No references to {name!r}."), len(found), limit, "places")

    @tool(READ)
    def code_repo_map(
        project: str,
        budget_tokens: Annotated[int, Field(ge=1, le=100_000, strict=True)] = DEFAULT_BUDGET_TOKENS,
        focus: Annotated[
            list[str] | None,
            Field(description="Files or symbol names to rank the map towards."),
        ] = None,
    ) -> CallToolResult:
        """A ranked map of a project: its most important files and signatures, in a budget."""
        result = svc.code.repo_map(project, budget_tokens=budget_tokens, focus=focus)
        return _result(result.text or "Nothing fits in the budget.", result.to_dict())

    @tool(READ)
    def code_projects() -> CallToolResult:
        """The indexed projects with their roots and counts."""
        projects = render.plain(svc.code.projects())
        return _result(
            "\n".join(render.summary(p)[0].replace("\n", "; ") for p in projects) or "No projects.",
            {"projects": projects},
        )

    # -- everything -----------------------------------------------------------------

    @tool(READ)
    def memory_search(
        query: str,
        limit: Limit = 10,
        kinds: Annotated[
            list[SourceKind] | None,
            Field(description="Only these sources: kb (documents), event, code."),
        ] = None,
        mode: Mode = "hybrid",
        min_score: MinScore = 0.0,
        user: UserScope = None,  # documents and code are shared: they stay
        session: SessionScope = None,
        collections: Annotated[
            list[str] | None, Field(description="Only these collections (or code projects).")
        ] = None,
        since: Annotated[
            str | None,
            Field(description="ISO time; only what happened at or after it (events only)."),
        ] = None,
        until: Annotated[
            str | None,
            Field(description="ISO time; only what happened at or before it (events only)."),
        ] = None,
    ) -> CallToolResult:
        """Search all memory at once: documents, events and code."""
        kind = check_choices(kinds, source_kinds(svc), "kind") if kinds else None
        hits = svc.store.search(
            query,
            limit=limit,
            kind=kind,
            mode=mode,
            min_score=min_score,
            collection=collections or None,
            since=since,
            until=until,
            kind_where={"event": svc.events.scope(user, session)},
        )
        return _hits(hits, "Nothing in memory matches.")

    @tool(READ)
    def memory_enrich_context(
        prompt: Annotated[str, Field(description="The user's request, as they wrote it.")],
        user: UserScope = None,
        session: SessionScope = None,
        project: ProjectScope = None,
        collections: CollectionsScope = None,
        tz: Annotated[
            str | None,
            Field(
                description=(
                    'The user\'s IANA time zone ("America/New_York"), whose days '
                    '"yesterday" means; default: the server\'s.'
                )
            ),
        ] = None,
    ) -> CallToolResult:
        """The memory that helps answer a request, as one compact block (empty when none)."""
        context = svc.enrich_context(
            prompt, user=user, session=session, project=project, collections=collections, tz=tz
        )
        return _result(context or "Nothing relevant in memory.", {"context": context})

    @tool(READ)
    def memory_stats() -> CallToolResult:
        """What the memory holds: chunks per source, pending embeddings, embedder."""
        stats = dict(svc.stats())
        stats.pop("path", None)
        return _summary(stats)

    for old, new in ALIASES.items():
        fn, annotations = registered[new]
        notice = f"Deprecated alias of {new} (this name goes away in the next release). "
        add(fn, old, notice + (fn.__doc__ or ""), annotations)

    return server


def serve(
    svc: RemembrancesService,
    roots: Sequence[str] | None = None,
    *,
    transport: Literal["stdio", "streamable-http"] = "stdio",
    port: int = 8765,
) -> None:
    """Run until the client disconnects. HTTP binds to 127.0.0.1 only."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server = build_server(svc, roots)
    if transport == "stdio":
        filter_stdin()  # a lone surrogate escape must not cost a request its answer
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)
