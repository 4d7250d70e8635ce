"""The PostgreSQL engine behind :class:`~remembrances.store.Store`: tsvector and pgvector.

What it does differently from the SQLite engine, and why:
- Vector leg: an exact scan when the chunks it may return are few, pgvector's
  HNSW index (cosine) above that (the size rule, :meth:`PostgresEngine.exact_rows`):
  an exact scan's cost grows with the rows it reads, an index search's barely
  with the table (and with its ``ef_search``), and below the measured crossover
  the exact scan is both faster and exact. The count is the memory's chunk
  total (kept by trigger, O(1)); for a filtered search in a larger memory, the
  rows the filter allows, counted up to the threshold. Above it: pgvector 0.6 has no iterative index
  scan (0.8 added it), so an index scan filters the ``ef_search`` nearest rows
  *after* the search and can return fewer than asked. The index is asked with
  its widest candidate list (``ef_search`` = 1000) and the filter applied, and
  when that yields fewer than the pool, the rows the filter allows are scanned
  exactly (adaptive over-fetching, then exact): a filter never returns fewer
  than ``pool`` while that many chunks match.
- Text leg: ``tsv @@ to_tsquery(...)`` with a query built from tokens
  (:mod:`.tsquery`), ranked by ``ts_rank`` (not BM25: PostgreSQL has none). The
  fused score does not use that rank: like SQLite's, it uses the word coverage
  of :mod:`remembrances.storage.text_match`, computed from the same statistics (chunk
  counts per stem kept on write, see :mod:`.schema`), so scores mean the same
  on both engines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..embeddings.base import Vectors
from ..errors import NotAMemoryError, SchemaVersionError
from ..fts_query import query_terms, respelled
from ..storage import text_match as coverage_math
from ..storage.engine import Candidates, Engine, NewChunk, VectorIndexKind
from ..storage.filters import ChunkFilter
from ..storage.reports import CheckReport
from ..storage.schema import check_read_only, migrate
from ..storage.transaction import Dialect, Transaction
from .connection import PostgresDatabase, PostgresTransaction
from .schema import (
    RETOKENIZE_MARK,
    STORE_MIGRATIONS,
    STORE_READABLE_FROM,
    TEXT_CONFIG,
    drop_vector_index_script,
    vector_script,
)
from .tsquery import fold, index_text, tsquery_text

#: ``hnsw.ef_search`` of an unfiltered index search (at least the pool asked for:
#: the index returns at most ``ef_search`` rows). bench_postgres at 100k x 384, 100
#: held-out queries, recall@10 against an exact scan: real embeddings (102k code
#: texts, all-MiniLM-L6-v2) 0.970 at 40 (pgvector's default), 0.994 at 100 (5.5
#: ms), 1.00 at 1000 (31.7 ms); random vectors, the worst case, 0.11 at 100 and 0.64
#: at 1000. A memory's URL may set it (``?ef_search=1000``; docs/scale-out.md).
EF_SEARCH = 100
EF_SEARCH_MAX = 1000
#: The size rule (PostgresEngine.exact_rows): an exact scan of at most
#: EXACT_ROWS_BASE + EXACT_ROWS_PER_EF x ef_search chunks is no slower than an HNSW
#: search at that ef_search. bench_postgres --real-corpus, 100k real code texts
#: embedded by all-MiniLM-L6-v2 (docs/scale-out.md, "The size rule"): the index
#: search took 2.2 / 4.2 / 5.9 / 10.4 / 25.6 ms at ef_search 40 / 100 / 200 / 400 /
#: 1000 (about 1.6 ms + 0.024 ms per unit), an exact scan 1.0 / 6.8 / 14.1 / 35.9 ms
#: of 1k / 5k / 10k / 20k chunks (about 1.5 us a row): 2,600 chunks for an
#: unfiltered search at the default ef_search 100, 17,000 for a filtered one (1000).
EXACT_ROWS_BASE = 1_000
EXACT_ROWS_PER_EF = 16
#: The HNSW build's working memory, per vector (bytes: the vector and its graph
#: links; pgvector's notice put 28,371 tuples of 384 dims in 64 MB) and at most in
#: all. A graph that outgrows ``maintenance_work_mem`` is finished on disk: 50k
#: vectors took 233 s at 64 MB (PostgreSQL's default) and 95 s at 512 MB.
BUILD_BYTES_PER_VECTOR_EXTRA = 1024
BUILD_MEMORY_MAX = 1 << 30
#: Rows per multi-row INSERT (one trigger run and one round trip per batch).
INSERT_BATCH = 200
#: Chunks whose words store step 3 indexes again per statement.
RETOKENIZE_BATCH = 500


def _array(value: Any) -> Vectors:
    """A vector read from pgvector (its adapter's ``Vector``, or already an array)."""
    to_numpy = getattr(value, "to_numpy", None)
    array = to_numpy() if to_numpy is not None else value
    return np.asarray(array, dtype=np.float32)


def _vector(blob: bytes | None) -> np.ndarray[Any, Any] | None:
    return None if blob is None else np.frombuffer(blob, dtype="<f4")


def _json(value: Any) -> dict[str, Any]:
    """A ``jsonb`` aggregate as read back (a dict, its text, or NULL for no rows)."""
    if not value:
        return {}
    return dict(json.loads(value) if isinstance(value, str) else value)


class PostgresEngine:
    """One memory (a schema) in a PostgreSQL database with pgvector."""

    #: The chunk columns the store reads back (metadata as JSON text, as on SQLite).
    chunk_columns = (
        "c.id, c.kind, c.collection, c.source, c.position, c.text, "
        "c.metadata::text AS metadata, c.content_hash, c.ts, c.created_at, "
        "c.embedding IS NOT NULL AS has_embedding"
    )

    def __init__(self, url: str, *, read_only: bool = False, create: bool | None = None) -> None:
        """Connect to the memory ``url`` names (see :mod:`.url`).

        ``create``: None or True makes the memory (its schema and tables) when it
        does not exist; False opens only an existing one. Read-only never creates.
        """
        self.db = PostgresDatabase(url, read_only=read_only)
        self.create = create
        target = self.db.target
        #: A fixed size rule threshold (the URL's ``exact_below``): a vector leg whose
        #: candidate chunks number at most this many scans them exactly. 0: always
        #: the index (with the exact fallback for starved filters). None: the
        #: measured crossover, which depends on the search's ``ef_search`` (exact_rows).
        self.exact_below: int | None = target.exact_below
        #: ``hnsw.ef_search`` of an unfiltered index search (a filtered one asks for
        #: the widest list, EF_SEARCH_MAX); the URL's ``ef_search`` sets it.
        self.ef_search = EF_SEARCH if target.ef_search is None else target.ef_search

    # -- connections and transactions --------------------------------------------

    @property
    def dialect(self) -> Dialect:
        return "postgresql"

    @property
    def max_dimensions(self) -> int:
        return 2000  # pgvector's HNSW index on a vector column

    @property
    def location(self) -> str:
        return self.db.location

    @property
    def read_only(self) -> bool:
        return self.db.read_only

    @property
    def read_only_reason(self) -> str:
        return self.db.read_only_reason

    @property
    def closed(self) -> bool:
        return self.db.closed

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    @contextmanager
    def write(self) -> Iterator[PostgresTransaction]:
        with self.db.write() as tx:
            self.db.ensure_vector_type(tx.connection)
            yield tx

    @contextmanager
    def read(self) -> Iterator[PostgresTransaction]:
        with self.db.read() as tx:
            self.db.ensure_vector_type(tx.connection)
            yield tx

    def close(self) -> None:
        self.db.close()

    def _recorded_version(self) -> int | None:
        """The store schema version the memory records (None: no memory there)."""
        if not self.db.schema_exists():
            return None
        with self.db.read() as tx:
            has_meta = tx.execute(
                "SELECT 1 FROM pg_tables WHERE schemaname = ? AND tablename = 'meta'",
                (self.db.schema,),
            ).fetchone()
            if has_meta is None:
                return None
            value = tx.execute("SELECT value FROM meta WHERE key = 'schema:store'").scalar()
        return None if value is None else int(value)

    # -- schema and the vector index ----------------------------------------------

    @property
    def schema_version(self) -> int:
        return len(STORE_MIGRATIONS)

    def prepare_schema(self) -> None:
        version = self._recorded_version()
        if version is None and (self.read_only or self.create is False):
            raise NotAMemoryError(
                f"there is no memory at {self.location}; create one with "
                f"`remembrances --db '{self.location}' init` (Python: create=True)"
            )
        if version is not None and version > len(STORE_MIGRATIONS):
            raise SchemaVersionError(
                f"the memory at {self.location} has store schema version {version}, newer "
                "than this version of remembrances understands; upgrade remembrances"
            )
        if self.read_only:
            if version is not None:
                check_read_only(
                    self.location, "store", version, STORE_MIGRATIONS, STORE_READABLE_FROM
                )
            return
        if version is None:
            self.db.bootstrap()
        with self.write() as tx:
            migrate(tx, "store", STORE_MIGRATIONS)
            self._retokenize(tx)

    @staticmethod
    def _retokenize(tx: Transaction) -> None:
        """Index every chunk's words again when a store step asks (3, 5, 6: ``RETOKENIZE_MARK``);
        a memory made since has none to do."""
        if tx.execute("SELECT 1 FROM meta WHERE key = ?", (RETOKENIZE_MARK,)).fetchone() is None:
            return
        last = 0
        while True:
            rows = tx.execute(
                "SELECT id, text FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                (last, RETOKENIZE_BATCH),
            ).fetchall()
            if not rows:
                break
            values: list[Any] = []
            for row in rows:
                values.extend((int(row["id"]), index_text(str(row["text"]))))
            tx.execute(  # one statement a batch: the word statistics' trigger runs per statement
                f"UPDATE chunks c SET tsv = to_tsvector('{TEXT_CONFIG}', v.text) "
                "FROM (VALUES " + ", ".join(["(CAST(? AS bigint), ?)"] * len(rows)) + ") "
                "AS v (id, text) WHERE c.id = v.id",
                values,
            )
            last = int(rows[-1]["id"])
        tx.execute("DELETE FROM meta WHERE key = ?", (RETOKENIZE_MARK,))

    def has_vector_table(self, tx: Transaction) -> bool:
        found = tx.execute(
            "SELECT 1 FROM pg_indexes WHERE schemaname = ? AND indexname = 'chunks_embedding'",
            (self.db.schema,),
        ).fetchone()
        return found is not None

    def create_vector_table(self, tx: Transaction, dim: int, *, fill: bool) -> None:
        # The column is the vectors' only home, so there is nothing to fill; the
        # index is built over the vectors already there.
        self._build_memory(tx, dim)
        tx.execute(vector_script(dim))

    @staticmethod
    def _build_memory(tx: Transaction, dim: int) -> None:
        """Let this transaction's HNSW build hold its whole graph in memory
        (``SET LOCAL``: never less than the server's setting, at most 1 GB)."""
        vectors = int(tx.execute("SELECT count(embedding) AS n FROM chunks").scalar())
        wanted = min(vectors * (4 * dim + BUILD_BYTES_PER_VECTOR_EXTRA), BUILD_MEMORY_MAX)
        current = int(
            tx.execute(
                "SELECT setting::bigint * 1024 AS n FROM pg_settings "
                "WHERE name = 'maintenance_work_mem'"
            ).scalar()
        )
        if wanted > current:
            tx.execute(
                "SELECT set_config('maintenance_work_mem', ?, true)", (f"{wanted // 1024}kB",)
            )

    def switch_vectors(self, tx: Transaction, embedder: str, dim: int) -> None:
        tx.execute(drop_vector_index_script())
        cached = tx.execute(
            "SELECT c.id AS id, e.embedding AS embedding FROM chunks c "
            "JOIN embedding_cache e ON e.embedder = ? AND e.content_hash = c.content_hash",
            (embedder,),
        ).fetchall()
        tx.execute("UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL")
        tx.executemany(
            "UPDATE chunks SET embedding = ? WHERE id = ?",
            [(_vector(bytes(r["embedding"])), r["id"]) for r in cached],
        )
        self._build_memory(tx, dim)
        tx.execute(vector_script(dim))

    # -- chunk writes -------------------------------------------------------------

    def insert_chunks(self, tx: Transaction, chunks: Sequence[NewChunk]) -> list[int]:
        ids: list[int] = []
        for start in range(0, len(chunks), INSERT_BATCH):
            batch = chunks[start : start + INSERT_BATCH]
            values: list[Any] = []
            for c in batch:
                values.extend(
                    (
                        c.kind,
                        c.collection,
                        c.source,
                        c.position,
                        c.text,
                        index_text(c.text),
                        c.metadata_json,
                        c.content_hash,
                        c.embed_text,
                        c.ts,
                        c.created_at,
                        _vector(c.embedding),
                    )
                )
            row = (
                f"(?, ?, ?, ?, ?, to_tsvector('{TEXT_CONFIG}', ?), CAST(? AS jsonb), ?, ?, ?, ?, ?)"
            )
            rows = tx.execute(
                "INSERT INTO chunks (kind, collection, source, position, text, tsv, metadata, "
                "content_hash, embed_text, ts, created_at, embedding) VALUES "
                + ", ".join([row] * len(batch))
                + " RETURNING id, kind, collection, source, position",
                values,
            ).fetchall()
            # RETURNING's order is not promised: map each id back by the unique key.
            by_key = {(r[1], r[2], r[3], r[4]): int(r[0]) for r in rows}
            ids.extend(by_key[(c.kind, c.collection, c.source, c.position)] for c in batch)
        return ids

    def set_embeddings(self, tx: Transaction, rows: Sequence[tuple[int, str, bytes]]) -> None:
        tx.executemany(
            "UPDATE chunks SET embedding = ? WHERE id = ? AND content_hash = ? "
            "AND embedding IS NULL",
            [(_vector(blob), chunk_id, h) for chunk_id, h, blob in rows],
        )

    def after_write(self, tx: Transaction) -> None:
        """Nothing to tidy: there is no change log for an in-process index."""

    # -- reading ------------------------------------------------------------------

    # -- the vector leg -----------------------------------------------------------

    def vector_leg(
        self,
        tx: Transaction,
        query: Vectors,
        pool: int,
        where: ChunkFilter,
        *,
        index: VectorIndexKind = "memory",
        exact: bool = False,
    ) -> Candidates:
        vector = np.asarray(query, dtype=np.float32)
        unfiltered = bool(where.unfiltered)
        ef_search = min(max(self.ef_search, pool), EF_SEARCH_MAX) if unfiltered else EF_SEARCH_MAX
        if exact or self._few_candidates(tx, where, self.exact_rows(ef_search)):
            return self._exact(tx, vector, pool, where)
        sql, params = where.sql("postgresql")
        # A read-only transaction may still SET LOCAL: the setting ends with it.
        tx.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(ef_search),))
        hits = self._scored(
            tx.execute(
                "SELECT c.id AS id, c.embedding <=> ? AS distance FROM chunks c "
                f"WHERE c.embedding IS NOT NULL AND {sql} ORDER BY distance LIMIT ?",
                (vector, *params, pool),
            )
        )
        if len(hits) < pool:
            # The index gave fewer than asked: fewer rows match, or the filter
            # removed too many of the index's candidates. Only an exact scan knows.
            return self._exact(tx, vector, pool, where)
        return hits

    def exact_rows(self, ef_search: int) -> int:
        """The size rule's threshold for an index search at ``ef_search``: the most
        chunks an exact scan reads in the time of that search (or the URL's
        ``exact_below``). An exact scan is exact too, so it wins every tie."""
        if self.exact_below is not None:
            return self.exact_below
        return EXACT_ROWS_BASE + EXACT_ROWS_PER_EF * ef_search

    def _few_candidates(self, tx: Transaction, where: ChunkFilter, limit: int) -> bool:
        """The size rule: whether at most ``limit`` chunks can be returned.

        The memory's chunk total first (trigger-kept, one row; chunks waiting for a
        vector count too, so it is an upper bound); for a filter in a larger memory,
        the rows it allows, counted no further than the threshold.
        """
        total = tx.execute("SELECT chunks FROM text_totals").scalar()
        if total is None or int(total) <= limit:
            return True
        if where.unfiltered:
            return False
        sql, params = where.sql("postgresql")
        allowed = tx.execute(
            "SELECT count(*) FROM (SELECT 1 FROM chunks c "
            f"WHERE c.embedding IS NOT NULL AND {sql} LIMIT ?) allowed",
            (*params, limit + 1),
        ).scalar()
        return int(allowed) <= limit

    def _exact(
        self, tx: Transaction, vector: np.ndarray[Any, Any], pool: int, where: ChunkFilter
    ) -> Candidates:
        """The exact top ``pool`` among the rows ``where`` allows.

        The distances are computed in a materialised CTE, so the planner cannot
        answer the ORDER BY with the HNSW index (which would be approximate and
        filter after the search).
        """
        sql, params = where.sql("postgresql")
        return self._scored(
            tx.execute(
                "WITH scored AS MATERIALIZED ("
                "SELECT c.id AS id, c.embedding <=> ? AS distance FROM chunks c "
                f"WHERE c.embedding IS NOT NULL AND {sql}) "
                "SELECT id, distance FROM scored ORDER BY distance, id LIMIT ?",
                (vector, *params, pool),
            )
        )

    @staticmethod
    def _scored(rows: Any) -> Candidates:
        hits = []
        for row in rows:
            distance = float(row[1])
            cosine = 0.0 if math.isnan(distance) else 1.0 - distance  # a zero vector
            hits.append((int(row[0]), min(max(cosine, 0.0), 1.0)))
        return hits

    # -- the text leg and word coverage -----------------------------------------------

    def text_leg(self, tx: Transaction, query: str, pool: int, where: ChunkFilter) -> Candidates:
        """Chunks holding any of the query's words, best ``ts_rank`` first."""
        match = tsquery_text(query)
        if match is None:
            return []
        sql, params = where.sql("postgresql")
        rows = tx.execute(
            f"SELECT c.id AS id, ts_rank(c.tsv, q) AS rank "
            f"FROM chunks c, to_tsquery('{TEXT_CONFIG}', ?) q "
            f"WHERE c.tsv @@ q AND {sql} ORDER BY rank DESC, c.id LIMIT ?",
            (match, *params, pool),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def rare_words(self, tx: Transaction, query: str, share: float) -> list[str]:
        words = query_terms(fold(query))
        totals = tx.execute("SELECT chunks FROM text_totals").scalar()
        if len(words) < 2 or not totals:
            return []
        pairs = self._stems(tx, words)
        found = {
            str(r["term"]): int(r["chunks"])
            for r in tx.execute(
                "SELECT term, chunks FROM text_terms WHERE term = ANY(?)", ([s for _, s in pairs],)
            )
        }
        frequencies = [found.get(stem, 0) for _, stem in pairs]
        return coverage_math.rare_choice(
            [word for word, _ in pairs], frequencies, share * int(totals), respelled(query)
        )

    @staticmethod
    def _stems(tx: Transaction, words: Sequence[str]) -> list[tuple[str, str]]:
        """Each word with its stem under the text configuration, in order."""
        pairs = []
        for row in tx.execute(
            "SELECT w.n AS n, (SELECT min(lexeme) FROM unnest("
            f"to_tsvector('{TEXT_CONFIG}', w.word))) AS stem "
            "FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS w(word, n) ORDER BY w.n",
            (list(words),),
        ):
            word = words[int(row["n"]) - 1]
            pairs.append((word, str(row["stem"] or word)))
        return pairs

    def stems(self, tx: Transaction, words: Sequence[str]) -> list[str]:
        # folded first, as text_match folds the query and SQLite's tokenizer removes
        # diacritics: "cafe" and "Café" are one word on both engines
        return [stem for _, stem in self._stems(tx, [fold(w) for w in words])] if words else []

    def text_match(
        self, tx: Transaction, query: str, ids: Sequence[int], *, joined_names: bool = True
    ) -> dict[int, float]:
        """Word coverage in [0, 1], as :func:`remembrances.storage.text_match.text_match` computes
        it on SQLite, from this engine's stems and statistics."""
        words = query_terms(fold(query))
        if not words or not ids:
            return {}
        stems: list[str] = []
        for _, stem in self._stems(tx, words):
            if stem not in stems:  # "deploy" and "deploys" count once
                stems.append(stem)
        totals = tx.execute("SELECT chunks, tokens FROM text_totals").fetchone()
        if totals is None or not totals["chunks"]:
            return {}
        chunks, tokens = int(totals["chunks"]), int(totals["tokens"])
        found = {
            str(r["term"]): int(r["chunks"])
            for r in tx.execute("SELECT term, chunks FROM text_terms WHERE term = ANY(?)", (stems,))
        }
        prefixes = coverage_math.near_prefixes(stems)
        position = {stem: i for i, stem in enumerate(stems)}
        written_as_one = coverage_math.compound_positions(
            coverage_math.compounds(query, lambda ws: self.stems(tx, ws)), position
        )
        written_as_two = coverage_math.apart_positions(
            coverage_math.apart(query, lambda ws: self.stems(tx, ws)), position
        )
        if not found and not prefixes and not written_as_one and not written_as_two:
            return {}  # no chunk holds a word of the query in any spelling
        weights = [coverage_math.idf(found.get(s, 0), chunks) for s in stems]
        mean_length = tokens / max(chunks, 1)
        joined = (
            coverage_math.identifiers(query, lambda ws: self.stems(tx, ws)) if joined_names else []
        )
        parts_apart = sorted({stem for pair in written_as_two for stem in pair})
        texts: dict[int, str] = {}
        if joined:  # is each identifier written as the query writes it? (rare: read only then)
            texts = {
                int(r["id"]): str(r["text"])
                for r in tx.execute(
                    "SELECT id, text FROM chunks WHERE id = ANY(?)", ([int(i) for i in ids],)
                )
            }
        result: dict[int, float] = {}
        for row in tx.execute(
            "SELECT c.id AS id, sum(cardinality(u.positions)) AS length, "
            "jsonb_object_agg(u.lexeme, cardinality(u.positions)) "
            "FILTER (WHERE u.lexeme = ANY(?) OR left(u.lexeme, ?) = ANY(?::text[])) AS counts, "
            "jsonb_object_agg(u.lexeme, u.positions) FILTER (WHERE u.lexeme = ANY(?)) AS places "
            "FROM chunks c, unnest(c.tsv) u WHERE c.id = ANY(?) GROUP BY c.id",
            (
                [*stems, *written_as_one],
                coverage_math.NEAR_PREFIX,
                list(prefixes),
                parts_apart,
                [int(i) for i in ids],
            ),
        ):
            held = _json(row["counts"])
            places = _json(row["places"])
            counts, near = [0] * len(stems), [0] * len(stems)
            for (first, second), index in written_as_two.items():
                after = {int(p) - 1 for p in places.get(second, ())}  # "roll" right before "back"
                counts[index] += sum(1 for p in places.get(first, ()) if int(p) in after)
            if not held and not any(counts):
                continue
            for lexeme, n in held.items():
                if lexeme in position:
                    counts[position[lexeme]] += int(n)
                elif lexeme in written_as_one:
                    for index in written_as_one[lexeme]:
                        counts[index] += int(n)
                elif len(lexeme) >= coverage_math.NEAR_PREFIX:
                    near[prefixes[lexeme[: coverage_math.NEAR_PREFIX]]] += int(n)
            parts = None
            if joined:
                parts = coverage_math.part_weights(stems, joined, texts.get(int(row["id"]), ""))
            counts, parts = coverage_math.with_near(counts, near, parts)
            result[int(row["id"])] = coverage_math.coverage(
                counts, int(row["length"]), mean_length, weights, parts
            )
        return result

    # -- vectors of given chunks ------------------------------------------------------

    def cosines(self, tx: Transaction, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        if not ids:
            return {}
        vector = np.asarray(query, dtype=np.float32)
        rows = tx.execute(
            "SELECT id, 1 - (embedding <=> ?) AS cosine FROM chunks "
            "WHERE embedding IS NOT NULL AND id = ANY(?)",
            (vector, [int(i) for i in ids]),
        )
        return {int(r[0]): 0.0 if r[1] is None or math.isnan(r[1]) else float(r[1]) for r in rows}

    def vectors(self, tx: Transaction, ids: Sequence[int]) -> dict[int, Vectors]:
        if not ids:
            return {}
        rows = tx.execute(
            "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND id = ANY(?)",
            ([int(i) for i in ids],),
        )
        return {int(r[0]): _array(r[1]) for r in rows}

    def warm(self, tx: Transaction) -> None:
        """Nothing to load: the server holds the index."""

    def forget_vectors(self) -> None:
        """No vectors are held in this process."""

    def check(self, *, repair: bool = False) -> CheckReport:
        """Whether the word statistics, the vector column and its index agree with
        the chunks and the model record; ``repair`` rebuilds what does not."""
        report = CheckReport()
        context = self.read() if self.read_only or not repair else self.write()
        with context as tx:
            report.chunks = int(tx.execute("SELECT count(*) AS n FROM chunks").scalar())
            report.vectors = int(tx.execute("SELECT count(embedding) AS n FROM chunks").scalar())
            dim = tx.execute("SELECT value FROM meta WHERE key = 'dim'").scalar()
            embedder = tx.execute("SELECT value FROM meta WHERE key = 'embedder'").scalar()
            if report.vectors and (dim is None or embedder is None):
                report.problems.append(
                    "vectors exist but the memory records no embedder or dimension"
                )
            self._check_triggers(tx, report)
            self._check_statistics(tx, report, repair)
            if dim is not None:
                self._check_vectors(tx, report, int(dim), repair)
        return report

    def _check_triggers(self, tx: Transaction, report: CheckReport) -> None:
        present = {
            str(r[0])
            for r in tx.execute(
                "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = ? AND c.relname = 'chunks' AND t.tgenabled <> 'D'",
                (self.db.schema,),
            )
        }
        for name in ("chunks_text_insert", "chunks_text_delete", "chunks_text_update"):
            if name not in present:
                report.problems.append(
                    f"trigger {name} is missing or disabled: word statistics go stale"
                )

    @staticmethod
    def _check_statistics(tx: Transaction, report: CheckReport, repair: bool) -> None:
        recount = (
            "SELECT u.lexeme AS term, count(*) AS chunks FROM chunks c, unnest(c.tsv) u "
            "GROUP BY u.lexeme"
        )
        wrong = tx.execute(
            f"SELECT count(*) AS n FROM ({recount}) r FULL JOIN text_terms t ON t.term = r.term "
            "WHERE r.chunks IS DISTINCT FROM t.chunks"
        ).scalar()
        totals = tx.execute(
            "SELECT (SELECT chunks FROM text_totals) = (SELECT count(*) FROM chunks) "
            "AND (SELECT tokens FROM text_totals) = (SELECT coalesce(sum(cardinality("
            "u.positions)), 0) FROM chunks c, unnest(c.tsv) u) AS ok"
        ).scalar()
        if not wrong and totals:
            return
        problem = f"word statistics disagree with the chunks ({wrong} words)"
        report.problems.append(problem)
        if repair:
            tx.execute("DELETE FROM text_terms")
            tx.execute(f"INSERT INTO text_terms (term, chunks) {recount}")
            tx.execute(
                "UPDATE text_totals SET chunks = (SELECT count(*) FROM chunks), tokens = "
                "(SELECT coalesce(sum(cardinality(u.positions)), 0) "
                "FROM chunks c, unnest(c.tsv) u)"
            )
            report.repaired.append(problem)

    def _check_vectors(self, tx: Transaction, report: CheckReport, dim: int, repair: bool) -> None:
        column = tx.execute(
            "SELECT format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = ? AND c.relname = 'chunks' AND a.attname = 'embedding'",
            (self.db.schema,),
        ).scalar()
        problems = []
        if column != f"vector({dim})":
            problems.append(f"the vector column is {column}, not vector({dim}) as recorded")
        if not self.has_vector_table(tx):
            problems.append("the HNSW vector index is missing: vector searches scan every row")
        report.problems.extend(problems)
        if problems and repair:
            self._build_memory(tx, dim)
            tx.execute(vector_script(dim))
            report.repaired.extend(problems)

    def index_bytes(self) -> int:
        return 0

    def size_bytes(self) -> int:
        with self.db.read() as tx:
            size = tx.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = ? AND c.relkind IN ('r', 'm')",
                (self.db.schema,),
            ).scalar()
        return int(size)

    def free_bytes(self) -> int:
        return 0  # autovacuum makes it reusable; see reclaim_space

    def reclaim_space(self) -> int:
        """Nothing: autovacuum makes deleted rows' space reusable, and giving it back to
        the disk (``VACUUM FULL``) locks the tables for every user of the server, which
        is the database owner's call."""
        return self.size_bytes()


def _conforms(engine: PostgresEngine) -> Engine:
    """Checked by mypy: the engine implements the store's Engine protocol."""
    return engine
