"""Code search ranks by what code has: the symbol's name, the parameters a query
writes as code, the class or file around a symbol, closures kept with their
function, one hit per symbol (remembrances/code/ranking.py, parsing/chunking.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import remembrances
from remembrances import RemembrancesService, Store, fusion
from remembrances.code import CodeHit, CodeIndexer, ranking
from remembrances.code.ranking import (
    code_words,
    enclosing_matches,
    identifier_words,
    name_matches,
    parameter_matches,
    parameter_names,
)
from remembrances.records import SearchResult
from tests.code.repo_builder import write

HTTP_UTILS = '''\
import email.utils
from datetime import datetime, timezone


def parse_retry_after(value):
    if value.strip().isdigit():
        return float(value)
    when = email.utils.parsedate_to_datetime(value)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)


def parse_content_type(header):
    """The media type and the parameters of a Content-Type header."""
    kind, _, rest = header.partition(";")
    params = dict(p.strip().split("=", 1) for p in rest.split(";") if "=" in p)
    return kind.strip().lower(), params


def format_http_date(when):
    """A datetime as an HTTP date header value."""
    return email.utils.format_datetime(when.astimezone(timezone.utc), usegmt=True)
'''

HEADERS = '''\
class Headers:
    """Case-insensitive HTTP headers; a header can hold several values."""

    def __init__(self):
        self._items = {}

    def get(self, name, default=None):
        """The header's last value: Retry-After, Content-Type, anything the server sent."""
        values = self._items.get(name.lower())
        return values[-1] if values else default

    def add(self, name, value):
        self._items.setdefault(name.lower(), []).append(value)
