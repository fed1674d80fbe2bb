"""A worker thread for the step-through panels: latest request wins, a result per key.

A step-through precomputes every step of its animation once per (config, head,
blocks), which takes from a few to a few hundred milliseconds: off the UI
thread, like the frame itself (explorer/work/compute.py). `request(key, job)` replaces
any pending job; `done(key, result)` or `failed(key, message)` arrive queued in
the UI thread, only for the newest key. Results are also kept in a small cache
shared by every panel of a class, so an export's fresh panel draws at once.
"""

from __future__ import annotations

import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Hashable

from PySide6.QtCore import QThread, Signal

from ..stepthrough import StepThroughError
from .compute import stop_at_exit


class ResultCache:
    """The last `size` results by key (LRU)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def put(self, key: Hashable, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def compute(job: Callable[[], object]) -> tuple[object | None, str | None]:
    """(result, None) or (None, the message a panel shows)."""
    try:
        return job(), None
    except (StepThroughError, ValueError) as exc:  # engine.ConfigError is a ValueError
        return None, str(exc)
    except Exception as exc:  # an engine bug must not kill the thread or the window
        return None, "the step-through failed: " + traceback.format_exception_only(type(exc), exc)[-1].strip()


class StepWorker(QThread):
    """One thread per panel; `request(key, job)` runs job() there (latest wins)."""

    done = Signal(object, object)  # key, result
    failed = Signal(object, str)  # key, message

    def __init__(self, cache: ResultCache, parent=None) -> None:
        super().__init__(parent)
        self.cache = cache
        self._cond = threading.Condition()
        self._pending: tuple[Hashable, Callable[[], object]] | None = None
        self._latest: Hashable | None = None
        self._stop = False
        stop_at_exit(self)

    def request(self, key: Hashable, job: Callable[[], object]) -> None:
        with self._cond:
            self._latest = key
            self._pending = (key, job)
            self._cond.notify()
        if not self.isRunning():
            self.start()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._pending = None
            self._cond.notify()
        if self.isRunning():
            self.wait(60_000)

    def run(self) -> None:  # the thread
        while True:
            with self._cond:
                while not self._stop and self._pending is None:
                    self._cond.wait()
                if self._stop:
                    return
                key, job = self._pending
                self._pending = None
            result, error = compute(job)
            if result is not None:
                self.cache.put(key, result)
            with self._cond:
                if key != self._latest or self._stop:
                    continue
            if error is None:
                self.done.emit(key, result)
            else:
                self.failed.emit(key, error)
