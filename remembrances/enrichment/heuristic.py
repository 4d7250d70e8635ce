"""The planner without a model: rules that keep what a search can use.

A user's prompt is mostly request ("can you please explain...") and the search
terms are a few identifiers, paths, quoted strings, error messages and nouns.
Those decide whether there is anything to look up. Events and code are searched
with the prompt as said, the KB with the prompt less its request phrases (so that
"please explain" does not count against a note that lacks those words), which
measured better than keywords alone (see ``plan``). Identifiers, paths and errors
raise the code count, and any time phrase becomes the events window.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from ..fts_query import STOP_WORDS
from .plan import MAX_QUERY_CHARS, EnrichmentPlan, PartQueries
from .prompt_parts import META_WORDS, PromptParts, ask_parts, split_prompt
from .time_phrases import find_time_window, local_zone

#: Phrases that ask for something rather than say what it is about.
REQUEST_PHRASES = [
    # Politeness and hedges, longest first (an alternation takes the first that matches).
    r"(?:hi|hey|hello)\s+there",
    r"(?:thanks|thank\s+you)\s+(?:so|very)\s+much",
    r"quick\s+question",
    r"i\s+was\s+wondering(?:\s+(?:if|whether))?",
    r"i\s+wonder(?:\s+(?:if|whether))?",
    # "tell me a little about", not "a bit flag"; "maybe", not the Maybe type
    r"a\s+(?:little|bit)(?:\s+bit)?(?=\s+(?:more|less|about|of|on|too|better|clearer)\b)",
    r"(?-i:maybe|perhaps)",
    r"please",
    r"pls",
    r"kindly",
    r"(?:can|could|would|will)\s+(?:you|u)(?:\s+please)?",
    r"(?:can|could|may|should)\s+i",
    r"help\s+me(?:\s+(?:to|with|understand))?",
    r"i\s+(?:want|need|have|would\s+like|'d\s+like|wanna)\s+to",
    r"i'm\s+trying\s+to",
    r"i\s+am\s+trying\s+to",
    r"let's",
    r"let\s+me\s+know",
    r"tell\s+me(?:\s+about)?",
    r"show\s+me",
    r"give\s+me",
    r"remind\s+me(?:\s+(?:of|about))?",
    r"do\s+you\s+(?:remember|know)",
    r"walk\s+me\s+through",
    r"explain(?:\s+to\s+me)?",
    r"describe",
    r"summari[sz]e",
    r"fix\s+(?:the|this|a|that)\s+(?:bug|issue|error|problem|crash)s?(?:\s+(?:in|with|of|on))?",
    r"fix(?:es|ed|ing)?",
    r"debug",
    r"refactor",
    r"implement",
    r"write",
    r"look\s+(?:at|into|up)",
    r"find\s+out",
    r"find",
    r"check",
    r"what(?:'s|\s+is|\s+are|\s+was|\s+were|\s+does|\s+do|\s+did)",
    r"how(?:'s|\s+is|\s+are|\s+does|\s+do|\s+did|\s+can|\s+should|\s+to)",
    r"why(?:'s|\s+is|\s+are|\s+does|\s+do|\s+did)",
    r"where(?:'s|\s+is|\s+are|\s+does|\s+do|\s+did)",
    r"when(?:'s|\s+is|\s+are|\s+does|\s+do|\s+did)",
    r"which",
    r"happened",
    r"what\s+time\s+is\s+it",
    r"thanks",
    r"thank\s+you",
    r"hey",
    r"hi",
    r"hello",
    r"ok(?:ay)?",
    r"so",
    r"just",
    r"actually",
    r"basically",
]

#: Words of a reply about the conversation itself ("thanks, that worked!", "no, the
#: other one", "try again"): a prompt of nothing else is not searched. Their words are
#: in many passages and turns ("one", "try", "worked"), so searching them injected
#: unrelated context every turn (a helper's agent session, 2026-11-26). Beside other
#: words they stay in the queries: "pick one value", "before other parameters".
REPLY_WORDS = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "no",
        "nope",
        "nah",
        "sure",
        "great",
        "perfect",
        "cool",
        "nice",
        "awesome",
        "fine",
        "good",
        "right",
        "correct",
        "exactly",
        "agreed",
        "sorry",
        "meant",
        "mean",
        "other",
        "one",
        "ones",
        "first",
        "try",
        "tried",
        "go",
        "worked",
        "sounds",
        "lol",
        "haha",
        "hmm",
        "ah",
        "oh",
        "wow",
        "hey",
        "yay",
        "oops",
        "alright",
    ]
)

#: A prompt about the conversation itself: "where did we leave off?", "what did we
#: talk about yesterday?", "recap our last session". With no topic beside it, the
#: answer is what was said (the latest conversation, or the time phrase's window),
#: not a search for "talk" or "session", whose turns score as noise.
_RECAP = re.compile(
    r"\b(?:recap|catch\s+me\s+up|fill\s+me\s+in|where\s+(?:were|are)\s+we|"
    r"(?:leave|left)\s+off|last\s+time|"
    r"(?:our|the|that|this|last|previous|latest|recent|earlier)\s+(?:\w+\s+)?"
    r"(?:conversation|session|chat|discussion)s?|"
    r"(?:we|you|i)\s+(?:\w+\s+)?(?:talk|talked|talking|discuss|discussed|discussing|chat|"
    r"chatted|chatting|say|said|saying|cover|covered|decide|decided|agree|agreed))\b",
    re.IGNORECASE,
)
#: A recap cue that names what to look for, asked about us: "what did we decide?"
#: ("agreed." alone is a reply).
_DECISIONS = re.compile(
    r"\b(?:we|you|i)\s+(?:\w+\s+)?(?:decide|decided|agree|agreed)\b", re.IGNORECASE
)
#: ... asked as a question or a request: "yes, we agreed" and "I said no" are replies.
_ASKS = re.compile(
    r"\?|\b(?:what|where|which|when|how|recap|summari[sz]e|summary|remind|tell|show|catch|"
    r"fill|repeat|continue|pick|go\s+over)\b",
    re.IGNORECASE,
)
#: The words such a prompt may hold besides request, stop and reply words.
RECAP_WORDS = frozenset(
    [
        "continue",
        "pick",
        "recap",
        "catch",
        "fill",
        "leave",
        "left",
        "time",
        "last",
        "latest",
        "previous",
        "previously",
        "recent",
        "recently",
        "earlier",
        "conversation",
        "conversations",
        "session",
        "sessions",
        "chat",
        "chats",
        "chatted",
        "discussion",
        "discussions",
        "talk",
        "talked",
        "talking",
        "discuss",
        "discussed",
        "discussing",
        "say",
        "said",
        "cover",
        "covered",
        "decide",
        "decided",
        "agree",
        "agreed",
        "summary",
        "everything",
        "far",
    ]
)

_REQUEST = re.compile(r"(?<![\w.])(?:" + "|".join(REQUEST_PHRASES) + r")(?![\w])", re.IGNORECASE)
#: The same phrases as prose: between spaces or sentence punctuation, so that code and
#: URLs keep their words (``check(find(x))``, ``/api/check``, ``Write-Ahead``).
_REQUEST_IN_PROSE = re.compile(
    r"(?<![^\s,;!?\"'(])(?:" + "|".join(REQUEST_PHRASES) + r")(?=$|[\s,.;:!?\"')])",
    re.IGNORECASE,
)
_QUOTED = re.compile(
    r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|`([^`\n]{1,200})`|(?<![\w])'([^'\n]{2,200})'(?![\w])"
)
#: Quoted text asked about ("format it like '2 hours ago'"), for what the prompt says
#: itself (its time phrase, "last", "decide") to be read outside it. Narrower than
#: _QUOTED: an apostrophe pair spans a few words and no clause ("we rolled 'em back
#: last week, ... the admins' dashboards"), and a quote after a digit is inches.
_QUOTED_TEXT = re.compile(
    r"(?<![\w])\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|`[^`\n]{1,80}`"
    r"|(?<![\w])'[^'\n,;!?]{2,40}'(?![\w])"
)


def _quoted(text: str) -> list[tuple[int, int]]:
    """The spans of the quoted text in ``text`` (:data:`_QUOTED_TEXT`); a prompt quoted
    whole is the prompt."""
    spans = [m.span() for m in _QUOTED_TEXT.finditer(text)]
    return [(a, b) for a, b in spans if b - a < 0.8 * len(text.strip())]


_ERROR = re.compile(
    r"\b(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Fault)|Traceback|panic|segfault|"
    r"E[A-Z]{3,}|HTTP\s+\d{3}|errno\s*\d+)\b(?::[ \t]*[^\n]{0,200}?(?=$|\n|(?<=[.!?])\s))?"
)
_EXTENSIONS = (
    "py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|kts|swift|c|h|cc|cpp|hpp|cxx|cs|rb|php|sh|"
    "bash|zsh|md|rst|txt|toml|yaml|yml|json|ini|cfg|sql|html|css|scss|vue|svelte|lock|env"
)
_PATH = re.compile(
    r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.@-]+[/\\])+[\w.@-]+|\b[\w-]+\.(?:" + _EXTENSIONS + r")\b"
)
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b(?:\(\))?")
_SNAKE = re.compile(r"\b_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*\b")
_CAMEL = re.compile(r"\b(?:[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*)\b")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,9}s?\b")
_WITH_DIGIT = re.compile(r"\b[A-Za-z]+[-_]?\d+[A-Za-z0-9]*\b|\b\d{3,}\b")
_HYPHENATED = re.compile(r"\b[a-z][a-z0-9]+(?:-[a-z0-9]+)+\b")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(\)")
_WORD = re.compile(r"[^\W_][\w'-]*", re.UNICODE)
_AUXILIARIES = frozenset({"ca", "wo", "sha", "ai", "do", "does", "did", "is", "are"})
#: Meta words that are the topic when a person is their subject and nothing else is
#: asked: "where do I work?", "what do we need?" ("how does it work?" stays meta, and
#: so does a prompt about the assistant: "I like you", "are you working?").
_PERSONAL_VERBS = frozenset(
    ["work", "works", "working", "like", "likes", "need", "needs", "want", "wants", "use", "using"]
)
#: Who a verb is about: the nearest of these before it is its subject.
_PEOPLE = frozenset(["i", "i'm", "we", "he", "she", "they"])
_NOT_PEOPLE = frozenset(["it", "it's", "this", "that", "these", "those", "you", "you're"])
_PRONOUNS = _PEOPLE | _NOT_PEOPLE
#: ... and a verb whose object is one of these is about the assistant or a thing.
_OBJECTS = frozenset(["you", "it", "this", "that", "one"])
_NOT_IDENTIFIERS = frozenset({"e.g", "i.e", "etc", "a.m", "p.m", "vs"})


#: A Python traceback: its header, its frames (indented lines) and the exception line.
_TRACEBACK = re.compile(
    r"^[ \t]*Traceback \(most recent call last\):[ \t]*\n"
    r"(?P<frames>(?:[ \t]+\S[^\n]*\n)*)(?P<error>(?!```|~~~)[^\s][^\n]*)?",
    re.MULTILINE,
)
_FRAME = re.compile(
    r'^[ \t]*File "(?P<path>[^"]*)", line \d+, in [^\n]*\n(?:[ \t]+(?![ \t]*File ")[^\n]*\n)*',
    re.MULTILINE,
)
#: Frames in installed packages or the standard library, not the user's code.
_LIBRARY_FRAME = re.compile(
    r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d|[/\\]python\d+[/\\]lib[/\\]",
    re.IGNORECASE,  # Windows: C:\Python311\Lib\json\decoder.py
)


def _condensed_traceback(match: re.Match[str]) -> str:
    """What a pasted traceback is about: its exception line, then the last frame of the
    user's own code and the last frame. Its first frames are the framework's entry
    points (``__call__``, ``wsgi_app``), the same in every traceback, and a query made
    of them (or an embedding of the first 256 word pieces) finds the entry points."""
    frames = [f.group(0) for f in _FRAME.finditer(match.group("frames"))]
    own = [f for f in frames if not _LIBRARY_FRAME.search(f)]
    kept = list(dict.fromkeys([*own[-1:], *frames[-1:]]))
    return "\n".join([match.group("error") or "", *kept]).strip() + "\n"


#: What may stand before an error message that starts a line (pytest writes "E   ").
_LINE_START = re.compile(r"[ \t>]*(?:E[ \t]+)?")


def _before(text: str, match: re.Match[str]) -> str:
    """The text of ``match``'s line before it."""
    return text[text.rfind("\n", 0, match.start()) + 1 : match.start()]


