"""Conversations on a real file: chat messages in, turns with session and position out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import remembrances
from remembrances import InvalidInputError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.events import EventLog, conversation
from remembrances.events.conversation import MAX_CONTENT_CHARS
from tests.conftest import FlakyEmbedder

MORNING = datetime(2026, 5, 8, 9, 0, tzinfo=UTC)

OPENAI = [
    {"role": "assistant", "content": "Hello! How was your week?"},
    {"role": "user", "content": "I signed up for a pottery class on Tuesdays."},
    {"role": "assistant", "content": "Nice! What are you making first?"},
    {"role": "user", "content": "A plate, glazed blue.", "name": "mel"},
]
ANTHROPIC = [
    {"role": "user", "content": [{"type": "text", "text": "Look at my new tent."}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "It looks roomy."},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
            {"type": "text", "text": "Where will you camp?"},
        ],
    },
]
TRANSCRIPT = [
    {"speaker": "Caroline", "text": "I went to a support group yesterday.", "at": MORNING},
    {"speaker": "Melanie", "text": "That sounds powerful.", "metadata": {"mood": "warm"}},
    {
        "speaker": "Caroline",
        "text": "Here is the mural I saw.",
        "caption": "a painting of a rainbow flag on a brick wall",
    },
]


@pytest.fixture
def events(store: Store) -> EventLog:
    return EventLog(store)


def test_openai_messages_round_trip(events: EventLog) -> None:
    logged = events.log_conversation(OPENAI, session="s1", user="mel", at=MORNING)
    assert (logged.session, logged.user, logged.already_stored) == ("s1", "mel", 0)
    turns = events.turns("s1")
    assert turns == logged.added
    assert [t.position for t in turns] == [0, 1, 2, 3]
    assert [t.role for t in turns] == ["assistant", "user", "assistant", "user"]
    assert [t.subject for t in turns] == ["assistant", "user", "assistant", "mel"]
    assert [t.content for t in turns] == [m["content"] for m in OPENAI]
    assert all(t.occurred_at == MORNING and t.user == "mel" for t in turns)
    data = turns[3].to_dict()
    assert (data["session"], data["position"], data["role"], data["user"]) == (
        "s1",
        3,
        "user",
        "mel",
    )


def test_anthropic_content_blocks_keep_their_text(events: EventLog) -> None:
    events.log_conversation(ANTHROPIC, session="camp")
    turns = events.turns("camp")
    assert [t.content for t in turns] == [
        "Look at my new tent.",
        "It looks roomy.\n\nWhere will you camp?",
    ]


def test_speaker_transcripts_keep_times_metadata_and_captions(events: EventLog) -> None:
    events.log_conversation(TRANSCRIPT, session="D1", at="2026-05-08T12:00:00+00:00")
    first, second, third = events.turns("D1")
    assert first.occurred_at == MORNING  # the message's own time wins
    assert second.occurred_at == datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
    assert second.metadata == {"mood": "warm"}
    assert third.metadata["caption"] == "a painting of a rainbow flag on a brick wall"
    assert third.content == "Here is the mural I saw."
    # the caption is searchable: a question may name what the photo showed
    hits = events.search("rainbow flag brick wall", session="D1", mode="text", limit=1)
    assert [h.id for h in hits] == [third.id]


def test_logging_a_session_again_adds_only_new_turns(
    events: EventLog, embedder: HashEmbedder
) -> None:
    events.log_conversation(OPENAI[:2], session="s1")
    calls = embedder.calls
    again = events.log_conversation(OPENAI[:2], session="s1")
    assert (again.added, again.already_stored, embedder.calls) == ([], 2, calls)
    whole = events.log_conversation(OPENAI, session="s1")  # the whole transcript again
    assert [t.content for t in whole.added] == [OPENAI[2]["content"], OPENAI[3]["content"]]
    assert [t.position for t in whole.added] == [2, 3]
    tail = events.log_conversation(
        [*OPENAI[2:], {"role": "assistant", "content": "Blue is a good choice."}], session="s1"
    )  # only the latest messages, overlapping what is stored
    assert [t.position for t in tail.added] == [4]
    delta = events.log_conversation([{"role": "user", "content": "Thanks!"}], session="s1")
    assert [t.position for t in delta.added] == [5]
    assert events.count(session="s1") == 6
    assert [t.position for t in events.turns("s1")] == [0, 1, 2, 3, 4, 5]


def test_a_whole_transcript_after_pruning_or_deleting_adds_only_new_turns(
    events: EventLog,
) -> None:
    """Removed turns stay removed, and the stored ones are not added a second time."""
    old = datetime(2026, 1, 1, tzinfo=UTC)
    events.log_conversation(OPENAI[:2], session="s1", at=old)
    events.log_conversation(OPENAI, session="s1", at=datetime(2026, 11, 1, tzinfo=UTC))
    assert events.prune(older_than=datetime(2026, 6, 1, tzinfo=UTC)) == 2
    more = [*OPENAI, {"role": "user", "content": "And a bowl next week."}]
    logged = events.log_conversation(more, session="s1")
    assert [(t.position, t.content) for t in logged.added] == [(4, "And a bowl next week.")]
    assert [t.position for t in events.turns("s1")] == [2, 3, 4]
    # a turn deleted from the middle: the same
    events.delete(events.turns("s1")[1].id)
    again = events.log_conversation(
        [*more, {"role": "assistant", "content": "Nice."}], session="s1"
    )
    assert [t.position for t in again.added] == [5]
    assert [t.position for t in events.turns("s1")] == [2, 4, 5]


def test_a_session_pruned_whole_does_not_come_back_when_sent_again(events: EventLog) -> None:
    # with no turn left there was nothing to line the transcript up with, and every
    # pruned turn was stored again
    old = datetime(2026, 1, 1, tzinfo=UTC)
    said = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"step {i}"} for i in range(6)
    ]
    events.log_conversation(said, session="s1", at=old)
    assert events.prune(older_than=datetime(2026, 6, 1, tzinfo=UTC)) == 6
    step_6 = {"role": "user", "content": "step 6"}
    logged = events.log_conversation([*said, step_6], session="s1")  # the whole transcript
    assert [(t.position, t.content) for t in logged.added] == [(6, "step 6")]
    assert logged.already_stored == 6
    # the latest messages only, overlapping the pruned ones and the new one
    step_7 = {"role": "assistant", "content": "step 7"}
    window = events.log_conversation([*said[3:], step_6, step_7], session="s1")
    assert [(t.position, t.content) for t in window.added] == [(7, "step 7")]
    assert [t.content for t in events.turns("s1")] == ["step 6", "step 7"]


def test_a_deleted_last_turn_stays_deleted(events: EventLog) -> None:
    events.log_conversation(OPENAI, session="s1")
    events.delete(events.turns("s1")[-1].id)
    logged = events.log_conversation([*OPENAI, {"role": "user", "content": "Hi"}], session="s1")
    assert [(t.position, t.content) for t in logged.added] == [(4, "Hi")]
    assert [t.position for t in events.turns("s1")] == [0, 1, 2, 4]


def test_a_removed_turn_is_kept_as_a_digest_only(events: EventLog, store: Store) -> None:
    events.log_conversation([{"role": "user", "content": "my card is 4111 1111"}], session="s1")
    events.delete(events.turns("s1")[0].id)
    with store.snapshot() as tx:
        rows = tx.execute("SELECT * FROM removed_turns").fetchall()
    assert len(rows) == 1
    assert "4111" not in " ".join(str(v) for v in dict(rows[0]).values())


def test_forgetting_a_session_leaves_not_even_its_digests(events: EventLog, store: Store) -> None:
    events.log_conversation(OPENAI, session="s1")
    events.log_conversation(OPENAI[:1], session="s2")
    events.delete(events.turns("s1")[0].id)
    cached = store.stats()["cached_embeddings"]
    assert events.forget_session("s1") == 3
    with store.snapshot() as tx:
        left = tx.execute("SELECT session FROM removed_turns").fetchall()
    assert left == [] and events.turns("s1") == [] and len(events.turns("s2")) == 1
    # the cache's key is a hash of the text: the forgotten turns' vectors go too, the
    # other session's (the same first message) stays
    assert store.stats()["cached_embeddings"] == cached - 3
    # a turn deleted before the forget: its vector went with it (nothing left to tie
    # it to the session once the digests are gone)
    events.log_conversation([{"role": "user", "content": "my card is 4111 1111"}], session="s3")
    before = store.stats()["cached_embeddings"]
    events.delete(events.turns("s3")[0].id)
    events.forget_session("s3")
    assert store.stats()["cached_embeddings"] == before - 1
    assert store.search("pottery", kind="event", mode="text") == []
    assert events.forget_session("s1") == 0
    with pytest.raises(InvalidInputError):
        events.forget_session("  ")


def test_forgetting_a_user_leaves_nothing_of_theirs_and_all_of_the_others(
    events: EventLog, store: Store
) -> None:
    for user, code in (("ana", "CJDW486"), ("bruno", "KQ77")):
        for n in (1, 2):
            messages = [
                {"role": "user", "content": f"{user}'s locker code is {code}, session {n}"},
                {"role": "assistant", "content": f"Noted for {user}, session {n}."},
            ]
            events.log_conversation(messages, session=f"{user}-{n}", user=user)
        events.log(f"{user} decided on the blue plan", subject="decision", user=user)
    events.log("the office moves in May")  # no user: shared, and stays
    for turn in events.turns("ana-2"):  # deleted one by one: no listing shows ana-2 now
        events.delete(turn.id)
    assert "ana-2" not in events.sessions(user="ana")
    cached = store.stats()["cached_embeddings"]

    assert events.forget_user("ana") == 3  # ana-1's two turns and the decision
    assert events.count(user="ana") == 0 and list(events.sessions(user="ana")) == []
    with store.snapshot() as tx:
        left = tx.execute("SELECT session, user_id FROM removed_turns").fetchall()
        texts = " ".join(str(r["text"]) for r in tx.execute("SELECT text FROM chunks"))
    assert all(r["user_id"] != "ana" for r in left)  # ana-2's digests went too
    assert "ana" not in texts and "CJDW486" not in texts
    assert store.stats()["cached_embeddings"] == cached - 3
    assert events.count(user="bruno") == 5 and events.count() == 6
    assert [e.content for e in events.search("when does the office move?", limit=1)] == [
        "the office moves in May"
    ]
    # the transcript sent again is stored again: nothing remembers it was removed
    again = [{"role": "user", "content": "ana's locker code is CJDW486, session 2"}]
    assert len(events.log_conversation(again, session="ana-2", user="ana").added) == 1
    assert events.forget_user("nobody") == 0
    with pytest.raises(InvalidInputError):
        events.forget_user(" ana")


def test_each_session_keeps_its_latest_removed_turns(events: EventLog, store: Store) -> None:
    from remembrances.events.event_log import REMOVED_KEPT

    old = datetime(2026, 1, 1, tzinfo=UTC)
    many = [{"speaker": "a", "text": f"line {i}"} for i in range(REMOVED_KEPT + 10)]
    events.log_conversation(many, session="long", at=old)
    events.log_conversation(many[:3], session="short", at=old)
    events.prune(older_than=datetime(2026, 6, 1, tzinfo=UTC))
    with store.snapshot() as tx:
        kept = tx.execute(
            "SELECT session, min(position) AS first, count(*) AS n FROM removed_turns "
            "GROUP BY session ORDER BY session"
        ).fetchall()
    assert [tuple(r) for r in kept] == [("long", 10, REMOVED_KEPT), ("short", 0, 3)]
    # the whole transcript still lines up by the positions kept
    logged = events.log_conversation([*many, {"speaker": "a", "text": "new"}], session="long")
    assert [t.content for t in logged.added] == ["new"]


def test_another_user_may_reuse_a_pruned_session_id(events: EventLog) -> None:
    old = datetime(2026, 1, 1, tzinfo=UTC)
    events.log_conversation(OPENAI, session="s1", user="ana", at=old)
    events.prune(older_than=datetime(2026, 6, 1, tzinfo=UTC))
    logged = events.log_conversation(OPENAI, session="s1", user="bob")
    assert len(logged.added) == 4  # ana's removed turns are not bob's
    assert {t.user for t in events.turns("s1")} == {"bob"}
    assert [t.position for t in logged.added] == [4, 5, 6, 7]


def test_system_and_developer_messages_are_left_out(events: EventLog) -> None:
    # the instructions are no memory: a system prompt came back in every recall of the
    # session, and one with the time in it made each re-sent transcript look new
    for minute in range(3):
        instructions = [
            {"role": "system", "content": f"You are DevHelper. Current time: 10:0{minute}."},
            {"role": "developer", "content": "Answer concisely."},
        ]
        logged = events.log_conversation([*instructions, *OPENAI[1 : 2 + minute]], session="s1")
        assert len(logged.added) == 1, minute
    assert [t.content for t in events.turns("s1")] == [m["content"] for m in OPENAI[1:4]]
    # an edit is named by its place in the messages given, the instructions counted
    edited = [{"role": "system", "content": "Be brief."}, *OPENAI[1:3]]
    edited[2] = {"role": "assistant", "content": "Something else entirely."}
    with pytest.raises(InvalidInputError, match="message 2 differs from turn 1"):
        events.log_conversation(edited, session="s1")


def test_a_compacted_history_adds_only_what_follows_the_stored_turns(events: EventLog) -> None:
    # a client that replaces its early turns with a summary, or rewrites its first
    # message, and sends the rest as it was: each earlier turn was stored again
    said = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"step {i}"} for i in range(6)
    ]
    events.log_conversation(said, session="s1")
    summary = {"role": "user", "content": "[Summary of the earlier conversation: steps 0-2.]"}
    logged = events.log_conversation(
        [summary, *said[3:], {"role": "user", "content": "step 6"}], session="s1"
    )
    assert [t.content for t in logged.added] == ["step 6"]
    step_6 = {"role": "user", "content": "step 6"}
    changed_first = [
        {"role": "user", "content": "step 0 "},
        *said[1:],
        step_6,
        {"role": "assistant", "content": "step 7"},
    ]
    assert [t.content for t in events.log_conversation(changed_first, session="s1").added] == [
        "step 7"
    ]
    assert events.count(session="s1") == 8


def test_new_messages_that_repeat_the_sessions_end_are_all_added(events: EventLog) -> None:
    # sent alone after the same exchange about a branch: not the session sent again
    # with a changed first message (what the user said was lost, reported as stored)
    def ask(what: str) -> list[dict[str, str]]:
        return [
            {"role": "user", "content": what},
            {"role": "assistant", "content": "Are you sure?"},
            {"role": "user", "content": "yes"},
        ]

    events.log_conversation(ask("Delete the old staging branch"), session="s1")
    again = events.log_conversation(ask("Now drop the staging database"), session="s1")
    assert [t.content for t in again.added] == [
        "Now drop the staging database",
        "Are you sure?",
        "yes",
    ]
    one = events.log_conversation([{"role": "user", "content": "hi"}, ask("x")[2]], session="s1")
    assert len(one.added) == 2


@pytest.mark.parametrize("role", ["system", "System", "DEVELOPER"])
def test_instructions_are_left_out_in_any_case(events: EventLog, role: str) -> None:
    logged = events.log_conversation(
        [{"role": role, "content": "Be brief."}, *OPENAI[1:3]], session="s1"
    )
    assert (len(logged.added), logged.skipped) == (2, 1)


def test_a_session_stored_with_its_system_prompt_still_aligns(
    events: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = {"role": "system", "content": "You are helpful."}
    said = [system, *OPENAI[1:]]
    # logged as versions before 2026-11-26 did: its turn 0 is the system prompt
    with monkeypatch.context() as before:
        before.setattr(conversation, "TOOL_ROLES", frozenset({"tool", "function"}))
        events.log_conversation(said[:3], session="s1")
    assert events.turns("s1")[0].role == "system"
    again = events.log_conversation(said, session="s1")  # sent again, one new message
    assert [t.content for t in again.added] == [OPENAI[3]["content"]]
    edited = [dict(m) for m in said]
    edited[2]["content"] = "Something else entirely."
    with pytest.raises(InvalidInputError, match="message 2 differs"):
        events.log_conversation(edited, session="s1")
    assert events.count(session="s1") == 4


def test_a_rewritten_history_is_refused(events: EventLog) -> None:
    events.log_conversation(OPENAI, session="s1")
    edited = [dict(m) for m in OPENAI]
    edited[2]["content"] = "Something else entirely."
    with pytest.raises(InvalidInputError, match="message 2 differs"):
        events.log_conversation(edited, session="s1")
    assert events.count(session="s1") == 4


def test_messages_the_client_deleted_stay_and_the_session_goes_on(events: EventLog) -> None:
    said = [
        {"role": ROLES[i % 2], "content": f"message {i} about the compost heap"} for i in range(6)
    ]
    events.log_conversation(said, session="g")
    deleted = said[:2] + said[3:]  # the user deleted message 2 in the chat app
    again = events.log_conversation(deleted, session="g")
    assert (again.added, again.already_stored) == ([], 5)
    new = {"role": "user", "content": "and what about the worms?"}
    logged = events.log_conversation([*deleted[:-2], deleted[-1], new], session="g")
    assert [t.content for t in logged.added] == [new["content"]]
    assert [t.content for t in events.turns("g")] == [m["content"] for m in said] + [new["content"]]
    # an edited message is no stored turn: still refused
    edited = [*deleted[:2], {"role": "assistant", "content": "changed"}, *deleted[3:], new]
    with pytest.raises(InvalidInputError, match="differs"):
        events.log_conversation(edited, session="g")

    # two stored messages are no transcript: new ones that repeat them are not lost
    stored = [m["content"] for m in said]
    with pytest.raises(InvalidInputError, match="differs"):
        events.log_conversation([said[0], said[-1], new], session="g")
    assert [t.content for t in events.turns("g")] == [*stored, new["content"]]


def test_repeated_words_in_one_session_are_separate_turns(events: EventLog) -> None:
    ok = {"role": "user", "content": "ok"}
    logged = events.log_conversation([ok, {"role": "assistant", "content": "ok?"}, ok], session="s")
    assert len(logged.added) == 3 and events.count(session="s") == 3


def test_search_and_listing_are_scoped_to_a_user_or_a_session(events: EventLog) -> None:
    events.log_conversation(
        [{"role": "user", "content": "My sister's name is Ada."}], session="a1", user="alice"
    )
    events.log_conversation(
        [{"role": "user", "content": "My sister's name is Bea."}], session="b1", user="bob"
    )
    events.log_conversation(
        [{"role": "user", "content": "Ada loves sister trips."}], session="a2", user="alice"
    )
    events.log("sister visit planned", subject="calendar", metadata={"session": "a1"})
    found = {e.content for e in events.search("sister name", user="bob")}
    assert found == {"My sister's name is Bea."}
    found = {e.content for e in events.search("sister", session="a1")}
    assert found == {"My sister's name is Ada."}  # caller metadata cannot fake a session
    assert {e.session for e in events.search("sister", user="alice", limit=10)} == {"a1", "a2"}
    assert len(events.search("sister", limit=10)) == 4
    assert [e.content for e in events.list(user="alice")] == [
        "Ada loves sister trips.",
        "My sister's name is Ada.",
    ]
    assert events.count(user="bob") == 1 and events.count(session="a2") == 1
    assert events.search(None, session="b1")[0].content == "My sister's name is Bea."
    assert events.sessions(user="alice").keys() == {"a1", "a2"}
    assert events.log("x", user="bob").user == "bob"
    assert events.count(user="bob") == 2
    with pytest.raises(InvalidInputError, match="belongs to another user, not user 'bob'") as e:
        events.log_conversation([{"role": "user", "content": "hi"}], session="a1", user="bob")
    assert "alice" not in str(e.value)  # bob's agent is not told whose session it is
    events.log_conversation([{"role": "user", "content": "hi"}], session="nobody's")
    with pytest.raises(InvalidInputError, match="belongs to no user, not user 'bob'"):
        events.log_conversation([{"role": "user", "content": "hi"}], session="nobody's", user="bob")
    # A user and a session: the session's turns when it is that user's, else nothing
    # (a session is one user's, so its owner answers; checked once, not per chunk).
    both = [e.content for e in events.search("sister", user="alice", session="a1", limit=10)]
    assert both == [e.content for e in events.search("sister", session="a1", limit=10)]
    assert events.search("sister", user="bob", session="a1") == []
    assert events.search("hi", user="bob", session="nobody's") == []
    assert events.search("sister", user="alice", session="never-logged") == []
    # The same narrowing for a whole-memory search's scope of events.
    assert events.scope("alice", "a1") == {"session": "a1"}
    assert events.scope("bob", "a1") == {"user": "bob", "session": "a1"}  # matches none
    assert events.scope("alice") == {"user": "alice"}
    assert events.scope(session="a1") == {"session": "a1"}


def test_a_window_brings_the_neighbouring_turns(events: EventLog) -> None:
    messages = [
        {"speaker": "Mel" if i % 2 else "Caro", "text": f"turn number {i} about weather"}
        for i in range(8)
    ]
    messages[4]["text"] = "Yeah, I made it in pottery class yesterday."
    events.log_conversation(messages, session="s")
    events.log_conversation([{"speaker": "Mel", "text": "pottery is fun"}], session="other")
    hit = events.search("pottery class", session="s", window=2, limit=1)[0]
    assert hit.position == 4
    assert [e.position for e in hit.before] == [2, 3]
    assert [e.position for e in hit.after] == [5, 6]
    assert all(e.session == "s" for e in (*hit.before, *hit.after))
    data = hit.to_dict()
    assert [e["position"] for e in data["before"]] == [2, 3]
    edge = events.search("turn number 0", session="s", window=3, mode="text", limit=1)[0]
    assert edge.position == 0 and edge.before == () and len(edge.after) == 3
    assert events.search("pottery class", session="s", limit=1)[0].before == ()
    plain = events.log("pottery kiln delivered")
    found = {e.id: e for e in events.search("pottery kiln delivered", window=1, limit=5)}
    assert found[plain.id].before == () and found[plain.id].after == ()


BAD_MESSAGES: list[tuple[Any, str]] = [
    ([], "no messages"),
    ("hello", "must be a list"),
    ({"role": "user", "content": "hi"}, "must be a list"),
    ([{"role": "user", "content": "hi"}, "hi"], "message 2 is a str"),
    ([{"who": "x", "said": "hi"}], "needs 'role' and 'content'"),
    ([{"role": "user", "content": ""}], "message 1 content has no text"),
    ([{"role": "user", "content": None}], "content is missing"),
    ([{"role": "user", "content": [42]}], "block 0 is not a content block"),
    ([{"role": "user", "content": b"\xff\xfe"}], "binary"),
    ([{"role": "user", "content": "x" * (MAX_CONTENT_CHARS + 1)}], "the limit is"),
    ([{"role": "user", "content": "bad \udcff"}], "not valid Unicode"),
    ([{"role": "", "content": "hi"}], "role is empty"),
    ([{"role": 3, "content": "hi"}], "role must be a string"),
    ([{"speaker": "a", "text": "hi", "at": "yesterday"}], "not an ISO 8601 time"),
    ([{"speaker": "a", "text": "hi", "at": float("nan")}], "finite"),
    ([{"speaker": "a", "text": "hi", "at": "2026-01-01", "time": 5}], "give one time"),
    ([{"speaker": "a", "text": "hi", "metadata": {"x": float("nan")}}], "JSON"),
    ([{"speaker": "a", "text": "hi", "tool_calls": []}], "unknown keys"),
    ([{"role": "user", "content": "hi", "tool_callz": []}], "unknown keys"),
    ([{"role": "assistant", "content": None}], "content is missing"),
    ([{"speaker": "a", "text": "hi", "caption": 7}], "caption must be a string"),
]


@pytest.mark.parametrize(("messages", "match"), BAD_MESSAGES)
def test_hostile_messages_raise_one_error_and_write_nothing(
    events: EventLog, messages: Any, match: str
) -> None:
    good = [{"role": "user", "content": "a good first message"}]
    payload = good + messages if isinstance(messages, list) and messages else messages
    if messages == []:
        payload = []
    with pytest.raises(InvalidInputError, match=match):
        events.log_conversation(payload, session="s")
    assert events.count() == 0 and events.turns("s") == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"session": ""}, "session is empty"),
        ({"session": 5}, "session must be a string"),
        ({"session": "s", "user": " "}, "user is empty"),
        ({"session": "s" * 257}, "session is 257 characters; the limit is 256"),
        ({"session": "s", "user": "bad \udcff"}, "user is not valid Unicode"),
        ({"session": "s", "at": "soon"}, "not an ISO 8601 time"),
        ({"session": "s", "metadata": ["x"]}, "metadata must be a mapping"),
    ],
)
def test_hostile_conversation_arguments(
    events: EventLog, kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(InvalidInputError, match=match):
        events.log_conversation([{"role": "user", "content": "hi"}], **kwargs)
    assert events.count() == 0


def test_progress_counts_the_turns_embedded(events: EventLog) -> None:
    calls: list[tuple[str, int, int | None]] = []
    events.log_conversation(TRANSCRIPT, session="p", progress=lambda *a: calls.append(a))
    assert calls and calls[-1] == ("embedding", 3, 3)


def test_a_failed_embedding_writes_no_turn(db_path: Any) -> None:
    with Store(db_path, embedder=FlakyEmbedder()) as store:
        events = EventLog(store)
        events.log_conversation([{"speaker": "a", "text": "fine"}], session="s")
        with pytest.raises(RuntimeError):
            events.log_conversation(
                [{"speaker": "a", "text": "fine"}, {"speaker": "b", "text": "FAIL now"}],
                session="s",
            )
        assert [t.content for t in events.turns("s")] == ["fine"]
        assert events.count() == 1


@pytest.mark.parametrize("window", [-1, 21, 1.5, True, "2"])
def test_hostile_window(events: EventLog, window: Any) -> None:
    with pytest.raises(InvalidInputError, match="window must be"):
        events.search("x", window=window)


def test_a_question_naming_a_speaker_prefers_their_turns(events: EventLog) -> None:
    events.log_conversation(
        [
            # the same words either way, so only the speaker can tell them apart
            {"speaker": "Caroline", "text": "Melanie, I painted a sunrise over the lake."},
            {"speaker": "Melanie", "text": "Caroline, I painted a sunrise over the lake."},
        ],
        session="s",
    )
    # Hybrid: text mode's score is word coverage, 1.0 for both turns here, and a
    # boosted 1.0 stays 1.0.
    for name in ("Melanie", "Caroline"):
        hits = events.search(f"when did {name.lower()} paint a sunrise?")
        assert hits[0].subject == name
        assert hits[0].score is not None and hits[1].score is not None
        assert hits[0].score > hits[1].score
    both = events.search("did Melanie and Caroline paint a sunrise?")
    assert both[0].score == pytest.approx(both[1].score, abs=0.01)  # two named: no preference


def test_a_turn_gains_from_a_matching_neighbour() -> None:
    from remembrances.events.event_log import NEIGHBOUR_WEIGHT, _conversation_scores
    from remembrances.events.records import Event

    def turn(i: int, position: int, score: float, session: str | None = "s") -> Event:
        return Event(i, "x", "t", MORNING, MORNING, {}, score, session, position)

    hits = [turn(1, 5, 0.5), turn(2, 6, 0.3), turn(3, 9, 0.35), turn(4, 0, 0.2, None)]
    rescored = {e.id: e.score for e in _conversation_scores("q", hits, frozenset())}
    assert rescored[2] == pytest.approx(0.3 + NEIGHBOUR_WEIGHT * 0.5)  # beside turn 1
    assert rescored[1] == pytest.approx(0.5 + NEIGHBOUR_WEIGHT * 0.3)
    assert rescored[3] == pytest.approx(0.35)  # no neighbour among the candidates
    assert rescored[4] == pytest.approx(0.2)  # not a turn: unchanged
    capped = _conversation_scores("q", [turn(1, 0, 0.9), turn(2, 1, 0.9)], frozenset())
    assert all(e.score == 1.0 for e in capped)


def test_reindex_rebuilds_lost_chunks_as_they_were(events: EventLog, store: Store) -> None:
    logged = events.log_conversation(TRANSCRIPT, session="D1", user="caro")
    plain = events.log("kiln delivered", subject="studio", user="caro")
    ids = [e.id for e in logged.added] + [plain.id]
    written = {i: store.get_source("event", str(i), collection="events") for i in ids}
    with store.transaction():
        for i in ids:
            store.delete_source("event", str(i), collection="events")
    assert events.search("rainbow flag", session="D1") == []
    assert events.reindex([*ids, 999_999]) == len(ids)
    for i in ids:
        again = store.get_source("event", str(i), collection="events")
        assert [(c.text, c.metadata, c.content_hash, c.ts) for c in again] == [
            (c.text, c.metadata, c.content_hash, c.ts) for c in written[i]
        ]
    assert events.search("rainbow flag", session="D1", mode="text")[0].id == ids[2]
    with pytest.raises(InvalidInputError, match="event id must be an integer"):
        events.reindex(["1"])  # type: ignore[list-item]


def test_tool_calls_and_results_are_left_out_as_frameworks_hold_them(events: EventLog) -> None:
    openai = [
        {"role": "user", "content": "what's the weather in Lima?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 19}'},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c2"}]},  # as Ollama sends
        {"role": "assistant", "tool_calls": [{"id": "c3"}]},  # dumped with exclude_none
        {"role": "assistant", "content": "It is 19 degrees in Lima.", "refusal": None},
    ]
    logged = events.log_conversation(openai, session="o")
    assert [e.content for e in logged.added] == [
        "what's the weather in Lima?",
        "It is 19 degrees in Lima.",
    ]
    assert (logged.skipped, logged.to_dict()["skipped"]) == (4, 4)
    assert [t.position for t in events.turns("o")] == [0, 1]
    # logged again whole, nothing is added twice
    again = events.log_conversation(openai, session="o")
    assert (again.added, again.already_stored, again.skipped) == ([], 2, 4)

    anthropic = [
        {"role": "user", "content": "read config.py"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        {"role": "user", "content": [{"type": "image", "source": {}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It sets DEBUG."}]},
    ]
    logged = events.log_conversation(anthropic, session="a")
    assert [e.content for e in logged.added] == ["read config.py", "It sets DEBUG."]
    assert logged.skipped == 3
    # a call that holds only tool traffic adds nothing and raises nothing
    only_tools = events.log_conversation(anthropic[1:3], session="a")
    assert (only_tools.added, only_tools.skipped) == ([], 2)


def test_a_repeated_message_with_its_own_time_is_a_new_turn(events: EventLog) -> None:
    first = [{"role": "user", "content": "ok", "at": "2026-11-20T10:00:00Z"}]
    second = [{"role": "user", "content": "ok", "at": "2026-11-20T10:05:00Z"}]
    assert len(events.log_conversation(first, session="s").added) == 1
    assert len(events.log_conversation(second, session="s").added) == 1  # one at a time
    assert [t.content for t in events.turns("s")] == ["ok", "ok"]
    # the transcript logged again, times and all, adds nothing
    again = events.log_conversation(first + second, session="s")
    assert (again.added, again.already_stored) == ([], 2)
    # without a time the repeat is taken for the turn already stored
    assert events.log_conversation([{"role": "user", "content": "ok"}], session="s").added == []
    assert len(events.turns("s")) == 2


def test_turns_logged_live_then_imported_with_their_times_are_stored_once(
    events: EventLog,
) -> None:
    # an agent logs each message as it comes (no time: stored at that moment), then
    # imports the provider's transcript, whose messages carry their own times
    said = ["Plan my trip to Kyoto.", "Sure, when do you go?", "In April, for ten days."]
    for i, text in enumerate(said):
        events.log_conversation([{"role": ROLES[i % 2], "content": text}], session="kyoto")
    exported = [
        {"role": ROLES[i % 2], "content": text, "at": f"2026-11-20T10:0{i}:00Z"}
        for i, text in enumerate([*said, "Book a ryokan please."])
    ]
    logged = events.log_conversation(exported, session="kyoto")
    assert ([e.content for e in logged.added], logged.already_stored) == (
        ["Book a ryokan please."],
        3,
    )
    assert [t.content for t in events.turns("kyoto")] == [*said, "Book a ryokan please."]
    # a turn logged with a time keeps it: the same words at another time are new
    assert len(events.log_conversation(exported[-1:], session="kyoto").added) == 0
    later = {**exported[-1], "at": "2026-11-20T11:00:00Z"}
    assert len(events.log_conversation([later], session="kyoto").added) == 1
    # a turn deleted meanwhile is kept as a digest with the time it was logged: the
    # transcript still lines up with it
    events.delete(events.turns("kyoto")[1].id)
    assert events.log_conversation(exported, session="kyoto").added == []
    # the same exchange said again later, with its own times, is new
    soon = datetime.now(UTC) + timedelta(hours=1)  # the live turns' times are now
    later_again = [
        {**m, "at": (soon + timedelta(minutes=i)).isoformat()} for i, m in enumerate(exported[:2])
    ]
    again = events.log_conversation(later_again, session="kyoto")
    assert [e.content for e in again.added] == said[:2]


ROLES = ("user", "assistant")


def test_a_search_of_the_whole_memory_can_keep_to_one_users_events(
    store: Store, events: EventLog
) -> None:
    from remembrances.events import scope_where
    from remembrances.kb import KnowledgeBase

    events.log_conversation([{"role": "user", "content": "my dog is called Biscuit"}],
                            session="a1", user="alice")  # fmt: skip
    events.log_conversation([{"role": "user", "content": "my dog is called Pixel"}],
                            session="b1", user="bob")  # fmt: skip
    KnowledgeBase(store).add("Dog names: a guide to naming your dog.", source="dogs.md")

    def found(**scope: str) -> set[str]:
        hits = store.search("dog called", limit=10, kind_where={"event": scope_where(**scope)})
        return {h.text for h in hits}

    assert found() == {"user: my dog is called Biscuit", "user: my dog is called Pixel",
                       "Dog names: a guide to naming your dog."}  # fmt: skip
    assert found(user="alice") == {"user: my dog is called Biscuit",
                                   "Dog names: a guide to naming your dog."}  # fmt: skip
    assert found(session="b1") == {"user: my dog is called Pixel",
                                   "Dog names: a guide to naming your dog."}  # fmt: skip
    assert found(user="alice", session="b1") == {"Dog names: a guide to naming your dog."}
    with pytest.raises(InvalidInputError, match="kind_where must map a kind"):
        store.search("dog", kind_where={"event": "alice"})  # type: ignore[dict-item]


def test_a_users_turn_is_labelled_with_whose_it_is(store: Store, events: EventLog) -> None:
    at = "2026-11-20T10:00:00Z"
    events.log_conversation([{"role": "user", "content": "hi there", "at": at},
                             {"role": "assistant", "content": "good morning", "at": at}],
                            session="a1", user="alice")  # fmt: skip
    events.log_conversation([{"role": "user", "content": "hello", "at": at}], session="x1")
    plain = events.log("deployed v2", subject="ops", at=at)
    labels = {e.content: e.label for e in events.list()}
    assert labels["hi there"] == "user (alice) · 2026-11-20 10:00 UTC"
    # the assistant's turn is in alice's chat; "assistant (alice)" read as if it were her
    assert labels["good morning"] == "assistant (alice's chat) · 2026-11-20 10:00 UTC"
    assert labels["hello"] == "user · 2026-11-20 10:00 UTC"  # nobody's in particular
    assert plain.label == "ops · 2026-11-20 10:00 UTC"
    (hit,) = store.search("hi there", kind="event", limit=1)  # a store hit says it too
    assert hit.label == "user (alice) · 2026-11-20 10:00 UTC"
    (hit,) = store.search("good morning", kind="event", limit=1)
    assert hit.label == "assistant (alice's chat) · 2026-11-20 10:00 UTC"


class ChangingWhileEmbedding(HashEmbedder):
    """Embeds as hash:64; when it first embeds "from A", another writer (a second
    memory on the same file) runs ``meanwhile``: between the session's read and write."""

    def __init__(self, location: str, meanwhile: Any) -> None:
        super().__init__(64)
        self.location = location
        self.meanwhile = meanwhile

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.meanwhile is not None and any("from A" in t for t in texts):
            meanwhile, self.meanwhile = self.meanwhile, None
            with Store(self.location, embedder=HashEmbedder(64)) as store:
                meanwhile(EventLog(store))
        return super().embed_documents(texts)


