"""Tree-sitter parsing: one file in, its symbols, chunks and identifier positions out.

Nothing here touches the database: the writer (``code/writer.py``) stores what
``analysis.analyze`` returns, in this process or in the worker processes of
``workers.py`` (``python -m remembrances.code.parsing``).
"""
