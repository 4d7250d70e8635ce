"""Code-aware enrichment: definitions of what a prompt names come first in the code section."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import remembrances
from remembrances import InvalidInputError, NotFoundError, RemembrancesService
from remembrances.embeddings import HashEmbedder
from remembrances.enrichment import ContextEnricher, EnricherConfig, EnrichmentPlan
from remembrances.enrichment.code_focus import code_aware, code_names
from remembrances.enrichment.sources import SEARCHES, ContextItem
from tests.code.test_line_numbers import FORM_FEED_SOURCE
from tests.code.test_repo_map import FILES, write


@pytest.fixture
def service(tmp_path: Path, location: str) -> Iterator[RemembrancesService]:
    svc = remembrances.open(location, embedder=HashEmbedder(64))
    write(tmp_path / "calls", FILES)
    svc.code.index(tmp_path / "calls", project="calls")
    svc.kb.add("The holiday rota is decided in March.", source="rota.md")
    yield svc
    svc.close()


def code_section(text: str) -> str:
    match = re.search(r"^## Code\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def test_names_in_a_prompt() -> None:
    names, paths = code_names(
        "Why does `Scheduler.next_run` call now() twice, e.g. in app/main.py? "
        "Compare formatDate, MAX_RETRIES, HttpClient and a::b. Hello World. The end."
    )
    assert names == ["Scheduler.next_run", "now", "formatDate", "MAX_RETRIES", "HttpClient", "a.b"]
    assert paths == ["app/main.py"]
    assert code_names("What did we decide about the holiday rota? Sure, e.g. March.") == ([], [])
    assert code_names("") == ([], [])
    assert len(code_names(" ".join(f"name_{i}" for i in range(50)))[0]) == 6
    # a word in capitals may name a class or a constant: looked up after the others
    assert code_names("what is the difference between LRI and LRU?") == (["LRI", "LRU"], [])
    assert code_names("the API returns JSON when get_user fails")[0] == ["get_user", "API", "JSON"]
    assert code_names("WHY IS THIS BROKEN") == ([], [])  # shouting names nothing
    assert code_names("Explain LRU, then URL.")[0] == ["LRU", "URL"]  # at a sentence's end
    assert code_names("see README.md") == ([], ["README.md"])  # a path, not a name


def test_a_class_named_in_capitals_is_shown(tmp_path: Path, location: str) -> None:
    # "what is the difference between LRI and LRU?" had no code: the word alone scored
    # the class 0.007, under the gate
    write(
        tmp_path / "lib",
        {
            "cache.py": 'class LRI(dict):\n    """Least recently inserted."""\n\n\n'
            'class LRU(dict):\n    """Least recently used."""\n'
        },
    )
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.code.index(tmp_path / "lib", project="lib")
        block = svc.enrich_context("what is the difference between LRI and LRU?")
    assert "cache.py:1-2 LRI (class)" in block and "cache.py:5-6 LRU (class)" in block, block


def test_a_named_method_comes_first_with_its_uses_and_its_map(
    service: RemembrancesService,
) -> None:
    enrichment = ContextEnricher(service).enrich("why would `Scheduler.next_run` skip a tick?")
    code = enrichment.items["code"]
    assert code[0].origin == "[calls] core/scheduler.py:8-9 Scheduler.next_run (method)"
    assert code[0].text.startswith("    def next_run(self, last: float) -> float:")
    origins = [item.origin for item in code]
    assert "[calls] uses of next_run" in origins
    assert "[calls] repository map" in origins
    uses = next(i for i in code if i.origin == "[calls] uses of next_run")
    assert "app/main.py:7 in start: print(s.next_run(now()))" in uses.text
    the_map = next(i for i in code if i.origin == "[calls] repository map")
    assert the_map.text.startswith("core/scheduler.py:\n  class Scheduler\n")
    assert "    def next_run(self, last: float) -> float" in the_map.text
    section = code_section(enrichment.text)
    assert section.index("def next_run") < section.index("uses of next_run")
    # the same definition is not repeated by the semantic hits
    assert sum("Scheduler.next_run (method)" in o for o in origins) == 1


def test_the_uses_of_a_method_other_classes_define_too_are_its_own(
    tmp_path: Path, location: str
) -> None:
    # "where is StripCommentsFilter._process used?" listed every class's _process calls
    write(
        tmp_path / "filters",
        {
            "others.py": "class StripCommentsFilter:\n"
            "    def _process(self, tlist):\n        return tlist\n\n"
            "    def process(self, stmt):\n        return self._process(stmt)\n\n\n"
            "class SpacesFilter:\n"
            "    def _process(self, tlist):\n        return tlist\n\n"
            "    def process(self, stmt):\n        return self._process(stmt)\n",
            "run.py": "from others import StripCommentsFilter\n\n\n"
            "def strip(stmt):\n    return StripCommentsFilter()._process(stmt)\n",
        },
    )
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.code.index(tmp_path / "filters", project="filters")
        code = ContextEnricher(svc).enrich("where is StripCommentsFilter._process used?")
        uses = next(i for i in code.items["code"] if "uses of" in i.origin)
        assert uses.origin == "[filters] uses of StripCommentsFilter._process"
        assert uses.text.splitlines() == [
            "others.py:6 in StripCommentsFilter.process: return self._process(stmt)",
            "run.py:5 in strip: return StripCommentsFilter()._process(stmt)",
        ]


def test_snake_case_and_paths(service: RemembrancesService) -> None:
    text = ContextEnricher(service).enrich_context("does formatDate handle time zones?")
    assert "web/format.js:1-3 formatDate (function)" in text
    assert "return d.toISOString();" in text
    by_path = ContextEnricher(service).enrich("what does svc/handler.go do?")
    the_map = next(i for i in by_path.items["code"] if i.origin == "[calls] repository map")
    assert "svc/handler.go:" in the_map.text and "func Handle()" in the_map.text


def test_a_prompt_without_code_is_unaffected(service: RemembrancesService) -> None:
    prompt = "what did we decide about the holiday rota?"
    assert code_aware(SEARCHES, prompt, 2.0) is SEARCHES
    enrichment = ContextEnricher(service).enrich(prompt)
    for item in enrichment.items.get("code", []):
        assert item.score is not None  # only semantic hits, which carry scores
        assert "uses of" not in item.origin and "repository map" not in item.origin


def test_unknown_names_and_hostile_prompts(service: RemembrancesService) -> None:
    enricher = ContextEnricher(service)
    for prompt in (
        "why does `no_such_function` fail?",
        "`" + "a" * 5000 + "`",
        "`\x00\ud800`.`x` and foo.bar.baz.qux()" * 50,
        '"next_run" OR * NEAR(`now`)',
    ):
        enrichment = enricher.enrich(prompt)
        assert isinstance(enrichment.text, str)
        for item in enrichment.items.get("code", []):
            assert "no_such_function" not in item.origin
    elsewhere = enricher.enrich("what does nowhere/else.py do?")
    assert not any("repository map" in i.origin for i in elsewhere.items.get("code", []))
    quoted = enricher.enrich('"next_run" OR * NEAR(`now`)')
    assert any(i.origin.endswith("core/clock.py:4-6 now (function)") for i in quoted.items["code"])


def test_the_budget_still_holds(service: RemembrancesService) -> None:
    small = ContextEnricher(service, EnricherConfig(max_chars=400))
    text = small.enrich_context("why would `Scheduler.next_run` skip a tick?")
    assert 0 < len(text) <= 400
    assert "def next_run" in text


def test_a_slow_semantic_search_does_not_take_the_definitions_with_it(
    service: RemembrancesService,
) -> None:
    def slow(svc: object, plan: EnrichmentPlan) -> list[ContextItem]:
        time.sleep(3)
        return []

    searches = code_aware({**SEARCHES, "code": slow}, "why does `now` drift?", 0.5)
    started = time.monotonic()
    items = searches["code"](service, EnrichmentPlan(code_query="now drift"))
    assert time.monotonic() - started < 1.0
    assert items[0].origin == "[calls] core/clock.py:4-6 now (function)"

    def failing(svc: object, plan: EnrichmentPlan) -> list[ContextItem]:
        raise RuntimeError("search is down")

    searches = code_aware({**SEARCHES, "code": failing}, "why does `now` drift?", 2.0)
    assert searches["code"](service, EnrichmentPlan(code_query="x"))[0].origin.endswith(
        "now (function)"
    )
    searches = code_aware({**SEARCHES, "code": failing}, "why does `unknown_thing` fail?", 2.0)
    with pytest.raises(RuntimeError, match="search is down"):
        searches["code"](service, EnrichmentPlan(code_query="x"))


def test_a_definition_after_a_form_feed_shows_its_own_lines(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "m.py").write_text(FORM_FEED_SOURCE)
    with remembrances.open(tmp_path / "m.db", embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "app", project="app")
        code = ContextEnricher(svc).enrich("what does `target_function` do?").items["code"]
    assert code[0].origin == "[app] m.py:5-6 target_function (function)"
    assert code[0].text == "def target_function():\n    return helper_call()"


def test_closing_waits_for_a_late_code_search(
    service: RemembrancesService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search past its deadline still reads the store: closing must wait for it."""
    answered = threading.Event()
    finished = []

    def late(svc: RemembrancesService, plan: EnrichmentPlan) -> list[ContextItem]:
        answered.wait(10)
        with svc.store.snapshot() as conn:  # one long statement, still running at close
            conn.execute(
                "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                "WHERE i < 1000000) SELECT count(*) FROM c"
            ).fetchone()
        finished.append(True)
        return []

    monkeypatch.setitem(SEARCHES, "code", late)
    # the late search blocks until told: the timeout only bounds the definitions' wait,
    # which a machine busy with other tests took past 0.3 s
    enricher = ContextEnricher(service, EnricherConfig(timeout=2.0))
    assert "def now" in enricher.enrich_context("why does `now` drift?")  # without it
    answered.set()
    enricher.close()
    assert finished  # close returned only after the late search
    service.close()  # and closing the store under it raised ThreadingViolationError