'''


@pytest.fixture(scope="module")
def http_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemembrancesService]:
    """A tiny HTTP library, indexed with the real local embedder."""
    root = tmp_path_factory.mktemp("client")
    (root / "net").mkdir()
    (root / "net" / "http_utils.py").write_text(HTTP_UTILS)
    (root / "net" / "headers.py").write_text(HEADERS)
    with remembrances.open(root.parent / f"{root.name}.db", embedder="local") as svc:
        report = svc.code.index(root, project="client")
        assert report.pending_embeddings == 0
        yield svc


def kept(hit: CodeHit) -> float:
    """What the hit's kind keeps of its score (a file's chunk or a constant: half)."""
    return ranking.KIND_FACTORS.get(hit.kind, 1.0)


def enclosing(hit: CodeHit, hits: list[CodeHit]) -> float:
    """How much closer the hit's class (a method's) or file (a function's) among ``hits``
    is to the query than the hit: the enclosing match, read from the other hits."""
    if hit.kind == "method":
        scope = [h for h in hits if h.path == hit.path and h.qualified_name == hit.parent]
    elif hit.kind == "function":
        scope = [h for h in hits if h.path == hit.path and h.kind == "file"]
    else:
        return 0.0
    closest = max((h.vector_score or 0.0 for h in scope), default=0.0)
    return max(closest - (hit.vector_score or 0.0), 0.0)


def test_a_question_whose_words_name_a_helper_finds_it_first(
    http_repo: RemembrancesService,
) -> None:
    # By meaning alone Headers.get (whose docstring says "Retry-After") and the
    # module's imports read closer to the question; the helper's name holds two of its
    # three words (parse, retry; "after" is a stop word).
    hits = http_repo.code.search("parse the retry-after header", project="client", limit=5)
    assert [h.qualified_name for h in hits[:2]] == ["parse_retry_after", "Headers.get"]
    helper, other = hits[0], hits[1]
    assert helper.vector_score is not None and helper.text_score is not None
    assert other.vector_score is not None and other.text_score is not None
    code = fusion.params_for("code")
    assert helper.score == pytest.approx(
        code.score(helper.vector_score, helper.text_score, 1 / 3, enclosing=enclosing(helper, hits))
    )
    assert other.score == pytest.approx(
        code.score(other.vector_score, other.text_score, enclosing=enclosing(other, hits))
    )


def test_one_shared_word_is_not_a_name_match(http_repo: RemembrancesService) -> None:
    # "parse" names two helpers, but the question is about poems: one word shared
    # with a name counts for nothing, and the hits stay below the enricher's gate.
    hits = http_repo.code.search("how do I parse the meter of a poem?", project="client")
    assert {h.qualified_name for h in hits[:2]} == {"parse_retry_after", "parse_content_type"}
    code = fusion.params_for("code")
    for hit in hits:
        assert hit.vector_score is not None and hit.text_score is not None
        expected = code.score(hit.vector_score, hit.text_score, enclosing=enclosing(hit, hits))
        assert hit.score == pytest.approx(expected * kept(hit))
        assert hit.score < 0.05


def test_a_long_question_weighs_its_words_more(http_repo: RemembrancesService) -> None:
    # Twelve words: coverage weighs more than in the fitted short-question settings.
    # No two of them name a symbol, so name and parameter matches are 0.
    question = (
        "which value did the server send back for this header, the newest one "
        "when the response repeated the same field several times"
    )
    hits = http_repo.code.search(question, project="client")
    long_params = fusion.params_for("code", question)
    assert long_params.text_weight > fusion.params_for("code").text_weight
    assert any((h.text_score or 0.0) > 0.1 for h in hits)
    for hit in hits:
        assert hit.vector_score is not None and hit.text_score is not None
        expected = long_params.score(
            hit.vector_score, hit.text_score, enclosing=enclosing(hit, hits)
        )
        assert hit.score == pytest.approx(expected * kept(hit)), hit.qualified_name


def test_name_match_counts_the_query_words_in_name_and_path(store: Store) -> None:
    def hit(chunk_id: int, path: str, kind: str, qualified: str) -> SearchResult:
        meta = {"kind": kind, "qualified_name": qualified}
        return SearchResult(chunk_id, "code", "client", path, "", meta, 0.0)

    found = name_matches(
        store,
        "Parsing the Retry-After headers",
        [
            hit(1, "net/http_utils.py", "function", "parse_retry_after"),
            hit(2, "net/headers.py", "method", "Headers.parseLine"),
            hit(3, "net/headers.py", "method", "Headers.getAll"),
            hit(4, "net/headers.py", "file", "net/headers.py"),
        ],
    )
    # The query's words are parse (as "parsing"), retry and header ("the" and "after"
    # are stop words). The helper's name holds parse and retry; the method's name
    # parse and, through its class and file, header; the rest only header: one word
    # shared counts nothing, each further one a third.
    assert found == {1: 1 / 3, 2: 1 / 3, 3: 0.0, 4: 0.0}
    assert identifier_words("Headers.getAll net/http_utils") == [
        "headers",
        "get",
        "all",
        "net",
        "http",
        "utils",
    ]


def test_a_name_abbreviates_the_query_words_it_begins(store: Store) -> None:
    def hit(chunk_id: int, qualified: str) -> SearchResult:
        meta = {"kind": "method", "qualified_name": qualified}
        return SearchResult(chunk_id, "code", "client", "net/urls.py", "", meta, 0.0)

    found = name_matches(
        store,
        "add a query parameter to the configuration",
        [hit(1, "URL.copy_add_param"), hit(2, "Config.add_query"), hit(3, "Form.add_address")],
    )
    # query words: add, query, parameter, configuration. ``param`` (five letters)
    # abbreviates parameter and ``config`` configuration; ``add`` does not stand for
    # address nor ``form`` for format (too short to say which word they begin).
    assert found == {1: 1 / 4, 2: 2 / 4, 3: 0.0}


def test_a_name_spells_the_initials_of_the_query_words(store: Store) -> None:
    def hit(chunk_id: int, qualified: str) -> SearchResult:
        meta = {"kind": "class", "qualified_name": qualified}
        return SearchResult(chunk_id, "code", "p", "cache/store.py", "", meta, 0.0)

    candidates = [hit(1, "LRUCache"), hit(2, "Entry.ttl"), hit(3, "add"), hit(4, "FIFOCache")]
    # least, recent, use, cache, implement: ``lru`` holds the first three, ``cache``
    # the fourth; FIFOCache only cache (and the path's store and cache).
    found = name_matches(store, "least recently used cache implementation", candidates)
    assert found == {1: 3 / 5, 2: 0.0, 3: 0.0, 4: 0.0}
    # Stop words count among the initials: "time to live" spells ttl (entri, expir,
    # time, live: ``Entry.ttl`` holds entri, time and live).
    found = name_matches(store, "entries expire after their time to live", candidates)
    assert found == {1: 0.0, 2: 2 / 4, 3: 0.0, 4: 0.0}
    # A name's word that is itself one of the words it would spell is no acronym:
    # "add dict data" spells add, and ``add`` shares only add (and the path's nothing).
    found = name_matches(store, "add dict data to the store", candidates)
    assert found == {1: 0.0, 2: 0.0, 3: 1 / 4, 4: 0.0}
    # A run that starts or ends with a stop word spells nothing: "a post into" is
    # not ``api``, "path url to" not ``put``.
    found = name_matches(store, "turn a post into a get", [*candidates, hit(5, "api.put")])
    assert found[5] == 0.0
    found = name_matches(store, "build the path url to use", [hit(5, "api.put")])
    assert found[5] == 0.0
    # Two words are too few to tell initials from chance ("least used" is not lru).
    found = name_matches(store, "evict the least used cache entry", candidates)
    assert found[1] == found[4]


CACHES = '''\
import os
from collections import OrderedDict


