"""The enricher's KB and code gates on real projects: do answers pass while unrelated prompts stay out?

Question: ``enrich_context`` adds a source's context only when its best hit's score
reaches ``EnricherConfig.min_score[source]``. On the development suite's docs and
code sets (real projects, hand-written questions), how many questions whose answer
``kb.search`` / ``code.search`` ranks in its top 3 have a best hit at or above each
threshold, and how high do unrelated prompts score on the same memories?

Setup: the development suite's cached stores (``benchmarks/devsuite``; built on first
use, which fetches the sdists and embeds). Per set, every question through the
layer's search (top 10, the suite's answer check), and twenty prompts no set
answers. Thresholds are counted on the fit and test halves apart.

Then ``enrich_context`` itself: per set, how many questions get their answer into the
block (a docs answer's anchor phrase in the KB items' text, a code answer's symbol
among the code items), with the defaults against a baseline run in the same
process: the gates before 2026-11-26 (kb and code 0.05) and the code query the
heuristic planner made then (the prompt's identifiers, paths, errors and technical
terms alone, or its keywords when it had none).

Then the code questions asked naming code: the answer's class ("In `Response`:
...") or the answer itself, as a coding assistant's user writes them.

Then the questions asked after pasted code, as an agent's prompt often comes: a
user's own script (1,363 characters) before or after the question, or a function
of the project itself (not the answer) before it. The planner sets the paste apart
(``enrichment/prompt_parts.py``); the baseline, in the same run, searches the prompt
as said, as before 2026-11-26 (late).

Then the questions asked after (or before) a paragraph about the user's project that
answers none of them (1,180 characters), or a paragraph about using the project itself
(it names the project), and the unrelated prompts after the first: the planner also
searches a long prompt's parts (``prompt_parts.ask_parts``); the baseline, in the same
run, searches the whole prompt alone, as before 2026-11-26 (late).

Last, what a score means there: every top-10 hit binned by score, and the share of each
bin that is the question's answer (a lower bound: a question has one answer, and other
hits may help too).

``--memory PATH`` also runs the unrelated prompts on a memory of your own (say a large
code index made with ``remembrances code index``): their best KB and code scores, and
how many get a block.

Run: ``.venv/bin/python -m benchmarks.bench_gate [--cache DIR] [--memory PATH]``
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import remembrances
from benchmarks import devsuite
from benchmarks.devsuite.suite import Hit, _relative, all_sets, answer_rank, normalised
from remembrances.enrichment import (
    EnricherConfig,
    EnrichmentPlan,
    HeuristicPlanner,
    code_focus,
    heuristic,
)
from remembrances.enrichment.config import DEFAULT_MIN_SCORE
from remembrances.enrichment.heuristic import _TRACEBACK, _condensed_traceback, _terms
from remembrances.enrichment.prompt_parts import PromptParts
from remembrances.enrichment.time_phrases import find_time_window

THRESHOLDS = (0.002, 0.005, 0.01, 0.02, 0.03, 0.05)
UNRELATED = [
    "what is the capital of Peru?",
    "write a haiku about autumn leaves",
    "how do I bake sourdough bread at home",
    "translate good morning into French",
    "who won the football world cup in 2018?",
    "recommend a good science fiction novel",
    "what's the weather like in Tokyo tomorrow",
    "how many calories are in a banana",
    "explain the rules of chess castling",
    "plan a three day trip to Rome",
    "what is the boiling point of water on Everest",
    "give me a recipe for vegetarian lasagna",
    "how do vaccines train the immune system",
    "summarise the plot of Hamlet",
    "best exercises for lower back pain",
    "how do I change a flat bicycle tire",
    "what year did the Berlin wall fall",
    "tips for a job interview",
    "how does compound interest work",
    "write a birthday message for my sister",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="the development suite's cache folder")
    parser.add_argument("--quick", action="store_true", help="accepted for `make bench`; no-op")
    parser.add_argument("--memory", type=Path, help="also try the unrelated prompts on this memory")
    args = parser.parse_args()
    for kind, source in (("docs", "kb"), ("code", "code")):
        report(kind, source, args.cache)
    enrichment(args.cache)
    named_code(args.cache)
    pasted_code(args.cache)
    after_background(args.cache)
    calibration(args.cache)
    if args.memory is not None:
        unrelated_on(args.memory)


def unrelated_on(path: Path) -> None:
    """The unrelated prompts on a memory of the user's: best scores and blocks."""
    with remembrances.open(path, read_only=True) as service:
        print(f"\n### Unrelated prompts on {path} ({service.store.count():,} chunks)\n")
        print("| prompt | best kb | best code | block |\n|---|---|---|---|")
        blocks = 0
        for prompt in UNRELATED:
            kb = max((h.score for h in service.kb.search(prompt, limit=1)), default=0.0)
            code = max((h.score for h in service.code.search(prompt, limit=1)), default=0.0)
            block = bool(service.enrich_context(prompt))
            blocks += block
            print(f"| {prompt} | {kb:.4f} | {code:.4f} | {'yes' if block else ''} |")
        print(f"\n{blocks} of {len(UNRELATED)} unrelated prompts got a block")