def _said(n: int) -> list[dict[str, str]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"say {i}"} for i in range(n)
    ]


def test_a_turn_removed_and_one_added_meanwhile_make_the_writer_align_again(
    location: str,
) -> None:
    # the write checked only the number of turns: one deleted and one logged meanwhile
    # left it equal, and the writer took the position the other had (a UNIQUE error)
    with Store(location, embedder=HashEmbedder(64)) as store:
        EventLog(store).log_conversation(_said(5), session="s")

    def meanwhile(other: EventLog) -> None:
        other.delete(other.turns("s")[-1].id)
        other.log_conversation([{"role": "user", "content": "from B"}], session="s")

    with Store(location, embedder=ChangingWhileEmbedding(location, meanwhile)) as store:
        log = EventLog(store)
        said = [*_said(5), {"role": "user", "content": "from A"}]
        # aligned again, the transcript disagrees with what the session now holds
        with pytest.raises(InvalidInputError, match="message 5 differs from turn 5"):
            log.log_conversation(said, session="s")
        assert [t.content for t in log.turns("s")] == [*(f"say {i}" for i in range(4)), "from B"]


def test_turns_pruned_meanwhile_are_not_written_back(location: str) -> None:
    # another writer logged the transcript and it was pruned before this write: the
    # session held no turns either way, and the pruned turns were written back
    old = datetime(2026, 1, 1, tzinfo=UTC)

    def meanwhile(other: EventLog) -> None:
        other.log_conversation(_said(4), session="s", at=old)
        other.prune(older_than=datetime(2026, 6, 1, tzinfo=UTC))

    with Store(location, embedder=ChangingWhileEmbedding(location, meanwhile)) as store:
        log = EventLog(store)
        logged = log.log_conversation(
            [*_said(4), {"role": "user", "content": "from A"}], session="s"
        )
        assert [(t.position, t.content) for t in logged.added] == [(4, "from A")]
        assert [t.content for t in log.turns("s")] == ["from A"]


