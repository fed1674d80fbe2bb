"""The single compute thread: the latest request wins, stale results are dropped.

The restartable render thread of Qt's mandelbrot example: `request(config)`
stores the newest (id, config) under a lock and wakes the thread; a request
that arrives while the engine runs replaces the pending one, so a slider drag
never queues up work. After computing, a result is emitted only if no newer
request arrived meanwhile; the window checks the id again on arrival.

Once the thread has been idle for EXTRAS_DELAY_S after a frame, it measures
every backend for that config (the diagnostics panel's comparison: three more
engine runs). A request arriving first cancels that, so a drag never waits
for it.
"""

from __future__ import annotations

import atexit
import inspect
import threading
import time
import traceback
import weakref
from collections.abc import Callable

from PySide6.QtCore import QThread, Signal

from engine import AttentionConfig, BackendUnavailable, ConfigError
from engine.memory import release_free_memory

from ..frame import Frame, build_frame, measure_backends

#: Idle time after a frame before the backend comparison runs.
EXTRAS_DELAY_S = 0.25

#: Every live worker thread (this one and the model loader's), stopped at exit.
_LIVE: weakref.WeakSet = weakref.WeakSet()


def stop_at_exit(thread) -> None:
    """Stop `thread` (anything with .stop()) at interpreter exit if it still runs."""
    _LIVE.add(thread)


@atexit.register
def _stop_all() -> None:
    """A QThread destroyed while running aborts the process: stop any left at exit."""
    for w in list(_LIVE):
        try:
            w.stop()
        except RuntimeError:  # its C++ side is already gone
            pass


class _Cancelled(Exception):
    """Raised in a frame's progress report to stop it (cancel(), a newer request, stop())."""


