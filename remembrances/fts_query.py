"""Turning any user string into a valid FTS5 query.

User text is never given to ``MATCH`` as it is: questions contain ``?``, ``'``,
``-``, ``:``, ``(`` and words like ``AND``/``NEAR``, which are FTS5 syntax. The
query is rebuilt from word tokens, each quoted (so nothing is an operator), with
stop words dropped and the rest joined with OR (an implicit AND over a
natural-language question finds nothing). BM25 then ranks documents that match
more and rarer words higher.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from .cjk import cjk_words, is_pair

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: Letters and a number joined by a hyphen or slash (``SHA-256``, ``HTTP/2``, ``64-bit``).
_NUMBERED = re.compile(r"(?<![\w./-])(?:([^\W\d_]+)[-/]([0-9]+)|([0-9]+)-([^\W\d_]+))(?![\w/-])")
#: A word of letters then digits, or digits then letters: ``sha256``, ``utf8``, ``64bit``.
_LETTERS_DIGITS = re.compile(r"^(?:[a-z]+[0-9]+|[0-9]+[a-z]+)$")
_WORDS_AND_MARKS = re.compile(r"[a-z]+|\d+|[^\sa-z0-9]")

#: At most this many distinct terms reach FTS5: OR queries cost grows with terms.
MAX_TERMS = 32

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)


#: Stop words that stay stop words in capitals: emphasis ("DO call them", "ONLY
#: once"), clock times ("10 AM") and the operators people type ("deploy AND
#: friday"). SQL's NOT, ON, IS, AT, ALL and ANY stay terms: "LEFT JOIN ON", "IS NULL".
EMPHASIS_WORDS = frozenset(
    [
        "am",
        "pm",
        "do",
        "does",
        "did",
        "don",
        "be",
        "been",
        "are",
        "was",
        "were",
        "to",
        "a",
        "an",
        "the",
        "and",
        "or",
        "no",
        "nor",
        "only",
        "very",
        "too",
        "so",
        "just",
        "should",
        "will",
        "can",
        "now",
        "then",
        "again",
        "more",
        "most",
        "off",
        "out",
        "up",
        "over",
    ]
)


#: Kana voicing marks: combining, but not diacritics (バス is a bus, ハス a lotus).
_VOICING = frozenset("\u3099\u309a")


def fold(text: str) -> str:
    """``text`` without diacritics ("café" -> "cafe"), as both text indexes read words.
    What is left is composed again: a Hangul syllable stays one character, and が keeps
    its voicing mark."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if ch in _VOICING or not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare)


def split_identifier(word: str) -> list[str]:
    """``parseHTTPResponse2`` -> ``['parse', 'HTTP', 'Response', '2']``."""
    return _CAMEL.findall(word)


def query_terms(text: str, *, split_identifiers: bool = True) -> list[str]:
    """Lower-cased search terms of ``text``, stop words dropped, in first-seen order.

    Identifiers are also split at camelCase boundaries (snake_case is split by the
    tokenizer already), so ``getUserName`` finds ``get_user_name`` too. When every
    word is a stop word, the stop words are kept: "to be or not to be" is a query.
    """
    # Chinese, Japanese, Korean: pairs of characters; "SHA-256" is one word
    words = _TOKEN.findall(cjk_words(_numbered(text)))
    # a stop word in capitals amid lower case is a keyword or an acronym: SQL's WHERE,
    # IT, the US, the WHO (but "DO call" and "10 AM" are not)
    shouted = (
        {w.lower() for w in words if len(w) > 1 and w.isupper()} - EMPHASIS_WORDS
        if any(ch.islower() for ch in text)
        else set()
    )
    terms: list[str] = []
    for word in words:
        terms.append(word.lower())
        if _letters_and_number(word):  # one word: see written_apart
            continue
        if split_identifiers and word.isascii():
            parts = split_identifier(word)
            if len(parts) > 1:
                terms.extend(p.lower() for p in parts)
    kept = [t for t in terms if t not in STOP_WORDS or t in shouted] or terms
    return _within_budget(list(dict.fromkeys(kept)))


def _within_budget(terms: list[str]) -> list[str]:
    """The first terms within ``MAX_TERMS``, a pair of CJK characters counting half:
    a question in those scripts makes a pair of almost every character."""
    budget = float(MAX_TERMS)
    kept = []
    for term in terms:
        budget -= 0.5 if is_pair(term) else 1.0
        if budget < 0:
            break
        kept.append(term)
    return kept


#: Particles a verb is joined with into one word in technical writing: "roll back" is
#: written "rollback", "set up" "setup", "log in" "login", "shut down" "shutdown".
PARTICLES = ("up", "in", "out", "back", "off", "down", "over", "on", "around")
#: What follows a particle (besides the question's end or a punctuation mark): a
#: particle takes no noun of its own ("roll back the deploy", "log in to the dashboard"),
#: a preposition does ("the error log in production" is no login).
_AFTER_PARTICLE = frozenset(
    [
        *("the", "a", "an", "my", "our", "your", "his", "her", "its", "their", "this"),
        *("that", "these", "those", "it", "them", "me", "us", "him", "to", "with", "from"),
        *("into", "onto", "for", "again", "now", "and", "or", "then", "when", "after"),
        *("before", "so", "but", "first", "here", "there", "via", "using"),
    ]
)
#: Letters before a particle for a word to be read as verb and particle ("setup").
_MIN_VERB = 3
#: The particles a word is split at: not "on", which ends "version", "python", "common",
#: nor "in", which ends "satin" ("sat in") and "bulletin" ("bullet in"): words joined
#: with "in" are split only when they are one of these.
_SPLIT_PARTICLES = tuple(p for p in PARTICLES if p not in ("on", "in"))
_JOINED_WITH_IN = frozenset(["login", "plugin", "builtin", "signin", "checkin", "optin"])


