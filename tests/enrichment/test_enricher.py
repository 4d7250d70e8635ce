"""ContextEnricher over a real service: KB documents, events and an indexed code project."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import remembrances
from remembrances import InvalidInputError, RemembrancesService
from remembrances.embeddings import HashEmbedder
from remembrances.enrichment import (
    DEFAULT_MIN_SCORE,
    ContextEnricher,
    EnricherConfig,
    EnrichmentPlan,
    HeuristicPlanner,
    LLMPlanner,
    OpenAIChat,
)
from remembrances.enrichment.sources import ContextItem

from .chat_server import ChatServer
from .corpus import DOCUMENTS, NOW, populate
from .test_prompt_parts import BACKGROUND, JAVASCRIPT, SCRIPT, SHORT_BACKGROUND


@pytest.fixture(scope="module")
def service(
    module_location: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RemembrancesService]:
    """The corpus under the default local embedder (the one the defaults were measured with),
    in a SQLite file and in a PostgreSQL memory."""
    root = tmp_path_factory.mktemp("enrich")
    svc = remembrances.open(module_location, embedder="local")
    populate(svc, root / "code")
    svc.enricher.planner = HeuristicPlanner(now=lambda: NOW)
    yield svc
    svc.close()


def enricher(service: RemembrancesService, **config: object) -> ContextEnricher:
    return ContextEnricher(
        service,
        EnricherConfig(**config),  # type: ignore[arg-type]
        planner=HeuristicPlanner(now=lambda: NOW),
    )


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


@pytest.mark.parametrize(
    ("prompt", "kb", "events", "code"),
    [
        (
            "how should we handle HTTP 429 rate limits from the payment API?",
            "Retry policy › Backoff for rate limits (runbooks/retries.md)",
            "incident · 2026-11-20 16:40 UTC",
            None,
        ),
        (
            "can you explain fetch_with_retry and RetryPolicy.delay?",
            None,
            None,
            "shop/retry.py:19-27 fetch_with_retry (function)",
        ),
        (
            "how do I roll back a database migration?",
            "Database migrations ›",
            None,
            None,
        ),
        ("how many vacation days do I get?", "Vacation policy (handbook/vacation.md)", None, None),
        (
            "what did we decide about the orders table migration?",
            None,
            "decision · 2026-11-19 10:00 UTC: Decided to move the orders table migration",
            None,
        ),
        (
            "why is order_total wrong for discounted orders?",
            None,
            None,
            "shop/orders.py:12-14 order_total (function)",
        ),
    ],
)
def test_the_right_context_appears_with_its_origin(
    service: RemembrancesService,
    prompt: str,
    kb: str | None,
    events: str | None,
    code: str | None,
) -> None:
    text = service.enrich_context(prompt)
    assert text.startswith("Relevant memory")
    for title, expected in (("Knowledge base", kb), ("Events", events), ("Code", code)):
        if expected is not None:
            assert expected in section(text, title), text


@pytest.mark.parametrize(
    ("prompt", "title", "expected"),
    [
        (
            f"Here is my code:\n{SCRIPT}\nhow should we handle HTTP 429 rate limits from the payment API?",
            "Knowledge base",
            "Retry policy › Backoff for rate limits (runbooks/retries.md)",
        ),
        (
            f"{JAVASCRIPT}\nwhy is order_total wrong for discounted orders?",
            "Code",
            "shop/orders.py:12-14 order_total (function)",
        ),
    ],
)
def test_a_question_beside_pasted_code_finds_its_context(
    service: RemembrancesService, prompt: str, title: str, expected: str
) -> None:
    text = service.enrich_context(prompt)
    assert expected in section(text, title), text


@pytest.mark.parametrize(
    ("question", "title", "expected"),
    [
        ("how many vacation days do I get?", "Knowledge base", "Vacation policy"),
        (
            "what did we decide about the orders table migration?",
            "Events",
            "decision · 2026-11-19 10:00 UTC",
        ),
        (
            "where is the exponential backoff delay with jitter computed?",
            "Code",
            "RetryPolicy.delay (method)",
        ),
    ],
)
@pytest.mark.parametrize("form", ["{background}\n\n{question}", "{question}\n\n{background}"])
@pytest.mark.parametrize("background", [BACKGROUND, SHORT_BACKGROUND])
def test_a_question_beside_background_finds_its_context(
    service: RemembrancesService,
    question: str,
    title: str,
    expected: str,
    form: str,
    background: str,
) -> None:
    prompt = form.format(background=background, question=question)
    text = service.enrich_context(prompt)
    assert expected in section(text, title), text


def test_an_unrelated_question_beside_background_gives_an_empty_string(
    service: RemembrancesService,
) -> None:
    assert service.enrich_context(f"{BACKGROUND}\n\nwhat's the capital of Australia?") == ""
    assert service.enrich_context(f"{SHORT_BACKGROUND} What's the capital of Australia?") == ""
    for aside in (
        "Sorry, my manager pulled me into a planning meeting all morning.",
        "I'm taking two days of leave at the end of the month.",
        "My laptop is brand new and I'm still setting it up.",
    ):
        prompt = f"{aside}\n\nCan you recommend a good science fiction novel?\n\nThanks!"
        assert service.enrich_context(prompt) == "", prompt


@pytest.mark.parametrize(
    "prompt",
    [
        "what's the capital of Australia?",
        "hello, how are you today?",
        "translate 'good morning' into Italian",
        "what is the boiling point of water at altitude",
        "recommend a good science fiction novel",
        "how do I bake sourdough bread",
        "who won the football world cup in 1998",
        "thanks!",
        "",
    ],
)
def test_unrelated_prompts_give_an_empty_string(service: RemembrancesService, prompt: str) -> None:
    assert service.enrich_context(prompt) == ""


def test_a_time_phrase_selects_the_events_of_that_day(service: RemembrancesService) -> None:
    result = service.enricher.enrich("What happened yesterday?")
    events = section(result.text, "Events")
    assert "incident · 2026-11-20 16:40 UTC" in events
    assert "deploy · 2026-11-20 14:05 UTC" in events
    # a window's events are told in the order they happened
    assert events.index("deploy · 2026-11-20 14:05") < events.index("incident · 2026-11-20 16:40")
    assert "2026-11-19" not in events and "2026-11-02" not in events
    assert set(result.items) == {"events"}


def test_code_items_keep_their_code_in_a_fence(service: RemembrancesService) -> None:
    text = service.enrich_context("show me fetch_with_retry")
    code = section(text, "Code")
    assert "```python\ndef fetch_with_retry(client, url, policy=None):" in code
    assert "raise TimeoutError" in code


def test_enabled_can_be_switched_at_run_time(service: RemembrancesService) -> None:
    enr = enricher(service)
    prompt = "how many vacation days do I get?"
    assert enr.enrich_context(prompt)
    enr.enabled = False
    assert enr.enrich_context(prompt) == ""
    assert enr.enrich(prompt).plan is None  # not even planned
    enr.config.enabled = True
    assert enr.enrich_context(prompt)


def test_thresholds_are_per_source(service: RemembrancesService) -> None:
    prompt = "how should we handle HTTP 429 rate limits from the payment API?"
    thresholds = {**DEFAULT_MIN_SCORE, "kb": 1.0}
    result = enricher(service, min_score=thresholds).enrich(prompt)
    assert all(item.score == 1.0 for item in result.items.get("kb", []))
    assert result.items["events"]
    everything = enricher(service, min_score=0.0).enrich("recommend a good science fiction novel")
    assert everything.text  # with no threshold, the nearest neighbours always come back


def test_sources_can_be_chosen(service: RemembrancesService) -> None:
    result = enricher(service, sources=("code",)).enrich("explain fetch_with_retry backoff")
    assert set(result.items) == {"code"}
    assert "## Knowledge base" not in result.text


def test_duplicates_are_removed(location: str) -> None:
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        title, text = DOCUMENTS["runbooks/retries.md"]
        svc.kb.add(text, source="a/retries.md", title=title)
        svc.kb.add(text, source="b/retries-copy.md", title=title)
        result = enricher(svc, min_score=0.0).enrich("retry backoff idempotency")
    texts = [item.text for item in result.items["kb"]]
    assert len(texts) == len(set(texts)) >= 1
    assert len(texts) < 4  # two documents of two chunks each, minus the copies


def test_a_repositorys_doc_is_told_once_not_as_a_passage_and_a_section(
    tmp_path: Path, location: str
) -> None:
    """Docs ingested into the KB are also sections in the code index of their repository."""
    (tmp_path / "proj" / "docs").mkdir(parents=True)
    (tmp_path / "proj" / "docs" / "deploy.md").write_text(
        "# Deploying\n\nDeploys run from the release branch every Friday, staging first.\n\n"
        "## Rollbacks\n\nTo roll back, run make rollback with the version; images stay 7 days.\n"
    )
    (tmp_path / "proj" / "app.py").write_text(
        "# deploy it\ndef deploy(version):\n    return version\n"
    )
    with remembrances.open(location, embedder="local") as svc:
        svc.kb.ingest(tmp_path / "proj" / "docs")
        svc.code.index(tmp_path / "proj", project="proj")
        result = svc.enricher.enrich("how do I roll back a deploy?")
    kb = "\n".join(i.text for i in result.items["kb"])
    assert "run make rollback" in kb
    code = [i.origin for i in result.items.get("code", [])]
    assert not [o for o in code if "docs/deploy.md" in o], code
    assert result.text.count("run make rollback") == 1


@pytest.mark.parametrize(
    ("max_chars", "section_chars", "item_chars"),
    [(150, None, None), (400, 200, None), (900, 300, 120), (3000, 1000, 600), (6000, 3000, 1500)],
)
@pytest.mark.parametrize(
    "prompt",
    [
        "how should we handle HTTP 429 rate limits in fetch_with_retry? what happened yesterday?",
        "explain RetryPolicy, order_total, apply_discount and addToCart",
    ],
)
def test_character_budgets_are_never_exceeded(
    service: RemembrancesService,
    prompt: str,
    max_chars: int,
    section_chars: int | None,
    item_chars: int | None,
) -> None:
    enr = enricher(
        service,
        max_chars=max_chars,
        section_chars=section_chars,
        item_chars=item_chars,
        min_score=0.0,
    )
    text = enr.enrich_context(prompt)
    assert len(text) <= max_chars
    for title in ("Knowledge base", "Events", "Code"):
        body = section(text, title)
        if body and section_chars is not None:
            assert len(f"## {title}\n" + body.rstrip("\n")) <= section_chars
    if max_chars >= 3000:
        assert "## Knowledge base" in text and "## Code" in text
    for line in text.splitlines():
        if line.endswith("…"):  # a cut: at a sentence end, a line end or a word boundary
            assert line.endswith(" …") and not line[:-2].endswith(" ")


@pytest.mark.parametrize("max_chars", [600, 900, 1200])
def test_a_small_block_still_holds_every_sources_best_hit(
    service: RemembrancesService, max_chars: int
) -> None:
    prompt = "how should we handle HTTP 429 rate limits and retry in fetch_with_retry?"
    everything = enricher(service).enrich(prompt)
    assert len(everything.items) == 3  # all three speak with the default budgets
    small = enricher(service, max_chars=max_chars).enrich(prompt)
    assert len(small.text) <= max_chars
    assert set(small.items) == set(everything.items), small.text
    for source, items in small.items.items():  # each one's best hit, first
        assert items[0].key == everything.items[source][0].key


def test_token_budgets_are_checked_with_the_given_tokenizer(service: RemembrancesService) -> None:
    calls = []

    def count_tokens(text: str) -> int:
        calls.append(len(text))
        return len(re.findall(r"\w+|[^\w\s]", text))

    prompt = (
        "how should we handle HTTP 429 rate limits in fetch_with_retry? what happened yesterday?"
    )
    unlimited = enricher(service, max_chars=None, section_chars=None, min_score=0.0)
    full = unlimited.enrich_context(prompt)
    assert count_tokens(full) > 300
    for budget in (60, 150, 300):
        enr = enricher(
            service,
            max_chars=None,
            section_chars=None,
            max_tokens=budget,
            section_tokens={"code": budget // 2},
            tokenizer=count_tokens,
            min_score=0.0,
        )
        text = enr.enrich_context(prompt)
        assert text and count_tokens(text) <= budget
        assert count_tokens("## Code\n" + section(text, "Code").rstrip("\n")) <= budget // 2
    assert calls


def test_a_source_that_raises_is_dropped_and_the_rest_returned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with sabotaged_service(tmp_path) as svc:
        enr = ContextEnricher(
            svc, EnricherConfig(min_score=0.0), planner=FixedPlanner(code_query="EXPLODE retry")
        )
        result = enr.enrich("anything")
    assert "code" in result.dropped and "embedding service exploded" in result.dropped["code"]
    assert "## Knowledge base" in result.text and "## Code" not in result.text
    assert "enrichment source 'code' dropped" in caplog.text


@pytest.mark.parametrize("timeout", [0.3, {"kb": 30.0, "events": 0.3, "code": 30.0}])
def test_a_source_past_its_timeout_is_dropped(
    tmp_path: Path, timeout: float | dict[str, float]
) -> None:
    with sabotaged_service(tmp_path) as svc:
        enr = ContextEnricher(
            svc,
            EnricherConfig(min_score=0.0, timeout=timeout),
            planner=FixedPlanner(events_query="SLOW retry"),
        )
        try:
            result = enr.enrich("anything")
        finally:
            SabotagedEmbedder.release.set()
        assert result.dropped == {"events": "timed out after 0.3 s"}
        assert "## Knowledge base" in result.text and "## Code" in result.text
        assert "## Events" not in result.text


def test_any_failure_inside_gives_an_empty_string(
    service: RemembrancesService, caplog: pytest.LogCaptureFixture
) -> None:
    class BrokenPlanner:
        def plan(self, prompt: str) -> EnrichmentPlan:
            raise RuntimeError("planner bug")

    enr = ContextEnricher(service, planner=BrokenPlanner())
    assert enr.enrich_context("how many vacation days do I get?") == ""
    assert "planner bug" in caplog.text


@pytest.mark.parametrize(
    "prompt",
    [
        "\udcff\udcfe lone surrogates about fetch_with_retry",
        "\x00\x01\x02 vacation",
        "AND OR NOT NEAR( \"retry * ^ - : '",
        "retry " * 30_000,
        "🙂 数据库 迁移 migration",
        None,
        42,
        b"retry backoff",
    ],
)
def test_hostile_prompts_never_raise(service: RemembrancesService, prompt: object) -> None:
    text = service.enrich_context(prompt)  # type: ignore[arg-type]
    assert isinstance(text, str)
    text.encode("utf-8")


def test_an_llm_planner_that_hangs_still_gives_context(service: RemembrancesService) -> None:
    with ChatServer().running() as server:
        hang = OpenAIChat("hang", base_url=server.url + "/v1", api_key="k")
        llm = LLMPlanner(hang, timeout=0.5, now=lambda: NOW)
        result = ContextEnricher(service, planner=llm).enrich("how many vacation days do I get?")
    assert result.plan is not None and result.plan.planner == "heuristic (fallback)"
    assert "Vacation policy" in result.text


def test_an_llm_plan_drives_the_searches(service: RemembrancesService) -> None:
    with ChatServer().running() as server:
        server.plan = {
            "kb_query": "",
            "code_query": "order_total",
            "events_query": "",
            "code_limit": 1,
        }
        model = OpenAIChat("good", base_url=server.url + "/v1", api_key="k")
        result = ContextEnricher(service, planner=LLMPlanner(model, now=lambda: NOW)).enrich(
            "the thing Bob broke before the demo"
        )
    assert result.plan is not None and result.plan.planner == "llm:openai:good"
    assert set(result.items) == {"code"} and len(result.items["code"]) == 1
    assert "order_total" in result.text


def test_many_threads_get_the_same_answers(service: RemembrancesService) -> None:
    prompts = [
        "how should we handle HTTP 429 rate limits from the payment API?",
        "explain fetch_with_retry",
        "how many vacation days do I get?",
        "What happened yesterday?",
        "recommend a good science fiction novel",
    ]
    enr = enricher(service, timeout=60.0)
    expected = {p: enr.enrich_context(p) for p in prompts}
    assert sum(1 for v in expected.values() if v) == 4
    errors: list[BaseException] = []
    got: list[tuple[str, str]] = []
    lock = threading.Lock()

    def worker(offset: int) -> None:
        try:
            for i in range(len(prompts)):
                prompt = prompts[(i + offset) % len(prompts)]
                text = enr.enrich_context(prompt)
                with lock:
                    got.append((prompt, text))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(got) == 12 * len(prompts)
    for prompt, text in got:
        assert text == expected[prompt], prompt


@pytest.mark.parametrize(
    "config",
    [
        {"min_score": 1.5},
        {"min_score": {"kb": -0.1}},
        {"min_score": float("nan")},
        {"sources": ("kb", "web")},
        {"timeout": 0},
        {"timeout": float("inf")},
        {"timeout": {"kb": -1.0}},
        {"max_chars": 0},
        {"section_chars": {"kb": -5}},
        {"item_chars": 2.5},
        {"max_workers": 0},
        {"tokenizer": "cl100k"},
    ],
)
def test_bad_config_is_refused_with_a_typed_error(config: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        EnricherConfig(**config)  # type: ignore[arg-type]


# -- a real embedder that misbehaves on chosen queries, and a fixed planner ----------


class SabotagedEmbedder(HashEmbedder):
    """Hashing vectors, except that queries with EXPLODE fail and queries with SLOW hang."""

    release = threading.Event()

    def embed_query(self, text: str) -> np.ndarray:
        if "EXPLODE" in text:
            raise RuntimeError("embedding service exploded")
        if "SLOW" in text:
            self.release.wait(10)
        return super().embed_query(text)


class FixedPlanner:
    def __init__(self, **queries: str) -> None:
        base = EnrichmentPlan(
            kb_query="retry backoff", code_query="fetch_with_retry", events_query="deploy"
        )
        self._plan = replace(base, planner="fixed", **queries)

    def plan(self, prompt: str) -> EnrichmentPlan:
        return self._plan


class _Closing:
    def __init__(self, svc: RemembrancesService) -> None:
        self.svc = svc

    def __enter__(self) -> RemembrancesService:
        return self.svc

    def __exit__(self, *exc: object) -> None:
        self.svc.close()


def sabotaged_service(tmp_path: Path) -> _Closing:
    SabotagedEmbedder.release.clear()
    svc = remembrances.open(tmp_path / "m.db", embedder=SabotagedEmbedder(64))
    populate(svc, tmp_path / "code")
    return _Closing(svc)


def test_a_later_part_of_a_long_symbol_shows_whose_body_it_is(
    location: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    body = "".join(f"    s_{i} = step({i})\n" for i in range(120))  # two parts, the 2nd short
    tail = "    zanzibar_checksum = verify_zanzibar_checksum(s_0)\n    return zanzibar_checksum\n"
    (repo / "long.py").write_text(
        f"def build_report(records, factor):\n{body}{tail}", encoding="utf-8"
    )
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(repo)
        hit = svc.code.search("zanzibar checksum", limit=1)[0]
        assert hit.part > 1  # the tail is its own part
        # hash vectors score code low: no gate here, this is about how the part is shown
        found = enricher(svc, min_score=0.0).enrich("where is the zanzibar checksum verified?")
        code = section(found.text, "Code")
    first_code_line = code.split("```python\n", 1)[1].splitlines()[0]
    assert first_code_line == "def build_report(records, factor) …"
    assert "zanzibar_checksum = verify_zanzibar_checksum" in code


DEPLOY_DOC = """# Deploying the inventory service

