"""Exact symbols per language: kinds, qualified names, lines, docstrings, signatures."""

from __future__ import annotations

import pytest

from remembrances.code.parsing.analysis import analyze_source
from tests.code import sample_sources as S

# (kind, qualified name, start line, end line, docstring) in source order.
EXPECTED: dict[str, tuple[str, list[tuple[str, str, int, int, str]]]] = {
    "python": (
        S.PYTHON,
        [
            ("constant", "MAX_RETRIES", 4, 4, ""),
            ("function", "retry_upload", 7, 11, "Retry a failed upload with exponential backoff."),
            ("class", "Session", 14, 26, "An HTTP session."),
            ("class", "Session.Adapter", 17, 19, ""),
            ("method", "Session.Adapter.send", 18, 19, ""),
            ("method", "Session.send", 21, 23, "Send a request."),
            ("method", "Session.getUserName", 25, 26, ""),
        ],
    ),
    "javascript": (
        S.JAVASCRIPT,
        [
            ("function", "formatPrice", 2, 4, "Formats a price."),
            ("class", "Cart", 6, 10, ""),
            ("method", "Cart.addItem", 7, 9, ""),
            ("constant", "TAX_RATE", 12, 12, ""),
            ("function", "total", 13, 13, ""),
        ],
    ),
    "typescript": (
        S.TYPESCRIPT,
        [
            ("interface", "Shape", 2, 4, "A shape with an area."),
            ("method", "Shape.area", 3, 3, ""),
            ("class", "Circle", 6, 11, ""),
            ("method", "Circle.constructor", 7, 7, ""),
            ("method", "Circle.area", 8, 10, ""),
            ("type", "Point", 13, 13, ""),
            ("enum", "Color", 15, 18, ""),
        ],
    ),
    "tsx": (S.TSX, [("function", "Greeting", 2, 4, "A greeting component.")]),
    "go": (
        S.GO,
        [
            ("struct", "Server", 4, 6, "Server serves requests."),
            ("interface", "Handler", 9, 11, "Handler handles things."),
            ("method", "Handler.Handle", 10, 10, ""),
            ("method", "Server.Run", 14, 16, "Run starts the server."),
            ("function", "NewServer", 18, 20, ""),
            ("constant", "DefaultPort", 22, 22, ""),
        ],
    ),
    "rust": (
        S.RUST,
        [
            ("struct", "Point", 2, 4, "A point in space."),
            ("impl", "Point", 6, 11, ""),
            ("method", "Point.new", 8, 10, "Makes a point."),
            ("trait", "Shape", 13, 15, ""),
            ("method", "Shape.area", 14, 14, ""),
            ("enum", "Direction", 17, 19, ""),
            ("constant", "ORIGIN", 21, 21, ""),
            ("function", "main", 23, 23, ""),
        ],
    ),
    "java": (
        S.JAVA,
        [
            ("class", "UserRepository", 4, 15, "Repository of users."),
            ("constant", "UserRepository.MAX_USERS", 5, 5, ""),
            ("method", "UserRepository.findUser", 8, 10, "Finds a user by id."),
            ("interface", "UserRepository.Listener", 12, 14, ""),
            ("method", "UserRepository.Listener.changed", 13, 13, ""),
        ],
    ),
    "c": (
        S.C,
        [
            ("constant", "BUFFER_SIZE", 3, 3, ""),
            ("struct", "point", 6, 9, "A 2D point."),
            ("function", "add", 12, 14, "Adds two numbers."),
        ],
    ),
    "cpp": (
        S.CPP,
        [
            ("module", "geo", 1, 9, ""),
            ("class", "geo.Vec", 4, 7, "A vector type."),
            ("method", "geo.Vec.length", 6, 6, ""),
            ("function", "square", 11, 13, ""),
        ],
    ),
    "csharp": (
        S.CSHARP,
        [
            ("module", "Shop", 1, 19, ""),
            ("class", "Shop.Order", 4, 13, "An order."),
            ("constant", "Shop.Order.MaxLines", 6, 6, ""),
            ("property", "Shop.Order.Total", 8, 8, ""),
            ("method", "Shop.Order.Submit", 10, 12, ""),
            ("interface", "Shop.IPayment", 15, 18, ""),
            ("method", "Shop.IPayment.Pay", 17, 17, ""),
        ],
    ),
    "ruby": (
        S.RUBY,
        [
            ("module", "Billing", 2, 15, "Billing module."),
            ("class", "Billing.Invoice", 4, 14, "An invoice."),
            ("constant", "Billing.Invoice.TAX", 5, 5, ""),
            ("method", "Billing.Invoice.total", 7, 9, ""),
            ("method", "Billing.Invoice.build", 11, 13, ""),
        ],
    ),
    "php": (
        S.PHP,
        [
            ("module", "App", 2, 2, ""),
            ("class", "Mailer", 5, 11, "Sends mail."),
            ("constant", "Mailer.RETRIES", 6, 6, ""),
            ("method", "Mailer.send", 8, 10, ""),
            ("function", "helper", 13, 15, ""),
        ],
    ),
    "kotlin": (
        S.KOTLIN,
        [
            ("interface", "Shape", 4, 6, "A shape."),
            ("method", "Shape.area", 5, 5, ""),
            ("class", "Box", 8, 12, ""),
            ("method", "Box.area", 9, 11, ""),
            ("function", "main", 14, 16, ""),
            ("constant", "LIMIT", 18, 18, ""),
        ],
    ),
    "swift": (
        S.SWIFT,
        [
            ("class", "Car", 2, 5, "A vehicle."),
            ("method", "Car.drive", 3, 4, ""),
            ("struct", "Wheel", 7, 9, ""),
            ("protocol", "Drivable", 11, 13, ""),
            ("method", "Drivable.drive", 12, 12, ""),
            ("function", "honk", 15, 16, ""),
        ],
    ),
    "bash": (
        S.BASH,
        [
            ("function", "deploy", 3, 5, "Deploys the app."),
            ("function", "cleanup", 7, 9, ""),
        ],
    ),
    "markdown": (
        S.MARKDOWN,
        [
            ("section", "Guide", 1, 15, ""),
            ("section", "Guide > Install", 5, 12, ""),
            ("section", "Guide > Install > Linux", 9, 12, ""),
            ("section", "Guide > Usage", 13, 15, ""),
        ],
    ),
}


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_symbols_per_language(language: str) -> None:
    source, expected = EXPECTED[language]
    analysis = analyze_source("f", language, source.encode())
    assert not analysis.has_error
    got = [
        (s.kind, s.qualified_name, s.start_line, s.end_line, s.docstring) for s in analysis.symbols
    ]
    assert got == expected


