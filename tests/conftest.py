"""Shared fixtures: real SQLite files in a temporary directory, the real sqlite-vec."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from remembrances import Store
from remembrances.embeddings import HashEmbedder

# The machine's time zone is what "yesterday" and naive times mean by default; the
# suite reads them in UTC wherever it runs (a test of another zone sets its own).
os.environ["TZ"] = "UTC"
time.tzset()


class FlakyEmbedder(HashEmbedder):
    """A real embedder (hashing) that fails on a chosen text, to test atomicity."""

    def __init__(self, dim: int = 64, fail_on: str = "FAIL") -> None:
        super().__init__(dim)
        self.fail_on = fail_on

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any(self.fail_on in t for t in texts):
            raise RuntimeError("embedding service unavailable")
        return super().embed_documents(texts)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(64)


#: Suites whose store tests all run on both engines (other modules opt in with the
#: backends marker).
BOTH_BACKENDS = frozenset({"kb", "events", "enrichment"})
TESTS = Path(__file__).resolve().parent


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a test on each backend its module names with ``pytest.mark.backends(...)``.

    Any test reaching the ``backend`` fixture (through ``location`` or ``store``)
    runs on SQLite; a module marked ``pytestmark = pytest.mark.backends("sqlite",
    "postgresql")`` runs every such test on both, against a real server.
    """
    if "backend" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("backends")
        # REMEMBRANCES_TEST_BACKENDS=sqlite,postgresql tries an unmarked suite on both.
        default = os.environ.get("REMEMBRANCES_TEST_BACKENDS", "sqlite").split(",")
        suite = Path(str(metafunc.definition.path)).resolve().relative_to(TESTS).parts[0]
        if suite in BOTH_BACKENDS:
            default = ["sqlite", "postgresql"]
        # Module scope: a module-wide fixture (a populated memory) may be built once
        # per backend; tests are grouped by backend within their module.
        metafunc.parametrize("backend", marker.args if marker else default, scope="module")


@pytest.fixture
def location(backend: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the test's memory lives: a new SQLite file, or a new PostgreSQL schema."""
    if backend == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return str(db_path)


@pytest.fixture
def store(location: str, embedder: HashEmbedder) -> Iterator[Store]:
    s = Store(location, embedder=embedder)
    yield s
    s.close()


# -- PostgreSQL: one private server per test session --------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real PostgreSQL 16 with pgvector (the ``pgserver`` wheel), started once.

    Its URL without a memory name; each test gets a schema of its own
    (:func:`postgres_url`). The server stops when the session ends. Its folder is
    not under pytest's (private to root): as root, pgserver runs the server as
    another user, who must be able to reach it.
    """
    import shutil
    import tempfile

    import pgserver

    folder = tempfile.mkdtemp(prefix="remembrances-pg-")
    server = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


_memories = iter(range(1, 1_000_000))


@contextlib.contextmanager
def postgres_memory(server: str) -> Iterator[str]:
    """A URL naming a fresh memory (schema) on ``server``; dropped afterwards."""
    import psycopg

    name = f"test_{next(_memories)}"
    separator = "&" if "?" in server else "?"
    yield f"{server}{separator}memory={name}"
    # A store the test left open must not hang the session: give up after 10 s
    # (the server is thrown away at the end anyway).
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '10s'")
        with contextlib.suppress(psycopg.errors.LockNotAvailable):
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A URL naming a fresh memory (schema) on the session's server; dropped afterwards."""
    with postgres_memory(postgres_server) as url:
        yield url


@pytest.fixture(scope="module")
def module_location(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[str]:
    """Like :func:`location`, for a memory a whole module shares (built once per backend)."""
    if backend == "postgresql":
        with postgres_memory(request.getfixturevalue("postgres_server")) as url:
            yield url
    else:
        yield str(tmp_path_factory.mktemp("memory") / "m.db")
