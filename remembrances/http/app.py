"""The HTTP API: one route per public call, JSON in and out.

Routes are thin: they check paths against the allow-list, call the service and
encode its records the way the CLI's ``--json`` does. Errors never escape as
tracebacks: a typed library error becomes its status code and one-line message.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic_core import PydanticSerializationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from ..code.reader import MAX_REFERENCES, MAX_SYMBOLS
from ..errors import InvalidInputError, NotFoundError, RemembrancesError
from ..mcp.roots import AllowedRoots
from ..service import RemembrancesService, source_kinds
from ..validation import check_choices
from . import models as m
from .encode import jsonable, record, records
from .errors import body, one_line, status_for
from .guard import MAX_BODY_BYTES, Guard

log = logging.getLogger(__name__)

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": m.Error, "description": description}
    for status, description in (
        (400, "Invalid input (the message says what to change), or a body that is not JSON"),
        (401, "Missing or wrong bearer token"),
        (404, "No such document, event, project or file"),
        (413, "Request body too large"),
        (415, "Request body not sent as JSON (send Content-Type: application/json)"),
        (422, "Request body or query string does not match the schema"),
        (503, "Storage busy or embedder unavailable"),
    )
}


def _query_names(route: APIRoute) -> tuple[str, ...]:
    """The query parameters a route and its dependencies declare, in their order."""
    names: list[str] = []
    pending = [route.dependant]
    while pending:
        dependant = pending.pop(0)
        names += [param.alias for param in dependant.query_params]
        pending += dependant.dependencies
    return tuple(dict.fromkeys(names))


def known_query_only(request: Request) -> None:
    """Refuse query parameters a route does not take, as bodies refuse unknown fields:
    ``?limt=3`` is a mistake to report, not an option to ignore."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    accepted = _query_names(route)
    unknown = [name for name in dict.fromkeys(request.query_params) if name not in accepted]
    if unknown:
        takes = ", ".join(accepted) or "no query parameters"
        names = ", ".join(map(repr, unknown))
        plural = "s" if len(unknown) > 1 else ""
        message = f"unknown parameter{plural} {names}; this route takes {takes}"
        # the 422 of an unknown body field, through the same handler
        raise RequestValidationError([{"loc": ("query",), "msg": message}])