def test_signatures_and_parents() -> None:
    symbols = analyze_source("u.py", "python", S.PYTHON.encode()).symbols
    by_name = {s.qualified_name: s for s in symbols}
    assert by_name["retry_upload"].signature == (
        "def retry_upload(path: str, attempts: int = MAX_RETRIES) -> bool"
    )
    assert by_name["Session.send"].signature == "def send(self, request)"
    session = by_name["Session"]
    assert by_name["Session.send"].parent == session.index
    assert by_name["Session.Adapter.send"].parent == by_name["Session.Adapter"].index
    assert session.parent is None
    # Byte ranges cover the code exactly.
    source = S.PYTHON.encode()
    method = by_name["Session.getUserName"]
    assert source[method.start_byte : method.end_byte].startswith(b"def getUserName")
    assert source[method.start_byte : method.end_byte].endswith(b"return request.user")

    go = {s.qualified_name: s for s in analyze_source("s.go", "go", S.GO.encode()).symbols}
    assert go["Server.Run"].signature == "func (s *Server) Run() error"
    rust = {s.qualified_name: s for s in analyze_source("p.rs", "rust", S.RUST.encode()).symbols}
    assert rust["Shape.area"].signature == "fn area(&self) -> f64"


def test_syntax_error_keeps_the_valid_symbols() -> None:
    analysis = analyze_source(
        "b.py", "python", b"def broken(:\n    pass\n\ndef ok():\n    return 1\n"
    )
    assert analysis.has_error
    assert "ok" in [s.name for s in analysis.symbols]


def test_long_symbol_is_split_into_parts_not_truncated() -> None:
    body = "".join(f"    value_{i} = compute_something({i})\n" for i in range(400))
    source = f"def long_function():\n{body}    return 0\n"
    analysis = analyze_source("l.py", "python", source.encode(), budget=1000)
    parts = [c for c in analysis.chunks if c.metadata["qualified_name"] == "long_function"]
    assert len(parts) > 5
    assert [c.metadata["part"] for c in parts] == list(range(1, len(parts) + 1))
    assert {c.metadata["parts"] for c in parts} == {len(parts)}
    assert {c.metadata["symbol"] for c in parts} == {0}
    code = "".join(c.text[c.metadata["code_offset"] :] for c in parts)
    assert code == source.rstrip("\n")  # every line is in some part, in order
    assert all(len(c.text[c.metadata["code_offset"] :]) <= 1000 for c in parts)
    assert parts[1].metadata["start_line"] > parts[0].metadata["start_line"]


