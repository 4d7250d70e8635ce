"""Symbols from a syntax tree: what is defined where, under which name, and why.

Definitions are found with one tree-sitter query per language (matching runs in
C, so a 100k-line file costs milliseconds, not a Python walk over every node).
Nesting comes from byte-range containment, which makes ``Outer.Inner.method``
and "method versus function" fall out of the same pass for every language.
"""

from __future__ import annotations

import inspect
import re
import threading
from dataclasses import dataclass

from tree_sitter import Node, Point, Query, QueryCursor, Tree

from .languages import grammar_of, language

#: Kinds that make a nested function a method.
CLASS_LIKE = frozenset(
    {"class", "struct", "interface", "trait", "impl", "enum", "protocol", "extension", "object"}
)
MAX_SIGNATURE = 300
MAX_DOCSTRING = 4000


@dataclass(frozen=True)
class ExtractedSymbol:
    """One definition in a file; ``parent`` is the index of the enclosing symbol."""

    index: int
    parent: int | None
    kind: str
    name: str
    qualified_name: str
    signature: str
    docstring: str
    start_line: int  # 1-based, inclusive
    end_line: int
    start_byte: int
    end_byte: int
    name_line: int
    name_column: int  # 1-based byte column


@dataclass
class _Found:
    kind: str
    name: str
    name_node: Node | None
    node: Node  # the definition node itself
    range_node: Node  # what the symbol's code spans (decorators, export, template)
    scope: tuple[str, ...] = ()  # qualifiers written in the name (Go receivers, C++ a::b)
    docstring: str = ""
    # JS/TS: the declarator whose name is scope[0] (``const util = {...}``), which may
    # be a symbol itself (an exported constant): then the name is not written twice
    owner: Node | None = None
    # bytes and points the symbol spans when they are not range_node's (a Markdown section)
    span: tuple[int, int, Point, Point] | None = None
    # JS/TS ``this.x = function`` in a class's method: a method of the class
    on_this: bool = False

    def bounds(self) -> tuple[int, int, Point, Point]:
        if self.span is not None:
            return self.span
        r = self.range_node
        return r.start_byte, r.end_byte, r.start_point, r.end_point


# Definition queries: @def is a definition by node type, @const a constant candidate.
_DEFINITIONS: dict[str, str] = {
    "python": """
        (function_definition) @def
        (class_definition) @def
        (module (expression_statement (assignment left: (identifier)) @const))
    """,
    "javascript": """
        (function_declaration) @def
        (generator_function_declaration) @def
        (class_declaration) @def
        (method_definition) @def
        (variable_declarator name: (identifier)
            value: [(arrow_function) (function_expression) (generator_function)]) @def
        (assignment_expression left: (member_expression)
            right: [(arrow_function) (function_expression) (generator_function)]) @def
        (pair value: [(arrow_function) (function_expression) (generator_function)]) @def
        (field_definition property: (_)
            value: [(arrow_function) (function_expression) (generator_function)]) @def
        (program (lexical_declaration (variable_declarator name: (identifier)) @const))
        (program (export_statement (lexical_declaration (variable_declarator name: (identifier)) @const)))
    """,
    "typescript": """
        (function_declaration) @def
        (generator_function_declaration) @def
        (class_declaration) @def
        (abstract_class_declaration) @def
        (method_definition) @def
        (method_signature) @def
        (abstract_method_signature) @def
        (interface_declaration) @def
        (type_alias_declaration) @def
        (enum_declaration) @def
        (internal_module) @def
        (variable_declarator name: (identifier)
            value: [(arrow_function) (function_expression) (generator_function)]) @def
        (assignment_expression left: (member_expression)
            right: [(arrow_function) (function_expression) (generator_function)]) @def
        (pair value: [(arrow_function) (function_expression) (generator_function)]) @def
        (public_field_definition name: (_)
            value: [(arrow_function) (function_expression) (generator_function)]) @def
        (program (lexical_declaration (variable_declarator name: (identifier)) @const))
        (program (export_statement (lexical_declaration (variable_declarator name: (identifier)) @const)))
    """,
    "go": """
        (function_declaration) @def
        (method_declaration) @def
        (type_spec) @def
        (method_elem) @def
        (source_file (const_declaration (const_spec) @const))
    """,
    "rust": """
        (function_item) @def
        (function_signature_item) @def
        (struct_item) @def
        (union_item) @def
        (enum_item) @def
        (trait_item) @def
        (impl_item) @def
        (mod_item) @def
        (const_item) @def
        (static_item) @def
        (type_item) @def
        (macro_definition) @def
    """,
    "java": """
        (class_declaration) @def
        (interface_declaration) @def
        (enum_declaration) @def
        (record_declaration) @def
        (annotation_type_declaration) @def
        (method_declaration) @def
        (constructor_declaration) @def
        (field_declaration) @const
    """,
    "c": """
        (function_definition) @def
        (declaration declarator: [(function_declarator) (pointer_declarator)]) @def
        (struct_specifier name: (_) body: (_)) @def
        (union_specifier name: (_) body: (_)) @def
        (enum_specifier name: (_) body: (_)) @def
        (type_definition) @def
        (preproc_def) @def
        (preproc_function_def) @def
    """,
    "cpp": """
        (function_definition) @def
        (field_declaration
            declarator: [(function_declarator) (pointer_declarator) (reference_declarator)]) @def
        (declaration
            declarator: [(function_declarator) (pointer_declarator) (reference_declarator)]) @def
        (class_specifier name: (_) body: (_)) @def
        (struct_specifier name: (_) body: (_)) @def
        (union_specifier name: (_) body: (_)) @def
        (enum_specifier name: (_) body: (_)) @def
        (namespace_definition name: (_)) @def
        (type_definition) @def
        (alias_declaration) @def
        (preproc_def) @def
        (preproc_function_def) @def
    """,
    "csharp": """
        (class_declaration) @def
        (struct_declaration) @def
        (interface_declaration) @def
        (enum_declaration) @def
        (record_declaration) @def
        (method_declaration) @def
        (constructor_declaration) @def
        (property_declaration) @def
        (namespace_declaration) @def
        (file_scoped_namespace_declaration) @def
        (field_declaration) @const
    """,
    "ruby": """
        (method) @def
        (singleton_method) @def
        (class) @def
        (module) @def
        (assignment left: (constant)) @const
    """,
    "php": """
        (function_definition) @def
        (class_declaration) @def
        (interface_declaration) @def
        (trait_declaration) @def
        (enum_declaration) @def
        (method_declaration) @def
        (namespace_definition) @def
        (const_element) @def
    """,
    "kotlin": """
        (class_declaration) @def
        (object_declaration) @def
        (function_declaration) @def
        (property_declaration) @const
    """,
    "swift": """
        (class_declaration) @def
        (protocol_declaration) @def
        (function_declaration) @def
        (protocol_function_declaration) @def
        (init_declaration) @def
        (source_file (property_declaration) @const)
    """,
    "bash": """
        (function_definition) @def
    """,
    # headings, not the grammar's sections: those start at ATX headings only, so a
    # setext heading (Title / =====) after the first made no section (_section_spans)
    "markdown": """
        (atx_heading) @def
        (setext_heading) @def
    """,
}
_DEFINITIONS["tsx"] = _DEFINITIONS["typescript"]

