"""Markdown sections: every heading, ATX (``# Title``) or setext (``Title`` over
``=====`` or ``-----``), starts one."""

from __future__ import annotations

from functools import partial

from tests.code.symbol_rows import symbol_rows

rows = partial(symbol_rows, "a.md", "markdown")


def test_every_setext_heading_is_a_section() -> None:
    source = (
        "First\n"  # 1
        "=====\n"
        "\n"
        "text one\n"
        "\n"
        "Second\n"  # 6
        "======\n"
        "\n"
        "text two\n"
        "\n"
        "Sub\n"  # 11
        "---\n"
        "\n"
        "more\n"
    )
    assert rows(source) == [
        ("section", "First", 1, 5, "First"),
        ("section", "Second", 6, 14, "Second"),
        ("section", "Second > Sub", 11, 14, "Sub"),
    ]


def test_setext_and_atx_headings_nest_by_their_levels() -> None:
    source = (
        "Guide\n"  # 1
        "=====\n"
        "\n"
        "## Install\n"  # 4
        "\n"
        "pip install\n"
        "\n"
        "Usage of the\n"  # 8
        "library\n"
        "------------\n"
        "\n"
        "### Options\n"  # 12
        "\n"
        "# Appendix\n"  # 14
        "\n"
        "end\n"
    )
    assert rows(source) == [
        ("section", "Guide", 1, 13, "Guide"),
        ("section", "Guide > Install", 4, 7, "## Install"),
        ("section", "Guide > Usage of the library", 8, 13, "Usage of the library"),
        ("section", "Guide > Usage of the library > Options", 12, 13, "### Options"),
        ("section", "Appendix", 14, 16, "# Appendix"),
    ]