class LRUCache:
    """A cache of a fixed capacity: a full cache drops an entry to take a new one."""

    def __init__(self, capacity):
        self.capacity = capacity
        self._items = OrderedDict()

    def get(self, key):
        self._items.move_to_end(key)
        return self._items[key]

    def set(self, key, value):
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self.capacity:
            self._items.popitem(last=False)


class DiskCache:
    """A cache that keeps its entries as files in a directory."""

    def __init__(self, folder):
        self.folder = folder

    def get(self, key):
        with open(os.path.join(self.folder, key), "rb") as f:
            return f.read()


def cache_size(cache):
    """How many entries a cache holds now."""
    return len(cache._items)
'''


def test_a_question_that_spells_out_an_acronym_finds_the_name(tmp_path: Path) -> None:
    # Nothing in LRUCache's code says "least recently used"; its name does. By meaning
    # alone the class and the cache_size helper read as close (0.40 and 0.39).
    write(tmp_path / "repo" / "caching.py", CACHES)
    with remembrances.open(tmp_path / "m.db", embedder="local") as svc:
        svc.code.index(tmp_path / "repo", project="p")
        hits = svc.code.search("least recently used cache implementation", project="p")
    assert hits[0].qualified_name == "LRUCache"
    cls = hits[0]
    assert cls.vector_score is not None and cls.text_score is not None
    # least, recent, use (lru) and cache of least, recent, use, cache, implement
    assert cls.score == pytest.approx(
        fusion.params_for("code").score(cls.vector_score, cls.text_score, 3 / 5)
    )


def test_enclosing_match_is_how_much_closer_a_symbols_class_or_file_is() -> None:
    def hit(chunk_id: int, path: str, kind: str, qualified: str, cosine: float) -> SearchResult:
        meta = {"kind": kind, "qualified_name": qualified}
        return SearchResult(chunk_id, "code", "ui", path, "", meta, 0.0, vector_score=cosine)

    found = enclosing_matches(
        [
            hit(1, "ui/bar.py", "class", "ProgressBar", 0.6),
            hit(2, "ui/bar.py", "method", "ProgressBar.eta", 0.35),
            hit(3, "ui/bar.py", "method", "ProgressBar.update", 0.7),  # closer than its class
            hit(4, "ui/clock.py", "method", "Clock.tick", 0.2),  # its class is not a candidate
            hit(5, "ui/clock.py", "file", "ui/clock.py", 0.5),
            hit(6, "ui/clock.py", "file", "ui/clock.py", 0.45),  # another part of the file
            hit(7, "ui/clock.py", "function", "time_left", 0.3),
            hit(8, "ui/bar.py", "function", "render", 0.3),  # bar.py's file is not one
        ]
    )
    assert found == pytest.approx({2: 0.25, 7: 0.2})


PROGRESS = """\
import time


class ProgressBar:
    \"\"\"A bar in the terminal that shows how far a long task has come.\"\"\"

    def __init__(self, total):
        self.total = total
        self.done = 0
        self.started = time.monotonic()

    def update(self, steps):
        self.done += steps

    def eta(self):
        elapsed = time.monotonic() - self.started
        return elapsed / max(self.done, 1) * (self.total - self.done)
"""

CLOCK = """\
import time


def elapsed(task):
    \"\"\"How long a task has been running.\"\"\"
    return time.monotonic() - task.started


def average_duration(durations):
    \"\"\"The mean of past run times.\"\"\"
    return sum(durations) / max(len(durations), 1)


def time_until(deadline):
    \"\"\"Time remaining until a deadline.\"\"\"
    return max(deadline - time.time(), 0.0)
"""


def test_a_method_takes_part_of_its_classs_closeness(tmp_path: Path) -> None:
    # The question reads close to ProgressBar (0.6) and only a little to its eta
    # method (0.37), whose code says nothing about bars; the methods take part of
    # their class's closeness and so come before the clock module's file and helpers.
    root = tmp_path / "ui"
    root.mkdir()
    (root / "bar.py").write_text(PROGRESS)
    (root / "clock.py").write_text(CLOCK)
    with remembrances.open(tmp_path / "ui.db", embedder="local") as svc:
        svc.code.index(root, project="ui")
        hits = svc.code.search("estimate the remaining time of a progress bar", project="ui")
        names = [h.qualified_name for h in hits]
        assert names[0] == "ProgressBar"
        first_clock = min(i for i, h in enumerate(hits) if h.path == "clock.py")
        assert names.index("ProgressBar.eta") < first_clock
        assert names.index("ProgressBar.__init__") < first_clock
        params = fusion.params_for("code")
        for hit in hits:
            assert hit.vector_score is not None and hit.text_score is not None
            if hit.kind == "method":
                assert enclosing(hit, hits) > 0.1  # the class reads closer than each method
            # progress and bar (of the five query words) name the class and its methods
            name = 1 / 5 if hit.qualified_name.startswith("ProgressBar") else 0.0
            expected = params.score(
                hit.vector_score, hit.text_score, name, enclosing=enclosing(hit, hits)
            )
            assert hit.score == pytest.approx(expected * kept(hit)), hit.qualified_name


VALIDATORS = """\
class _LengthValidator:
    def __init__(self, limit, message):
        self.limit = limit
        self.message = message

    def __call__(self, inst, attr, value):
        if len(value) > self.limit:
            raise ValueError(self.message.format(name=attr.name, limit=self.limit))


def longest(limit):
    return _LengthValidator(limit, "{name} is longer than {limit}")


def pattern(regex, flags=0):
    import re

    compiled = re.compile(regex, flags)

    def check(inst, attr, value):
        if not compiled.fullmatch(value):
            raise ValueError(f"{attr.name} does not match {regex}")

    return check
"""


def test_a_parameter_the_query_writes_as_code_finds_its_function(tmp_path: Path) -> None:
    # By meaning and words the class's __call__ (which raises) reads closer; the
    # docstring-style *limit* names the factory's parameter.
    root = tmp_path / "checks"
    root.mkdir()
    (root / "validators.py").write_text(VALIDATORS)
    with remembrances.open(tmp_path / "checks.db", embedder="local") as svc:
        svc.code.index(root, project="checks")
        params = fusion.params_for("code")
        asked = "A validator that raises `ValueError` if the value is longer than *limit*."
        listed = svc.code.search(asked, project="checks")
        hits = {h.qualified_name: h for h in listed}
        assert next(iter(hits)) == "longest"
        for name, parameter in (("longest", 1.0), ("_LengthValidator.__call__", 0.0)):
            hit = hits[name]
            assert hit.vector_score is not None and hit.text_score is not None
            # no name match: "valid" (the file) is the only query word any name holds
            expected = params.score(
                hit.vector_score, hit.text_score, 0.0, parameter, enclosing(hit, listed)
            )
            assert hit.score == pytest.approx(expected)
        # the same words in prose name no parameter: the raising method stays first
        plain = "A validator that raises ValueError if the value is longer than the limit."
        found = svc.code.search(plain, project="checks")
        assert found[0].qualified_name == "_LengthValidator.__call__"
        assert all(
            h.score
            == pytest.approx(
                params.score(
                    h.vector_score or 0.0, h.text_score or 0.0, enclosing=enclosing(h, found)
                )
                * kept(h)
            )
            for h in found
        )


def test_code_words_are_the_identifiers_a_query_marks_as_code() -> None:
    assert code_words("raises `ValueError` if longer than *limit* or **max_size**") == {
        "valueerror",
        "limit",
        "max_size",
    }
    assert code_words("Same as `attr.asdict`, like :meth:`.Signer.unsign` or ``run()``") == {
        "asdict",
        "unsign",
        "run",
    }
    # a code span that is not one identifier, emphasis over several words, plain prose
    assert code_words("adds :term:`dunder methods`, `a + b`, *very* important") == {"very"}
    assert code_words("python check if a file exists, e.g. on Windows") == set()
    # identifiers no prose word looks like
    assert code_words("skip the proxy for no_proxy hosts via os.environ and maxRetries") == {
        "no_proxy",
        "environ",
        "maxretries",
    }
    # A name written as a call names a function: no parameter match for it.
    query = "arw.format('MMMM Do, YYYY') where are the tokens replaced, see ``run()`` and *deep*"
    assert code_words(query) == {"format", "run", "deep"}
    assert code_words(query, calls=False) == {"deep"}
    strftime = SearchResult(
        1, "code", "p", "arrow.py", "", {"kind": "method", "name": "strftime",
        "signature": "def strftime(self, format: str) -> str:", "language": "python"}, 0.0,
    )  # fmt: skip
    assert parameter_matches(query, [strftime]) == {}
    assert parameter_matches("what `format` does strftime take?", [strftime]) == {1: 1.0}


def test_parameter_names_from_signatures_in_any_language() -> None:
    cases = [
        ("def le(val)", "le", "python", {"val"}),
        (
            "def get(self, url: str, params: dict[str, int] | None = None, *args, **kw) -> R",
            "get",
            "python",
            {"url", "params", "args", "kw"},
        ),
        ("async def fetch(cls, /, *, timeout=Timeout(5, read=2))", "fetch", "python", {"timeout"}),
        ("func (s *Server) Serve(l net.Listener, a, b int) error", "Serve", "go", {"l", "a", "b"}),
        ("fn push(&mut self, mut value: Vec<u8>)", "push", "rust", {"value"}),
        ("function get(url: string, opts?: Options)", "get", "typescript", {"url", "opts"}),
        (
            "public int count(final List<String, Integer> items, int max)",
            "count",
            "java",
            {"items", "max"},
        ),
        ("static int parse(const char *src, size_t n)", "parse", "c", {"src", "n"}),
        ("def item(name = nil, **opts)", "item", "ruby", {"name", "opts"}),
        ("function save($path, $data)", "save", "php", {"path", "data"}),
        ("class Factory(Base)", "", "python", {"base"}),  # callers ask for functions only
        ("def broken(a, b", "broken", "python", {"a", "b"}),
    ]
    for signature, name, language, expected in cases:
        assert parameter_names(signature, name, language) == expected, signature


CLOSURES = '''\
def retrying(attempts):
    """Retry the decorated call."""

    def decorate(func):
        def wrapper(*args, **kwargs):
            for _ in range(attempts - 1):
                try:
                    return func(*args, **kwargs)
                except ConnectionError:
                    continue
            return func(*args, **kwargs)

        return wrapper

    return decorate


