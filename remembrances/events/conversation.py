"""Chat messages, as agent frameworks hold them, read into conversation turns.

Frameworks hand a memory their messages in a few shapes: ``{"role", "content"}``
(OpenAI, Anthropic, most wrappers), where ``content`` is a string or a list of
content blocks (``{"type": "text", "text": ...}``), and transcripts that name
who spoke (``{"speaker", "text"}``). Everything is checked here, before anything
is embedded or written, so one bad message refuses the whole call with a message
that says which one and why. A message that says nothing to remember (a tool call, a
tool's result, an assistant turn that only calls tools, the system or developer
instructions) is left out, not refused: an agent logs its transcript as its
framework holds it.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from ..errors import InvalidInputError
from ..validation import check_metadata, check_name, check_text, check_unicode
from .times import CLOCK_SKEW as CLOCK_SKEW  # a provider's time may run past the logging
from .times import to_utc

MAX_CONTENT_CHARS = 1_000_000
MAX_NAME_CHARS = 256
MAX_CAPTION_CHARS = 10_000
MAX_MESSAGES = 100_000
#: Content block types that carry text (OpenAI chat and Responses, Anthropic).
TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
#: Keys a message may have besides its shape's two; anything else is a mistake.
OPTIONAL_KEYS = frozenset({"name", "at", "time", "timestamp", "metadata", "caption"})
#: Keys frameworks put on chat messages that hold nothing to remember (OpenAI's tool
#: calls and refusals, message ids and types); read past, not refused.
FRAMEWORK_KEYS = frozenset(
    {"tool_calls", "tool_call_id", "function_call", "refusal", "audio", "annotations"}
    | {"id", "type"}
)
#: Roles whose messages are instructions a framework puts first: a system prompt, often
#: with the time in it, is no memory, and came back in every block that recalled the
#: session.
INSTRUCTION_ROLES = frozenset({"system", "developer"})
#: Roles whose messages are not something said in the conversation (any case).
TOOL_ROLES = frozenset({"tool", "function"}) | INSTRUCTION_ROLES
TIME_KEYS = ("at", "time", "timestamp")


@dataclass(frozen=True)
class Turn:
    """One message, checked: who said what, when (None: the session's time), with what."""

    speaker: str
    role: str | None
    content: str
    at: datetime | None
    metadata: dict[str, Any]
    caption: str | None
    #: Its place in the messages given, which count what is left out (errors name it).
    index: int = 0

    @cached_property
    def digest(self) -> str:
        """What identifies a turn when a transcript is logged again (:func:`turn_digest`)."""
        return turn_digest(self.speaker, self.content)

    def is_stored_as(self, stored: StoredTurn) -> bool:
        """Whether ``stored`` is this message: the same speaker and text, and, when the
        message gives its time, the same time (so a repeated "ok" with its own time is
        a new turn, while a transcript logged again, times and all, adds nothing).

        A turn stored without a time of its own, or kept only as a removed turn's
        digest, has the time it was logged: a message said up to then (or at most
        ``CLOCK_SKEW`` after, a provider's clock running ahead) is that turn. An agent
        that logs each message as it comes, then imports the provider's transcript
        with each message's time, stored the whole conversation twice; the same
        exchange said again later is still new."""
        digest, at, exact = stored
        if digest != self.digest or self.at is None:
            return digest == self.digest
        return self.at == at if exact else self.at <= at + CLOCK_SKEW


#: A stored turn as :func:`new_turns` compares it: its :func:`turn_digest`, its time,
#: and whether that time is the message's own (False: when it was logged). A turn
#: that was pruned or deleted is kept as its digest and time alone (events/tables.py).
StoredTurn = tuple[str, datetime, bool]


def turn_digest(speaker: str, content: str) -> str:
    """A digest of who said what: enough to recognise a message sent again, without
    keeping the text of a turn that was removed."""
    said = f"{speaker}\x00{content}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(said).hexdigest()[:32]


def whose(user: str | None) -> str:
    """``user 'ana'``, or ``no user`` for a session logged without one (messages)."""
    return "no user" if user is None else f"user {user!r}"


def scope_name(value: Any, what: str) -> str:
    """A session or user id: a short, non-blank string, matched exactly.

    Whitespace around it is refused, not trimmed: an id says whose memory a call
    reads, and trimmed, "ana\u00a0" registered by someone else read ana's. So is an
    invisible (format) character at an end: "ana\u200b" would be a second "ana".
    """
    name = check_name(value, what, limit=MAX_NAME_CHARS, strip=True)
    if name != value:
        raise InvalidInputError(
            f"{what} {value!r} has whitespace around it; ids are matched exactly, "
            f"so pass {name!r} (or keep such ids out of user input)"
        )
    for end in (name[0], name[-1]):  # zero-width and other format characters
        if unicodedata.category(end) == "Cf":
            raise InvalidInputError(
                f"{what} {value!r} has an invisible character (U+{ord(end):04X}) at an end; "
                "ids are matched exactly, so remove it"
            )
    return name


def speaker_name(value: Any, what: str) -> str:
    """A message's role or speaker, as a framework or a transcript writes it (trimmed)."""
    return check_name(value, what, limit=MAX_NAME_CHARS, strip=True)


def _text(value: Any, what: str) -> str:
    """A message's text: a string, or the text blocks of a content list joined."""
    if isinstance(value, bytes | bytearray | memoryview):
        raise InvalidInputError(f"{what} is binary data; pass text (decode it as UTF-8)")
    if isinstance(value, str):
        text = value
    elif isinstance(value, Sequence):
        parts: list[str] = []
        for i, block in enumerate(value):
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("type"), str):
                if block["type"] in TEXT_BLOCKS:
                    inner = block.get("text")
                    if not isinstance(inner, str):
                        raise InvalidInputError(f"{what} block {i} has no 'text' string")
                    parts.append(inner)
                # images, tool calls and results carry no text to remember
            else:
                raise InvalidInputError(
                    f"{what} block {i} is not a content block "
                    "(a string or a mapping such as {'type': 'text', 'text': ...})"
                )
        text = "\n\n".join(p for p in parts if p.strip())
        if not text.strip() and value:
            return ""  # only tool calls, tool results, images: nothing said
    elif value is None:
        raise InvalidInputError(f"{what} is missing")
    else:
        raise InvalidInputError(
            f"{what} must be a string or a list of content blocks, not {type(value).__name__}"
        )
    if not text.strip():
        raise InvalidInputError(f"{what} has no text")
    return check_text(
        text, what, limit=MAX_CONTENT_CHARS, hint="store long documents in the knowledge base"
    )


