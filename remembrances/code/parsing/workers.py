"""Parsing in worker processes, for trees large enough to keep several cores busy.

The workers are plain ``python -m remembrances.code.parsing`` children
speaking length-prefixed pickles over their pipes. ``multiprocessing`` with
``spawn`` re-imports the caller's ``__main__`` in every worker (a script without
an ``if __name__ == "__main__"`` guard would run twice), and ``fork`` is unsafe
in a process that holds SQLite connections and embedder threads; a child
process that imports only this module has neither problem.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .analysis import FileAnalysis, ParseTask, analyze

BATCH = 8
#: Batches queued per worker; requests are small, so this never fills a pipe.
IN_FLIGHT_PER_WORKER = 24


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


class _Failed:
    """A batch whose worker died: the caller parses it in process."""


class ParseWorkers:
    """A few long-lived parsing processes; ``map`` keeps the input order.

    A reader thread per worker drains its results as they come, so the workers
    keep parsing while the caller writes the previous files to the database.
    """

    def __init__(self, count: int) -> None:
        package_parent = str(Path(__file__).resolve().parents[3])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_parent, env.get("PYTHONPATH", "")) if p
        )
        self._procs = [
            subprocess.Popen(
                [sys.executable, "-m", "remembrances.code.parsing"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
            for _ in range(max(1, count))
        ]
        self._results: dict[int, list[FileAnalysis] | _Failed] = {}
        self._ready = threading.Condition()
        self._expected: list[queue.SimpleQueue[int | None]] = [
            queue.SimpleQueue() for _ in self._procs
        ]
        self._readers = [
            threading.Thread(target=self._read, args=(i,), daemon=True)
            for i in range(len(self._procs))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, worker: int) -> None:
        stdout = self._procs[worker].stdout
        dead = False
        while True:
            index = self._expected[worker].get()
            if index is None:
                return
            value: list[FileAnalysis] | _Failed = _Failed()
            if not dead and stdout is not None:
                try:
                    value = _receive(stdout)
                except (EOFError, OSError, pickle.UnpicklingError):
                    dead = True
            with self._ready:
                self._results[index] = value
                self._ready.notify_all()

    def map(self, tasks: Sequence[ParseTask]) -> Iterator[FileAnalysis]:
        batches = [list(tasks[i : i + BATCH]) for i in range(0, len(tasks), BATCH)]
        workers = len(self._procs)
        sent = 0
        for index, batch in enumerate(batches):
            while sent < len(batches) and sent < index + workers * IN_FLIGHT_PER_WORKER:
                worker = sent % workers
                stdin = self._procs[worker].stdin
                try:
                    assert stdin is not None
                    _send(stdin, batches[sent])
                except (BrokenPipeError, OSError, ValueError):
                    pass  # the reader reports the batch as failed
                self._expected[worker].put(sent)
                sent += 1
            with self._ready:
                while index not in self._results:
                    self._ready.wait()
                value = self._results.pop(index)
            if isinstance(value, _Failed):  # the worker died (a crashing grammar)
                value = [_analyze_safely(t) for t in batch]
            yield from value

    def close(self) -> None:
        for proc in self._procs:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
        for expected in self._expected:
            expected.put(None)
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for reader in self._readers:
            reader.join(timeout=10)
        for proc in self._procs:
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