AMBIGUOUS = {
    "codecs/cp1252.py": "class Codec:\n    def encode(self, text):\n        return text.encode('cp1252')\n",
    "codecs/cp437.py": "class Codec:\n    def encode(self, text):\n        return text.encode('cp437')\n",
    "codecs/latin1.py": "class Codec:\n    def encode(self, text):\n        return text.encode('latin1')\n",
    "mp/context.py": "class BaseContext:\n    def Pool(self, n):\n        return n\n",
    "mp/dummy.py": "def Pool(n):\n    return n\n",
    "mp/pool.py": "class Pool:\n    def map(self, f, xs):\n        return [f(x) for x in xs]\n",
    "a/unused.py": "def helper_function():\n    return 1\n",
    "z/used.py": ("def helper_function():\n    return 2\n\n\ndef current_time():\n    return 0\n"),
    "app/one.py": "from z.used import current_time\n\n\ndef one():\n    return current_time()\n",
    "app/two.py": "from z.used import current_time\n\n\ndef two():\n    return current_time()\n",
}


@pytest.fixture
def ambiguous(tmp_path: Path, location: str) -> Iterator[RemembrancesService]:
    svc = remembrances.open(location, embedder=HashEmbedder(64))
    write(tmp_path / "repo", AMBIGUOUS)
    svc.code.index(tmp_path / "repo", project="repo")
    yield svc
    svc.close()


