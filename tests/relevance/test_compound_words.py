"""A verb and its particle written as one word ("rollback", "setup", "login") answer the
question that writes them apart ("roll back", "set up", "log in"): runbooks and READMEs
title their sections with the joined word. Real local embedder, real store."""

from __future__ import annotations

from pathlib import Path

import remembrances

NOTES = {
    "runbook.md": "# Runbook\n\n## Rollback\n\nTo undo a bad deploy, run "
    "`deployctl revert --to previous` and watch the health checks.",
    "setup.md": "# Setup\n\nInstall the CLI with pip, then run the login command to authenticate.",
    "food.md": "The cafeteria serves pizza on Mondays.",
}


def test_a_question_that_writes_the_words_apart_finds_the_joined_word(tmp_path: Path) -> None:
    with remembrances.open(tmp_path / "m.db") as svc:
        for source, text in NOTES.items():
            svc.kb.add(text, source=source)
        for question, source, before in [
            ("How do I roll back a deploy?", "runbook.md", 0.074),
            ("how do I set up the CLI?", "setup.md", 0.12),
            ("how do I log in?", "setup.md", 0.004),  # no block before
        ]:
            best = svc.kb.search(question, limit=1)[0]
            assert best.source == source and best.score >= max(0.2, 2 * before), (question, best)
            assert NOTES[source][-20:] in svc.enrich_context(question), question
        assert svc.enrich_context("what is the capital of Peru?") == ""