def report(kind: str, source: str, cache: Path | None) -> None:
    kept = {half: dict.fromkeys(THRESHOLDS, 0) for half in ("fit", "test")}
    answered = dict.fromkeys(("fit", "test"), 0)
    unrelated: dict[str, float] = {}
    for name in sorted(s for s in all_sets() if s.startswith(f"{kind}-")):
        service, corpus = devsuite.open_store(name, cache=cache)
        try:
            for q in corpus.questions:
                hits = _search(service, corpus, q.text, 10)
                if not 0 < answer_rank(corpus, q, [hit for hit, _ in hits]) <= 3:
                    continue
                answered[q.half] += 1
                for threshold in THRESHOLDS:
                    kept[q.half][threshold] += hits[0][1] >= threshold
            unrelated[name] = max(
                (score for p in UNRELATED for _, score in _search(service, corpus, p, 1)),
                default=0.0,
            )
        finally:
            service.close()
    print(f"\n### {kind} sets: the {source} gate (now {DEFAULT_MIN_SCORE[source]})\n")
    print("| half | answer in the top 3 | " + " | ".join(f">= {t}" for t in THRESHOLDS) + " |")
    print("|---|---|" + "---|" * len(THRESHOLDS))
    for half, counts in kept.items():
        cells = " | ".join(str(counts[t]) for t in THRESHOLDS)
        print(f"| {half} | {answered[half]} | {cells} |")
    best = ", ".join(f"{name} {score:.4f}" for name, score in unrelated.items())
    print(f"\nunrelated prompts' best {source} score, per set: {best}")


class KeywordCodePlanner(HeuristicPlanner):
    """The heuristic planner as it was before 2026-11-26: code searched with the
    prompt's protected terms alone, or its keywords when it named none, and the KB
    with its keywords (the terms in prompt order)."""

    def plan(self, prompt: str) -> EnrichmentPlan:
        plan = super().plan(prompt)
        text = _TRACEBACK.sub(_condensed_traceback, str(prompt))
        terms = _terms(find_time_window(text, now=self.now(), tz=self.tz)[1])
        protected = _unique([t.text for t in terms if t.kind != "word"])
        words = [t.text for t in terms if t.kind == "word"]
        keywords = " ".join(_unique([t.text for t in terms])) if plan.kb_query else ""
        return dataclasses.replace(
            plan, code_query=" ".join(protected) or " ".join(words), kb_query=keywords
        )


def _unique(values: list[str]) -> list[str]:
    """First occurrences, compared without case (as the planner compared them then)."""
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.strip().lower(), value.strip())
    return [v for v in seen.values() if v]


