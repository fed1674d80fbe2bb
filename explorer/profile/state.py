"""The length profile's state and the thread that measures it.

`ProfileState` holds what every `profile` panel of a window draws (the settings, the
points measured so far, whether a measurement runs and how far it is), so an export's
fresh panel draws the same results and never starts measuring. `ProfileWorker` is a
QThread calling `engine.profile.length_profile`, which runs each point in a child process:
this thread mostly waits on that process's pipe (the GIL free), the UI thread only draws
the points as they arrive. Cancel sets an event the engine polls every ~50 ms; it ends the
child at once and keeps the points done.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, QThread, Signal

from engine import AttentionConfig
from engine.profile import (
    BACKENDS,
    DEFAULT_LENGTHS,
    MAX_LENGTH,
    ProfilePoint,
    length_profile,
    profile_plan,
)

from ..work.compute import stop_at_exit

__all__ = ["LENGTH_CHOICES", "ProfileState", "ProfileWorker"]

#: the lengths a sweep can start and end at: powers of two up to engine.profile.MAX_LENGTH
LENGTH_CHOICES = tuple(2**k for k in range(4, MAX_LENGTH.bit_length()))


def doubling(first: int, last: int) -> tuple[int, ...]:
    """first, 2·first, … up to last (both powers of two in LENGTH_CHOICES)."""
    out, S = [], first
    while S <= last:
        out.append(S)
        S *= 2
    return tuple(out)


class ProfileWorker(QThread):
    """Runs one `length_profile`; signals arrive queued in the UI thread."""

    progressed = Signal(int, int, object)  # done, total, ProfilePoint or None
    finished_profile = Signal(object, bool)  # the points, cancelled
    failed = Signal(str)

    def __init__(self, config: AttentionConfig, lengths, backends, repeats: int, parent=None) -> None:
        super().__init__(parent)
        self.config, self.lengths, self.backends, self.repeats = config, tuple(lengths), tuple(backends), repeats
        self._cancel = threading.Event()
        stop_at_exit(self)

    def run(self) -> None:
        try:
            points = length_profile(self.config, self.lengths, self.backends, self.repeats,
                                    progress=lambda d, t, p: self.progressed.emit(d, t, p),
                                    cancel=self._cancel.is_set)
        except Exception as exc:  # reported in the panel, never a crash of the window
            self.failed.emit(f"{type(exc).__name__}: {exc}".splitlines()[0])
            return
        self.finished_profile.emit(points, self._cancel.is_set())

    def cancel(self) -> None:
        self._cancel.set()

    def stop(self) -> None:
        """Cancel and wait for the thread (its measuring process ends with it)."""
        self._cancel.set()
        if self.isRunning():
            self.wait(10_000)


class ProfileState(QObject):
    """See the module docstring. `changed(what)`: "settings", "points", "running"."""

    changed = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.lengths: tuple[int, ...] = DEFAULT_LENGTHS
        self.backends: tuple[str, ...] = BACKENDS
        self.repeats = 3
        self.points: list[ProfilePoint] = []
        self.config: AttentionConfig | None = None  # the config the points are of
        self.plan: list[tuple[int, str]] = []  # what the measurement (running or last) covers
        self.done = 0
        self.total = 0
        self.running = False
        self.cancelled = False
        self.error = ""
        self.started = 0.0
        self.elapsed_s = 0.0
        self.worker: ProfileWorker | None = None

    # ---- settings -------------------------------------------------------------------------
    def set_settings(self, lengths=None, backends=None, repeats=None) -> None:
        if lengths is not None:
            self.lengths = tuple(lengths)
        if backends is not None:
            self.backends = tuple(b for b in BACKENDS if b in backends)
        if repeats is not None:
            self.repeats = int(repeats)
        self.changed.emit("settings")

    # ---- measuring ------------------------------------------------------------------------
    def measure(self, config: AttentionConfig) -> bool:
        """Start measuring ``config`` with the settings (False when one runs already or no
        backend is chosen). The previous points are replaced as the new ones arrive."""
        if self.running or not self.backends or not self.lengths:
            return False
        self.config = config
        self.points = []
        self.plan = profile_plan(self.lengths, self.backends)
        self.done, self.total = 0, len(self.plan)
        self.running, self.cancelled, self.error = True, False, ""
        self.started = time.monotonic()
        self.elapsed_s = 0.0
        w = self.worker = ProfileWorker(config, self.lengths, self.backends, self.repeats)
        w.progressed.connect(self._on_progress)
        w.finished_profile.connect(self._on_finished)
        w.failed.connect(self._on_failed)
        w.start()
        self.changed.emit("running")
        self.changed.emit("points")
        return True

    def cancel(self) -> None:
        if self.worker is not None and self.running:
            self.worker.cancel()

    def stop(self) -> None:
        """Cancel and wait (the window closing)."""
        if self.worker is not None:
            self.worker.stop()

    def next_point(self) -> tuple[int, str] | None:
        """The (S, backend) being measured now, while running."""
        if not self.running or self.done >= len(self.plan):
            return None
        return self.plan[self.done]

    def _on_progress(self, done: int, total: int, point) -> None:
        if self.sender() is not self.worker:
            return
        self.done, self.total = done, total
        if point is not None:
            self.points.append(point)
        self.elapsed_s = time.monotonic() - self.started
        self.changed.emit("points")

    def _finish(self) -> None:
        self.running = False
        self.elapsed_s = time.monotonic() - self.started
        w, self.worker = self.worker, None
        if w is not None:
            w.wait(2000)
            w.deleteLater()
        self.changed.emit("running")
        self.changed.emit("points")

    def _on_finished(self, points, cancelled: bool) -> None:
        if self.sender() is not self.worker:
            return
        self.points = list(points)
        self.cancelled = cancelled
        self._finish()

    def _on_failed(self, message: str) -> None:
        if self.sender() is not self.worker:
            return
        self.error = message
        self._finish()
