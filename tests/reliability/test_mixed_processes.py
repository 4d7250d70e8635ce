"""Eight processes making mixed writes and reads on one file (KB, events, code):
no error reaches a caller, no row is lost or duplicated, and the indexes agree."""

from __future__ import annotations

import json
import multiprocessing
import random
from pathlib import Path

import pytest

import remembrances

PROCESSES = 8


def _worker(path: str, worker: int, ops: int, repo: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    rng = random.Random(worker)
    final_docs: dict[str, int] = {}
    events = 0
    errors: list[str] = []
    try:
        memory = remembrances.open(path, embedder="hash:64")
        for op in range(ops):
            choice = rng.random()
            try:
                if choice < 0.35:
                    doc = f"w{worker}-doc{rng.randrange(5)}"
                    version = op
                    memory.kb.add(
                        f"# Notes {doc}\n\nversion {version} of {doc}.\n\n" + "body text " * 30,
                        source=doc,
                    )
                    final_docs[doc] = version
                elif choice < 0.65:
                    memory.events.log(f"worker {worker} event {op}", subject=f"w{worker}")
                    events += 1
                elif choice < 0.75:
                    module = Path(repo) / "mod.py"
                    module.write_text(
                        f"def handler_{op}():\n    '''Handle {op}.'''\n    return {op}\n"
                    )
                    memory.code.index(repo, project=f"proj{worker}")
                else:
                    memory.kb.search(f"version {op}", limit=3)
                    memory.events.search(f"event {op}", limit=3)
                    memory.store.search("handler", kind="code", limit=3)
            except Exception as exc:  # any error here reaches a caller: a failure
                errors.append(f"op {op}: {exc!r}")
        memory.close()
    except Exception as exc:
        errors.append(repr(exc))
    out.put(json.dumps({"worker": worker, "docs": final_docs, "events": events, "errors": errors}))


def run(tmp_path: Path, ops: int) -> None:
    path = str(tmp_path / "mixed.db")
    remembrances.open(path, embedder="hash:64").close()
    repos = []
    for worker in range(PROCESSES):
        repo = tmp_path / f"repo{worker}"
        repo.mkdir()
        (repo / "util.py").write_text("class Helper:\n    def run(self):\n        return 1\n")
        repos.append(str(repo))
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(path, w, ops, repos[w], out)) for w in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    results = [json.loads(out.get(timeout=1200)) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [r["errors"] for r in results] == [[] for _ in results]

    memory = remembrances.open(path, embedder="hash:64")
    report = memory.check()
    assert report.ok, report.problems
    assert memory.events.count() == sum(r["events"] for r in results)
    for result in results:
        for doc, version in result["docs"].items():
            document = memory.kb.get(doc)
            assert f"version {version} of {doc}." in document.text
    assert memory.kb.count() == sum(len(r["docs"]) for r in results)
    with memory.store.snapshot() as conn:
        duplicated = conn.execute(
            "SELECT count(*) FROM (SELECT kind, collection, source, position, count(*) AS n "
            "FROM chunks GROUP BY 1, 2, 3, 4 HAVING n > 1)"
        ).fetchone()[0]
    assert duplicated == 0
    memory.close()


def test_eight_processes_mixed_writes(tmp_path: Path) -> None:
    run(tmp_path, ops=40)


@pytest.mark.slow
def test_eight_processes_thousand_writes_each(tmp_path: Path) -> None:
    run(tmp_path, ops=1000)
