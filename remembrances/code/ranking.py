"""What code search adds to the store's ranking: what code has as evidence, one hit per symbol.

The store scores each candidate on its cosine and its coverage of the query's
words (docs/search.md). Code has one more telling thing: a plain-language
question often says what the function is called ("parse the retry-after
header" asks for ``parse_retry_after``). Coverage cannot see it, since it caps
each word at one occurrence and a name's words also occur in the body of every
caller. So each candidate gets a third number, its *name match*: how many of
the query's words (stemmed as the text index stems them, stop words dropped)
are words of the symbol's name, of its enclosing names (``Response`` for
``Response.json``) or of its file's path (``retry`` in ``utils/retry.py``),
less one, over the number of the query's words. One shared word says little
(``get``, ``file`` and ``list`` name thousands of functions): counted from the
first word, the name match lowered CoSQA dev's nDCG@10 at every weight (0.607
-> 0.603 at 1, 0.572 at 3); counted from the second it does not (0.607 at 2).

A fourth number is the *parameter match*: 1 when the query writes a word as code
(inside backticks, as ``*name*`` the way docstrings name a parameter, or as an
identifier no prose word looks like: ``no_proxy``, ``maxRetries``) and that word
is the name of one of the function's parameters, read from its signature.
"raises if called with a number greater than *val*" asks for the ``le(val)`` that
says it, not for the validator class whose ``__call__`` raises. Plain words are
not matched against parameters: ``path``, ``value`` and ``name`` are parameters of
half of any code base (matching every query word lowered CoSQA dev's nDCG@10 from
0.605 to 0.593 at weight 1 and the self-supervised sets of the development suite
too); a word the query marks as code is a precise reference (CoSQA's web queries
mark none, so it is unchanged). Measured in benchmarks/RESULTS.md, "Development suite".

Names abbreviate words: ``copy_add_param`` answers "add a query parameter", ``Config``
"the configuration". A name's word of five letters or more counts as matching a query
word it begins (``param`` / ``parameter``, ``config`` / ``configuration``); shorter
ones (``add`` / ``address``, ``form`` / ``format``) say too little. A name's word of
three to five letters also matches the consecutive query words whose initials spell it
(``LRUCache`` answers "a least recently used cache").

A fifth number is the *enclosing match*: how much closer (in cosine) the chunk that
encloses a symbol (a method's class, a top-level function's file) is to the question
than the symbol's own chunk, when that chunk is among the candidates. A method's chunk
holds its own code, not what its class is for: "estimate the remaining time of a
progress bar" reads close to ``ProgressBar`` and only a little to its ``eta``; the
method takes part of its class's closeness (``enclosing_weight`` / ``cosine_weight``).

The score is then ``fusion.params_for("code", query).score(cosine, coverage, name,
parameter, enclosing)``: words weigh more in a long question (``FusionParams.for_question``).

A hit from a test file (``TEST_PATH``: ``tests/``, ``test_*.py``, ``*_test.go``,
``*.spec.ts``...) then keeps ``TEST_FILE_FACTOR`` of its score, unless the question
names a test's symbol (``names_a_test``) or the search is limited to a test folder. A test
names what it tests and reads like the question ("test_cookie_is_sent"), so in a
repository with its tests, tests took the top places: the development suite's code
sets with each project's tests added lost 0.106 nDCG@10 on their fit halves (0.754 ->
0.648), and won 0.093 of it back with the factor (benchmarks/RESULTS.md).

A long symbol is indexed as several parts, and a search showed each part as a
hit of its own, so one long function could fill the top ten; hits are folded
into their symbol (the best part stands for it).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from .. import fusion, name_match
from ..fts_query import split_identifier
from ..records import SearchResult
from ..store import Store
from .tables import KIND

_PART = re.compile(r"[A-Za-z0-9]+")
#: Paths of tests: test folders, and the file names test runners look for. A folder
#: named ``test`` counts only at the top, as ``src/test`` (Maven, Gradle) or in a
#: monorepo's package (``packages/core/test``): deeper it is often a library's own
#: testing package (``django/test/``, ``org/springframework/test/``). A class named
#: ``...Spec`` is often production code (``TypeSpec``, ``V1PodSpec``), and a C file
#: ``..._test.c`` too (OpenSSL's ``self_test.c``): neither counts by its name alone.
TEST_PATH = re.compile(
    r"(^|/)(tests|__tests__|testdata|e2e|cypress|spec)/"
    r"|^((src|packages/[^/]+)/)?test/"
    r"|(^|/)(test_[^/]*\.py|[^/]*_tests?\.py|tests\.py|conftest\.py|tests\.rs)$"
    r"|_(unit)?test\.(go|rb|exs?|cc|cpp|cxx)$|_spec\.rb$"
    r"|\.(test|spec|cy)\.[cm]?[jt]sx?$"
    r"|[A-Za-z0-9]Tests?\.(java|kt|kts|cs|swift|php|scala|groovy)$"
)
TEST_FILE_FACTOR = 0.1
#: What a whole file's chunk and a constant keep of their score. The calibration was
#: fitted on functions (CoSQA), and a file's chunk, which names everything in it, or a
#: table of constants read close to many questions: they took top-ten places from
#: the small helpers asked for (held-out structlog and sqlite-utils questions).
KIND_FACTORS = {"file": 0.5, "constant": 0.5}
_EXTENSION = re.compile(r"\.[A-Za-z0-9]+$")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
#: Code in a query: `x` / ``x`` (Markdown, reST roles like :meth:`x`) and *x*.
_BACKTICKED = re.compile(r"`+([^`]+)`+")
_STARRED = re.compile(r"(?<![*\w])\*{1,2}([A-Za-z_]\w*)\*{1,2}(?![*\w])")
#: Identifiers written bare that no prose word looks like: snake_case, _private,
#: camelCase / PascalCase with an inner capital, dotted module.name.
_CODE_LIKE = re.compile(
    r"(?<![\w.])(?:[A-Za-z]\w*_\w+|_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
    r"|[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+)(?![\w])"
)
#: Kinds whose signature lists parameters.
_CALLABLE = frozenset({"function", "method"})
#: Words that can stand before a parameter's name (``mut x``, ``final int n``).
_MODIFIERS = frozenset(
    {"mut", "ref", "const", "final", "readonly", "public", "private", "protected", "in", "out"}
    | {"params", "var", "val", "let", "struct", "unsigned", "signed", "volatile"}
)
#: Languages whose parameters are written type first (``int count``): the name is last.
_TYPE_FIRST = frozenset({"c", "cpp", "java", "csharp"})


def identifier_words(text: str) -> list[str]:
    """Lower-case words of the identifiers in ``text`` (``Session.get_adapter`` ->
    session, get, adapter; ``utils/retryAfter`` -> utils, retry, after)."""
    words: list[str] = []
    for token in _PART.findall(text):
        words.extend(part.lower() for part in split_identifier(token) or [token])
    return words


def symbol_words(result: SearchResult) -> list[str]:
    """The words a code chunk is named by: its qualified name and its path without extension."""
    meta = result.metadata
    path = _EXTENSION.sub("", result.source)
    named = "" if meta.get("kind") == "file" else str(meta.get("qualified_name", ""))
    return identifier_words(f"{named} {path}")


def name_matches(store: Store, query: str, results: Sequence[SearchResult]) -> dict[int, float]:
    """Per result id, the share of the query's words that name it (see the module docstring)."""
    named = {r.id: symbol_words(r) for r in results}
    return name_match.name_matches(store, query, named, abbreviations=True)


