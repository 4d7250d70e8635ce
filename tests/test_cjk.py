"""Chinese, Japanese and Korean runs read as pairs of characters, on both sides of the
text index."""

from __future__ import annotations

import pytest

from remembrances.cjk import cjk_words
from remembrances.fts_query import query_terms


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("東京に住んでいます", ["東京", "京に", "に住", "住ん", "んで", "でい", "いま", "ます"]),
        ("我住在北京。", ["我住", "住在", "在北", "北京", "。"]),
        ("서울에서 살아요", ["서울", "울에", "에서", "살아", "아요"]),
        ("Python3で動く", ["Python3", "で動", "動く"]),
        ("a 猫 b", ["a", "猫", "b"]),  # a lone character stays a word
        ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ"]),  # half-width katakana, read as full-width
        ("\u1109\u1165\u110b\u116e\u11af", ["서울"]),  # decomposed Hangul (NFD)
        ("Ｐｙｔｈｏｎ３で", ["Ｐｙｔｈｏｎ３", "で"]),  # only the runs are normalised
        ("𠮷野家", ["𠮷野", "野家"]),  # outside the BMP
    ],
)
def test_runs_are_read_as_overlapping_pairs(text: str, words: list[str]) -> None:
    assert cjk_words(text).split() == words


@pytest.mark.parametrize("text", ["plain English", "café Привет ελληνικά", "", "ﬁle x² ①"])
def test_other_text_is_left_as_it_is(text: str) -> None:
    assert cjk_words(text) == text


def test_pairs_past_a_limit_are_left_out() -> None:
    assert cjk_words("東京に住む 北京", max_bytes=18).split() == ["東京", "京に", "に住"]
    assert cjk_words("東京 北京 猫", max_bytes=12).split() == ["東京", "北京"]


def test_the_text_around_the_runs_is_left_as_written() -> None:
    # NFKC of the whole text made a word's tokens depend on whether CJK was beside it
    # (ﬁle, x², full-width Latin), and on the Unicode version of the Python reading it
    assert cjk_words("ﬁle x² 東京").split() == ["ﬁle", "x²", "東京"]
    assert cjk_words("ｶﾞｲﾄﾞ", normalize=False).split() == ["ｶﾞ", "ﾞｲ", "ｲﾄ", "ﾄﾞ"]  # step 5's


def test_a_long_question_in_cjk_keeps_its_last_words() -> None:
    # a pair counts half a term: the first 33 characters made 32 pairs and lost 予算
    question = (
        "来週の東京本社での定例会議について事前に確認しておきたいことがいくつかあるのですが、"
        "特に予算の件です"
    )
    assert "予算" in query_terms(question)


def test_a_question_is_read_as_the_index_reads_the_text() -> None:
    assert query_terms("東京はどこ?") == ["東京", "京は", "はど", "どこ"]
    # the pairs are words like any other: quoted, never FTS5 syntax
    assert query_terms('"東京" OR 京都') == ["東京", "京都"]
