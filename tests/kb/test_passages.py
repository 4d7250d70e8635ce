"""KB hits are passages: adjacent matching chunks of one section are one hit."""

from __future__ import annotations

import pytest

from remembrances import Chunk, InvalidInputError, Store
from remembrances.chunking import Chunker, sentence_lead
from remembrances.enrichment.budget import Limits, fit
from remembrances.enrichment.sources import kb_item
from remembrances.kb import KnowledgeBase
from remembrances.kb.passages import MAX_CHUNKS, passages

FILLER = "Nothing to see in this sentence about weather and lunch. "


def paragraph(words: str) -> str:
    return f"{words} {FILLER * 2}".strip()


@pytest.fixture
def kb(store: Store) -> KnowledgeBase:
    # Chunks of about two paragraphs: a section of six paragraphs is several chunks.
    return KnowledgeBase(store, chunker=Chunker(size=260, overlap=40))


def chunks_of(store: Store, source: str) -> list[tuple[int, str]]:
    return [(r.position, r.text) for r in store.get_source("kb", source)]


def test_adjacent_matching_chunks_of_a_section_are_one_passage(
    kb: KnowledgeBase, store: Store
) -> None:
    body = "\n\n".join(
        [paragraph("The rotation key signs every token.")]
        + [paragraph(f"Unrelated paragraph number {i}.") for i in range(4)]
        + [paragraph("Rotate the signing key every month; old tokens stop working.")]
    )
    doc = f"# Tokens\n\n## Key rotation\n\n{body}\n\n## Other\n\n{paragraph('Lunch.')}\n"
    kb.add(doc, source="tokens.md")
    chunks = chunks_of(store, "tokens.md")
    assert len(chunks) >= 5  # the section is several chunks

    chunk_hits = store.search("rotate the signing key month", kind="kb", limit=20)
    hits = kb.search("rotate the signing key month", limit=20)
    # Every hit is text of the document, with each overlap written once.
    assert all(h.text in doc for h in hits)
    # Fewer hits than chunks: the matching neighbours were joined...
    assert len(hits) < len(chunk_hits)
    best = hits[0]
    assert best.chunk_id == chunk_hits[0].id
    # the heading path "Key rotation" holds two of the words: the name match adds to it
    assert best.score > chunk_hits[0].score
    # ...and the best hit holds its best chunk, at the place best_span says.
    assert best.best_span is not None
    start, end = best.best_span
    assert best.text[start:end] == chunk_hits[0].text
    assert best.position <= chunk_hits[0].position
    shown = best.to_dict()  # the CLI's --json, HTTP and MCP: the same fields
    assert (shown["chunk_id"], shown["best_span"]) == (best.chunk_id, [start, end])
    # No chunk shows up in two hits, and no passage is longer than MAX_CHUNKS chunks.
    for hit in hits:
        inside = [p for p, text in chunks if text in hit.text]
        assert 1 <= len(inside) <= MAX_CHUNKS
        assert inside == list(range(inside[0], inside[0] + len(inside)))
        assert all(
            h is hit or not set(inside) & {p for p, t in chunks if t in h.text} for h in hits
        )


def test_chunks_of_different_sections_or_documents_stay_apart(kb: KnowledgeBase) -> None:
    doc = "# Guide\n\n## Alpha\n\nThe frobnicator hums.\n\n## Beta\n\nThe frobnicator sings.\n"
    kb.add(doc, source="guide.md")
    kb.add("The frobnicator dances.", source="other.md")
    hits = kb.search("frobnicator", limit=10)
    assert sorted(h.text for h in hits) == sorted(
        [
            "# Guide\n\n## Alpha\n\nThe frobnicator hums.",
            "## Beta\n\nThe frobnicator sings.",
            "The frobnicator dances.",
        ]
    )
    assert all(h.best_span == (0, len(h.text)) for h in hits)


def test_the_limit_counts_passages_and_is_still_filled(kb: KnowledgeBase) -> None:
    for n in range(6):
        body = "\n\n".join(paragraph(f"Deploy step {n}.{i} of the release.") for i in range(5))
        kb.add(f"# Release {n}\n\n{body}\n", source=f"release-{n}.md")
    hits = kb.search("deploy step release", limit=4)
    assert len(hits) == 4
    assert len({h.source for h in hits}) >= 2 or all(len(h.text) > 260 for h in hits)


