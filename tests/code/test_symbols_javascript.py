"""JavaScript and TypeScript functions that are not declarations: assigned to a
property, held by an object literal, or a class field."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from remembrances.code import CodeIndexer
from tests.code.symbol_rows import symbol_rows

rows = partial(symbol_rows, docstrings=True)


ASSIGNED = """\
var app = exports = module.exports = {};

/** Start listening. */
app.listen = function listen(port) {
  return port;
};

function Router() {}

/** Handle a request. */
Router.prototype.handle = function (req) {
  function next(err) {
    return err;
  }
  return next(req);
};

module.exports.helper = () => 1;
exports.other = function other() {};
obj[key] = function () {};
"""


def test_functions_assigned_to_properties_are_symbols() -> None:
    """``obj.m = function`` is a method of ``obj``; ``Foo.prototype.m`` one of ``Foo``;
    what a CommonJS module exports is a function of the module; a closure nests under
    the function it is in."""
    assert rows("app.js", "javascript", ASSIGNED) == [
        (
            "method",
            "app.listen",
            4,
            6,
            "app.listen = function listen(port)",
            "Start listening.",
        ),
        ("function", "Router", 8, 8, "function Router()", ""),
        (
            "method",
            "Router.handle",
            11,
            16,
            "Router.prototype.handle = function (req)",
            "Handle a request.",
        ),
        ("function", "Router.handle.next", 12, 14, "function next(err)", ""),
        ("function", "helper", 18, 18, "module.exports.helper = ()", ""),
        ("function", "other", 19, 19, "exports.other = function other()", ""),
    ]


def test_a_function_a_module_exports_is_named_by_itself_or_its_variable() -> None:
    source = (
        "/** Create the app. */\n"
        "module.exports = function createApp(opts) {\n"
        "  return opts;\n"
        "};\n"
        "/** The router. */\n"
        "var proto = module.exports = function (options) {\n"
        "  function router(req) {}\n"
        "  return router;\n"
        "};\n"
        "module.exports = () => {};\n"
    )
    assert rows("mod.js", "javascript", source) == [
        (
            "function",
            "createApp",
            2,
            4,
            "module.exports = function createApp(opts)",
            "Create the app.",
        ),
        (
            "function",
            "proto",
            6,
            9,
            "var proto = module.exports = function (options)",
            "The router.",
        ),
        ("function", "proto.router", 7, 7, "function router(req)", ""),
    ]


OBJECTS = """\
const util = {
  /** format a thing */
  format(x) { return x; },
  parse: function (s) { return s; },
  trim: (s) => s.trim(),
  nested: { deep() {} },
  "with-dash": function () {},
  size: 3,
};
export const api = {
  get(id) { return id; },
};
Foo.prototype = {
  bar: function () {},
};
module.exports = { a() {}, b: () => 1 };
"""


def test_object_literal_functions_are_methods_of_what_holds_them() -> None:
    assert rows("util.js", "javascript", OBJECTS) == [
        ("method", "util.format", 3, 3, "format(x)", "format a thing"),
        ("method", "util.parse", 4, 4, "parse: function (s)", ""),
        ("method", "util.trim", 5, 5, "trim: (s)", ""),
        ("method", "util.nested.deep", 6, 6, "deep()", ""),
        ("method", "util.with-dash", 7, 7, '"with-dash": function ()', ""),
        ("constant", "api", 10, 12, "export const api =", ""),
        ("method", "api.get", 11, 11, "get(id)", ""),  # not api.api.get
        ("method", "Foo.bar", 14, 14, "bar: function ()", ""),
        ("function", "a", 16, 16, "a()", ""),
        ("function", "b", 16, 16, "b: ()", ""),
    ]


def test_typescript_has_the_same_assigned_and_object_functions() -> None:
    source = (
        "export const handlers = {\n"
        "  onLoad(id: number): void {},\n"
        "  onSave: async (id: number): Promise<void> => {},\n"
        "} as const;\n"
        "Widget.prototype.render = function (this: Widget): string {\n"
        "  return '';\n"
        "};\n"
    )
    expected = [
        ("constant", "handlers", 1, 4, "export const handlers =", ""),
        ("method", "handlers.onLoad", 2, 2, "onLoad(id: number): void", ""),
        ("method", "handlers.onSave", 3, 3, "onSave: async (id: number): Promise<void>", ""),
        (
            "method",
            "Widget.render",
            5,
            7,
            "Widget.prototype.render = function (this: Widget): string",
            "",
        ),
    ]
    assert rows("h.ts", "typescript", source) == expected
    assert rows("h.tsx", "tsx", source) == expected


def test_find_symbol_finds_methods_assigned_to_properties(
    code: CodeIndexer, tmp_path: Path
) -> None:
    root = tmp_path / "express"
    (root / "lib" / "router").mkdir(parents=True)
    (root / "lib" / "router" / "layer.js").write_text(
        "function Layer(path) { this.path = path; }\n"
        "Layer.prototype.match = function match(path) {\n"
        "  return path === this.path;\n"
        "};\n"
    )
    (root / "lib" / "application.js").write_text(
        "var app = exports = module.exports = {};\n"
        "app.listen = function listen() {\n"
        "  return 1;\n"
        "};\n"
    )
    code.index(root, embed=False)
    assert [(s.kind, s.path, s.start_line) for s in code.find_symbol("Layer.match")] == [
        ("method", "lib/router/layer.js", 2)
    ]
    assert [(s.kind, s.path, s.start_line) for s in code.find_symbol("app.listen")] == [
        ("method", "lib/application.js", 2)
    ]


def test_class_fields_holding_functions_are_methods() -> None:
    js = (
        "class Widget {\n"
        "  /** Click. */\n"
        "  handler = () => {};\n"
        "  #secret = function () {};\n"
        "  static make = async (x) => {\n"
        "    return x;\n"
        "  };\n"
        "  count = 0;\n"
        "}\n"
    )
    assert rows("w.js", "javascript", js) == [
        ("class", "Widget", 1, 9, "class Widget", ""),
        ("method", "Widget.handler", 3, 3, "handler = ()", "Click."),
        ("method", "Widget.#secret", 4, 4, "#secret = function ()", ""),
        ("method", "Widget.make", 5, 7, "static make = async (x)", ""),
    ]
    ts = (
        "export abstract class Repo<T> {\n"
        "  private cache = new Map<number, T>();\n"
        "  /** Load one. */\n"
        "  public load = async (id: number): Promise<T> => {\n"
        "    return this.find(id);\n"
        "  };\n"
        "  static create = <U,>(items: U[]): U[] => items;\n"
        "  abstract find(id: number): Promise<T>;\n"
        "}\n"
    )
    expected = [
        ("class", "Repo", 1, 9, "export abstract class Repo<T>", ""),
        ("method", "Repo.load", 4, 6, "public load = async (id: number): Promise<T>", "Load one."),
        ("method", "Repo.create", 7, 7, "static create = <U,>(items: U[]): U[]", ""),
        ("method", "Repo.find", 8, 8, "abstract find(id: number): Promise<T>", ""),
    ]
    assert rows("repo.ts", "typescript", ts) == expected
    assert rows("repo.tsx", "tsx", ts) == expected


def test_callbacks_in_objects_no_name_holds_are_not_symbols() -> None:
    """Routes' ``handler: () => ...``, table-driven tests' ``check``, a getter passed to
    ``defineProperty``: bare ``handler`` and ``get`` filled search and the map."""
    source = (
        "const routes = [\n"
        "  { path: '/a', handler: () => 'a' },\n"
        "  { path: '/b', handler: function () { return 'b'; } },\n"
        "];\n"
        "Object.defineProperty(app, 'router', { get: function () { return 1; } });\n"
        "const util = { trim: (s) => s.trim() };\n"
        "export default {\n  data() { return {}; },\n"
        "  methods: { save: function () {}, load() {} },\n};\n"
    )
    assert [(kind, name) for kind, name, *_ in rows("r.js", "javascript", source)] == [
        ("method", "util.trim"),  # held by a name: a symbol
        ("function", "data"),  # the default export is the module's, as module.exports
        ("method", "methods.save"),
        ("method", "methods.load"),
    ]


def test_a_jsdoc_block_one_blank_line_above_is_the_docstring() -> None:
    """express writes every JSDoc a blank line above its function: 20 of its 109
    functions had a docstring, 103 now. A file's header and a one-line banner are not."""
    source = (
        "/**\n * Module header.\n */\n\n'use strict';\n\n"
        "/**\n * Listen for connections.\n * @public\n */\n\n"
        "app.listen = function listen(port) {\n  return port;\n};\n\n"
        "/** Patches plugin */\n\nfunction patches() {}\n\n"
        "// a plain comment\n\nfunction plain() {}\n"
    )
    assert [(name, doc) for _, name, _, _, _, doc in rows("app.js", "javascript", source)] == [
        ("app.listen", "Listen for connections.\n@public"),
        ("patches", ""),
        ("plain", ""),
    ]
    header = "/**\n * First in the file: its header.\n */\n\nfunction first() {}\n"
    assert [doc for *_, doc in rows("b.ts", "typescript", header)] == [""]
    script = "#!/usr/bin/env node\n/**\n * my-cli, MIT licensed.\n */\n\nfunction main() {}\n"
    assert [doc for *_, doc in rows("cli.js", "javascript", script)] == [""]  # after #!


def test_this_assigned_a_function_in_a_classs_method_is_a_method_of_the_class() -> None:
    """zod's ``this.addIssue = (sub) => ...`` in the constructor was
    ``ZodError.constructor.addIssue``, a function of the constructor."""
    source = (
        "class ZodError {\n  constructor(issues) {\n"
        "    this.addIssue = (sub) => { this.issues.push(sub); };\n  }\n"
        "  reset() {\n    this.handler = function () {};\n  }\n}\n"
        "function Foo() {\n  this.bar = function () { return 1; };\n}\n"
    )
    assert [(kind, name) for kind, name, *_ in rows("e.js", "javascript", source)] == [
        ("class", "ZodError"),
        ("method", "ZodError.constructor"),
        ("method", "ZodError.addIssue"),
        ("method", "ZodError.reset"),
        ("method", "ZodError.handler"),
        ("function", "Foo"),
        ("function", "Foo.bar"),  # a constructor function's: as before
    ]
