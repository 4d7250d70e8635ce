"""Fuzzed query strings on every search entry point: a result or a typed error, never
a crash. `make soak` runs many more examples (REMEMBRANCES_FUZZ_EXAMPLES)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import remembrances
from remembrances import InvalidInputError, RemembrancesService

EXAMPLES = int(os.environ.get("REMEMBRANCES_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
SYNTAX = st.sampled_from(
    [
        '"',
        "'",
        "AND",
        "OR",
        "NOT",
        "NEAR(",
        ")",
        "-",
        ":",
        "*",
        "^",
        "{",
        "}",
        "?",
        "\\",
        "\x00",
        "🎉",
        "é",
        "\udcff",
        "SELECT * FROM chunks;--",
        "$gt",
        "%",
        "_",
        "\n",
        "\t",
    ]
)
QUERIES = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(SYNTAX, st.text(max_size=6)), max_size=40).map(" ".join),
    st.binary(max_size=200).map(lambda b: b.decode("utf-8", "surrogateescape")),
)


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemembrancesService]:
    folder: Path = tmp_path_factory.mktemp("fuzz")
    svc = remembrances.open(folder / "fuzz.db", embedder="hash:64")
    svc.kb.add("# Retry\n\nUploads are retried with exponential backoff.", source="retry.md")
    svc.events.log("Deployed release 2.3 and rolled back", subject="deploys")
    repo = folder / "repo"
    repo.mkdir()
    (repo / "upload.py").write_text("def retry_upload(path):\n    '''Retry a failed upload.'''\n")
    svc.code.index(repo)
    yield svc
    svc.close()


def _ok_or_typed(call) -> None:  # type: ignore[no-untyped-def]
    # A typed error with a message is the other allowed outcome.
    with contextlib.suppress(InvalidInputError):
        call()


@FUZZ
@given(query=QUERIES)
def test_store_search(memory: RemembrancesService, query: str) -> None:
    for mode in ("hybrid", "text", "vector"):
        _ok_or_typed(lambda: memory.store.search(query, mode=mode))  # noqa: B023


@FUZZ
@given(query=QUERIES)
def test_kb_search(memory: RemembrancesService, query: str) -> None:
    _ok_or_typed(lambda: memory.kb.search(query))


@FUZZ
@given(query=QUERIES)
def test_events_search(memory: RemembrancesService, query: str) -> None:
    _ok_or_typed(lambda: memory.events.search(query))


@FUZZ
@given(query=QUERIES)
def test_code_search_and_lookup(memory: RemembrancesService, query: str) -> None:
    _ok_or_typed(lambda: memory.code.search(query))
    _ok_or_typed(lambda: memory.code.find_symbol(query))


@FUZZ
@given(prompt=QUERIES)
def test_enrich_context_never_raises(memory: RemembrancesService, prompt: str) -> None:
    assert isinstance(memory.enrich_context(prompt), str)


@FUZZ
@given(
    where=st.dictionaries(
        st.text(max_size=20),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            st.text(max_size=10),
            st.lists(st.integers(), max_size=3),
            st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
        ),
        max_size=3,
    )
)
def test_metadata_filters(memory: RemembrancesService, where: dict) -> None:
    _ok_or_typed(lambda: memory.store.search("retry", where=where))
