"""EventLog on a real file: logging, duplicates, time windows across zones, search, retention."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from remembrances import InvalidInputError, NotFoundError, ReadOnlyError, RemembrancesService, Store
from remembrances.embeddings import HashEmbedder
from remembrances.events import EventLog, event_log
from tests.conftest import FlakyEmbedder

PLUS_10 = timezone(timedelta(hours=10))
MINUS_7 = timezone(timedelta(hours=-7))
LA = ZoneInfo("America/Los_Angeles")
SYDNEY = ZoneInfo("Australia/Sydney")


@pytest.fixture
def events(store: Store) -> EventLog:
    return EventLog(store)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def test_log_stores_utc_times_and_the_recording_time(events: EventLog) -> None:
    before = datetime.now(UTC)
    event = events.log(
        "deployed v2", subject="deploys", at="2026-11-20T10:00:00+01:00", metadata={"v": 2}
    )
    assert event.occurred_at == utc(2026, 11, 20, 9, 0) and event.occurred_at.tzinfo is UTC
    assert before <= event.recorded_at <= datetime.now(UTC)
    assert (event.subject, event.content, event.metadata) == ("deploys", "deployed v2", {"v": 2})
    assert events.get(event.id) == event
    data = event.to_dict()
    assert data["occurred_at"] == "2026-11-20T09:00:00+00:00" and data["kind"] == "event"


def test_default_time_is_now(events: EventLog) -> None:
    before = datetime.now(UTC)
    event = events.log("something happened")
    assert before <= event.occurred_at <= datetime.now(UTC)
    assert event.occurred_at == event.recorded_at


def test_the_same_event_in_any_zone_is_stored_once(
    events: EventLog, store: Store, embedder: HashEmbedder
) -> None:
    first = events.log("disk full on db1", subject="ops", at=utc(2026, 11, 20, 9, 0))
    calls = embedder.calls
    again = events.log("disk full on db1", subject="ops", at="2026-11-20T19:00:00+10:00")
    also = events.log(
        "disk full on db1", subject="ops", at=datetime(2026, 11, 20, 2, tzinfo=MINUS_7)
    )
    assert first.id == again.id == also.id
    assert events.count() == 1 and store.count(kind="event") == 1
    assert embedder.calls == calls
    # A different subject, content or time is another event.
    events.log("disk full on db1", subject="other", at=utc(2026, 11, 20, 9, 0))
    events.log("disk full on db2", subject="ops", at=utc(2026, 11, 20, 9, 0))
    events.log("disk full on db1", subject="ops", at=utc(2026, 11, 20, 9, 0, 1))
    assert events.count() == 4


def test_two_connections_to_one_file_store_an_event_once(db_path: Path) -> None:
    at = "2026-06-01T12:00:00+02:00"
    with (
        Store(db_path, embedder=HashEmbedder(64)) as one,
        Store(db_path, embedder=HashEmbedder(64)) as two,
    ):
        first = EventLog(one).log("backup finished", subject="ops", at=at)
        second = EventLog(two).log("backup finished", subject="ops", at=at)
        assert first.id == second.id
        assert EventLog(one).count() == 1 and two.count(kind="event") == 1


def test_log_many_writes_all_or_nothing_and_dedups(events: EventLog) -> None:
    at = utc(2026, 1, 1)
    logged = events.log_many(
        [
            "plain string event",
            {"content": "with subject", "subject": "s", "at": at},
            {"content": "with subject", "subject": "s", "at": at},  # duplicate in the batch
        ]
    )
    assert len(logged) == 3 and logged[1].id == logged[2].id
    assert events.count() == 2
    with pytest.raises(InvalidInputError, match="event 1 content is empty"):
        events.log_many(["fine", {"content": " "}])
    with pytest.raises(InvalidInputError, match="unknown fields"):
        events.log_many([{"content": "x", "when": "now"}])
    with pytest.raises(InvalidInputError, match="list"):
        events.log_many("not a list")  # type: ignore[arg-type]
    assert events.count() == 2
    assert events.log_many([]) == []


def test_a_failed_embedding_writes_no_event(db_path: Path) -> None:
    with Store(db_path, embedder=FlakyEmbedder(64)) as store:
        log = EventLog(store)
        with pytest.raises(RuntimeError):
            log.log_many(["ok event", "this will FAIL"])
        assert log.count() == 0 and store.count(kind="event") == 0


def test_listing_is_newest_first_with_subject_and_window(events: EventLog) -> None:
    for day in range(1, 6):
        events.log(f"day {day}", subject="odd" if day % 2 else "even", at=utc(2026, 5, day, 12))
    assert [e.content for e in events.search()] == ["day 5", "day 4", "day 3", "day 2", "day 1"]
    assert [e.content for e in events.list(subject="odd", limit=2)] == ["day 5", "day 3"]
    assert [e.content for e in events.list(subject=["odd", "even"], limit=2)] == ["day 5", "day 4"]
    window = {"since": "2026-05-02T12:00:00Z", "until": "2026-05-04T12:00:00Z"}
    assert [e.content for e in events.list(**window)] == ["day 4", "day 3", "day 2"]
    assert events.count(**window) == 3 and events.count(subject="even") == 2
    assert [e.content for e in events.list(offset=3)] == ["day 2", "day 1"]
    assert events.search("   ") == events.search(None)


def test_one_date_as_since_and_until_selects_that_day(events: EventLog) -> None:
    # naive times are local, as a date is
    for content, at in (
        ("the 24th, late", datetime(2026, 11, 24, 23, 59)),
        ("the 25th, early", datetime(2026, 11, 25, 0, 0)),
        ("the 25th, late", datetime(2026, 11, 25, 23, 59, 59)),
        ("the 26th", datetime(2026, 11, 26, 0, 0)),
    ):
        events.log(content, at=at)
    day = {"since": "2026-11-25", "until": "2026-11-25"}
    assert [e.content for e in events.list(**day)] == ["the 25th, late", "the 25th, early"]
    assert events.count(until="2026-11-25") == 3
    assert {e.content for e in events.search("the 25th", **day)} == {
        "the 25th, late",
        "the 25th, early",
    }


def test_last_is_relative_to_now(events: EventLog) -> None:
    now = datetime.now(UTC)
    for hours in (1, 20, 30, 24 * 8):
        events.log(f"{hours} hours ago", at=now - timedelta(hours=hours))
    assert [e.content for e in events.list(last="12h")] == ["1 hours ago"]
    assert [e.content for e in events.list(last="1d")] == ["1 hours ago", "20 hours ago"]
    assert events.count(last=timedelta(weeks=1)) == 3
    assert events.count(last="4w") == 4
    assert [e.content for e in events.search("hours", last="1d", mode="text")] == [
        "1 hours ago",
        "20 hours ago",
    ]


def _hourly_across_dst(events: EventLog) -> None:
    """Events every hour around both 2026 DST changes (Los Angeles in March, Sydney in April)."""
    for start in (utc(2026, 3, 8, 6), utc(2026, 4, 4, 12)):
        for hour in range(12):
            at = start + timedelta(hours=hour)
            events.log(f"heartbeat at {at.isoformat()}", subject="hb", at=at)


@pytest.mark.parametrize("query", [None, "heartbeat"])
def test_a_window_in_any_zone_selects_the_same_events(events: EventLog, query: str | None) -> None:
    _hourly_across_dst(events)
    since_utc, until_utc = utc(2026, 3, 8, 8), utc(2026, 3, 8, 13)  # spans 2am PST -> 3am PDT
    expected = None
    for zone in (UTC, PLUS_10, MINUS_7, LA, SYDNEY):
        for as_text in (False, True):
            since, until = since_utc.astimezone(zone), until_utc.astimezone(zone)
            found = events.search(
                query,
                since=since.isoformat() if as_text else since,
                until=until.isoformat() if as_text else until,
                limit=50,
            )
            ids = sorted(e.id for e in found)
            assert len(ids) == 6, (zone, as_text)  # 08:00 .. 13:00 inclusive
            expected = expected or ids
            assert ids == expected
    # The Sydney change (03:00 AEDT -> 02:00 AEST on 2026-04-05) repeats a local hour.
    since = datetime(2026, 4, 5, 1, 30, tzinfo=SYDNEY)  # 2026-04-04 14:30 UTC
    until = datetime(2026, 4, 5, 3, 30, tzinfo=SYDNEY)  # 2026-04-04 17:30 UTC (AEST)
    found = events.list(since=since, until=until)
    assert [e.occurred_at.hour for e in found] == [17, 16, 15]
    assert events.count(since=since.astimezone(MINUS_7), until=until.astimezone(PLUS_10)) == 3


def test_time_and_subject_filters_apply_inside_the_search(events: EventLog) -> None:
    now = datetime.now(UTC)
    for i in range(60):  # strong matches outside the window or of another subject
        events.log(f"deploy failed badly {i}", subject="prod", at=now - timedelta(days=30, hours=i))
        events.log(f"deploy failed badly x{i}", subject="other", at=now - timedelta(hours=i % 5))
    for i in range(4):
        events.log(f"a deploy note {i}", subject="prod", at=now - timedelta(hours=i + 1))
    found = events.search("deploy failed badly", subject="prod", last="7d", limit=10)
    assert sorted(e.content for e in found) == [f"a deploy note {i}" for i in range(4)]
    assert all(e.score is not None and 0 < e.score <= 1 for e in found)


def test_events_with_no_evidence_for_the_query_are_left_out(location: str) -> None:
    # 2,000 hash buckets: the words below share none, so cosines are 0 and no word matches.
    with Store(location, embedder=HashEmbedder(2000)) as store:
        log = EventLog(store)
        log.log("rolled back the deploy")
        log.log("lunch with the team")
        assert log.search("zebrafish quokka") == []
        # a fused score is never 0 (its bias): asking with a floor still returns them
        assert len(log.search("zebrafish quokka", min_score=0.0)) == 2
        assert [e.content for e in log.search("deploy")] == ["rolled back the deploy"]


def test_recency_weighting_prefers_recent_events(events: EventLog) -> None:
    now = datetime.now(UTC)
    old = events.log("database migration finished", at=now - timedelta(days=30))
    new = events.log("database migration finished", at=now - timedelta(hours=1))
    plain = events.search("database migration", limit=2, mode="text")
    assert {e.id for e in plain} == {old.id, new.id}
    assert plain[0].score == plain[1].score  # same text: relevance cannot tell them apart
    weighted = events.search("database migration", limit=2, mode="text", recency="1d")
    assert [e.id for e in weighted] == [new.id, old.id]
    assert weighted[1].score is not None and weighted[1].score < 1e-6
    # A much more relevant but old event loses to a fresh, weaker match only under recency.
    events.log("quarterly report", at=now - timedelta(days=10))
    events.log("quarterly report draft notes about other things", at=now)
    assert events.search("quarterly report", mode="text", limit=1)[0].content == "quarterly report"
    top = events.search("quarterly report", mode="text", limit=1, recency="12h")[0]
    assert top.content.startswith("quarterly report draft")


def test_an_event_dated_in_the_future_is_not_recent(events: EventLog) -> None:
    # a clock or a time zone gone wrong dates an event next month: it is neither in the
    # last week nor fresher than yesterday's; a minute ahead (another clock) still is
    now = datetime.now(UTC)
    ahead = events.log("deploy to staging failed", at=now + timedelta(days=30))
    skewed = events.log("deploy to staging failed again", at=now + timedelta(minutes=1))
    past = events.log("deploy to staging failed", at=now - timedelta(days=1))
    week = events.search("deploy staging failed", mode="text", last="7d")
    assert {e.id for e in week} == {skewed.id, past.id}
    assert {e.id for e in events.list(last="7d")} == {skewed.id, past.id}
    assert ahead.id in {e.id for e in events.search("deploy staging failed", mode="text")}
    weighted = events.search("deploy staging failed", mode="text", recency="1d", limit=3)
    assert weighted[-1].id == ahead.id


def test_delete_prune_and_subjects(events: EventLog, store: Store) -> None:
    now = datetime.now(UTC)
    for days, subject in ((100, "a"), (50, "a"), (10, "b"), (1, "b"), (0, "c")):
        events.log(f"{days} days ago", subject=subject, at=now - timedelta(days=days))
    assert events.subjects() == {"a": 2, "b": 2, "c": 1}
    assert events.prune(older_than="90d") == 1
    assert events.prune(older_than=timedelta(days=30), subject="b") == 0
    assert events.prune(older_than=(now - timedelta(days=30)).isoformat()) == 1
    assert events.prune(older_than=now - timedelta(days=5)) == 1
    assert events.count() == 2 and store.count(kind="event") == 2
    newest = events.list()[0]
    assert events.delete(newest.id) is True
    assert events.delete(newest.id) is False
    with pytest.raises(NotFoundError):
        events.get(newest.id)
    assert events.subjects() == {"b": 1}
    assert "0 days ago" not in [e.content for e in events.search("0 days ago", mode="text")]
    with pytest.raises(InvalidInputError, match="older_than"):
        events.prune(older_than="whenever")
    with pytest.raises(InvalidInputError, match="older_than"):
        events.prune(older_than=None)


@pytest.mark.parametrize(
    "query",
    [
        "what broke? AND (why) NOT 'the' \"",
        "NEAR(deploy db, 2) OR col:* ^x -y +z",
        "''''",
        "?",
        "deploy*",
    ],
)
def test_prompts_full_of_fts_operators(events: EventLog, query: str) -> None:
    events.log("the deploy broke because NEAR was not quoted (why?)", subject="ops")
    assert isinstance(events.search(query, last="1d"), list)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"content": ""}, "empty"),
        ({"content": " \n "}, "empty"),
        ({"content": None}, "string"),
        ({"content": "bad \udc80 bytes"}, "Unicode"),
        ({"content": "x" * 1_000_001}, "limit"),
        ({"subject": 5}, "subject"),
        ({"subject": "\ud800"}, "Unicode"),
        ({"at": "yesterday"}, "ISO 8601"),
        ({"at": math.nan}, "finite"),
        ({"at": "9999-12-31T23:59:59-12:00"}, "UTC|range"),
        ({"metadata": {"x": math.inf}}, "JSON"),
        ({"metadata": "tags"}, "mapping"),
    ],
)
def test_hostile_input_to_log_is_refused(
    events: EventLog, kwargs: dict[str, object], match: str
) -> None:
    args: dict[str, object] = {"content": "fine"}
    args.update(kwargs)
    content = args.pop("content")
    with pytest.raises(InvalidInputError, match=match):
        events.log(content, **args)  # type: ignore[arg-type]
    assert events.count() == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"last": "7 parsecs"}, "unit"),
        ({"last": "-3d"}, "last"),
        ({"since": "2026-02-01", "until": "2026-01-01"}, "after until"),
        ({"limit": 0}, "limit"),
        ({"limit": True}, "limit"),
        ({"recency": "soon"}, "recency"),
        ({"query": 42}, "query"),
        ({"query": "x" * 200_000}, "limit"),
        ({"subject": 3}, "subject"),
        ({"subject": []}, "subject"),
        ({"min_score": math.nan}, "min_score"),
    ],
)
def test_hostile_search_arguments(events: EventLog, kwargs: dict[str, object], match: str) -> None:
    events.log("something")
    kwargs = dict(kwargs)  # the parameter is shared by every backend's run
    query = kwargs.pop("query", "something")
    with pytest.raises(InvalidInputError, match=match):
        events.search(query, **kwargs)  # type: ignore[arg-type]


def test_the_service_builds_the_event_log(store: Store) -> None:
    service = RemembrancesService(store)
    service.events.log("hello from the service", subject="svc")
    assert service.events.search("hello")[0].subject == "svc"


def test_a_read_only_file_without_events_reads_as_empty(db_path: Path) -> None:
    Store(db_path, embedder=HashEmbedder(64)).close()
    with Store(db_path, embedder=HashEmbedder(64), read_only=True) as store:
        log = EventLog(store)
        assert (log.count(), log.list(), log.subjects(), log.search()) == (0, [], {}, [])
        assert log.search("anything", last="1d") == []
        with pytest.raises(NotFoundError):
            log.get(1)
        with pytest.raises(ReadOnlyError, match="read-only"):
            log.log("x")
        with pytest.raises(ReadOnlyError):
            log.prune(older_than="1d")
        with pytest.raises(ReadOnlyError):
            log.delete(1)


def test_a_subject_is_searched_as_words(events: EventLog) -> None:
    events.log("API latency spiked after the cache node restarted", subject="incident")
    events.log("We chose PostgreSQL for the orders service", subject="decision")
    events.log("Lunch is at noon", subject="")
    found = events.search("incidents", mode="text")
    assert [e.subject for e in found] == ["incident"]
    assert events.search("decision", mode="text")[0].content.startswith("We chose")


def _as_before_subject_words(store: Store, event_id: int) -> None:
    """Put an event's chunk back in the form it had before subjects were words: the
    content as text, the subject only in what was embedded (the vector is the same)."""
    with store.transaction() as tx:
        row = tx.execute(
            "SELECT e.subject, e.content FROM events e WHERE e.id = ?", (event_id,)
        ).fetchone()
        old = (row["content"], f"{row['subject']}\n\n{row['content']}", str(event_id))
        if store.engine.dialect == "postgresql":
            tx.execute(
                "UPDATE chunks SET text = ?, tsv = to_tsvector('remembrances_text', ?), "
                "embed_text = ? WHERE kind = 'event' AND source = ?",
                (old[0], old[0], old[1], old[2]),
            )
        else:
            tx.execute(
                "UPDATE chunks SET text = ?, embed_text = ? WHERE kind = 'event' AND source = ?",
                old,
            )
        tx.execute("DELETE FROM meta WHERE key = 'events:subject_words'")


def test_events_logged_before_subjects_were_words_are_re_chunked_once(
    location: str, embedder: HashEmbedder
) -> None:
    with Store(location, embedder=embedder) as store:
        log = EventLog(store)
        old = log.log("API latency spiked after the cache node restarted", subject="incident")
        turn = log.log_conversation([{"role": "user", "content": "hello"}], session="s")
        _as_before_subject_words(store, old.id)
        assert log.search("incidents", mode="text") == []
    with Store(location) as store:  # without an embedder it cannot: it tries again later
        assert EventLog(store).search("incidents", mode="text") == []
        assert store.meta("events:subject_words") is None
    with Store(location, embedder=embedder) as store:
        log = EventLog(store)  # the first writable open re-chunks it
        assert [e.id for e in log.search("incidents", mode="text")] == [old.id]
        assert store.meta("events:subject_words") == "1"
        assert log.turns("s")[0].id == turn.added[0].id  # turns are left as they were
        with store.snapshot() as tx:
            kept = tx.execute(
                "SELECT count(*) FROM chunks WHERE kind = 'event' AND embedding IS NOT NULL"
            ).scalar()
        assert kept == 2  # both still have their vectors


class DeletingWhileEmbedding(HashEmbedder):
    """Embeds as hash:64; during its first call another writer deletes ``victim``."""

    def __init__(self, location: str, victim: int) -> None:
        super().__init__(64)
        self.location = location
        self.victim: int | None = victim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.victim is not None:
            victim, self.victim = self.victim, None
            with Store(self.location, embedder=HashEmbedder(64)) as other:
                assert EventLog(other).delete(victim)
        return super().embed_documents(texts)


def test_an_event_deleted_while_subjects_are_re_chunked_stays_deleted(location: str) -> None:
    """Re-chunking reads the events, embeds, then writes: an event another process
    deleted in between gets no chunk back (search would find it, with no event)."""
    with Store(location, embedder=HashEmbedder(64)) as store:
        log = EventLog(store)
        gone, kept = (log.log(f"the database went down {i}", subject="incident") for i in "ab")
        for event in (gone, kept):
            _as_before_subject_words(store, event.id)
        with store.transaction() as tx:
            tx.execute("DELETE FROM embedding_cache")  # so that re-chunking embeds
    with Store(location, embedder=DeletingWhileEmbedding(location, gone.id)) as store:
        log = EventLog(store)
        assert [e.id for e in log.search("incidents", mode="text")] == [kept.id]
        assert [r.source for r in store.search("database went down", kind="event")] == [
            str(kept.id)
        ]


def test_two_users_logging_one_fact_at_one_time_each_have_it(
    events: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a second user's call returned the first user's event: theirs was never stored
    at = utc(2026, 11, 20, 9)
    ana = events.log("standup moved to 9:30", subject="team", at=at, user="ana")
    bob = events.log("standup moved to 9:30", subject="team", at=at, user="bob")
    assert (ana.user, bob.user) == ("ana", "bob") and ana.id != bob.id
    assert events.log("standup moved to 9:30", subject="team", at=at, user="bob").id == bob.id
    assert [e.id for e in events.search("standup", user="bob")] == [bob.id]
    # an event logged before keys named the user is found again, and only by its user
    unnamed = event_log.dedup_key  # as versions before 2026-11-26 made keys: no user

    with monkeypatch.context() as before:
        before.setattr(event_log, "dedup_key", lambda s, c, t, u=None: unnamed(s, c, t))
        old = events.log("rotated the keys", subject="ops", at=at, user="ana")
    assert events.log("rotated the keys", subject="ops", at=at, user="ana").id == old.id
    assert events.log("rotated the keys", subject="ops", at=at, user="carol").id != old.id
    assert events.count(subject="ops") == 2
