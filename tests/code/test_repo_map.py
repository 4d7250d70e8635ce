"""The ranked repository map over a small three-language repository with a known call graph.

Who uses what (by hand):
  python: scheduler.py, main.py and report.py call clock.now; main.py uses
          Scheduler and next_run; lonely.py is used by nobody.
  js:     view.js calls formatDate and fetchJobs; api.js calls formatDate.
  go:     handler.go calls Open; main.go calls Handle and Open.
So clock.py (three users, one of them used itself) ranks first; format.js and
store.go (two users each, one of which is used) tie below it; main.py, view.js,
report.py, main.go and lonely.py define nothing anyone uses and come last.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from remembrances import Store
from remembrances.code import CodeIndexer, graph
from remembrances.code.pagerank import pagerank
from remembrances.code.repo_map import estimate_tokens
from remembrances.errors import InvalidInputError, NotFoundError

FILES = {
    "core/clock.py": (
        "import time\n\n\n"
        "def now() -> float:\n"
        '    """Seconds since the epoch."""\n'
        "    return time.time()\n"
    ),
    "core/scheduler.py": (
        "from core.clock import now\n\n\n"
        "class Scheduler:\n"
        "    def __init__(self, every: float) -> None:\n"
        "        self.every = every\n\n"
        "    def next_run(self, last: float) -> float:\n"
        "        return max(last + self.every, now())\n"
    ),
    "app/main.py": (
        "from core.clock import now\n"
        "from core.scheduler import Scheduler\n\n\n"
        "def start() -> None:\n"
        "    s = Scheduler(5.0)\n"
        "    print(s.next_run(now()))\n"
    ),
    "app/report.py": (
        "from core.clock import now\n\n\ndef stamp() -> str:\n    return str(now())\n"
    ),
    "tools/lonely.py": "def unused_helper() -> int:\n    return 1\n",
    "web/format.js": ("export function formatDate(d) {\n  return d.toISOString();\n}\n"),
    "web/api.js": (
        "import { formatDate } from './format.js';\n"
        "export function fetchJobs() {\n  return [formatDate(new Date())];\n}\n"
    ),
    "web/view.js": (
        "import { formatDate } from './format.js';\n"
        "import { fetchJobs } from './api.js';\n"
        "export function renderPage() {\n"
        "  return fetchJobs().map((j) => formatDate(j));\n}\n"
    ),
    "svc/store.go": ("package svc\n\ntype DB struct{}\n\nfunc Open() *DB {\n\treturn &DB{}\n}\n"),
    "svc/handler.go": "package svc\n\nfunc Handle() {\n\tdb := Open()\n\t_ = db\n}\n",
    "svc/main.go": "package svc\n\nfunc Serve() {\n\tHandle()\n\t_ = Open()\n}\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def calls(tmp_path: Path) -> Path:
    root = tmp_path / "calls"
    write(root, FILES)
    return root


@pytest.fixture
def code(store: Store) -> CodeIndexer:
    return CodeIndexer(store, workers=1)


def project_id(store: Store) -> int:
    with store.snapshot() as conn:
        return int(str(conn.execute("SELECT id FROM code_projects").fetchone()[0]))


def stored_edges(store: Store) -> set[tuple[str, str, str, int]]:
    with store.snapshot() as conn:
        return {
            (str(n), str(s), str(d), int(r))
            for n, s, d, r in conn.execute(
                "SELECT e.name, a.path, b.path, e.refs FROM code_edges e "
                "JOIN code_files a ON a.id = e.src_file JOIN code_files b ON b.id = e.dst_file"
            )
        }


def graph_state(store: Store) -> tuple[float, float, int]:
    with store.snapshot() as conn:
        row = conn.execute("SELECT built_at, updated_at, updates FROM code_graphs").fetchone()
    assert row is not None
    return float(str(row[0])), float(str(row[1])), int(str(row[2]))


def rebuilt_edges(store: Store) -> set[tuple[str, str, str, int]]:
    """What a whole rebuild gives, for comparison with the incremental result."""
    with store.transaction() as conn:
        graph.build(conn, project_id(store))
    return stored_edges(store)


def test_edges_are_the_call_graph(code: CodeIndexer, store: Store, calls: Path) -> None:
    code.index(calls, project="calls", embed=False)
    edges = {(n, s, d) for n, s, d, _ in stored_edges(store)}
    assert ("now", "core/scheduler.py", "core/clock.py") in edges
    assert ("now", "app/report.py", "core/clock.py") in edges
    assert ("Scheduler", "app/main.py", "core/scheduler.py") in edges
    assert ("next_run", "app/main.py", "core/scheduler.py") in edges
    assert ("formatDate", "web/view.js", "web/format.js") in edges
    assert ("fetchJobs", "web/view.js", "web/api.js") in edges
    assert ("Open", "svc/main.go", "svc/store.go") in edges
    assert ("Handle", "svc/main.go", "svc/handler.go") in edges
    assert not any(d == "tools/lonely.py" for _, _, d in edges)
    assert not any(s == d for _, s, d in edges)
    # main.py uses `now` twice (import and call)
    assert ("now", "app/main.py", "core/clock.py", 2) in stored_edges(store)


def test_map_ranks_by_hand(code: CodeIndexer, calls: Path) -> None:
    code.index(calls, project="calls", embed=False)
    result = code.repo_map("calls", budget_tokens=1024)
    paths = [f.path for f in result.files]
    assert paths[0] == "core/clock.py"
    assert result.files[0].symbols[0].qualified_name == "now"
    assert set(paths[:6]) == {
        "core/clock.py",
        "core/scheduler.py",
        "web/format.js",
        "web/api.js",
        "svc/store.go",
        "svc/handler.go",
    }
    # then what nobody uses, under every used definition
    assert set(paths[6:]) == {
        "app/main.py",
        "app/report.py",
        "svc/main.go",
        "tools/lonely.py",
        "web/view.js",
    }
    ranks = [f.rank for f in result.files]
    assert ranks == sorted(ranks, reverse=True) and ranks[-1] > 0
    rank = {f.path: f.rank for f in result.files}
    assert rank["web/format.js"] == pytest.approx(rank["svc/store.go"])
    assert rank["core/clock.py"] > rank["web/format.js"] > rank["web/api.js"]
    assert rank["core/clock.py"] > rank["core/scheduler.py"]
    # the layout: path lines, signatures indented, a method under its class
    lines = result.text.splitlines()
    assert lines[:2] == ["core/clock.py:", "  def now() -> float"]
    at = lines.index("core/scheduler.py:")
    assert lines[at + 1] == "  class Scheduler"
    assert "    def next_run(self, last: float) -> float" in lines[at + 2 : at + 4]
    assert result.tokens == estimate_tokens(result.text) <= 1024


def test_a_project_whose_files_stand_alone_is_mapped(code: CodeIndexer, tmp_path: Path) -> None:
    # no file uses another's names: no edges, and the map was empty
    write(
        tmp_path / "scripts",
        {
            "backup.py": "def rotate_backups(folder):\n    return folder\n",
            "report.py": "class WeeklyReport:\n    def render(self):\n        return ''\n",
            "tools/clean.js": "function cleanCache(dir) {\n  return dir;\n}\n",
        },
    )
    code.index(tmp_path / "scripts", project="scripts", embed=False)
    result = code.repo_map("scripts")
    assert [f.path for f in result.files] == ["backup.py", "report.py", "tools/clean.js"]
    assert result.text.splitlines() == [
        "backup.py:",
        "  def rotate_backups(folder)",
        "report.py:",
        "  class WeeklyReport",
        "    def render(self)",
        "tools/clean.js:",
        "  function cleanCache(dir)",
    ]
    assert (
        code.repo_map("scripts", budget_tokens=10).text
        == "backup.py:\n  def rotate_backups(folder)"
    )


def test_a_test_suites_helpers_come_after_the_library(code: CodeIndexer, tmp_path: Path) -> None:
    """Every test uses the suite's helper, and it led the map (greenlet's TestCase.setUp)."""
    files = {
        "lib/switching.py": "def switch_to(target):\n    return target\n",
        "lib/frames.py": "from lib.switching import switch_to\n\n\n"
        "def run_frame(frame):\n    return switch_to(frame)\n",
        "tests/helpers.py": "class SuiteCase:\n    def set_up_greenlets(self):\n        return 1\n",
    }
    for i in range(6):
        files[f"tests/test_{i}.py"] = (
            "from tests.helpers import SuiteCase\nfrom lib.frames import run_frame\n\n\n"
            f"class Test{i}(SuiteCase):\n    def test_it(self):\n"
            "        self.set_up_greenlets()\n        return SuiteCase, run_frame(1)\n"
        )
    write(tmp_path / "suite", files)
    code.index(tmp_path / "suite", project="suite", embed=False)
    paths = [f.path for f in code.repo_map("suite").files]
    assert paths[:2] == ["lib/frames.py", "lib/switching.py"] or paths[:2] == [
        "lib/switching.py",
        "lib/frames.py",
    ], paths
    assert paths.index("tests/helpers.py") > 1
    focused = code.repo_map("suite", focus=["tests/helpers.py"])
    assert focused.text.startswith("tests/helpers.py:\n  class SuiteCase")  # asked for: first


def test_impl_blocks_are_not_definitions_of_their_type(code: CodeIndexer, tmp_path: Path) -> None:
    """serde_json's ``Value``: twelve files held ``impl ... Value`` blocks or an
    associated ``type Value``, so the name counted as generic and the enum fell out."""
    files = {"src/value.rs": "pub enum Value {\n    Null,\n    Bool(bool),\n}\n"}
    for i in range(7):
        files[f"src/impl{i}.rs"] = (
            f"impl From<u{i}> for Value {{\n    fn from(n: u{i}) -> Value {{ Value::Null }}\n}}\n\n"
            f"impl Reader{i} {{\n    type Value = Value;\n}}\n"
        )
    files["src/main.rs"] = "fn main() {\n    let v: Value = Value::Null;\n    show(v);\n}\n"
    write(tmp_path / "serde", files)
    code.index(tmp_path / "serde", project="serde", embed=False)
    lines = code.repo_map("serde", budget_tokens=60).text.splitlines()
    assert lines[:2] == ["src/value.rs:", "  pub enum Value"], lines


def test_a_methods_impl_block_is_shown_over_it_not_the_struct(
    code: CodeIndexer, tmp_path: Path
) -> None:
    """Impl blocks are named after their type, and a method's enclosing line was the
    struct's, so which trait a method implements was lost."""
    lib = (
        "pub struct Foo { x: u8 }\n"
        "impl Clone for Foo {\n    fn clone(&self) -> Self { Foo { x: self.x } }\n}\n"
        "impl std::fmt::Display for Foo {\n"
        "    fn fmt(&self, f: &mut Formatter) -> Result { Ok(()) }\n}\n"
    )
    main = "fn main() { let f: Foo = Foo { x: 1 }; f.clone(); f.fmt(); }\n"
    write(tmp_path / "imp", {"src/lib.rs": lib, "src/main.rs": main})
    code.index(tmp_path / "imp", project="imp", embed=False)
    assert code.repo_map("imp").text.splitlines()[:7] == [
        "src/lib.rs:",
        "  pub struct Foo",
        "  impl Clone for Foo",
        "    fn clone(&self) -> Self",
        "  impl std::fmt::Display for Foo",
        "    fn fmt(&self, f: &mut Formatter) -> Result",
        "src/main.rs:",
    ]


