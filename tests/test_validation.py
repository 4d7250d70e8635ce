"""One set of checks for every layer: the same bad value gets the same refusal.

Each case goes through the public entry points (store, knowledge base, event
log, conversations, code index) on a real SQLite file, and checks that nothing
was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from remembrances import InvalidInputError, RemembrancesService, Store
from remembrances.code import CodeIndexer
from remembrances.events import EventLog
from remembrances.kb import KnowledgeBase
from remembrances.records import Chunk
from remembrances.storage.in_lists import in_lists
from remembrances.validation import MAX_METADATA_BYTES

HUGE_METADATA = {"blob": "é" * (MAX_METADATA_BYTES // 2 + 1)}  # under 1M characters, over 1 MB


def test_metadata_over_one_megabyte_is_refused_by_every_layer(store: Store) -> None:
    kb = KnowledgeBase(store)
    events = EventLog(store)
    with pytest.raises(InvalidInputError, match="bytes as JSON; the limit is 1,000,000"):
        kb.add("some text", source="doc", metadata=HUGE_METADATA)
    with pytest.raises(InvalidInputError, match="bytes as JSON"):
        events.log("some text", metadata=HUGE_METADATA)
    with pytest.raises(InvalidInputError, match="bytes as JSON"):
        events.log_conversation(
            [{"role": "user", "content": "hi", "metadata": HUGE_METADATA}], session="s"
        )
    with pytest.raises(InvalidInputError, match="bytes as JSON"):
        store.put_source("note", "a", [Chunk("some text", metadata=HUGE_METADATA)])
    assert kb.count() == 0 and events.count() == 0 and store.count() == 0


def _deep(levels: int) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for _ in range(levels):
        nested = {"a": nested}
    return nested


def _cycle() -> dict[str, Any]:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    return looped


@pytest.mark.parametrize(
    "metadata",
    [{1: "int key"}, {"x": float("nan")}, ["a"], _deep(100_000), _deep(65), _cycle()],
)
def test_bad_metadata_is_refused_alike(store: Store, metadata: Any) -> None:
    events = EventLog(store)
    messages = []
    for call in (
        lambda: KnowledgeBase(store).add("text", source="doc", metadata=metadata),
        lambda: events.log("text", metadata=metadata),
        lambda: events.log_conversation(
            [{"role": "user", "content": "hi", "metadata": metadata}], session="s"
        ),
        lambda: store.put_source("note", "a", [Chunk("text", metadata=metadata)]),
    ):
        with pytest.raises(InvalidInputError) as caught:
            call()
        messages.append(str(caught.value).split("metadata", 1)[1])
    assert len(set(messages)) == 1, messages
    assert store.count() == 0


@pytest.mark.parametrize("min_score", [True, -0.1, 1.5, float("nan"), "0.5"])
def test_min_score_is_checked_alike_everywhere(store: Store, min_score: Any) -> None:
    KnowledgeBase(store).add("alpha beta", source="doc")
    EventLog(store).log("alpha beta")
    for search in (
        lambda: store.search("alpha", min_score=min_score),
        lambda: KnowledgeBase(store).search("alpha", min_score=min_score),
        lambda: EventLog(store).search("alpha", min_score=min_score),
        lambda: EventLog(store).search("alpha", min_score=min_score, session="s"),
    ):
        with pytest.raises(InvalidInputError, match="min_score must be a number from 0 to 1"):
            search()


@pytest.mark.parametrize(
    ("name", "match"),
    [(b"bytes", "binary data"), ("", "empty"), (7, "must be a string"), ("\ud800", "Unicode")],
)
def test_names_are_checked_alike_everywhere(store: Store, name: Any, match: str) -> None:
    kb = KnowledgeBase(store)
    events = EventLog(store)
    for call in (
        lambda: kb.add("text", source=name),
        lambda: kb.list(collection=name),
        lambda: events.log_conversation([{"role": "user", "content": "hi"}], session=name),
        lambda: CodeIndexer(store).stats(name),
        lambda: store.delete_source("note", name),
    ):
        with pytest.raises(InvalidInputError, match=match):
            call()
    assert store.count() == 0


def test_user_and_session_ids_with_whitespace_around_them_are_refused_not_trimmed(
    store: Store,
) -> None:
    """An id says whose memory a call reads: trimmed, "ana\u00a0" read ana's."""
    kb = KnowledgeBase(store)
    kb.add("text", source=" doc ")
    assert kb.get(" doc ").source == " doc "  # a document's source is kept as given
    events = EventLog(store)
    events.log_conversation(
        [{"role": "user", "content": "my PIN is 4321"}], session="s1", user="ana"
    )
    for spaced in ("  s1 ", "s1\u00a0", "\u3000s1", "s1\n"):
        with pytest.raises(InvalidInputError, match="whitespace around it; ids are matched"):
            events.log_conversation([{"role": "user", "content": "hi"}], session=spaced, user="ana")
        with pytest.raises(InvalidInputError, match="whitespace around it"):
            events.search("PIN", session=spaced)
    for spaced in (" ana", "ana\u00a0", "\u2003ana\u3000"):
        with pytest.raises(InvalidInputError, match=r"user '.*ana.*' has whitespace around it"):
            events.search("what is my PIN?", user=spaced)
        with pytest.raises(InvalidInputError, match="whitespace around it"):
            events.count(user=spaced)
        with pytest.raises(InvalidInputError, match="whitespace around it"):
            events.log_conversation([{"role": "user", "content": "hi"}], session="s2", user=spaced)
    for invisible in ("ana\u200b", "\ufeffana", "\u200b", "ana\u2060"):
        with pytest.raises(InvalidInputError, match="invisible character"):
            events.log_conversation(
                [{"role": "user", "content": "hi"}], session="s3", user=invisible
            )
    assert events.count() == 1 and list(events.sessions()) == ["s1"]
    assert [e.content for e in events.search("what is my PIN?", user="ana")] == ["my PIN is 4321"]