Deploys run from the `release` branch every Friday at 14:00 UTC.

## Rollback

To roll back, run `make rollback VERSION=<previous>` from the ops box. The rollback
takes about four minutes and drains the queue first.

## Feature flags

Feature flags live in `config/flags.yaml`. Never flip `use_new_pricing` on Fridays.
"""


@pytest.mark.parametrize(
    "prompt", ["how do we roll back?", "how can I roll back?", "how do I roll back"]
)
def test_everyday_phrasings_find_the_one_section_that_answers(tmp_path: Path, prompt: str) -> None:
    # "how can I roll back?" reads 0.24 close to the Rollback section (the KB query
    # "I roll back?"): a floor of 0.25 on a passage's cosine dropped the only answer
    with remembrances.open(tmp_path / "m.db", embedder="local") as svc:
        svc.kb.add(DEPLOY_DOC, source="deploy.md")
        svc.kb.add("The new build server is quite fast; hmm, the old one is not retired yet.", source="notes.md")  # fmt: skip
        text = svc.enrich_context(prompt)
        assert "make rollback VERSION=<previous>" in section(text, "Knowledge base"), text
        # ... while a reply whose every word a passage holds, far from it in meaning
        # (cosine 0.05-0.14, scoring over the KB gate), still gets nothing
        for reply in ("hmm, not quite", "not quite", "thanks, that worked!", "try again"):
            assert svc.enrich_context(reply) == "", reply


def test_enrich_on_a_closed_memory_raises_instead_of_answering_nothing(tmp_path: Path) -> None:
    # "" would let the agent run on without memory, and nobody would know why.
    used = remembrances.open(tmp_path / "used.db", embedder="hash:64")
    used.kb.add("Deploys run every Friday.", source="deploys.md")
    assert used.enrich_context("when do deploys run?")
    used.close()
    with pytest.raises(remembrances.ClosedError, match="closed"):
        used.enrich_context("when do deploys run?")
    # Closed before its enricher was ever built: no enricher threads are started either.
    fresh = remembrances.open(tmp_path / "fresh.db", embedder="hash:64")
    fresh.close()
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(remembrances.ClosedError):
        fresh.enrich_context("when do deploys run?")
    started = {t.name for t in threading.enumerate()} - before
    assert not any(name.startswith("remembrances-enrich") for name in started)


def test_a_notes_front_matter_is_found_but_not_shown(tmp_path: Path) -> None:
    # a vault note's YAML front matter was copied into every block that quoted it
    note = tmp_path / "Deploys.md"
    note.write_text(
        "---\ntitle: Deploy days\nowner: alice\ntags:\n  - ops\n---\n\n"
        "Production deploys run every Friday from the release branch.\n"
    )
    with remembrances.open(tmp_path / "m.db") as svc:
        svc.kb.ingest(note)
        block = svc.enrich_context("when do production deploys run?")
        assert "every Friday from the release branch" in block and "Deploy days" in block
        assert "owner: alice" not in block and "---" not in block, block
        # its words are still the note's
        assert [h.source for h in svc.kb.search("alice", mode="text")] == ["Deploys.md"]


def test_front_matter_that_holds_the_answer_is_shown(tmp_path: Path) -> None:
    note = tmp_path / "Billing.md"
    note.write_text(
        "---\ntitle: Billing service\nowner: alice\noncall: bob-the-builder\n---\n\n"
        "The billing service charges customers monthly.\n"
    )
    with remembrances.open(tmp_path / "m.db") as svc:
        svc.kb.ingest(note)
        block = svc.enrich_context("who is the oncall for the billing service?")
    assert "oncall: bob-the-builder" in block, block


def test_front_matter_that_never_closes_is_read_in_linear_time() -> None:
    # a YAML block scalar with a blank line inside: the pattern that matched front
    # matter backtracked exponentially on it (13 lines: 6 s)
    from remembrances.enrichment.sources import front_matter_end

    lines = "".join(f"    step {i}\n" for i in range(200))
    text = f"---\ntitle: X\ndescription: |\n{lines}\n    more\n---\n\nRelease every Friday."
    assert front_matter_end(text) == 0  # longer than MAX_FRONT_MATTER_LINES: shown as is
    short = "---\ntitle: X\ndescription: |\n    a\n\n    b\n---\n\nBody."
    assert short[front_matter_end(short) :] == "Body."
    assert front_matter_end("---\n\nA rule, then text.\n---\n") == 0  # no key: a rule


def test_an_item_under_the_gate_needs_a_word_of_the_question() -> None:
    # "What do you suggest?" came along with a code question on its neighbours' score
    def event(key: str, score: float, holds_words: bool | None) -> ContextItem:
        return ContextItem("events", key, f"turn {key}", score, key, holds_words=holds_words)

    found = {
        "events": [
            event("best", 0.05, True),
            event("meaning alone, over the gate", 0.045, False),
            event("a word, under the gate", 0.03, True),
            event("meaning alone, under the gate", 0.03, False),
            event("not known", 0.03, None),
            event("under the floor", 0.01, True),
        ]
    }
    kept = ContextEnricher._filter(found, EnricherConfig())["events"]
    assert [i.key for i in kept] == [
        "best",
        "meaning alone, over the gate",
        "a word, under the gate",
        "not known",
    ]


def test_an_events_search_says_which_events_hold_a_word_of_the_query(location: str) -> None:
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.events.log("The payment API returns 429 when it is rate limited.", subject="ops")
        svc.events.log("Lunch was pizza.", subject="ops")
        hits = {h.content: h for h in svc.events.search("payment rate limits", min_score=0.0)}
        assert hits["The payment API returns 429 when it is rate limited."].text_score > 0.5
        assert hits["Lunch was pizza."].text_score == 0.0
        assert svc.events.list(limit=1)[0].text_score is None  # listed, not searched