def read_message(message: Any, index: int) -> Turn | None:
    """One message in any supported shape, checked; ``index`` names it in errors.
    None for a message that says nothing (see the module docstring)."""
    what = f"message {index}"
    if not isinstance(message, Mapping):
        raise InvalidInputError(
            f"{what} is a {type(message).__name__}; a message is a mapping with "
            "'role' and 'content' (OpenAI, Anthropic) or 'speaker' and 'text'"
        )
    calls_tools = bool(message.get("tool_calls") or message.get("function_call"))
    if "role" in message and "content" not in message and calls_tools:
        return None  # a tool-calling turn dumped without its None content (exclude_none)
    if "role" in message and "content" in message:
        shape = ("role", "content")
        role: str | None = speaker_name(message["role"], f"{what} role")
        speaker = speaker_name(message["name"], f"{what} name") if message.get("name") else role
    elif "speaker" in message and "text" in message:
        shape = ("speaker", "text")
        role = None
        speaker = speaker_name(message["speaker"], f"{what} speaker")
    else:
        raise InvalidInputError(
            f"{what} has keys {sorted(map(str, message))[:8]}; a message needs 'role' and "
            "'content' (OpenAI, Anthropic) or 'speaker' and 'text'"
        )
    unknown = set(message) - set(shape) - OPTIONAL_KEYS
    if role is not None:  # the chat shape: frameworks' own keys are read past
        unknown -= FRAMEWORK_KEYS
    if unknown:
        raise InvalidInputError(
            f"{what} has unknown keys {sorted(map(str, unknown))[:8]}; besides "
            f"{shape[0]!r} and {shape[1]!r} a message may have {', '.join(sorted(OPTIONAL_KEYS))}"
        )
    assert speaker is not None
    if role is not None and role.lower() in TOOL_ROLES:
        return None
    said = message[shape[1]]
    if calls_tools and (said is None or (isinstance(said, str) and not said.strip())):
        return None  # an assistant turn that only calls tools (content None, or "")
    content = _text(said, f"{what} {shape[1]}")
    if not content:
        return None
    times = [k for k in TIME_KEYS if message.get(k) is not None]
    if len(times) > 1:
        raise InvalidInputError(f"{what} has both {times[0]!r} and {times[1]!r}; give one time")
    at = to_utc(message[times[0]], f"{what} {times[0]}") if times else None
    caption = message.get("caption")
    if caption is not None:
        if not isinstance(caption, str):
            raise InvalidInputError(f"{what} caption must be a string")
        if len(caption) > MAX_CAPTION_CHARS:
            raise InvalidInputError(
                f"{what} caption is longer than {MAX_CAPTION_CHARS:,} characters"
            )
        caption = check_unicode(caption, f"{what} caption").strip() or None
    return Turn(
        speaker=speaker,
        role=role,
        content=content,
        at=at,
        metadata=check_metadata(message.get("metadata"), f"{what} metadata"),
        caption=caption,
        index=index,
    )