def _head_and_tail(text: str, chars: int) -> str:
    """About ``chars`` characters from each end of ``text``, in whole lines; a fence
    opened in the part left out stays open."""
    head = text[:chars].rpartition("\n")[0] or text[:chars]
    tail = text[-chars:].partition("\n")[2] or text[-chars:]
    left_out = text[len(head) : len(text) - len(tail)]
    fences = sum(1 for line in left_out.splitlines() if line.lstrip().startswith(("```", "~~~")))
    return head + "\n" + ("```\n" if fences % 2 else "") + tail


def _condense_tracebacks(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with each pasted traceback condensed, and where the condensed ones are."""
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    length = end = 0
    for match in _TRACEBACK.finditer(text):
        before, condensed = text[end : match.start()], _condensed_traceback(match)
        spans.append((length + len(before), length + len(before) + len(condensed)))
        pieces += [before, condensed]
        length += len(before) + len(condensed)
        end = match.end()
    pieces.append(text[end:])
    return "".join(pieces), spans


#: Longer prompts are planned from their first and last halves of this.
MAX_PROMPT_CHARS = 20_000
#: Error messages pasted beside a question that join it: the last ones (a log's newest).
MAX_PASTED_ERRORS = 3


def _the_ask(prompt: str) -> PromptParts:
    """The prompt cleaned, its tracebacks condensed, and what it asks set apart from what
    it pastes: the question is what to look up, with the error messages and condensed
    tracebacks it pastes."""
    # Lone surrogates and control characters: never let them reach a query.
    text = prompt.encode("utf-8", "replace").decode("utf-8")
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", text)
    if len(text) > MAX_PROMPT_CHARS:  # the rules' cost; a question often comes last
        text = _head_and_tail(text, MAX_PROMPT_CHARS // 2)
    text, tracebacks = _condense_tracebacks(text)
    errors = {
        m.group(0): m.span()
        for m in _ERROR.finditer(text)
        if _LINE_START.fullmatch(_before(text, m))
    }  # the last place of each message: a log repeats them
    spans = sorted(errors.values())
    older, kept = spans[:-MAX_PASTED_ERRORS], spans[-MAX_PASTED_ERRORS:]
    return split_prompt(text, keep=tracebacks + kept, drop=older)


class HeuristicPlanner:
    """Rules only: fast (well under a millisecond), deterministic, no network.

    ``now`` and ``tz`` fix the clock and the time zone whose days "yesterday"
    refers to (windows come out in UTC either way); without ``tz``, the machine's
    zone, as for the naive times ``events.log`` takes. ``plan(prompt, tz=...)``
    plans one prompt in another zone (a user's). Default per-source counts
    are raised for the source a prompt points at: identifiers, paths and errors
    ask for more code; a time phrase asks for more events.
    """

    name = "heuristic"

    def __init__(
        self,
        *,
        kb_limit: int = 4,
        code_limit: int = 4,
        events_limit: int = 6,
        now: Callable[[], datetime] | None = None,
        tz: tzinfo | None = None,
    ) -> None:
        self.kb_limit = kb_limit
        self.code_limit = code_limit
        self.events_limit = events_limit
        self.now = now or (lambda: datetime.now(UTC))
        self.tz = tz

    def plan(self, prompt: str, *, tz: tzinfo | None = None) -> EnrichmentPlan:
        asked = _the_ask("" if prompt is None else str(prompt))
        text = asked.ask

        zone = tz or self.tz or local_zone()
        window, rest = find_time_window(text, now=self.now(), tz=zone, quoted=_quoted(text))
        # A date ("add a month to January 31st") is also words a note or code may hold:
        # the KB and code keep it. "Yesterday" and "last week" only say when.
        topic = text if window is not None and window.absolute else rest
        text = rest
        # what the prompt says itself, outside the strings it quotes: "parse 'last week'"
        # asks for neither the newest events nor a window
        prose = text
        for start, end in _quoted(text):
            prose = prose[:start] + " " * (end - start) + prose[end:]

        terms = _terms(text)
        protected = [t for t in terms if t.kind != "word"]
        words = [t.text for t in terms if t.kind == "word"]
        recap = (
            not protected
            and _RECAP.search(text) is not None
            and _ASKS.search(text) is not None
            and all(w.lower() in RECAP_WORDS or w.lower() in REPLY_WORDS for w in words)
        )
        # "What did we decide last week?" asks for the window's decisions: searched for
        # in it, since a busy week's newest events would crowd a listing; a logged
        # decision says "decision", which does not share the verb's stem.
        decisions = recap and window is not None and _DECISIONS.search(text) is not None
        if recap or (not protected and all(w.lower() in REPLY_WORDS for w in words)):
            terms, words = [], []  # about the conversation itself: nothing to look up
        if not recap and not words and not protected:
            words = _personal_verbs(text)
        has_code_signal = any(t.kind in ("path", "identifier", "error") for t in protected)

        # Events and code are searched with the prompt as said. On conversation memory
        # (LoCoMo development set) it finds the answering turn as often as the keywords
        # do and unrelated prompts score lower; on code (the development suite's four
        # code sets) the answer reached the block for 118 of 139 questions against 82
        # with the prompt's identifiers alone, or its keywords when it named none: a
        # question that mentions JSON or a URL is about more than that word, and the
        # code layer reads backticks and parameter names itself. The KB gets the prompt
        # less its request phrases: on the six docs sets the answer reached the block
        # for 132 of 171 questions against 125 with the keywords (docs/enrichment.md).
        said = " ".join(text.split()) if words or protected else ""
        events_query = said
        # the verb and the noun stem apart ("decid", "decis"): "what did we decide about
        # the database?" is answered by a turn that says "Decision: ..."
        asks_decisions = _DECISIONS.search(prose) is not None and _ASKS.search(prose) is not None
        if decisions or (said and asks_decisions):
            events_query = " ".join([*text.split(), "decisions"])
        code_query = " ".join(topic.split()) if said else ""
        if topic is not text:
            protected = [t for t in _terms(topic) if t.kind != "word"]
        kb_query = _without_requests(topic, protected) if said else ""
        # A long ask's question is searched on its own too (prompt_parts.ask_parts).
        part_queries = tuple(_part_queries(part) for part in ask_parts(text)) if said else ()

        until = window.until if window else None
        if window is not None and window.period_until is not None and (not said or decisions):
            # a listing of "last week" is of last week: a search errs wide, a list of
            # the window's events would show this week's (the newest) alone
            until = window.period_until
        kb_limit, code_limit, events_limit = self.kb_limit, self.code_limit, self.events_limit
        if has_code_signal:
            code_limit += 2
        if window is not None or recap:
            events_limit += 4
        return EnrichmentPlan(
            kb_query=kb_query[:MAX_QUERY_CHARS],
            code_query=code_query[:MAX_QUERY_CHARS],
            events_query=events_query[:MAX_QUERY_CHARS],
            events_since=window.since if window else None,
            events_until=until,
            kb_limit=kb_limit,
            code_limit=code_limit,
            events_limit=events_limit,
            # "last" in a time phrase ("last week") names the window, not the newest
            events_recent=bool(_RECENT.search(prose)) and not recap,
            # a window's events are the recap; decisions are looked for among them
            events_recap=recap and (window is None or decisions),
            parts=part_queries,
            planner=self.name,
            notes={
                **({"time_phrase": window.phrase} if window else {}),
                **({"pasted_chars": len(asked.pasted)} if asked.pasted else {}),
            },
        )


def _part_queries(part: str) -> PartQueries:
    """A part of the prompt's queries: the part as said, the KB's less its request
    phrases (the prompt's own also keep an absolute date for the KB and code, and ask
    events for "decisions"; a part is searched beside them)."""
    said = " ".join(part.split())[:MAX_QUERY_CHARS]
    protected = [t for t in _terms(part) if t.kind != "word"]
    kb_query = _without_requests(part, protected)[:MAX_QUERY_CHARS]
    return PartQueries(kb_query=kb_query, code_query=said, events_query=said)


#: Words that ask for the newest events first.
#: "Now", "still" and "these days" ask for what holds today: a fact logged later
#: replaces an older one ("I'm vegetarian" in September, "pescatarian now" in November).
_RECENT = re.compile(
    r"\b(?:last|latest|recent|recently|newest|most\s+recent|now|nowadays|currently|"
    r"still|these\s+days|any\s*more)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Term:
    start: int
    end: int
    text: str
    kind: str  # quoted | error | path | identifier | technical | word


def _personal_verbs(text: str) -> list[str]:
    """The meta words of ``text`` that are its topic: it asks what a person does,
    likes or needs ("where do I work?", "do you remember what I like?"), not whether
    something works ("how does it work?") nor about the assistant ("I like you", "are
    you working?")."""
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
    found = []
    for at, word in enumerate(words):
        if word not in _PERSONAL_VERBS:
            continue
        subject = next((w for w in reversed(words[:at]) if w in _PRONOUNS), None)
        after = words[at + 1] if at + 1 < len(words) else None
        if subject in _PEOPLE and after not in _OBJECTS:
            found.append(word)
    return found


def _terms(text: str) -> list[_Term]:
    """Every search term of ``text`` in order; protected spans win over plain words."""
    spans: list[_Term] = []
    for match in _QUOTED.finditer(text):
        value = next(g for g in match.groups() if g).strip()
        spans.append(_Term(match.start(), match.end(), value, "quoted"))
    for match in _ERROR.finditer(text):
        spans.append(_Term(match.start(), match.end(), match.group(0).strip(), "error"))
    for match in _PATH.finditer(text):
        if _looks_like_path(match.group(0)):
            spans.append(_Term(match.start(), match.end(), match.group(0), "path"))
    for pattern in (_CALL, _DOTTED, _SNAKE, _CAMEL):
        for match in pattern.finditer(text):
            value = match.group(1) if pattern is _CALL else match.group(0).removesuffix("()")
            if value.lower() not in _NOT_IDENTIFIERS:
                spans.append(_Term(match.start(), match.end(), value, "identifier"))
    for pattern in (_ACRONYM, _WITH_DIGIT, _HYPHENATED):
        for match in pattern.finditer(text):
            value = match.group(0)
            if value.lower() in STOP_WORDS or value.upper() in {"I", "OK", "AM", "PM"}:
                continue
            spans.append(_Term(match.start(), match.end(), value, "technical"))
    # Earlier, then longer, spans win; a span inside a kept one is dropped.
    spans.sort(key=lambda t: (t.start, -(t.end - t.start)))
    kept: list[_Term] = []
    for span in spans:
        if kept and span.start < kept[-1].end:
            continue
        kept.append(span)
    terms = list(kept)
    cursor = 0
    for span in [*kept, _Term(len(text), len(text), "", "end")]:
        gap = text[cursor : span.start]
        stripped = _REQUEST.sub(lambda m: " " * len(m.group(0)), gap)
        for match in _WORD.finditer(stripped):
            word = match.group(0).strip("'-")
            lower = word.lower()
            stem = re.sub(r"(?:n't|'s|'re|'ll|'ve|'d|'m)$", "", lower)
            if (
                not word
                or lower in STOP_WORDS
                or lower in META_WORDS
                or (
                    stem != lower
                    and (
                        not stem or stem in STOP_WORDS or stem in META_WORDS or stem in _AUXILIARIES
                    )
                )
            ):
                continue
            if len(word) == 1 and not word.isdigit():
                continue
            terms.append(_Term(cursor + match.start(), cursor + match.end(), word, "word"))
        cursor = max(cursor, span.end)
    terms.sort(key=lambda t: t.start)
    return terms


def _without_requests(text: str, protected: list[_Term]) -> str:
    """``text`` less its request phrases ("can you please", "explain") where they are
    prose: a path, a quoted string or a line of code keeps every word."""
    pieces, cursor = [], 0
    for term in sorted(protected, key=lambda t: t.start):
        gap = text[cursor : term.start]
        pieces += [_REQUEST_IN_PROSE.sub(" ", gap), text[term.start : term.end]]
        cursor = term.end
    pieces.append(_REQUEST_IN_PROSE.sub(" ", text[cursor:]))
    return " ".join("".join(pieces).split())


def _looks_like_path(value: str) -> bool:
    if value.startswith(("http://", "https://")) or "//" in value:
        return False
    # "and/or", "read/write": two plain words with a slash are not a path.
    parts = re.split(r"[/\\]", value)
    has_extension = re.search(r"\.(?:" + _EXTENSIONS + r")$", value) is not None
    return has_extension or len(parts) >= 3 or value.startswith(("./", "../", "/", "~"))
