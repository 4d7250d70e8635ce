"""Search, find_symbol, outline, references, projects, stats and remove."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances.code import CodeIndexer
from remembrances.embeddings import HashEmbedder
from remembrances.errors import InvalidInputError, NotFoundError
from tests.code.repo_builder import MAX_FILE_BYTES


@pytest.fixture
def indexed(code: CodeIndexer, repo: Path) -> CodeIndexer:
    code.index(repo)
    return code


def test_search_returns_symbol_fields_path_and_code(indexed: CodeIndexer) -> None:
    hits = indexed.search("retry a failed upload with backoff", project="shop")
    top = hits[0]
    assert top.qualified_name == "retry_upload"
    assert top.kind == "function" and top.language == "python"
    assert top.path == "src/upload.py"
    assert (top.start_line, top.end_line) == (7, 11)
    assert top.code.startswith("def retry_upload(path: str")
    assert top.code.rstrip().endswith("return False")
    assert top.signature.startswith("def retry_upload(")
    assert top.docstring == "Retry a failed upload with exponential backoff."
    assert top.symbol_id is not None
    [symbol] = indexed.find_symbol("retry_upload")
    assert symbol.id == top.symbol_id
    assert 0.0 <= top.score <= 1.0


def test_identifier_words_match_camel_case_names(indexed: CodeIndexer) -> None:
    hits = indexed.search("get user name", mode="text", limit=3)
    assert hits[0].qualified_name == "Session.getUserName"
    hits = indexed.search("format price", mode="text", limit=3)
    assert hits[0].qualified_name == "formatPrice"
    assert hits[0].language == "javascript"


def test_search_filters_by_language_kind_and_path(indexed: CodeIndexer) -> None:
    hits = indexed.search("area shape", languages=["rust"], limit=20)
    assert hits and {h.language for h in hits} == {"rust"}
    hits = indexed.search("area shape", kinds=["method"], limit=20)
    assert hits and {h.kind for h in hits} == {"method"}
    assert {"Shape.area", "Circle.area", "Box.area"} <= {h.qualified_name for h in hits}
    hits = indexed.search("area", path="web", limit=20)
    assert hits and {h.path for h in hits} <= {"web/shapes.ts", "web/cart.js", "web/greeting.tsx"}
    hits = indexed.search("area", path="web/shapes.ts", limit=20)
    assert hits and {h.path for h in hits} == {"web/shapes.ts"}
    assert indexed.search("area", path="nowhere", limit=20) == []
    hits = indexed.search("area", project="shop", languages="ts", kinds="enum")
    assert [h.qualified_name for h in hits] == ["Color"]  # the only TypeScript enum


def test_markdown_sections_are_searchable(indexed: CodeIndexer) -> None:
    hits = indexed.search("installer apt", languages=["markdown"], mode="text")
    assert hits[0].kind == "section"
    assert hits[0].qualified_name in ("Guide > Install", "Guide > Install > Linux")


def test_find_symbol_by_name_and_qualified_name(indexed: CodeIndexer) -> None:
    sends = indexed.find_symbol("send")
    assert sorted(s.qualified_name for s in sends) == [
        "Mailer.send",
        "Session.Adapter.send",
        "Session.send",
    ]
    [session_send] = indexed.find_symbol("Session.send")
    assert session_send.path == "src/upload.py"
    assert (session_send.start_line, session_send.end_line) == (21, 23)
    assert session_send.parent == "Session"
    assert session_send.docstring == "Send a request."
    [adapter_send] = indexed.find_symbol("Adapter.send")  # a qualified suffix
    assert adapter_send.qualified_name == "Session.Adapter.send"
    assert [s.qualified_name for s in indexed.find_symbol("geo::Vec")] == ["geo.Vec"]
    assert [s.kind for s in indexed.find_symbol("Point", kind="struct")] == ["struct"]
    assert [s.kind for s in indexed.find_symbol("Point", kind="Structs")] == ["struct"]
    with pytest.raises(InvalidInputError, match="unknown symbol kind 'banana'; use one of"):
        indexed.find_symbol("Point", kind="banana")
    assert {s.kind for s in indexed.find_symbol("Point")} == {"struct", "impl", "type"}
    assert (
        indexed.find_symbol("SESSION")[0].qualified_name == "Session"
    )  # case-insensitive fallback
    assert indexed.find_symbol("no_such_symbol") == []
    assert indexed.find_symbol("100%_sure") == []  # LIKE wildcards are escaped


def test_find_symbol_by_module_and_qualified_name(indexed: CodeIndexer) -> None:
    """``module.Class.method``, as Python users write a name, with the whole module path
    or its tail; a module that is not the symbol's file finds nothing."""
    for name in ("src.upload.Session.send", "upload.Session.send", "upload.Session.Adapter.send"):
        found = indexed.find_symbol(name)
        assert [(s.path, s.qualified_name) for s in found] == [
            ("src/upload.py", name.split("upload.", 1)[1])
        ], name
    assert [s.qualified_name for s in indexed.find_symbol("upload.retry_upload")] == [
        "retry_upload"
    ]
    assert indexed.find_symbol("mailer.Session.send") == []
    assert indexed.find_symbol("pload.Session.send") == []  # whole module parts only
    assert indexed.find_symbol("src.Session.send") == []  # not the symbol's module


