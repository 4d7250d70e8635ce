"""Turning any user string into a safe PostgreSQL ``tsquery`` that matches any of its words.

The same words as the SQLite text leg (:func:`remembrances.fts_query.query_terms`:
tokens, stop words dropped, identifiers split), joined with ``|``. Raw user text
never reaches ``to_tsquery``, whose syntax (``&``, ``|``, ``!``, ``<->``, ``:*``,
quotes, parentheses) would raise errors or change the meaning: each term is a run
of letters and digits, quoted besides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..cjk import cjk_words
from ..fts_query import fold, match_terms

__all__ = ["any_words", "fold", "index_text", "tsquery_text"]

#: What SQLite's unicode61 tokenizer splits words at: anything but letters and digits.
_SEPARATORS = re.compile(r"[\W_]+")
#: Bytes of CJK pairs indexed per chunk at most: a ``tsvector`` holds at most 1 MB, and
#: a pair takes its bytes again in the vector's entries and positions. 100,000 pairs of
#: astral Han made 1.2 MB; this leaves room for the chunk's other words.
MAX_PAIR_BYTES = 400_000


def index_text(text: str) -> str:
    """``text`` as ``chunks.tsv`` indexes it: without diacritics, and with every run of
    characters that are not letters or digits made a space. PostgreSQL's parser kept
    ``pkg/fts_query.py``, ``re.compile``, ``v2.3``, e-mail addresses and URLs whole,
    so a search for "compile" or "docs" missed them (SQLite's tokenizer splits them),
    and a hyphenated word counted three times (``blue-green``, ``blue``, ``green``).
    Chinese, Japanese and Korean runs are read as pairs of characters (``cjk_words``)."""
    # fold first: the order query_terms reads a query in
    return _SEPARATORS.sub(" ", cjk_words(fold(text), max_bytes=MAX_PAIR_BYTES))


def any_words(terms: Sequence[str]) -> str:
    """The ``to_tsquery`` text matching any of ``terms`` (words from ``query_terms``)."""
    return " | ".join(_quoted(t) for t in terms)


def _quoted(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsquery_text(text: str) -> str | None:
    """The ``to_tsquery`` input for ``text``, or None when it holds no searchable word.
    Like SQLite's (:func:`remembrances.fts_query.fts_query`), it also matches the
    query's words spelled joined or apart (``rollback``, "roll back")."""
    terms = match_terms(fold(text))
    if not terms:
        return None
    words = [t for t in terms if " " not in t]
    phrases = [" <-> ".join(_quoted(w) for w in t.split(" ")) for t in terms if " " in t]
    return " | ".join([any_words(words), *(f"({p})" for p in phrases)])
