"""A thread pool whose work never holds up closing the memory or leaving the process.

The enricher answers within its deadlines and leaves a late search running. In a
``ThreadPoolExecutor`` that search held up ``close()`` and, since Python joins an
executor's threads at exit, the process too: against a provider that did not answer,
``remembrances enrich`` printed its (empty) block and exited 375 s later, after every
retry of the query's embedding. These threads are daemons, and :meth:`DaemonPool.close`
waits for running work only up to a bound.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


class DaemonPool:
    """Up to ``max_workers`` daemon threads, started as work comes (as the standard
    executor does), that run submitted calls and report them through futures."""

    def __init__(self, max_workers: int, name: str) -> None:
        self._max = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle_now = threading.Condition(self._lock)
        self._threads = 0
        self._idle = 0
        self._busy = 0  # queued or running
        self._closed = False

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the enrichment pool is closed")
            self._busy += 1
            self._queue.put((future, fn, args))
            if self._idle:
                self._idle -= 1
            elif self._threads < self._max:
                self._threads += 1
                name = f"{self._name}-{self._threads}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            future, fn, args = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # reported through the future
                    future.set_exception(exc)
            with self._lock:
                self._busy -= 1
                self._idle += 1
                if not self._busy:
                    self._idle_now.notify_all()

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
            for _ in range(self._threads):
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
