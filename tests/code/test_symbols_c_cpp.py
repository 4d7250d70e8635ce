"""C and C++ symbols the per-language table does not show: prototypes under ``*`` and
``&``, C++ headers named ``.h``, and qualified names built from declarators."""

from __future__ import annotations

from pathlib import Path

import remembrances
from remembrances.code.parsing.analysis import analyze_source
from remembrances.code.parsing.languages import grammar_of, parser
from remembrances.embeddings import HashEmbedder
from tests.code.symbol_rows import symbol_rows

rows = symbol_rows


def test_c_prototypes_are_functions_whatever_their_return_type() -> None:
    source = (
        "int add(int a, int b);\n"
        "char *dup(const char *s);\n"
        "char **split(const char *s,\n"
        "             char sep);\n"
        "struct s { int (*cb)(int); };\n"
        "int (*handler)(int);\n"
        "static int *counter;\n"
        "int add(int a, int b) { return a + b; }\n"
    )
    assert rows("a.h", "c", source) == [
        ("function", "add", 1, 1, "int add(int a, int b)"),
        ("function", "dup", 2, 2, "char *dup(const char *s)"),
        ("function", "split", 3, 4, "char **split(const char *s, char sep)"),
        ("struct", "s", 5, 5, "struct s"),  # cb is a field holding a pointer, not a function
        ("function", "add", 8, 8, "int add(int a, int b)"),
    ]


def test_cpp_members_returning_pointers_and_references_are_methods() -> None:
    source = (
        "char *dup2(const char *s);\n"
        "class K {\n"
        "public:\n"
        "    char *name();\n"
        "    const K& ref() const;\n"
        "    K* ptr();\n"
        "    static K* make();\n"
        "    K& operator=(const K&);\n"
        "    K&& moved();\n"
        "    int (*callback)(int);\n"
        "};\n"
    )
    assert rows("b.hpp", "cpp", source) == [
        ("function", "dup2", 1, 1, "char *dup2(const char *s)"),
        ("class", "K", 2, 11, "class K"),
        ("method", "K.name", 4, 4, "char *name()"),
        ("method", "K.ref", 5, 5, "const K& ref() const"),
        ("method", "K.ptr", 6, 6, "K* ptr()"),
        ("method", "K.make", 7, 7, "static K* make()"),
        ("method", "K.operator=", 8, 8, "K& operator=(const K&)"),
        ("method", "K.moved", 9, 9, "K&& moved()"),
    ]


WIDGET_H = """\
#pragma once
namespace ui {
class Widget {
public:
    explicit Widget(int w);
    int width() const;
    const Widget& self() const;
private:
    int w_;
};
}
"""


def test_a_cpp_header_named_h_is_parsed_as_cpp() -> None:
    analysis = analyze_source("include/widget.h", "c", WIDGET_H.encode())
    assert not analysis.has_error  # the C grammar reads it with errors
    assert analysis.language == "c"  # a .h file's language is still its name's
    assert [
        (s.kind, s.qualified_name, s.start_line, s.end_line, s.signature) for s in analysis.symbols
    ] == [
        ("module", "ui", 2, 11, "namespace ui"),
        ("class", "ui.Widget", 3, 10, "class Widget"),
        ("method", "ui.Widget.Widget", 5, 5, "explicit Widget(int w)"),
        ("method", "ui.Widget.width", 6, 6, "int width() const"),
        ("method", "ui.Widget.self", 7, 7, "const Widget& self() const"),
    ]
    assert "Widget" in analysis.names
    # its chunks are C++, so that a search of languages=["cpp"] finds them
    assert {c.metadata["language"] for c in analysis.chunks} == {"cpp"}


def test_a_cpp_header_named_h_is_searched_as_cpp(tmp_path: Path) -> None:
    (tmp_path / "ui" / "include").mkdir(parents=True)
    (tmp_path / "ui" / "include" / "widget.h").write_text(WIDGET_H)
    (tmp_path / "ui" / "util.h").write_text("int clamp(int value, int low, int high);\n")
    with remembrances.open(tmp_path / "m.db", embedder=HashEmbedder(64)) as svc:
        svc.code.index(tmp_path / "ui", project="ui")
        cpp = svc.code.search("widget width", languages=["cpp"], mode="text")
        c = svc.code.search("widget width clamp", languages=["c"], mode="text")
    assert {h.qualified_name for h in cpp} >= {"ui.Widget.width"}
    assert {h.path for h in c} == {"util.h"}  # plain C stays C


