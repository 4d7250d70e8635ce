"""The storage layer: everything that knows which database engine holds the memory.

``transaction`` is the contract the domain layers write against (SQL with ``?``
placeholders, rows by column name); ``engine`` is the contract an engine implements
for the store (chunk writes, the search legs, the vector table). The SQLite
engine is the default; a PostgreSQL engine implements the same protocols.
"""
