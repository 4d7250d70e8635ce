"""Prompts that paste code or logs beside a question: the question is what gets searched."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from remembrances.enrichment import HeuristicPlanner
from remembrances.enrichment.code_focus import code_names
from remembrances.enrichment.plan import MAX_PARTS, MAX_QUERY_CHARS
from remembrances.enrichment.prompt_parts import (
    LONG_ASK_CHARS,
    PASTED_CHARS,
    PromptParts,
    ask_parts,
    split_prompt,
)
from remembrances.enrichment.sources import ContextItem, best_of, distinct_passages
from remembrances.kb.records import KBHit

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)

#: A user's own script: nothing in it is what the question asks about.
SCRIPT = '''import csv
import sys
from pathlib import Path


class ReportWriter:
    """Writes the weekly sales report."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def write_rows(self, rows: list[dict[str, str]]) -> Path:
        target = self.folder / "report.csv"
        with target.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=sorted(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return target


def summarise_sales(rows: list[dict[str, str]]) -> float:
    return sum(float(row["amount"]) for row in rows)


if __name__ == "__main__":
    ReportWriter(Path(sys.argv[1])).write_rows([{"amount": "3.50"}])
'''

JAVASCRIPT = """const fs = require('fs');
const path = require('path');

function loadSettings(file) {
  const raw = fs.readFileSync(path.resolve(file), 'utf8');
  const settings = JSON.parse(raw);
  settings.port = settings.port || 8080;
  return settings;
}

module.exports = { loadSettings };
// called from server.js on start
"""

QUESTION = "how should we handle HTTP 429 rate limits from the payment API?"


@pytest.fixture
def planner() -> HeuristicPlanner:
    return HeuristicPlanner(now=lambda: NOW)


@pytest.mark.parametrize(
    "prompt",
    [
        f"Here is my code:\n\n{SCRIPT}\n{QUESTION}",
        f"{QUESTION}\n\nHere is what I have so far:\n```python\n{SCRIPT}```\n",
        f"{QUESTION}\n{JAVASCRIPT}",
        f"{JAVASCRIPT}\n\n  - {QUESTION}",
    ],
)
def test_the_question_is_set_apart_from_a_paste(prompt: str) -> None:
    parts = split_prompt(prompt)
    assert parts.ask.removeprefix("- ") == QUESTION  # a list item keeps its bullet
    assert len(parts.pasted) >= PASTED_CHARS
    assert "Here is" not in parts.ask  # the paste's label says nothing of its own


def test_a_label_that_says_something_stays() -> None:
    parts = split_prompt(f"The report job from our billing service:\n{SCRIPT}\nwhy is it slow?")
    assert parts.ask == "The report job from our billing service:\nwhy is it slow?"


@pytest.mark.parametrize(
    "prompt",
    [
        QUESTION,
        "x = fetch(1)\nwhy is x None here when the server answered 200?",  # a line of code
        SCRIPT,  # all paste: the paste is the question
        f"{SCRIPT}\nwhy?",  # no words left to search with
        f"fix this\n{SCRIPT}",  # nothing said but the asking: the paste is what to look up
        f"Can you explain this code?\n{SCRIPT}",
        f"Please review:\n\n{SCRIPT}",
        "## Notes\n"
        + "".join(
            f"- deploy {i} ran on a Friday, the cache warmed first\n" for i in range(60)
        ),  # long prose
        "",
        "```\n```",
        "```python\nunterminated = True\n" + "y = 2\n" * 200,
    ],
)
def test_prompts_without_a_paste_beside_a_question_are_left_whole(prompt: str) -> None:
    assert split_prompt(prompt) == PromptParts(prompt)


@pytest.mark.parametrize(
    "question",
    [
        "let me know why the payment API keeps returning 429 after we added backoff",
        "self.retries = 3 but the payment client gives up after one 429, why?",
        "<CheckoutButton> re-renders forever after the coupon is applied, why?",
        "import of the payment client fails with a circular import when celery starts",
        "return value of fetch_with_retry is None after the third 429, is that expected?",
        "为什么 Stripe 的退款会被处理两次？",
        "with max_retries=3 the payment client still gives up after one 429",
        "if I call refund() twice the customer is charged back twice",
    ],
)
def test_a_question_that_starts_like_code_is_still_the_question(question: str) -> None:
    parts = split_prompt(f"Our billing service:\n{SCRIPT}\n{question}")
    assert parts.ask == f"Our billing service:\n{question}"


def test_numbered_steps_are_prose() -> None:
    steps = "1. import the refund fixtures\n2. try a partial refund\n3. let the webhook retry"
    parts = split_prompt(f"The webhook handler refunds twice.\n{SCRIPT}\n{steps}")
    assert parts.ask == f"The webhook handler refunds twice.\n{steps}"


#: A script with what reads like prose in it: a module docstring, comments, a loop.
COMMENTED_SCRIPT = '''"""Nightly stock reconciliation for the warehouse scanners.

Reads the scanner exports and compares them with the database.
"""
import csv
import sqlite3

# the scanners write one CSV per warehouse
EXPORTS = ["north.csv", "south.csv"]

def reconcile(db, path):
    # compare each row with what the database holds
    for row in csv.reader(open(path)):
        db.execute("UPDATE items SET quantity = ? WHERE sku = ?", (row[1], row[0]))

-- and the query the report runs
SELECT sku, quantity FROM items WHERE quantity < 5;
for path in EXPORTS:
    reconcile(sqlite3.connect("stock.db"), path)
'''

DIFF = """diff --git a/shop/cache.py b/shop/cache.py
--- a/shop/cache.py
+++ b/shop/cache.py
@@ -10,7 +10,8 @@ class Cache:
     def get(self, key):
-        return self.data[key]
+        # fall back to the database when the entry expired
+        return self.data.get(key) or self.load(key)

     def put(self, key, value):
+        # entries expire after the configured time to live
         self.data[key] = value
"""


@pytest.mark.parametrize(
    "label",
    [
        "for some reason the payment client gives up after one 429 when I run this:",
        "if I run the refund job twice the customer is charged back twice with this code:",
        "with python 3.12 the payment client crashes on startup, here it is:",
        "Why is the context cancelled?",
    ],
)
def test_a_line_that_starts_like_a_loop_or_says_context_is_still_prose(label: str) -> None:
    parts = split_prompt(f"{label}\n{SCRIPT}")
    assert parts.ask == label and parts.pasted.startswith("import csv")


def test_a_comment_that_is_all_the_prose_is_the_question() -> None:
    comment = "# so why does the refund job double count partner orders"
    assert split_prompt(f"{SCRIPT}{comment}\n{SCRIPT}").ask == comment


def test_list_items_after_a_diff_and_headings_between_fences_are_prose() -> None:
    items = "- does this fix the double counted refunds?\n- should the totals be recomputed?"
    assert split_prompt(f"{DIFF}\n{items}").ask == items
    for note in (
        "+ Pros: partner refunds are no longer counted twice by the nightly job",
        "-- I think this fixes the double counted refunds in the nightly job, right",
    ):
        assert split_prompt(f"{DIFF}\n\n{note}").ask == note
    heading = "## The refund job double counts partner orders after the nightly batch"
    fenced = f"```python\n{SCRIPT}```"
    assert split_prompt(f"{fenced}\n{heading}\n{fenced}").ask == heading


#: A CI workflow and a query as users paste them: keys and clauses that read like prose.
WORKFLOW = """name: CI
on:
  push:
    branches: [main]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
      - run: pip install -e .[test]
      - run: pytest -q
"""
QUERY = """select o.id, o.total, c.email
from orders o
join customers c on c.id = o.customer_id
where o.created_at > now() - interval '7 days'
  and o.status = 'paid'
order by o.total desc
limit 50;
"""


@pytest.mark.parametrize(
    "prose",
    [
        "having trouble getting the refunds to show up in this report",
        "where it is run from the nightly job the totals come out doubled",
        "order by total puts 900 above 10000 in postgres, the column looks numeric",
        "join us on slack if easier, the loader drops refunded orders",
        "todo: cache the refund lookups",
        "- expected: one refund per order",
        "order by seems ignored in this one:",
    ],
)
def test_prose_that_starts_like_yaml_or_sql_beside_a_paste_stays_prose(prose: str) -> None:
    parts = split_prompt(f"Our refunds report query:\n{QUERY}{QUERY}\n{prose}")
    assert parts.ask.splitlines()[-1] == prose


def test_a_blank_line_ends_what_goes_on_with_a_paste() -> None:
    workflow = WORKFLOW.rstrip("\n")
    parts = split_prompt(f"Our CI:\n{workflow}\nname: nightly\n\nbuild: faster\n{QUESTION}")
    assert parts.ask == f"Our CI:\nbuild: faster\n{QUESTION}"


@pytest.mark.parametrize("paste", [WORKFLOW, QUERY * 2])
def test_yaml_keys_and_sql_clauses_beside_material_are_material(paste: str) -> None:
    note = "note: this only fails when the refund is retried from the admin page"
    parts = split_prompt(f"{paste}\n{note}\n- step 1: retry the refund\n{QUESTION}")
    assert parts.ask == f"{note}\n- step 1: retry the refund\n{QUESTION}"


@pytest.mark.parametrize("paste", [COMMENTED_SCRIPT, DIFF * 2])
def test_docstrings_comments_and_diffs_are_material(paste: str) -> None:
    parts = split_prompt(f"Our billing service:\n{paste}\n{QUESTION}")
    assert parts.ask == f"Our billing service:\n{QUESTION}"


@pytest.mark.parametrize(
    "prompt",
    [
        # a comment line next to prose is the user's: a Markdown heading
        f"# Rate limits\n{QUESTION}\n{SCRIPT}",
        # an open docstring is a fragment: its prose lines are read one by one
        f'''doc = """Reads the exports.\n{QUESTION}\n{SCRIPT}''',
        # triple quotes inside a line of prose open nothing
        f'''why does a """docstring""" in the paste matter for {QUESTION}\n{SCRIPT}''',
    ],
)
def test_prose_beside_docstring_and_comment_marks_stays_the_question(prompt: str) -> None:
    assert QUESTION in split_prompt(prompt).ask.splitlines()[-1]


def test_logs_are_material() -> None:
    log = "\n".join(
        f"2025-11-{day:02d} 12:00:0{day % 10} ERROR worker-{day} lost its lease on queue orders"
        for day in range(1, 12)
    )
    parts = split_prompt(f"{log}\nwhy do the workers keep losing their leases?")
    assert parts.ask == "why do the workers keep losing their leases?"
    assert parts.pasted == log


def test_kept_spans_belong_to_the_ask() -> None:
    prompt = f"{SCRIPT}\n    return handle(x)\nwhat breaks?"
    start = prompt.index("    return handle")
    parts = split_prompt(prompt, keep=[(start, start + 10)])
    assert parts.ask == "return handle(x)\nwhat breaks?"


@pytest.mark.parametrize(
    "prompt",
    [
        f"{SCRIPT}\n{QUESTION}",
        f"{QUESTION}\n\n{SCRIPT}",
        # far past the query's 1,000 characters and the planner's 20,000
        f"Here is my code:\n{SCRIPT * 40}\n{QUESTION}",
    ],
)
def test_every_source_is_searched_with_the_question(planner: HeuristicPlanner, prompt: str) -> None:
    plan = planner.plan(prompt)
    for query in (plan.kb_query, plan.code_query, plan.events_query):
        assert "429 rate limits" in query
        assert "ReportWriter" not in query and "csv" not in query
    assert plan.notes["pasted_chars"] >= PASTED_CHARS
    # the paste's names do not ask for more code
    assert plan.code_limit == planner.plan(QUESTION).code_limit


def test_a_pasted_logs_dates_do_not_make_a_window(planner: HeuristicPlanner) -> None:
    log = "\n".join(
        f"2026-11-{d:02d} 03:00:00 WARN backup took {d * 7} minutes" for d in (2, 9, 16)
    )
    plan = planner.plan(f"{log}\n{log}\n{log}\nwhy are the nightly backups getting slower?")
    assert plan.events_since is None and plan.events_until is None
    assert plan.events_query == "why are the nightly backups getting slower?"
    # said in the question, a date is still a window
    plan = planner.plan(f"{log}\n{log}\n{log}\nwhat changed in the backups on Nov 9?")
    assert plan.events_since == datetime(2026, 11, 9, tzinfo=UTC)


def test_a_traceback_beside_pasted_code_keeps_its_error(planner: HeuristicPlanner) -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/app/report.py", line 17, in write_rows\n'
        "    writer = csv.DictWriter(handle, fieldnames=sorted(rows[0]))\n"
        "IndexError: list index out of range\n"
    )
    plan = planner.plan(f"{SCRIPT}\n{traceback}\nwhy does this crash on an empty week?")
    for query in (plan.kb_query, plan.code_query):
        assert "IndexError: list index out of range" in query
        assert "/app/report.py" in query  # the condensed trace is the question's
        assert "empty week" in query
        assert "summarise_sales" not in query


@pytest.mark.parametrize(
    ("error", "trace"),
    [
        (
            "Error: connect ECONNREFUSED 127.0.0.1:5432",
            "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
        ),
        ("E       AssertionError: assert 2 == 1", "tests/test_refunds.py:14: AssertionError"),
    ],
)
def test_an_error_message_beside_a_paste_is_part_of_the_question(
    planner: HeuristicPlanner, error: str, trace: str
) -> None:
    plan = planner.plan(f"{SCRIPT}\n{error}\n{trace}\nwhy does the nightly worker stop?")
    message = error.removeprefix("E").strip()
    assert message in plan.kb_query and message in plan.code_query
    assert "nightly worker stop" in plan.kb_query
    assert plan.code_limit > planner.code_limit  # an error asks for more code, as before


def test_a_log_of_errors_does_not_drown_the_question(planner: HeuristicPlanner) -> None:
    for error in ("Error: connect ECONNREFUSED 10.0.0.7:5432", "ERROR: lease lost"):
        plan = planner.plan(f"{error}\n" * 500 + "why does the nightly worker stop?")
        assert plan.kb_query == f"{error} the nightly worker stop?"  # each said once
    distinct = "".join(
        f'  File "w.py", line {i}, in run\nLeaseError: lease {i} lost\n' for i in range(40)
    )
    plan = planner.plan(f"{distinct}why does the nightly worker stop?")
    assert "nightly worker stop" in plan.kb_query
    assert plan.kb_query.count("LeaseError") == 3 and "lease 39 lost" in plan.kb_query


def test_a_fence_left_open_by_a_long_prompts_cut_stays_open(planner: HeuristicPlanner) -> None:
    fenced = "```python\n" + SCRIPT * 25 + "```\n"  # about 21,000 characters
    log = "\n".join(f"2026-11-20 0{i % 10}:00:00 WARN retry {i}" for i in range(300))
    plan = planner.plan(f"Our import fails.\n{fenced}{log}\nwhy does the nightly import stop?")
    assert "nightly import stop" in plan.kb_query and "WARN" not in plan.kb_query


def test_a_fenced_traceback_without_its_error_line_ends_at_the_fence(
    planner: HeuristicPlanner,
) -> None:
    traceback = (
        "```\nTraceback (most recent call last):\n"
        '  File "/app/report.py", line 17, in write_rows\n'
        "    writer = csv.DictWriter(handle)\n```\n"
    )
    plan = planner.plan(f"{traceback}{SCRIPT}\nThe weekly sales report crashes on Mondays.")
    assert "weekly sales report crashes" in plan.kb_query


def test_hostile_pastes_plan_without_error(planner: HeuristicPlanner) -> None:
    for prompt, expected in (
        ("\x00\x01\ufffd" * 5000 + "\nwhy does the import fail?", "the import fail?"),
        ("\udcff bad surrogate\n" + SCRIPT + '\nwhat does \' OR "x" NEAR(a b) do?', "NEAR(a b)"),
        ("```\n" * 3000, ""),
        ("    " + "a = 1;" * 10_000 + "\nwhy so slow?", "a = 1;"),  # all paste but "slow"
        ("\n" * 50_000, ""),
    ):
        plan = planner.plan(prompt)
        assert len(plan.kb_query) <= MAX_QUERY_CHARS and len(plan.code_query) <= MAX_QUERY_CHARS
        assert expected in plan.kb_query and bool(expected) == bool(plan.kb_query)
        assert "ReportWriter" not in plan.kb_query and "\udcff" not in plan.kb_query


def test_names_the_question_writes_come_before_the_pastes() -> None:
    prompt = f"{SCRIPT}\nwhy does `fetch_with_retry` give up before summarise_sales runs?"
    names, _ = code_names(prompt)
    assert names[:2] == ["fetch_with_retry", "summarise_sales"]  # the question's, first
    # only the paste writes these, and it defines them: the user has that code already
    assert not {"write_rows", "ReportWriter"} & set(names)
    assert "csv.DictWriter" in names  # what the paste uses may be in the index


#: A user's background paragraph: nothing in it is what the question asks about.
BACKGROUND = (
    "Some background first. Our team runs a small inventory service for three warehouses. "
    "Orders arrive from the web shop and from a partner feed, and each night a batch job "
    "reconciles the stock counts with what the scanners reported during the day. The "
    "service was written two years ago by a contractor, so the documentation is thin and "
    "a lot of knowledge lives in people's heads. We would like to keep changes small and "
    "easy to review, with tests for anything we touch."
)


#: 156 characters of background: about 450 characters' worth of English.
CHINESE_BACKGROUND = (
    "我们的团队维护一个库存服务，每天晚上批处理任务会对账库存数量。上个季度我们把数据库"
    "迁移到托管实例，并把服务放在负载均衡器后面，出现了一些会话和超时的问题。我们还计划"
    "把报表部分拆分成独立进程，因为每月初的报表会拖慢一切。现在负责的人是两名后端开发者"
    "和一名兼职运维工程师，他们都希望改动尽量小，并且每次改动都有测试。"
)


#: One sentence of background: a question beside it is searched on its own too.
SHORT_BACKGROUND = "Quick context: I joined the team last week and I'm still finding my way around."

#: What a change must keep, said after the question.
CONSTRAINTS = (
    "Keep the change small, with tests for what it touches. It has to keep working on "
    "Python 3.9, because the scanners run an old image we cannot upgrade yet."
)
REQUEST = "Add jittered backoff to the payment API client for HTTP 429 answers."


@pytest.mark.parametrize(
    ("prompt", "part"),
    [
        (f"{BACKGROUND}\n\n{QUESTION}", QUESTION),
        (f"{QUESTION}\n\n{BACKGROUND}", QUESTION),
        (f"{SHORT_BACKGROUND}\n\n{QUESTION}", QUESTION),
        (f"{QUESTION} {SHORT_BACKGROUND}", QUESTION),
        # one paragraph: the question is its sentence that asks
        (f"{BACKGROUND} {QUESTION}", QUESTION),
        # no question mark, one paragraph: the last sentence
        (f"{BACKGROUND} Explain the backoff for HTTP 429 rate limits.", "Explain the backoff"),
        # its last sentences: a question is often two
        (
            f"{BACKGROUND} The payment API keeps answering 429. Should we back off or queue?",
            "The payment API keeps answering 429. Should we back off or queue?",
        ),
        # ".." is no sentence end
        (f"{BACKGROUND} why does a path with .. in it escape?", "why does a path with .. in it"),
        # the question in the middle of three paragraphs
        (
            f"{BACKGROUND}\n\n{QUESTION}\n\nThanks in advance, and sorry for the long mail.",
            QUESTION,
        ),
        # ... or said without a "?": a one-sentence paragraph between others
        (f"{BACKGROUND}\n\n{REQUEST}\n\n{CONSTRAINTS}", REQUEST),
        # ... or a sentence that opens as a request, mid-paragraph
        (
            f"{BACKGROUND} Please explain how the nightly job retries failed scanner "
            f"uploads. {CONSTRAINTS}",
            "Please explain how the nightly job retries failed scanner uploads.",
        ),
        (
            f"{CONSTRAINTS}\n\n{BACKGROUND} I need to add jittered backoff for 429 answers. "
            "The scanners upload every ten minutes.\n\nThe deploy is on Thursday.",
            "I need to add jittered backoff for 429 answers.",
        ),
    ],
)
def test_a_long_asks_question_is_one_of_its_parts(prompt: str, part: str) -> None:
    parts = ask_parts(prompt)
    assert any(part in p for p in parts), parts
    assert 1 <= len(parts) <= MAX_PARTS
    assert all(len(p) < len(prompt) for p in parts)


@pytest.mark.parametrize(
    "prompt",
    [
        QUESTION,  # short: the whole prompt is the question
        BACKGROUND[: LONG_ASK_CHARS - 1],
        # one long question: nothing shorter to search
        "why " + " and ".join(f"does step {n} of the import retry" for n in range(30)) + "?",
        "",
    ],
)
def test_a_short_or_single_ask_has_no_parts(prompt: str) -> None:
    assert ask_parts(prompt) == []


def test_parts_that_say_nothing_are_left_out() -> None:
    # a closing line of thanks and a question that names nothing are no parts, and the
    # background is most of the ask: searching it alone is searching the ask again
    assert ask_parts(f"{BACKGROUND}\n\nThanks!\n\nCan you help?") == []
    for closing in (
        "Thanks a lot, much appreciated!",
        "Thanks in advance, and sorry for the long mail.",
        "Any help with the rate limits is welcome.",
    ):
        assert ask_parts(f"{BACKGROUND}\n\n{QUESTION}\n\n{closing}") == [QUESTION], closing


def test_labels_headings_and_what_must_hold_are_no_asks() -> None:
    # between paragraphs, a label opens a paste and a heading a section: neither asks
    for between in ("Here is what the log says:", "## What we tried", "Some context."):
        parts = ask_parts(f"{BACKGROUND}\n\n{between}\n\n{CONSTRAINTS}")
        assert not any(between in p for p in parts), (between, parts)
    # "we would like to", "we need to" say what must hold as often as what to do
    parts = ask_parts(f"We need to keep the old importer. {BACKGROUND}")
    assert not any("old importer" in p for p in parts), parts


@pytest.mark.parametrize(
    ("prompt", "parts"),
    [
        # an aside before a question is no part: searched alone it found context
        # (a planning meeting, the vacation policy) for a prompt about a novel
        (
            "Sorry, my manager pulled me into a planning meeting all morning.\n\n"
            "Can you recommend a good science fiction novel?",
            ["Can you recommend a good science fiction novel?"],
        ),
        (
            "Hi!\n\nI'm taking two days of leave at the end of the month.\n\n"
            "Can you recommend a good science fiction novel?\n\nBest, Ana",
            ["Can you recommend a good science fiction novel?"],
        ),
        # without a question or a request, a paragraph of one sentence between others,
        # not the aside before it
        (
            "My laptop is brand new and I'm still setting it up.\n\n"
            "Translate 'good morning' into Italian for me.\n\nThanks a lot!",
            ["Translate 'good morning' into Italian for me."],
        ),
        # a request is the part when nothing asks with a "?"
        (
            f"{SHORT_BACKGROUND} Please explain how the nightly job retries uploads.",
            ["Please explain how the nightly job retries uploads."],
        ),
        # a question is searched apart from a request beside it
        (
            "I need to set up my new laptop tonight. Anyway, who won the football world "
            "cup in 1998? We're arguing about it at lunch.",
            ["Anyway, who won the football world cup in 1998?"],
        ),
        # a greeting before a question in its sentence is read past
        (
            f"{SHORT_BACKGROUND}\n\nHi, how do I roll back a database migration?",
            ["Hi, how do I roll back a database migration?"],
        ),
        (
            f"{CHINESE_BACKGROUND}\n\n你好，请问如何在不停机的情况下回滚数据库迁移？",
            ["你好，请问如何在不停机的情况下回滚数据库迁移？"],
        ),
        # greetings and thanks in any script are no parts
        (
            "こんにちは！\n\nよろしくお願いします。\n\n東京で美味しいラーメン屋さんを教えてください。",
            ["東京で美味しいラーメン屋さんを教えてください。"],
        ),
        # a bold heading or a list item between paragraphs is no ask
        (
            f"{BACKGROUND}\n\n**Background on the billing service**\n\n- the scanners\n\n{REQUEST}",
            [REQUEST],
        ),
    ],
)
def test_what_asks_is_the_part_and_asides_are_not(prompt: str, parts: list[str]) -> None:
    assert ask_parts(prompt) == parts


def test_parts_come_from_prose_not_from_a_paste() -> None:
    assert ask_parts(SCRIPT * 2) == []
    assert ask_parts(f"{SCRIPT}\n{QUESTION}") == []  # the prose alone is short
    parts = ask_parts(f"{BACKGROUND}\n{SCRIPT}\n{QUESTION}\nThe deploy is on Friday.")
    assert QUESTION in parts and not any("import" in p for p in parts)


def test_a_question_in_a_script_without_spaces_is_a_part() -> None:
    question = "为什么支付接口在重试之后仍然返回四二九错误？"
    assert question in ask_parts(f"{BACKGROUND}\n\n{question}")


def test_a_chinese_ask_is_long_by_what_it_says() -> None:
    background = CHINESE_BACKGROUND.split("。")[0] + "。"  # one sentence of background
    question = "如何在不停机的情况下回滚数据库迁移？"
    prompt = f"{background}\n\n{question}"
    assert len(prompt) < LONG_ASK_CHARS  # by characters it would be short
    assert ask_parts(prompt) == [question]
    assert ask_parts(f"{CHINESE_BACKGROUND}\n\n{question}") == [question]


def test_a_chinese_question_beside_a_paste_is_the_ask() -> None:
    # its words are parted by full-width punctuation, not by spaces
    question = "这个脚本在库存为零时崩溃，为什么会这样？"
    parts = split_prompt(f"{SCRIPT}\n{question}")
    assert parts.ask == question and "csv.DictWriter" in parts.pasted
    parts = split_prompt(f"{question}\n{SCRIPT}\n{CHINESE_BACKGROUND}")
    assert parts.ask == f"{question}\n{CHINESE_BACKGROUND}"


def test_the_planner_searches_a_long_prompts_question_too(planner: HeuristicPlanner) -> None:
    plan = planner.plan(f"{BACKGROUND}\n\nCan you please tell me {QUESTION}")
    assert "inventory service" in plan.kb_query  # the whole prompt, as before
    for source in ("kb", "code", "events"):
        queries = plan.queries(source)
        assert len(queries) == 1 + len(plan.parts) >= 2
        assert any(q.endswith("429 rate limits from the payment API?") for q in queries[1:])
        assert not any("inventory" in q for q in queries[1:] if "429" in q)
    # request phrases leave the KB's part query as they leave its query
    assert not any("please" in q.lower() for q in plan.queries("kb"))
    assert plan.to_dict()["parts"][0] == {
        "kb_query": plan.parts[0].kb_query,
        "code_query": plan.parts[0].code_query,
        "events_query": plan.parts[0].events_query,
    }
    # short prompts, recaps and pastes beside a short question plan no parts
    assert planner.plan(QUESTION).parts == ()
    assert planner.plan(f"{SCRIPT}\n{QUESTION}").parts == ()
    assert "parts" not in planner.plan(QUESTION).to_dict()


def test_hits_found_by_several_queries_count_once_at_their_best_score() -> None:
    def item(key: str, score: float | None) -> ContextItem:
        return ContextItem("kb", key, f"text of {key}", score, key)

    whole = [item("a", 0.30), item("b", 0.10)]
    part = [item("b", 0.40), item("c", 0.05), item("d", None)]
    merged = best_of([whole, part], 3, key=lambda i: i.key)
    assert [(i.key, i.score) for i in merged] == [("d", None), ("b", 0.40), ("a", 0.30)]
    # an unscored hit (certain) wins whichever search found it first
    scored = [item("d", 0.9)]
    for order in ([scored, part], [part, scored]):
        assert best_of(order, 1, key=lambda i: i.key)[0].score is None
    # one query's hits come back as they came (a layer's own order)
    assert best_of([part], 3, key=lambda i: i.key) == part
    assert best_of([], 3, key=lambda i: i.key) == []


@pytest.mark.parametrize(
    "prompt",
    [
        "why does the import fail? " * 5000,  # every sentence a question
        "a. " * 30000,  # sentences with no words
        "why does the \udcff cache fail?\x00 " * 300 + "\n\n" + "word " * 30000,
        "为什么退款会被处理两次？" * 2000,
    ],
)
def test_hostile_long_asks_plan_few_bounded_parts(planner: HeuristicPlanner, prompt: str) -> None:
    plan = planner.plan(prompt)
    assert len(plan.parts) <= MAX_PARTS
    for part in plan.parts:
        for query in (part.kb_query, part.code_query, part.events_query):
            assert 0 < len(query) <= MAX_QUERY_CHARS
            assert "\x00" not in query and "\udcff" not in query


def test_two_queries_passages_of_one_section_count_once() -> None:
    def hit(source: str, first: int, last: int, score: float) -> KBHit:
        return KBHit(
            source,
            "default",
            None,
            "",
            f"{source} {first}-{last}",
            score,
            {},
            first,
            first * 10 + last,
            last_position=last,
        )

    whole = [hit("guide.md", 3, 5, 0.30), hit("faq.md", 0, 0, 0.20)]
    part = [hit("guide.md", 5, 7, 0.45), hit("guide.md", 8, 9, 0.25), hit("faq.md", 1, 2, 0.10)]
    kept = distinct_passages([whole, part], 4)
    assert [(h.source, h.position, h.score) for h in kept] == [
        ("guide.md", 5, 0.45),  # 3-5 shares chunk 5: the better passage stands for both
        ("guide.md", 8, 0.25),
        ("faq.md", 0, 0.20),
        ("faq.md", 1, 0.10),
    ]
    assert len(distinct_passages([whole, part], 2)) == 2
    # one search's passages never share chunks: they come back as they came
    assert distinct_passages([part], 4) == part
