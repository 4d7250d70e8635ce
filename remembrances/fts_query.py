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
    words = _TOKEN.findall(cjk_words(text))  # Chinese, Japanese, Korean: pairs of characters
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


def fts_query(text: str, *, split_identifiers: bool = True) -> str | None:
    """A valid FTS5 query for ``text``, or None when it holds no searchable word."""
    terms = query_terms(text, split_identifiers=split_identifiers)
    return match_any(terms) if terms else None


def match_any(terms: Sequence[str]) -> str:
    """The FTS5 query matching any of ``terms`` (words from :func:`query_terms`)."""
    # Tokens are [^\W_]+, so they contain no double quote to escape.
    return " OR ".join(f'"{t}"' for t in terms)