def code_words(query: str, *, calls: bool = True) -> frozenset[str]:
    """Lower-cased identifiers that ``query`` writes as code (see the module docstring).

    A dotted name counts by its last part (`attr.asdict`, :meth:`.Signer.unsign`);
    a code span that is not one identifier (`foo(bar)`, :term:`dunder methods`) is
    not a reference to a parameter and counts for nothing. Without ``calls``, a name
    written as a call (`copy()`, ``arw.format('MMMM')``) counts for nothing either: it
    names a function, not a parameter.
    """
    spans = [
        m.group(1).strip().lstrip("~.!")
        for m in _BACKTICKED.finditer(query)
        if calls or not m.group(1).strip().endswith("()")
    ]
    spans = [s.removesuffix("()") for s in spans]
    spans += [m.group(1) for m in _STARRED.finditer(query)]
    unquoted = _BACKTICKED.sub(" ", query)
    spans += [
        m.group(0)
        for m in _CODE_LIKE.finditer(unquoted)
        if len(m.group(0)) > 1 and (calls or unquoted[m.end() : m.end() + 1] != "(")
    ]
    return frozenset(s.rsplit(".", 1)[-1].lower() for s in spans if _DOTTED.fullmatch(s))


def _split_top_level(text: str) -> list[str]:
    """``text`` cut at the commas outside brackets (``a, b: dict[str, int]`` -> 2 parts)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parameter_names(signature: str, name: str, language: str) -> frozenset[str]:
    """Lower-cased parameter names of a function from its signature line, any language.

    The list is the parenthesis after the name (a Go receiver comes before it); each
    parameter loses its default (``= ...``) and its annotation (``: ...``); what is
    left is the name, first (``count int``, ``*args``) or, in languages that write the
    type first, last (``int count``).
    """
    at = signature.find(f"{name}(") if name else -1
    start = at + len(name) if at >= 0 else signature.find("(")
    if start < 0:
        return frozenset()
    depth, end = 0, len(signature)
    for i in range(start, len(signature)):
        if signature[i] == "(":
            depth += 1
        elif signature[i] == ")":
            depth -= 1
            if depth == 0:
                end = i
                break
    names: set[str] = set()
    for parameter in _split_top_level(signature[start + 1 : end]):
        head = parameter.split("=", 1)[0]
        head = re.split(r"(?<!:):(?!:)", head, maxsplit=1)[0]
        words = _IDENTIFIER.findall(head)
        while len(words) > 1 and words[0].lower() in _MODIFIERS:  # mut x, final int n
            words = words[1:]
        if words and words[0].lower() not in ("self", "cls", "this"):
            names.add((words[-1] if language in _TYPE_FIRST else words[0]).lstrip("$").lower())
    return frozenset(names)


def parameter_matches(query: str, results: Sequence[SearchResult]) -> dict[int, float]:
    """Per result id, 1.0 when the query writes one of the function's parameters as code."""
    wanted = code_words(query, calls=False)
    if not wanted:
        return {}
    found: dict[int, float] = {}
    for r in results:
        meta = r.metadata
        if meta.get("kind") not in _CALLABLE:
            continue
        named = parameter_names(
            str(meta.get("signature", "")), str(meta.get("name", "")), str(meta.get("language"))
        )
        if wanted & named:
            found[r.id] = 1.0
    return found


