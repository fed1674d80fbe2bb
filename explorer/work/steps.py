"""A worker thread for the step-through panels: latest request wins, a result per key.

A step-through precomputes every step of its animation once per (config, head,
blocks), which takes from a few to a few hundred milliseconds: off the UI
thread, like the frame itself (explorer/work/compute.py). `request(key, job)` replaces
any pending job (a `WorkerThread`, explorer/work/base.py); `done(key, result)` or
`failed(key, message)` are emitted in the UI thread, only for the newest request. Results
are also kept in a small cache shared by every panel of a class, so an export's fresh
panel draws at once.
"""

from __future__ import annotations

import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Hashable

from PySide6.QtCore import Signal

from ..stepthrough import StepThroughError
from .base import Job, WorkerThread


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


class StepWorker(WorkerThread):
    """One thread per panel; `request(key, job)` runs job() there (latest wins)."""

    done = Signal(object, object)  # key, result
    failed = Signal(object, str)  # key, message

    STOP_WAIT_S = 60.0  # a step-through's precomputation runs to its end

    def __init__(self, cache: ResultCache, parent=None) -> None:
        super().__init__(parent)
        self.cache = cache

    def request(self, key: Hashable, job: Callable[[], object]) -> int:
        return self.submit(lambda _job: self._run(key, job), data=key)

    def _run(self, key: Hashable, job: Callable[[], object]) -> tuple[object | None, str | None]:
        result, error = compute(job)
        if result is not None:  # kept even when stale: the cache is shared by every panel
            self.cache.put(key, result)
        return result, error

    def job_done(self, job: Job, outcome) -> None:
        result, error = outcome
        if error is None:
            self.done.emit(job.data, result)
        else:
            self.failed.emit(job.data, error)
