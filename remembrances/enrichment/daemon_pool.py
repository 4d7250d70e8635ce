"""A thread pool whose work never holds up closing the memory or leaving the process.

The enricher answers within its deadlines and leaves a late search running. In a
``ThreadPoolExecutor`` that search held up ``close()`` and, since Python joins an
executor's threads at exit, the process too: against a provider that did not answer,
``remembrances enrich`` printed its (empty) block and exited 375 s later, after every
retry of the query's embedding. These threads are daemons, and :meth:`DaemonPool.close`
waits for running work only up to a bound.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


class DaemonPool:
    """Up to ``max_workers`` daemon threads, started as work comes (as the standard
    executor does), that run submitted calls and report them through futures. The
    threads hold the pool weakly: a pool nobody closes ends its threads when it is
    collected (as the standard executor's do), else each kept a store connection."""

    def __init__(self, max_workers: int, name: str) -> None:
        self._max = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle_now = threading.Condition(self._lock)
        self._threads = [0]  # shared with the collection callback
        self._idle = 0
        self._busy = 0  # queued or running
        self._closed = False
        self._ref = weakref.ref(self, functools.partial(_stop, self._queue, self._threads))

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the enrichment pool is closed")
            self._busy += 1
            self._queue.put((future, fn, args))
            if self._idle:
                self._idle -= 1
            elif self._threads[0] < self._max:
                self._threads[0] += 1
                name = f"{self._name}-{self._threads[0]}"
                threading.Thread(
                    target=_work, args=(self._queue, self._ref), name=name, daemon=True
                ).start()
        return future

    def _finished(self) -> None:
        with self._lock:
            self._busy -= 1
            self._idle += 1
            if not self._busy:
                self._idle_now.notify_all()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every submitted task to end, and leave the
        pool open (one shared by several memories: another's work is not cancelled);
        True when nothing still runs."""
        with self._lock:
            deadline = time.monotonic() + timeout
            while self._busy and (left := deadline - time.monotonic()) > 0:
                self._idle_now.wait(left)
            return not self._busy

    def close(self, timeout: float) -> bool:
        """Cancel what has not started, and wait up to ``timeout`` seconds for what is
        running; True when nothing still runs. The threads end as they finish."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None and item[0].cancel():
                    self._busy -= 1
            for _ in range(self._threads[0]):
                self._queue.put(None)
            deadline = time.monotonic() + timeout
            while self._busy and (left := deadline - time.monotonic()) > 0:
                self._idle_now.wait(left)
            if self._busy:
                log.warning(
                    "%d late %s task(s) still running (a slow embedder?); not waiting for them",
                    self._busy,
                    self._name,
                )
            return not self._busy


def _stop(work: queue.SimpleQueue[_Work | None], threads: list[int], _: object) -> None:
    """Wake every worker to end (a pool collected without being closed)."""
    for _thread in range(threads[0]):
        work.put(None)


def _work(work: queue.SimpleQueue[_Work | None], pool_ref: weakref.ref[DaemonPool]) -> None:
    """A worker: runs calls until a ``None`` (the pool closed, or was collected)."""
    while (item := work.get()) is not None:
        future, fn, args = item
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # reported through the future
                future.set_exception(exc)
        del item, future, fn, args  # nothing of the call outlives it here
        pool = pool_ref()
        if pool is None:
            return
        pool._finished()
        del pool