def enrichment(cache: Path | None) -> None:
    before = EnricherConfig(min_score={"kb": 0.05, "events": 0.04, "code": 0.05})
    setups = {
        "before (gates 0.05, keyword code query)": (before, KeywordCodePlanner()),
        "now (defaults)": (EnricherConfig(), HeuristicPlanner()),
    }
    print("\n### The answer in enrich_context's block\n")
    print("| set | questions | " + " | ".join(setups) + " |")
    print("|---|---|" + "---|" * len(setups))
    totals = dict.fromkeys(setups, 0)
    count = 0
    for name in sorted(all_sets()):
        if not name.startswith(("docs-", "code-")):
            continue
        service, corpus = devsuite.open_store(name, cache=cache)
        try:
            cells = []
            for setup, (config, planner) in setups.items():
                service.enricher.config, service.enricher.planner = config, planner
                shown = sum(_in_block(service, corpus, q) for q in corpus.questions)
                totals[setup] += shown
                cells.append(str(shown))
            count += len(corpus.questions)
            print(f"| {name} | {len(corpus.questions)} | " + " | ".join(cells) + " |")
        finally:
            service.close()
    print(f"| all | {count} | " + " | ".join(str(t) for t in totals.values()) + " |")


def named_code(cache: Path | None) -> None:
    """The code sets' questions asked naming code, as a coding assistant's user would:
    the answer's class ("In `Response`: raise an error ...") when the answer is a
    method, or the answer itself ("`Response.raise_for_status`: ..."). Code-aware
    enrichment then shows named definitions; does the answer still reach the block?"""
    print("\n### Code questions that name code\n")
    print("| prompt | questions | the answer in the block |\n|---|---|---|")
    counts = {"In `Class`: question": [0, 0], "`Class.method`: question": [0, 0]}
    for name in sorted(s for s in all_sets() if s.startswith("code-")):
        service, corpus = devsuite.open_store(name, cache=cache)
        try:
            for q in corpus.questions:
                qualified = q.answers[0].split(":", 1)[1]
                if "." not in qualified:
                    continue
                asked = {
                    "In `Class`: question": f"In `{qualified.split('.')[0]}`: {q.text}",
                    "`Class.method`: question": f"`{qualified}`: {q.text}",
                }
                for form, prompt in asked.items():
                    counts[form][0] += 1
                    counts[form][1] += _in_block(
                        service, corpus, dataclasses.replace(q, text=prompt)
                    )
        finally:
            service.close()
    for form, (asked_n, shown) in counts.items():
        print(f"| {form} | {asked_n} | {shown} |")


#: A user's script, pasted before or after a question; nothing in it answers one.
PASTED_SCRIPT = """Here is what I have so far:

import logging
import os
import sqlite3
from dataclasses import dataclass, field

log = logging.getLogger("inventory")


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    tags: list[str] = field(default_factory=list)


class Inventory:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS items (sku TEXT PRIMARY KEY, name TEXT, quantity INTEGER)"
        )

    def add(self, item: Item) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO items VALUES (?, ?, ?)",
                (item.sku, item.name, item.quantity),
            )
        log.info("added %s (%d)", item.sku, item.quantity)

    def low_stock(self, threshold: int = 5) -> list[Item]:
        rows = self.db.execute(
            "SELECT sku, name, quantity FROM items WHERE quantity < ?", (threshold,)
        ).fetchall()
        return [Item(*row) for row in rows]


def main() -> None:
    inventory = Inventory(os.environ.get("INVENTORY_DB", "inventory.db"))
    inventory.add(Item("A-100", "bolts", 40))
    inventory.add(Item("A-200", "nuts", 3))
    for item in inventory.low_stock():
        print(f"reorder {item.name}: only {item.quantity} left")


if __name__ == "__main__":
    main()
"""


#: The same script as a user's own file often is: a docstring and comments, which read
#: like prose line by line.
COMMENTED_SCRIPT = '''"""Stock levels for the warehouse scanners.

Keeps one row per item and reports what needs reordering.
"""
''' + PASTED_SCRIPT.split("\n", 2)[2].replace(
    "\n\n@dataclass", "\n\n# one row of the items table\n@dataclass"
).replace(
    "    def low_stock", "    # items under the threshold need reordering\n    def low_stock"
).replace("def main()", "# run with INVENTORY_DB pointing at the database file\ndef main()")

