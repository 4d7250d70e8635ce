"""Code indexer throughput on CPython's standard library.

Question: how fast does a repository of ~1,800 files become searchable, where
does the time go, and does re-indexing an unchanged repository cost about as
much as hashing its files?

Setup: the ``Lib/`` of the Python running this script
(``sysconfig.get_paths()["stdlib"]``; site-packages and the default excludes are
left out), indexed into a fresh file:
- full tree with the hashing test embedder (``hash:384``): files/s, symbols/s,
  the time split (discovery, hashing, parsing, writing, embedding) and the time
  until text search works (all chunks written, before any vector);
- parsing in one process versus worker processes (``workers=1`` vs the default),
  text only;
- re-index of the unchanged tree, against a baseline measured in the same run:
  reading and SHA-256-hashing the same files;
- the default local embedder (MiniLM int8 ONNX) on a fixed 100-file subset
  (every n-th file in path order) to get its chunks/s, and from it the time the
  whole tree's vectors would take (the backfill that follows text indexing);
- the repository map (a copy of the tree, so files can be edited): building the
  reference graph from the existing index against updating it after one file
  changes (target: the update at most 5 % of the build), the map's size against
  its budget, how often ``enrich_context`` shows the definition of a symbol a
  prompt names, and, when ``benchmarks/devsuite`` is present, how often the
  answer to a development-suite code question is in a 1,024-token map focused
  on the files of the top-3 search hits.

Run: ``.venv/bin/python -m benchmarks.bench_code`` (``--quick`` skips the local
embedder and the serial-parsing comparison; ``--map-only`` runs only the map
part; ``--definitions-only`` only indexes the tree and checks the definitions a
prompt names, into benchmarks/results/code_definitions.md). Writes
benchmarks/results/code.md and benchmarks/results/code_map.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import remembrances
from benchmarks.harness import best_of, cpu_seconds, load_average, read_and_hash
from remembrances import RemembrancesService, Store
from remembrances.code import CodeIndexer, IndexReport, OutlineNode, RepoMap
from remembrances.code.discovery import discover
from remembrances.code.parsing.analysis import analyze_source
from remembrances.code.records import module_name
from remembrances.code.repo_map import RepoMapper
from remembrances.code.writer import default_workers
from remembrances.embeddings import HashEmbedder
from remembrances.enrichment import ContextEnricher, EnricherConfig, Enrichment
from remembrances.enrichment.code_focus import code_names, wait_idle

RESULTS = Path(__file__).resolve().parent / "results" / "code.md"
MAP_RESULTS = Path(__file__).resolve().parent / "results" / "code_map.md"
DEFINITIONS_RESULTS = Path(__file__).resolve().parent / "results" / "code_definitions.md"
SUBSET = 100


def hash_baseline(root: Path) -> tuple[float, int, int]:
    """Seconds to list and read + SHA-256 every indexable file (no database)."""
    start = time.perf_counter()
    found = discover(root)
    _, files, total = read_and_hash(f.absolute for f in found.files)
    return time.perf_counter() - start, files, total


def run_index(
    root: Path, db: Path, *, workers: int | None = None, embed: bool = True, dim: int = 384
) -> tuple[IndexReport, Store, CodeIndexer]:
    store = Store(db, embedder=HashEmbedder(dim))
    code = CodeIndexer(store, workers=workers)
    report = code.index(root, project="stdlib", embed=embed)
    return report, store, code


def split(report: IndexReport) -> str:
    t = report.timings
    return (
        f"discovery {t['discovery']:.2f} s, hashing {t['hashing']:.2f} s, "
        f"parsing {t['parsing']:.2f} s, writing {t['writing']:.2f} s, "
        f"embedding {t['embedding']:.2f} s; total {t['total']:.2f} s"
    )


def subset_repo(root: Path, target: Path) -> int:
    files = discover(root, languages=["python"]).files
    step = max(len(files) // SUBSET, 1)
    chosen = files[::step][:SUBSET]
    for f in chosen:
        destination = target / f.path
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f.absolute, destination)
    return len(chosen)


#: Files edited for the update measurement: a leaf module and two used everywhere.
UPDATE_FILES = ("colorsys.py", "json/decoder.py", "typing.py")
BUDGETS = (256, 1024, 4096)
ENRICH_SAMPLE = 60
#: Seconds each enrichment source may take in the definitions measurement.
DEFINITIONS_TIMEOUT = 30.0


def sample_symbols(code: CodeIndexer, root: Path, n: int) -> list[tuple[str, str, str, int, int]]:
    """Every k-th function, class or method outside tests, not private, in file and
    source order: (qualified, name, path, start, end), read through ``code.outline``."""
    rows: list[tuple[str, str, str, int, int]] = []

    def walk(nodes: list[OutlineNode]) -> None:
        for node in nodes:
            s = node.symbol
            if s.kind in ("function", "class", "method") and not s.name.startswith("_"):
                rows.append((s.qualified_name, s.name, s.path, s.start_line, s.end_line))
            walk(node.children)

    for f in discover(root, languages=["python"]).files:
        if not (f.path.startswith("test/") or "/test" in f.path):
            walk(code.outline(f.path, project="stdlib"))
    step = max(len(rows) // n, 1)
    return rows[::step][:n]


def map_bench(root: Path, work: Path) -> list[str]:
    """The repository map: build and update times, size against budget, enrichment hits."""
    tree = work / "tree"
    shutil.copytree(root, tree, ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
    service = remembrances.open(work / "map.db", embedder=HashEmbedder(384))
    store, code = service.store, service.code
    report = code.index(tree, project="stdlib", embed=True)
    edges = RepoMapper(store).rebuild_graph("stdlib")
    print(f"map: indexed {report.files_indexed} files, graph {edges:,} edges")

    def build() -> None:
        RepoMapper(store).rebuild_graph("stdlib")

    def fresh_map(budget: int = 1024, focus: list[str] | None = None) -> RepoMap:
        return RepoMapper(store).repo_map("stdlib", budget_tokens=budget, focus=focus)

    build_s = best_of(3, build)
    first_map_s = best_of(3, fresh_map)
    mapper = RepoMapper(store)
    mapper.repo_map("stdlib")
    warm_map_s = best_of(3, lambda: mapper.repo_map("stdlib"))
    print(f"map: graph build {build_s:.2f} s, map from the stored graph {first_map_s:.2f} s")

    updates: list[tuple[str, float, float, float]] = []
    for rel in UPDATE_FILES:
        path = tree / rel
        original = path.read_text()
        timings: list[float] = []
        totals: list[float] = []
        for round_ in range(3):  # alternately add and remove a function that uses names
            path.write_text(
                original + f"\n\ndef _bench_added_{round_}():\n    return len(sorted([]))\n"
                if round_ % 2 == 0
                else original
            )
            again = code.index(tree, project="stdlib", embed=True)
            assert again.files_indexed == 1, again
            timings.append(again.timings["graph"])
            totals.append(again.timings["total"])
        path.write_text(original)
        code.index(tree, project="stdlib")
        after_map_s = best_of(1, lambda: mapper.repo_map("stdlib"))
        updates.append((rel, min(timings), min(totals), after_map_s))
        print(f"map: update after editing {rel}: graph {min(timings) * 1000:.1f} ms")
    updates_since_build = mapper.graph_updates("stdlib")

    sizes = []
    for budget in BUDGETS:
        result = mapper.repo_map("stdlib", budget_tokens=budget)
        sizes.append((budget, result, len(result.text.splitlines())))
    focused = mapper.repo_map("stdlib", focus=["asyncio/tasks.py"])

    definitions = definitions_bench(service, tree)
    wait_idle()  # searches that missed their deadline still hold connections
    service.close()

    lines = [
        "## Repository map (`code.repo_map`)",
        "",
        f"Index: the tree above copied to a scratch directory ({report.files_indexed:,} files); "
        f"graph of {edges:,} edges.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| build the graph from the existing index (best of 3) | {build_s:.2f} s |",
        f"| map (1,024 tokens) from the stored graph, new mapper: load + rank + render "
        f"(best of 3) | {first_map_s:.2f} s |",
        f"| map (1,024 tokens), graph already read by this mapper (best of 3) | {warm_map_s:.2f} s |",
        f"| **build + first map** | **{build_s + first_map_s:.2f} s** |",
        "",
        "Update after one file changes (the file edited, `code.index` run; the graph "
        "time is the indexer's `timings['graph']`, best of 3 edits):",
        "",
        "| file edited | graph update | ratio to the build | whole index run | next map |",
        "|---|---|---|---|---|",
    ]
    for rel, graph_s, total_s, after_s in updates:
        lines.append(
            f"| `{rel}` | {graph_s * 1000:.1f} ms | **{graph_s / build_s:.3f}×** "
            f"(target ≤ 0.05) | {total_s:.2f} s | {after_s:.2f} s |"
        )
    lines += [
        "",
        f"After the {len(UPDATE_FILES) * 4} edit runs the graph had been updated "
        f"{updates_since_build} times since its last full build (a rebuild resets the count).",
        "",
        "Size against budget (tokens estimated as 4 characters each, the map's default counter):",
        "",
        "| budget | tokens used | used / budget | files | lines |",
        "|---|---|---|---|---|",
    ]
    for budget, result, n_lines in sizes:
        lines.append(
            f"| {budget:,} | {result.tokens:,} | {result.tokens / budget:.2f} | "
            f"{len(result.files)} | {n_lines} |"
        )
    lines += [
        "",
        "Top of the unfocused 1,024-token map:",
        "",
        "```",
        *sizes[1][1].text.splitlines()[:12],
        "```",
        "",
        "Top of the map focused on `asyncio/tasks.py`:",
        "",
        "```",
        *focused.text.splitlines()[:12],
        "```",
        "",
        *definitions,
        *devsuite_quality(),
    ]
    return lines


def definitions_bench(service: RemembrancesService, tree: Path) -> list[str]:
    """How often ``enrich_context`` shows the definition of a symbol the prompt names.

    ``service`` holds ``tree`` indexed as project ``stdlib``. For each sampled symbol
    the block is checked three ways: the definition is an item of its own (its label
    ``path:lines Qualified.name``), or only its location is listed among the other
    definitions of the same name, or neither. Four prompts: the qualified name in
    backticks (under a generous timeout, then under the default one), the name
    written with its module (``encodings.cp500.Codec.encode``), and the name
    without backticks.
    """
    code = service.code
    # What is measured first is which definitions reach the block, not how fast: a
    # generous timeout keeps a loaded machine from deciding it (the times are below).
    enricher = ContextEnricher(service, EnricherConfig(timeout=DEFINITIONS_TIMEOUT))
    default = ContextEnricher(service)
    sample = sample_symbols(code, tree, ENRICH_SAMPLE)
    shown = listed = bare_detected = found_bare = moduled = shown_default = same_named = 0
    enrich_ms: list[float] = []
    default_ms: list[float] = []
    dropped_default: list[str] = []
    misses: list[tuple[str, str, int, str, str]] = []
    for qualified, _name, path_, start, end in sample:
        where = (
            f"{path_}:{start}-{end} {qualified}" if start != end else f"{path_}:{start} {qualified}"
        )
        prompt = f"How does `{qualified}` work, and who calls it?"
        began = time.perf_counter()
        result = enricher.enrich(prompt)
        enrich_ms.append((time.perf_counter() - began) * 1000)
        is_shown = _is_item(result, where)
        is_listed = not is_shown and where in result.text
        shown += is_shown
        listed += is_listed
        if not is_shown:
            found = code.find_symbol(qualified, project="stdlib", limit=1000)
            same = [s for s in found if s.qualified_name == qualified]
            # Which definition of that name the block shows instead, if any.
            instead = [
                i.origin.split(" ", 2)[1].split(":")[0]
                for i in result.items.get("code", [])
                if i.score is None and f" {qualified} (" in i.origin
            ]
            same_named += bool(instead)
            state = "listed" if is_listed else "absent"
            misses.append((qualified, path_, len(same), state, ", ".join(instead) or "none"))
        began = time.perf_counter()
        result = default.enrich(prompt)
        default_ms.append((time.perf_counter() - began) * 1000)
        shown_default += _is_item(result, where)
        dropped_default += [f"{qualified}: {s} {why}" for s, why in result.dropped.items()]
        module = module_name(path_)
        moduled += _is_item(enricher.enrich(f"How does `{module}.{qualified}` work?"), where)
        bare_prompt = f"how does {qualified} work?"
        if code_names(bare_prompt)[0]:
            bare_detected += 1
            found_bare += where in enricher.enrich_context(bare_prompt)
    enricher.close()
    default.close()
    enrich_ms.sort()
    default_ms.sort()
    n = len(sample)
    print(
        f"definitions: shown {shown}/{n} (default timeout {shown_default}/{n}), only listed "
        f"{listed}, with the module {moduled}/{n}, bare {found_bare}/{bare_detected}"
    )
    lines = [
        f"### Definitions in `enrich_context` ({n} symbols sampled)",
        "",
        "Every k-th function, class or method outside the test directories, not private; "
        f"hash:384 embedder, `EnricherConfig(timeout={DEFINITIONS_TIMEOUT:.0f})` (a loaded "
        "machine must not decide what is shown), and the default configuration (2 s per "
        "source) for the second row. Shown = the definition is an item of the block "
        "(labelled `path:lines qualified_name`); listed = only its location is in the list "
        "of the name's other definitions.",
        "",
        "| prompt | definition shown | only its location listed | neither |",
        "|---|---|---|---|",
        f"| ``How does `Qualified.name` work, and who calls it?`` | **{shown}/{n}** | "
        f"{listed}/{n} | {n - shown - listed}/{n} |",
        f"| the same, default timeout (2 s) | **{shown_default}/{n}** | | |",
        f"| the same: this definition or another of the same qualified name shown "
        f"| **{shown + same_named}/{n}** | | |",
        f"| ``How does `module.Qualified.name` work?`` (`encodings.cp500.Codec.encode`) "
        f"| **{moduled}/{n}** | | |",
        f"| `how does Qualified.name work?` (no backticks; the name is detected in "
        f"{bare_detected} of {n}): location anywhere in the block | {found_bare}/{bare_detected} "
        "| | |",
        "",
        f"enrich_context with a named symbol: median {enrich_ms[n // 2]:.0f} ms, "
        f"p90 {enrich_ms[int(n * 0.9)]:.0f} ms (30 s timeout); median {default_ms[n // 2]:.0f} "
        f"ms, p90 {default_ms[int(n * 0.9)]:.0f} ms (default).",
        "",
    ]
    if dropped_default:
        lines += ["Sources dropped under the default timeout:", ""]
        lines += [f"- {d}" for d in dropped_default] + [""]
    if misses:
        lines += [
            "Not shown for the name alone (definitions with the same qualified name in the index):",
            "",
            "| symbol | file | same-named definitions | in the block | shown instead |",
            "|---|---|---|---|---|",
            *(f"| `{q}` | `{p}` | {k} | {st} | {other} |" for q, p, k, st, other in misses),
            "",
        ]
    return lines


def _is_item(result: Enrichment, where: str) -> bool:
    """Whether the definition labelled ``where`` is an item of the block."""
    return any(where in item.origin for item in result.items.get("code", []))


def definitions_only(root: Path, store: Path | None = None) -> None:
    """``--definitions-only``: index ``root`` (hash:384) and run :func:`definitions_bench`.

    ``store`` keeps the index in that file, so the next run only re-hashes the tree
    (a first index of ``Lib/`` takes 4-20 minutes here, depending on the load).
    """
    before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        service = remembrances.open(store or Path(tmp) / "defs.db", embedder=HashEmbedder(384))
        started = time.perf_counter()
        report = service.code.index(root, project="stdlib")
        print(
            f"definitions: indexed {report.files_indexed} files ({report.files_unchanged} "
            f"unchanged) in {time.perf_counter() - started:.0f} s"
        )
        body = definitions_bench(service, root)
        wait_idle()
        service.close()
    DEFINITIONS_RESULTS.write_text(
        "\n".join(
            [
                "# Definitions a prompt names, in `enrich_context` (CPython's `Lib/`)",
                "",
                "Produced by:",
                "",
                "    .venv/bin/python -m benchmarks.bench_code --definitions-only"
                + ("" if store is None else " --store STORE"),
                "",
                "(`--map-only` and the full run measure the same in results/code_map.md).",
                "",
                f"Tree: `{root}` (Python {sys.version.split()[0]}, "
                f"{report.files_indexed + report.files_unchanged:,} files), "
                f"{os.cpu_count()} cores shared with other jobs (load average before: {before}).",
                "",
                *body,
            ]
        )
    )
    print(f"wrote {DEFINITIONS_RESULTS}")


DEVSUITE_CODE_SETS = ("code-requests", "code-click", "code-httpx")


def devsuite_quality() -> list[str]:
    """The development suite's code questions: is the answer in a map around the top-3 hits?"""
    title = "### The development suite's code questions"
    try:
        from benchmarks import devsuite
    except ImportError:
        return [title, "", "**Not measured**: benchmarks/devsuite/ is not in this checkout.", ""]
    lines = [
        title,
        "",
        "Each question is searched (`code.search`, hybrid, the suite's cached store with the "
        "local embedder); the map is `repo_map(budget_tokens=1024, focus=<the files of the "
        "top-3 hits>)`. A question counts when one of its answers (`path:Qualified.name`) is a "
        "symbol of the map; the anchor is the same answer among the top-3 hits themselves.",
        "",
        "| set | questions | answer in the top-3 hits | answer in the focused map | map tokens (mean) |",
        "|---|---|---|---|---|",
    ]
    total = in_hits_all = in_map_all = 0
    for name in DEVSUITE_CODE_SETS:
        service, corpus = devsuite.open_store(name)
        in_hits = in_map = 0
        tokens: list[int] = []
        for question in corpus.questions:
            answers = {tuple(a.split(":", 1)) for a in question.answers}
            hits = service.code.search(question.text, project=corpus.id, limit=3)
            in_hits += any((h.path, h.qualified_name) in answers for h in hits)
            files = list(dict.fromkeys(h.path for h in hits))
            result = service.code.repo_map(corpus.id, budget_tokens=1024, focus=files)
            tokens.append(result.tokens)
            shown = {(f.path, s.qualified_name) for f in result.files for s in f.symbols}
            in_map += bool(shown & answers)
        service.close()
        n = len(corpus.questions)
        total, in_hits_all, in_map_all = total + n, in_hits_all + in_hits, in_map_all + in_map
        print(f"devsuite {name}: top-3 {in_hits}/{n}, map {in_map}/{n}")
        lines.append(
            f"| {name} | {n} | {in_hits / n:.2f} | **{in_map / n:.2f}** | "
            f"{sum(tokens) / max(len(tokens), 1):.0f} |"
        )
    lines += [
        f"| all | {total} | {in_hits_all / max(total, 1):.2f} | "
        f"**{in_map_all / max(total, 1):.2f}** | |",
        "",
    ]
    return lines