class Client:
    def fetch(self, url):
        def opener():
            return url

        return opener()
'''


def test_a_closure_is_part_of_its_functions_chunk(code: CodeIndexer, tmp_path: Path) -> None:
    root = tmp_path / "deco"
    root.mkdir()
    (root / "retry.py").write_text(CLOSURES)
    code.index(root, project="deco")
    hits = code.search("except ConnectionError continue", project="deco", limit=10)
    names = [h.qualified_name for h in hits]
    assert names[0] == "retrying"
    assert "except ConnectionError" in hits[0].code  # the closure's code, not elided
    # closures and local functions have no chunk of their own; methods still do
    assert not {"retrying.decorate", "retrying.decorate.wrapper", "Client.fetch.opener"} & set(
        names
    )
    fetch = code.search("fetch opener url", project="deco", limit=10)
    assert "Client.fetch" in [h.qualified_name for h in fetch]
    assert [s.qualified_name for s in code.find_symbol("wrapper", project="deco")] == [
        "retrying.decorate.wrapper"
    ]  # still a symbol: find_symbol, outlines and references know it


def test_a_long_symbol_is_one_hit(code: CodeIndexer, tmp_path: Path) -> None:
    root = tmp_path / "long"
    root.mkdir()
    body = "".join(f"    total += checksum_step(data, {i})\n" for i in range(120))
    (root / "sums.py").write_text(
        f"def checksum(data):\n    total = 0\n{body}    return total\n\n\n"
        "def checksum_step(data, i):\n    return data[i] * i\n"
    )
    code.index(root, project="long")
    parts = code.search("checksum total data", project="long", mode="text", limit=10)
    assert sum(h.qualified_name == "checksum" for h in parts) > 1  # indexed in parts
    hits = code.search("checksum total data", project="long", limit=10)
    assert [h.qualified_name for h in hits].count("checksum") == 1
    assert {h.qualified_name for h in hits} == {"checksum", "checksum_step"}


def test_tests_lose_most_of_their_score_unless_the_question_is_about_tests(
    code: CodeIndexer, tmp_path: Path
) -> None:
    # a test names what it tests and reads like the question, so with a project's tests
    # indexed they took the top places (devsuite code sets with tests: 0.754 -> 0.648)
    root = tmp_path / "web"
    write(
        root / "web" / "cookies.py",
        'def set_cookie(response, name, value):\n    """Set a cookie on the response."""\n'
        "    response.headers['Set-Cookie'] = f'{name}={value}'\n",
    )
    write(
        root / "tests" / "test_cookies.py",
        "from web.cookies import set_cookie\n\n"
        "def test_set_cookie_on_the_response():\n"
        "    set_cookie(response, 'a', 'b')  # set a cookie on the response\n",
    )
    code.index(root)

    def score(query: str, **kw: object) -> dict[str, float]:
        return {h.path: h.score for h in code.search(query, mode="hybrid", **kw)}  # type: ignore[arg-type]

    plain = score("set a cookie on the response")
    asked = score("set a cookie on the response", path="tests")
    assert max(plain, key=plain.__getitem__) == "web/cookies.py"
    assert plain["tests/test_cookies.py"] == pytest.approx(
        asked["tests/test_cookies.py"] * ranking.TEST_FILE_FACTOR
    )
    # a question that names a test asks for it; one that says "tests" in prose asked,
    # on the development suite, for the library's own testing helpers every time
    for question, kept in [
        ("why does test_set_cookie_on_the_response fail", True),
        ("set a cookie on the response in tests", False),
        # a name that only looks like a test's: no test file defines it
        ("does set_cookie take test_size", False),
    ]:
        mine, in_tests = score(question), score(question, path="tests")
        expected = in_tests["tests/test_cookies.py"] * (1 if kept else ranking.TEST_FILE_FACTOR)
        assert mine["tests/test_cookies.py"] == pytest.approx(expected), question


def test_a_name_the_code_defines_too_does_not_ask_for_the_tests(
    code: CodeIndexer, tmp_path: Path
) -> None:
    # Django's test stubs define as_sql like a hundred of its expressions: "WhereNode
    # as_sql" brought the stubs back to full score, and one ranked first
    root = tmp_path / "orm"
    write(
        root / "orm" / "where.py",
        "class WhereNode:\n"
        "    def as_sql(self, compiler):\n"
        '        """Return the SQL of the where clause and its parameters."""\n'
        "        return ' AND '.join(compiler.compile(c) for c in self.children), []\n",
    )
    write(
        root / "tests" / "test_where.py",
        "class DummyNode:\n"
        "    def as_sql(self, compiler):\n"
        "        return 'dummy', []\n\n\n"
        "def test_where_node_as_sql():\n"
        "    assert DummyNode().as_sql(None) == ('dummy', [])\n",
    )
    code.index(root)

    def stub(query: str, **kw: object) -> float:
        hits = code.search(query, mode="hybrid", **kw)  # type: ignore[arg-type]
        return next(h.score for h in hits if h.qualified_name == "DummyNode.as_sql")

    for question, kept in [
        ("WhereNode as_sql", False),  # orm/where.py defines as_sql too
        ("DummyNode as_sql", True),  # only a test defines DummyNode
    ]:
        expected = stub(question, path="tests") * (1 if kept else ranking.TEST_FILE_FACTOR)
        assert stub(question) == pytest.approx(expected), question
    assert code.search("WhereNode as_sql")[0].path == "orm/where.py"


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_app.py", True),
        ("pkg/tests/helpers.py", True),
        ("polls/tests.py", True),  # what Django's startapp makes
        ("pkg/foo_tests.py", True),
        ("src/app_test.go", True),
        ("pkg/testdata/input.go", True),
        ("src/foo_test.cc", True),
        ("src/foo_unittest.cc", True),
        ("web/button.spec.tsx", True),
        ("lib/util.test.js", True),
        ("cypress/e2e/login.cy.ts", True),
        ("e2e/login.ts", True),
        ("test/app.js", True),  # a top-level test folder (Node)
        ("src/test/java/AppTest.java", True),
        ("src/test/kotlin/FooSpec.kt", True),
        ("packages/core/test/util.js", True),  # a monorepo's package
        ("src/FooTest.php", True),
        ("src/lib/tests.rs", True),
        ("conftest.py", True),
        ("click/testing.py", False),  # libraries' own testing helpers
        ("werkzeug/test.py", False),
        ("django/test/client.py", False),
        ("spring-test/src/main/java/org/springframework/test/web/MockMvc.java", False),
        ("src/main/java/org/junit/Test.java", False),
        ("src/main/kotlin/TypeSpec.kt", False),  # production classes named ...Spec
        ("kubernetes/client/openapi/models/V1PodSpec.java", False),
        ("providers/fips/self_test.c", False),
        ("src/contest.py", False),
        ("latest/app.py", False),
    ],
)
def test_what_counts_as_a_test_file(path: str, test: bool) -> None:
    assert ranking.is_test(path) is test


def test_a_whole_file_and_a_constant_keep_half_their_score(tmp_path: Path) -> None:
    # they name many things or list many values, and read close to many questions: on
    # held-out structlog and sqlite-utils questions they took the helpers' places
    root = tmp_path / "db"
    root.mkdir()
    (root / "types.py").write_text(
        'SQLITE_TYPES = {"int": "INTEGER", "float": "REAL", "str": "TEXT", "bytes": "BLOB"}\n'
        "\n\n"
        "def storage_class(value):\n"
        '    """The SQLite storage class for a Python value."""\n'
        '    return SQLITE_TYPES.get(type(value).__name__, "TEXT")\n'
    )
    with remembrances.open(tmp_path / "db.db", embedder="local") as svc:
        svc.code.index(root, project="db")
        question = "which storage class does a python value get in the database"
        hits = svc.code.search(question, project="db", limit=10)
        params = fusion.params_for("code", question)
        assert "constant" in {h.kind for h in hits}
        for hit in hits:
            assert hit.vector_score is not None and hit.text_score is not None
            if hit.kind in ("constant", "file"):
                formula = params.score(hit.vector_score, hit.text_score)
                assert hit.score == pytest.approx(0.5 * formula), hit.kind
        assert hits[0].qualified_name == "storage_class"
        # a search for constants asked for them: they keep their scores
        asked = svc.code.search(question, project="db", kinds="constant")
        assert [h.kind for h in asked] == ["constant"]
        assert asked[0].score == pytest.approx(
            params.score(asked[0].vector_score or 0.0, asked[0].text_score or 0.0)
        )


def test_a_files_chunk_keeps_half_its_score(http_repo: RemembrancesService) -> None:
    hits = http_repo.code.search("parse the retry-after header", project="client", limit=10)
    files = [h for h in hits if h.kind == "file"]
    assert files
    code = fusion.params_for("code")
    for hit in files:  # no name in the path matches: the score is the formula's, halved
        assert hit.vector_score is not None and hit.text_score is not None
        assert hit.score == pytest.approx(0.5 * code.score(hit.vector_score, hit.text_score))