#: A change under review, as ``git diff`` prints it.
PASTED_DIFF = """diff --git a/inventory/stock.py b/inventory/stock.py
--- a/inventory/stock.py
+++ b/inventory/stock.py
@@ -31,9 +31,12 @@ class Inventory:
     def low_stock(self, threshold: int = 5) -> list[Item]:
+        # items that were never counted have no quantity yet
         rows = self.db.execute(
-            "SELECT sku, name, quantity FROM items WHERE quantity < ?", (threshold,)
+            "SELECT sku, name, quantity FROM items WHERE coalesce(quantity, 0) < ?",
+            (threshold,),
         ).fetchall()
-        return [Item(*row) for row in rows]
+        # the scanners report negative counts after a recount; clamp them
+        return [Item(sku, name, max(quantity or 0, 0)) for sku, name, quantity in rows]

     def add(self, item: Item) -> None:
+        # reject empty stock keeping units before they reach the table
+        if not item.sku:
+            raise ValueError("an item needs a SKU")
         with self.db:
"""


#: A CI workflow: its top-level keys and list items read like prose line by line.
PASTED_WORKFLOW = """name: inventory checks
on:
  push:
    branches: [main]
  pull_request:
  schedule:
    - cron: "0 3 * * *"
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -e .[test]
      - run: pytest -q --maxfail 1
"""


def pasted_code(cache: Path | None) -> None:
    """Questions after (or before) pasted code, with the paste set apart and without."""
    forms = (
        "script, question",
        "question, script",
        "commented script, question",
        "diff, question",
        "workflow, question",
        "project function, question",
    )
    print("\n### Questions asked with pasted code\n")
    print("| prompt | sets | questions | alone | as said (before) | paste set apart (now) |")
    print("|---|---|---|---|---|---|")
    counts = {form: [0, 0, 0, 0] for form in forms}
    for name in sorted(s for s in all_sets() if s.startswith(("docs-", "code-"))):
        service, corpus = devsuite.open_store(name, cache=cache)
        try:
            functions = _project_functions(corpus) if name.startswith("code-") else []
            for i, q in enumerate(corpus.questions):
                prompts = {
                    "script, question": PASTED_SCRIPT + "\n" + q.text,
                    "question, script": q.text + "\n\n" + PASTED_SCRIPT,
                    "commented script, question": f"Here is my code:\n\n{COMMENTED_SCRIPT}\n{q.text}",
                    "diff, question": f"{PASTED_DIFF}\n{q.text}",
                    "workflow, question": f"Our CI:\n{PASTED_WORKFLOW}\n{q.text}",
                }
                if functions:
                    prompts["project function, question"] = f"{functions[i]}\n\n{q.text}"
                alone = _in_block(service, corpus, q)
                for form, prompt in prompts.items():
                    asked = dataclasses.replace(q, text=prompt)
                    with _pastes_as_said(), _whole_prompt_only():
                        before = _in_block(service, corpus, asked)
                    now = _in_block(service, corpus, asked)
                    for k, value in enumerate((1, alone, before, now)):
                        counts[form][k] += value
        finally:
            service.close()
    for form, (asked_n, alone, before, now) in counts.items():
        sets = "code" if form.startswith("project") else "docs and code"
        print(f"| {form} | {sets} | {asked_n} | {alone} | {before} | {now} |")


@contextlib.contextmanager
def _pastes_as_said() -> Iterator[None]:
    """The baseline: no prompt has pasted material, so it is all searched as said
    (with its parts, unless ``_whole_prompt_only`` too)."""
    saved = heuristic.split_prompt, code_focus.split_prompt
    heuristic.split_prompt = code_focus.split_prompt = _as_said  # type: ignore[assignment]
    try:
        yield
    finally:
        heuristic.split_prompt, code_focus.split_prompt = saved


def _as_said(text: str, *spans: Any, **named_spans: Any) -> PromptParts:
    return PromptParts(text)


