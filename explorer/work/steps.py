"""A worker thread for the step-through panels: latest request wins, a result per key.

A step-through precomputes every step of its animation once per (config, head,
blocks), which takes from a few to a few hundred milliseconds: off the UI
thread, like the frame itself (explorer/work/compute.py). `request(key, job)` replaces
any pending job (a `WorkerThread`, explorer/work/base.py); `done(key, result)` or
`failed(key, message)` are emitted in the UI thread, only for the newest request. Results
are also kept in a small cache shared by every panel of a class, so an export's fresh
panel draws at once.

A job asked for with `cancellable=True` is called with a progress callback, `job(check)`,
to hand to the engine (`engine.run(config, progress=check)`): once a newer request replaces
it, or the panel goes, `check` raises `Cancelled` at the engine's next piece (~0.1 s), so a
long config's computation (S = 4096, hundreds of MB of grids) neither runs on for seconds
after Reset nor holds its memory meanwhile.
"""

from __future__ import annotations

import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Hashable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QWidget

from ..stepthrough import StepThroughError
from .base import Job, WorkerThread
from .jobs import Cancelled


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


def _no_check(done: float = 0, total: float = 0, detail=None) -> None:
    """The progress callback of a job computed at once (an export's figure): never cancels."""


def compute(job: Callable[..., object], check: Callable | None = None) -> tuple[object | None, str | None]:
    """(result, None) or (None, the message a panel shows); `job(check)` when `check` is given
    (a cancellable job: its `Cancelled` goes through, the worker reports it as cancelled)."""
    try:
        return (job() if check is None else job(check)), None
    except Cancelled:
        raise
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

    def request(self, key: Hashable, job: Callable[..., object], cancellable: bool = False) -> int:
        """Run `job()` (`job(check)` when `cancellable`) for `key`; latest wins."""
        return self.submit(lambda j: self._run(key, job, j.check if cancellable else None), data=key)

    def _run(self, key: Hashable, job: Callable[..., object], check: Callable | None) -> tuple[object | None, str | None]:
        result, error = compute(job, check)
        if result is not None:  # kept even when stale: the cache is shared by every panel
            self.cache.put(key, result)
        return result, error

    def job_done(self, job: Job, outcome) -> None:
        result, error = outcome
        if error is None:
            self.done.emit(job.data, result)
        else:
            self.failed.emit(job.data, error)


class StepRequests(QObject):
    """A step-through panel's results by key: `fetch(key, job)` shows a cached result at once,
    computes it at once in an export's figure (an offscreen panel that is drawn and thrown
    away: no event loop to wait in), and otherwise asks the panel's own StepWorker, made on
    first use and stopped with the panel. Each outcome goes to `show(key, result, error)`."""

    def __init__(self, panel: QWidget, cache: ResultCache,
                 show: Callable[[Hashable, object | None, str | None], None]) -> None:
        super().__init__(panel)
        self._panel, self.cache, self._show = panel, cache, show
        self._worker: StepWorker | None = None

    def fetch(self, key: Hashable, job: Callable[..., object], *, cancellable: bool = False) -> bool:
        """True when `show` was called now; False when the worker computes it (the panel then
        says "computing…"). `cancellable`: `job(check)` (see the module docstring)."""
        result = self.cache.get(key)
        if result is not None:
            self._show(key, result, None)
            return True
        if self._panel.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen):  # an export's figure
            result, error = compute(job, _no_check if cancellable else None)
            if result is not None:
                self.cache.put(key, result)
            self._show(key, result, error)
            return True
        self._worker_for_panel().request(key, job, cancellable)
        return False

    def _worker_for_panel(self) -> StepWorker:
        if self._worker is None:
            self._worker = StepWorker(self.cache)
            self._worker.done.connect(lambda key, result: self._show(key, result, None))
            self._worker.failed.connect(lambda key, message: self._show(key, None, message))
            self._panel.destroyed.connect(self._worker.retire)
        return self._worker
