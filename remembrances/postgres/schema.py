"""The store's tables in a memory's schema, as numbered migrations.

The same tables as the SQLite file (docs/storage.md) in PostgreSQL's own terms:
- ``chunks.embedding`` is a pgvector ``vector``; once the first embedder records
  its dimension the column becomes ``vector(dim)`` with an HNSW cosine index
  (:func:`vector_script`), as the SQLite file gets its vec0 table then.
- ``chunks.tsv`` is a ``tsvector`` with a GIN index: the text index. Its
  configuration stems English words with Snowball and keeps stop words, as
  SQLite's ``porter unicode61`` tokenizer does (a query of only stop words still
  finds text). The engine writes it from the text with diacritics removed and
  split at every character that is not a letter or a digit
  (:func:`..tsquery.index_text`), as ``unicode61 remove_diacritics 2`` reads it on
  SQLite: the ``unaccent`` extension is not everywhere (not in the bundled server).
- ``text_terms`` (how many chunks hold each stem) and ``text_totals`` (chunks and
  tokens in all) are kept by statement triggers in the writing transaction: the
  word statistics of ``text_match``, read in O(terms) instead of scanning the
  index with ``ts_stat``.
- ``embedding_cache`` keeps float32 blobs (``bytea``), the store's portable form,
  so a cached vector is the same bytes on both engines.
"""

from __future__ import annotations

#: The text search configuration of ``chunks.tsv`` and of every text query.
TEXT_CONFIG = "remembrances_text"