def test_code_outside_symbols_and_files_without_symbols_get_chunks() -> None:
    module = analyze_source(
        "m.py", "python", b"import os\nprint(os.getcwd())\n\ndef f():\n    pass\n"
    )
    file_chunks = [c for c in module.chunks if c.metadata["kind"] == "file"]
    assert len(file_chunks) == 1
    assert "print(os.getcwd())" in file_chunks[0].text
    assert "def f(): …" in file_chunks[0].text  # the function is elided, not repeated
    script = analyze_source("s.sh", "bash", b"echo hello\nls -la\n")
    assert script.symbols == []
    assert [c.metadata["kind"] for c in script.chunks] == ["file"]


def test_camel_case_identifiers_are_split_into_the_indexed_text() -> None:
    analysis = analyze_source("u.py", "python", S.PYTHON.encode())
    chunk = next(
        c for c in analysis.chunks if c.metadata["qualified_name"] == "Session.getUserName"
    )
    header = chunk.text[: chunk.metadata["code_offset"]]
    assert "get user name" in header


def test_the_model_reads_the_code_alone_not_the_header_or_the_enclosing_class() -> None:
    source = (
        b"import os\n\n"
        b"class Session:\n"
        b"    @property\n"
        b"    def user(self):\n"
        b"        return os.getlogin()\n\n"
        b"def helper():\n"
        b"    return 1\n"
    )
    analysis = analyze_source("pkg/session.py", "python", source)
    by_name = {c.metadata["qualified_name"]: c for c in analysis.chunks}
    helper, method = by_name["helper"], by_name["Session.user"]
    assert helper.embed_text == "def helper():\n    return 1"  # no path, no terms line
    assert "pkg/session.py" in helper.text  # the text index still has the header
    assert method.embed_text is not None
    assert method.embed_text.startswith("@property\n    def user(self):")
    assert "class Session" not in method.embed_text
    assert "return os.getlogin()" in method.embed_text


def test_later_parts_of_a_long_symbol_are_embedded_under_its_first_line() -> None:
    body = "".join(f"    value_{i} = compute_something({i})\n" for i in range(200))
    source = f"def long_function(x):\n{body}    return 0\n"
    analysis = analyze_source("l.py", "python", source.encode(), budget=1000)
    parts = [c for c in analysis.chunks if c.metadata["qualified_name"] == "long_function"]
    assert parts[0].embed_text is not None and parts[0].embed_text.startswith("def long_function")
    for later in parts[1:]:
        assert later.embed_text is not None
        assert later.embed_text.startswith("def long_function(x): …\n    value_")


def test_a_leading_comment_is_embedded_with_the_code() -> None:
    source = b"// Adds two numbers.\nfunction add(a, b) {\n  return a + b;\n}\n"
    analysis = analyze_source("m.js", "javascript", source)
    chunk = next(c for c in analysis.chunks if c.metadata["qualified_name"] == "add")
    assert chunk.embed_text is not None
    assert chunk.embed_text.startswith("Adds two numbers.\nfunction add(a, b)")


def test_a_crate_comment_and_a_blank_line_are_not_an_items_doc() -> None:
    """Rust's ``//!`` documents the enclosing module, and its line comments end with
    their newline: a blank line after one still separates it from the next item."""
    source = b"//! Geometry crate.\n\n/// Maximum coordinate.\npub const MAX: i32 = 10;\n"
    [symbol] = analyze_source("lib.rs", "rust", source).symbols
    assert symbol.docstring == "Maximum coordinate."


def test_cpp_member_functions_declared_without_a_body_are_methods() -> None:
    """Pure virtual and out-of-class members, and a header's prototypes, as interface
    methods are in Java, Go and TypeScript."""
    source = (
        b"class Shape {\n"
        b"public:\n"
        b"    /// Area of the shape.\n"
        b"    virtual double area() const = 0;\n"
        b"    void set(int v);\n"
        b"    int get() const { return 1; }\n"
        b"};\n"
        b"double total(const Shape& a, const Shape& b);\n"
    )
    symbols = {s.qualified_name: s for s in analyze_source("shape.hpp", "cpp", source).symbols}
    assert {q: symbols[q].kind for q in ("Shape.area", "Shape.set", "Shape.get", "total")} == {
        "Shape.area": "method",
        "Shape.set": "method",
        "Shape.get": "method",
        "total": "function",
    }
    assert symbols["Shape.area"].docstring == "Area of the shape."