def test_a_name_may_start_with_the_package_folder_a_project_was_indexed_from(
    code: CodeIndexer, repo: Path
) -> None:
    """Indexed from ``src`` itself, modules are named without it (``upload``), but users
    write the package: ``src.upload.Session.send``, as ``click.core.Command.main``."""
    code.index(repo / "src", project="pkg")
    found = code.find_symbol("src.upload.Session.send", project="pkg")
    assert [(s.path, s.qualified_name) for s in found] == [("upload.py", "Session.send")]
    assert code.find_symbol("other.upload.Session.send", project="pkg") == []


def test_rust_and_cpp_paths_and_generics_find_the_bare_names(
    code: CodeIndexer, tmp_path: Path
) -> None:
    """Symbols are named ``Bar.hi`` and ``ns.Box.value``; users write the path and the
    generics (``crate::other::Bar::hi``, ``ns::Box<T>::value``)."""
    root = tmp_path / "mixed"
    (root / "src").mkdir(parents=True)
    (root / "src" / "other.rs").write_text(
        "pub struct Bar;\n\nimpl<T> Bar {\n    pub fn hi(&self) {}\n}\n"
    )
    (root / "src" / "box.hpp").write_text(
        "namespace ns {\ntemplate <typename T> struct Box {\n  T value();\n"
        "  Box& operator=(const Box& other);\n  bool operator<(const Box& other) const;\n};\n}\n"
        "template <typename T> struct operator_registry {\n  void add(T op);\n};\n"
    )
    code.index(root, project="mixed")
    for written, found in (
        ("crate::other::Bar::hi", "Bar.hi"),
        ("other::Bar.hi", "Bar.hi"),
        ("ns::Box<T>::value", "ns.Box.value"),
        ("Box<Vec<u8>>.value", "ns.Box.value"),
        ("ns::Box<T>::operator=", "ns.Box.operator="),
        ("Box<T>::operator<", "ns.Box.operator<"),
        ("operator<", "ns.Box.operator<"),
        ("operator_registry<T>::add", "operator_registry.add"),
    ):
        assert [s.qualified_name for s in code.find_symbol(written)] == [found], written
    assert code.find_symbol("crate::nowhere::Baz::hi") == []
    assert code.find_symbol("nowhere.Bar.hi") == []  # a dotted module path stays exact


def test_a_checkout_named_like_its_package_is_not_read_as_the_package(
    code: CodeIndexer, tmp_path: Path
) -> None:
    """In a checkout ``click/`` holding ``src/click`` and ``tests``, ``click.core.X`` is
    ``src/click/core.py``'s, not ``tests/core.py``'s that the folder's name would allow."""
    root = tmp_path / "click"
    for where in ("src/click/core.py", "tests/core.py", "examples/hello.py"):
        (root / where).parent.mkdir(parents=True, exist_ok=True)
        (root / where).write_text(
            "class Command:\n    def main(self):\n        pass\n\n\ndef echo():\n    pass\n"
        )
    code.index(root, project="click")
    found = code.find_symbol("click.core.Command.main", project="click")
    assert [s.path for s in found] == ["src/click/core.py"]
    assert code.find_symbol("click.echo", project="click") == []


