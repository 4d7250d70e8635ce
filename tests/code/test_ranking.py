"""Code search ranks by what code has: the symbol's name, the parameters a query
writes as code, closures kept with their function, one hit per symbol
(remembrances/code/ranking.py, parsing/chunking.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import remembrances
from remembrances import RemembrancesService, Store, fusion
from remembrances.code import CodeIndexer
from remembrances.code.ranking import code_words, identifier_words, name_matches, parameter_names
from remembrances.records import SearchResult

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
        code.score(helper.vector_score, helper.text_score, name=1 / 3)
    )
    assert other.score == pytest.approx(code.score(other.vector_score, other.text_score))


def test_one_shared_word_is_not_a_name_match(http_repo: RemembrancesService) -> None:
    # "parse" names two helpers, but the question is about poems: one word shared
    # with a name counts for nothing, and the hits stay below the enricher's gate.
    hits = http_repo.code.search("how do I parse the meter of a poem?", project="client")
    assert {h.qualified_name for h in hits[:2]} == {"parse_retry_after", "parse_content_type"}
    code = fusion.params_for("code")
    for hit in hits:
        assert hit.vector_score is not None and hit.text_score is not None
        assert hit.score == pytest.approx(code.score(hit.vector_score, hit.text_score))
        assert hit.score < 0.05


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
        hits = {h.qualified_name: h for h in svc.code.search(asked, project="checks")}
        assert next(iter(hits)) == "longest"
        for name, parameter in (("longest", 1.0), ("_LengthValidator.__call__", 0.0)):
            hit = hits[name]
            assert hit.vector_score is not None and hit.text_score is not None
            # no name match: "valid" (the file) is the only query word any name holds
            expected = params.score(hit.vector_score, hit.text_score, 0.0, parameter)
            assert hit.score == pytest.approx(expected)
        # the same words in prose name no parameter: the raising method stays first
        plain = "A validator that raises ValueError if the value is longer than the limit."
        found = svc.code.search(plain, project="checks")
        assert found[0].qualified_name == "_LengthValidator.__call__"
        assert all(
            h.score == pytest.approx(params.score(h.vector_score or 0.0, h.text_score or 0.0))
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
