"""Request bodies. Unknown fields are refused, so a misspelt option is an error, not ignored."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["hybrid", "vector", "text"]
Limit = Annotated[int, Field(ge=1, le=1000, description="Maximum number of results.")]


class Body(BaseModel):
    # strict: ``"limit": true`` or ``"1"`` is a mistake to report, not a number to guess
    model_config = ConfigDict(extra="forbid", strict=True)


class Error(BaseModel):
    """Every error answer: the library's error class and a one-line message."""

    error: str = Field(examples=["NotFoundError"])
    message: str = Field(examples=["no document 'notes/x.md' in collection 'default'"])


class Health(BaseModel):
    status: Literal["ok"]
    version: str


class SearchRequest(Body):
    query: str
    limit: Limit = 10
    mode: Mode = "hybrid"
    kinds: list[str] | None = Field(None, description="Only these sources: kb, event, code.")
    collections: list[str] | None = None
    min_score: float = 0.0
    since: str | None = Field(None, description="ISO time; only chunks at or after it.")
    until: str | None = Field(None, description="ISO time; only chunks at or before it.")
    user: str | None = Field(None, description="Only this user's events (documents and code stay).")
    session: str | None = Field(None, description="Only this conversation's events.")


class EnrichRequest(Body):
    prompt: str = Field(description="The user's request, as they wrote it.")
    user: str | None = Field(None, description="Only this user's events (conversations).")
    session: str | None = Field(None, description="Only this conversation's events.")
    project: str | None = Field(None, description="Only this indexed project's code.")
    collections: list[str] | None = Field(
        None, description="Only the documents of these collections (default: all)."
    )
    tz: str | None = Field(
        None,
        description=(
            'The user\'s IANA time zone ("Europe/Berlin"), whose days "yesterday" '
            "means; default: the server's."
        ),
    )


class EnrichResponse(BaseModel):
    prompt: str
    context: str = Field(description="The memory that helps, as one block; empty when none.")


class CheckRequest(Body):
    repair: bool = False


class DocumentRequest(Body):
    text: str = Field(description="The document text (Markdown welcome).")
    source: str = Field(description="A stable name; adding it again replaces the document.")
    title: str | None = None
    metadata: dict[str, Any] | None = None
    collection: str = "default"
    file: str | None = Field(
        None,
        description="The file the text was read from. Recorded when it lies inside the "
        "server's allowed roots, so that ingesting its folder later updates this document "
        "instead of adding a copy; ignored otherwise.",
    )


class IngestRequest(Body):
    path: str = Field(description="A file or directory inside the server's allowed roots.")
    collection: str = "default"
    patterns: list[str] | None = Field(None, description="Only files matching these globs.")
    include_hidden: bool = Field(
        False, description="Also hidden files and folders (names starting with '.')."
    )


class KBSearchRequest(Body):
    query: str
    limit: Limit = 5
    collection: str | list[str] | None = Field(None, description="One collection or several.")
    where: dict[str, Any] | None = Field(
        None, description='Filters on document metadata ({"lang": "en"}, {"year": {"$gte": 2024}}).'
    )
    min_score: float | None = None
    mode: Mode = "hybrid"


class EventRequest(Body):
    content: str = Field(description="What happened, in a sentence or a paragraph.")
    subject: str = ""
    at: str | None = Field(None, description="When it happened (ISO 8601); default now.")
    metadata: dict[str, Any] | None = None
    user: str | None = Field(
        None, description="Whose memory it is: a search or enrich scoped to that user finds it."
    )


class EventSearchRequest(Body):
    query: str | None = Field(None, description="Words to look for; omit to list newest first.")
    subject: str | None = None
    since: str | None = None
    until: str | None = None
    last: str | None = Field(None, description="A window such as 30m, 12h, 7d, 4w.")
    limit: Limit = 10
    recency: str | None = Field(None, description="Favour recent events: a half-life like 3d.")
    min_score: float | None = Field(None, description="Only hits scoring at least this (0-1).")
    mode: Mode = "hybrid"
    session: str | None = Field(None, description="Only this conversation's turns.")
    user: str | None = Field(None, description="Only this user's events.")
    window: int = Field(
        0, ge=0, le=20, description="Each turn found with this many turns before and after it."
    )


class ConversationRequest(Body):
    messages: list[dict[str, Any]] = Field(
        description="Chat messages: {role, content} or {speaker, text}; optional at, metadata."
    )
    session: str = Field(description="The conversation's id; logging it again adds new turns.")
    user: str | None = Field(None, description="Whose conversation it is (for scoped searches).")
    at: str | float | None = Field(
        None,
        description="When messages without a time happened (ISO 8601 or epoch seconds). "
        "It does not make them new: messages that repeat the session's last ones are taken "
        "for a re-send unless each has its own 'at'.",
    )
    metadata: dict[str, Any] | None = Field(None, description="Metadata for every turn.")


class PruneRequest(Body):
    older_than: str = Field(description="An age such as 90d or 12w, or an ISO time.")
    subject: str | None = Field(None, description="Only events of this subject.")


class ForgetRequest(Body):
    session: str | None = Field(None, description="Forget this session's turns.")
    user: str | None = Field(None, description="Forget everything logged for this user.")


class IndexRequest(Body):
    path: str = Field(description="A repository directory inside the server's allowed roots.")
    project: str | None = Field(None, description="Project name; default the directory name.")
    languages: list[str] | None = None
    embed: bool = Field(
        True, description="False: searchable by words now, embedded later by /v1/code/backfill."
    )


class BackfillRequest(Body):
    project: str = Field(description="The project whose chunks still wait for vectors.")
    limit: int | None = Field(None, ge=1, description="Embed at most this many chunks.")


class RepoMapRequest(Body):
    project: str
    budget_tokens: int = Field(1024, description="The map's size limit in tokens (1 and up).")
    focus: list[str] | None = Field(None, description="Files or symbols to rank towards.")


class CodeSearchRequest(Body):
    query: str
    project: str | None = None
    limit: Limit = 10
    languages: list[str] | None = None
    kinds: list[str] | None = None
    path: str | None = Field(None, description="Only files under this relative path.")
    min_score: float = Field(0.0, description="Only hits scoring at least this (0-1).")
    mode: Mode = "hybrid"
