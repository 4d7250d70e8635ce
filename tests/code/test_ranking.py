"""Code search ranks by what code has: the symbol's name, closures kept with their
function, one hit per symbol (remembrances/code/ranking.py, parsing/chunking.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import remembrances
from remembrances import RemembrancesService, Store
from remembrances.code import CodeIndexer
from remembrances.code.ranking import identifier_words, name_matches
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
    # By meaning alone the module's imports and Headers.get (whose docstring says
    # "Retry-After") read closer to the question; the helper's name says what is asked.
    hits = http_repo.code.search("parse the retry-after header", project="client", limit=5)
    assert hits[0].qualified_name == "parse_retry_after"
    assert hits[0].score > hits[1].score


def test_a_name_word_alone_does_not_make_an_unrelated_question_relevant(
    http_repo: RemembrancesService,
) -> None:
    # "parse" names two helpers; the question is about poems: it stays below the
    # enricher's code gate (0.05), where the helpers' other evidence leaves it.
    hits = http_repo.code.search("how do I parse the meter of a poem?", project="client")
    assert {h.qualified_name for h in hits[:2]} == {"parse_retry_after", "parse_content_type"}
    assert all(h.score < 0.05 for h in hits)
    assert hits[0].score > 0.0


def test_name_match_is_the_share_of_query_words_in_name_and_path(store: Store) -> None:
    result = SearchResult(
        id=1,
        kind="code",
        collection="client",
        source="net/http_utils.py",
        text="",
        metadata={"kind": "function", "qualified_name": "parse_retry_after"},
        score=0.0,
    )
    method = SearchResult(
        id=2,
        kind="code",
        collection="client",
        source="net/headers.py",
        text="",
        metadata={"kind": "method", "qualified_name": "Headers.getAll"},
        score=0.0,
    )
    file_chunk = SearchResult(
        id=3,
        kind="code",
        collection="client",
        source="net/headers.py",
        text="",
        metadata={"kind": "file", "qualified_name": "net/headers.py"},
        score=0.0,
    )
    found = name_matches(store, "Parsing the Retry-After headers", [result, method, file_chunk])
    # The query's words are parse (as "parsing"), retry and header ("after" and "the"
    # are stop words): the helper's name holds two of three; "headers" names the
    # method (its class and its file) and the file chunk (its path).
    assert found == {1: 2 / 3, 2: 1 / 3, 3: 1 / 3}
    assert identifier_words("Headers.getAll net/http_utils") == [
        "headers",
        "get",
        "all",
        "net",
        "http",
        "utils",
    ]


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
