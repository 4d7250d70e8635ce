"""A note found by the words of its title: a notes vault's file name is often a note's
only title, and the word index reads only the text. Real local embedder, real store."""

from __future__ import annotations

from pathlib import Path

import remembrances

NOTES = {
    "✈️ Packing list.md": "- passport\n- charger\n- adapter plug\n- sunscreen\n",
    "ramen.md": "# Ramen\n\nBoil the pork bones for twelve hours, then strain.\n",
    "books/Atomic Habits.md": "# Atomic Habits\n\nSmall habits compound over years.\n",
}


def test_a_note_named_only_by_its_file_name_reaches_the_block(tmp_path: Path) -> None:
    for name, text in NOTES.items():
        (tmp_path / "vault" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vault" / name).write_text(text)
    with remembrances.open(tmp_path / "m.db") as svc:
        svc.kb.ingest(tmp_path / "vault")
        best = svc.kb.search("what's on my packing list?", limit=1)[0]
        assert best.title == "✈️ Packing list.md" and best.score >= 0.02  # the kb gate
        assert "adapter plug" in svc.enrich_context("what's on my packing list?")
        # one shared word is not a match: it names thousands of things
        one = svc.kb.search("make a list of groceries", limit=3)
        assert all(h.score < 0.02 for h in one), [(h.title, h.score) for h in one]
        assert svc.enrich_context("what is the capital of Peru?") == ""


def test_a_file_names_extension_is_not_a_title_word(tmp_path: Path) -> None:
    """ "list md" held two words of "Grocery list.md" and got the title match."""
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "Grocery list.md").write_text("- eggs\n- rice\n")
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as svc:
        svc.kb.ingest(tmp_path / "vault")
        hit = svc.kb.search("list md", limit=1)[0]
        chunk = svc.store.search("list md", kind="kb", limit=1)[0]
        assert hit.title == "Grocery list.md" and hit.score == chunk.score  # no match
        named = svc.kb.search("grocery list", limit=1)[0]
        assert named.score > svc.store.search("grocery list", kind="kb", limit=1)[0].score
