"""What code search adds to the store's ranking: the symbol's name as evidence, one hit per symbol.

The store scores each candidate on its cosine and its coverage of the query's
words (docs/search.md). Code has one more telling thing: a plain-language
question often says what the function is called ("parse the retry-after
header" asks for ``parse_retry_after``). Coverage cannot see it, since it caps
each word at one occurrence and a name's words also occur in the body of every
caller. So each candidate gets a third number, its *name match*: how many of
the query's words (stemmed as the text index stems them, stop words dropped)
are words of the symbol's name, of its enclosing names (``Response`` for
``Response.json``) or of its file's path (``retry`` in ``utils/retry.py``),
less one, over the number of the query's words. One shared word says little
(``get``, ``file`` and ``list`` name thousands of functions): counted from the
first word, the name match lowered CoSQA dev's nDCG@10 at every weight (0.607
-> 0.603 at 1, 0.572 at 3); counted from the second it does not (0.607 at 2).
The score is then ``fusion.params_for("code").score(cosine, coverage, name)``.

A long symbol is indexed as several parts, and a search showed each part as a
hit of its own, so one long function could fill the top ten; hits are folded
into their symbol (the best part stands for it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .. import fusion
from ..fts_query import query_terms, split_identifier
from ..records import SearchResult
from ..store import Store
from .tables import KIND

_PART = re.compile(r"[A-Za-z0-9]+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]+$")


def identifier_words(text: str) -> list[str]:
    """Lower-case words of the identifiers in ``text`` (``Session.get_adapter`` ->
    session, get, adapter; ``utils/retryAfter`` -> utils, retry, after)."""
    words: list[str] = []
    for token in _PART.findall(text):
        words.extend(part.lower() for part in split_identifier(token) or [token])
    return words


def symbol_words(result: SearchResult) -> list[str]:
    """The words a code chunk is named by: its qualified name and its path without extension."""
    meta = result.metadata
    path = _EXTENSION.sub("", result.source)
    named = "" if meta.get("kind") == "file" else str(meta.get("qualified_name", ""))
    return identifier_words(f"{named} {path}")


def name_matches(store: Store, query: str, results: Sequence[SearchResult]) -> dict[int, float]:
    """Per result id, the share of the query's words that name it (see the module docstring)."""
    terms = query_terms(query)
    if not terms or not results:
        return {}
    named = {r.id: symbol_words(r) for r in results}
    vocabulary = list(dict.fromkeys([*terms, *(w for ws in named.values() for w in ws)]))
    stem_of = dict(zip(vocabulary, store.stems(vocabulary), strict=True))
    wanted = set(stem_of[t] for t in terms)
    return {
        i: max(len(wanted & {stem_of[w] for w in words}) - 1, 0) / len(wanted)
        for i, words in named.items()
    }


def rescored(store: Store, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
    """Hybrid results scored with the name match as well, best first."""
    params = fusion.params_for(KIND)
    names = name_matches(store, query, results)
    for r in results:
        r.score = params.score(r.vector_score or 0.0, r.text_score or 0.0, names.get(r.id, 0.0))
    return sorted(results, key=lambda r: (-r.score, r.id))


def one_per_symbol(results: Iterable[SearchResult], limit: int) -> list[SearchResult]:
    """The first (best) part of each symbol, at most ``limit`` of them."""
    seen: set[tuple[str, str, object]] = set()
    kept: list[SearchResult] = []
    for r in results:
        key = (r.collection, r.source, r.metadata.get("symbol"))
        if key in seen:
            continue
        seen.add(key)
        kept.append(r)
        if len(kept) == limit:
            break
    return kept