def definitions(enrichment: Any) -> list[str]:
    return [i.origin for i in enrichment.items.get("code", []) if i.score is None]


def test_the_prompts_other_words_choose_among_same_named_definitions(
    ambiguous: RemembrancesService,
) -> None:
    enricher = ContextEnricher(ambiguous)
    chosen = definitions(enricher.enrich("why does `Codec.encode` in cp437 drop characters?"))
    assert chosen[0] == "[repo] codecs/cp437.py:2-3 Codec.encode (method)"
    chosen = definitions(enricher.enrich("is `Codec.encode` right for latin1 text?"))
    assert chosen[0] == "[repo] codecs/latin1.py:2-3 Codec.encode (method)"


def test_a_name_written_with_its_module_is_that_definition(
    ambiguous: RemembrancesService,
) -> None:
    """``module.Class.method``, as Python users name things: the module picks the file."""
    enricher = ContextEnricher(ambiguous)
    for name in ("codecs.cp437.Codec.encode", "cp437.Codec.encode"):
        enrichment = enricher.enrich(f"how does `{name}` work?")
        shown = [o for o in definitions(enrichment) if "Codec.encode" in o]
        assert shown == ["[repo] codecs/cp437.py:2-3 Codec.encode (method)"]
        assert "is also defined" not in enrichment.text
    enrichment = enricher.enrich("what does mp.pool.Pool.map return?")  # no backticks
    assert definitions(enrichment)[0] == "[repo] mp/pool.py:2-3 Pool.map (method)"


