"""A filter value nothing could match is an error that lists the valid ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import InvalidInputError, NotFoundError, Store
from remembrances.code import CodeIndexer
from remembrances.validation import check_choices

from .conftest import Run, as_json


def test_search_kind_typo_is_an_error_listing_the_kinds(run: Run) -> None:
    run("events", "log", "deployed the payment service", "--subject", "deploys")
    typo = run("search", "payment", "--kind", "evnt")
    assert typo.exit_code == 1
    assert "unknown --kind 'evnt'" in typo.stderr
    assert "code, event, kb" in typo.stderr


def test_search_kind_accepts_the_plural(run: Run) -> None:
    run("events", "log", "deployed the payment service", "--subject", "deploys")
    hits = as_json(run("search", "payment service", "--kind", "events", "--json"))
    assert hits and {h["kind"] for h in hits} == {"event"}


def test_code_search_kind_and_project_typos_are_errors(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "a.py").write_text("class Upload:\n    def send(self):\n        return 1\n")
    run("code", "index", str(repo))
    widget = run("code", "search", "send", "--kind", "widget")
    assert widget.exit_code == 1
    assert "unknown symbol kind 'widget'" in widget.stderr and "method" in widget.stderr
    nope = run("code", "search", "send", "--project", "nope")
    assert nope.exit_code == 1
    assert "no code project named 'nope'" in nope.stderr and "app" in nope.stderr
    plural = as_json(run("code", "search", "send", "--kind", "methods", "--json"))
    assert plural and {h["kind"] for h in plural} == {"method"}
    classes = as_json(run("code", "search", "upload", "--kind", "classes", "--json"))
    assert {h["kind"] for h in classes} == {"class"}


def test_python_code_search_checks_its_filters(store: Store, tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "a.py").write_text("def send():\n    return 1\n")
    code = CodeIndexer(store, workers=1)
    code.index(repo)
    with pytest.raises(NotFoundError, match="indexed projects: app"):
        code.search("send", project="nope")
    with pytest.raises(InvalidInputError, match="unknown symbol kind 'widget'"):
        code.search("send", kinds=["widget"])


@pytest.mark.parametrize(
    ("given", "expected"),
    [("events", ["event"]), ("Event", ["event"]), ("classes", ["class"]), ("kb", ["kb"])],
)
def test_plural_and_case_spellings(given: str, expected: list[str]) -> None:
    assert check_choices([given], {"event", "class", "kb"}, "kind") == expected


def test_a_near_miss_is_not_accepted() -> None:
    with pytest.raises(InvalidInputError, match="use one of: event, kb"):
        check_choices(["kbxx"], {"event", "kb"}, "kind")
