"""What users point ingest and the code indexer at: huge, binary, broken and looping
trees. Each file is indexed or skipped with a reason; nothing crashes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import remembrances
from remembrances import InvalidInputError, RemembrancesService


@pytest.fixture
def memory(tmp_path: Path) -> RemembrancesService:
    return remembrances.open(tmp_path / "m.db", embedder="hash:64")


def hostile_tree(root: Path) -> None:
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nA normal note about retries.\n")
    (root / "good.py").write_text("def retry():\n    '''Retry once.'''\n    return 1\n")
    with (root / "huge.md").open("wb") as f:  # 100 MB, sparse: never read whole
        f.truncate(100 * 1024 * 1024)
    (root / "one_line.md").write_text("word " * 200_000)  # 1 MB on one line
    (root / "one_line.py").write_text("x = [" + "1, " * 300_000 + "]\n")
    (root / "binary.md").write_bytes(b"\x00\x01\x02PNG\x00" * 1000)
    (root / "latin1.md").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (root / "bad.py").write_bytes(b"def broken(:\n    \xff\xfe\n")
    deep = root
    for i in range(120):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# Deep\n\nFound at the bottom.\n")
    (deep / "deep.py").write_text("def bottom():\n    return 'deep'\n")
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling.md").symlink_to(root / "missing.md")


def test_kb_ingest_of_a_hostile_tree(memory: RemembrancesService, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    hostile_tree(root)
    report = memory.kb.ingest(root)
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert "huge.md" in reasons and "binary.md" in reasons and "latin1.md" in reasons
    assert memory.kb.search("normal note about retries")[0].source.endswith("good.md")
    assert memory.kb.search("found at the bottom")
    assert memory.check().ok
    again = memory.kb.ingest(root)  # unchanged: nothing re-added
    assert again.to_dict()["skipped"] == report.to_dict()["skipped"]


def test_code_index_of_a_hostile_tree(memory: RemembrancesService, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    hostile_tree(root)
    report = memory.code.index(root, project="hostile")
    reasons = report.skipped_by_reason()
    assert reasons, "the huge and binary files must be skipped with reasons"
    names = {s.name for s in memory.code.find_symbol("retry")}
    assert "retry" in names
    assert memory.code.find_symbol("bottom")
    assert memory.check().ok


def test_odd_metadata(memory: RemembrancesService) -> None:
    nested = {"a": {"b": [{"c": None}, 1.5, True]}, "emoji 🎉": "ok", "": "empty key"}
    memory.kb.add("some text", source="nested.md", metadata=nested)
    assert memory.kb.get("nested.md").metadata["a"] == nested["a"]
    with pytest.raises(InvalidInputError):
        memory.kb.add("text", source="huge.md", metadata={"blob": "x" * 2_000_000})
    with pytest.raises(InvalidInputError):
        memory.kb.add("text", source="keys.md", metadata={1: "non-string key"})  # type: ignore[dict-item]
    with pytest.raises(InvalidInputError):
        memory.events.log("text", metadata={"nan": float("nan")})
    assert memory.kb.count() == 1 and memory.events.count() == 0


def test_hostile_text(memory: RemembrancesService) -> None:
    for bad in ("", "   ", "lone \udcff surrogate"):
        with pytest.raises(InvalidInputError):
            memory.kb.add(bad, source="x.md")
        with pytest.raises(InvalidInputError):
            memory.events.log(bad)
    assert memory.kb.count() == 0 and memory.events.count() == 0
    assert os.path.exists(memory.path)
