"""Rust symbols the per-language table does not show: what an ``impl`` is for, and
doc comments."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from remembrances.code import CodeIndexer
from remembrances.code.parsing.analysis import analyze_source
from tests.code.symbol_rows import symbol_rows

rows = partial(symbol_rows, "lib.rs", "rust")


IMPLS = """\
pub struct Foo<T> { x: T }
impl<T> Foo<T> { pub fn new(x: T) -> Self { Foo { x } } }
impl<'a, T> Greet for &'a mut Foo<T> { fn hi(&self) {} }
impl<T> Greet for &Foo<T> { fn hi(&self) {} }
impl Greet for crate::other::Bar { fn hi(&self) {} }
impl<T> Greet for *const ser::Baz<T> { fn hi(&self) {} }
impl<T> Greet for [T] { fn hi(&self) {} }
impl Greet for [u8; 32] { fn hi(&self) {} }
impl dyn Greet { fn boxed(&self) {} }
impl dyn Greet + Send { fn sent(&self) {} }
impl<A, B> Greet for (A, Foo<B>) { fn hi(&self) {} }
"""


def test_an_impl_is_named_by_its_types_bare_name() -> None:
    """References, lifetimes, generics and paths are not part of the name; a trait
    object is its trait; slices and tuples keep their brackets."""
    assert rows(IMPLS) == [
        ("struct", "Foo", 1, 1, "pub struct Foo<T>"),
        ("impl", "Foo", 2, 2, "impl<T> Foo<T>"),
        ("method", "Foo.new", 2, 2, "pub fn new(x: T) -> Self"),
        ("impl", "Foo", 3, 3, "impl<'a, T> Greet for &'a mut Foo<T>"),
        ("method", "Foo.hi", 3, 3, "fn hi(&self)"),
        ("impl", "Foo", 4, 4, "impl<T> Greet for &Foo<T>"),
        ("method", "Foo.hi", 4, 4, "fn hi(&self)"),
        ("impl", "Bar", 5, 5, "impl Greet for crate::other::Bar"),
        ("method", "Bar.hi", 5, 5, "fn hi(&self)"),
        ("impl", "Baz", 6, 6, "impl<T> Greet for *const ser::Baz<T>"),
        ("method", "Baz.hi", 6, 6, "fn hi(&self)"),
        ("impl", "[T]", 7, 7, "impl<T> Greet for [T]"),
        ("method", "[T].hi", 7, 7, "fn hi(&self)"),
        ("impl", "[u8]", 8, 8, "impl Greet for [u8; 32]"),
        ("method", "[u8].hi", 8, 8, "fn hi(&self)"),
        ("impl", "Greet", 9, 9, "impl dyn Greet"),
        ("method", "Greet.boxed", 9, 9, "fn boxed(&self)"),
        ("impl", "Greet", 10, 10, "impl dyn Greet + Send"),
        ("method", "Greet.sent", 10, 10, "fn sent(&self)"),
        ("impl", "(A, Foo)", 11, 11, "impl<A, B> Greet for (A, Foo<B>)"),
        ("method", "(A, Foo).hi", 11, 11, "fn hi(&self)"),
    ]


def test_find_symbol_finds_a_method_of_an_impl_for_a_reference(
    code: CodeIndexer, tmp_path: Path
) -> None:
    """serde_json's ``impl<'a, W, F> ser::Serializer for &'a mut Serializer<W, F>``."""
    root = tmp_path / "serde"
    (root / "src").mkdir(parents=True)
    (root / "src" / "ser.rs").write_text(
        "pub struct Serializer<W, F> { writer: W, formatter: F }\n"
        "impl<'a, W, F> ser::Serializer for &'a mut Serializer<W, F> {\n"
        "    fn serialize_str(self, value: &str) -> Result<()> { Ok(()) }\n"
        "}\n"
    )
    code.index(root, embed=False)
    found = code.find_symbol("Serializer.serialize_str")
    assert [(s.qualified_name, s.kind, s.path, s.start_line) for s in found] == [
        ("Serializer.serialize_str", "method", "src/ser.rs", 3)
    ]
    assert [s.qualified_name for s in code.find_symbol("Serializer::serialize_str")] == [
        "Serializer.serialize_str"
    ]


DOCS = """\
//! Crate docs.
//!
//! More.

/// First line.
///
/// Second paragraph.
pub fn f() {}

/**
 * Block doc.
 *
 * Second.
 */
pub fn g() {}
"""


def test_doc_comments_keep_their_blank_lines_and_add_none() -> None:
    """A ``///`` comment ends with its newline: joined by another, every line break
    was doubled."""
    for source in (DOCS, DOCS.replace("\n", "\r\n")):
        symbols = analyze_source("lib.rs", "rust", source.encode()).symbols
        assert [(s.qualified_name, s.start_line, s.docstring) for s in symbols] == [
            ("f", 8, "First line.\n\nSecond paragraph."),
            ("g", 15, "Block doc.\n\nSecond."),
        ]
