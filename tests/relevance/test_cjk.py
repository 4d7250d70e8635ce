"""Notes in Chinese, Japanese and Korean found by the words of a question in the same
language: the local embedder reads these scripts poorly, so the word index carries
them. Real local embedder, real store."""

from __future__ import annotations

from pathlib import Path

import remembrances

NOTES = {
    "home.md": "私は東京に住んでいます。毎朝電車で会社に行きます。",
    "meeting.md": "会議は毎週月曜日の午前十時に始まります。",
    "bike.md": "我住在北京，每天骑自行车上班。",
    "seoul.md": "저는 서울에서 살고 있습니다.",
    "freeze.md": "Production deploys are frozen during the holidays.",
}


def test_a_question_in_the_notes_language_finds_its_note(tmp_path: Path) -> None:
    with remembrances.open(tmp_path / "m.db") as svc:
        for source, text in NOTES.items():
            svc.kb.add(text, source=source)
        for question, source in [
            ("東京に住んでいますか？", "home.md"),  # before pairs: 0.074
            ("会議は何時に始まりますか", "meeting.md"),  # 0.084
            ("谁骑自行车上班？", "bike.md"),
            ("서울에서 살아요?", "seoul.md"),
        ]:
            best = svc.kb.search(question, limit=1)[0]
            assert best.source == source and best.score >= 0.3, (question, best)
            assert NOTES[source][:8] in svc.enrich_context(question)
        assert svc.kb.search("when are deploys frozen?", limit=1)[0].source == "freeze.md"
        assert svc.enrich_context("what is the capital of Peru?") == ""