def test_in_lists_cut_long_lists_with_matching_placeholders() -> None:
    parts = list(in_lists(list(range(1201)), 500))
    assert [len(p) for p, _ in parts] == [500, 500, 201]
    assert all(marks.count("?") == len(p) for p, marks in parts)
    assert [v for p, _ in parts for v in p] == list(range(1201))
    assert list(in_lists([])) == []


@pytest.mark.parametrize("bad", [10**30, -(10**30), 2**63])
def test_ids_and_offsets_beyond_64_bits_are_refused_not_overflowed(store: Store, bad: int) -> None:
    events = EventLog(store)
    events.log("alpha beta")
    kb = KnowledgeBase(store)
    for call in (
        lambda: events.get(bad),
        lambda: events.delete(bad),
        lambda: events.reindex([bad]),
        lambda: store.get(bad),
    ):
        with pytest.raises(InvalidInputError, match="out of range"):
            call()
    for call in (lambda: events.list(offset=bad), lambda: kb.list(offset=bad)):
        with pytest.raises(InvalidInputError, match="offset must be an integer from 0"):
            call()
    assert events.count() == 1


@pytest.mark.parametrize(
    ("value", "type_name"), [(123, "int"), ({"default": 1}, "dict"), (b"default", "bytes")]
)
def test_a_filter_name_of_the_wrong_type_is_refused_by_its_type(
    store: Store, value: Any, type_name: str
) -> None:
    KnowledgeBase(store).add("alpha beta", source="doc")
    for call, what in (
        (lambda: store.search("alpha", collection=value), "collection"),
        (lambda: store.search("alpha", kind=value), "kind"),
        (lambda: KnowledgeBase(store).search("alpha", collection=value), "collection"),
    ):
        with pytest.raises(InvalidInputError, match=f"{what} must be a name or a list of names, "):
            call()
        with pytest.raises(InvalidInputError, match=f"not {type_name}$"):
            call()
    # the forms that are meant still work
    assert len(store.search("alpha", collection=["default"])) == 1
    assert len(store.search("alpha", collection={"default"})) == 1