def _project_functions(corpus: Any) -> list[str]:
    """One function of the project per question (never an answer), 400 to 1,500
    characters, the same on every run."""
    answers = {a.split(":", 1)[1].rsplit(".", 1)[-1] for q in corpus.questions for a in q.answers}
    found = []
    for path in sorted(corpus.root.rglob("*.py")):
        if "test" in path.relative_to(corpus.root).as_posix():
            continue
        source = path.read_text(errors="replace")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name not in answers:
                text = ast.get_source_segment(source, node) or ""
                if 400 <= len(text) <= 1500:
                    found.append(text)
    chooser = random.Random(7)
    return [chooser.choice(found) for _ in corpus.questions] if found else []


#: A user's background paragraph before (or after) a question; nothing in it answers one.
BACKGROUND = (
    "Some background first. Our team runs a small inventory service for three warehouses. "
    "Orders arrive from the web shop and from a partner feed, and each night a batch job "
    "reconciles the stock counts with what the scanners reported during the day. The "
    "service was written two years ago by a contractor, and most of the original authors "
    "have moved on, so the documentation is thin and a lot of knowledge lives in people's "
    "heads. Last quarter we moved the database to a managed instance and put the service "
    "behind a load balancer, which surfaced a few problems with sessions and timeouts that "
    "we are still cleaning up. We are also planning to split the reporting part into its "
    "own process, because the monthly reports slow everything down at the start of each "
    "month. The people working on it now are two backend developers, one of whom is new to "
    "the code base, and a part time operations engineer who looks after the deployments "
    "and the monitoring. We would like to keep changes small and easy to review, with tests "
    "for anything we touch, since there is no staging environment and every release goes "
    "straight to production on Thursday afternoons after the warehouse shifts change over."
)


#: A sentence of background, as a new user might start (nothing in it answers one).
SHORT_BACKGROUND = (
    "Quick context: I joined the team last week and I'm still finding my way around the code."
)

#: What the change must keep, said after the question (nothing in it answers one).
CONSTRAINTS = (
    "We would like to keep the change small and easy to review, with tests for what it "
    "touches. It also has to keep working on Python 3.9, because the warehouse scanners "
    "run an old image that we cannot upgrade before the spring."
)


def _about_the_project(project: str) -> str:
    """A background paragraph about using the project itself (it names the project)."""
    return (
        f"We build our internal tools on {project}. The service started as a small script "
        "two years ago and grew into a package of about forty modules that several teams "
        f"now depend on. We pinned {project} when we started and only upgraded it last "
        "month, after the old version stopped receiving fixes, and since then a few things "
        "behave differently from what our tests expected. Most of the people who wrote the "
        "original code have moved to other teams, so we are relearning how the pieces fit "
        f"together, and we would like to use {project} the way its authors intended rather "
        "than work around it."
    )


def after_background(cache: Path | None) -> None:
    """Questions beside a background paragraph, searched with the prompt's parts and without."""
    forms: dict[str, Any] = {
        "background, question": lambda q, project: f"{BACKGROUND}\n\n{q}",
        "question, background": lambda q, project: f"{q}\n\n{BACKGROUND}",
        "one paragraph, question last": lambda q, project: f"{BACKGROUND} {q}",
        "background, question, constraints": lambda q, p: f"{BACKGROUND}\n\n{q}\n\n{CONSTRAINTS}",
        "a sentence of background, question": lambda q, p: f"{SHORT_BACKGROUND}\n\n{q}",
        "question, a sentence of background": lambda q, p: f"{q}\n\n{SHORT_BACKGROUND}",
        # a background that names the project: the whole prompt has something to find
        "about the project, question": lambda q, p: f"{_about_the_project(p)}\n\n{q}",
        "question, about the project": lambda q, p: f"{q}\n\n{_about_the_project(p)}",
    }
    unrelated_forms = [form for form in forms if "project" not in form]
    print("\n### Questions asked after background\n")
    print("| prompt | questions | alone | whole prompt (before) | and its parts (now) |")
    print("|---|---|---|---|---|")
    counts = {form: [0, 0, 0, 0] for form in forms}
    unrelated = {form: [0, 0, 0] for form in unrelated_forms}
    for name in sorted(s for s in all_sets() if s.startswith(("docs-", "code-"))):
        service, corpus = devsuite.open_store(name, cache=cache)
        project = name.split("-", 1)[1]
        try:
            for q in corpus.questions:
                alone = _in_block(service, corpus, q)
                for form, write in forms.items():
                    asked = dataclasses.replace(q, text=write(q.text, project))
                    with _whole_prompt_only():
                        before = _in_block(service, corpus, asked)
                    now = _in_block(service, corpus, asked)
                    for k, value in enumerate((1, alone, before, now)):
                        counts[form][k] += value
            for prompt in UNRELATED:
                for form in unrelated_forms:
                    text = forms[form](prompt, project)
                    with _whole_prompt_only():
                        before = bool(service.enricher.enrich_context(text))
                    now = bool(service.enricher.enrich_context(text))
                    for k, value in enumerate((1, before, now)):
                        unrelated[form][k] += value
        finally:
            service.close()
    for form, (asked_n, alone, before, now) in counts.items():
        print(f"| {form} | {asked_n} | {alone} | {before} | {now} |")
    print("\nUnrelated prompts beside the background, on every set's memory (a block is wrong):\n")
    print("| prompt | prompts | blocks, whole prompt | blocks, and its parts |")
    print("|---|---|---|---|")
    for form, (asked_n, before, now) in unrelated.items():
        print(f"| {form} | {asked_n} | {before} | {now} |")