def scaling_bench() -> list[str]:
    """Analysis (parse, symbols, chunks, names) of generated C files of one-line
    functions, 4,000 to 16,000 of them: linear work takes 4x as long for 4x the
    symbols, and counting lines from the file's start for each one took 15x."""
    rows, times = [], {}
    for n in (4_000, 16_000):
        source = "".join(f"int f{i}(int x) {{ return x + {i}; }}\n" for i in range(n)).encode()
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            analyze_source("gen.c", "c", source)
            best = min(best, time.perf_counter() - start)
        times[n] = best
        rows.append(f"| {n:,} functions ({len(source) / 1e6:.2f} MB) | {best:.2f} s |")
        print(f"analysis of {n} generated functions: {best:.2f} s")
    ratio = times[16_000] / times[4_000]
    return [
        "## One generated file, 4x the symbols (analysis only, best of 3)",
        "",
        "| file | analysis time |",
        "|---|---|",
        *rows,
        f"| **ratio 16,000 / 4,000** (4.0 when linear) | **{ratio:.1f}x** |",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the slow comparisons")
    parser.add_argument("--root", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--map-only", action="store_true", help="only the repository map")
    parser.add_argument(
        "--definitions-only",
        action="store_true",
        help="only: is a definition the prompt names in enrich_context",
    )
    parser.add_argument(
        "--scaling-only", action="store_true", help="only: analysis time of large generated files"
    )
    parser.add_argument(
        "--store",
        help="with --definitions-only: keep the index in this file and reuse it next time",
    )
    args = parser.parse_args()
    root = Path(args.root)
    if args.definitions_only:
        definitions_only(root, Path(args.store) if args.store else None)
        return
    if args.map_only:
        write_map_results(root)
        return
    if args.scaling_only:
        print("\n".join(scaling_bench()))
        return
    command = "    .venv/bin/python -m benchmarks.bench_code" + (" --quick" if args.quick else "")
    lines = [
        "# Code indexer on CPython's standard library",
        "",
        "Produced by:",
        "",
        command,
        "",
        f"Tree: `{root}` (Python {sys.version.split()[0]}), {os.cpu_count()} cores "
        "shared with other jobs while this ran, so absolute times are noisy; the "
        "ratios are measured in the same run.",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        hash_s, n_files, n_bytes = hash_baseline(root)
        print(f"baseline: hash {n_files} files ({n_bytes / 1e6:.1f} MB) in {hash_s:.2f} s")

        load_before = load_average()
        cpu_before = cpu_seconds()
        report, store, code = run_index(root, work / "full.db")
        cpu_full = cpu_seconds() - cpu_before
        stats = code.stats("stdlib")
        t = report.timings
        print(
            f"full index: {report.files_indexed} files, {report.symbols} symbols; {split(report)}"
        )
        query_start = time.perf_counter()
        hits = code.search("parse an email address into its parts", limit=5)
        first_ms = (time.perf_counter() - query_start) * 1000
        query_start = time.perf_counter()
        code.search("retry a failed connection with a timeout", limit=5)
        query_ms = (time.perf_counter() - query_start) * 1000
        print(
            f"search: first {first_ms:.1f} ms, then {query_ms:.1f} ms, "
            f"top {[h.qualified_name for h in hits[:3]]}"
        )

        embedder = store.embedder
        assert isinstance(embedder, HashEmbedder)
        # Best of three for both, interleaved: the same page-cache state for each.
        warm_hash_s = rerun_s = float("inf")
        calls_before = embedder.calls
        for _ in range(3):
            warm_hash_s = min(warm_hash_s, hash_baseline(root)[0])
            rerun_start = time.perf_counter()
            again = code.index(root, project="stdlib")
            rerun_s = min(rerun_s, time.perf_counter() - rerun_start)
        rerun_calls = embedder.calls - calls_before
        print(f"unchanged re-index: {rerun_s:.2f} s (hash baseline {warm_hash_s:.2f} s)")
        store.close()

        lines += [
            "## Full tree, hashing embedder (`hash:384`)",
            "",
            "| measure | value |",
            "|---|---|",
            f"| files indexed | {report.files_indexed:,} ({n_bytes / 1e6:.1f} MB) |",
            f"| files skipped | {report.files_skipped} ({report.skipped_by_reason()}) |",
            f"| files with syntax errors (indexed anyway) | {len(report.parse_errors)} |",
            f"| symbols | {report.symbols:,} |",
            f"| chunks | {report.chunks:,} |",
            f"| load average (1, 5, 15 min) before the run | {load_before} |",
            f"| total time (wall) | {t['total']:.1f} s |",
            f"| CPU time used (this process + parse workers) | {cpu_full:.1f} s |",
            f"| files/s (whole run) | {report.files_indexed / t['total']:.0f} |",
            f"| symbols/s (whole run) | {report.symbols / t['total']:.0f} |",
            f"| discovery | {t['discovery']:.2f} s |",
            f"| hashing | {t['hashing']:.2f} s |",
            "| parsing: wall time spent waiting for parse results (the worker "
            f"processes parse while this process writes) | {t['parsing']:.2f} s |",
            f"| writing (chunks + FTS + symbols + names) | {t['writing']:.2f} s |",
            f"| embedding (backfill phase, hash:384) | {t['embedding']:.2f} s |",
            f"| **time until text search works** | **{t['text_searchable']:.1f} s** |",
            f"| pending embeddings after the run | {report.pending_embeddings} |",
            f"| first hybrid search (loads the in-memory vector index) | {first_ms:.0f} ms |",
            f"| next hybrid search | {query_ms:.1f} ms |",
            "",
            "## Re-index of the unchanged tree",
            "",
            "| measure | value |",
            "|---|---|",
            f"| baseline: list + read + SHA-256 of the {n_files:,} files, best of 3 "
            f"(first, cold measurement before indexing: {hash_s:.2f} s) | {warm_hash_s:.3f} s |",
            f"| re-index, best of 3 (nothing changed: {again.files_unchanged:,} unchanged, "
            f"{again.files_indexed} parsed, {rerun_calls} texts embedded in the 3 runs) | "
            f"{rerun_s:.3f} s |",
            f"| **ratio re-index / hashing** | **{rerun_s / warm_hash_s:.2f}×** |",
            "",
            *scaling_bench(),
        ]

        if not args.quick:
            serial, serial_store, _ = run_index(root, work / "serial.db", workers=1, embed=False)
            serial_store.close()
            parallel, parallel_store, _ = run_index(root, work / "parallel.db", embed=False)
            parallel_store.close()
            ratio = serial.timings["parsing"] / max(parallel.timings["parsing"], 1e-9)
            ts_ratio = serial.timings["text_searchable"] / parallel.timings["text_searchable"]
            print(
                f"parsing: 1 process {serial.timings['parsing']:.2f} s, "
                f"workers {parallel.timings['parsing']:.2f} s"
            )
            lines += [
                "## Parsing: one process versus worker processes (text only, no embedding)",
                "",
                "| run | waiting for parsing | time until text search works |",
                "|---|---|---|",
                f"| workers=1 (in process) | {serial.timings['parsing']:.2f} s | "
                f"{serial.timings['text_searchable']:.1f} s |",
                f"| default workers ({default_workers()}) | "
                f"{parallel.timings['parsing']:.2f} s | {parallel.timings['text_searchable']:.1f} s |",
                f"| **ratio** | {ratio:.2f}× | **{ts_ratio:.2f}×** |",
                "",
            ]

            from remembrances.embeddings.local import LocalEmbedder

            subset = work / "subset"
            chosen = subset_repo(root, subset)
            local = LocalEmbedder()
            local.load()
            local_store = Store(work / "local.db", embedder=local)
            local_code = CodeIndexer(local_store)
            local_report = local_code.index(subset, project="subset")
            local_store.close()
            lt = local_report.timings
            rate = local_report.embedded_chunks / max(lt["embedding"], 1e-9)
            print(
                f"local embedder: {local_report.embedded_chunks} chunks in "
                f"{lt['embedding']:.1f} s = {rate:.1f} chunks/s"
            )
            lines += [
                f"Load average when this part ended: {load_average()}.",
                "",
                f"## Default local embedder (MiniLM int8 ONNX) on a fixed {chosen}-file subset",
                "",
                "| measure | value |",
                "|---|---|",
                f"| files / symbols / chunks | {local_report.files_indexed} / "
                f"{local_report.symbols:,} / {local_report.chunks:,} |",
                f"| time until text search works | {lt['text_searchable']:.1f} s |",
                f"| embedding phase | {lt['embedding']:.1f} s |",
                f"| **embedding rate** | **{rate:.1f} chunks/s** |",
                f"| whole-tree vectors at this rate ({report.chunks:,} chunks), estimated | "
                f"{report.chunks / rate / 60:.0f} min |",
                "",
                "The text index of the whole tree is ready after the time above; the "
                "vectors follow in the backfill phase (or `CodeIndexer.backfill`, "
                "resumable), and hybrid search uses them wherever they exist.",
                "",
            ]
        lines += [
            "Project stats after the full run: "
            f"{stats.files:,} files, {stats.symbols:,} symbols "
            f"({', '.join(f'{k} {v:,}' for k, v in stats.symbol_kinds.items())}).",
            "",
        ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print(f"wrote {RESULTS}")
    write_map_results(root)


def write_map_results(root: Path) -> None:
    """The repository map's figures, in their own file (``--map-only`` runs just these)."""
    before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        body = map_bench(root, Path(tmp))
    MAP_RESULTS.write_text(
        "\n".join(
            [
                "# Repository map on CPython's standard library",
                "",
                "Produced by:",
                "",
                "    .venv/bin/python benchmarks/bench_code.py --map-only",
                "",
                "(the full run of bench_code.py writes it too).",
                "",
                f"Tree: `{root}` (Python {sys.version.split()[0]}), {os.cpu_count()} cores "
                f"shared with other jobs (load average before: {before}).",
                "",
                *body,
            ]
        )
    )
    print(f"wrote {MAP_RESULTS}")


if __name__ == "__main__":
    main()