_COMMENTS: dict[str, frozenset[str]] = {
    "rust": frozenset({"line_comment", "block_comment"}),
    "java": frozenset({"line_comment", "block_comment"}),
    "kotlin": frozenset({"line_comment", "block_comment", "multiline_comment"}),
    "swift": frozenset({"comment", "multiline_comment"}),
}
_DEFAULT_COMMENTS = frozenset({"comment"})
#: Nodes allowed between a doc comment and its definition.
_BETWEEN = frozenset({"attribute_item", "attribute_list", "decorator", "annotation"})

_SIMPLE_KINDS: dict[str, str] = {
    "function_definition": "function",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_item": "function",
    "function_signature_item": "function",
    "class_definition": "class",
    "class_declaration": "class",
    "class": "class",
    "abstract_class_declaration": "class",
    "record_declaration": "class",
    "object_declaration": "object",
    "method_definition": "method",
    "method_signature": "method",
    "abstract_method_signature": "method",
    "method_declaration": "method",
    "method_elem": "method",
    "constructor_declaration": "method",
    "protocol_function_declaration": "method",
    "init_declaration": "method",
    "singleton_method": "method",
    "method": "function",
    "class_specifier": "class",
    "struct_specifier": "struct",
    "struct_declaration": "struct",
    "struct_item": "struct",
    "union_specifier": "struct",
    "union_item": "struct",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "protocol_declaration": "protocol",
    "trait_declaration": "trait",
    "trait_item": "trait",
    "enum_declaration": "enum",
    "enum_specifier": "enum",
    "enum_item": "enum",
    "impl_item": "impl",
    "mod_item": "module",
    "module": "module",
    "namespace_definition": "module",
    "namespace_declaration": "module",
    "file_scoped_namespace_declaration": "module",
    "internal_module": "module",
    "type_alias_declaration": "type",
    "type_definition": "type",
    "alias_declaration": "type",
    "type_item": "type",
    "const_item": "constant",
    "static_item": "constant",
    "const_element": "constant",
    "preproc_def": "constant",
    "preproc_function_def": "macro",
    "macro_definition": "macro",
    "property_declaration": "property",
    "section": "section",
}
#: Every kind a symbol can have (search filters are checked against these).
SYMBOL_KINDS = frozenset(_SIMPLE_KINDS.values()) | {
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "enum",
    "type",
    "extension",
    "section",
}

_UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
_SPACES = re.compile(r"\s+")
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*|/\*!|/\*|\*/|///|//!|//|#+|\*|--)\s?")
_XML_DOC_TAGS = re.compile(r"</?(?:summary|remarks|returns|para|param[^>]*|typeparam[^>]*)>")

_query_lock = threading.Lock()
_queries: dict[str, Query] = {}


def definitions_query(lang: str) -> Query:
    found = _queries.get(lang)
    if found is None:
        with _query_lock:
            found = _queries.get(lang)
            if found is None:
                found = Query(language(lang), _DEFINITIONS[lang])
                _queries[lang] = found
    return found


def text_of(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _first_named(node: Node, *types: str) -> Node | None:
    for child in node.named_children:
        if child.type in types:
            return child
    return None


def _keywords(node: Node) -> set[str]:
    """The anonymous tokens (keywords) directly under ``node`` and its modifiers."""
    words = {c.type for c in node.children if not c.is_named}
    for child in node.named_children:
        if child.type in ("modifiers", "modifier", "class_modifier", "property_modifier"):
            words.update(_keywords(child))
            words.add(text_of(child))
    return words


def _scope_name(node: Node | None) -> str:
    """One part of a C++ ``a::Box<T>::`` scope, bare: ``Box``, not ``Box<T>``."""
    if node is not None and node.type == "template_type":
        node = _field(node, "name")
    return text_of(node).strip()


def _rust_type_name(node: Node) -> tuple[str, Node]:
    """The bare name of the type an ``impl`` is for, and the node that names it.

    References, pointers, generics and paths go (``&'a mut Foo<T>``, ``*const Foo``,
    ``crate::other::Foo`` are ``Foo``), a trait object is its trait (``dyn Greet + Send``
    is ``Greet``), a slice or an array keeps its brackets around its element's name
    (``[T]``, ``[u8; 32]`` is ``[u8]``), a tuple its parentheses (``(A, B)``); anything
    else (a function pointer type) is its text.
    """
    while True:
        t = node.type
        if t in ("reference_type", "pointer_type", "generic_type"):
            inner = _field(node, "type")
        elif t == "scoped_type_identifier":
            inner = _field(node, "name")
        elif t == "dynamic_type":
            inner = _field(node, "trait")
        elif t == "bounded_type":
            inner = node.named_children[0] if node.named_children else None
        elif t == "array_type":
            element = _field(node, "element")
            return (f"[{_rust_type_name(element)[0]}]" if element else text_of(node)), node
        elif t == "tuple_type":
            names = [_rust_type_name(c)[0] for c in node.named_children]
            return f"({', '.join(names)})", node
        else:
            return _SPACES.sub(" ", text_of(node)).strip(), node
        if inner is None:
            return _SPACES.sub(" ", text_of(node)).strip(), node
        node = inner


def _declarator_name(node: Node | None) -> tuple[Node | None, tuple[str, ...]]:
    """The identifier inside a C/C++ declarator chain, and its ``a::b`` scope."""
    while node is not None:
        if node.type in (
            "identifier",
            "field_identifier",
            "type_identifier",
            "operator_name",
            "destructor_name",
            "primitive_type",
        ):
            return node, ()
        if node.type == "qualified_identifier":
            scope: list[str] = []
            while node is not None and node.type == "qualified_identifier":
                scope.append(_scope_name(_field(node, "scope")))
                node = _field(node, "name")
            name_node, _ = _declarator_name(node)
            return name_node, tuple(s for s in scope if s)
        if node.type == "template_type":  # a specialization: template<> struct hash<Foo>
            return _field(node, "name"), ()
        inner = _field(node, "declarator")
        if inner is None:
            inner = next(
                (
                    c
                    for c in node.named_children
                    if "declarator" in c.type
                    or c.type in ("identifier", "qualified_identifier", "field_identifier")
                ),
                None,
            )
        node = inner
    return None, ()


#: Declarators a function's declarator may sit in: ``char *dup(...)``, ``const K& ref()``.
_INDIRECT_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator"})


def _declared_function(declarator: Node | None) -> Node | None:
    """The ``function_declarator`` a C/C++ declaration declares, under any ``*`` and ``&``
    of its return type (``char *dup(const char *s);``, ``Foo& operator=(const Foo&);``).

    None when the declaration declares something else: a variable, or a pointer to a
    function (``int (*cb)(int);``, a callback field, not a method).
    """
    node = declarator
    while node is not None and node.type in _INDIRECT_DECLARATORS:
        node = _field(node, "declarator") or next(
            (c for c in node.named_children if c.type.endswith("declarator")), None
        )
    if node is None or node.type != "function_declarator":
        return None
    inner = _field(node, "declarator")
    while inner is not None and inner.type == "parenthesized_declarator":  # int (f)(int)
        inner = next((c for c in inner.named_children if c.type not in ("comment",)), None)
    if inner is None or inner.type.endswith("declarator"):
        return None  # (*cb)(int): the name is a pointer's, the function is not declared here
    return node


def _describe(lang: str, node: Node, capture: str) -> _Found | None:
    """Kind and name of a captured node, or None when it is not a symbol after all."""
    t = node.type
    kind = _SIMPLE_KINDS.get(t, "")
    name_node = _field(node, "name")
    scope: tuple[str, ...] = ()

    if capture == "const":
        return _describe_constant(lang, node)
    if lang in ("c", "cpp") and t == "function_definition":
        name_node, scope = _declarator_name(_field(node, "declarator"))
    elif lang in ("c", "cpp") and t in ("field_declaration", "declaration"):
        # a member function declared without its body (pure virtual, defined
        # elsewhere) or a header's prototype: a function all the same
        function = _declared_function(_field(node, "declarator"))
        if function is None or (t == "declaration" and _in_function_body(node)):
            # in a body a "prototype" is a macro before a call (``Py_END_ALLOW_THREADS
            # PyMem_Free(path);``) or C++'s most vexing parse, not a function
            return None
        kind = "function"
        name_node, scope = _declarator_name(function)
    elif t == "type_definition":
        name_node, _ = _declarator_name(_field(node, "declarator"))
    elif t == "variable_declarator":
        kind = "function"
    elif t in ("field_definition", "public_field_definition"):
        # a class field holding a function, handler = () => {...}: a method of the class
        kind = "function"
        name_node = _field(node, "property") or name_node
    elif t == "assignment_expression":
        return _describe_assignment(node)
    elif t == "pair" or (t == "method_definition" and _parent_type(node) == "object"):
        return _describe_object_member(node)
    elif t == "type_spec":
        inner = _field(node, "type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            inner.type if inner else "", "type"
        )
    elif t == "method_declaration" and lang == "go":
        receiver = _field(node, "receiver")
        receiver_type = ""
        if receiver is not None:
            decl = _first_named(receiver, "parameter_declaration")
            type_node = _field(decl, "type") if decl is not None else None
            receiver_type = text_of(type_node).lstrip("*").split("[")[0].strip()
        scope = (receiver_type,) if receiver_type else ()
    elif t == "impl_item":
        type_node = _field(node, "type")
        if type_node is None:
            return None
        name, name_node = _rust_type_name(type_node)
        return _Found(kind, name, name_node, node, node) if name else None
    elif t == "constructor_declaration" or t == "init_declaration":
        if name_node is None:
            return _Found(kind, "init", None, node, node)
    elif t == "method" and lang == "ruby":
        kind = "function"
    elif t in ("class", "module") and lang == "ruby" and name_node is not None:
        if name_node.type == "scope_resolution":
            scope = (text_of(_field(name_node, "scope")).replace("::", "."),)
            name_node = _field(name_node, "name")
    elif t == "namespace_definition" and lang == "php":
        name_node = _field(node, "name")
    elif t == "const_element":
        name_node = _first_named(node, "name")
    elif t == "class_declaration" and lang == "kotlin":
        words = _keywords(node)
        kind = "interface" if "interface" in words else "enum" if "enum" in words else "class"
    elif t == "class_declaration" and lang == "swift":
        words = _keywords(node)
        kind = next(
            (k for k in ("struct", "enum", "extension", "actor", "class") if k in words), "class"
        )
        if kind == "actor":
            kind = "class"
    elif t in ("atx_heading", "setext_heading"):
        content = _field(node, "heading_content") or _first_named(node, "paragraph")
        title = _SPACES.sub(" ", text_of(content)).strip()
        if not title:
            return None
        return _Found("section", title[:200], node, node, node)
    elif t == "function_definition" and lang == "bash":
        pass
    elif lang == "cpp" and name_node is not None and name_node.type == "nested_namespace_specifier":
        parts = [c for c in name_node.named_children if c.type == "namespace_identifier"]
        if parts:  # namespace a::b { ... } is b inside a
            name_node, scope = parts[-1], tuple(text_of(p) for p in parts[:-1])
    elif (
        lang == "cpp"
        and name_node is not None
        and name_node.type in ("qualified_identifier", "template_type")
    ):
        # struct Foo::Impl { ... } is Impl inside Foo; template<> struct hash<Foo> is hash
        name_node, scope = _declarator_name(name_node)

    if name_node is None:
        return None
    name = _SPACES.sub(" ", text_of(name_node)).strip()
    if lang == "php" and t == "namespace_definition":
        name = name.replace("\\", ".")
    if not name:
        return None
    return _Found(kind, name, name_node, node, node, scope)


def _parent_type(node: Node) -> str:
    return node.parent.type if node.parent is not None else ""


def _member_path(node: Node | None) -> list[Node] | None:
    """The parts of ``a.b.c`` (``this`` too), or None for anything else (``a[k]``, ``f().x``)."""
    parts: list[Node] = []
    while node is not None and node.type == "member_expression":
        prop = _field(node, "property")
        if prop is None:
            return None
        parts.append(prop)
        node = _field(node, "object")
    if node is None or node.type not in ("identifier", "this"):
        return None
    parts.append(node)
    return parts[::-1]


def _owner_names(parts: list[str]) -> list[str]:
    """Whose a property is: ``Foo.prototype.m`` is ``Foo``'s ``m``; ``module.exports.x``
    and ``exports.x`` are the module's own ``x``; ``this.x`` the enclosing symbol's."""
    if parts[:2] == ["module", "exports"]:
        parts = parts[2:]
    elif parts[:1] in (["exports"], ["this"]):
        parts = parts[1:]
    return [p for p in parts if p != "prototype"]


def _describe_assignment(node: Node) -> _Found | None:
    """``app.listen = function (port) {...}``: method ``listen`` of ``app``, qualified
    ``app.listen``; ``Foo.prototype.m = ...`` is ``Foo.m``; ``exports.x = ...`` and
    ``module.exports = function createApp() {...}`` are functions of the module."""
    path = _member_path(_field(node, "left"))
    if path is None or text_of(path[-1]) == "prototype":
        return None
    names = _owner_names([text_of(p) for p in path])
    if names:
        name_node: Node | None = path[-1]
    else:  # module.exports = function createApp () {...}: the function's own name,
        # or the variable's in var proto = module.exports = function () {...}
        name_node = _field(_field(node, "right") or node, "name")
        if name_node is None:
            holder = node.parent
            if holder is not None and holder.type == "variable_declarator":
                name_node = _field(holder, "name")
            elif holder is not None and holder.type == "assignment_expression":
                outer = _member_path(_field(holder, "left"))
                name_node = outer[-1] if outer else _field(holder, "left")
        if name_node is None or name_node.type not in _NAME_TYPES:
            return None
        names = [text_of(name_node)]
    kind = "method" if len(names) > 1 else "function"
    on_this = text_of(path[0]) == "this" and len(path) == 2
    return _Found(kind, names[-1], name_node, node, node, tuple(names[:-1]), on_this=on_this)


_NAME_TYPES = frozenset({"identifier", "property_identifier"})

#: Expressions an object literal may sit in and still be the value it is assigned.
_TRANSPARENT = frozenset(
    {"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"}
)


def _in_function_body(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("function_definition", "lambda_expression"):
            return True
        parent = parent.parent
    return False


def _key_name(key: Node | None) -> str:
    """A property's name: ``format``, ``"c-d"`` is ``c-d``, ``[Symbol.iterator]`` as written."""
    if key is None:
        return ""
    if key.type == "string":
        return "".join(text_of(c) for c in key.named_children)
    return _SPACES.sub(" ", text_of(key)).strip()


def _object_owner(obj: Node) -> tuple[list[str] | None, Node | None]:
    """The names an object literal's members are qualified with, and the declarator or
    assignment that gives them: ``const util = {...}`` is ``util``, ``Foo.prototype =
    {...}`` is ``Foo``, ``module.exports = {...}`` the module (no names), ``a: {...}``
    inside one of those adds ``a``. None for an object no name holds (an argument)."""
    names: list[str] = []
    node = obj
    while True:
        parent = node.parent
        while parent is not None and parent.type in _TRANSPARENT:
            node, parent = parent, parent.parent
        if parent is None:
            return None, None
        if parent.type == "pair" and _field(parent, "value") == node:
            names.insert(0, _key_name(_field(parent, "key")))
            if parent.parent is None or parent.parent.type != "object":
                return None, None
            node = parent.parent
        elif parent.type == "variable_declarator" and _field(parent, "value") == node:
            name = _field(parent, "name")
            if name is None or name.type != "identifier":
                return None, None
            return [text_of(name), *names], parent
        elif parent.type == "assignment_expression" and _field(parent, "right") == node:
            path = _member_path(_field(parent, "left"))
            if path is None:
                return None, None
            return [*_owner_names([text_of(p) for p in path]), *names], None
        elif parent.type == "export_statement":  # export default {...}: the module's own
            return names, None
        else:
            return None, None


def _describe_object_member(node: Node) -> _Found | None:
    """A function in an object literal, ``format(x) {...}``, ``parse: function (s) {...}``
    or ``trim: (s) => ...``: a method of what holds the object (``util.format``), a
    function of the module in ``module.exports = {...}``."""
    name_node = _field(node, "key") if node.type == "pair" else _field(node, "name")
    name = _key_name(name_node)
    if not name or node.parent is None:
        return None
    names, owner = _object_owner(node.parent)
    if names is None and node.type == "pair":
        # an object no name holds (an argument, an array's item): ``{get: function()
        # {...}}`` to defineProperty, routes' ``handler: () => ...`` are callbacks, and
        # as symbols they filled search and the map with bare ``get`` and ``handler``
        return None
    if names is None:  # shorthand ``data() {...}``, as before: a method of nothing we know
        return _Found("method", name, name_node, node, node)
    kind = "method" if names else "function"
    return _Found(kind, name, name_node, node, node, tuple(names), owner=owner)


def _describe_constant(lang: str, node: Node) -> _Found | None:
    name_node: Node | None = None
    if lang == "python":
        name_node = _field(node, "left")
        if not _UPPER.match(text_of(name_node)):
            return None
    elif lang in ("javascript", "typescript", "tsx"):
        declaration = node.parent
        if declaration is None or text_of(declaration).split(None, 1)[0] != "const":
            return None
        value = _field(node, "value")
        if value is not None and value.type in (
            "arrow_function",
            "function_expression",
            "generator_function",
        ):
            return None  # captured as a function
        name_node = _field(node, "name")
        exported = declaration.parent is not None and declaration.parent.type == "export_statement"
        if not (exported or _UPPER.match(text_of(name_node))):
            return None
    elif lang == "go":
        name_node = _field(node, "name")
    elif lang == "java":
        words = _keywords(node)
        if not {"static", "final"} <= words:
            return None
        declarator = _field(node, "declarator")
        name_node = _field(declarator, "name") if declarator is not None else None
    elif lang == "csharp":
        if "const" not in _keywords(node):
            return None
        declaration = _first_named(node, "variable_declaration")
        declarator = (
            _first_named(declaration, "variable_declarator") if declaration is not None else None
        )
        name_node = _field(declarator, "name") if declarator is not None else None
    elif lang == "ruby":
        name_node = _field(node, "left")
    elif lang == "kotlin":
        if "const" not in _keywords(node):
            return None
        declaration = _first_named(node, "variable_declaration")
        name_node = _first_named(declaration, "identifier") if declaration is not None else None
    elif lang == "swift":
        binding = _first_named(node, "value_binding_pattern")
        if binding is None or text_of(binding) != "let":
            return None
        pattern = _field(node, "name")
        name_node = _field(pattern, "bound_identifier") if pattern is not None else None
    name = text_of(name_node).strip()
    if not name or name_node is None:
        return None
    return _Found("constant", name, name_node, node, node)


_WRAPPERS: dict[str, frozenset[str]] = {
    "python": frozenset({"decorated_definition", "expression_statement"}),
    # a chained assignment (var proto = module.exports = function () {...}) spans its
    # whole statement, and so has the comment above it
    "javascript": frozenset(
        {
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
            "expression_statement",
            "variable_declarator",
            "assignment_expression",
        }
    ),
    "cpp": frozenset({"template_declaration"}),
    "go": frozenset({"type_declaration", "const_declaration"}),
    "java": frozenset(),
}
_WRAPPERS["typescript"] = _WRAPPERS["tsx"] = _WRAPPERS["javascript"]


def _range_node(lang: str, node: Node) -> Node:
    """The node whose text is the symbol's code: decorators, ``export``, ``template<>``."""
    wrappers = _WRAPPERS.get(lang, frozenset())
    current = node
    while current.parent is not None and current.parent.type in wrappers:
        parent = current.parent
        if (
            parent.type
            in (
                "lexical_declaration",
                "variable_declaration",
                "type_declaration",
                "const_declaration",
            )
            and parent.named_child_count != 1
        ):
            break
        current = parent
    return current


def _docstring_python(node: Node) -> str:
    body = _field(node, "body")
    if body is None or body.named_child_count == 0:
        return ""
    first = body.named_children[0]
    if first.type != "expression_statement" or first.named_child_count != 1:
        return ""
    string = first.named_children[0]
    if string.type != "string":
        return ""
    content = "".join(text_of(c) for c in string.named_children if c.type == "string_content")
    return inspect.cleandoc(content)


def clean_comment(raw: str) -> str:
    """Comment text without its markers (``//``, ``#``, ``/** */``, ``///``, ``*``)."""
    lines = []
    for line in raw.splitlines():
        line = line.rstrip()
        if line.endswith("*/"):
            line = line[:-2].rstrip()
        line = _COMMENT_MARKS.sub("", line, count=1)
        lines.append(_XML_DOC_TAGS.sub("", line).rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return inspect.cleandoc("\n".join(lines)) if lines else ""


def _leading_comment(lang: str, anchor: Node) -> str:
    """The comment block right above ``anchor`` (no blank line between them; in
    JavaScript and TypeScript, one blank line after a JSDoc ``/** */`` block, as express
    writes all of its own, unless it opens the file: that is the file's header)."""
    comment_types = _COMMENTS.get(lang, _DEFAULT_COMMENTS)
    parts: list[str] = []
    row = anchor.start_point.row
    node = anchor.prev_named_sibling
    if node is None and anchor.parent is not None and anchor.parent.type in _BODY_TYPES:
        node = anchor.parent.prev_named_sibling  # Ruby: the comment sits before the body
    while node is not None and (node.type in comment_types or node.type in _BETWEEN):
        # a line comment that ends with its newline (Rust's) ends on the line before
        end = node.end_point.row
        if node.end_point.column == 0 and end > node.start_point.row:
            end -= 1
        if end < row - 1 and not (end == row - 2 and not parts and _jsdoc_above(lang, node)):
            break
        if text_of(node).startswith(("//!", "/*!")):
            break  # an inner doc comment: the enclosing module's (Rust's crate docs)
        before = node.prev_sibling
        if (
            before is not None
            and before.type not in comment_types
            and (before.end_point.row == node.start_point.row)
        ):
            break  # a trailing comment of the line above
        if node.type in comment_types and not text_of(node).startswith("#!"):
            parts.append(text_of(node).rstrip("\r\n"))  # Rust's /// ends with its newline
        row = node.start_point.row
        node = node.prev_named_sibling
    return clean_comment("\n".join(reversed(parts))) if parts else ""


def _jsdoc_above(lang: str, node: Node) -> bool:
    """A JSDoc block of several lines (``/**``, its text, `` */``): one-line ``/** Map /
    Set plugin */`` and ``/*****`` banners title a part of the file, not what follows."""
    if lang not in ("javascript", "typescript", "tsx"):
        return False
    if not re.match(r"/\*\*\s", text_of(node)) or node.end_point.row == node.start_point.row:
        return False
    before = node.prev_named_sibling
    while before is not None and before.type == "hash_bang_line":  # #!/usr/bin/env node
        before = before.prev_named_sibling
    opens_file = before is None and (node.parent is None or node.parent.type == "program")
    return not opens_file


_BODY_TYPES = frozenset(
    {
        "block",
        "class_body",
        "function_body",
        "enum_class_body",
        "compound_statement",
        "statement_block",
        "declaration_list",
        "field_declaration_list",
        "body_statement",
        "enum_body",
        "interface_body",
        "protocol_body",
    }
)


#: JS/TS nodes that name a function they hold, and the field that holds it.
_FUNCTION_HOLDERS = {
    "variable_declarator": "value",
    "assignment_expression": "right",
    "pair": "value",
    "field_definition": "value",
    "public_field_definition": "value",
}


def _signature(lang: str, found: _Found, source: bytes) -> str:
    node = found.node
    start_node = found.range_node
    if lang == "python" and start_node.type == "decorated_definition":
        start_node = node
    body = _field(node, "body")
    if body is None and found.kind in ("function", "method") and node.type in _FUNCTION_HOLDERS:
        value = _field(node, _FUNCTION_HOLDERS[node.type])
        body = _field(value, "body") if value is not None else None
    if body is None:
        body = next((c for c in node.named_children if c.type in _BODY_TYPES), None)
    if found.kind == "section" and found.name_node is not None:
        if found.name_node.type == "setext_heading":  # the title, not its underline
            return found.name[:MAX_SIGNATURE]
        return text_of(found.name_node).strip().split("\n", 1)[0].strip()[:MAX_SIGNATURE]
    if body is None and node.type in ("declaration", "field_declaration") and lang in ("c", "cpp"):
        # a prototype: the whole declaration, however many lines its parameters take
        raw = source[start_node.start_byte : start_node.end_byte].decode("utf-8", "replace")
    elif body is not None and body.start_byte > start_node.start_byte:
        end = body.start_byte
        for child in node.children:  # a comment between the header and the body
            if child.start_byte >= end:
                break
            if child.type in _COMMENTS.get(lang, _DEFAULT_COMMENTS) and child.start_byte > (
                start_node.start_byte
            ):
                end = child.start_byte
                break
        raw = source[start_node.start_byte : end].decode("utf-8", "replace")
    else:
        raw = source[start_node.start_byte : start_node.end_byte].decode("utf-8", "replace")
        raw = raw.split("\n", 1)[0]
    signature = _SPACES.sub(" ", raw).strip()
    tails = ("{", "=>", ":") if lang == "python" else ("{", "=>", ";")
    for tail in tails:
        if signature.endswith(tail) and signature != tail:
            signature = signature[: -len(tail)].rstrip()
            break
    if len(signature) > MAX_SIGNATURE:
        signature = signature[: MAX_SIGNATURE - 1] + "…"
    return signature


def _heading_level(heading: Node) -> int:
    """1 to 6: ``##`` is 2, a setext heading underlined with ``=`` 1, with ``-`` 2."""
    for child in heading.children:
        if child.type.startswith(("atx_h", "setext_h")):
            digits = "".join(c for c in child.type if c.isdigit())
            if digits:
                return int(digits)
    return 1


def _section_spans(sections: list[_Found], root: Node) -> None:
    """Each Markdown heading's section: from the heading to the next heading of its
    level or above in the same block (the document, a block quote, a list item), or to
    that block's end. Setext headings (``Title`` over ``=====`` or ``-----``) count as
    ATX ones do; the grammar's own sections start at ATX headings only."""
    open_sections: dict[int, list[tuple[int, _Found]]] = {}
    blocks: dict[int, Node] = {}
    for item in sorted(sections, key=lambda f: f.node.start_byte):
        heading = item.node
        block = heading.parent
        while block is not None and block.type == "section":
            block = block.parent
        block = block or root
        blocks[block.id] = block
        stack = open_sections.setdefault(block.id, [])
        level = _heading_level(heading)
        while stack and stack[-1][0] >= level:
            closed = stack.pop()[1]
            closed.span = (
                closed.node.start_byte,
                heading.start_byte,
                closed.node.start_point,
                heading.start_point,
            )
        stack.append((level, item))
    for block_id, stack in open_sections.items():
        block = blocks[block_id]
        for _, item in stack:
            item.span = (
                item.node.start_byte,
                block.end_byte,
                item.node.start_point,
                block.end_point,
            )


def extract_symbols(lang: str, tree: Tree, source: bytes) -> list[ExtractedSymbol]:
    """Every definition in ``tree``, in source order, with parents and qualified names.

    ``lang`` is the file's language; the tree's own grammar decides (a C++ header
    named ``.h`` has a C++ tree).
    """
    lang = grammar_of(tree, lang)
    captures = QueryCursor(definitions_query(lang)).captures(tree.root_node)
    found: dict[tuple[int, int, str], _Found] = {}
    for capture in ("def", "const"):
        for node in captures.get(capture, []):
            key = (node.start_byte, node.end_byte, node.type)
            if key in found:
                continue
            described = _describe(lang, node, capture)
            if described is None:
                continue
            described.range_node = _range_node(lang, node)
            found[key] = described
    if lang == "markdown":
        _section_spans(list(found.values()), tree.root_node)
    ordered = sorted(found.values(), key=lambda f: (f.bounds()[0], -f.bounds()[1]))
    separator = " > " if lang == "markdown" else "."
    symbols: list[ExtractedSymbol] = []
    stack: list[ExtractedSymbol] = []
    owners: dict[int, Node] = {}  # each symbol's definition node
    for item in ordered:
        start, end, start_point, end_point = item.bounds()
        while stack and not (stack[-1].start_byte <= start and end <= stack[-1].end_byte):
            stack.pop()
        parent = stack[-1] if stack else None
        if item.on_this and parent is not None and parent.kind == "method":
            # this.handler = () => {...} in a class's constructor or method: the class's
            held = next((s for s in reversed(stack) if s.index == parent.parent), None)
            parent = held if held is not None and held.kind in CLASS_LIKE else parent
        kind = item.kind
        if (
            kind == "function"
            and parent is not None
            and (parent.kind in CLASS_LIKE or (lang == "ruby" and parent.kind == "module"))
        ):
            kind = "method"
        if lang == "go" and item.node.type == "method_declaration":
            kind = "method"
        prefix = [parent.qualified_name] if parent is not None else []
        scope = item.scope
        if item.owner is not None and parent is not None and owners.get(parent.index) == item.owner:
            scope = scope[1:]  # export const util = {...}: util is the parent already
        qualified = separator.join([*prefix, *scope, item.name])
        if lang == "python" and item.node.type in ("function_definition", "class_definition"):
            docstring = _docstring_python(item.node) or _leading_comment(lang, item.range_node)
        elif lang == "markdown":
            docstring = ""
        else:
            anchor = item.range_node
            docstring = _leading_comment(lang, anchor)
        if len(docstring) > MAX_DOCSTRING:
            docstring = docstring[: MAX_DOCSTRING - 1] + "…"
        name_point = (item.name_node or item.node).start_point
        symbol = ExtractedSymbol(
            index=len(symbols),
            parent=parent.index if parent is not None else None,
            kind=kind,
            name=item.name,
            qualified_name=qualified,
            signature=_signature(lang, item, source),
            docstring=docstring,
            start_line=start_point.row + 1,
            end_line=_end_line(start_point, end_point),
            start_byte=start,
            end_byte=end,
            name_line=name_point.row + 1,
            name_column=name_point.column + 1,
        )
        symbols.append(symbol)
        stack.append(symbol)
        owners[symbol.index] = item.node
    return symbols


def _end_line(start: Point, end: Point) -> int:
    """1-based last line; a span ending at column 0 ends on the line before."""
    if end.column == 0 and end.row > start.row:
        return end.row
    return end.row + 1