class ComputeWorker(QThread):
    """Runs build_frame off the UI thread; signals arrive queued in the UI thread."""

    frame_ready = Signal(object)  # Frame
    failed = Signal(int, object, str)  # request id, config, message
    backends_ready = Signal(int, object)  # request id, {backend: {...}}
    progress = Signal(int, int, int)  # request id, done, total: a slow (long) frame under way
    cancelled = Signal(int, object)  # request id, config: stopped by cancel() before it finished

    def __init__(self, compute: Callable[[AttentionConfig, int], Frame] = build_frame,
                 measure: Callable[[AttentionConfig], dict] = measure_backends,
                 extras_delay_s: float = EXTRAS_DELAY_S, parent=None) -> None:
        super().__init__(parent)
        self.extras_delay_s = extras_delay_s
        self._compute = compute
        self._measure = measure
        self._cond = threading.Condition()
        self._pending: tuple[int, AttentionConfig] | None = None
        self._extras: tuple[int, AttentionConfig] | None = None
        self._extras_due = 0.0
        self._latest = 0
        self._running: int | None = None  # the request being computed
        self._heap_used = False  # a job ran since the worker last gave freed memory back
        self._stop = False
        self.computed = 0  # frames computed (including dropped ones)
        self.dropped = 0  # frames computed but superseded before emission
        self._cancelled: int | None = None  # the request cancel() stopped
        self._extras_wanted = True  # measure the backends after a frame (their panel is visible)
        self._last_frame: tuple[int, AttentionConfig] | None = None  # the last frame emitted
        stop_at_exit(self)

    def set_extras_wanted(self, wanted: bool) -> None:
        """Whether the backend comparison is worth running (the panel that shows it is visible).
        Turned on, it is measured for the last frame if that is still the latest."""
        with self._cond:
            self._extras_wanted = wanted
            if not wanted:
                self._extras = None
            elif self._pending is None and self._last_frame is not None and self._last_frame[0] == self._latest:
                self._extras = self._last_frame
                self._extras_due = time.monotonic() + self.extras_delay_s
                self._cond.notify()

    def _takes_progress(self, fn=None) -> bool:
        """Whether the compute (or `fn`) takes progress(done, total): it then reports, and can be
        cancelled."""
        try:
            return "progress" in inspect.signature(self._compute if fn is None else fn).parameters
        except (TypeError, ValueError):
            return False

    @property
    def latest_id(self) -> int:
        return self._latest

    def request(self, config: AttentionConfig) -> int:
        """Queue `config` (replacing any pending request); returns its id."""
        with self._cond:
            self._latest += 1
            self._pending = (self._latest, config)
            self._extras = None
            self._cond.notify()
            return self._latest

    def supersede(self) -> int:
        """A new request id with nothing to compute: whatever is pending or running is stale
        (a frame computed elsewhere, e.g. MainWindow.render_sync, is what is shown)."""
        with self._cond:
            self._latest += 1
            self._pending = self._extras = None
            return self._latest

    def cancel(self) -> int | None:
        """Stop the frame being computed (at its next progress report); returns its id, or None
        when nothing is under way. Its config is announced by `cancelled`; no frame for it."""
        with self._cond:
            if self._running is None:
                return None
            self._cancelled = self._running
            return self._running

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent; a running engine call finishes first)."""
        with self._cond:
            self._stop = True
            self._pending = self._extras = None
            self._cond.notify()
        if self.isRunning():
            self.wait(60_000)

    def run(self) -> None:  # the thread
        while True:
            with self._cond:
                idle = self._pending is None and self._extras is None and not self._stop
                trim, self._heap_used = idle and self._heap_used, self._heap_used and not idle
            if trim:  # nothing to do: the frames' freed memory back to the system (long sessions)
                release_free_memory()
            with self._cond:
                while not self._stop and self._pending is None:
                    if self._extras is None:
                        self._cond.wait()
                        continue
                    left = self._extras_due - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                if self._stop:
                    return
                if self._pending is not None:
                    job, kind = self._pending, "frame"
                    self._pending = None
                else:
                    job, kind = self._extras, "extras"
                    self._extras = None
            rid, config = job
            self._heap_used = True
            if kind == "frame":
                self._run_frame(rid, config)
            else:
                self._run_extras(rid, config)

    def _superseded(self, rid: int) -> bool:
        with self._cond:
            return rid != self._latest or self._stop

    def _run_frame(self, rid: int, config: AttentionConfig) -> None:
        with self._cond:
            self._running = rid
        try:
            if self._takes_progress():
                frame = self._compute(config, rid, progress=lambda done, total: self._report(rid, done, total))
            else:
                frame = self._compute(config, rid)
        except _Cancelled:
            with self._cond:
                mine = self._cancelled == rid
            if mine and not self._superseded(rid):
                self.cancelled.emit(rid, config)
            return
        except (ConfigError, BackendUnavailable) as exc:
            if not self._superseded(rid):
                self.failed.emit(rid, config, str(exc))
            return
        except Exception as exc:  # an engine bug must not kill the thread or the window
            if not self._superseded(rid):
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                self.failed.emit(rid, config, f"the engine failed: {detail}")
            return
        finally:
            with self._cond:
                self._running = None
        self.computed += 1
        if self._superseded(rid):
            self.dropped += 1
            return
        self.frame_ready.emit(frame)
        with self._cond:
            self._last_frame = (rid, config)
            if self._pending is None and rid == self._latest and self._extras_wanted:
                self._extras = (rid, config)
                self._extras_due = time.monotonic() + self.extras_delay_s

    def _report(self, rid: int, done: int, total: int) -> None:
        """progress(done, total) of the frame `rid`: stops it when cancelled or superseded."""
        with self._cond:
            stop = self._cancelled == rid or rid != self._latest or self._stop
        if stop:
            raise _Cancelled
        self.progress.emit(rid, done, total)

    def _run_extras(self, rid: int, config: AttentionConfig) -> None:
        def stop_if_superseded(_done: int, _total: int) -> None:
            if self._superseded(rid):  # a new frame is wanted: the comparison of this one is moot
                raise _Cancelled

        try:
            if self._takes_progress(self._measure):
                result = self._measure(config, progress=stop_if_superseded)
            else:
                result = self._measure(config)
        except _Cancelled:
            return
        except Exception as exc:
            result = {"error": {"error": str(exc)}}
        if not self._superseded(rid):
            self.backends_ready.emit(rid, result)
