"""Which memory a ``postgresql://`` URL names: the server, the database and the schema.

Several memories share one database, one schema each. The schema is named by the
URL's ``memory`` query parameter (``postgresql://user@host/db?memory=team_notes``);
without it the memory is the schema ``remembrances``. Two more parameters tune the
vector search (docs/scale-out.md): ``ef_search`` (1-1000, the HNSW candidate list
of an unfiltered search) and ``exact_below`` (a fixed size rule threshold, in
chunks, instead of the measured one). Every other URL parameter is libpq's
(``sslmode``, ``host=/socket/dir``, ...) and is passed through unchanged.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from ..errors import InvalidInputError

SCHEMES = ("postgresql", "postgres")
DEFAULT_MEMORY = "remembrances"
#: An unquoted PostgreSQL identifier (lower case, so it is the same quoted or not),
#: at most 63 bytes; ``pg_`` is reserved for the system's schemas.
_MEMORY_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_RESERVED = frozenset({"public", "information_schema"})
#: Our own parameters (never passed to libpq): name -> (least, most) allowed.
TUNING = {"ef_search": (1, 1000), "exact_below": (0, 2**62)}


def _tuning(query: list[tuple[str, str]]) -> dict[str, int]:
    found: dict[str, int] = {}
    for key, value in query:
        if key not in TUNING:
            continue
        least, most = TUNING[key]
        if key in found or not value.isdigit() or not least <= int(value) <= most:
            raise InvalidInputError(
                f"the URL's {key}={value!r} cannot be used: give it once, a whole number "
                f"from {least} to {most}"
            )
        found[key] = int(value)
    return found


def is_postgres_url(location: object) -> bool:
    """Whether ``location`` (a path or a URL) names a PostgreSQL memory."""
    if not isinstance(location, str):
        return False
    scheme = location.split(":", 1)[0].lower()
    return scheme in SCHEMES and location[len(scheme) : len(scheme) + 3] == "://"


@dataclass(frozen=True)
class PostgresTarget:
    """A parsed memory URL."""

    #: What libpq connects to: the URL without the ``memory`` parameter.
    conninfo: str
    #: The schema holding this memory's tables.
    schema: str
    #: The URL as messages show it: no password.
    display: str
    #: ``hnsw.ef_search`` of an unfiltered index search (None: the engine's default).
    ef_search: int | None = None
    #: The size rule's threshold in chunks (None: the engine's default).
    exact_below: int | None = None

    @classmethod
    def parse(cls, url: str) -> PostgresTarget:
        if not is_postgres_url(url):
            raise InvalidInputError(
                f"{url!r} is not a PostgreSQL URL; expected postgresql://user@host/database"
            )
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        memories = [v for k, v in query if k == "memory"]
        if len(memories) > 1:
            raise InvalidInputError(f"the URL names {len(memories)} memories; give one memory=")
        schema = memories[0] if memories else DEFAULT_MEMORY
        if not _MEMORY_NAME.fullmatch(schema) or schema.startswith("pg_") or schema in _RESERVED:
            raise InvalidInputError(
                f"memory name {schema!r} cannot be used: a memory is a schema, named with "
                "lower-case letters, digits and _ (at most 63, not starting with a digit "
                "or pg_, not public)"
            )
        tuning = _tuning(query)
        rest = urllib.parse.urlencode(
            [(k, v) for k, v in query if k != "memory" and k not in TUNING]
        )
        conninfo = urllib.parse.urlunsplit(parts._replace(query=rest))
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            netloc = user.split(":", 1)[0] + "@" + host
        # The URL as given, less any password: it must still work as --db.
        kept = [(k, v) for k, v in query if k != "password"]
        shown = urllib.parse.urlunsplit(
            parts._replace(netloc=netloc, query=urllib.parse.urlencode(kept, safe="/"))
        )
        if not memories:
            shown += ("&" if kept else "?") + f"memory={schema}"
        return cls(conninfo=conninfo, schema=schema, display=shown, **tuning)