def test_the_definitions_not_shown_are_listed_by_location(ambiguous: RemembrancesService) -> None:
    enrichment = ContextEnricher(ambiguous).enrich("how does `Codec.encode` work?")
    shown = definitions(enrichment)
    assert shown[:2] == [
        "[repo] codecs/cp1252.py:2-3 Codec.encode (method)",
        "[repo] codecs/cp437.py:2-3 Codec.encode (method)",
    ]
    listed = next(i for i in enrichment.items["code"] if i.key == "code:definitions:Codec.encode")
    assert listed.origin == "Codec.encode is also defined in 1 more place"
    assert listed.text == "[repo] codecs/latin1.py:2-3 Codec.encode (method)"
    assert "codecs/latin1.py:2-3 Codec.encode" in enrichment.text


def test_a_name_means_its_own_definition_first_then_the_most_used_file(
    ambiguous: RemembrancesService,
) -> None:
    enricher = ContextEnricher(ambiguous)
    pool = enricher.enrich("what does `Pool` return?")
    # the function first; the class (a container) comes with the semantic hits, once
    assert definitions(pool)[0] == "[repo] mp/dummy.py:1-2 Pool (function)"
    shown = [i.origin for i in pool.items["code"]]
    assert shown.count("[repo] mp/pool.py:1-3 Pool (class)") == 1, shown
    assert ambiguous.code.file_users("repo", ["z/used.py", "a/unused.py"]) == {"z/used.py": 2}
    chosen = definitions(enricher.enrich("what does `helper_function` return?"))
    assert chosen[0] == "[repo] z/used.py:1-2 helper_function (function)"


OVERLOADED = """from typing import overload


class Converter:
    @overload
    def convert(self, value: int) -> int: ...

    @overload
    def convert(self, value: str) -> str: ...

    def convert(self, value):
        \"\"\"Integers are doubled, strings are upper-cased.\"\"\"
        return value * 2 if isinstance(value, int) else value.upper()
"""


def test_the_definition_that_runs_comes_before_its_overload_stubs(
    tmp_path: Path, location: str
) -> None:
    write(tmp_path / "conv", {"conv.py": OVERLOADED})
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "conv", project="conv")
        enricher = ContextEnricher(svc)
        enrichment = enricher.enrich("what does `Converter.convert` do with strings?")
        # written with the package folder the project was indexed from, too
        with_package = enricher.enrich("what does `conv.conv.Converter.convert` return?")
    assert definitions(enrichment)[0] == "[conv] conv.py:11-13 Converter.convert (method)"
    assert definitions(with_package)[0] == "[conv] conv.py:11-13 Converter.convert (method)"


