"""Cutting text at sentence and line boundaries, and fitting items into budgets."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remembrances.code.records import CodeHit
from remembrances.enrichment.budget import ELLIPSIS, Limits, cut_text, fit
from remembrances.enrichment.render import HEADER, render_block
from remembrances.enrichment.sources import ContextItem, code_item, event_item, kb_item
from remembrances.events.records import Event
from remembrances.kb.records import KBHit

PROSE = (
    "Retries use exponential backoff. Each attempt doubles the delay! Is jitter added? "
    "Yes, full jitter.\nThe Retry-After header always wins."
)


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (1000, PROSE),
        (40, "Retries use exponential backoff." + ELLIPSIS),
        (70, "Retries use exponential backoff. Each attempt doubles the delay!" + ELLIPSIS),
        (len(PROSE) - 1, PROSE.rsplit("\n", 1)[0] + ELLIPSIS),
    ],
)
def test_prose_is_cut_after_a_sentence_or_a_line(limit: int, expected: str) -> None:
    assert cut_text(PROSE, limit) == expected
    assert len(cut_text(PROSE, limit)) <= limit


def test_a_first_sentence_too_long_falls_back_to_a_word_boundary() -> None:
    text = "word " * 50
    cut = cut_text(text, 33)
    assert cut.endswith(ELLIPSIS) and len(cut) <= 33
    assert cut[: -len(ELLIPSIS)].split() == ["word"] * 6


def test_code_is_cut_at_line_ends_only() -> None:
    code = "def f(x):\n    y = x + 1. Not a sentence end\n    return y\n"
    assert cut_text(code, 40, code=True) == "def f(x):" + ELLIPSIS
    assert cut_text("x = 1" * 40, 30, code=True) == ""  # one long line: nothing sensible


def item(source: str, text: str, n: int = 0) -> ContextItem:
    return ContextItem(source, f"{source}-origin-{n}", text, 0.9, f"{source}:{n}")


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(st.text(min_size=1, max_size=600), min_size=1, max_size=8),
    total=st.integers(min_value=20, max_value=3000),
    section=st.one_of(st.none(), st.integers(min_value=10, max_value=1500)),
    per_item=st.one_of(st.none(), st.integers(min_value=5, max_value=800)),
)
def test_fitted_blocks_never_exceed_any_budget(
    texts: list[str], total: int, section: int | None, per_item: int | None
) -> None:
    ranked = {
        source: [item(source, t, n) for n, t in enumerate(texts)] for source in ("kb", "code")
    }
    order = ("kb", "events", "code")
    limits = Limits(
        total_chars=total, section_chars={s: section for s in order}, item_chars=per_item
    )
    chosen = fit(ranked, order, limits, header=HEADER)
    block = render_block(chosen, order, header=HEADER)
    assert len(block) <= total
    if section is not None:
        for source in order:
            if chosen[source]:
                assert len(render_block(chosen, [source], header="")) <= section


def test_sources_take_turns_so_one_cannot_crowd_out_another() -> None:
    ranked = {
        "kb": [item("kb", "A long KB passage. " * 20, n) for n in range(5)],
        "code": [item("code", "x = 1\n", 0)],
    }
    limits = Limits(total_chars=600, section_chars={}, item_chars=None)
    chosen = fit(ranked, ("kb", "code"), limits, header=HEADER)
    assert chosen["code"] and chosen["kb"]


def test_each_layers_hit_becomes_an_item_with_its_own_label() -> None:
    kb = kb_item(
        KBHit(
            source="guide.md",
            collection="default",
            title="Guide",
            heading_path="Guide > Setup > Linux",
            text="# Guide\n## Setup\n\nInstall it.\n## Later heading",
            score=0.8,
            metadata={},
            position=0,
            chunk_id=7,
        )
    )
    assert kb.origin == kb.label == "Guide › Setup › Linux (guide.md)" and kb.score == 0.8
    assert kb.text == "Install it.\n## Later heading"  # leading headings are in the origin
    title = "Showing Progress Bars\n---------------------\n\n"
    body = "Sometimes, you have\nlong loops."
    rst = kb_item(
        KBHit(
            "utils.rst",
            "default",
            "Utilities",
            "Utilities > Showing Progress Bars",
            title + body,
            0.5,
            {},
            3,
            8,
            best_span=(len(title), len(title) + len(body)),
        )
    )
    assert rst.text == body  # a reStructuredText title too
    assert rst.focus == (0, len(body))  # the best chunk's span follows the text
    table = "Name   Value\n=====  =====\nfoo    1"
    assert kb_item(KBHit("t.rst", "default", None, "", table, 0.5, {}, 0, 9)).text == table
    at = datetime(2026, 11, 20, 14, 5, tzinfo=UTC)
    event = event_item(Event(3, "deploy", "v2", at, at, {}))
    assert event.origin == "deploy · 2026-11-20 14:05 UTC" and event.score is None
    assert (event.source, event.source_kind, event.key) == ("events", "event", "events:3")
    untitled = event_item(Event(4, "", "y", at, at, {}, score=0.5))
    assert untitled.origin == "(no subject) · 2026-11-20 14:05 UTC" and untitled.score == 0.5
    code = code_item(
        CodeHit(
            score=float("nan"),
            project="app",
            path="a/b.py",
            language="Python",
            kind="method",
            name="m",
            qualified_name="C.m",
            signature="def m(self)",
            docstring="",
            start_line=3,
            end_line=9,
            code="def m(self): ...",
            parent="C",
            symbol_id=1,
        )
    )
    assert code.origin == "[app] a/b.py:3-9 C.m (method)" and code.score is None
    assert code.language == "python" and code.source_kind == "code"
    assert code.to_dict()["label"] == code.origin


def test_a_focus_cut_starts_at_the_sentence_of_the_best_part() -> None:
    filler = "Filler sentence about nothing in particular. " * 40
    needle = "The cache warm-up crashed the API pods during the deploy."
    text = filler + needle
    start = text.index("crashed")  # the best part starts mid-sentence
    item = ContextItem("kb", "doc", text, 0.5, "kb:doc:1", focus=(start, len(text)))
    limits = Limits(total_chars=None, section_chars={"kb": None}, item_chars=200)
    ((_, shown),) = fit({"kb": [item]}, ["kb"], limits, header="")["kb"]
    assert shown == "… " + needle


def test_a_focus_cut_is_made_when_the_plain_cut_would_stop_short_of_the_best_part() -> None:
    # The best part ends just inside item_chars, but a plain cut stops at the last
    # sentence end before item_chars less the ellipsis: it would lose it.
    filler = "Filler sentence about nothing in particular. " * 30
    needle = "The cache warm-up crashed the API pods"
    text = filler + needle + " and the rest of this sentence goes on for a while."
    end = len(filler) + len(needle)
    item = ContextItem("kb", "doc", text, 0.5, "kb:doc:1", focus=(len(filler), end))
    limits = Limits(total_chars=None, section_chars={"kb": None}, item_chars=end + 1)
    ((_, shown),) = fit({"kb": [item]}, ["kb"], limits, header="")["kb"]
    assert needle in shown


def test_a_line_before_a_code_fence_is_not_taken_for_a_title() -> None:
    text = "result = connect(timeout=30)\n```\n\nThe timeout is in seconds."
    item = kb_item(KBHit("a.md", "default", None, "", text, 0.5, {}, 1, 2))
    assert item.text == text


def test_the_first_round_share_keeps_the_part_that_matched() -> None:
    filler = "".join(f"Filler sentence {i} is about other settings. " for i in range(60))
    best = "The send_file helper streams a file to the client. "
    text = filler + best + "".join(f"Tail sentence {i}. " for i in range(10))
    item = ContextItem(
        "kb", "Docs > API", text, 0.9, "kb:a:1", focus=(len(filler), len(filler) + len(best))
    )
    other = ContextItem("events", "user · 2026-11-26", "we use send_file for downloads", 0.8, "e:1")
    limits = Limits(total_chars=1000, section_chars={}, item_chars=1500)
    chosen = fit({"kb": [item], "events": [other]}, ["kb", "events"], limits, header="## M")
    (kept,) = [t for _, t in chosen["kb"]]
    assert kept.startswith("… The send_file helper streams a file")  # not an empty "…"
    assert [t for _, t in chosen["events"]] == ["we use send_file for downloads"]
