"""The length profile's state and the thread that measures it.

`ProfileState` holds what every `profile` panel of a window draws (the settings, the
points measured so far, whether a measurement runs and how far it is), so an export's
fresh panel draws the same results and never starts measuring. `ProfileWorker` is a
worker thread (explorer/work/base.py) calling `engine.profile.length_profile`, which runs
each point in a child process: this thread mostly waits on that process's pipe (the GIL
free), the UI thread only draws the points as they arrive. Cancel is polled by the engine
every ~50 ms; it ends the child at once and keeps the points done.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Signal

from engine import AttentionConfig
from engine.profile import (
    ALL_BACKENDS,
    BACKENDS,
    DEFAULT_LENGTHS,
    MAX_LENGTH,
    VARIANT_BACKENDS,
    VARIANT_MAX_LENGTH,
    ProfilePoint,
    length_profile,
    profile_plan,
)

from ..work.base import Cancelled, Job, WorkerThread

__all__ = ["LENGTH_CHOICES", "ProfileState", "ProfileWorker"]

#: the lengths a sweep can start and end at: powers of two up to engine.profile.VARIANT_MAX_LENGTH
#: (full attention alone stops at MAX_LENGTH: `ProfileState.sweep`)
LENGTH_CHOICES = tuple(2**k for k in range(4, VARIANT_MAX_LENGTH.bit_length()))


def doubling(first: int, last: int) -> tuple[int, ...]:
    """first, 2·first, … up to last (both powers of two in LENGTH_CHOICES)."""
    out, S = [], first
    while S <= last:
        out.append(S)
        S *= 2
    return tuple(out)


class ProfileWorker(WorkerThread):
    """Runs `length_profile`s, one at a time; its signals are emitted in the UI thread.

    `measure(...)` queues one (latest wins); `cancel()` stops the one running: the engine
    polls `job.cancelled()` every ~50 ms, ends its child process and returns the points
    done, which arrive as a finished, cancelled profile."""

    progressed = Signal(int, int, object)  # done, total, ProfilePoint or None
    finished_profile = Signal(object, bool)  # the points, cancelled
    failed = Signal(str)

    def measure(self, config: AttentionConfig, lengths, backends, repeats: int) -> int:
        lengths, backends = tuple(lengths), tuple(backends)

        def job(job: Job):
            def report(done, total, point) -> None:
                try:
                    job.progress(done, total, point)
                except Cancelled:  # the engine sees it too, and returns the points done
                    pass

            points = length_profile(config, lengths, backends, repeats, progress=report, cancel=job.cancelled)
            return points, job.cancelled()

        return self.submit(job)

    def job_progress(self, job: Job, done, total, point) -> None:
        self.progressed.emit(int(done), int(total), point)

    def job_done(self, job: Job, result) -> None:
        self.finished_profile.emit(*result)

    def job_cancelled(self, job: Job) -> None:  # cancelled before it started
        self.finished_profile.emit([], True)

    def job_failed(self, job: Job, exc: Exception) -> None:  # reported in the panel, never a crash
        self.failed.emit(f"{type(exc).__name__}: {exc}".splitlines()[0])


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
        self.worker: ProfileWorker | None = None  # made on the first measurement
        self._rid = 0  # the measurement whose signals are wanted

    # ---- settings -------------------------------------------------------------------------
    def set_settings(self, lengths=None, backends=None, repeats=None) -> None:
        if lengths is not None:
            self.lengths = tuple(lengths)
        if backends is not None:
            self.backends = tuple(b for b in ALL_BACKENDS if b in backends)
        if repeats is not None:
            self.repeats = int(repeats)
        self.changed.emit("settings")

    def sweep(self) -> tuple[int, ...]:
        """The lengths a measurement covers: the settings' up to 65,536 when a variant is
        chosen (full attention's points past 16,384 then come back not run, at their
        estimate), else up to 16,384 (the engine's limits, engine.profile)."""
        top = VARIANT_MAX_LENGTH if set(self.backends) & set(VARIANT_BACKENDS) else MAX_LENGTH
        return tuple(S for S in self.lengths if S <= top)

    # ---- measuring ------------------------------------------------------------------------
    def measure(self, config: AttentionConfig) -> bool:
        """Start measuring ``config`` with the settings (False when one runs already, no
        backend is chosen or no length is left: `sweep`). The previous points are replaced
        as the new ones arrive."""
        lengths = self.sweep()
        if self.running or not self.backends or not lengths:
            return False
        self.config = config
        self.points = []
        self.plan = profile_plan(lengths, self.backends)
        self.done, self.total = 0, len(self.plan)
        self.running, self.cancelled, self.error = True, False, ""
        self.started = time.monotonic()
        self.elapsed_s = 0.0
        if self.worker is None:
            w = self.worker = ProfileWorker()
            w.progressed.connect(self._on_progress)
            w.finished_profile.connect(self._on_finished)
            w.failed.connect(self._on_failed)
        self._rid = self.worker.measure(config, lengths, self.backends, self.repeats)
        self.changed.emit("running")
        self.changed.emit("points")
        return True

    def cancel(self) -> None:
        if self.worker is not None and self.running:
            self.worker.cancel(self._rid)

    def stop(self) -> None:
        """Cancel and wait (the window closing): the thread ends with its measuring process.
        Called again as the window's objects are destroyed, when the worker may be gone."""
        if self.worker is not None:
            try:
                self.worker.stop()
            except RuntimeError:  # its C++ object deleted already (stopped by the window's shutdown)
                self.worker = None

    def next_point(self) -> tuple[int, str] | None:
        """The (S, backend) being measured now, while running."""
        if not self.running or self.done >= len(self.plan):
            return None
        return self.plan[self.done]

    def _on_progress(self, done: int, total: int, point) -> None:
        self.done, self.total = done, total
        if point is not None:
            self.points.append(point)
        self.elapsed_s = time.monotonic() - self.started
        self.changed.emit("points")

    def _finish(self) -> None:
        self.running = False
        self.elapsed_s = time.monotonic() - self.started
        self.changed.emit("running")
        self.changed.emit("points")

    def _on_finished(self, points, cancelled: bool) -> None:
        self.points = list(points)
        self.cancelled = cancelled
        self._finish()

    def _on_failed(self, message: str) -> None:
        self.error = message
        self._finish()
