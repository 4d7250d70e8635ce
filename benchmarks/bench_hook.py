"""``remembrances enrich PROMPT`` as a per-prompt hook runs it: a fresh process each time.

Question: where does a hook's time go on a 100k-chunk memory with the local
embedder, and what does it cost through a running server (``REMEMBRANCES_URL``)?

Setup: the 100k-chunk file of ``bench_enrich.py`` (60% KB, 25% events, 15% code
plus the test corpus through the layers), recorded as written by the ``local``
embedder (MiniLM int8, 384 dims). Its stored vectors are hashing vectors, built in
seconds instead of the hour MiniLM would take: the query side runs the real model,
and search cost depends on the vector count and size, not on their values. The file
is cached (``--db``) between runs.

Measured, median over ``--repeat`` fresh processes each:
- the interpreter alone (``python -c pass``) and ``remembrances --help``;
- end to end: ``remembrances --db FILE enrich PROMPT``, wall time from the parent;
- the same through a warm ``remembrances serve`` on the same file;
- the breakdown, inside a fresh process timing each step in the order the command
  runs them: CLI imports, opening the file, the embedder's imports and model load,
  one query embedding, loading the in-memory vector index, ``enrich_context`` (plan,
  the plan's query embeddings and searches, formatting), printing.

Run: ``.venv/bin/python -m benchmarks.bench_hook`` (``--quick``: 10k chunks).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPT = "why is order_total wrong for discounted orders in shop/orders.py?"
STEPS = [
    ("imports", "CLI imports (`import remembrances.cli`)"),
    ("open", "open the file, with the imports the CLI left for it"),
    ("embedder_imports", "embedder imports (onnxruntime, tokenizers)"),
    ("model_load", "model load (ONNX session, tokenizer, checksum)"),
    ("query_embedding", "one query embedding"),
    ("index_load", "vector index load (first search's cold start)"),
    ("enrich", "enrich_context with the index warm"),
    ("enrich_search", "  of which the plan's query embeddings + searches"),
    ("enrich_format", "  of which filter, budget, format"),
    ("print", "printing the block"),
]


def phases(db: str, prompt: str) -> None:
    """Runs in the fresh process: time each step of ``enrich`` and print them as JSON."""
    started = time.perf_counter()
    marks: dict[str, float] = {}

    def mark(name: str, since: float) -> float:
        now = time.perf_counter()
        marks[name] = (now - since) * 1000
        return now

    import remembrances.cli  # what the command imports before it runs

    t = mark("imports", started)
    import remembrances

    svc = remembrances.open(db)
    t = mark("open", t)
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    t = mark("embedder_imports", t)
    embedder = svc.embedder
    assert embedder is not None and embedder.name == "local", embedder
    embedder.load()  # type: ignore[attr-defined]
    t = mark("model_load", t)
    embedder.embed_query(prompt)
    t = mark("query_embedding", t)
    svc.store.warm()  # what the first search does before it scores
    t = mark("index_load", t)
    result = svc.enricher.enrich(prompt)
    t = mark("enrich", t)
    marks["enrich_search"] = result.timings.get("search_ms", 0.0)
    marks["enrich_format"] = result.timings.get("format_ms", 0.0)
    sys.stdout.write(result.text + "\n")
    sys.stdout.flush()
    mark("print", t)
    marks["total_in_process"] = (time.perf_counter() - started) * 1000
    sys.stderr.write(json.dumps(marks) + "\n")
    svc.close()


def build(db: Path, total: int) -> None:
    """The bench_enrich file, stamped as the local embedder's (see the module docstring)."""
    import numpy as np

    from benchmarks import bench_enrich

    class LocalNamed(bench_enrich.CachedHashEmbedder):
        def __init__(self, dim: int) -> None:
            super().__init__(dim)
            self.name = "local"

    bench_enrich.CachedHashEmbedder = LocalNamed  # type: ignore[misc]
    db.parent.mkdir(parents=True, exist_ok=True)
    partial = db.with_suffix(".building")
    for leftover in db.parent.glob(partial.name + "*"):
        leftover.unlink()
    svc, seconds = bench_enrich.build(partial, total, np.random.default_rng(7))
    svc.close()
    partial.rename(db)
    print(f"built {db} in {seconds:.1f} s", flush=True)


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr}")
    return elapsed, done


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phases", nargs=2, metavar=("DB", "PROMPT"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="10k chunks instead of 100k")
    parser.add_argument("--db", type=Path, default=None, help="cached benchmark file")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", type=Path, default=None, help="append a Markdown report")
    parser.add_argument(
        "--baseline-python",
        type=Path,
        default=None,
        help="also time `import remembrances.cli` and --help with this interpreter, "
        "interleaved (e.g. the .venv/bin/python of a worktree of an older commit)",
    )
    args, _ = parser.parse_known_args()  # make bench passes its flags to every benchmark
    if args.phases:
        phases(*args.phases)
        return 0
    total = 10_000 if args.quick else 100_000
    db = args.db or Path("/tmp/remembrances-bench") / f"hook-{total // 1000}k.db"
    if not db.exists():
        build(db, total)
    python = sys.executable
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBRANCES_")}
    cli = [python, "-m", "remembrances.cli"]

    rows: dict[str, list[float]] = {}
    outputs: set[str] = set()

    def sample(name: str, cmd: list[str], extra: dict[str, str] | None = None) -> None:
        elapsed, done = run(cmd, {**env, **(extra or {})})
        rows.setdefault(name, []).append(elapsed)
        if name.startswith("enrich"):
            outputs.add(done.stdout)

    steps: dict[str, list[float]] = {}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [*cli, "--db", str(db), "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        run([*cli, "enrich", PROMPT], {**env, "REMEMBRANCES_URL": url})  # warms the server
        for _ in range(args.repeat):  # interleaved, so load changes hit every row alike
            sample("python -c pass", [python, "-c", "pass"])
            if args.baseline_python:
                baseline = str(args.baseline_python)
                sample("import remembrances.cli", [python, "-c", "import remembrances.cli"])
                base = f"baseline {args.baseline_python}:"
                sample(
                    f"{base} import remembrances.cli", [baseline, "-c", "import remembrances.cli"]
                )
                sample(
                    f"{base} remembrances --help", [baseline, "-m", "remembrances.cli", "--help"]
                )
            sample("remembrances --help", [*cli, "--help"])
            sample("enrich, on the file", [*cli, "--db", str(db), "enrich", PROMPT])
            sample(
                "enrich, through a warm server",
                [*cli, "enrich", PROMPT],
                {"REMEMBRANCES_URL": url},
            )
            _, done = run([python, "-m", "benchmarks.bench_hook", "--phases", str(db), PROMPT], env)
            for key, value in json.loads(done.stderr.strip().splitlines()[-1]).items():
                steps.setdefault(key, []).append(value)
            outputs.add(done.stdout)
    finally:
        server.terminate()
        server.wait(timeout=30)

    load = os.getloadavg()[0]
    lines = [
        f"package: {importlib.util.find_spec('remembrances').origin}; "  # type: ignore[union-attr]
        f"file: {db} ({total:,} filler chunks, local embedder); prompt: {PROMPT!r}; "
        f"{args.repeat} fresh processes per row, interleaved; load average {load:.1f}",
        f"outputs identical across all enrich runs: {len(outputs) == 1}",
        "",
        "| command (fresh process) | median ms | min ms |",
        "|---|---|---|",
    ]
    for name, values in rows.items():
        lines.append(f"| {name} | {statistics.median(values):.0f} | {min(values):.0f} |")
    lines += ["", "| step, in a fresh process | median ms |", "|---|---|"]
    for key, label in STEPS:
        lines.append(f"| {label} | {statistics.median(steps[key]):.1f} |")
    lines.append(
        f"| total inside the process | {statistics.median(steps['total_in_process']):.1f} |"
    )
    floor = statistics.median(rows["python -c pass"])
    direct = statistics.median(rows["enrich, on the file"])
    served = statistics.median(rows["enrich, through a warm server"])
    lines += [
        "",
        f"enrich on the file / interpreter alone: {direct / floor:.1f}x",
        f"enrich through the server / enrich on the file: {served / direct:.2f}x",
        f"enrich through the server / remembrances --help: "
        f"{served / statistics.median(rows['remembrances --help']):.2f}x",
    ]
    report = "\n".join(lines)
    print(report)
    if args.write:
        with args.write.open("a", encoding="utf-8") as handle:
            handle.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