def test_budget_is_respected_and_a_smaller_map_is_a_prefix(code: CodeIndexer, calls: Path) -> None:
    code.index(calls, project="calls", embed=False)
    full = code.repo_map("calls", budget_tokens=1024)
    previous = ""
    for budget in (1, 8, 20, 40, 80):
        small = code.repo_map("calls", budget_tokens=budget)
        assert small.tokens <= budget
        assert len(small.text) >= len(previous)
        previous = small.text
        assert [f.path for f in small.files] == [f.path for f in full.files][: len(small.files)]
    assert code.repo_map("calls", budget_tokens=1).text == ""
    assert code.repo_map("calls", budget_tokens=10).text.startswith("core/clock.py:")
    words = code.repo_map("calls", budget_tokens=40, token_counter=lambda t: len(t.split()))
    assert len(words.text.split()) == words.tokens <= 40


def test_focus_pulls_the_ranking(code: CodeIndexer, calls: Path) -> None:
    code.index(calls, project="calls", embed=False)
    focused = code.repo_map("calls", budget_tokens=1024, focus=["svc/handler.go"])
    paths = [f.path for f in focused.files]
    assert focused.focus_files == ["svc/handler.go"]
    assert paths.index("svc/store.go") < paths.index("core/clock.py")
    assert paths.index("svc/handler.go") < paths.index("core/clock.py")
    by_symbol = code.repo_map("calls", budget_tokens=1024, focus="Scheduler.next_run")
    assert by_symbol.focus_symbols == ["Scheduler.next_run"]
    assert by_symbol.focus_files == ["core/scheduler.py"]
    # the focus symbol's file first, with its members (the focus symbol among them)
    assert by_symbol.text.splitlines()[:4] == [
        "core/scheduler.py:",
        "  class Scheduler",
        "    def __init__(self, every: float) -> None",
        "    def next_run(self, last: float) -> float",
    ]
    assert by_symbol.files[0].symbols[2].rank > by_symbol.files[0].symbols[1].rank
    # an unused definition of a focus file is shown too
    lonely = code.repo_map("calls", budget_tokens=1024, focus=[str(calls / "tools/lonely.py")])
    assert "def unused_helper() -> int" in lonely.text
    assert lonely.files[0].path == "tools/lonely.py"
    unfocused = [f.path for f in code.repo_map("calls", budget_tokens=1024).files]
    assert unfocused.index("tools/lonely.py") >= 6  # after every file used by another