STORE_MIGRATIONS: tuple[str, ...] = (
    # 1: chunks with their text index and word statistics, the embedding cache.
    """
    CREATE TABLE IF NOT EXISTS meta (
        key   text PRIMARY KEY,
        value text NOT NULL
    );

    -- Snowball English without a stop-word list, mapped onto the word tokens of
    -- the default parser; numbers and the rest stay as they are (lower-cased).
    CREATE TEXT SEARCH DICTIONARY remembrances_stem (TEMPLATE = snowball, LANGUAGE = english);
    CREATE TEXT SEARCH CONFIGURATION remembrances_text (COPY = pg_catalog.simple);
    ALTER TEXT SEARCH CONFIGURATION remembrances_text
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH remembrances_stem;

    -- Identity ids are never reused (like SQLite's AUTOINCREMENT).
    CREATE TABLE chunks (
        id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind         text NOT NULL,
        collection   text NOT NULL,
        source       text NOT NULL,
        position     integer NOT NULL,
        text         text NOT NULL,
        metadata     jsonb NOT NULL DEFAULT '{}',
        content_hash text NOT NULL,
        embed_text   text,
        ts           double precision,
        created_at   double precision NOT NULL,
        embedding    vector,
        -- to_tsvector('remembrances_text', the text without diacritics), written
        -- with the row (PostgreSQL has no accent folding without an extension).
        tsv          tsvector NOT NULL,
        UNIQUE (kind, collection, source, position)
    );
    CREATE INDEX chunks_kind_collection ON chunks (kind, collection);
    CREATE INDEX chunks_source ON chunks (source, kind);
    CREATE INDEX chunks_ts ON chunks (ts) WHERE ts IS NOT NULL;
    CREATE INDEX chunks_pending ON chunks (kind, collection) WHERE embedding IS NULL;
    -- fastupdate off: new rows go straight into the index instead of a pending
    -- list that every text query scans until a vacuum merges it.
    CREATE INDEX chunks_tsv ON chunks USING gin (tsv) WITH (fastupdate = off);

    CREATE TABLE text_terms (
        term   text PRIMARY KEY,
        chunks bigint NOT NULL
    );
    CREATE TABLE text_totals (
        one    boolean PRIMARY KEY DEFAULT true CHECK (one),
        chunks bigint NOT NULL,
        tokens bigint NOT NULL
    );
    INSERT INTO text_totals (one, chunks, tokens) VALUES (true, 0, 0);

    -- Statement triggers: one aggregated update per INSERT/DELETE/UPDATE statement.
    -- SET search_path FROM CURRENT: the functions find this memory's tables
    -- whoever writes the chunks (another tool's search path included).
    CREATE FUNCTION text_terms_insert() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
        INSERT INTO text_terms AS t (term, chunks)
        SELECT u.lexeme, count(*) FROM new_rows n, unnest(n.tsv) u GROUP BY u.lexeme
        ON CONFLICT (term) DO UPDATE SET chunks = t.chunks + excluded.chunks;
        UPDATE text_totals SET
            chunks = chunks + (SELECT count(*) FROM new_rows),
            tokens = tokens + (SELECT coalesce(sum(cardinality(u.positions)), 0)
                               FROM new_rows n, unnest(n.tsv) u);
        RETURN NULL;
    END $$;

    CREATE FUNCTION text_terms_delete() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
        WITH gone AS (
            SELECT u.lexeme AS term, count(*) AS n FROM old_rows o, unnest(o.tsv) u
            GROUP BY u.lexeme
        )
        UPDATE text_terms t SET chunks = t.chunks - gone.n FROM gone WHERE t.term = gone.term;
        DELETE FROM text_terms WHERE chunks <= 0;
        UPDATE text_totals SET
            chunks = chunks - (SELECT count(*) FROM old_rows),
            tokens = tokens - (SELECT coalesce(sum(cardinality(u.positions)), 0)
                               FROM old_rows o, unnest(o.tsv) u);
        RETURN NULL;
    END $$;

    CREATE FUNCTION text_terms_update() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
        -- Only rows whose text changed move the statistics (not a new vector).
        INSERT INTO text_terms AS t (term, chunks)
        SELECT u.lexeme, sum(c.sign) FROM (
            SELECT -1 AS sign, o.tsv FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE o.tsv IS DISTINCT FROM n.tsv
            UNION ALL
            SELECT 1, n.tsv FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE o.tsv IS DISTINCT FROM n.tsv
        ) c, unnest(c.tsv) u
        GROUP BY u.lexeme HAVING sum(c.sign) <> 0
        ON CONFLICT (term) DO UPDATE SET chunks = t.chunks + excluded.chunks;
        IF FOUND THEN
            DELETE FROM text_terms WHERE chunks <= 0;
        END IF;
        UPDATE text_totals SET tokens = tokens
            + (SELECT coalesce(sum(cardinality(u.positions)), 0)
               FROM old_rows o JOIN new_rows n ON n.id = o.id, unnest(n.tsv) u
               WHERE o.tsv IS DISTINCT FROM n.tsv)
            - (SELECT coalesce(sum(cardinality(u.positions)), 0)
               FROM old_rows o JOIN new_rows n ON n.id = o.id, unnest(o.tsv) u
               WHERE o.tsv IS DISTINCT FROM n.tsv);
        RETURN NULL;
    END $$;

    CREATE TRIGGER chunks_text_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION text_terms_insert();
    CREATE TRIGGER chunks_text_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION text_terms_delete();
    CREATE TRIGGER chunks_text_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION text_terms_update();

    CREATE TABLE embedding_cache (
        embedder     text NOT NULL,
        content_hash text NOT NULL,
        embedding    bytea NOT NULL,
        PRIMARY KEY (embedder, content_hash)
    );
    """,
    # 2: vectors stay in the row. A 384-dim vector (1,540 bytes) with its text
    # and words makes a row of ~2.2 kB, above the 2 kB at which PostgreSQL moves
    # the biggest value to the TOAST table: the vector, so that an exact scan
    # fetched every vector through the TOAST index (6 us a row at 100k). Rows
    # up to a page now stay whole; a vector goes out of line only when nothing
    # else makes its row fit (STORAGE MAIN, set again by vector_script).
    """
    ALTER TABLE chunks SET (toast_tuple_target = 8160);
    ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;
    """,
    # 3: words are split at every character that is not a letter or a digit, as on
    # SQLite (tsquery.index_text). The rows are indexed again in Python, which folds
    # diacritics as the writes do: this step marks them, the engine does it
    # (``RETOKENIZE_MARK``), in the same transaction.
    """
    INSERT INTO meta (key, value) VALUES ('text:retokenize', 'pending')
    ON CONFLICT (key) DO NOTHING;
    """,
    # 4: the embedding cache keyed by text first, and chunks indexed by text, as in
    # the SQLite file's step 4: forgetting a deleted text's vector looks it up by its
    # hash alone.
    """
    ALTER TABLE embedding_cache DROP CONSTRAINT embedding_cache_pkey;
    ALTER TABLE embedding_cache ADD PRIMARY KEY (content_hash, embedder);
    CREATE INDEX IF NOT EXISTS chunks_content_hash ON chunks (content_hash);
    """,
    # 5: Chinese, Japanese and Korean text is indexed as pairs of characters, as in the
    # SQLite file's step 5 (tsquery.index_text): every chunk's words are indexed again,
    # as for step 3.
    """
    INSERT INTO meta (key, value) VALUES ('text:retokenize', 'pending')
    ON CONFLICT (key) DO NOTHING;
    """,
    # 6: kana keep their voicing marks (バス is not ハス), CJK text is brought to NFKC
    # and a chunk holds at most tsquery.MAX_PAIR_BYTES of pairs: indexed again.
    """
    INSERT INTO meta (key, value) VALUES ('text:retokenize', 'pending')
    ON CONFLICT (key) DO NOTHING;
    """,
    # 7: the user and session keys of the metadata indexed, as in the SQLite file's
    # step 7 (filters.INDEXED_KEYS).
    """
    CREATE INDEX IF NOT EXISTS chunks_user ON chunks (kind, (metadata ->> 'user'));
    CREATE INDEX IF NOT EXISTS chunks_session ON chunks (kind, (metadata ->> 'session'));
    """,
)
#: The meta key of steps 3, 5 and 6's pending re-indexing of every chunk's words.
RETOKENIZE_MARK = "text:retokenize"
#: The oldest store schema a read-only open reads as it is (step 3 changes how words
#: are split, not what the reads need).
STORE_READABLE_FROM = 2


def vector_script(dim: int) -> str:
    """Fix the vector column to the recorded dimension and index it (HNSW, cosine).

    pgvector indexes only columns of a fixed dimension. Building the index on a
    filled table is faster than growing it row by row, so a re-embed drops it,
    rewrites the vectors and calls this again.
    """
    return f"""
    ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({int(dim)});
    ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;
    CREATE INDEX IF NOT EXISTS chunks_embedding ON chunks
        USING hnsw (embedding vector_cosine_ops);
    """


def drop_vector_index_script() -> str:
    """Free the vector column of its dimension (before vectors of another size arrive)."""
    return """
    DROP INDEX IF EXISTS chunks_embedding;
    ALTER TABLE chunks ALTER COLUMN embedding TYPE vector;
    ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;
    """
