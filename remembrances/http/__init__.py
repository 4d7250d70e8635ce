"""The HTTP API (``remembrances serve``) and the thin client the CLI uses with ``--url``.

Nothing is imported here: the client must stay importable (and fast to import)
without the server's framework, and the server without the CLI.
"""