#: The overloads alone, as a ``.pyi`` beside the module declares them.
STUB = OVERLOADED[: OVERLOADED.index("    def convert(self, value):")]


def test_a_type_stub_steps_aside_for_the_implementation(tmp_path: Path, location: str) -> None:
    write(tmp_path / "conv", {"conv.py": OVERLOADED, "conv.pyi": STUB})
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "conv", project="conv")
        enrichment = ContextEnricher(svc).enrich("what does `Converter.convert` do?")
    shown = [o for o in definitions(enrichment) if o.endswith("(method)")]
    # the implementation, then the next definition in the same file; the stub is listed
    assert shown == [
        "[conv] conv.py:11-13 Converter.convert (method)",
        "[conv] conv.py:5-6 Converter.convert (method)",
    ]
    listed = next(i for i in enrichment.items["code"] if "also defined in" in i.origin)
    assert "conv.pyi" in listed.text
    # a stub the prompt names is what it asks about
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        named = ContextEnricher(svc).enrich("what does `Converter.convert` in conv.pyi declare?")
    assert any("conv.pyi" in o for o in definitions(named))


def test_a_named_class_comes_after_the_semantic_hits(tmp_path: Path, location: str) -> None:
    # "In `Response`, ...": the question is about something in the class; its source
    # (here 40 methods) would fill the section before the method that answers.
    methods = "".join(
        f"    def helper_{i}(self):\n        return {i}  # unrelated bookkeeping number {i}\n\n"
        for i in range(40)
    )
    source = (
        'class Response:\n    """An HTTP response."""\n\n'
        + methods
        + "    def raise_for_status(self):\n"
        + '        """Raise an HTTPError when the status code is 4xx or 5xx."""\n'
        + "        if 400 <= self.status_code < 600:\n            raise HTTPError(self.status_code)\n"
    )
    write(tmp_path / "web", {"models.py": source})
    with remembrances.open(location, embedder="local") as svc:
        svc.code.index(tmp_path / "web", project="web")
        prompt = "In `Response`: raise an error when the status code is 4xx or 5xx"
        items = ContextEnricher(svc).enrich(prompt).items["code"]
    origins = [i.origin for i in items]
    answer = next(i for i, o in enumerate(origins) if "Response.raise_for_status" in o)
    named = next(i for i, o in enumerate(origins) if o.endswith("Response (class)"))
    assert answer < named, origins


def test_a_named_class_found_by_a_late_part_is_shown_once_and_whole(
    tmp_path: Path, location: str
) -> None:
    # "how do I use `LRI`?" showed the class's tail part (its last methods, lines
    # 322-329) from the search and then the whole class from its name: twice, the
    # first saying nothing of how to use it
    methods = "".join(
        f"    def helper_{i}(self):\n        return {i}  # unrelated bookkeeping number {i}\n\n"
        for i in range(300)
    )
    source = (
        'class Cache(dict):\n    """A cache that forgets the oldest entry first."""\n\n'
        + methods
        + "    frobnicated_widget_policy = 'frobnicate widgets on eviction'\n"
    )
    write(tmp_path / "lib", {"cache.py": source})
    with remembrances.open(location, embedder="local") as svc:
        svc.code.index(tmp_path / "lib", project="lib")
        prompt = "how do I use `Cache`: the frobnicated widget policy on eviction?"
        found = svc.code.search(prompt, limit=4)
        assert any(h.qualified_name == "Cache" and h.part > 1 for h in found), found  # premise
        items = ContextEnricher(svc).enrich(prompt)
    origins = [i.origin for i in items.items["code"] if i.origin.endswith("Cache (class)")]
    assert len(origins) == 1, origins
    assert "cache.py:1-" in origins[0]  # the class from its first line


