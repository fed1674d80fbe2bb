"""The single compute thread: the latest request wins, stale results are dropped.

A `WorkerThread` (explorer/work/base.py) with one lane: `request(config)` replaces any
pending frame, so a slider drag never queues up work, and a frame a newer request
superseded is dropped before it reaches the window (which checks the id again on arrival).
A long frame reports progress per block; `cancel()`, a newer request or `stop()` stops it
at its next report.

Once the thread has been idle for EXTRAS_DELAY_S after a frame, it measures every backend
for that config (the diagnostics panel's comparison: three more engine runs), as a job of
the same lane: a request arriving first supersedes it, so a drag never waits for it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from PySide6.QtCore import Signal

from engine import AttentionConfig, BackendUnavailable, ConfigError
from engine.memory import release_free_memory

from ..frame import Frame, build_frame, measure_backends
from .base import Cancelled, Job, WorkerThread, one_line

#: Idle time after a frame before the backend comparison runs.
EXTRAS_DELAY_S = 0.25
#: A frame's progress reaches the UI thread at most this often (cancel is checked at every
#: report): the status bar shows it only for a frame slower than FrameProgress.SHOW_AFTER_S
PROGRESS_EVERY_S = 0.05


class ComputeWorker(WorkerThread):
    """Runs build_frame off the UI thread; its signals are emitted in the UI thread.

    A job's `data` is ("frame", config) or ("extras", the frame's id, config)."""

    frame_ready = Signal(object)  # Frame
    failed = Signal(int, object, str)  # request id, config, message
    backends_ready = Signal(int, object)  # request id, {backend: {...}}
    progress = Signal(int, int, int)  # request id, done, total: a slow (long) frame under way
    cancelled = Signal(int, object)  # request id, config: stopped by cancel() before it finished

    STOP_WAIT_S = 60.0  # a compute without progress reports finishes its engine call first

    def __init__(self, compute: Callable[[AttentionConfig, int], Frame] = build_frame,
                 measure: Callable[[AttentionConfig], dict] = measure_backends,
                 extras_delay_s: float = EXTRAS_DELAY_S, parent=None) -> None:
        super().__init__(parent)
        self.extras_delay_s = extras_delay_s
        self._compute = compute
        self._measure = measure
        self._latest = 0  # the newest request (or supersede) id
        self._heap_used = False  # a job ran since the worker last gave freed memory back
        self._extras_follow = False  # (thread) the comparison will follow the frame just made
        self.computed = 0  # frames computed (including dropped ones)
        self._extras_wanted = True  # measure the backends after a frame (their panel is visible)
        self._extras: int | None = None  # the comparison queued or running
        self._last_frame: tuple[int, AttentionConfig] | None = None  # the last frame emitted

    @property
    def latest_id(self) -> int:
        return self._latest

    # ---- requests (UI thread) ---------------------------------------------------------------------
    def request(self, config: AttentionConfig) -> int:
        """Queue `config` (replacing any pending request); returns its id."""
        self._extras = None
        self._latest = self.submit(self._run_frame, data=("frame", config))
        return self._latest

    def supersede(self, lane=None) -> int:
        """A new request id with nothing to compute: whatever is pending or running is stale
        (a frame computed elsewhere, e.g. MainWindow.render_sync, is what is shown)."""
        self._extras = None
        self._latest = super().supersede(lane)
        return self._latest

    def cancel(self, rid: int | None = None) -> int | None:
        """Stop the frame being computed (at its next progress report); returns its id, or None
        when nothing is under way. Its config is announced by `cancelled`; no frame for it."""
        job = self.jobs.running
        if job is None or job.data[0] != "frame" or rid not in (None, job.id):
            return None
        return super().cancel(job.id)

    def set_extras_wanted(self, wanted: bool) -> None:
        """Whether the backend comparison is worth running (the panel that shows it is visible).
        Turned on, it is measured for the last frame if that is still the latest."""
        self._extras_wanted = wanted
        if not wanted:
            if self._extras is not None:
                self.jobs.cancel(self._extras)
                self._extras = None
        elif self._extras is None and self._last_frame is not None and self._last_frame[0] == self._latest:
            self._queue_extras(*self._last_frame)

    @staticmethod
    def _takes_progress(fn) -> bool:
        """Whether `fn` takes progress(done, total): it then reports, and can be cancelled."""
        try:
            return "progress" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            return False

    def _queue_extras(self, rid: int, config: AttentionConfig) -> None:
        self._extras = self.submit(self._run_extras, data=("extras", rid, config))

    # ---- the jobs (worker thread) -------------------------------------------------------------------
    def idle(self) -> None:
        """Nothing to do: the frames' freed memory back to the system (long sessions)."""
        if self._heap_used and not self._extras_follow:
            self._heap_used = False
            release_free_memory()

    def _run_frame(self, job: Job) -> Frame:
        self._heap_used, self._extras_follow = True, False
        config = job.data[1]
        if self._takes_progress(self._compute):
            frame = self._compute(config, job.id, progress=job.reporter(PROGRESS_EVERY_S))
        else:
            frame = self._compute(config, job.id)
        self.computed += 1
        self._extras_follow = self._extras_wanted and not job.cancelled()
        return frame

    def _run_extras(self, job: Job) -> dict:
        self._heap_used, self._extras_follow = True, False
        if job.wait(self.extras_delay_s):  # a new frame is wanted: the comparison of this one is moot
            raise Cancelled
        config = job.data[2]
        try:
            if self._takes_progress(self._measure):
                return self._measure(config, progress=job.progress)
            return self._measure(config)
        except Cancelled:
            raise
        except Exception as exc:
            return {"error": {"error": str(exc)}}

    # ---- outcomes (UI thread, only for the latest request) -------------------------------------------
    def job_done(self, job: Job, result) -> None:
        if job.data[0] == "extras":
            self._extras = None
            self.backends_ready.emit(job.data[1], result)
            return
        self.frame_ready.emit(result)
        self._last_frame = (job.id, job.data[1])
        if self._extras_wanted and job.id == self._latest:
            self._queue_extras(job.id, job.data[1])

    def job_failed(self, job: Job, exc: Exception) -> None:
        if job.data[0] != "frame":
            return
        if isinstance(exc, (ConfigError, BackendUnavailable)):
            message = str(exc)
        else:  # an engine bug must not kill the thread or the window
            message = f"the engine failed: {one_line(exc)}"
        self.failed.emit(job.id, job.data[1], message)

    def job_cancelled(self, job: Job) -> None:
        if job.data[0] == "frame":
            self.cancelled.emit(job.id, job.data[1])
        else:
            self._extras = None

    def job_progress(self, job: Job, done: float, total: float, _detail) -> None:
        self.progress.emit(job.id, int(done), int(total))
