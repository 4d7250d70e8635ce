"""The context block: one section per source, each item headed by its origin.

Compact Markdown, because that is what models read best per token: a one-line
title, a heading per source, one bullet per item whose first line says where it
came from; code stays in a fence so indentation survives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .sources import SECTION_TITLES, ContextItem

HEADER = "Relevant memory (remembrances):"


def render_item(item: ContextItem, text: str) -> str:
    if item.source == "code":
        fence = "````" if "```" in text else "```"
        return f"- {item.origin}\n{fence}{item.language or ''}\n{text.rstrip()}\n{fence}"
    body = "\n  ".join(line for line in text.strip().splitlines() if line.strip())
    return f"- {item.origin}: {body}"


def render_section(source: str, parts: Sequence[tuple[ContextItem, str]]) -> str:
    title = SECTION_TITLES.get(source, source)
    return "\n".join([f"## {title}", *(render_item(item, text) for item, text in parts)])


def render_block(
    sections: Mapping[str, Sequence[tuple[ContextItem, str]]],
    order: Sequence[str],
    *,
    header: str = HEADER,
) -> str:
    """The whole block, or "" when no section has an item."""
    rendered = [render_section(s, sections[s]) for s in order if sections.get(s)]
    if not rendered:
        return ""
    return "\n\n".join([header, *rendered]) if header else "\n\n".join(rendered)