@pytest.mark.parametrize("limit", [0, -1, 1001, True, 2.5, "5", None])
def test_a_bad_limit_is_refused_before_searching(kb: KnowledgeBase, limit: object) -> None:
    kb.add("Some text about deploys.", source="a.md")
    with pytest.raises(InvalidInputError, match="limit must be an integer from 1 to 1000"):
        kb.search("deploys", limit=limit)  # type: ignore[arg-type]


def test_a_budget_cut_keeps_the_part_of_a_passage_that_matched(
    kb: KnowledgeBase, store: Store
) -> None:
    body = "\n\n".join(
        [paragraph(f"Background paragraph {i} of the section.") for i in range(2)]
        + [paragraph("The cache warm-up crashed the API pods during the deploy.")]
    )
    kb.add(f"# Incident\n\n{body}\n", source="incident.md")
    hit = kb.search("cache warm-up crashed the API pods", limit=1)[0]
    assert hit.best_span is not None and hit.best_span[0] > 0  # the match is not first
    item = kb_item(hit)
    assert item.focus is not None
    limits = Limits(total_chars=None, section_chars={"kb": None}, item_chars=len(hit.text) // 2)
    (chosen,) = fit({"kb": [item]}, ["kb"], limits, header="")["kb"]
    shown = chosen[1]
    assert "cache warm-up crashed the API pods" in shown
    assert shown.startswith("… ") and len(shown) <= len(hit.text) // 2
    # Without the focus the same cut would keep the background and lose the match.
    plain = kb_item(hit)
    plain = type(plain)(plain.source, plain.origin, plain.text, plain.score, plain.key)
    (cut,) = fit({"kb": [plain]}, ["kb"], limits, header="")["kb"]
    assert "crashed the API pods" not in cut[1]


def test_chunks_without_offsets_are_never_joined(kb: KnowledgeBase, store: Store) -> None:
    """Chunks written without ``char_start``/``char_end`` (straight through the store,
    as an older memory may hold them) cannot be joined without guessing: they stay
    one hit each."""
    texts = [f"The rotation key signs token batch {i}." for i in range(3)]
    store.put_source("kb", "raw.md", [Chunk(t, metadata={"heading_path": "Keys"}) for t in texts])
    hits = kb.search("rotation key signs token batch", limit=10)
    assert sorted(h.text for h in hits) == sorted(texts)
    assert all(h.best_span == (0, len(h.text)) for h in hits)


def test_a_passage_that_starts_mid_sentence_starts_at_its_sentence(
    kb: KnowledgeBase, store: Store
) -> None:
    steps = " ".join(f"then step{i}" for i in range(14))
    sentence = (
        f"Tokens are checked against the rotation list {steps} and a token signed "
        "with a key older than ninety days is refused."
    )
    intro = "A short intro about where tokens come from, kept brief on purpose."
    doc = f"# Tokens\n\n{intro}\n\n{sentence}\n"
    kb.add(doc, source="tokens.md")
    for i in range(4):  # better matches than the section's first chunk, worse than its last
        kb.add(f"The key was refused, case {i}.", source=f"other-{i}.md")
    chunks = [r.text for r in store.get_source("kb", "tokens.md")]
    assert len(chunks) == 2 and not chunks[1].startswith("Tokens")  # it starts mid-sentence
    hit = kb.search("key older than ninety days refused", limit=1)[0]
    assert hit.source == "tokens.md"
    assert hit.text == sentence  # from the sentence's start, not the chunk's
    assert hit.best_span is not None
    start, end = hit.best_span
    assert hit.text[start:end] == chunks[1]


def test_a_passage_inside_a_table_starts_under_its_header(kb: KnowledgeBase, store: Store) -> None:
    rows = "".join(f"| option_{i} | {i} | spare setting number {i} |\n" for i in range(12))
    rows += "| retry_backoff | 0.5 | seconds before the first retry, doubled each time |\n"
    head = "| Setting | Default | Meaning |\n|---|---|---|"
    doc = f"# Client\n\n## Settings\n\n{head}\n{rows}"
    kb.add(doc, source="client.md", metadata={"team": "sdk"})
    stored = store.get_source("kb", "client.md")
    assert len(stored) > 2 and stored[-1].metadata["_block_head"] == head
    assert "_block_head" not in stored[0].metadata  # the first chunk holds the header
    hit = kb.search("retry backoff seconds doubled", limit=1)[0]
    assert hit.source == "client.md" and hit.position > 0
    # The header rows come first, then the row from its start (the chunk may start
    # mid-row, after the overlap).
    assert hit.text.startswith(head + "\n| ")
    assert hit.text.endswith(
        "| retry_backoff | 0.5 | seconds before the first retry, doubled each time |"
    )
    assert hit.best_span is not None
    start, end = hit.best_span
    assert hit.text[start:end] == next(r.text for r in stored if r.id == hit.chunk_id)
    assert hit.metadata == {"team": "sdk"}  # the knowledge base's own keys stay out
    with pytest.raises(InvalidInputError, match="_block_head"):
        kb.add("text", source="x.md", metadata={"_block_head": "mine"})


def test_a_budget_cut_inside_a_table_keeps_its_header(store: Store) -> None:
    # A chunk of the default size is longer than an item's budget: the cut from the
    # best part kept the rows and lost the header the passage starts with.
    kb = KnowledgeBase(store)
    rows = "".join(f"| svc{i:03d} | port {8000 + i} | team{i % 7} |\n" for i in range(200))
    rows = rows.replace("| svc150 | port 8150 |", "| zebraquux | port 8150 |")
    doc = f"# Services\n\n| Service | Port | Owner |\n|---|---|---|\n{rows}"
    kb.add(doc, source="services.md")
    hit = kb.search("zebraquux port", limit=1)[0]
    assert hit.text.startswith("| Service | Port | Owner |") and hit.position > 0
    limits = Limits(total_chars=None, section_chars={"kb": None}, item_chars=1000)
    [(_, shown)] = fit({"kb": [kb_item(hit)]}, ["kb"], limits, header="")["kb"]
    assert shown.startswith("| Service | Port | Owner |\n|---|---|---|\n… | svc")
    assert "zebraquux" in shown and len(shown) <= 1000


@pytest.mark.parametrize(
    ("before", "lead"),
    [
        ("First one. The second one runs ", "The second one runs "),
        ("a title line\nThe text goes ", "The text goes "),
        ("It ended. ", ""),
        ("a line\n", ""),
        ("no sentence start within reach ", ""),
        ("", ""),
    ],
)
def test_sentence_lead(before: str, lead: str) -> None:
    assert sentence_lead(before) == lead


def test_sibling_sections_with_one_heading_path_are_not_joined(store: Store) -> None:
    kb = KnowledgeBase(store)
    doc = "# Guide\n\n## Example\n\nZebra alpha one.\n\n\n\n## Example\n\nZebra beta two.\n"
    kb.add(doc, source="guide.md")
    hits = kb.search("zebra", limit=5)
    assert len(hits) == 2 and all(h.text in doc for h in hits)
    assert sum("Zebra" in h.text for h in hits) == 2


def test_chunks_that_do_not_overlap_are_not_joined(store: Store) -> None:
    kb = KnowledgeBase(store, chunker=Chunker(size=40, overlap=0))
    doc = "Zebras run fast. Zebras eat grass. Zebras sleep standing. Zebras live long."
    kb.add(doc, source="zebras.txt")
    hits = kb.search("zebras", limit=10)
    assert len(hits) == len(store.get_source("kb", "zebras.txt")) > 1
    assert all(h.text in doc for h in hits)


def test_a_document_replaced_after_the_search_gives_no_lead(
    kb: KnowledgeBase, store: Store
) -> None:
    steps = " ".join(f"then step{i}" for i in range(14))
    sentence = f"Tokens are checked against the rotation list {steps} and a key is refused."
    intro = "A short intro about where tokens come from, kept brief on purpose."
    kb.add(f"# Tokens\n\n{intro}\n\n{sentence}\n", source="tokens.md")
    second = [r for r in store.search("key refused", kind="kb", limit=3) if r.position == 1]
    found = passages(second, 1)
    assert found and found[0].start > 0  # a passage that starts inside the document
    kb._add_leads(found)
    assert found[0].lead.startswith("Tokens are checked")  # while the document is unchanged
    found[0].lead = ""
    kb.add("# Tokens\n\n" + "Other words here. " * 30, source="tokens.md")
    kb._add_leads(found)  # the chunks are from before the replacement
    assert found[0].lead == ""
