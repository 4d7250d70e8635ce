"""KnowledgeBase: add/replace/get/list/delete/search on a real file with real sqlite-vec."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from remembrances import InvalidInputError, NotFoundError, ReadOnlyError, RemembrancesService, Store
from remembrances.chunking import Chunker
from remembrances.embeddings import HashEmbedder
from remembrances.kb import KnowledgeBase
from tests.conftest import FlakyEmbedder

GUIDE = """# Guide

An introduction to the frobnicator.

## Install

### Linux

Install it with apt: `apt install frobnicator`.

### macOS

Install it with brew: `brew install frobnicator`.

## Usage

Run `frob --fast` to frobnicate quickly.
"""


@pytest.fixture
def kb(store: Store) -> KnowledgeBase:
    return KnowledgeBase(store)


def test_add_get_list_count_delete(kb: KnowledgeBase, store: Store) -> None:
    report = kb.add(GUIDE, source="guide.md", metadata={"lang": "en"})
    assert (report.status, report.chunks) == ("added", 4)
    doc = kb.get("guide.md")
    assert doc.text == GUIDE
    assert doc.title == "Guide"  # the first heading when no title is given
    assert doc.metadata == {"lang": "en"}
    assert (doc.chars, doc.chunks, doc.format) == (len(GUIDE), 4, "markdown")
    assert [d.source for d in kb.list()] == ["guide.md"]
    assert kb.list()[0].text is None
    assert kb.count() == 1 and kb.count(collection="other") == 0
    assert store.count(kind="kb") == 4

    assert kb.delete("guide.md") is True
    assert kb.delete("guide.md") is False
    assert kb.count() == 0 and store.count(kind="kb") == 0
    with pytest.raises(NotFoundError, match=r"guide\.md"):
        kb.get("guide.md")


def test_same_source_in_two_collections_are_two_documents(kb: KnowledgeBase) -> None:
    kb.add("alpha text", source="a", collection="one")
    kb.add("beta text", source="a", collection="two")
    assert kb.get("a", collection="one").text == "alpha text"
    assert kb.get("a", collection="two").text == "beta text"
    assert kb.collections() == {"one": 1, "two": 1}
    assert kb.delete_collection("one") == 1
    assert kb.collections() == {"two": 1}


def test_adding_the_same_document_again_embeds_nothing(
    kb: KnowledgeBase, embedder: HashEmbedder
) -> None:
    kb.add(GUIDE, source="guide.md")
    calls = embedder.calls
    report = kb.add(GUIDE, source="guide.md")
    assert report.status == "unchanged" and report.embedded == 0
    assert embedder.calls == calls


def test_changing_one_section_reembeds_only_its_chunks(
    kb: KnowledgeBase, embedder: HashEmbedder
) -> None:
    kb.add(GUIDE, source="guide.md")
    calls = embedder.calls
    report = kb.add(GUIDE.replace("quickly", "very quickly"), source="guide.md")
    assert report.status == "updated"
    assert (report.embedded, report.cached) == (1, 3)
    assert embedder.calls == calls + 1
    hits = kb.search("very quickly", mode="text")
    assert (hits[0].title, hits[0].heading_path) == ("Guide", "Usage")  # title not repeated


def test_changing_only_metadata_rewrites_without_embedding(
    kb: KnowledgeBase, embedder: HashEmbedder
) -> None:
    kb.add(GUIDE, source="guide.md", metadata={"v": 1})
    calls = embedder.calls
    report = kb.add(GUIDE, source="guide.md", metadata={"v": 2})
    assert report.status == "updated" and embedder.calls == calls
    assert kb.search("frobnicator", where={"v": 2})
    assert kb.search("frobnicator", where={"v": 1}) == []


def test_a_failed_embedding_leaves_the_previous_version_intact(db_path: Path) -> None:
    store = Store(db_path, embedder=FlakyEmbedder(64))
    try:
        kb = KnowledgeBase(store)
        kb.add("the original text about llamas", source="doc")
        with pytest.raises(RuntimeError, match="unavailable"):
            kb.add("a new text that will FAIL to embed", source="doc")
        assert kb.get("doc").text == "the original text about llamas"
        assert [h.text for h in kb.search("llamas")] == ["the original text about llamas"]
    finally:
        store.close()


def test_search_returns_document_heading_and_text(kb: KnowledgeBase) -> None:
    kb.add(GUIDE, source="guide.md", title="Frob manual")
    kb.add("Bananas are yellow fruit.", source="fruit.txt")
    hits = kb.search("how do I install with brew on macOS?")
    assert hits[0].source == "guide.md"
    assert hits[0].title == "Frob manual"
    assert hits[0].heading_path == "Guide > Install > macOS"
    assert "brew install" in hits[0].text
    assert 0.0 <= hits[-1].score <= hits[0].score <= 1.0
    assert "heading_path" not in hits[0].metadata
    assert hits[0].to_dict()["heading_path"] == "Guide > Install > macOS"


def test_collection_and_where_filters_apply_inside_the_search(kb: KnowledgeBase) -> None:
    for i in range(30):  # many strong matches that the filter must exclude
        kb.add(f"deploy checklist number {i}", source=f"noise{i}", collection="noise")
    for i in range(3):
        kb.add(f"deploy notes {i}", source=f"kept{i}", collection="team", metadata={"team": "a"})
        kb.add(f"deploy notes {i} b", source=f"other{i}", collection="team", metadata={"team": "b"})
    hits = kb.search("deploy checklist", collection="team", where={"team": "a"}, limit=3)
    assert sorted(h.source for h in hits) == ["kept0", "kept1", "kept2"]
    assert all(h.collection == "team" for h in hits)
    assert len(kb.search("deploy", collection=["team", "noise"], limit=50)) == 36


def test_min_score_and_modes(kb: KnowledgeBase) -> None:
    kb.add(GUIDE, source="guide.md")
    kb.add("Completely unrelated words about gardening.", source="garden.md")
    assert all(h.score >= 0.9 for h in kb.search("brew install", min_score=0.9))
    assert [h.source for h in kb.search("gardening", mode="text")] == ["garden.md"]
    assert kb.search("gardening", mode="vector")[0].source == "garden.md"
    with pytest.raises(InvalidInputError):
        kb.search("x", min_score=math.nan)
    with pytest.raises(InvalidInputError):
        kb.search("x", min_score=2.0)
    with pytest.raises(InvalidInputError):
        kb.search("x", mode="fuzzy")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "query",
    [
        'AND OR NOT "unbalanced ( NEAR( * ^ : - +',
        "what's the 'install' step?",
        "col:value -excluded (a OR b) NEAR/3 ^start",
        '""""""',
        "*",
        "",
        "   ",
    ],
)
def test_queries_full_of_fts_operators_do_not_fail(kb: KnowledgeBase, query: str) -> None:
    kb.add(GUIDE, source="guide.md")
    kb.add("NEAR and NOT are words here (with parentheses) and 'quotes'.", source="ops.txt")
    hits = kb.search(query)
    assert isinstance(hits, list)
    if query.strip('" *'):
        assert hits, "a query with words should find something"


def test_fts_operator_words_are_searchable_as_words(kb: KnowledgeBase) -> None:
    kb.add("The NEAR operator and the NOT keyword.", source="ops.txt")
    kb.add(GUIDE, source="guide.md")
    assert kb.search("NEAR NOT", mode="text")[0].source == "ops.txt"


def test_an_identifier_counts_fully_only_where_it_is_written_as_the_query_writes_it(
    kb: KnowledgeBase,
) -> None:
    # The tokenizer splits send_file into "send" and "file": both chunks hold both words.
    kb.add("Call send_file(path) to stream a file to the client.", source="api.md")
    kb.add("Send the form first, then attach the file to the message.", source="forms.md")
    kb.add("Read flask.send_file for the options.", source="dotted.md")
    for mode in ("text", "hybrid"):
        hits = {h.source: h.score for h in kb.search("send_file", mode=mode)}  # type: ignore[arg-type]
        assert hits["api.md"] > hits["forms.md"] and hits["dotted.md"] > hits["forms.md"]
    text = {h.source: h.score for h in kb.search("send_file", mode="text")}
    assert text["forms.md"] == pytest.approx(text["api.md"] / 2, rel=0.05)  # LOOSE_PARTS
    # a dotted name is held as its last part too; a word also said alone counts fully
    assert kb.search("flask.send_file", mode="text")[0].source in ("api.md", "dotted.md")
    both = {h.source: h.score for h in kb.search("send_file: send it", mode="text")}
    assert both["forms.md"] > text["forms.md"]
    # diacritics are read as the tokenizer reads them, in the query and in the chunk
    kb.add("Call café_menu() to list the dishes.", source="menu.md")
    kb.add("The café has a menu of the day.", source="cafe.md")
    for query in ("café_menu", "cafe_menu"):
        found = {h.source: h.score for h in kb.search(query, mode="text")}
        assert found["menu.md"] > found["cafe.md"], (query, found)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"text": ""}, "empty"),
        ({"text": "  \n\t "}, "empty"),
        ({"text": None}, "string"),
        ({"text": b"bytes"}, "string"),
        ({"text": "bad \ud800 surrogate"}, "Unicode"),
        ({"source": ""}, "source"),
        ({"source": 7}, "source"),
        ({"source": "x" * 5000}, "source"),
        ({"collection": " "}, "collection"),
        ({"title": ""}, "title"),
        ({"metadata": ["not", "a", "mapping"]}, "mapping"),
        ({"metadata": {"heading_path": "x"}}, "heading_path"),
        ({"metadata": {"score": math.nan}}, "JSON"),
        ({"metadata": {1: "int key"}}, "JSON"),
        ({"format": "docx"}, "format"),
    ],
)
def test_hostile_input_to_add_is_refused_and_writes_nothing(
    kb: KnowledgeBase, kwargs: dict[str, object], match: str
) -> None:
    args: dict[str, object] = {"text": "some text", "source": "doc"}
    args.update(kwargs)
    text = args.pop("text")
    with pytest.raises(InvalidInputError, match=match):
        kb.add(text, **args)  # type: ignore[arg-type]
    assert kb.count() == 0


def test_a_document_over_the_size_limit_is_refused(kb: KnowledgeBase) -> None:
    from remembrances.kb.knowledge_base import MAX_DOCUMENT_CHARS

    with pytest.raises(InvalidInputError, match="limit"):
        kb.add("a" * (MAX_DOCUMENT_CHARS + 1), source="huge")
    assert kb.count() == 0


def test_a_long_document_without_any_whitespace_is_split_not_truncated(
    store: Store,
) -> None:
    kb = KnowledgeBase(store, chunker=Chunker(size=200, overlap=20))
    text = "x" * 5000
    report = kb.add(text, source="blob.txt")
    assert report.chunks > 20
    assert kb.get("blob.txt").text == text


def test_custom_chunker_settings_rechunk_an_unchanged_document(
    store: Store, embedder: HashEmbedder
) -> None:
    KnowledgeBase(store).add(GUIDE * 3, source="g.md")
    report = KnowledgeBase(store, chunker=Chunker(size=100, overlap=10)).add(
        GUIDE * 3, source="g.md"
    )
    assert report.status == "updated" and report.chunks > 10


def test_the_service_builds_the_knowledge_base(store: Store) -> None:
    service = RemembrancesService(store)
    service.kb.add(GUIDE, source="guide.md")
    assert service.kb.search("brew")[0].source == "guide.md"
    assert service.kb is service.kb


def test_a_reopened_file_keeps_documents_and_skips_unchanged_adds(db_path: Path) -> None:
    first = HashEmbedder(64)
    with Store(db_path, embedder=first) as store:
        KnowledgeBase(store).add(GUIDE, source="guide.md")
    second = HashEmbedder(64)
    with Store(db_path, embedder=second) as store:
        kb = KnowledgeBase(store)
        assert kb.add(GUIDE, source="guide.md").status == "unchanged"
        assert second.calls == 0
        assert kb.search("apt")[0].source == "guide.md"


def test_a_read_only_file_without_documents_reads_as_empty(db_path: Path) -> None:
    Store(db_path, embedder=HashEmbedder(64)).close()
    with Store(db_path, embedder=HashEmbedder(64), read_only=True) as store:
        kb = KnowledgeBase(store)
        assert (kb.count(), kb.list(), kb.collections(), kb.search("x")) == (0, [], {}, [])
        with pytest.raises(NotFoundError):
            kb.get("doc")
        with pytest.raises(ReadOnlyError, match="read-only"):
            kb.add("text", source="doc")
        with pytest.raises(ReadOnlyError):
            kb.ingest(db_path.parent)
        with pytest.raises(ReadOnlyError):
            kb.delete("doc")


def test_a_read_only_file_with_documents_can_be_searched(db_path: Path) -> None:
    with Store(db_path, embedder=HashEmbedder(64)) as store:
        KnowledgeBase(store).add(GUIDE, source="guide.md")
    with Store(db_path, embedder=HashEmbedder(64), read_only=True) as store:
        kb = KnowledgeBase(store)
        assert kb.count() == 1 and kb.search("brew")[0].source == "guide.md"
        with pytest.raises(ReadOnlyError):
            kb.add(GUIDE + "more", source="guide.md")


def test_a_title_match_folds_accents_on_both_engines(kb: KnowledgeBase, store: Store) -> None:
    """SQLite's tokenizer removes diacritics; PostgreSQL's stems did not, so "cafe
    notizen" matched the title "Café Straße Notizen" on one engine only."""
    kb.add("# Café Straße Notizen\n\nDer Kaffee war gut.\n", source="cafe.md")
    kb.add("# Something else\n\nUnrelated words here.\n", source="other.md")
    hit = kb.search("cafe notizen", limit=1)[0]
    chunk = store.search("cafe notizen", kind="kb", limit=1)[0]
    assert hit.source == "cafe.md" and hit.score > chunk.score  # the title match counted


