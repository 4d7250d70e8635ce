"""Parsing in worker processes, for trees large enough to keep several cores busy.

The workers are plain ``python -m remembrances.code.parse_worker_process`` children
speaking length-prefixed pickles over their pipes. ``multiprocessing`` with
``spawn`` re-imports the caller's ``__main__`` in every worker (a script without
an ``if __name__ == "__main__"`` guard would run twice), and ``fork`` is unsafe
in a process that holds SQLite connections and embedder threads; a child
process that imports only this module has neither problem.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .analysis import FileAnalysis, ParseTask, analyze

BATCH = 8
IN_FLIGHT_PER_WORKER = 3


def _send(stream: IO[bytes], value: Any) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(payload).to_bytes(8, "little"))
    stream.write(payload)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("parse worker closed its pipe")
    size = int.from_bytes(header, "little")
    return pickle.loads(stream.read(size))


def _analyze_safely(task: ParseTask) -> FileAnalysis:
    try:
        return analyze(task)
    except Exception as exc:  # one bad file must not stop the run
        return FileAnalysis(task.path, task.language, skipped=f"parser failed: {exc}")


class ParseWorkers:
    """A few long-lived parsing processes; ``map`` keeps the input order."""

    def __init__(self, count: int) -> None:
        package_parent = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_parent, env.get("PYTHONPATH", "")) if p
        )
        self._procs = [
            subprocess.Popen(
                [sys.executable, "-m", "remembrances.code.parse_worker_process"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
            for _ in range(max(1, count))
        ]

    def map(self, tasks: Sequence[ParseTask]) -> Iterator[FileAnalysis]:
        batches = [list(tasks[i : i + BATCH]) for i in range(0, len(tasks), BATCH)]
        workers = len(self._procs)
        sent = 0
        alive = [True] * workers
        for index, batch in enumerate(batches):
            while sent < len(batches) and sent < index + workers * IN_FLIGHT_PER_WORKER:
                proc = self._procs[sent % workers]
                if alive[sent % workers]:
                    try:
                        assert proc.stdin is not None
                        _send(proc.stdin, batches[sent])
                    except (BrokenPipeError, OSError):
                        alive[sent % workers] = False
                sent += 1
            results: list[FileAnalysis] | None = None
            if alive[index % workers]:
                try:
                    stdout = self._procs[index % workers].stdout
                    assert stdout is not None
                    results = _receive(stdout)
                except (EOFError, OSError, pickle.UnpicklingError):
                    alive[index % workers] = False
            if results is None:  # the worker died (a crashing grammar): parse here
                results = [_analyze_safely(t) for t in batch]
            yield from results

    def close(self) -> None:
        for proc in self._procs:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()

    def __enter__(self) -> ParseWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> None:
    """The worker's loop: batches of tasks in, batches of analyses out."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            batch = _receive(stdin)
        except EOFError:
            return
        _send(stdout, [_analyze_safely(t) for t in batch])
