"""A user's time zone decides which day "yesterday" is: per call, on every surface."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

import pytest

import remembrances
from remembrances import InvalidInputError, RemembrancesService
from remembrances.enrichment import EnrichmentPlan, HeuristicPlanner, LLMPlanner, OpenAIChat

# Saturday 21 November 2026, 15:30 UTC: 00:30 on Sunday the 22nd in Tokyo.
NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)
# Yesterday in Tokyo (the 21st there) but today in UTC.
TOKYO_YESTERDAY = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
# Yesterday in UTC (the 20th) but the day before yesterday in Tokyo (18:00 on the 20th).
UTC_YESTERDAY = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def memory(tmp_path: Path) -> RemembrancesService:
    svc = remembrances.open(tmp_path / "m.db", embedder="hash:64")
    svc.events.log("Shipped the billing export to the first customer", at=TOKYO_YESTERDAY)
    svc.events.log("Fixed the flaky login test on the CI runners", at=UTC_YESTERDAY)
    svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
    return svc


def test_yesterday_is_the_users_day(memory: RemembrancesService) -> None:
    with memory:
        # The suite runs in UTC: without a zone, the machine's days.
        here = memory.enrich_context("what happened yesterday?")
        assert "flaky login" in here and "billing export" not in here
        tokyo = memory.enrich_context("what happened yesterday?", tz="Asia/Tokyo")
        assert "billing export" in tokyo and "flaky login" not in tokyo
        assert memory.enrich_context("what happened yesterday?", tz="utc") == here
        # Times are told in the user's zone when the call gives one, in UTC otherwise.
        assert "2026-11-21 19:00 JST" in tokyo
        assert "2026-11-20 09:00 UTC" in here


class NoOffset(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


class TooFar(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=30)


@pytest.mark.parametrize(
    "tz",
    [
        *("Mars/Olympus", "", "  ", "../../etc/passwd", "UTC\x00", "\udcff", "x" * 5000, 5),
        *(tzinfo(), NoOffset(), TooFar()),
    ],
)
def test_a_bad_time_zone_is_refused_not_ignored(memory: RemembrancesService, tz: object) -> None:
    with memory, pytest.raises(InvalidInputError, match="time zone"):
        memory.enrich_context("what happened yesterday?", tz=tz)  # type: ignore[arg-type]


class OlderPlanner:  # written to the protocol before plan() took tz
    def plan(self, prompt: str) -> EnrichmentPlan:
        return HeuristicPlanner(now=lambda: NOW).plan(prompt)


class OptionsPlanner:  # takes whatever it is given
    def plan(self, prompt: str, **options: object) -> EnrichmentPlan:
        return HeuristicPlanner(now=lambda: NOW).plan(prompt, **options)  # type: ignore[arg-type]


def test_a_planner_that_takes_no_zone_still_plans_and_refuses_one(
    memory: RemembrancesService,
) -> None:
    with memory:
        memory.enricher.planner = OlderPlanner()
        assert "flaky login" in memory.enrich_context("what happened yesterday?")
        with pytest.raises(InvalidInputError, match=r"OlderPlanner .* takes no time zone"):
            memory.enrich_context("what happened yesterday?", tz="Asia/Tokyo")
        # An LLM planner whose rules to fall back on take no zone is refused one too
        # (the fallback's TypeError became "").
        down = OpenAIChat("down", base_url="http://127.0.0.1:9/v1", api_key="k")
        memory.enricher.planner = LLMPlanner(down, heuristic=OlderPlanner(), timeout=0.5)
        with pytest.raises(InvalidInputError, match="takes no time zone"):
            memory.enrich_context("what happened yesterday?", tz="Asia/Tokyo")
        memory.enricher.planner = OptionsPlanner()
        tokyo = memory.enrich_context("what happened yesterday?", tz="Asia/Tokyo")
        assert "billing export" in tokyo and "flaky login" not in tokyo
