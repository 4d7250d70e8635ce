"""Fuzzed messages and queries on conversations: a result or a typed error, never a
crash, and a refused call writes nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import remembrances
from remembrances import InvalidInputError, RemembrancesService

EXAMPLES = int(os.environ.get("REMEMBRANCES_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
TEXT = st.one_of(
    st.text(max_size=80),
    st.binary(max_size=60).map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.sampled_from(['"', "AND", "NEAR(", "(", "*", "\x00", "Mel(", "[a-", "\\", ".*"]),
)
VALUE = st.one_of(TEXT, st.none(), st.integers(), st.floats(), st.binary(max_size=8))
MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": VALUE, "content": st.one_of(VALUE, st.lists(VALUE))}),
    st.fixed_dictionaries({"speaker": VALUE, "text": VALUE}, optional={"at": VALUE}),
    st.dictionaries(st.text(max_size=8), VALUE, max_size=3),
    VALUE,
)


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemembrancesService]:
    folder: Path = tmp_path_factory.mktemp("conversation-fuzz")
    svc = remembrances.open(folder / "fuzz.db", embedder="hash:64")
    svc.events.log_conversation(
        [
            {"speaker": "Mel(", "text": "I made a plate in pottery class."},
            {"speaker": "[a-", "text": "What colour is it?"},
            {"speaker": "Caroline", "text": "Blue, like the sea."},
        ],
        session="s",
        user="u",
    )
    yield svc
    svc.close()


@FUZZ
@given(messages=st.lists(MESSAGE, max_size=4))
def test_fuzzed_messages_log_all_or_nothing(memory: RemembrancesService, messages: Any) -> None:
    before = memory.events.count()
    try:
        logged = memory.events.log_conversation(messages, session="fuzz")
    except InvalidInputError as exc:
        assert str(exc)
        assert memory.events.count() == before
    else:
        assert memory.events.count() == before + len(logged.added)


@FUZZ
@given(query=TEXT)
def test_fuzzed_queries_on_turns(memory: RemembrancesService, query: str) -> None:
    for scope in ({}, {"session": "s"}, {"user": "u"}):
        try:
            hits = memory.events.search(query, window=1, **scope)
        except InvalidInputError:
            continue
        assert all(0.0 <= (h.score or 0.0) <= 1.0 for h in hits)