def _scope(r: SearchResult) -> tuple[str, str, str | None] | None:
    """The key of the chunk that encloses ``r``: a method's class, a function's file."""
    meta = r.metadata
    qualified = str(meta.get("qualified_name", ""))
    if meta.get("kind") == "method" and "." in qualified:
        return (r.collection, r.source, qualified.rsplit(".", 1)[0])
    if meta.get("kind") == "function":
        return (r.collection, r.source, None)
    return None


def enclosing_matches(results: Sequence[SearchResult]) -> dict[int, float]:
    """Per method or function, how much closer (cosine) the chunk enclosing it (its
    class, its file) is to the query than it is, when that chunk is among ``results``."""
    closest: dict[tuple[str, str, str | None], float] = {}
    for r in results:
        kind = r.metadata.get("kind")
        if kind in _CALLABLE:
            continue
        named = None if kind == "file" else str(r.metadata.get("qualified_name", ""))
        key = (r.collection, r.source, named)
        closest[key] = max(closest.get(key, 0.0), r.vector_score or 0.0)
    found: dict[int, float] = {}
    for r in results:
        scope = _scope(r)
        enclosing = closest.get(scope) if scope is not None else None
        if enclosing is not None and enclosing > (r.vector_score or 0.0):
            found[r.id] = enclosing - (r.vector_score or 0.0)
    return found


def rescored(
    store: Store,
    query: str,
    results: Sequence[SearchResult],
    *,
    tests: bool = False,
    kinds: Collection[str] = (),
) -> list[SearchResult]:
    """Hybrid results scored with the name, parameter and enclosing matches, best first;
    a file's chunk and a constant keep half (``KIND_FACTORS``) unless the search asked
    for their ``kinds``, and tests lose most of their score unless ``tests`` or the
    question names a test."""
    params = fusion.params_for(KIND, query)
    names = name_matches(store, query, results)
    parameters = parameter_matches(query, results)
    enclosing = enclosing_matches(results)
    demote = not tests and not names_a_test(query, results)
    for r in results:
        r.score = params.score(
            r.vector_score or 0.0,
            r.text_score or 0.0,
            names.get(r.id, 0.0),
            parameters.get(r.id, 0.0),
            enclosing.get(r.id, 0.0),
        )
        kind = str(r.metadata.get("kind"))
        if kind not in kinds:
            r.score *= KIND_FACTORS.get(kind, 1.0)
        if demote and is_test(r.source):
            r.score *= TEST_FILE_FACTOR
    return sorted(results, key=lambda r: (-r.score, r.id))


def names_a_test(query: str, results: Sequence[SearchResult]) -> bool:
    """Whether ``query`` writes, as code (:func:`code_words`), the name of a symbol a
    test file among ``results`` defines (``test_prompt_required``, ``WhereNodeTest``, a
    fixture ``db_session``): then it asks for the tests themselves.

    Saying "tests" in prose does not: each of the development suite's six such
    questions ("run a command in tests and capture its output") asks for the library's
    own testing helper, which the tests that use it outnumber (tested- halves, nDCG@10
    fit / test: 0.734 / 0.793 with prose exempted, 0.743 / 0.796 without). Nor does a
    name that only looks like a test's (``test_size``, ``TestClient``, "fixtures"), nor
    one that code outside the tests defines too: Django's test stubs define ``as_sql``,
    like a hundred of its expressions, and "WhereNode as_sql" is about the latter.
    """
    written = code_words(query)
    if not written:
        return False
    in_tests: set[str] = set()
    elsewhere: set[str] = set()
    for r in results:
        name = str(r.metadata.get("name", "")).lower()
        if name in written:
            (in_tests if is_test(r.source) else elsewhere).add(name)
    return bool(in_tests - elsewhere)


def is_test(path: str) -> bool:
    """Whether a file's path (relative to its project) is a test's (``TEST_PATH``)."""
    return TEST_PATH.search(path) is not None


def one_per_symbol(results: Iterable[SearchResult], limit: int) -> list[SearchResult]:
    """The first (best) part of each symbol, at most ``limit`` of them."""
    seen: set[tuple[str, str, object]] = set()
    kept: list[SearchResult] = []
    for r in results:
        key = (r.collection, r.source, r.metadata.get("symbol"))
        if key in seen:
            continue
        seen.add(key)
        kept.append(r)
        if len(kept) == limit:
            break
    return kept