def test_unchanged_reindex_does_not_touch_the_graph(
    code: CodeIndexer, store: Store, calls: Path
) -> None:
    code.index(calls, project="calls", embed=False)
    before, state = stored_edges(store), graph_state(store)
    code.index(calls, project="calls", embed=False)
    assert graph_state(store) == state
    assert stored_edges(store) == before


def test_incremental_update_after_edit_rename_and_delete(
    code: CodeIndexer, store: Store, calls: Path
) -> None:
    code.index(calls, project="calls", embed=False)
    built_at = graph_state(store)[0]
    assert "core/scheduler.py" in code.repo_map("calls").text  # and the mapper caches the graph

    # edit: report.py now also schedules; a second file defines `now`
    (calls / "app/report.py").write_text(
        "from core.scheduler import Scheduler\n\n\ndef stamp(s: Scheduler) -> float:\n"
        "    return s.next_run(0.0)\n"
    )
    (calls / "core/fake_clock.py").write_text("def now() -> float:\n    return 0.0\n")
    code.index(calls, project="calls", embed=False)
    edges = stored_edges(store)
    names = {(n, s, d) for n, s, d, _ in edges}
    assert ("now", "app/report.py", "core/clock.py") not in names
    assert ("next_run", "app/report.py", "core/scheduler.py") in names
    assert ("now", "app/main.py", "core/fake_clock.py") in names
    assert graph_state(store)[0] == built_at and graph_state(store)[2] >= 1
    assert edges == rebuilt_edges(store)

    # rename: clock.py becomes timebase.py
    os.rename(calls / "core/clock.py", calls / "core/timebase.py")
    code.index(calls, project="calls", embed=False)
    edges = stored_edges(store)
    assert not any("core/clock.py" in (s, d) for _, s, d, _ in edges)
    assert ("now", "core/scheduler.py", "core/timebase.py") in {e[:3] for e in edges}
    assert edges == rebuilt_edges(store)

    # delete: the scheduler goes; nothing points at it and the map forgets it
    built_at = graph_state(store)[0]
    (calls / "core/scheduler.py").unlink()
    code.index(calls, project="calls", embed=False)
    edges = stored_edges(store)
    assert not any("core/scheduler.py" in (s, d) for _, s, d, _ in edges)
    assert graph_state(store)[0] == built_at
    assert edges == rebuilt_edges(store)
    assert "core/scheduler.py" not in code.repo_map("calls").text


