"""What a prompt asks, set apart from what it pastes.

An agent's prompt often carries material: the user's function, a config file, a
log, then "why does this return None?". Searched as said, the question is a few
words among hundreds, and past the first 1,000 characters a planned query keeps
it is not searched at all. On the development suite's docs and code questions
asked after 1,363 characters of pasted code, the answer reached
``enrich_context``'s block for 1 of 462 searched as said and 376 with the paste set
apart, as many as asked alone
(benchmarks/bench_gate.py, "Questions asked with pasted code").

So the prompt's lines are read one by one: prose is the ask; fenced blocks,
indented lines, lines that start like code (``def``, ``import``, ``x = ...``) or a
log, lines that are mostly not words, and a line said before are material, and so
are a docstring's lines, a diff's hunks, comments between lines of code, and YAML
keys and SQL clauses beside material, which read like prose alone. When the material is large enough to be a paste (``PASTED_CHARS``) and prose remains, the planner
searches with the prose alone, and the code layer looks up the names the prose
writes before those of the paste. A prompt that is all paste (a function, a
stack trace) is searched as before: then the paste is the question.

A long ask (a paragraph about the user's project, then the question) is also read in
parts (:func:`ask_parts`): its questions, and its last and first paragraphs (or its
last sentences), which the planner gives each source as further queries.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..fts_query import STOP_WORDS
from .plan import MAX_PARTS

#: Material shorter than this is part of the question ("x = foo(1) gives None").
PASTED_CHARS = 300
#: Prose needs this many words that say what to look for (not "fix this", "can you
#: explain this code?") to be searched alone; else the paste is what to look up.
MIN_ASK_WORDS = 2

#: An ask this long is also searched by its parts (:func:`ask_parts`, at most
#: ``plan.MAX_PARTS``): a sentence of background beside a question is enough to bury it.
LONG_ASK_CHARS = 100

_FENCE = re.compile(r"^[ \t]*(?:```|~~~)")
#: A line starting so is code only with code's punctuation, or when short: "import os"
#: is code, "import of the orders fails since Monday" and "let me know why" are prose.
_KEYWORD_START = re.compile(
    r"^(?:import|from|def|class|return|raise|elif|else|try|except|finally|async|await|"
    r"const|let|var|function|func|fn|pub|public|private|protected|package|using|"
    r"namespace|struct|enum|impl)\b"
)
#: A docstring or a multi-line string opening a line (``"""Reads the exports.``, ``doc = """``).
_DOCSTRING = re.compile(r"^[ \t]*(?:[\w.]+[ \t]*=[ \t]*)?[rRbBuUfF]{0,2}(?:\"{3}|'{3})")
_TRIPLE_QUOTES = re.compile(r"\"{3}|'{3}")
#: A unified diff starts so; its hunks' lines start with "+", "-", " " or "\".
_DIFF_START = re.compile(r"^(?:diff --git |--- a/|\+\+\+ b/|@@ -\d)")
_DIFF_LINE = re.compile(r"^[-+ \\]")
_LOOSE_HUNK_LINE = re.compile(r"^[-+] ?\S")
_COMMENT = re.compile(r"^(?:#|--)")
_YAML_KEY = re.compile(r"^[ \t]*(?:-[ \t]+)?([a-z_][\w.-]*):(?=[ \t]|$)")
#: Keys people write in prose ("note: it fails on retry", "- expected: green build").
_PROSE_KEYS = frozenset(
    [
        "note",
        "notes",
        "todo",
        "edit",
        "update",
        "goal",
        "problem",
        "context",
        "expected",
        "actual",
        "ps",
        "question",
        "error",
        "issue",
        "result",
        "fyi",
        "tldr",
        "summary",
        "background",
        "why",
        "reason",
        "cause",
        "fix",
        "workaround",
        "solution",
        "example",
        "output",
        "also",
        "btw",
    ]
)
_NAME = r"[\w.]+"
#: An SQL clause, by its shape: "order by total puts 900 above 10000" is not one.
_SQL_CLAUSE = re.compile(
    rf"^[ \t]*(?:(?:order|group)[ \t]+by[ \t]+{_NAME}(?:[ \t]+(?:asc|desc))?"
    rf"(?:[ \t]*,[ \t]*{_NAME}(?:[ \t]+(?:asc|desc))?)*"
    rf"|(?:(?:left|right|inner|outer|full|cross)[ \t]+)?join[ \t]+{_NAME}(?:[ \t]+\w+)?"
    rf"[ \t]+on[ \t]+{_NAME}[ \t]*=[ \t]*{_NAME}"
    rf"|where[ \t]+{_NAME}[ \t]*(?:[=<>]|!=|is[ \t]+(?:not[ \t]+)?null\b|in[ \t]*\()"
    rf"|having[ \t]+\w+\("
    rf"|from[ \t]+{_NAME}(?:[ \t]+(?:as[ \t]+)?\w+)?|limit[ \t]+\d+)[ \t]*;?[ \t]*$",
    re.IGNORECASE,
)
#: A loop or a branch: code when short or with code's punctuation (``for x in y:``,
#: ``if (ok) {``); "for some reason it fails when I run this:" is a label.
_CONTROL = re.compile(r"^(?:for|while|if|elif|with|switch|foreach)\b.*[:{;]$")
_CONTROL_PUNCTUATION = re.compile(r"[()\[\]=<>]")
_CODE_PUNCTUATION = re.compile(r"[()=;{}\[\]<>]|:$")
_CODE_START = re.compile(
    r"^(?:#include\b|#define\b|from\s+[\w.]+\s+import\b|import\s+[\w.]+(?:\s*,\s*[\w.]+)*$"
    r"|(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\s"  # SQL, written upper case
    r"|(?i:select[ \t]+(?:\*|[\w.]+(?:[ \t]*,[ \t]*[\w.]+)+)[ \t]+from[ \t])"  # or columns first
    r"|@[\w.]+(?:\(|$)|\$ |>>> |[{}<]|//|/\*|\*/"  # decorators, shell prompts, braces, comments
    r"|[\w.\[\]'\"]+\s*(?:[-+*/%|&^]|//|\*\*)?=(?!=)"  # an assignment: x = 1, a.b += 2
    r"|\w+\(.*\)[;,]?$)"  # a bare call: main()
)
#: A log line: a date, a clock time or a level first.
_LOG = re.compile(
    r"^\[?(?:\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2}|"
    r"(?:DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|CRITICAL|FATAL|TRACE)\b)"
)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+")
#: A word: two letters or more, in any script ("为什么" is one, as its own token).
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['-])*[^\W\d_]")
#: Words about the conversation or the kind of artefact, not its subject.
META_WORDS = frozenset(
    [
        "code",
        "codebase",
        "repo",
        "repository",
        "function",
        "functions",
        "method",
        "methods",
        "file",
        "files",
        "class",
        "classes",
        "something",
        "anything",
        "stuff",
        "thing",
        "things",
        "bit",
        "part",
        "question",
        "answer",
        "help",
        "issue",
        "bug",
        "bugs",
        "problem",
        "problems",
        "work",
        "works",
        "working",
        "broken",
        "wrong",
        "happen",
        "happens",
        "happening",
        "going",
        "going",
        "on",
        "use",
        "used",
        "using",
        "need",
        "needs",
        "get",
        "got",
        "make",
        "made",
        "see",
        "look",
        "know",
        "think",
        "want",
        "like",
        "also",
        "maybe",
        "really",
        "please",
        "thanks",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "i",
        "i'm",
        "it's",
        "its",
        "that's",
        "there's",
        "again",
        "still",
        "already",
        "ever",
        "even",
        "well",
        "way",
        "lot",
        "lots",
    ]
)
#: Words that ask rather than say what about: "fix this", "can you explain this code?".
_ASKING = frozenset(
    [
        "fix",
        "explain",
        "review",
        "check",
        "tell",
        "show",
        "describe",
        "summarise",
        "summarize",
        "refactor",
        "debug",
        "improve",
        "implement",
        "write",
        "rewrite",
        "can",
        "could",
        "would",
        "hi",
        "hey",
        "hello",
        "ok",
        "okay",
    ]
)
#: With those, the words of a line introducing a paste ("Here is what I have so far:").
LABEL_WORDS = frozenset(
    [
        "here",
        "below",
        "following",
        "snippet",
        "script",
        "output",
        "log",
        "logs",
        "tried",
        "attempt",
        "current",
        "currently",
        "far",
        "wrote",
        "looks",
        "attached",
        "version",
        "example",
        "config",
    ]
)
#: Words of a sentence that opens or closes a message ("Some background first.",
#: "Thanks a lot, much appreciated!"): no part of a long ask is made of them alone.
_OPENING_WORDS = frozenset(
    [
        "background",
        "context",
        "first",
        "quick",
        "short",
        "info",
        "information",
        "details",
        "fyi",
        "thank",
        "thanks",
        "thx",
        "cheers",
        "regards",
        "best",
        "kind",
        "much",
        "lot",
        "appreciated",
        "appreciate",
        "advance",
        "sorry",
        "long",
        "mail",
        "message",
        "post",
        "hope",
        "makes",
        "sense",
        "clear",
        "happy",
        "glad",
    ]
)
#: A closing formula starts so: "Thanks in advance, and sorry for the long mail.",
#: "谢谢你的帮助", "よろしくお願いします".
_SIGN_OFF = re.compile(
    r"^(?:(?:thanks|thank\s+you|many\s+thanks|thx|cheers|regards|best|kind\s+regards|"
    r"much\s+appreciated|any\s+help|hope\s+(?:this|that|it)|sorry\s+for)\b"
    r"|谢谢|多谢|感谢|辛苦|ありがとう|よろしく|お疲れ|감사|고맙)",
    re.IGNORECASE,
)
#: A greeting says nothing, but a question may follow it in the same sentence ("Hi,
#: how do I roll back?", "你好，请问..."): it is read past, not a reason to drop the part.
_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey)(?:\s+there)?\b|good\s+(?:morning|afternoon|evening)\b"
    r"|你好|您好|こんにちは|こんばんは|おはよう(?:ございます)?|안녕하세요)[\s,.!！，。、]*",
    re.IGNORECASE,
)
#: A Markdown heading, or a bold line standing for one.
_HEADING = re.compile(r"^(?:#|\*\*[^*]+\*\*:?$|__[^_]+__:?$)")
#: Ideographs and syllables of scripts written without spaces: two count as a word.
_IDEOGRAPH = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FULL_WIDTH_PUNCTUATION = re.compile(r"[\u3000-\u3003\u3008-\u3011\uff01-\uff0f\uff1a-\uff20]")
#: A sentence that opens so asks, with or without a "?" ("Please explain how the
#: reconcile job retries.", "I need to add retries to the webhook handler."); "we
#: need to" and "we would like to" more often say what must hold ("We would like to
#: keep changes small").
_REQUEST_OPENING = re.compile(
    r"^(?:(?:so|ok(?:ay)?|now|anyway)\b,?\s+)?(?:please\b|pls\b|kindly\b|"
    r"(?:can|could|would|will)\s+(?:you|u|someone|anyone)\b|help\s+me\b|"
    r"(?:tell|show|give)\s+me\b|walk\s+me\s+through\b|explain\b|"
    r"i\s+(?:need|want)\s+to\b|(?:i'm|i\s+am|we're|we\s+are)\s+trying\s+to\b|"
    r"how\s+(?:do|can|should)\s+(?:i|we)\b|"
    r"i\s+(?:was\s+)?wonder(?:ing)?\b|is\s+there\s+a\s+way\b|what'?s\s+the\s+best\s+way\b)",
    re.IGNORECASE,
)
#: A part longer than this share of the ask searches about what the ask does.
MAX_PART_SHARE = 0.6
#: Words that say nothing of what to look for: in a label, beside a paste, in a part.
_SAYING_NOTHING = STOP_WORDS | META_WORDS | LABEL_WORDS
_ASKING_NOTHING = _SAYING_NOTHING | _ASKING
_OPENING_NOTHING = _ASKING_NOTHING | _OPENING_WORDS
_PARAGRAPH_BREAK = re.compile(r"\r?\n[ \t\r]*\n")
#: A sentence ends at ".", "!" or "?" after a word ("escape with .. or" goes on).
_SENTENCE_END = re.compile(r"(?<=[\w)\"'`][.!?])\s+|(?<=[？。！])\s*")
#: A question with fewer content words than this is searched with the sentence before it.
QUESTION_WORDS = 4
#: In one paragraph, its last sentences up to this long are a part (a question is
#: often two: "The load blows up on extra keys. Can I drop them?").
LAST_SENTENCES_CHARS = 200
_DEFINES = re.compile(
    r"\b(?:def|class|function|func|fn|struct|interface|trait|enum|type)\s+([A-Za-z_]\w*)"
)


@dataclass(frozen=True)
class PromptParts:
    """``ask``: the prompt to search with; ``pasted``: the material set apart ("" if none)."""

    ask: str
    pasted: str = ""

    def names_defined(self) -> frozenset[str]:
        """Names the paste defines (``def low_stock``): the user has their code already."""
        return frozenset(_DEFINES.findall(self.pasted))


def split_prompt(
    text: str, keep: Sequence[tuple[int, int]] = (), drop: Sequence[tuple[int, int]] = ()
) -> PromptParts:
    """The prompt's prose apart from pasted material, when it pastes any.

    Lines that overlap a ``keep`` span (a condensed stack trace, an error message)
    belong to the ask whatever they look like, each once; lines that overlap a ``drop``
    span (a log's older errors) are material. Returns ``PromptParts(text)`` when the material is
    shorter than ``PASTED_CHARS`` or no prose is left to search with.
    """
    ask: dict[str, None] = {}  # the prose lines in order, each once
    labels: list[str] = []  # lines of the ask ending in ":" that material follows
    pasted: list[str] = []
    lines = text.splitlines()
    kinds = _kinds(lines, _lines_in(text, keep), _lines_in(text, drop))
    for line, kind in zip(lines, kinds, strict=True):
        said = line.strip()
        if kind == "kept":
            ask.setdefault(said)
            continue
        if kind is None or kind == "fence":
            continue
        # a line said before is a log's (or a paste's) repeat
        if kind == "material" or said in ask:
            pasted.append(line)
            last = next(reversed(ask), "")
            if last.endswith(":") and last not in labels:
                labels.append(last)
            continue
        ask.setdefault(said)
    material = "\n".join(pasted)
    for label in labels:
        if not _content_words(label, _SAYING_NOTHING):
            del ask[label]
    prose = "\n".join(ask)
    if len(material) < PASTED_CHARS or len(_content_words(prose, _ASKING_NOTHING)) < MIN_ASK_WORDS:
        return PromptParts(text)
    return PromptParts(prose, material)


def ask_parts(ask: str) -> list[str]:
    """Parts of a long ask to search on their own, read from its prose lines (not from
    code or a log it pastes); [] when that prose is under ``LONG_ASK_CHARS``
    (:func:`ask_length`). What the ask asks, as it says so most plainly:

    - its questions, the sentences ending in "?" (one that says little, "Can I drop
      them?", with the sentence before it);
    - else its requests: "Please ...", "Can you ...", "I need to ...";
    - else its one-sentence paragraphs between others (not labels, headings or list
      items), and its last and first paragraphs (the first only without such a
      paragraph; in one paragraph, its last sentence, and its last sentences up to
      ``LAST_SENTENCES_CHARS``).

    A part that says nothing on its own ("Thanks a lot!", "Some context first.") or is
    most of the ask is left out.

    Searched as one query, a paragraph of background outweighs a one-line question
    in the embedding and in word coverage, wherever it stands: after 1,180 characters
    of prose about the user's project, the development suite's answers reached the
    block for 1 of 462 questions (376 asked alone; benchmarks/bench_gate.py,
    "Questions asked after background"). The whole ask is still searched: background
    often holds the terms that matter ("we run Flask behind nginx").
    """
    if ask_length(ask) < LONG_ASK_CHARS:
        return []
    lines = ask.splitlines()
    kinds = _kinds(lines, set(), set())
    prose = "\n".join(
        line if kind == "prose" else "" for line, kind in zip(lines, kinds, strict=True)
    )
    whole = " ".join(prose.split())
    if ask_length(whole) < LONG_ASK_CHARS:
        return []
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(prose) if p.strip()]
    said = [[s for s in _SENTENCE_END.split(p) if s.strip()] for p in paragraphs]
    sentences = [s for ss in said for s in ss]
    # What the ask asks, in the order it says so best: its questions, else its
    # requests; only without either are its one-sentence paragraphs between others and
    # its ends searched. In a short prompt the first paragraph is often an aside ("Sorry,
    # my manager pulled me into a meeting."), which searched alone brought context to a
    # prompt that asked about something else.
    asked = [
        _with_lead(ss, at)
        for ss in said
        for at, sentence in enumerate(ss)
        if sentence.rstrip().endswith(("?", "？"))
    ]
    requested = [s for s in sentences if _REQUEST_OPENING.match(s) and _says(s)]
    for said_so in (asked, requested):
        part = _part(" ".join(said_so), whole)
        if part:
            return [part]
    # Not a label ("Here is the log:"), a heading or a list item: they open what follows.
    alone = " ".join(
        ss[0]
        for ss in said[1:-1]
        if len(ss) == 1
        and len(ss[0]) <= LAST_SENTENCES_CHARS
        and not ss[0].rstrip().endswith(":")
        and not _HEADING.match(ss[0])
        and not _LIST_ITEM.match(ss[0])
        and _says(ss[0])
    )
    # A paragraph's first sentence often only opens it ("Some background first."); a
    # first paragraph may be the question, before the background that explains it,
    # unless a paragraph of one sentence after it asks ("My laptop is brand new.",
    # "Translate 'good morning' into Italian.", "Thanks!").
    if len(paragraphs) > 1:
        ends = [paragraphs[-1]] if _part(alone, whole) else [paragraphs[-1], paragraphs[0]]
    else:
        last = len(sentences) - 1
        while last > 0 and len(" ".join(sentences[last - 1 :])) <= LAST_SENTENCES_CHARS:
            last -= 1
        ends = [sentences[-1], " ".join(sentences[last:])]
    parts: list[str] = []
    for candidate in (alone, *ends):
        part = _part(candidate, whole)
        if part and part not in parts:
            parts.append(part)
    return parts[:MAX_PARTS]


def _with_lead(sentences: Sequence[str], at: int) -> str:
    """A question with the sentence before it when it says little on its own ("The
    load blows up on extra keys. Can I drop them?"), and the two are short enough."""
    question = sentences[at]
    if at == 0 or len(_content_words(question, _OPENING_NOTHING)) >= QUESTION_WORDS:
        return question
    led = f"{sentences[at - 1]} {question}"
    return led if len(led) <= LAST_SENTENCES_CHARS else question


def _part(text: str, whole: str) -> str:
    """``text`` as a part of the ask ``whole``, or "" if it says nothing on its own or
    is most of the ask (searching it is searching the ask again)."""
    part = " ".join(text.split())
    return part if len(part) <= MAX_PART_SHARE * len(whole) and _says(part) else ""


def ask_length(text: str) -> int:
    """``text``'s length in characters, an ideograph counted as three: a Chinese or
    Japanese sentence says in 30 characters what an English one says in about 90."""
    return len(text) + 2 * len(_IDEOGRAPH.findall(text))


def _says(part: str) -> bool:
    """Whether a part says what to look for: two words that are not asking, stop,
    opening or closing words (or four ideographs) after any greeting, and no closing
    formula first."""
    part = _GREETING.sub("", part, count=1)
    if _SIGN_OFF.match(part):
        return False
    content = _content_words(part, _OPENING_NOTHING)
    return len(content) + len(_IDEOGRAPH.findall(part)) // 2 >= MIN_ASK_WORDS


def _content_words(text: str, saying_nothing: frozenset[str]) -> list[str]:
    """``text``'s words that say what to look for (not in ``saying_nothing``)."""
    return [w for w in _WORD.findall(text) if w.lower() not in saying_nothing]


#: What :func:`_kinds` calls a line.
LineKind = Literal["kept", "prose", "material", "fence"] | None


def _kinds(
    lines: Sequence[str], kept: set[int], dropped: set[int], *, docstrings: bool = True
) -> list[LineKind]:
    """Each line's kind: "kept", "prose", "material", "fence", or None (blank).

    Besides what :func:`_is_prose` reads in a line alone, the lines around it count:
    inside a fence, a docstring (a closed one: an open one is a fragment, read line
    by line) or a diff's hunks a line is material, and so is a comment line (``#``,
    ``--``) between two lines of unfenced material (``# compare each row`` in a
    pasted script; a Markdown heading between two fenced blocks stays prose), and a
    YAML key or SQL clause beside material (:func:`_goes_on`), unless such lines are
    all the prose there is.
    """
    kinds: list[LineKind] = []
    fenced = diff = docstring = gap = False
    for number, line in enumerate(lines):
        said = line.strip()
        if number in kept:
            kinds.append("kept")
            continue
        if not docstring and _FENCE.match(line):
            fenced = not fenced
            kinds.append("fence")
            continue
        if not said:
            gap = True
            kinds.append(None)
            continue
        # A hunk's line; one with the marker close to prose is a list item ("- does
        # this fix it?") or a note after the diff ("-- I think so"), once a blank line
        # or a list's single space says so.
        loose = _LOOSE_HUNK_LINE.match(line) is not None and (gap or line[1:2] == " ")
        hunk = _DIFF_LINE.match(line) is not None and not (loose and _is_prose(line[1:].lstrip()))
        diff = (diff and hunk) or (not fenced and _DIFF_START.match(line) is not None)
        gap = False
        opening = docstrings and not fenced and _DOCSTRING.match(line) is not None
        material = (
            fenced or diff or docstring or opening or number in dropped or not _is_prose(line)
        )
        if (docstring or opening) and len(_TRIPLE_QUOTES.findall(line)) % 2:
            docstring = not docstring
        kinds.append("material" if material else "prose")
    if docstring:
        return _kinds(lines, kept, dropped, docstrings=False)
    # the nearest non-blank line's kind before and after each line
    before: list[LineKind] = []
    seen: LineKind = None
    for kind in kinds:
        before.append(seen)
        seen = kind if kind is not None else seen
    after: list[LineKind] = []
    seen = None
    for kind in reversed(kinds):
        after.append(seen)
        seen = kind if kind is not None else seen
    after.reverse()
    read = list(kinds)
    for number, line in enumerate(lines):
        said = line.strip()
        if (
            kinds[number] == "prose"
            and _COMMENT.match(said)
            and not said.endswith(("?", ":"))
            and before[number] == after[number] == "material"
        ):
            read[number] = "material"
    # A YAML key or an SQL clause beside material goes on with it ("name: CI" above
    # "on:", "order by total desc" under "from orders o"): top down, then bottom up.
    # A blank line ends what goes on.
    for numbers in (range(len(lines)), range(len(lines) - 1, -1, -1)):
        beside: LineKind = None
        for number in numbers:
            if read[number] == "prose" and beside == "material" and _goes_on(lines[number]):
                read[number] = "material"
            beside = read[number]
    # Unless that leaves no prose but labels: then it was the ask.
    if any(
        kind == "kept" or (kind == "prose" and not lines[number].rstrip().endswith(":"))
        for number, kind in enumerate(read)
    ):
        return read
    return kinds


def _goes_on(line: str) -> bool:
    """Whether a line reads as the material beside it going on: a YAML key with a
    short value or indented (``name: CI``, ``  - run: pytest -q``; not one people
    write in prose, "note: ...", nor a label ending in ":" but a bare key), or an SQL
    clause by its shape (``order by o.total desc``, ``GROUP BY c.email``). Never a
    question."""
    said = line.rstrip()
    if said.endswith(("?", "？")):
        return False
    if _SQL_CLAUSE.match(line):
        return True
    key = _YAML_KEY.match(line)
    if key is None or key.group(1) in _PROSE_KEYS:
        return False
    value = line[key.end() :].split()
    if value and said.endswith(":"):
        return False  # "steps: these are the ones that fail:" labels what follows
    return line[:1] in (" ", "\t") or len(value) <= 3


def _lines_in(text: str, spans: Sequence[tuple[int, int]]) -> set[int]:
    """The numbers of ``text``'s lines that overlap any of ``spans`` (character offsets)."""
    lines = text.splitlines(keepends=True)
    starts = list(itertools.accumulate((len(line) for line in lines), initial=0))
    found: set[int] = set()
    for a, b in spans:
        number = bisect.bisect_right(starts, a) - 1
        while number < len(lines) and starts[number] < b:
            found.add(number)
            number += 1
    return found


def _is_prose(line: str) -> bool:
    item = _LIST_ITEM.match(line)
    if item:
        line = line[item.end() :]
    elif line[:1] in (" ", "\t"):
        return False  # indented: code, or a stack trace's frames
    line = line.strip()
    # Chinese and Japanese write no spaces: their punctuation parts the words, and a
    # run of ideographs counts a word per two ("库存服务" is two).
    tokens = _FULL_WIDTH_PUNCTUATION.sub(" ", line).split()
    words = [t for t in tokens if _WORD.fullmatch(t.strip(".,;:!?\"'()`*"))]
    share = len(words) / len(tokens) if tokens else 0.0
    said = sum(max(1, len(_IDEOGRAPH.findall(w)) // 2) for w in words)
    if line.endswith(("?", "？")) and share >= 0.5:
        return True  # a question, even one that starts like code ("x = 3 but why?")
    if _CODE_START.match(line) or _LOG.match(line):
        return False
    keyword = item is None and _KEYWORD_START.match(line)
    if keyword and (_CODE_PUNCTUATION.search(line) or len(tokens) <= 4):
        return False
    control = item is None and _CONTROL.match(line)
    if control and (_CONTROL_PUNCTUATION.search(line) or len(tokens) <= 4):
        return False
    return said >= 2 and share >= 0.6 and not line.endswith(("{", ";"))