def test_a_line_naming_the_name_twice_is_one_use(tmp_path: Path, location: str) -> None:
    repo = tmp_path / "dup"
    repo.mkdir()
    (repo / "helpers.py").write_text("def make_response(json=None):\n    return json\n")
    (repo / "app.py").write_text(
        "from helpers import make_response as make_response\n\n\n"
        "def view(json):\n    return make_response(json=json)\n"
    )
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(repo)
        items = ContextEnricher(svc).enrich("what does `make_response` return?").items["code"]
    uses = next(i for i in items if i.origin == "[dup] uses of make_response")
    assert uses.text.splitlines() == [
        "app.py:1: from helpers import make_response as make_response",
        "app.py:5 in view: return make_response(json=json)",
    ]


def test_a_project_scope_keeps_the_code_to_that_project(tmp_path: Path, location: str) -> None:
    for project, value in (("first", 1), ("second", 2)):
        (tmp_path / project).mkdir()
        (tmp_path / project / "calc.py").write_text(f"def compute():\n    return {value}\n")
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "first")
        svc.code.index(tmp_path / "second")
        prompt = "what does `compute` return?"
        both = {i.origin.split("]")[0] for i in ContextEnricher(svc).enrich(prompt).items["code"]}
        assert both == {"[first", "[second"}
        scoped = ContextEnricher(svc).enrich(prompt, project="second").items["code"]
        assert scoped and all(i.origin.startswith("[second]") for i in scoped)
        assert "return 2" in scoped[0].text
        with pytest.raises(NotFoundError, match="'first', 'second'"):
            svc.enrich_context(prompt, project="third")
        with pytest.raises(InvalidInputError):
            svc.enrich_context(prompt, project="  ")


TRACED = {
    "app/views.py": "import json\n\n\ndef show(request):\n    data = load(request)\n    return json.dumps(data)\n\n\ndef load(request):\n    return request.args['id']\n",
    "app/main.py": "from app.views import show\n\n\ndef main():\n    return show(None)\n",
}


def test_a_pasted_trace_brings_the_definitions_its_frames_are_in(
    tmp_path: Path, location: str
) -> None:
    """Absolute paths from another machine (a container) are matched by their tail, and
    a line gives the definition around it, innermost frame first."""
    write(tmp_path / "traced", TRACED)
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/app/main.py", line 5, in main\n'
        '  File "/srv/app/app/views.py", line 5, in show\n'
        '  File "/srv/app/app/views.py", line 10, in load\n'
        "KeyError: 'id'\n"
    )
    assert code_names(trace)[1][:1] == ["/srv/app/app/main.py"]
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "traced", project="traced")
        shown = definitions(ContextEnricher(svc).enrich(trace))
    assert shown[:3] == [
        "[traced] app/views.py:9-10 load (function)",
        "[traced] app/views.py:4-6 show (function)",
        "[traced] app/main.py:4-5 main (function)",
    ]


COMMENTED = {
    "UserService.java": (
        "class UserService {\n"
        "    /** Finds a user; returns null if absent. */\n"
        "    public User find(String id) {\n"
        "        return users.get(id);\n"
        "    }\n"
        "}\n"
    ),
    "bundle.js": "".join(f"function f{i}(x){{return x+{i}}};" for i in range(300)) + "\n",
}


def test_a_definition_shows_its_doc_comment_and_a_minified_one_its_own_code(
    tmp_path: Path, location: str
) -> None:
    """A doc comment above the definition (Java, Go, Rust...) is shown with it; a
    definition on an 8 kB minified line is shown as its own bytes, not dropped."""
    write(tmp_path / "langs", COMMENTED)
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "langs", project="langs")
        enricher = ContextEnricher(svc)
        java = enricher.enrich("why does `UserService.find` return null?").items["code"][0]
        minified = enricher.enrich("why does `f200` return the wrong value?").items["code"][0]
    assert java.text.startswith("    /** Finds a user; returns null if absent. */\n    public User")
    assert minified.origin == "[langs] bundle.js:1 f200 (function)"
    assert minified.text == "function f200(x){return x+200}"


