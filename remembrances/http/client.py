"""A thin client of the HTTP API with the service's shape, for the CLI's ``--url``.

It answers the calls the CLI makes (``kb.search``, ``events.log``, ``stats`` ...)
with the records the server sent, as plain dicts, and raises the library's typed
errors again from the server's error answers. Only the standard library is
imported: a hook pointed at a server should pay for nothing else.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors
from ..storage.reports import CompactReport

if TYPE_CHECKING:
    from ..progress import Progress

TIMEOUT_SECONDS = 600.0  # indexing a large repository is one request


class RemoteError(errors.RemembrancesError):
    """The server cannot be reached, or answered something that is not the API."""


class Client:
    """JSON over HTTP to one server; ``token`` is sent as a bearer token."""

    def __init__(self, url: str, *, token: str | None = None) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise errors.InvalidInputError(
                f"{url!r} is not a server URL; give one like http://127.0.0.1:8766"
            )
        self.url = url.rstrip("/")
        self.token = token

    def call(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
    ) -> Any:
        url = self.url + path
        params = {k: v for k, v in (query or {}).items() if v is not None}
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else _encode(body)
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise _typed(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RemoteError(
                f"cannot reach the server at {self.url} ({reason}); start it with "
                "`remembrances serve` or unset REMEMBRANCES_URL / --url"
            ) from None
        except ValueError as exc:
            raise RemoteError(f"{self.url} answered something that is not JSON: {exc}") from None


def _encode(body: Mapping[str, Any]) -> bytes:
    """The body as UTF-8 JSON; times as ISO text, anything else not JSON is the caller's error."""

    def plain(value: Any) -> Any:
        if isinstance(value, datetime):
            return value.isoformat()
        kind = "binary data; pass text" if isinstance(value, bytes | bytearray) else "not JSON"
        raise errors.InvalidInputError(f"cannot send a {type(value).__name__}: {kind}")

    try:
        return json.dumps(dict(body), default=plain, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise errors.InvalidInputError(f"the request is not valid Unicode: {exc.reason}") from None
    except (ValueError, RecursionError) as exc:
        raise errors.InvalidInputError(f"the request cannot be sent as JSON: {exc}") from None


def _typed(exc: urllib.error.HTTPError) -> errors.RemembrancesError:
    """The library error the server reported (its class by name), with its message."""
    try:
        answer = json.loads(exc.read())
        name, message = str(answer["error"]), str(answer["message"])
    except (ValueError, KeyError, TypeError, OSError):
        return RemoteError(f"the server answered HTTP {exc.code} {exc.reason}")
    kind = getattr(errors, name, None)
    if isinstance(kind, type) and issubclass(kind, errors.RemembrancesError):
        return kind(message)
    if exc.code == 404:
        return errors.NotFoundError(message)
    if exc.code in (400, 413, 422):
        return errors.InvalidInputError(message)
    return RemoteError(message)


def _absolute(path: str | Path) -> str:
    """The server may run elsewhere in the tree: send paths it can resolve."""
    return str(Path(path).expanduser().resolve())


class _KB:
    def __init__(self, client: Client) -> None:
        self._c = client

    def add(self, text: str, *, source: str, title: str | None = None,
            metadata: Mapping[str, Any] | None = None, collection: str = "default",
            file: str | Path | None = None) -> Any:  # fmt: skip
        body = {"text": text, "source": source, "title": title, "collection": collection}
        if file is not None:  # recorded if the server can see it (inside its roots)
            body["file"] = _absolute(file)
        return self._c.call("POST", "/v1/kb/documents", {**body, "metadata": metadata})

    def resolve(self, spelling: str, *, collection: str = "default") -> str:
        query = {"spelling": spelling, "collection": collection}
        return str(self._c.call("GET", "/v1/kb/resolve", query=query)["source"])

    def source_of_file(self, path: str | Path, *, collection: str = "default") -> str | None:
        query = {"path": _absolute(path), "collection": collection}
        source = self._c.call("GET", "/v1/kb/source-of-file", query=query)["source"]
        return None if source is None else str(source)

    def ingest(self, path: str | Path, *, collection: str = "default",
               patterns: Sequence[str] | None = None, include_hidden: bool = False,
               progress: Progress | None = None) -> Any:  # fmt: skip
        """The server reports no progress: a bar given as ``progress`` stays indeterminate."""
        body: dict[str, Any] = {"path": _absolute(path), "collection": collection,
                                "patterns": patterns}  # fmt: skip
        if include_hidden:  # only when asked: an older server refuses the field
            body["include_hidden"] = True
        return self._c.call("POST", "/v1/kb/ingest", body)

    def search(self, query: str, *, limit: int = 5, collection: str | None = None,
               min_score: float | None = None, mode: str = "hybrid") -> Any:  # fmt: skip
        body = {"query": query, "limit": limit, "collection": collection, "mode": mode}
        return self._c.call("POST", "/v1/kb/search", {**body, "min_score": min_score})

    def get(self, source: str, *, collection: str = "default") -> Any:
        return self._c.call(
            "GET", "/v1/kb/document", query={"source": source, "collection": collection}
        )

    def delete(self, source: str, *, collection: str = "default") -> bool:
        try:
            self._c.call(
                "DELETE", "/v1/kb/document", query={"source": source, "collection": collection}
            )
        except errors.NotFoundError:
            return False
        return True

    def list(self, *, collection: str | None = None) -> Any:
        return self._c.call("GET", "/v1/kb/documents", query={"collection": collection})

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.InvalidInputError(_LOCAL_ONLY.format(what="watch"))


class _Events:
    def __init__(self, client: Client) -> None:
        self._c = client

    def log(self, content: str, *, subject: str = "", at: str | None = None,
            metadata: Mapping[str, Any] | None = None, user: str | None = None) -> Any:  # fmt: skip
        body = {"content": content, "subject": subject, "at": at, "metadata": metadata,
                "user": user}  # fmt: skip
        return self._c.call("POST", "/v1/events", body)

    def search(self, query: str | None = None, **options: Any) -> Any:
        return self._c.call("POST", "/v1/events/search", {"query": query, **options})

    def log_conversation(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        session: str,
        user: str | None = None,
        at: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> RemoteConversation:
        if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
            raise errors.InvalidInputError("messages must be a list of chat messages")
        body = {"messages": list(messages), "session": session, "user": user, "at": at,
                "metadata": metadata}  # fmt: skip
        logged = RemoteConversation(self._c.call("POST", "/v1/events/conversations", body))
        if progress is not None:  # one request: all at once
            progress("embedding", len(messages), len(messages))
        return logged

    def list(self, **window: Any) -> Any:
        return self._c.call("GET", "/v1/events", query=window)

    def delete(self, event_id: int) -> bool:
        try:
            self._c.call("DELETE", f"/v1/events/{int(event_id)}")
        except errors.NotFoundError:
            return False
        return True

    def prune(self, *, older_than: str) -> int:
        return int(self._c.call("POST", "/v1/events/prune", {"older_than": older_than})["deleted"])

    def forget_session(self, session: str) -> int:
        return int(self._c.call("POST", "/v1/events/forget", {"session": session})["deleted"])

    def forget_user(self, user: str) -> int:
        return int(self._c.call("POST", "/v1/events/forget", {"user": user})["deleted"])

    def subjects(self) -> Any:
        return self._c.call("GET", "/v1/events/subjects")

    def sessions(self, *, user: str | None = None) -> Any:
        return self._c.call("GET", "/v1/events/sessions", query={"user": user})


class _Code:
    def __init__(self, client: Client) -> None:
        self._c = client

    def index(self, path: str | Path, *, project: str | None = None,
              languages: Sequence[str] | None = None, embed: bool = True,
              progress: Progress | None = None) -> Any:  # fmt: skip
        """The server reports no progress: a bar given as ``progress`` stays indeterminate."""
        body: dict[str, Any] = {"path": _absolute(path), "project": project,
                                "languages": languages}  # fmt: skip
        if not embed:  # only when asked: a server older than backfill refuses the field
            body["embed"] = False
        return self._c.call("POST", "/v1/code/index", body)

    def search(self, query: str, **options: Any) -> Any:
        return self._c.call("POST", "/v1/code/search", {"query": query, **options})

    def backfill(
        self, project: str, *, limit: int | None = None, progress: Progress | None = None
    ) -> int:
        """The server reports no progress: a bar given as ``progress`` stays indeterminate."""
        body = {"project": project, "limit": limit}
        return int(self._c.call("POST", "/v1/code/backfill", body)["embedded"])

    def stats(self, project: str) -> RemoteRecord:
        return RemoteRecord(self._c.call("GET", "/v1/code/stats", query={"project": project}))

    def repo_map(self, project: str, *, budget_tokens: int = 1024,
                 focus: Sequence[str] | str | None = None) -> RemoteRecord:  # fmt: skip
        focus = [focus] if isinstance(focus, str) else None if focus is None else list(focus)
        body = {"project": project, "budget_tokens": budget_tokens, "focus": focus}
        return RemoteRecord(self._c.call("POST", "/v1/code/map", body))

    def find_symbol(self, name: str, *, project: str | None = None,
                    kind: str | None = None, limit: int = 100) -> Any:  # fmt: skip
        query = {"name": name, "project": project, "kind": kind, "limit": limit}
        return self._c.call("GET", "/v1/code/symbols", query=query)

    def outline(self, file: str, *, project: str | None = None) -> Any:
        return self._c.call("GET", "/v1/code/outline", query={"file": file, "project": project})

    def references(self, name: str, *, project: str | None = None, limit: int = 1000) -> Any:
        query = {"name": name, "project": project, "limit": limit}
        return self._c.call("GET", "/v1/code/references", query=query)

    def projects(self) -> Any:
        return self._c.call("GET", "/v1/code/projects")

    def remove(self, project: str) -> int:
        path = "/v1/code/projects/" + urllib.parse.quote(project, safe="")
        return int(self._c.call("DELETE", path)["files"])

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.InvalidInputError(_LOCAL_ONLY.format(what="watch"))


class _Store:
    def __init__(self, client: Client) -> None:
        self._c = client

    def search(self, query: str, *, kind: Sequence[str] | None = None,
               collection: Sequence[str] | None = None,
               kind_where: Mapping[str, Mapping[str, Any]] | None = None,
               **options: Any) -> Any:  # fmt: skip
        # the server scopes events by user and session (its /v1/search fields)
        scope = dict((kind_where or {}).get("event") or {})
        if set(kind_where or {}) - {"event"} or set(scope) - {"user", "session"}:
            raise errors.InvalidInputError("over HTTP, a search is kept to a user or session only")
        body = {"query": query, "kinds": kind, "collections": collection, **options, **scope}
        return self._c.call("POST", "/v1/search", body)


class RemoteRecord:
    """A record the server sent, its fields readable as attributes (``.text``)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["data"][name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> dict[str, Any]:
        return self.data


class RemoteConversation:
    """What ``events.log_conversation`` returns, rebuilt from the server's answer."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)
        self.session = str(data.get("session"))
        self.user = data.get("user")
        self.added: list[Any] = list(data.get("events") or [])
        self.already_stored = int(data.get("already_stored") or 0)

    def to_dict(self) -> dict[str, Any]:
        return self.data


class RemoteCheckReport:
    """What ``check`` returns, rebuilt from the server's answer."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)
        self.problems: list[str] = list(data.get("problems") or [])
        self.repaired: list[str] = list(data.get("repaired") or [])
        self.ok = bool(data.get("ok"))

    def to_dict(self) -> dict[str, Any]:
        return self.data


_LOCAL_ONLY = "{what} runs next to the files; run it without --url / REMEMBRANCES_URL"


class RemoteMemory:
    """The calls of :class:`~remembrances.RemembrancesService` the CLI makes, over HTTP."""

    def __init__(self, url: str, *, token: str | None = None) -> None:
        self.client = Client(url, token=token)
        self.kb = _KB(self.client)
        self.events = _Events(self.client)
        self.code = _Code(self.client)
        self.store = _Store(self.client)

    def enrich_context(
        self,
        prompt: str,
        *,
        user: str | None = None,
        session: str | None = None,
        project: str | None = None,
        collections: str | Sequence[str] | None = None,
        tz: str | tzinfo | None = None,
    ) -> str:
        shelves = [collections] if isinstance(collections, str) else collections
        tz = _zone_name(tz)
        given = (("user", user), ("session", session), ("project", project), ("tz", tz))
        scope: dict[str, Any] = {k: v for k, v in given if v is not None}
        if shelves is not None:
            scope["collections"] = list(shelves)
        body = {"prompt": prompt, **scope}  # only what is given: an older server refuses more
        return str(self.client.call("POST", "/v1/enrich", body)["context"])

    def stats(self) -> Any:
        return self.client.call("GET", "/v1/stats")

    def check(self, *, repair: bool = False) -> RemoteCheckReport:
        return RemoteCheckReport(self.client.call("POST", "/v1/check", {"repair": repair}))

    def compact(self) -> CompactReport:
        data = self.client.call("POST", "/v1/compact", {})
        return CompactReport(
            int(data["vectors_dropped"]),
            int(data["bytes_before"]),
            int(data["bytes_after"]),
            int(data["bytes_on_disk"]),
            bool(data["settled"]),
        )

    def health(self) -> Any:
        return self.client.call("GET", "/health")

    def close(self) -> None:
        pass  # one connection per request: nothing held open


def _zone_name(tz: str | tzinfo | None) -> str | None:
    """A zone as the server reads it: its IANA name (a ``ZoneInfo``'s ``key``)."""
    if tz is None or isinstance(tz, str):
        return tz
    if tz is UTC:
        return "UTC"
    key = getattr(tz, "key", None)
    if isinstance(key, str):
        return key
    raise errors.InvalidInputError(
        f"tz {tz!r} has no IANA name to send to the server; give one ('Europe/Berlin')"
    )