def test_a_cpp_header_that_c_reads_without_an_error_is_cpp_too() -> None:
    """``namespace llvm {`` and ``class K {...}`` are C functions returning a
    ``namespace`` and a ``class`` to the C grammar, and no error."""
    source = "namespace llvm {\nclass Record;\nint main2(int argc, char **argv);\n}\n"
    assert rows("Main.h", "c", source) == [
        ("module", "llvm", 1, 4, "namespace llvm"),
        ("function", "llvm.main2", 3, 3, "int main2(int argc, char **argv)"),
    ]
    assert rows("k.h", "c", "class K { int x; };\n") == [("class", "K", 1, 1, "class K")]


def test_c_that_uses_cpp_keywords_as_names_stays_c() -> None:
    clean = (
        "struct class *find_class(const char *name);\n"
        "int count(struct dev *p) { int class = p->class; return class; }\n"
        "int template = 1, new = 2;\n"
    )
    # with a syntax error elsewhere, the C++ grammar does no better: it stays C too
    broken = clean + "int broken(void) { return 1 + ; }\n"
    for source in (clean, broken):
        tree = parser("c").parse(source.encode())
        assert grammar_of(tree, "c") == "c"
    assert rows("dev.h", "c", clean) == [
        ("function", "find_class", 1, 1, "struct class *find_class(const char *name)"),
        ("function", "count", 2, 2, "int count(struct dev *p)"),
    ]


def test_cpp_qualified_names_are_bare_names_joined_by_dots() -> None:
    """No template arguments and no ``::`` in a qualified name, as Rust's
    ``impl<T> Foo<T>`` gives ``Foo.new``."""
    source = (
        "namespace ns {\n"
        "template <typename T>\n"
        "T Box<T>::value() const { return T(); }\n"
        "struct Foo::Impl { int z; };\n"
        "template <> struct hash<Foo> { int h() const; };\n"
        "}\n"
        "namespace a::b { void nested(); }\n"
        "template <typename T> int ns::Box<T>::Inner::get() { return 0; }\n"
    )
    assert rows("foo.cpp", "cpp", source) == [
        ("module", "ns", 1, 6, "namespace ns"),
        ("function", "ns.Box.value", 2, 3, "template <typename T> T Box<T>::value() const"),
        ("struct", "ns.Foo.Impl", 4, 4, "struct Foo::Impl"),
        ("struct", "ns.hash", 5, 5, "template <> struct hash<Foo>"),
        ("method", "ns.hash.h", 5, 5, "int h() const"),
        ("module", "a.b", 7, 7, "namespace a::b"),
        ("function", "a.b.nested", 7, 7, "void nested()"),
        (
            "function",
            "ns.Box.Inner.get",
            8,
            8,
            "template <typename T> int ns::Box<T>::Inner::get()",
        ),
    ]


def test_a_call_after_a_macro_in_a_body_is_not_a_prototype() -> None:
    """``Py_END_ALLOW_THREADS`` then ``PyMem_Free(path);`` parses as a declaration: psutil's
    ``disk_usage`` got a function ``disk_usage.PyMem_Free``. So does C++'s ``Foo f();``."""
    c_body = (
        "static PyObject *\ndisk_usage(PyObject *self, PyObject *args) {\n"
        "    Py_BEGIN_ALLOW_THREADS\n    retval = do_io(path);\n    Py_END_ALLOW_THREADS\n\n"
        "    PyMem_Free(path);\n    return NULL;\n}\nint add(int a, int b);\n"
    )
    assert [(kind, name) for kind, name, *_ in rows("disk.c", "c", c_body)] == [
        ("function", "disk_usage"),
        ("function", "add"),  # a prototype outside any body still is one
    ]
    cpp_body = "int main() {\n    Widget w();\n    return 0;\n}\n"
    assert [(kind, name) for kind, name, *_ in rows("m.cpp", "cpp", cpp_body)] == [
        ("function", "main")
    ]
