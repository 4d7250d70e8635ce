"""C and C++ symbols the per-language table does not show: prototypes under ``*`` and
``&``, C++ headers named ``.h``, and qualified names built from declarators."""

from __future__ import annotations

from remembrances.code.parsing.analysis import analyze_source


def rows(path: str, language: str, source: str) -> list[tuple[str, str, int, int, str]]:
    """(kind, qualified name, start line, end line, signature) of every symbol."""
    symbols = analyze_source(path, language, source.encode()).symbols
    return [(s.kind, s.qualified_name, s.start_line, s.end_line, s.signature) for s in symbols]


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
