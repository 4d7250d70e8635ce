"""The PostgreSQL + pgvector engine: one memory per schema of a shared database.

For memories shared by many agents on several machines, or larger than one
process's RAM (docs/scale-out.md). Needs the ``postgres`` extra
(``pip install 'remembrances[postgres]'``: psycopg 3 and the pgvector adapter),
imported only when a ``postgresql://`` URL is opened.
"""
