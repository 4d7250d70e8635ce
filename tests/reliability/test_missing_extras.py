"""Without an optional extra, what needs it says which to install, and the rest works.

Each case runs in a child process whose imports of the extra's packages fail, as they
would where the extra is not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BLOCKER = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Missing())
"""


def run(blocked: set[str], code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = BLOCKER.format(blocked=blocked) + code
    return subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def test_without_the_code_extra_notes_and_enrichment_work(tmp_path: Path) -> None:
    result = run(
        {"tree_sitter"},
        """
import remembrances
m = remembrances.open("m.db", embedder="hash:64")
m.kb.add("Deploys run every Friday.", source="deploy.md")
m.kb.ingest(".")  # a folder of notes needs no code extra
print("block:", "Friday" in m.enrich_context("when do deploys run?"))
# a prompt naming code looks its definitions up first (code_focus.py)
print("named:", "Friday" in m.enrich_context("do deploys run parse_config() every Friday?"))
try:
    m.code.index(".")
except remembrances.MissingExtraError as exc:
    print("code:", exc)
""",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "block: True" in result.stdout and "named: True" in result.stdout
    assert "code: the code index needs tree-sitter" in result.stdout
    assert "pip install 'remembrances[code]'" in result.stdout


def test_a_server_without_its_extra_names_it(tmp_path: Path) -> None:
    for blocked, command, extra in [
        ("fastapi", "serve", "http"),
        ("mcp", "serve-mcp", "mcp"),
    ]:
        result = run(
            {blocked},
            f"""
import sys
from remembrances.cli import main
sys.argv = ["remembrances", "--db", "m.db", "--embedder", "hash:64", "{command}"]
main()
""",
            tmp_path,
        )
        assert result.returncode == 1, (command, result.stderr)
        assert f"pip install 'remembrances[{extra}]'" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_without_the_code_extra_the_cli_reads_and_copies_a_memory_without_code(
    tmp_path: Path,
) -> None:
    result = run(
        {"tree_sitter"},
        """
import sys
from click.testing import CliRunner
import remembrances
from remembrances.cli import cli
m = remembrances.open("m.db", embedder="hash:64")
m.kb.add("Deploys run every Friday.", source="deploy.md")
m.close()
for args in (["enrich", "when do deploys run?"], ["export", "out.jsonl"], ["copy", "m.db", "c.db"]):
    r = CliRunner().invoke(cli, ["--db", "m.db", *args])
    print(args[0], r.exit_code, "Friday" in r.stdout, repr(r.stderr))
""",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "enrich 0 True ''" in result.stdout, result.stdout  # no word of the extra
    assert "export 0" in result.stdout and "copy 0" in result.stdout, result.stdout
    assert "tree-sitter" not in result.stdout


def test_a_memory_holding_code_is_enriched_without_it_and_says_so_once(tmp_path: Path) -> None:
    import remembrances

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "ship.py").write_text("def ship_release():\n    return 1\n")
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as memory:
        memory.code.index(tmp_path / "app")  # here, with the code extra
        memory.kb.add("Deploys run every Friday.", source="deploy.md")
    result = run(
        {"tree_sitter"},
        """
import remembrances
m = remembrances.open("m.db")
for _ in range(3):
    print("block:", "Friday" in m.enrich_context("when do deploys run ship_release()?"))
""",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("block: True") == 3
    assert result.stderr.count("enrichment leaves code out") == 1, result.stderr
    assert "pip install 'remembrances[code]'" in result.stderr