def test_the_package_folders_own_init_is_the_package(code: CodeIndexer, tmp_path: Path) -> None:
    """``sqlparse/`` indexed as the project: ``sqlparse.format`` is the function its
    ``__init__.py`` defines, as ``sqlparse.lexer.Lexer`` is lexer.py's class."""
    root = tmp_path / "sqlparse"
    (root / "engine").mkdir(parents=True)
    (root / "__init__.py").write_text("def format(sql):\n    return sql\n")
    (root / "lexer.py").write_text("class Lexer:\n    def format(self):\n        pass\n")
    (root / "engine" / "__init__.py").write_text("def format(stream):\n    pass\n")
    code.index(root)
    assert [s.path for s in code.find_symbol("sqlparse.format")] == ["__init__.py"]
    assert [s.path for s in code.find_symbol("sqlparse.engine.format")] == ["engine/__init__.py"]
    assert [s.path for s in code.find_symbol("sqlparse.lexer.Lexer.format")] == ["lexer.py"]
    assert code.find_symbol("other.format") == []


def test_outline_is_the_nested_symbol_tree(
    indexed: CodeIndexer, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outline = indexed.outline("src/upload.py")
    assert [n.symbol.qualified_name for n in outline] == ["MAX_RETRIES", "retry_upload", "Session"]
    session = outline[2]
    assert [c.symbol.name for c in session.children] == ["Adapter", "send", "getUserName"]
    assert [c.symbol.name for c in session.children[0].children] == ["send"]
    same = indexed.outline(repo / "src/upload.py", project="shop")  # an absolute path works too
    assert [n.symbol.name for n in same] == ["MAX_RETRIES", "retry_upload", "Session"]
    assert outline[2].to_dict()["children"][0]["name"] == "Adapter"
    with pytest.raises(NotFoundError, match="index the repository again"):
        indexed.outline("src/missing.py")  # added or renamed since the index, perhaps
    # named from below the root, or from the shell's folder: the one file it can be
    assert indexed.outline("upload.py") == outline
    monkeypatch.chdir(repo.parent)
    assert indexed.outline(f"{repo.name}/src/upload.py") == outline


def test_a_file_named_from_below_the_root_with_several_matches_is_asked_back(
    code: CodeIndexer, tmp_path: Path
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "util.py").write_text("def helper():\n    pass\n")
    code.index(tmp_path)
    with pytest.raises(NotFoundError, match=r"did you mean a/util\.py, b/util\.py\?"):
        code.outline("util.py")


@pytest.mark.backends("sqlite", "postgresql")
def test_the_path_hint_is_the_same_on_both_engines(indexed: CodeIndexer) -> None:
    # named from below the root, in another case: both engines find the indexed path
    assert indexed.outline("UPLOAD.py")[0].symbol.name == "MAX_RETRIES"
    with pytest.raises(NotFoundError, match="index the repository again"):
        indexed.outline("%load.py")  # LIKE's wildcards are the file's letters


def test_a_file_asked_of_a_memory_without_code_says_to_index_one(code: CodeIndexer) -> None:
    with pytest.raises(NotFoundError, match="index its repository first"):
        code.outline("src/upload.py")


def test_references_are_identifier_tokens_not_substrings(indexed: CodeIndexer) -> None:
    refs = indexed.references("getUserName")
    assert [(r.path, r.line) for r in refs] == [
        ("src/mentions.py", 5),
        ("src/upload.py", 23),
        ("src/upload.py", 25),
    ]
    # Not the comment on line 1 nor the string on line 2 of mentions.py.
    by_line = {(r.path, r.line): r for r in refs}
    assert by_line[("src/upload.py", 25)].is_definition
    assert not by_line[("src/upload.py", 23)].is_definition
    assert by_line[("src/upload.py", 23)].symbol == "Session.send"
    assert by_line[("src/mentions.py", 5)].symbol == "caller"
    assert by_line[("src/upload.py", 23)].line_text.strip() == "return self.getUserName(request)"
    assert by_line[("src/upload.py", 23)].column == 21
    assert not any(r.stale for r in refs)
    assert indexed.references("Session.getUserName") == refs  # the last part is the name
    assert indexed.references("getUser") == []  # no substring matches


def test_references_flag_files_changed_since_indexing(indexed: CodeIndexer, repo: Path) -> None:
    path = repo / "src/mentions.py"
    path.write_text(path.read_text() + "\n# edited\n")
    refs = [r for r in indexed.references("caller") if r.path == "src/mentions.py"]
    assert refs and all(r.stale for r in refs)


def test_projects_stats_and_remove(indexed: CodeIndexer, repo: Path) -> None:
    [project] = indexed.projects()
    assert project.name == "shop" and project.root == str(repo.resolve())
    stats = indexed.stats("shop")
    assert stats.symbol_kinds["method"] >= 20
    assert stats.files_with_errors == 1
    assert stats.pending_embeddings == 0
    assert stats.chunks == indexed.store.count(kind="code", collection="shop")
    files = stats.files
    assert indexed.remove("shop") == files
    assert indexed.projects() == []
    assert indexed.find_symbol("Session") == []
    assert indexed.search("session send") == []
    assert indexed.store.count(kind="code") == 0
    with pytest.raises(NotFoundError, match="no code project named 'shop'"):
        indexed.stats("shop")
    with pytest.raises(NotFoundError):
        indexed.remove("shop")


def test_lookup_rejects_bad_arguments(indexed: CodeIndexer) -> None:
    with pytest.raises(InvalidInputError):
        indexed.find_symbol("")
    with pytest.raises(InvalidInputError):
        indexed.find_symbol(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        indexed.references("   ")
    with pytest.raises(InvalidInputError, match="unknown language"):
        indexed.search("x", languages=["cobol"])
    with pytest.raises(InvalidInputError):
        indexed.search("x", limit=0)
    with pytest.raises(InvalidInputError):
        indexed.search("x", project="")


def test_a_use_on_a_minified_line_shows_the_stretch_around_it(
    code: CodeIndexer, tmp_path: Path
) -> None:
    root = tmp_path / "minified"
    root.mkdir()
    bundle = "".join(f"function f{i}(x){{return x+{i}}};" for i in range(400))
    (root / "bundle.js").write_text(bundle + "\n")
    code.index(root, project="min")
    [use] = code.references("f200", project="min")
    assert len(use.line_text) <= 402 and use.line_text.startswith("…")
    assert "function f200(x){return x+200}" in use.line_text


def test_the_module_path_of_an_import_is_no_use_of_a_name(
    code: CodeIndexer, tmp_path: Path
) -> None:
    # `from app.core import run` made every importing file a user of any method named
    # `app` or `core`: they led the repository map of Django (`OGRGeomType.django`)
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    (root / "app" / "geo.py").write_text("class GeomType:\n    def app(self):\n        return 1\n")
    (root / "app" / "core.py").write_text("def run(req):\n    return req\n")
    for i in range(3):
        (root / "app" / f"view{i}.py").write_text(
            "from app.core import run\nimport app.geo as geo\nfrom .core import run as go\n\n"
            f"def view{i}(req):\n    return run(req)\n"
        )
    code.index(root)
    assert [(r.path, r.line) for r in code.references("app")] == [("app/geo.py", 2)]
    assert code.references("core") == []
    assert {r.path for r in code.references("run")} >= {"app/view0.py", "app/core.py"}
    assert [r.line for r in code.references("run") if r.path == "app/view0.py"] == [1, 3, 6]
    assert [r.line for r in code.references("geo") if r.path == "app/view0.py"] == [2]  # alias
    with code.store.snapshot() as tx:
        names = {r["name"] for r in tx.execute("SELECT name FROM code_edges").fetchall()}
    assert "app" not in names and "run" in names


def test_an_index_from_before_that_change_is_parsed_again(
    code: CodeIndexer, repo: Path, embedder: HashEmbedder
) -> None:
    first = code.index(repo)
    with code.store.transaction() as tx:
        tx.execute("UPDATE meta SET value = '5' WHERE key = 'schema:code'")
    again = CodeIndexer(code.store, max_file_bytes=MAX_FILE_BYTES, workers=1)
    # until then, the references still know their files did not change
    assert not any(r.stale for r in again.references("getUserName"))
    calls = embedder.calls
    report = again.index(repo)
    assert report.files_unchanged == 0 and report.files_indexed == first.files_indexed
    assert embedder.calls == calls  # the same chunks: no vector is made again
    assert again.index(repo).files_unchanged == first.files_indexed