class _RepeatedField(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _RepeatedField(key)
        seen[key] = value
    return seen


async def each_name_once(request: Request) -> None:
    """Refuse a query parameter or a body field given twice. Python's ``json`` and the
    query string keep the last one silently, so ``?user=chen&user=dara`` read dara's
    events: behind a gateway that adds the caller's own ``user``, the last one wins."""
    counts = Counter(name for name, _ in request.query_params.multi_items())
    repeated = [name for name, n in counts.items() if n > 1]
    if repeated:
        names = ", ".join(map(repr, repeated))
        message = f"parameter {names} given more than once; give each parameter once"
        raise RequestValidationError([{"loc": ("query",), "msg": message}])
    raw = await request.body()
    if b'"' not in raw:  # no object with a key to repeat
        return
    try:  # in a worker thread: a 16 MB body takes a few tenths of a second to read again
        await run_in_threadpool(json.loads, raw, object_pairs_hook=_each_key_once)
    except _RepeatedField as exc:
        message = f"field {exc.name!r} given more than once in an object; give each field once"
        raise RequestValidationError([{"loc": ("body",), "msg": message}]) from None
    except ValueError:  # not JSON: FastAPI's own error says where it breaks
        return


#: What to tell a client whose body is not JSON, or is not sent as JSON.
SEND_JSON = "send one JSON object with 'Content-Type: application/json'"


def unreadable_body(request: Request, exc: RequestValidationError) -> tuple[int, str] | None:
    """The status and message for a body that could not be read as JSON at all, or None
    when the body was read and only its fields are wrong (the 422 of the schema).

    An empty body is a 400 (not a 422 "body: Field required"); malformed JSON is a 400
    that says where it breaks. A body sent without a JSON
    content type (``curl -d`` sends a form) is a 415: FastAPI reads such a body as
    bytes, not JSON, which also keeps a web page from posting to the server with a
    form or ``text/plain`` request that needs no CORS preflight.
    """
    for error in exc.errors():
        if error.get("type") == "missing" and tuple(error.get("loc", ())) == ("body",):
            return 400, f"the body is empty; {SEND_JSON}"
        if error.get("type") == "json_invalid":
            reason = str((error.get("ctx") or {}).get("error") or "not JSON")
            where = _position(exc.body, error.get("loc", ()))
            message = f"the body is not valid JSON: {reason}{where}; {SEND_JSON}"
            return 400, one_line(ValueError(message))
    for error in exc.errors():
        # FastAPI hands the body on as bytes when its content type is not JSON
        if tuple(error.get("loc", ())) == ("body",) and isinstance(error.get("input"), bytes):
            content_type = request.headers.get("content-type")
            sent = f"as {content_type!r}" if content_type else "without a Content-Type"
            message = f"the body was sent {sent}; {SEND_JSON}"
            return 415, one_line(ValueError(message))
    return None


def _position(document: Any, loc: Sequence[Any]) -> str:
    """`` at line L column C`` of the character a JSON decode error points at, if known."""
    pos = loc[-1] if loc else None
    if not isinstance(pos, int) or isinstance(pos, bool):
        return ""
    if not isinstance(document, str):
        return f" at character {pos + 1}"
    line = document.count("\n", 0, pos) + 1
    column = pos - document.rfind("\n", 0, pos)
    return f" at line {line} column {column}"


def _version() -> str:
    try:
        return version("remembrances")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def build_app(
    svc: RemembrancesService,
    roots: Sequence[str] | None = None,
    *,
    token: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    close_on_shutdown: bool = False,
) -> Guard:
    """An ASGI app over ``svc``: routes that read files accept paths under ``roots`` only.
    ``close_on_shutdown`` closes ``svc`` when the server stops (``serve``: a stop by
    SIGTERM left the WAL beside the file, and a copy of the file alone was empty)."""
    allowed = AllowedRoots(roots)
    served_version = _version()  # read once: /health is probed often

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if close_on_shutdown:
            await run_in_threadpool(svc.close)

    api = FastAPI(
        lifespan=lifespan,
        title="remembrances",
        version=served_version,
        description="Memory for AI agents in one SQLite file: a knowledge base, an event "
        "log and a code index, searchable by meaning and by words. Errors are JSON "
        '`{"error": "<ErrorClass>", "message": "<one line>"}`.',
    )
    v1 = APIRouter(
        prefix="/v1",
        responses=ERRORS,
        dependencies=[Depends(known_query_only), Depends(each_name_once)],
    )

    @api.exception_handler(RemembrancesError)
    @api.exception_handler(ValueError)
    @api.exception_handler(OSError)
    async def library_error(request: Request, exc: Exception) -> JSONResponse:
        if isinstance(exc, PydanticSerializationError):  # an answer we cannot encode: our bug
            return await unexpected(request, exc)
        # Only the documented classes are sent: another ValueError or OSError (a
        # dependency's, such as pathspec's pattern error) is input to fix all the same.
        error = type(exc).__name__ if isinstance(exc, RemembrancesError) else "InvalidInputError"
        return JSONResponse(body(error, one_line(exc)), status_code=status_for(exc))

    @api.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        unreadable = unreadable_body(request, exc)
        if unreadable is not None:
            status, message = unreadable
            return JSONResponse(body("InvalidRequest", message), status_code=status)
        problems = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
        message = "; ".join(problems) or "the request does not match the schema"
        return JSONResponse(body("InvalidRequest", " ".join(message.split())), status_code=422)

    @api.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 404:
            error, message = "NotFound", f"no route {request.method} {request.url.path}"
            message += "; the routes are listed at /openapi.json"
        elif exc.status_code == 405:
            error, message = "MethodNotAllowed", f"{request.method} is not allowed here"
        else:
            error = "InvalidRequest"
            message = f"{exc.detail} (send a UTF-8 JSON object)"
        return JSONResponse(
            body(error, one_line(ValueError(message))),
            status_code=exc.status_code,
            headers=exc.headers,
        )

    @api.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        message = f"internal error: {type(exc).__name__}: {one_line(exc)}"
        return JSONResponse(body("InternalError", message), status_code=500)

    @api.get("/health", response_model=m.Health, tags=["server"])
    def health() -> dict[str, str]:
        """Whether the server is up (no token needed)."""
        return {"status": "ok", "version": served_version}

    # -- everything -----------------------------------------------------------------

    @v1.get("/stats", tags=["memory"])
    def stats() -> Any:
        """What the file holds: chunks per source, pending embeddings, embedder, size."""
        return jsonable(svc.stats())

    @v1.post("/check", tags=["memory"])
    def check(req: m.CheckRequest) -> Any:
        """Verify (and with ``repair``, rebuild) the full-text and vector indexes."""
        return jsonable(svc.check(repair=req.repair).to_dict())

    @v1.post("/compact", tags=["memory"])
    def compact() -> Any:
        """Drop cached vectors nothing uses and give the space back to the disk."""
        return jsonable(svc.compact())

    @v1.post("/search", tags=["memory"])
    def search(req: m.SearchRequest) -> Any:
        """Search documents, events and code at once, by meaning and words."""
        hits = svc.store.search(
            req.query,
            mode=req.mode,
            limit=req.limit,
            kind=check_choices(req.kinds, source_kinds(svc), "kinds") if req.kinds else None,
            collection=req.collections or None,
            min_score=req.min_score,
            since=req.since,
            until=req.until,
            kind_where={"event": svc.events.scope(req.user, req.session)},
        )
        return records(hits)

    @v1.post("/enrich", response_model=m.EnrichResponse, tags=["memory"])
    def enrich(req: m.EnrichRequest) -> Any:
        """The memory that helps with a prompt, as one compact block (empty when none)."""
        context = svc.enrich_context(
            req.prompt,
            user=req.user,
            session=req.session,
            project=req.project,
            collections=req.collections,
            tz=req.tz,
        )
        # jsonable: a prompt with a lone surrogate (JSON "\ud800") is echoed with U+FFFD
        # in its place, as the CLI's --json prints it, instead of failing to encode
        return jsonable({"prompt": req.prompt, "context": context})

    # -- knowledge base ---------------------------------------------------------------

    def visible_file(path: str) -> FilePath | None:
        """``path`` resolved if it is a file inside the allowed roots, else None: a
        client on another machine sends paths the server cannot see, and its text
        is stored all the same."""
        try:
            found = allowed.check(path)
        except (InvalidInputError, NotFoundError):
            return None
        return found if found.is_file() else None

    @v1.post("/kb/documents", tags=["kb"])
    def kb_add(req: m.DocumentRequest) -> Any:
        """Add a document, or replace the one with the same source."""
        return record(
            svc.kb.add(
                req.text,
                source=req.source,
                title=req.title,
                metadata=req.metadata,
                collection=req.collection,
                file=None if req.file is None else visible_file(req.file),
            )
        )

    @v1.get("/kb/resolve", tags=["kb"])
    def kb_resolve(spelling: str, collection: str = "default") -> Any:
        """The source of the one document a spelling names (its source, its file's path, or
        a path ending with it); 404 naming the candidates when none or several match."""
        return {"source": svc.kb.resolve(spelling, collection=collection)}

    @v1.get("/kb/source-of-file", tags=["kb"])
    def kb_source_of_file(path: str, collection: str = "default") -> Any:
        """The source of the document read from the file at ``path`` (an absolute path on
        the server), or null when no document was read from it."""
        if not path.strip() or "\x00" in path:
            raise InvalidInputError("path must be a file's absolute path on the server")
        return {"source": svc.kb.source_of_file(path, collection=collection)}

    @v1.get("/kb/documents", tags=["kb"])
    def kb_list(collection: str | None = None) -> Any:
        """The stored documents (without their text)."""
        return records(svc.kb.list(collection=collection))

    @v1.get("/kb/document", tags=["kb"])
    def kb_get(source: str, collection: str = "default") -> Any:
        """One document with its text and metadata."""
        return record(svc.kb.get(source, collection=collection))

    @v1.delete("/kb/document", tags=["kb"])
    def kb_delete(source: str, collection: str = "default") -> Any:
        """Remove a document (404 if there is none)."""
        if not svc.kb.delete(source, collection=collection):
            raise NotFoundError(f"no document {source!r} in collection {collection!r}")
        return {"source": source, "collection": collection, "deleted": True}

    @v1.post("/kb/ingest", tags=["kb"])
    def kb_ingest(req: m.IngestRequest) -> Any:
        """Ingest a file or directory tree the server can read (inside its allowed roots)."""
        target = allowed.check(req.path)
        return record(
            svc.kb.ingest(
                target,
                collection=req.collection,
                patterns=req.patterns,
                include_hidden=req.include_hidden,
            )
        )

    @v1.post("/kb/search", tags=["kb"])
    def kb_search(req: m.KBSearchRequest) -> Any:
        """Search documents by meaning and keywords."""
        hits = svc.kb.search(
            req.query,
            limit=req.limit,
            collection=req.collection,
            where=req.where,
            min_score=req.min_score,
            mode=req.mode,
        )
        return records(hits)

    # -- events ---------------------------------------------------------------------

    @v1.post("/events", tags=["events"])
    def events_log(req: m.EventRequest) -> Any:
        """Record an event (the same subject, content and time are stored once)."""
        return record(
            svc.events.log(
                req.content, subject=req.subject, at=req.at, metadata=req.metadata, user=req.user
            )
        )

    @v1.get("/events", tags=["events"])
    def events_list(
        subject: str | None = None,
        since: str | None = None,
        until: str | None = None,
        last: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 10,
        session: str | None = None,
        user: str | None = None,
        offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
    ) -> Any:
        """Events, newest first, optionally within a subject, a conversation, a user's
        events and a time window; ``offset`` pages past the first ``limit``."""
        found = svc.events.list(
            subject=subject, since=since, until=until, last=last, limit=limit,
            session=session, user=user, offset=offset,
        )  # fmt: skip
        return records(found)

    @v1.post("/events/conversations", tags=["events"])
    def events_log_conversation(req: m.ConversationRequest) -> Any:
        """Log chat messages as the turns of a session (again: only the new turns are added)."""
        logged = svc.events.log_conversation(
            req.messages, session=req.session, user=req.user, at=req.at, metadata=req.metadata
        )
        return jsonable(logged.to_dict())

    @v1.post("/events/search", tags=["events"])
    def events_search(req: m.EventSearchRequest) -> Any:
        """Search events by text and meaning within a time window, a conversation or a
        user's events; ``window`` brings each turn found with the turns around it."""
        hits = svc.events.search(
            req.query,
            subject=req.subject,
            since=req.since,
            until=req.until,
            last=req.last,
            limit=req.limit,
            recency=req.recency,
            min_score=req.min_score,
            mode=req.mode,
            session=req.session,
            user=req.user,
            window=req.window,
        )
        return records(hits)

    @v1.delete("/events/{event_id}", tags=["events"])
    def events_delete(event_id: Annotated[int, Path(ge=1)]) -> Any:
        """Remove one event by id (404 if there is none)."""
        if not svc.events.delete(event_id):
            raise NotFoundError(f"no event with id {event_id}")
        return {"deleted": 1}

    @v1.post("/events/prune", tags=["events"])
    def events_prune(req: m.PruneRequest) -> Any:
        """Delete events that happened before a cut-off."""
        return {"deleted": svc.events.prune(older_than=req.older_than, subject=req.subject)}

    @v1.post("/events/forget", tags=["events"])
    def events_forget(req: m.ForgetRequest) -> Any:
        """Delete a session's turns, or everything logged for a user, with nothing of
        them left (not even the digests of removed turns): give one of the two."""
        if (req.session is None) == (req.user is None):
            raise InvalidInputError("give either session or user to forget, not both or neither")
        if req.session is not None:
            return {"deleted": svc.events.forget_session(req.session)}
        return {"deleted": svc.events.forget_user(str(req.user))}

    @v1.get("/events/subjects", tags=["events"])
    def events_subjects() -> Any:
        """Distinct subjects with their event counts."""
        return jsonable(svc.events.subjects())

    @v1.get("/events/sessions", tags=["events"])
    def events_sessions(user: str | None = None) -> Any:
        """Conversations (sessions) with their turn counts, most recently active first;
        ``user``: only that user's."""
        return jsonable(svc.events.sessions(user=user))

    # -- code -------------------------------------------------------------------------

    @v1.post("/code/index", tags=["code"])
    def code_index(req: m.IndexRequest) -> Any:
        """Index (or incrementally re-index) a repository inside the allowed roots."""
        target = allowed.check(req.path)
        report = svc.code.index(
            target, project=req.project, languages=req.languages, embed=req.embed
        )
        return record(report)

    @v1.post("/code/backfill", tags=["code"])
    def code_backfill(req: m.BackfillRequest) -> Any:
        """Embed the chunks of a project still waiting for vectors (after an index
        without embedding); returns how many got one and how many still wait."""
        done = svc.code.backfill(req.project, limit=req.limit)
        pending = svc.code.stats(req.project).pending_embeddings
        return {"project": req.project, "embedded": done, "pending_embeddings": pending}

    @v1.get("/code/stats", tags=["code"])
    def code_stats(project: str) -> Any:
        """One project's counts: files, symbols, chunks, chunks waiting for vectors."""
        return record(svc.code.stats(project))

    @v1.post("/code/map", tags=["code"])
    def code_map(req: m.RepoMapRequest) -> Any:
        """The project's most important files and signatures, ranked, within a token budget."""
        return record(
            svc.code.repo_map(req.project, budget_tokens=req.budget_tokens, focus=req.focus)
        )

    @v1.post("/code/search", tags=["code"])
    def code_search(req: m.CodeSearchRequest) -> Any:
        """Search code by plain words or identifiers."""
        hits = svc.code.search(
            req.query,
            project=req.project,
            limit=req.limit,
            languages=req.languages,
            kinds=req.kinds,
            path=req.path,
            min_score=req.min_score,
            mode=req.mode,
        )
        return records(hits)

    @v1.get("/code/symbols", tags=["code"])
    def code_symbols(
        name: str,
        project: str | None = None,
        kind: str | None = None,
        limit: Annotated[int, Query(ge=1, le=MAX_SYMBOLS)] = 100,
    ) -> Any:
        """Symbols by name or qualified name (``Session.send``), the first ``limit``."""
        return records(svc.code.find_symbol(name, project=project, kind=kind, limit=limit))

    @v1.get("/code/outline", tags=["code"])
    def code_outline(file: str, project: str | None = None) -> Any:
        """The nested symbols of one indexed file (a path relative to its project)."""
        return records(svc.code.outline(file, project=project))

    @v1.get("/code/references", tags=["code"])
    def code_references(
        name: str,
        project: str | None = None,
        limit: Annotated[int, Query(ge=1, le=MAX_REFERENCES)] = 1000,
    ) -> Any:
        """Where an identifier occurs in indexed code, the first ``limit`` places."""
        return records(svc.code.references(name, project=project, limit=limit))

    @v1.get("/code/projects", tags=["code"])
    def code_projects() -> Any:
        """The indexed projects with their roots and counts."""
        return records(svc.code.projects())

    # ``:path``: a project name may hold slashes (``acme/app``), and the server decodes
    # a client's ``acme%2Fapp`` to them before routing
    @v1.delete("/code/projects/{project:path}", tags=["code"])
    def code_remove(project: str) -> Any:
        """Remove a project with its files, symbols and chunks (the name may hold slashes)."""
        return {"project": project, "files": svc.code.remove(project)}

    api.include_router(v1)
    return Guard(api, token=token, max_body_bytes=max_body_bytes)
