"""How many of a query's words name a result: a layer's evidence beyond cosine and coverage.

A code symbol is named by its qualified name and path (``code/ranking.py``), a document's
passage by its document's title and its heading path (``kb/knowledge_base.py``). Words
are compared as the text index stems them, stop words dropped. One shared word says
little (``get``, ``file``, ``list`` name thousands of things), so the match counts from
the second: the words that name a result, less one, over the query's words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .fts_query import STOP_WORDS, query_terms
from .store import Store

#: A name's word this long or longer also matches the query words it begins
#: (``param`` / ``parameter``, ``config`` / ``configuration``); shorter ones
#: (``add`` / ``address``) say too little. Code names abbreviate; titles do not.
ABBREVIATION_LETTERS = 5
#: A name's word of this many letters or more also matches the query words whose
#: initials spell it (``lru`` / "least recently used", ``ttl`` / "time to live").
ACRONYM_LETTERS = 3
ACRONYM_MAX_LETTERS = 5
_WORD = re.compile(r"[^\W\d_]+")


def _acronyms(query: str) -> dict[str, list[str]]:
    """The initials of each run of consecutive words in ``query`` -> the run's words.

    A run neither starts nor ends with a stop word: "time to live" spells ttl, but "a
    post into" spelt ``api`` and "path url to" ``put`` on the development suite.
    """
    words = [w.lower() for w in _WORD.findall(query)]
    runs: dict[str, list[str]] = {}
    for n in range(ACRONYM_LETTERS, ACRONYM_MAX_LETTERS + 1):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if run[0] not in STOP_WORDS and run[-1] not in STOP_WORDS:
                runs.setdefault("".join(w[0] for w in run), run)
    return runs


def name_matches(
    store: Store,
    query: str,
    named: Mapping[int, Sequence[str]],
    *,
    abbreviations: bool = False,
) -> dict[int, float]:
    """Per result id, the share of ``query``'s words that ``named[id]``'s words hold
    (less one), in [0, 1)."""
    terms = query_terms(query)
    if not terms or not named:
        return {}
    acronyms = _acronyms(query) if abbreviations else {}
    vocabulary = list(
        dict.fromkeys(
            [
                *terms,
                *(w for ws in named.values() for w in ws),
                *(w for run in acronyms.values() for w in run),
            ]
        )
    )
    stem_of = dict(zip(vocabulary, store.stems(vocabulary), strict=True))
    wanted = set(stem_of[t] for t in terms)
    found: dict[int, float] = {}
    for i, words in named.items():
        name = {stem_of[w] for w in words}
        prefixes = [n for n in name if len(n) >= ABBREVIATION_LETTERS] if abbreviations else []
        held = {w for w in wanted if w in name or any(w.startswith(p) for p in prefixes)}
        for word in words:
            run = acronyms.get(word)
            if run and word not in run:
                held |= {stem_of[w] for w in run} & wanted
        found[i] = max(len(held) - 1, 0) / len(wanted)
    return found
