"""Chunking: sizes, coverage, overlap, characters and headings, as properties."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remembrances.chunking import (
    MAX_BLOCK_HEAD_CHARS,
    Chunker,
    TextChunk,
    chunk_text,
    format_for,
    markdown_blocks,
    sections,
)
from remembrances.errors import InvalidInputError

TOKENS = [
    "word",
    "alpha",
    "beta.",
    "Überprüfung",
    "日本語の文章。",
    "👍🏽",
    "👨‍👩‍👧",
    "e\u0301",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\n# Heading\n",
    "\n## Sub heading\n",
    "\n```\n# not a heading\n```\n",
    "\n| a | b |\n|---|---|\n",
    "| 1 | 2 |\n",
    ". ",
    "? ",
    "\t",
    "x" * 40,
]

documents = st.lists(st.sampled_from(TOKENS), max_size=400).map("".join)
any_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=2000)


def _settings() -> st.SearchStrategy[tuple[int, int]]:
    return st.integers(16, 300).flatmap(
        lambda size: st.tuples(st.just(size), st.integers(0, size // 2))
    )


def check_invariants(text: str, chunks: list[TextChunk], size: int, overlap: int) -> None:
    covered = bytearray(len(text))
    for chunk in chunks:
        assert 0 < len(chunk.text) <= size
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text == chunk.text.strip()
        covered[chunk.start : chunk.end] = b"\x01" * (chunk.end - chunk.start)
        for line in chunk.lead.splitlines():  # a block's opening, from before the chunk
            assert line and text.rfind(line, 0, chunk.start) >= 0
    lost = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not lost, f"characters lost at {lost[:5]}"
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.start > prev.start
        if nxt.section == prev.section:
            assert prev.end - nxt.start <= overlap  # never more overlap than configured
        else:
            assert nxt.start >= prev.end  # no overlap across headings


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, _settings())
def test_structured_documents_keep_every_invariant(text: str, sizes: tuple[int, int]) -> None:
    size, overlap = sizes
    check_invariants(text, chunk_text(text, size=size, overlap=overlap), size, overlap)


@settings(max_examples=100, deadline=None)
@given(any_text, _settings(), st.sampled_from(["markdown", "rst", "text", "org", "asciidoc"]))
def test_arbitrary_unicode_keeps_every_invariant(
    text: str, sizes: tuple[int, int], format: str
) -> None:
    size, overlap = sizes
    chunks = chunk_text(text, size=size, overlap=overlap, format=format)  # type: ignore[arg-type]
    check_invariants(text, chunks, size, overlap)
    for chunk in chunks:
        chunk.text.encode("utf-8")  # whole code points only


words = st.lists(
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8), min_size=50, max_size=400
)


@settings(max_examples=50, deadline=None)
@given(words, st.integers(60, 300), st.integers(1, 30))
def test_prose_overlaps_by_about_the_configured_amount(
    ws: list[str], size: int, overlap: int
) -> None:
    text = " ".join(ws)
    chunks = chunk_text(text, size=size, overlap=overlap, format="text")
    for prev, nxt in itertools.pairwise(chunks):
        shared = prev.end - nxt.start
        assert 0 < shared <= overlap
        assert shared >= overlap - 9  # snapped to a word start; words are at most 8 letters
        if overlap > 9:  # room for a whole word: the overlap starts at one
            assert text[nxt.start - 1] == " "
        assert prev.text.endswith(text[nxt.start : prev.end])


def test_overlap_zero_means_chunks_do_not_share_text() -> None:
    text = " ".join(f"w{i}" for i in range(500))
    chunks = chunk_text(text, size=50, overlap=0, format="text")
    assert len(chunks) > 5
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.start > prev.end


def test_sizes_count_characters_not_bytes() -> None:
    text = "日本語" * 400  # 1,200 characters, 3,600 UTF-8 bytes, no spaces
    chunks = chunk_text(text, size=100, overlap=0, format="text")
    assert [len(c.text) for c in chunks] == [100] * 12
    assert "".join(c.text for c in chunks) == text


def test_hard_cuts_keep_combining_marks_and_emoji_modifiers_with_their_base() -> None:
    text = "e\u0301" * 300 + "👍🏽" * 100
    for size in (16, 17, 33, 50):
        for chunk in chunk_text(text, size=size, overlap=0, format="text"):
            assert not chunk.text.startswith(("\u0301", "\U0001f3fd"))


def test_paragraphs_are_preferred_over_sentences_and_sentences_over_words() -> None:
    para1 = "First sentence here. Second sentence is here."
    para2 = "Another paragraph begins. It has two sentences."
    chunks = chunk_text(f"{para1}\n\n{para2}", size=60, overlap=0, format="text")
    assert [c.text for c in chunks] == [para1, para2]
    long = "One two three four five. Six seven eight nine ten. Eleven twelve thirteen."
    chunks = chunk_text(long, size=55, overlap=0, format="text")
    assert chunks[0].text == "One two three four five. Six seven eight nine ten."


def test_markdown_heading_paths_follow_the_outline() -> None:
    doc = (
        "Preamble before any heading.\n\n"
        "# Guide\n\nIntro.\n\n"
        "## Install\n\n### Linux\n\nUse apt.\n\n### macOS\n\nUse brew.\n\n"
        "```sh\n# a comment, not a heading\necho hi\n```\n\n"
        "## Usage\n\nRun it.\n\n"
        "Setext Title\n============\n\nUnder setext.\n"
    )
    chunks = chunk_text(doc, size=500, overlap=0)
    paths = [c.heading_path for c in chunks]
    assert paths == [
        "",
        "Guide",
        "Guide > Install > Linux",  # the lone "## Install" leads its first sub-section
        "Guide > Install > macOS",
        "Guide > Usage",
        "Setext Title",
    ]
    mac = chunks[3]
    assert "# a comment, not a heading" in mac.text
    assert mac.embed_text().startswith("Guide > Install > macOS\n\n### macOS")
    assert mac.embed_text(title="Manual").startswith("Manual > Guide > Install > macOS")
    assert mac.embed_text(title="Guide").startswith("Guide > Install")


def test_long_sections_keep_their_heading_path_in_every_chunk() -> None:
    doc = "# A\n\n## B\n\n" + "Words go on and on. " * 100
    chunks = chunk_text(doc, size=120, overlap=20)
    assert len(chunks) > 10
    assert {c.heading_path for c in chunks} == {"A > B"}
    assert all(c.embed_text().startswith("A > B\n\n") for c in chunks)


def test_yaml_front_matter_is_not_a_heading() -> None:
    doc = "---\ntitle: Notes\ntags: [a]\n---\n\nBody text.\n"
    assert [path for _, _, path in sections(doc)] == [()]
    doc = "---\ntitle: Notes\n---\n\n# Notes\n\nBody.\n"
    chunks = chunk_text(doc)
    assert [c.heading_path for c in chunks] == ["Notes"]  # not a chunk of its own
    assert chunks[0].text.startswith("---\ntitle: Notes")


def test_lines_in_an_html_comment_are_not_headings() -> None:
    # structlog's index.md: a cog block in a comment labelled the sponsors' section
    doc = (
        "# structlog\n\nIntro.\n\n<!-- [[[cog\n# This is mainly called from RTD!\n"
        "import pathlib\n]]] -->\nOur sponsors.\n<!-- [[[end]]] -->\n\n"
        "<!-- one line -->\n## Usage\n\nRun it.\n"
    )
    assert [path for _, _, path in sections(doc)] == [("structlog",), ("structlog", "Usage")]
    # nor is a comment a setext heading's title
    assert [path for _, _, path in sections("Intro.\n\n<!-- badges -->\n===\n")] == [()]


def test_restructuredtext_titles_nest_by_first_appearance() -> None:
    doc = (
        "=====\nGuide\n=====\n\nIntro.\n\n"
        "Install\n-------\n\nHow.\n\n"
        "Linux\n~~~~~\n\nApt.\n\n"
        "Usage\n-------\n\nRun.\n"
    )
    chunks = chunk_text(doc, size=500, overlap=0, format="rst")
    assert [c.heading_path for c in chunks] == [
        "Guide",
        "Guide > Install",
        "Guide > Install > Linux",
        "Guide > Usage",
    ]
    assert chunks[0].text.startswith("=====\nGuide")


def test_asciidoc_and_org_headings() -> None:
    adoc = "= Book\n\nIntro.\n\n== Part\n\nText.\n"
    assert [c.heading_path for c in chunk_text(adoc, format="asciidoc")] == ["Book", "Book > Part"]
    org = "* Tasks\nSome.\n** Done\nMore.\n"
    assert [c.heading_path for c in chunk_text(org, format="org")] == ["Tasks", "Tasks > Done"]


def test_plain_text_has_no_headings() -> None:
    text = "# not a heading in a .txt file\n\nJust text.\n"
    assert [c.heading_path for c in chunk_text(text, format="text")] == [""]


def test_format_follows_the_file_extension() -> None:
    assert format_for("notes/a.MD") == "markdown"
    assert format_for("guide.rst") == "rst"
    assert format_for("todo.org") == "org"
    assert format_for("book.adoc") == "asciidoc"
    assert format_for("readme.txt") == "text"
    assert format_for("no-extension") == "markdown"
    assert format_for(None) == "markdown"
    assert format_for("data.csv", "text") == "text"
    assert format_for("dir.rst/README", "text") == "text"  # a dot in a directory name


@pytest.mark.parametrize(
    ("size", "overlap"),
    [(8, 0), (100, 51), (100, -1), (True, 0), (100, 2.5), ("100", 0), (100_001, 0)],
)
def test_bad_settings_are_refused(size: object, overlap: object) -> None:
    with pytest.raises(InvalidInputError):
        Chunker(size, overlap)  # type: ignore[arg-type]


def test_bad_format_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="format"):
        chunk_text("text", format="docx")  # type: ignore[arg-type]


def test_empty_and_blank_text_give_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\t\n ") == []


outline = st.lists(
    st.tuples(
        st.integers(1, 4),
        st.text("abcdefghij ", min_size=1, max_size=12).filter(lambda t: t.strip()),
        st.lists(
            st.sampled_from(["alpha", "beta.", "gamma", "日本", "\n", "\n\n"]),
            min_size=1,
            max_size=120,
        )
        .map(lambda ws: " ".join(ws))
        .filter(lambda b: b.strip()),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=80, deadline=None)
@given(outline, _settings())
def test_every_chunk_carries_the_heading_path_of_its_section(
    parts: list[tuple[int, str, str]], sizes: tuple[int, int]
) -> None:
    size, overlap = sizes
    doc, starts, paths, stack = "", [], [], []
    for level, title, body in parts:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title.strip()))
        starts.append(len(doc))
        paths.append(" > ".join(t for _, t in stack))
        doc += f"{'#' * level} {title.strip()}\n\n{body}\n\n"
    chunks = chunk_text(doc, size=size, overlap=overlap)
    check_invariants(doc, chunks, size, overlap)
    for chunk in chunks:
        section = max(i for i, start in enumerate(starts) if start <= chunk.start)
        assert chunk.heading_path == paths[section]
        assert chunk.embed_text().startswith(paths[section] + "\n\n")


def test_giant_headings_are_shortened_in_paths_but_kept_in_text() -> None:
    heading = "H" * 5000
    doc = f"# {heading}\n\nBody.\n"
    chunks = chunk_text(doc, size=1000, overlap=0)
    assert all(len(c.heading_path) <= 200 for c in chunks)
    assert chunks[0].heading_path.endswith("…")
    check_invariants(doc, chunks, 1000, 0)


SETTINGS_TABLE = "## Settings\n\n| Setting | Default | Meaning |\n|:--|--:|---|\n" + "".join(
    f"| option_{i} | {i} | what option {i} changes in the client |\n" for i in range(40)
)


def test_a_chunk_inside_a_table_leads_with_its_header_rows() -> None:
    chunks = chunk_text(SETTINGS_TABLE, size=400, overlap=60)
    assert len(chunks) > 3
    head = "| Setting | Default | Meaning |\n|:--|--:|---|"
    assert chunks[0].lead == ""  # it holds the header itself
    assert all(c.lead == head for c in chunks[1:])
    assert chunks[1].embed_text() == f"Settings\n\n{head}\n{chunks[1].text}"
    check_invariants(SETTINGS_TABLE, chunks, 400, 60)
    # After the table, nothing leads.
    after = chunk_text(SETTINGS_TABLE + "\nPlain words. " * 60, size=400, overlap=60)
    assert after[-1].lead == ""


def test_a_chunk_inside_a_code_fence_leads_with_the_fence() -> None:
    code = "".join(f"    total = total + step({i})\n" for i in range(60))
    doc = f"Intro.\n\n~~~~python\n```not the end\n{code}~~~~\n\nAfter the code.\n"
    chunks = chunk_text(doc, size=300, overlap=0)
    inside = [c for c in chunks if "total" in c.text and c.start > doc.index("```not")]
    assert inside and all(c.lead == "~~~~python" for c in inside)
    closed = doc.index("~~~~\n\nAfter") + len("~~~~\n")
    assert all(c.lead == "" for c in chunks if c.start >= closed or c.end <= doc.index("```not"))
    assert chunk_text(doc + "More. " * 80, size=300, overlap=0)[-1].lead == ""
    # An unclosed fence runs to the end of the text.
    open_fence = chunk_text(f"```js\n{code}", size=300, overlap=0)
    assert all(c.lead == "```js" for c in open_fence[1:])


def test_fences_close_and_open_as_commonmark_says() -> None:
    # "```bash" inside a ``` block is code, not its end; the bare fence after closes it.
    doc = "```\necho one\n```bash\necho two\n```\nProse after the example.\n"
    [fence] = markdown_blocks(doc)
    assert fence.end == doc.index("Prose")
    # Three backticks with more on the line are inline code, no fence.
    assert markdown_blocks("```x``` is inline code.\nMore prose.\n") == []
    later = chunk_text("```x``` is inline code. " + "More prose here. " * 60, size=300)
    assert all(c.lead == "" for c in later)


def test_a_table_is_as_wide_as_its_header_and_runs_to_a_blank_line() -> None:
    # GFM: the delimiter row has as many cells as the header; rows need no pipe.
    assert markdown_blocks("x | y | z\n--- | ---\n1 | 2 | 3\n") == []
    [table] = markdown_blocks("| a | b |\n|---|---|\n| 1 | 2 |\nthree\n\nprose\n")
    assert table.end == len("| a | b |\n|---|---|\n| 1 | 2 |\nthree\n")
    assert markdown_blocks("| a \\| b | c |\n|---|---|\n")[0].head.startswith("| a")


def test_a_head_too_long_to_copy_onto_every_chunk_is_left_out() -> None:
    wide = "| " + " | ".join(f"column {i}" for i in range(60)) + " |"
    rows = "".join("| " + " | ".join("x" for _ in range(60)) + " |\n" for _ in range(30))
    doc = f"{wide}\n|{'---|' * 60}\n{rows}"
    assert len(wide) > MAX_BLOCK_HEAD_CHARS and markdown_blocks(doc)[0].head == ""
    chunks = chunk_text(doc, size=400, overlap=0)
    assert len(chunks) > 3 and all(c.lead == "" for c in chunks)


def test_only_markdown_tables_with_a_delimiter_row_are_blocks() -> None:
    # A pipe in prose is no table, nor a setext heading under a line with a pipe.
    assert markdown_blocks("a | b\nmore prose | here\n\nTitle | x\n---\n") == []
    [table] = markdown_blocks("intro\n\nname | size\n--- | ---\nx | 1\ny | 2\n\nend\n")
    assert table.head == "name | size\n--- | ---"
    # The format decides: a .txt or .rst document has no blocks.
    chunks = chunk_text(SETTINGS_TABLE, size=400, overlap=60, format="text")
    assert all(c.lead == "" for c in chunks)
