"""``code map`` through click's runner on a real index."""

from __future__ import annotations

from pathlib import Path

from remembrances.code.repo_map import DEFAULT_BUDGET_TOKENS
from tests.code.test_repo_map import FILES, write

from .conftest import Run, as_json


def test_code_map(run: Run, tmp_path: Path) -> None:
    write(
        tmp_path / "calls", {**FILES, "core/typed.py": "def pairs() -> list[int]:\n    return []\n"}
    )
    (tmp_path / "calls" / "app" / "use_typed.py").write_text(
        "from core.typed import pairs\npairs()\n"
    )
    assert run("code", "index", str(tmp_path / "calls"), "--project", "calls").exit_code == 0

    shown = run("code", "map", "calls", "--tokens", "400")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("core/clock.py:\n  def now() -> float\n")
    assert "  def pairs() -> list[int]\n" in shown.stdout  # brackets are not markup

    data = as_json(run("code", "map", "calls", "--focus", "svc/handler.go", "--json"))
    assert data["focus_files"] == ["svc/handler.go"]
    assert data["budget_tokens"] == DEFAULT_BUDGET_TOKENS  # the one default, not a copy
    assert data["tokens"] <= DEFAULT_BUDGET_TOKENS
    assert f"default: {DEFAULT_BUDGET_TOKENS}" in run("code", "map", "--help").stdout
    assert data["text"].splitlines()[0] in ("svc/handler.go:", "svc/store.go:")

    tiny = run("code", "map", "calls", "--tokens", "1")
    assert tiny.exit_code == 0 and "nothing fits in 1 tokens" in tiny.stdout
    bad = run("code", "map", "calls", "--tokens", "0")
    assert bad.exit_code == 1 and "--tokens must be between" in bad.output
    assert "budget_tokens" not in bad.output  # the option, not the Python parameter
    unknown = run("code", "map", "calls", "--focus", "nowhere.py")
    assert unknown.exit_code == 1 and "neither an indexed file nor a symbol" in unknown.output
    missing = run("code", "map", "nope")
    assert missing.exit_code == 1 and "no code project named 'nope'" in missing.output


def test_piped_output_keeps_long_lines_whole(run: Run, tmp_path: Path) -> None:
    """Piped into a model (a hook), an 80-column wrap cut signatures onto new lines
    that lost their indentation."""
    signature = (
        "pub fn a_function_with_a_rather_long_signature(first_argument: &str, "
        "second_argument: usize, third: bool) -> Result<Vec<String>, std::io::Error>"
    )
    (tmp_path / "wrap").mkdir()
    (tmp_path / "wrap" / "lib.rs").write_text(signature + " { Ok(vec![]) }\n")
    assert run("code", "index", str(tmp_path / "wrap"), "--project", "wrap").exit_code == 0
    assert run("code", "map", "wrap").stdout == f"lib.rs:\n  {signature}\n"
    for args in (("code", "symbol", "a_function_with_a_rather_long_signature"),
                 ("code", "search", "long signature", "--project", "wrap")):  # fmt: skip
        shown = run(*args).stdout
        assert f"\n  1 {signature}" in shown, shown  # the symbol's signature, a hit's code
        assert "lib.rs:1 a_function_with_a_rather_long_signature (function)\n" in shown
