"""The code layer's own tables (plain SQL; searchable text lives in the store's chunks).

A file row's ``content_hash`` names the content whose symbols and chunks are
stored; ``embedded`` says whether all of those chunks have vectors. A file counts
as indexed only when both hold, so a run whose embedding failed is finished by
the next one instead of being forgotten.
"""

from __future__ import annotations

CODE_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE code_projects (
        id         INTEGER PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        root       TEXT NOT NULL,
        created_at REAL NOT NULL,
        indexed_at REAL
    );
    CREATE TABLE code_files (
        id           INTEGER PRIMARY KEY,
        project_id   INTEGER NOT NULL REFERENCES code_projects (id) ON DELETE CASCADE,
        path         TEXT NOT NULL,
        language     TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size         INTEGER NOT NULL,
        lines        INTEGER NOT NULL,
        has_error    INTEGER NOT NULL DEFAULT 0,
        embedded     INTEGER NOT NULL DEFAULT 0,
        indexed_at   REAL NOT NULL,
        UNIQUE (project_id, path)
    );
    CREATE TABLE code_symbols (
        id             INTEGER PRIMARY KEY,
        file_id        INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        position       INTEGER NOT NULL,
        parent         INTEGER,  -- position of the enclosing symbol in the same file
        kind           TEXT NOT NULL,
        name           TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        signature      TEXT NOT NULL,
        docstring      TEXT NOT NULL,
        start_line     INTEGER NOT NULL,
        end_line       INTEGER NOT NULL,
        start_byte     INTEGER NOT NULL,
        end_byte       INTEGER NOT NULL,
        name_line      INTEGER NOT NULL,
        name_column    INTEGER NOT NULL,
        UNIQUE (file_id, position)
    );
    CREATE INDEX code_symbols_name ON code_symbols (name);
    CREATE INDEX code_symbols_qualified ON code_symbols (qualified_name);
    CREATE TABLE code_names (
        name      TEXT NOT NULL,
        file_id   INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        positions TEXT NOT NULL,
        PRIMARY KEY (name, file_id)
    ) WITHOUT ROWID;
    CREATE INDEX code_names_file ON code_names (file_id);
    """,
    # 2: chunks now embed the code itself rather than the text index's header
    # (code/chunking.py); forgetting the files' hashes makes the next run re-chunk
    # and re-embed every file, so one index does not mix the two kinds of vector.
    """
    UPDATE code_files SET content_hash = '', embedded = 0;
    """,
    # 3: the reference graph behind the repository map (code/graph.py). An edge
    # says "src uses a name that dst defines" with how often src uses it; weights
    # are normalised when the graph is read, so an edge never changes because
    # another file changed and an update only touches the changed files' edges.
    """
    CREATE TABLE IF NOT EXISTS code_edges (
        name       TEXT NOT NULL,
        src_file   INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        dst_file   INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        project_id INTEGER NOT NULL,
        refs       INTEGER NOT NULL,
        PRIMARY KEY (name, src_file, dst_file)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS code_edges_src ON code_edges (src_file);
    CREATE INDEX IF NOT EXISTS code_edges_dst ON code_edges (dst_file);
    CREATE INDEX IF NOT EXISTS code_edges_project ON code_edges (project_id);
    CREATE TABLE IF NOT EXISTS code_graphs (
        project_id INTEGER PRIMARY KEY REFERENCES code_projects (id) ON DELETE CASCADE,
        built_at   REAL NOT NULL,
        updated_at REAL NOT NULL,
        updates    INTEGER NOT NULL DEFAULT 0
    );
    """,
)
