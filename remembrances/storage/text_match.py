"""How much of a query's wording a chunk holds: a number in [0, 1] that means the same in any store.

Raw BM25 cannot be thresholded or mixed with cosine at a fixed weight: its IDF,
``ln(N / df)``, grows with the store, so the same note scores near 0 among three
notes and high among thousands. Two changes make it comparable across stores:

- Each query term's IDF is smoothed with ``PRIOR_CHUNKS`` imaginary chunks that
  lack it, ``ln((N + PRIOR_CHUNKS) / (df + 1))``: in a store of three notes the
  terms weigh about the same, in a large store rare terms weigh more, and no
  weight depends on a statistic that vanishes when the store is small.
- A chunk's BM25 is divided by the BM25 of a chunk that holds every query term
  once at typical length (each term's saturation capped at that level), so 1.0
  means "all the query's words are here", 0.5 "words carrying half the query's
  weight", whatever the store's size.

An identifier the query writes with ``_`` or ``.`` (``send_file``, ``app.config``)
is split into its words by the tokenizer, so a chunk holding "send" and "file" far
apart would cover it as fully as one that says ``send_file``. Where a chunk does not
hold the identifier as written, the words that only come from it count
``LOOSE_PARTS`` as much.

A verb and its particle the query writes apart ("roll back", "log in"), or letters
and a number ("SHA-256", "RFC 5545"), are held by a chunk that writes them as one word
("rollback", "login", ``sha256``): it counts for both (:func:`compounds`). The reverse
holds too: a chunk that writes the query's "rollback" or "sha256" as two words next to
each other holds it (:func:`apart`).

Term counts come from tokenizing the candidates' text with the index's own
tokenizer (a few microseconds per chunk, far cheaper than asking FTS5 for
each candidate's positions); the store's size and total length come from the
index (the ``fts_totals`` auxiliary function registered on every connection).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apsw

from ..cjk import cjk_words
from ..fts_query import (
    MAX_TERMS,
    fold,
    match_any,
    query_terms,
    respelled,
    written_apart,
    written_joined,
)

#: BM25's term-frequency saturation and length normalisation (FTS5's own defaults).
K1 = 1.2
B = 0.75
#: Imaginary chunks without the term, added to the store for IDF (see the module docstring).
PRIOR_CHUNKS = 100
#: The FTS5 tokenizer of ``chunks_fts``; query terms are stemmed with it to look up ``df``.
TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])
#: How much an identifier's words count in a chunk that does not hold the identifier.
LOOSE_PARTS = 0.5
#: A chunk word that shares its first NEAR_PREFIX letters with a query stem but is not
#: it ("allergic" for "allergies": Porter stems them allerg, allergi) counts this much.
NEAR_PREFIX = 6
NEAR_CREDIT = 0.5
#: ``snake_case``, ``dotted.names``, ``mixed_and.dotted``: words joined by ``_`` or ``.``
#: into one name (a letter first and two characters a part, so ``2.3`` and ``e.g.`` are
#: not names).
_JOINED = re.compile(r"(?<![\w.])[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)*(?![\w])")


def register(conn: apsw.Connection) -> None:
    """Add ``fts_totals(chunks_fts)`` (``"chunks tokens"`` of the whole index, read in
    O(1)) and ``temp.chunks_fts_vocab`` (each term's chunk count) to ``conn``.

    The vocabulary table lives in the connection's temp schema: nothing is
    written to the file, and it can be made before ``chunks_fts`` exists.
    """
    register_words(conn)
    conn.register_fts5_function("fts_totals", _fts_totals)
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_vocab "
        "USING fts5vocab(main, chunks_fts, 'row')"
    )


def register_words(conn: apsw.Connection) -> None:
    """Add ``remembrances_fts_text(text)``, the text as the index reads it
    (:func:`cjk_words`): the full-text triggers and the ``chunks_words`` view the index is
    rebuilt and checked from call it (store step 6). ``remembrances_words`` is step 5's
    (CJK runs paired as written), for a file of that step opened read-only."""
    conn.create_scalar_function("remembrances_fts_text", _words, 1, deterministic=True)
    conn.create_scalar_function("remembrances_words", _step5_words, 1, deterministic=True)


def _words(*args: apsw.SQLiteValue) -> apsw.SQLiteValue:
    (text,) = args
    return cjk_words(text) if isinstance(text, str) else text


def _step5_words(*args: apsw.SQLiteValue) -> apsw.SQLiteValue:
    (text,) = args
    return cjk_words(text, normalize=False) if isinstance(text, str) else text


def _fts_totals(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> str:
    return f"{api.row_count} {api.column_total_size()}"


@dataclass(frozen=True)
class QueryWords:
    """A query's searchable words, the FTS5 query that matches any of them, and their stems."""

    match: str
    stems: tuple[str, ...]

    @classmethod
    def of(cls, tokenize: apsw.FTS5Tokenizer, query: str) -> QueryWords | None:
        """``tokenize`` is the index's tokenizer (``conn.fts5_tokenizer(*TOKENIZER)``)."""
        words = query_terms(query)
        if not words:
            return None
        stems: list[str] = []
        kept: list[str] = []
        for word in words:
            tokens = list(
                tokenize(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False)
            )
            stem = str(tokens[0][0]) if tokens else word
            if stem not in stems:  # "deploy" and "deploys" count once
                stems.append(stem)
                kept.append(word)
        return cls(match_any(kept), tuple(stems))


@dataclass(frozen=True)
class Identifier:
    """A name the query writes joined (``send_file``) and the stems only it gives the query."""

    pattern: re.Pattern[str]
    stems: frozenset[str]


def identifiers(query: str, stems_of: Callable[[list[str]], Sequence[str]]) -> list[Identifier]:
    """The query's joined names (see the module docstring), each with the stems that
    occur in the query only as its parts; ``stems_of`` is the engine's stemmer. At
    most ``MAX_TERMS`` of them, as a query has at most that many words: each is
    looked for in every candidate."""
    query = cjk_words(fold(query))  # as the index reads both (remove_diacritics, CJK pairs)
    joined = [
        m
        for m in _JOINED.finditer(query)
        if len(query_terms(m.group(0), split_identifiers=False)) > 1
    ][:MAX_TERMS]
    if not joined:
        return []
    names = list(dict.fromkeys(m.group(0).lower() for m in joined))
    rest = " ".join(
        query[start:end]
        for start, end in zip(
            [0, *(m.end() for m in joined)], [*(m.start() for m in joined), len(query)], strict=True
        )
    )
    words_of = {name: query_terms(name, split_identifiers=False) for name in names}
    said = query_terms(rest, split_identifiers=False)
    every = list(dict.fromkeys([*said, *(w for ws in words_of.values() for w in ws)]))
    stem = dict(zip(every, stems_of(every), strict=True))  # one call: a round trip on PG
    alone = {stem[w] for w in said}
    found = []
    for name in names:
        # a dotted name is also held as its last part (flask.send_file / send_file)
        forms = dict.fromkeys([name, name.rsplit(".", 1)[-1]])
        alternatives = "|".join(re.escape(form) for form in forms)
        pattern = re.compile(rf"(?<![\w])(?:{alternatives})(?![\w])", re.IGNORECASE)
        parts = frozenset(stem[w] for w in words_of[name]) - alone
        if parts:
            found.append(Identifier(pattern, parts))
    return found


def compounds(query: str, stems_of: Callable[[list[str]], Sequence[str]]) -> dict[str, list[str]]:
    """The joined word of each pair the query writes apart (:func:`written_joined`), as a
    stem, with the stems of its two words: a chunk that says "Rollback" holds the query's
    "roll back". Without it a runbook's "## Rollback" section covered none of "how do I
    roll back a deploy?" but "deploy", and the enricher left it out. ``stems_of`` is the
    engine's stemmer."""
    pairs = written_joined(query)
    stem = _stems_of_pairs(pairs, stems_of)
    return {stem["".join(pair)]: [stem[pair[0]], stem[pair[1]]] for pair in pairs}


def apart(query: str, stems_of: Callable[[list[str]], Sequence[str]]) -> dict[tuple[str, str], str]:
    """The reverse of :func:`compounds`: for each word of the query a chunk may write as
    two (:func:`written_apart`, "rollback" as "roll back", "sha256" as "SHA-256"), the
    stems of the two, next to each other, and the stem of the word they stand for."""
    pairs = written_apart(query)
    stem = _stems_of_pairs(pairs, stems_of)
    return {(stem[pair[0]], stem[pair[1]]): stem["".join(pair)] for pair in pairs}


def _stems_of_pairs(
    pairs: Sequence[tuple[str, str]], stems_of: Callable[[list[str]], Sequence[str]]
) -> dict[str, str]:
    """The stem of each word of ``pairs`` and of each pair joined, in one call (a round
    trip on PostgreSQL); none is asked for when there are no pairs."""
    every = list(dict.fromkeys([w for pair in pairs for w in (*pair, "".join(pair))]))
    return dict(zip(every, stems_of(every), strict=True)) if every else {}


def compound_positions(
    joined: dict[str, list[str]], position: dict[str, int]
) -> dict[str, list[int]]:
    """Per joined stem, the places in the query's stems of the words it stands for (a
    stop-word particle is not among them: "set up" is "set" there)."""
    found = {j: [position[s] for s in parts if s in position] for j, parts in joined.items()}
    return {j: places for j, places in found.items() if places and j not in position}


def apart_positions(
    split: dict[tuple[str, str], str], position: dict[str, int]
) -> dict[tuple[str, str], int]:
    """Per pair of stems written next to each other, the place in the query's stems of
    the word they stand for (:func:`apart`)."""
    return {pair: position[whole] for pair, whole in split.items() if whole in position}


def part_weights(
    stems: Sequence[str], found: Sequence[Identifier], text: str
) -> list[float] | None:
    """Per query stem, 1, or ``LOOSE_PARTS`` when it only comes from identifiers the
    chunk does not hold; None when nothing is discounted."""
    folded = cjk_words(fold(text))  # once for all the names
    held = [i for i in found if i.pattern.search(folded)]
    if len(held) == len(found):
        return None
    loose = set().union(*(i.stems for i in found if i not in held))
    loose -= set().union(*(i.stems for i in held))
    return [LOOSE_PARTS if stem in loose else 1.0 for stem in stems]


def stems(conn: apsw.Connection, words: Sequence[str]) -> list[str]:
    """Each word's stem under the index's tokenizer (the word itself when it has none)."""
    tokenize = conn.fts5_tokenizer(*TOKENIZER)
    out = []
    for word in words:
        tokens = list(
            tokenize(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False)
        )
        out.append(str(tokens[0][0]) if tokens else word)
    return out


def document_frequencies(conn: apsw.Connection, stems: Sequence[str]) -> list[int]:
    """How many chunks hold each stem (0 for an unknown word), from the index's vocabulary."""
    marks = ",".join("?" * len(stems))
    found = dict(
        conn.execute(f"SELECT term, doc FROM temp.chunks_fts_vocab WHERE term IN ({marks})", stems)
    )
    return [int(found.get(stem, 0)) for stem in stems]


def rare_words(conn: apsw.Connection, query: str, share: float) -> list[str]:
    """The query's words held by some but at most ``share`` of the chunks; [] unless
    some of its words are rare and some are not (asking for the rare ones first
    changes nothing otherwise). A word no chunk holds is not asked for at all, unless
    chunks may hold it in another spelling (``sha256`` as "SHA-256"): it is asked for
    then, with that spelling."""
    words = query_terms(query)
    if len(words) < 2:
        return []
    totals = conn.execute(
        "SELECT fts_totals(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1",
        (match_any(words),),
    ).fetchone()
    if totals is None:
        return []
    limit = share * int(str(totals[0]).split()[0])
    frequencies = document_frequencies(conn, stems(conn, words))
    return rare_choice(words, frequencies, limit, respelled(query))


def rare_choice(
    words: Sequence[str], frequencies: Sequence[int], limit: float, respelled: set[str]
) -> list[str]:
    """:func:`rare_words`' choice, from each word's chunk count (both engines)."""
    rare = [
        word
        for word, df in zip(words, frequencies, strict=True)
        if 0 < df <= limit or (df == 0 and word in respelled)
    ]
    return rare if len(rare) < len(words) else []


def index_totals(conn: apsw.Connection) -> tuple[int, int]:
    """The chunks and tokens of the whole index as last committed, from FTS5's
    averages record (row 1 of ``chunks_fts_data``: two varints), without a ``MATCH``.
    ``fts_totals`` needs a row that matches, and a chunk that holds only a near word
    of the query (:data:`NEAR_PREFIX`) matches none: FTS5 stems a prefix query too,
    and "employ" * became "emploi" *. Inside a write the record is behind (FTS5
    writes it at commit); it is empty until the first commit."""
    row = conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    block = bytes(row[0])
    chunks, at = _varint(block, 0)
    tokens, _ = _varint(block, at)
    return chunks, tokens


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``data[at]``, and where the next begins."""
    value = 0
    for _ in range(8):
        byte = data[at]
        at += 1
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at
    return (value << 8) | data[at], at + 1


def idf(df: int, chunks: int) -> float:
    """Smoothed inverse document frequency; positive for every term in every store."""
    return math.log((chunks + PRIOR_CHUNKS) / (df + 1.0))


def near_prefixes(stems: Sequence[str]) -> dict[str, int]:
    """The first ``NEAR_PREFIX`` letters of each long enough query stem, and its index."""
    found: dict[str, int] = {}
    for index, stem in enumerate(stems):
        if len(stem) >= NEAR_PREFIX:
            found.setdefault(stem[:NEAR_PREFIX], index)
    return found


def with_near(
    counts: Sequence[int], near: Sequence[int], parts: Sequence[float] | None
) -> tuple[list[int], list[float] | None]:
    """``counts`` and ``parts`` with the stems a chunk holds only as near words
    (``near``: their counts) counted at ``NEAR_CREDIT``."""
    if not any(n and not c for c, n in zip(counts, near, strict=True)):
        return list(counts), None if parts is None else list(parts)
    scaled = [
        (1.0 if parts is None else parts[i]) * (NEAR_CREDIT if n and not c else 1.0)
        for i, (c, n) in enumerate(zip(counts, near, strict=True))
    ]
    return [c or n for c, n in zip(counts, near, strict=True)], scaled


def coverage(
    counts: Sequence[int],
    length: int,
    mean_length: float,
    weights: Sequence[float],
    parts: Sequence[float] | None = None,
) -> float:
    """BM25 of one chunk over the BM25 of a typical chunk holding each term once, in [0, 1].

    ``parts`` (from :func:`part_weights`) scales what each term this chunk holds counts.
    """
    norm = K1 * (1.0 - B + B * length / max(mean_length, 1.0))
    total = 0.0
    for index, (tf, weight) in enumerate(zip(counts, weights, strict=True)):
        if tf:
            # BM25's tf (K1+1) / (tf + norm) is 1 at tf = 1 in a typical chunk: the cap.
            held = weight * min(tf * (K1 + 1.0) / (tf + norm), 1.0)
            total += held * (parts[index] if parts is not None else 1.0)
    return total / sum(weights)


def text_match(
    conn: apsw.Connection, query: str, ids: Sequence[int], *, joined_names: bool = True
) -> dict[int, float]:
    """Each chunk's coverage of ``query``'s words (chunks holding none are left out);
    ``joined_names`` discounts the words of names a chunk does not hold as written."""
    tokenize = conn.fts5_tokenizer(*TOKENIZER)
    words = QueryWords.of(tokenize, query)
    if words is None or not ids:
        return {}
    prefixes = near_prefixes(words.stems)
    totals = conn.execute(
        "SELECT fts_totals(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1",
        (words.match,),
    ).fetchone()
    # no chunk holds a word of the query: one may still hold a near word, and the
    # index's committed totals serve (FTS5 writes them at commit)
    chunks, tokens = (
        (int(v) for v in str(totals[0]).split()) if totals is not None else index_totals(conn)
    )
    if not chunks:
        return {}
    mean_length = tokens / max(chunks, 1)
    weights = [idf(df, chunks) for df in document_frequencies(conn, words.stems)]
    position = {stem: i for i, stem in enumerate(words.stems)}
    joined = identifiers(query, lambda ws: stems(conn, ws)) if joined_names else []
    written_as_one = compound_positions(compounds(query, lambda ws: stems(conn, ws)), position)
    written_as_two = apart_positions(apart(query, lambda ws: stems(conn, ws)), position)
    marks = ",".join("?" * len(ids))
    result: dict[int, float] = {}
    for chunk_id, text in conn.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", ids):
        counts = [0] * len(position)
        tokens_of = list(
            tokenize(
                cjk_words(str(text)).encode("utf-8", "replace"),
                apsw.FTS5_TOKENIZE_DOCUMENT,
                None,
                include_offsets=False,
            )
        )
        near = [0] * len(position)
        previous = ""
        for token in tokens_of:
            word = str(token[0])
            index = position.get(word)
            if index is not None:
                counts[index] += 1
            elif word in written_as_one:
                for index in written_as_one[word]:
                    counts[index] += 1
            elif len(word) >= NEAR_PREFIX:
                index = prefixes.get(word[:NEAR_PREFIX])
                if index is not None:
                    near[index] += 1
            if written_as_two:
                index = written_as_two.get((previous, word))
                if index is not None:
                    counts[index] += 1
                previous = word
        if any(counts) or any(near):
            parts = part_weights(words.stems, joined, str(text)) if joined else None
            counts, parts = with_near(counts, near, parts)
            result[int(chunk_id)] = coverage(counts, len(tokens_of), mean_length, weights, parts)
    return result
