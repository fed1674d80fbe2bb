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
import threading
import time
import traceback
import weakref
from collections.abc import Callable

from PySide6.QtCore import QThread, Signal

from engine import AttentionConfig, BackendUnavailable, ConfigError

from .frame import Frame, build_frame, measure_backends

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


class ComputeWorker(QThread):
    """Runs build_frame off the UI thread; signals arrive queued in the UI thread."""

    frame_ready = Signal(object)  # Frame
    failed = Signal(int, object, str)  # request id, config, message
    backends_ready = Signal(int, object)  # request id, {backend: {...}}

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
        self._stop = False
        self.computed = 0  # frames computed (including dropped ones)
        self.dropped = 0  # frames computed but superseded before emission
        stop_at_exit(self)

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
            if kind == "frame":
                self._run_frame(rid, config)
            else:
                self._run_extras(rid, config)

    def _superseded(self, rid: int) -> bool:
        with self._cond:
            return rid != self._latest or self._stop

    def _run_frame(self, rid: int, config: AttentionConfig) -> None:
        try:
            frame = self._compute(config, rid)
        except (ConfigError, BackendUnavailable) as exc:
            if not self._superseded(rid):
                self.failed.emit(rid, config, str(exc))
            return
        except Exception as exc:  # an engine bug must not kill the thread or the window
            if not self._superseded(rid):
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                self.failed.emit(rid, config, f"the engine failed: {detail}")
            return
        self.computed += 1
        if self._superseded(rid):
            self.dropped += 1
            return
        self.frame_ready.emit(frame)
        with self._cond:
            if self._pending is None and rid == self._latest:
                self._extras = (rid, config)
                self._extras_due = time.monotonic() + self.extras_delay_s

    def _run_extras(self, rid: int, config: AttentionConfig) -> None:
        try:
            result = self._measure(config)
        except Exception as exc:
            result = {"error": {"error": str(exc)}}
        if not self._superseded(rid):
            self.backends_ready.emit(rid, result)