def test_words_inside_chinese_japanese_and_korean_sentences_are_found(store: Store) -> None:
    # a run of these scripts was one word to both text indexes: 東京 was not in
    # "私は東京に住んでいます" (store step 5)
    kb = KnowledgeBase(store)
    kb.add("私は東京に住んでいます。毎朝電車で会社に行きます。", source="ja")
    kb.add("我住在北京，每天骑自行车上班。", source="zh")
    kb.add("저는 서울에서 살고 있습니다.", source="ko")
    kb.add("The deploy runs on Fridays.", source="en")
    for query, source in [
        ("東京", "ja"),
        ("電車で行く", "ja"),
        ("自行车", "zh"),
        ("서울", "ko"),
        ("東京に住んでいるのは誰?", "ja"),
    ]:
        hits = kb.search(query, mode="text")
        assert [h.source for h in hits][:1] == [source], (query, hits)
    assert [h.source for h in kb.search("deploy Fridays", mode="text")] == ["en"]
    assert kb.search("大阪", mode="text") == []


def test_cjk_words_agree_on_both_engines(store: Store) -> None:
    kb = KnowledgeBase(store)
    kb.add("バスで会社に行きます。", source="bus")
    kb.add("ハスの花が咲きました。", source="lotus")
    kb.add("ｶﾞｲﾄﾞﾌﾞｯｸを読みました。", source="guide")  # half-width katakana
    kb.add("\u1109\u1165\u110b\u116e\u11af\uc5d0 \uc0b4\uc544\uc694", source="seoul")  # NFD
    kb.add("Dockerコンテナを起動する手順", source="docker")
    # voiced and unvoiced kana are different words (PostgreSQL's folding dropped the mark)
    assert [h.source for h in kb.search("バス", mode="text")] == ["bus"]
    assert [h.source for h in kb.search("ガイド", mode="text")] == ["guide"]
    assert [h.source for h in kb.search("서울", mode="text")] == ["seoul"]
    # a Latin word joined to kana is not a joined name whose parts count less
    joined = kb.search("Dockerコンテナ", mode="text")
    spaced = kb.search("Docker コンテナ", mode="text")
    assert [h.source for h in joined] == ["docker"]
    assert joined[0].score == pytest.approx(spaced[0].score)


def test_a_cjk_title_counts_as_words_of_the_question(store: Store) -> None:
    kb = KnowledgeBase(store)
    kb.add("ホテルは駅の近くです。", source="trip", title="東京出張 メモ")
    kb.add("会議室の予約方法。", source="rooms", title="会議室")
    titled = kb.search("東京出張 メモ", limit=1)[0]
    plain = store.search("東京出張 メモ", kind="kb", limit=1)[0]
    assert titled.source == "trip" and titled.score > plain.score