def written_joined(text: str) -> list[tuple[str, str]]:
    """Word pairs ``text`` writes apart that a chunk may write as one word: a verb and
    its particle ("roll back": ``rollback``), letters and a number ("RFC 5545":
    ``rfc5545``; "SHA-256" is one word already, :func:`query_terms`)."""
    found = list(_WORDS_AND_MARKS.finditer(fold(text).lower()))
    tokens = [m.group(0) for m in found] + ["."]
    pairs: list[tuple[str, str]] = []
    for at, (first, second, after) in enumerate(zip(tokens, tokens[1:], tokens[2:], strict=False)):
        if (
            second in PARTICLES
            and first.isalpha()
            and first not in STOP_WORDS
            and len(first) > 1
            and (after in _AFTER_PARTICLE or not after.isalnum())
        ):
            pairs.append((first, second))
        elif (
            first.isalpha()
            and first not in STOP_WORDS
            and second.isdigit()
            and found[at].end() < found[at + 1].start()
        ):
            pairs.append((first, second))  # "RFC 5545" (not "rfc5545": one word already)
    return list(dict.fromkeys(pairs))[:MAX_TERMS]


def _numbered(text: str) -> str:
    """``text`` with ``SHA-256``, ``HTTP/2`` and ``64-bit`` written as one word: one
    query word, which a chunk holds as written or joined (:func:`written_apart`), not two
    that a chunk about SHA-1 and 256 colours holds as well."""
    if "-" not in text and "/" not in text:
        return text
    return _NUMBERED.sub(lambda m: "".join(part for part in m.groups() if part), text)


def _letters_and_number(word: str) -> tuple[str, str] | None:
    """``sha256``, ``SHA256``, ``Python3`` or ``64bit`` as its two parts, lower-cased;
    None for other words (``parseHTTPResponse2`` is split at its capitals instead)."""
    if not word.isascii() or not _LETTERS_DIGITS.match(word.lower()):
        return None
    parts = split_identifier(word)
    return (parts[0].lower(), parts[1].lower()) if len(parts) == 2 else None


def written_apart(text: str) -> list[tuple[str, str]]:
    """The two words of each word in ``text`` that a chunk may write apart:
    ``rollback`` as "roll back", ``sha256`` as "SHA-256" or "SHA 256". A chunk counts
    for such a word only where it writes the two next to each other."""
    pairs: list[tuple[str, str]] = []
    for written in _TOKEN.findall(_numbered(fold(text))):
        parts = _letters_and_number(written)
        if parts:
            pairs.append(parts)
            continue
        word = written.lower()
        if word in _JOINED_WITH_IN:
            pairs.append((word[:-2], "in"))
            continue
        if word in STOP_WORDS:
            continue
        for particle in _SPLIT_PARTICLES:
            verb = word[: -len(particle)]
            if word.endswith(particle) and len(verb) >= _MIN_VERB and verb not in STOP_WORDS:
                pairs.append((verb, particle))
                break
    return list(dict.fromkeys(pairs))[:MAX_TERMS]


def match_terms(text: str, *, split_identifiers: bool = True) -> list[str]:
    """What a text search for ``text`` asks for: its words (:func:`query_terms`), then
    their other spellings while the budget of ``MAX_TERMS`` lasts: ``rollback`` where
    the query says "roll back", and the phrase "roll back" (two words, a space between)
    where it says ``rollback``. Both engines' text legs ask for these."""
    terms = query_terms(text, split_identifiers=split_identifiers)
    if not terms:
        return []
    joined = ["".join(pair) for pair in written_joined(text)]
    apart = [" ".join(pair) for pair in written_apart(text)]
    return _within_budget(list(dict.fromkeys([*terms, *joined, *apart])))


def respelled(text: str) -> set[str]:
    """The words of ``text`` that have another spelling (:func:`written_apart`,
    :func:`written_joined`): a chunk may hold them only in that spelling."""
    words = {"".join(pair) for pair in written_apart(text)}
    return words | {word for pair in written_joined(text) for word in pair}


def fts_query(text: str, *, split_identifiers: bool = True) -> str | None:
    """A valid FTS5 query for ``text`` (:func:`match_terms`), or None when it holds no
    searchable word."""
    terms = match_terms(text, split_identifiers=split_identifiers)
    return match_any(terms) if terms else None


def match_any(terms: Sequence[str]) -> str:
    """The FTS5 query matching any of ``terms`` (words from :func:`query_terms`; two
    words separated by a space are a phrase)."""
    # Tokens are [^\W_]+, so they contain no double quote to escape.
    return " OR ".join(f'"{t}"' for t in terms)