def read_messages(messages: Any) -> list[Turn]:
    """Every message checked, in order; the first bad one raises. Messages that say
    nothing (tool calls and results) are left out."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise InvalidInputError(
            "messages must be a list of chat messages (mappings with 'role' and 'content', "
            f"or 'speaker' and 'text'), not {type(messages).__name__}"
        )
    if not messages:
        raise InvalidInputError("no messages to log (an empty list)")
    if len(messages) > MAX_MESSAGES:
        raise InvalidInputError(
            f"{len(messages):,} messages in one call; the limit is {MAX_MESSAGES:,}"
        )
    turns = [read_message(m, i) for i, m in enumerate(messages)]
    return [t for t in turns if t is not None]


def new_turns(
    stored: Sequence[StoredTurn],
    given: Sequence[Turn],
    positions: Sequence[int] | None = None,
) -> list[Turn]:
    """The turns of ``given`` that ``stored`` (the session's turns, in order) lacks.

    A caller may log the whole transcript every time (it starts with what is
    stored), only the latest messages (they overlap the end of what is stored),
    or only new ones (no overlap); each adds just the turns not yet stored.
    ``positions`` are the stored turns' places in the session: after turns were
    pruned or deleted, a whole transcript still holds each remaining turn at its
    place, and only what follows the last one is new (the removed ones stay
    removed).
    """

    def same(stored_part: Sequence[StoredTurn], given_part: Sequence[Turn]) -> bool:
        return len(stored_part) == len(given_part) and all(
            t.is_stored_as(s) for s, t in zip(stored_part, given_part, strict=True)
        )

    shared = min(len(stored), len(given))
    if same(stored[:shared], given[:shared]):
        return list(given[shared:])
    if (
        positions is not None
        and stored
        and max(positions) < len(given)
        and all(given[p].is_stored_as(s) for p, s in zip(positions, stored, strict=True))
    ):
        return list(given[max(positions) + 1 :])
    if given and any(given[0].is_stored_as(s) for s in stored):
        for overlap in range(shared, 0, -1):
            if same(stored[-overlap:], given[:overlap]):
                return list(given[overlap:])
    if stored and given and given[0].is_stored_as(stored[0]):
        after = _after_the_kept(stored, given)
        if after:
            return list(given[after:])
        differs = next(i for i in range(shared) if not given[i].is_stored_as(stored[i]))
        raise InvalidInputError(
            f"message {given[differs].index} differs from turn {differs} already stored for "
            "this session; "
            "stored turns are not rewritten (log an edited conversation as a new session)"
        )
    return list(given[_after_the_stored(stored, given) :])


def _after_the_kept(stored: Sequence[StoredTurn], given: Sequence[Turn]) -> int:
    """Where the new turns start in a transcript that holds the stored turns in order,
    less some the client deleted, up to the last stored turn, with at least
    ``MIN_ALIGNED`` of them after the first; 0 when it does not (an edited message is
    not a stored turn; with fewer, new messages that repeat stored ones would be
    taken for a re-send and lost). Memory keeps what the client deleted: the session
    went on, and refusing every later log of it stranded the conversation."""
    at = 0
    for i, turn in enumerate(given):
        while at < len(stored) and not turn.is_stored_as(stored[at]):
            at += 1
        if at >= len(stored) - 1:
            return i + 1 if at == len(stored) - 1 and i >= MIN_ALIGNED else 0
        at += 1
    return 0


#: Messages after the first that must be the stored turns' tail for a transcript whose
#: first message changed to count as the session sent again (:func:`_after_the_stored`).
MIN_ALIGNED = 3


def _after_the_stored(stored: Sequence[StoredTurn], given: Sequence[Turn]) -> int:
    """Where the new turns start in a transcript whose first message is not the first
    stored turn but which goes on as the stored turns end: a client that compacts its
    history into a summary, or rewrites its first message, and sends everything after
    it as it was. Every message after the first, up to the last stored turn, must be the
    stored turns' tail, at least ``MIN_ALIGNED`` of them; else the transcript is all
    new (0). Fewer would take new messages for a re-send when they repeat the end of
    the session ("Now drop the database" / "Are you sure?" / "yes", sent alone after
    the same exchange about a branch), and lose what the user said."""
    if not stored:
        return 0
    for end in range(len(given) - 1, 0, -1):  # the last stored turn, latest place first
        if not given[end].is_stored_as(stored[-1]):
            continue
        tail = given[1 : end + 1]
        if MIN_ALIGNED <= len(tail) <= len(stored) and all(
            t.is_stored_as(s) for t, s in zip(tail, stored[-len(tail) :], strict=True)
        ):
            return end + 1
    return 0
