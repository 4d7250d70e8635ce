"""Any user string becomes a valid FTS5 query (or none) and never raises."""

from __future__ import annotations

import apsw
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remembrances import Chunk, Store
from remembrances.fts_query import (
    MAX_TERMS,
    fts_query,
    query_terms,
    written_apart,
    written_joined,
)

FTS_SYNTAX = st.sampled_from(
    [
        '"',
        "'",
        "AND",
        "OR",
        "NOT",
        "NEAR",
        "NEAR(",
        "-",
        ":",
        "*",
        "^",
        "(",
        ")",
        "{",
        "}",
        "?",
        "+",
        "col:",
        "🎉",
        "é",
        "\\",
        "\x00",
        " ",
        "\n",
    ]
)
QUERIES = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(FTS_SYNTAX, st.text(max_size=8)), max_size=30).map(" ".join),
)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=QUERIES)
def test_any_string_is_a_valid_fts5_query(query: str) -> None:
    match = fts_query(query)
    if match is None:
        assert not query_terms(query)
        return
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO t (text) VALUES ('the quick brown fox')")
    conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=QUERIES)
def test_store_text_search_never_raises(store: Store, query: str) -> None:
    if store.count() == 0:
        store.put_source("kb", "a", [Chunk("NEAR the quick brown fox: AND or NOT? don't")])
    for result in store.search(query, mode="text"):
        assert 0.0 <= result.score <= 1.0


def test_terms_are_or_ed_quoted_and_stop_words_dropped() -> None:
    # "time out" is timeout's other spelling (a phrase: the two words next to each other)
    assert fts_query("What is the busy-timeout?") == '"busy" OR "timeout" OR "time out"'
    assert fts_query("NEAR AND NOT") == '"near"'
    assert fts_query("to be or not to be") == '"to" OR "be" OR "or" OR "not"'
    assert fts_query("") is None and fts_query("?!") is None


def test_identifiers_are_split_at_camel_case() -> None:
    terms = query_terms("getUserName HTTPServer")
    assert terms[:4] == ["getusername", "get", "user", "name"]
    assert {"http", "server"} <= set(terms)


def test_long_queries_are_capped() -> None:
    words = " ".join(f"word{i}" for i in range(500))
    assert len(query_terms(words)) == MAX_TERMS
    # the other spellings count too: at most MAX_TERMS terms reach FTS5 in all
    spelled = " ".join(f"rollback{i} setup{i} RFC {i}" for i in range(100))
    assert fts_query(spelled).count(" OR ") + 1 == MAX_TERMS


def test_a_stop_word_in_capitals_is_a_keyword_or_an_acronym() -> None:
    # the question is about SQL's WHERE, the IT team and the US, not about "where"
    assert query_terms("how does the ORM build a WHERE clause") == [
        "orm",
        "build",
        "where",
        "clause",
    ]
    assert query_terms("Is the IT team in the US office?") == ["it", "team", "us", "office"]
    # capitals throughout are shouting, not keywords; so are emphasis and clock times
    assert fts_query("NEAR AND NOT") == '"near"'
    assert query_terms("DO call the vendor at 10 AM") == ["call", "vendor", "10"]
    assert query_terms("rows that are NOT IN the table or IS NULL") == [
        "rows",
        "not",
        "in",
        "table",
        "is",
        "null",
    ]


def test_letters_and_a_number_are_one_word() -> None:
    # "sha256" is not "sha" or "256": a chunk about SHA-1 or 256 colours is no match
    assert query_terms("sha256 of the file") == ["sha256", "file"]
    assert query_terms("UTF8 and Python3") == ["utf8", "python3"]
    assert query_terms("parseHTTPResponse2") == [
        "parsehttpresponse2",
        "parse",
        "http",
        "response",
        "2",
    ]


def test_words_written_apart_are_also_asked_joined() -> None:
    assert written_joined("RFC 5545, then roll back the deploy") == [
        ("rfc", "5545"),
        ("roll", "back"),
    ]
    # one word already, a stop word, or a number and the next word: no pair
    assert written_joined("rfc5545 in the 3 days of version") == []
    assert fts_query("RFC 5545") == '"rfc" OR "5545" OR "rfc5545"'


def test_a_hyphen_or_slash_joins_letters_and_a_number() -> None:
    assert query_terms("the SHA-256 digest over HTTP/2 on 64-bit") == [
        "sha256",
        "digest",
        "http2",
        "64bit",
    ]
    assert fts_query("UTF-8") == '"utf8" OR "utf 8"'
    # dates, versions and paths are left as they are
    assert query_terms("2024-05-01 v2.3-1 a/b-1") == ["2024", "05", "01", "v2", "3", "1", "b"]


def test_joined_words_are_also_asked_apart() -> None:
    assert written_apart("rollback via the login page, sha256 and 64bit") == [
        ("roll", "back"),
        ("log", "in"),
        ("sha", "256"),
        ("64", "bit"),
    ]
    # not split: "on" endings (version, python), short or stop-word verbs (upon, within),
    # and "in" but in a few words ("satin" is no "sat in", "bulletin" no "bullet in")
    assert written_apart("python version upon within common") == []
    assert written_apart("satin bulletin domain plugin") == [("plug", "in")]
    # accents are read as the index reads them, on both engines alike
    assert written_apart("Café-2") == [("cafe", "2")]
    assert fts_query("rollback") == '"rollback" OR "roll back"'


def test_both_engines_ask_for_the_same_spellings() -> None:
    from remembrances.postgres.tsquery import tsquery_text

    assert fts_query("Café-2 rollback") == '"café2" OR "rollback" OR "cafe 2" OR "roll back"'
    assert tsquery_text("Café-2 rollback") == (
        "'cafe2' | 'rollback' | ('cafe' <-> '2') | ('roll' <-> 'back')"
    )
