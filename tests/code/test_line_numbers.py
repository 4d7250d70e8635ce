"""Every chunk of a split symbol carries its own lines, and hits are numbered from them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from remembrances.cli import cli
from remembrances.code import CodeIndexer
from remembrances.code.parsing.analysis import analyze_source
from remembrances.code.parsing.chunking import ELISION


def _big_class() -> str:
    lines = ["import os", "", "", "class Registry:", '    """Keeps every handler."""', ""]
    for m in range(30):
        lines += [
            f"    def handler_{m}(self, event):",
            f"        value = event.get('field_{m}')",
            "        return value",
            "",
            f"    limit_{m} = {m}  # marker_{m:02d} on its own line",
            "",
        ]
    lines += ["", "def main():", "    return Registry()", ""]
    return "\n".join(lines)


def _numbered(code: str, meta: dict[str, object]) -> list[tuple[int, str]]:
    """(source line, text) for each line of a chunk's code, from its line runs."""
    runs = meta.get("line_runs") or [[0, meta["start_line"]]]
    assert isinstance(runs, list)
    numbered = []
    lines = code.split("\n")
    for i, (begin, line) in enumerate(runs):
        end = runs[i + 1][0] if i + 1 < len(runs) else len(lines)
        numbered += [(line + k, lines[begin + k]) for k in range(end - begin)]
    return numbered


def test_each_part_of_a_split_symbol_with_children_has_its_own_lines() -> None:
    source = _big_class()
    file_lines = source.split("\n")
    analysis = analyze_source("registry.py", "python", source.encode(), budget=400)
    parts = [c for c in analysis.chunks if c.metadata["qualified_name"] == "Registry"]
    assert len(parts) > 3
    starts = [p.metadata["start_line"] for p in parts]
    assert starts == sorted(set(starts)), "every part starts where its own text does"
    for part in parts:
        meta = part.metadata
        code = part.text[meta["code_offset"] :]
        numbered = _numbered(code, meta)
        assert numbered[0][0] == meta["start_line"]
        last = max(n for n, text in numbered if text.strip())
        assert meta["start_line"] <= last <= meta["end_line"]
        for line, text in numbered:
            if text.endswith(ELISION):  # a method cut to its first line
                assert file_lines[line - 1].startswith(text[: -len(ELISION)].rstrip()), line
            elif text.strip():
                assert file_lines[line - 1].endswith(text.strip()), (line, text)
    # the whole class is covered, from its first line to its last
    assert parts[0].metadata["start_line"] == 4
    assert parts[-1].metadata["end_line"] == file_lines.index("def main():") - 2


def test_file_chunks_around_symbols_carry_their_own_lines() -> None:
    source = "import os\n\n" + "def f():\n    pass\n\n" * 3 + "print(os.getcwd())\n"
    analysis = analyze_source("m.py", "python", source.encode())
    (chunk,) = [c for c in analysis.chunks if c.metadata["kind"] == "file"]
    numbered = dict(_numbered(chunk.text[chunk.metadata["code_offset"] :], chunk.metadata))
    assert numbered[1] == "import os"
    assert numbered[12] == "print(os.getcwd())"  # not numbered as if each f() were one line


def test_hits_and_the_cli_number_code_from_its_own_lines(code: CodeIndexer, tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    source = _big_class()
    (repo / "registry.py").write_text(source)
    line = next(i for i, t in enumerate(source.split("\n"), 1) if "marker_05" in t)
    code.index(repo, project="app")
    hit = next(h for h in code.search("marker_05", limit=5) if h.qualified_name == "Registry")
    assert hit.start_line <= line <= hit.end_line
    assert hit.line_runs is not None  # its numbering jumps over the elided methods

    code.store.close()
    result = CliRunner().invoke(
        cli, ["--db", code.store.path, "code", "search", "marker_05", "-n", "5"]
    )
    assert result.exit_code == 0, result.output
    shown = next(t for t in result.stdout.splitlines() if "marker_05" in t)
    assert shown.split()[0] == str(line), shown


def test_hit_code_keeps_the_first_lines_indentation_and_long_code_says_what_is_cut(
    code: CodeIndexer, tmp_path: Path
) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "registry.py").write_text(_big_class())
    code.index(repo, project="app")
    method = next(h for h in code.search("handler_3", limit=5) if h.name == "handler_3")
    assert method.code.startswith("    def handler_3(self, event):")
    code.store.close()
    result = CliRunner().invoke(cli, ["--db", code.store.path, "code", "search", "marker_05"])
    assert result.exit_code == 0, result.output
    assert "more lines (to line" in result.stdout  # the class is longer than a hit shows


FORM_FEED_SOURCE = (
    "# section one\n\x0c\n# section two\n\n"
    "def target_function():\n    return helper_call()\n\n"
    "def helper_call():\n    return 1\n"
)


def test_references_show_the_parsers_lines_after_a_form_feed(
    code: CodeIndexer, tmp_path: Path
) -> None:
    """A form feed is not a line break for the parser, so not for the line text either."""
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "m.py").write_text(FORM_FEED_SOURCE)
    code.index(repo, project="app", embed=False)
    refs = {r.line: r.line_text for r in code.references("helper_call", project="app")}
    assert refs == {6: "    return helper_call()", 8: "def helper_call():"}