def test_a_missing_graph_is_built_or_derived(code: CodeIndexer, store: Store, calls: Path) -> None:
    """Files indexed before the graph existed: the map derives it, the next index stores it."""
    code.index(calls, project="calls", embed=False)
    expected = code.repo_map("calls").text
    with store.transaction() as conn:
        graph.invalidate(conn, project_id(store))
    assert stored_edges(store) == set()
    assert code.repo_map("calls").text == expected
    code.index(calls, project="calls", embed=False)
    assert stored_edges(store) == rebuilt_edges(store) != set()


def test_removing_the_project_removes_its_graph(
    code: CodeIndexer, store: Store, calls: Path
) -> None:
    code.index(calls, project="calls", embed=False)
    code.remove("calls")
    with store.snapshot() as conn:
        assert conn.execute("SELECT count(*) FROM code_edges").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM code_graphs").fetchone() == (0,)


def test_hostile_input(code: CodeIndexer, calls: Path) -> None:
    code.index(calls, project="calls", embed=False)
    for budget in (0, -5, 10**9, True, 2.5, "100", None):
        with pytest.raises(InvalidInputError, match="budget_tokens"):
            code.repo_map("calls", budget_tokens=budget)  # type: ignore[arg-type]
    for focus in ([""], ["a\x00b"], ["x" * 2000], [3], 7, ["\ud800"]):
        with pytest.raises(InvalidInputError, match="focus"):
            code.repo_map("calls", focus=focus)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="at most"):
        code.repo_map("calls", focus=["now"] * 500)
    with pytest.raises(NotFoundError, match="neither an indexed file nor a symbol"):
        code.repo_map("calls", focus=['"now" OR *'])
    with pytest.raises(NotFoundError, match="indexed projects: calls"):
        code.repo_map("nope")
    with pytest.raises(InvalidInputError):
        code.repo_map("")
    # LIKE wildcards in a focus are literal
    with pytest.raises(NotFoundError):
        code.repo_map("calls", focus=["%.%"])