def test_a_long_doc_comment_leaves_room_for_the_definition(tmp_path: Path, location: str) -> None:
    """rxjs's ``debounceTime`` has 57 lines of JSDoc: the item's budget went to them and
    neither the signature nor the body was shown."""
    doc = ["/**", " * Emits a value only after a particular time span has passed."]
    doc += [f" * Detail line {i} about marbles and schedulers." for i in range(55)] + [" */"]
    body = "  const dueTime = due + scheduler.now();\n  return dueTime;\n"
    source = "\n".join(doc) + f"\nexport function debounceTime(due: number) {{\n{body}}}\n"
    write(tmp_path / "rx", {"debounceTime.ts": source})
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "rx", project="rx")
        item = ContextEnricher(svc).enrich("where does `debounceTime` compute the due time?")
    text = item.items["code"][0].text
    assert text.splitlines()[:2] == doc[:2]  # the summary stays
    assert " … (51 more lines of the doc comment)\n */\nexport function" in text
    assert "Detail line 53" not in text
    assert "export function debounceTime(due: number) {" in text and "return dueTime;" in item.text


def test_only_the_doc_comment_itself_is_shown_above_a_definition(
    tmp_path: Path, location: str
) -> None:
    """A block comment whose lines do not all start with ``*`` ended in a stray ``*/``
    above the declaration (greenlet's TGreenlet.hpp)."""
    source = (
        "/*\n   Licence text, lines without a star.\n   More of it.\n*/\n"
        "/// Switches to this greenlet.\nint switch_to(int target);\n"
        "/*\n   A note about the next one,\n   written without stars.\n */\n"
        "int plain(int x);\n"
    )
    write(tmp_path / "gl", {"greenlet.hpp": source})
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "gl", project="gl")
        enricher = ContextEnricher(svc)
        documented = enricher.enrich("what does `switch_to` do?").items["code"][0].text
        bare = enricher.enrich("what does `plain` return?").items["code"][0].text
    assert documented == "/// Switches to this greenlet.\nint switch_to(int target);"
    assert bare == "int plain(int x);", bare


def test_a_rust_struct_comes_before_its_impl_blocks(tmp_path: Path, location: str) -> None:
    """The struct and its impl blocks share a name; "the last definition in its file"
    (the rule for overloads) showed two impl blocks and listed the struct elsewhere."""
    source = (
        "/// Reads JSON from any reader, a byte at a time.\n"
        "pub struct IoRead<R> {\n    iter: LineColIterator<R>,\n}\n\n"
        "impl<R> IoRead<R> {\n    pub fn new(reader: R) -> Self { todo!() }\n}\n\n"
        "impl<R: io::Read> Read for IoRead<R> {\n    fn next(&mut self) -> u8 { 0 }\n}\n\n"
        "impl<R> Drop for IoRead<R> {\n    fn drop(&mut self) {}\n}\n"
    )
    write(tmp_path / "serde", {"src/read.rs": source})
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "serde", project="serde")
        items = ContextEnricher(svc).enrich("why is `IoRead` slow on a file?").items["code"]
    shown = [i.origin for i in items if i.origin.startswith("[serde] src/")]
    assert shown[0] == "[serde] src/read.rs:2-4 IoRead (struct)", shown


def test_a_file_the_prompt_names_decides_among_same_named_definitions(
    tmp_path: Path, location: str
) -> None:
    write(
        tmp_path / "two",
        {
            "ts/userService.ts": "export class UserService {\n  find(id: string) {\n    return null;\n  }\n}\n",
            "java/UserService.java": "public class UserService {\n    public User find(String id) { return null; }\n}\n",
        },
    )
    with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "two", project="two")
        enricher = ContextEnricher(svc)
        ts = definitions(enricher.enrich("why does `UserService.find` in ts/userService.ts fail?"))
        java = definitions(enricher.enrich("why does `UserService.find` in UserService.java fail?"))
    assert ts[0] == "[two] ts/userService.ts:2-4 UserService.find (method)"
    assert java[0] == "[two] java/UserService.java:2 UserService.find (method)"