@contextlib.contextmanager
def _whole_prompt_only() -> Iterator[None]:
    """The baseline: a long prompt is searched whole, not by its parts too."""
    saved = heuristic.ask_parts
    heuristic.ask_parts = lambda ask: []
    try:
        yield
    finally:
        heuristic.ask_parts = saved


SCORE_BINS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def calibration(cache: Path | None) -> None:
    print("\n### Share of top-10 hits that are the answer, by score\n")
    bins = list(itertools.pairwise(SCORE_BINS))
    print("| sets | " + " | ".join(f"{lo}–{hi}" for lo, hi in bins) + " |")
    print("|---|" + "---|" * len(bins))
    for kind in ("docs", "code"):
        answers, hits = [0] * len(bins), [0] * len(bins)
        for name in sorted(s for s in all_sets() if s.startswith(f"{kind}-")):
            service, corpus = devsuite.open_store(name, cache=cache)
            try:
                for q in corpus.questions:
                    wanted = {corpus.answer_index[a] for a in q.answers}
                    for hit, score in _search(service, corpus, q.text, 10):
                        i = next(i for i, (_, hi) in enumerate(bins) if score < hi or hi == 1.0)
                        hits[i] += 1
                        answers[i] += bool(corpus.relevant(hit) & wanted)
            finally:
                service.close()
        cells = " | ".join(
            f"{a}/{n} ({a / n:.0%})" if n else "–" for a, n in zip(answers, hits, strict=True)
        )
        print(f"| {kind} | {cells} |")


def _in_block(service: Any, corpus: Any, question: Any) -> bool:
    result = service.enricher.enrich(question.text)
    if corpus.spec.corpus_kind == "docs":
        text = normalised(" ".join(item.text for item in result.items.get("kb", [])))
        return any(answer.split("#", 1)[1] in text for answer in question.answers)
    # A code item's origin: "[project] path:12-30 Qualified.name (kind)".
    origins = [item.origin for item in result.items.get("code", [])]
    for answer in question.answers:
        path, qualified = answer.split(":", 1)
        if any(f" {path}:" in o and f" {qualified} (" in o for o in origins):
            return True
    return False


def _search(service: Any, corpus: Any, query: str, limit: int) -> list[tuple[Hit, float]]:
    """The layer's hits as the suite judges them, with their scores."""
    if corpus.spec.corpus_kind == "docs":
        hits = service.kb.search(query, limit=limit, collection=corpus.id)
        return [(Hit(_relative(h.source, corpus.root), "", h.text), h.score) for h in hits]
    found = service.code.search(query, limit=limit, project=corpus.id)
    return [(Hit(h.path, h.qualified_name, h.code), h.score) for h in found]


if __name__ == "__main__":
    main()