def test_code_search_checks_min_score_like_the_other_layers(store: Store) -> None:
    with pytest.raises(InvalidInputError, match="min_score must be a number from 0 to 1"):
        CodeIndexer(store).search("alpha", min_score=float("nan"))


def test_a_directory_or_an_empty_path_is_refused_as_a_memory_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="is a directory; a memory is one file"):
        Store(tmp_path)
    with pytest.raises(InvalidInputError, match="path is empty"):
        Store("")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("patterns", "match"),
    [
        (["\\"], "not a valid glob"),
        (["[z-a]"], "not a valid glob"),  # a reversed range: no regular expression
        (["  "], "blank"),
        (["# x"], "comment"),
        (["!*.md"], "alone"),
    ],
)
def test_ingest_patterns_that_would_select_nothing_are_refused(
    store: Store, tmp_path: Path, patterns: list[str], match: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nalpha beta\n")
    kb = KnowledgeBase(store)
    with pytest.raises(InvalidInputError, match=match):
        kb.ingest(tmp_path / "docs", patterns=patterns)
    assert kb.count() == 0
    assert kb.ingest(tmp_path / "docs", patterns=["*.md"]).added == ["a.md"]


@pytest.mark.parametrize("given", ["memory.db", Path("memory.db"), None])
def test_a_service_over_something_else_than_a_store_is_refused(
    tmp_path: Path, given: object
) -> None:
    # RemembrancesService("memory.db") used to be accepted; its searches then failed
    # inside a layer (enrich_context logged the error and returned "")
    with pytest.raises(InvalidInputError, match=r"takes a Store.*remembrances\.open\(path\)"):
        RemembrancesService(given)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["\x00", " \x00\n\x00 ", "\x1b\x07"])
def test_text_of_control_characters_alone_is_blank(store: Store, text: str) -> None:
    kb, events = KnowledgeBase(store), EventLog(store)
    for call in (
        lambda: kb.add(text, source="doc"),
        lambda: events.log(text),
        lambda: events.log_conversation([{"role": "user", "content": text}], session="s"),
    ):
        with pytest.raises(InvalidInputError, match="blank"):
            call()
    assert store.count() == 0
    kb.add(
        "a NUL inside\x00text is still text", source="doc"
    )  # only text of nothing else is refused


@pytest.mark.parametrize("name", ["s\x00", "line\nbreak", "tab\there"])
def test_session_user_and_project_names_hold_no_control_characters(store: Store, name: str) -> None:
    events = EventLog(store)
    said = [{"role": "user", "content": "hi"}]
    for call in (
        lambda: events.log_conversation(said, session=name),
        lambda: events.log_conversation(said, session="s", user=name),
        lambda: CodeIndexer(store).stats(name),
    ):
        with pytest.raises(InvalidInputError, match="control character"):
            call()
    assert store.count() == 0


def test_a_name_holding_a_noncharacter_stays_a_name(store: Store) -> None:
    # refusing U+FFFF (what a NUL in a PostgreSQL lookup becomes) locked users out of
    # documents and sessions already stored with one
    kb, events = KnowledgeBase(store), EventLog(store)
    kb.add("the report", source="report\uffff.md")
    events.log_conversation([{"role": "user", "content": "hi"}], session="chat\uffff")
    assert kb.get("report\uffff.md").source == "report\uffff.md"
    assert [t.content for t in events.turns("chat\uffff")] == ["hi"]


def test_metadata_may_nest_as_deep_as_the_limit(store: Store) -> None:
    from remembrances.validation import MAX_METADATA_DEPTH

    kb = KnowledgeBase(store)
    kb.add("text", source="doc", metadata=_deep(MAX_METADATA_DEPTH - 1))
    with pytest.raises(InvalidInputError, match="nested deeper than"):
        kb.add("text", source="other", metadata=_deep(MAX_METADATA_DEPTH))