def test_pagerank_known_values() -> None:
    # a cycle is uniform; a star's centre takes what the leaves give
    cycle = pagerank(3, np.array([0, 1, 2]), np.array([1, 2, 0]), np.ones(3))
    assert cycle == pytest.approx([1 / 3] * 3)
    star = pagerank(3, np.array([1, 2]), np.array([0, 0]), np.ones(2))
    assert star.sum() == pytest.approx(1.0)
    # leaves: (1-d)/3 + d * centre/3 (the dangling centre jumps anywhere)
    d = 0.85
    centre = ((1 - d) / 3 + 2 * d * (1 - d) / 3) / (1 - d / 3 - 2 * d * d / 3)
    assert star[0] == pytest.approx(centre, rel=1e-6)
    focused = pagerank(
        3, np.array([0, 1, 2]), np.array([1, 2, 0]), np.ones(3), np.array([1.0, 0, 0])
    )
    assert focused[0] > focused[1] > focused[2]
    assert pagerank(0, np.array([], np.int64), np.array([], np.int64), np.array([])).size == 0


def test_a_name_defined_again_in_a_file_is_shown_once_by_its_first_definition(
    code: CodeIndexer, tmp_path: Path
) -> None:
    write(
        tmp_path / "ov",
        {
            "conv.py": (
                "from typing import TYPE_CHECKING, overload\n\n\n"
                "@overload\ndef convert(value: int) -> int: ...\n"
                "@overload\ndef convert(value: str) -> str: ...\n"
                "def convert(value):\n    return value\n\n\n"
                "class A:\n    def run(self) -> None:\n        pass\n\n"
                "    @property\n    def timeout(self) -> float:\n        return 1.0\n\n"
                "    @timeout.setter\n    def timeout(self, value: float) -> None:\n        pass\n\n\n"
                "class B:\n    def run(self) -> None:\n        pass\n\n\n"
                "if TYPE_CHECKING:\n    class Backend:\n        def typed_only(self) -> int: ...\n"
                "else:\n    class Backend:\n        def connect(self, url):\n            pass\n"
            ),
            "use.py": (
                "from conv import A, B, Backend, convert\n\n"
                "convert(1)\nA().run()\nA().timeout\nB().run()\n"
                "Backend().connect('x')\nBackend().typed_only()\n"
            ),
        },
    )
    code.index(tmp_path / "ov", project="ov", embed=False)
    lines = code.repo_map("ov").text.splitlines()
    # overloads once; a property by its getter; a class defined twice once, with both
    assert [line for line in lines if "convert" in line] == ["  def convert(value: int) -> int"]
    assert [line for line in lines if "timeout" in line] == ["    def timeout(self) -> float"]
    assert lines.count("  class Backend") == 1
    assert "    def connect(self, url)" in lines and "    def typed_only(self) -> int" in lines
    # same-named methods of different classes are each shown
    assert lines.count("    def run(self) -> None") == 2


def test_one_letter_names_make_no_edges(code: CodeIndexer, tmp_path: Path) -> None:
    # `except ... as e` in a file that uses nothing else sent all of its rank to any
    # method named `e`: Django's TimeFormat.e and .s led its map
    root = tmp_path / "proj"
    root.mkdir()
    (root / "dateformat.py").write_text(
        "class TimeFormat:\n    def e(self):\n        return 1\n    def s(self):\n        return 2\n"
    )
    (root / "core.py").write_text("def load_settings_file(path):\n    return path\n")
    (root / "app.py").write_text(
        "from core import load_settings_file\n\ndef main():\n    return load_settings_file('x')\n"
    )
    for i in range(6):
        (root / f"job{i}.py").write_text(
            f"def job{i}():\n    try:\n        return open('f')\n    except OSError as e:\n"
            "        return e\n"
        )
    code.index(root)
    symbols = code.repo_map("proj", budget_tokens=10_000).files
    ranked = [s.qualified_name for f in symbols for s in f.symbols]
    assert ranked.index("load_settings_file") < ranked.index("TimeFormat.e")