def test_events_deleted_by_another_process_once_logged_are_returned_not_a_key_error(
    tmp_path: Path,
) -> None:
    """The logged events were read back after the commit, and a forget in another
    process in between made log_conversation and log_many raise a bare KeyError.
    SQLite calls a connection's WAL hook after each commit, its write lock released:
    there the other process deletes what was just logged."""
    path = tmp_path / "race.db"
    with (
        remembrances.open(path, embedder=HashEmbedder(64)) as svc,
        remembrances.open(path, embedder=HashEmbedder(64)) as other,
    ):
        svc.events.log("warm up", user="bob")  # the tables exist, for both connections
        forgotten: list[int] = []

        def after_commit(_conn: object, _db: str, _pages: int) -> int:
            forgotten.append(other.events.forget_user("ana"))
            return 0  # SQLITE_OK

        svc.store.db.conn.set_wal_hook(after_commit)
        logged = svc.events.log_conversation(
            [{"role": "user", "content": "my locker code is 4417"}], session="s", user="ana"
        )
        assert [e.content for e in logged.added] == ["my locker code is 4417"]
        many = svc.events.log_many([{"content": "ana moved to Oslo", "user": "ana"}])
        assert [e.content for e in many] == ["ana moved to Oslo"]
        svc.store.db.conn.set_wal_hook(None)
        assert 1 in forgotten and svc.events.count(user="ana") == 0  # the race did happen
