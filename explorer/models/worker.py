"""The model's worker thread: loading, inspecting, the deletion test, one at a time.

A `WorkerThread` (explorer/work/base.py) whose lanes are the job kinds. A job is
`fn(job)`: `job.id`, `job.cancelled()` and `job.progress(done, total)` (a download's bytes)
are what it sees of the worker (`explorer.work.jobs.Job`).
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal

from ..work.base import Cancelled, Job, WorkerThread, one_line

__all__ = ["Cancelled", "ModelWorker", "exit_if_left_running", "first_line", "progress_tqdm"]

#: model workers that quitting left running (a load inside transformers, which takes no cancel)
_LEFT_RUNNING: weakref.WeakSet = weakref.WeakSet()


def first_line(exc: BaseException) -> str:
    """The message's first non-empty line (the type's name for an empty message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


class ModelWorker(WorkerThread):
    """One thread for every model job, so only one model loads or runs at a time.

    `submit(kind, fn)` replaces a pending job of the same kind (latest wins); a
    "load" also drops pending "inspect" and "delete" jobs (they belong to the old
    model) and makes a running one stale. Jobs run in the order load, inspect, delete.
    Results are emitted in the UI thread, only for the latest job of each kind; the
    controller drops those it no longer wants (a cancelled load). The circuits panels'
    kinds (detectors, circuits, lens, attribution, patching, qk_space) are
    `ModelAnalyses`' (analyses.py).
    """

    done = Signal(int, str, object)  # request id, kind, result
    failed = Signal(int, str, object)  # request id, kind, exception (Cancelled when cancelled)
    progress = Signal(int, float, float)  # request id, done, total (0 = unknown)

    #: the circuits panels' lanes come last (explorer/models/analyses.py)
    ORDER = ("load", "inspect", "delete", "detectors", "circuits", "lens", "attribution",
             "patching", "qk_space")
    STOP_WAIT_S = 120.0  # a local load runs to its end
    #: how long quitting waits for the running job to see its cancel: every job checks at
    #: least at block granularity (engine.models.cancel), but a load inside transformers'
    #: from_pretrained or an import sees none until that step ends (tens of seconds for a
    #: large model on a busy machine)
    QUIT_WAIT_S = 1.5

    def stop_for_quit(self) -> bool:
        """Cancel everything and wait up to QUIT_WAIT_S for the thread; True when it ended.
        Otherwise the thread is left running (its result goes nowhere) and
        :func:`exit_if_left_running` ends the process once the window has shut down: waiting
        for the load is what held a quit up to STOP_WAIT_S (issue 46)."""
        self.jobs.close()
        if self in _LEFT_RUNNING and self.isRunning():  # (the window shuts down twice: once is enough)
            return False
        if not self.isRunning() or self.wait(int(self.QUIT_WAIT_S * 1000)):
            self._ended()
            return True
        _LEFT_RUNNING.add(self)
        return False

    def submit(self, kind: str, fn: Callable[[Job], Any]) -> int:  # type: ignore[override]
        if kind not in self.ORDER:
            raise ValueError(f"unknown job kind {kind!r}; kinds: {', '.join(self.ORDER)}")
        return super().submit(fn, kind, exclusive=kind == "load", data=kind)

    def job_done(self, job: Job, result) -> None:
        self.done.emit(job.id, job.lane, result)

    def job_failed(self, job: Job, exc: Exception) -> None:
        if not getattr(exc, "args", None):  # every failure goes to the window with a reason
            exc.args = (one_line(exc),)
        self.failed.emit(job.id, job.lane, exc)

    def job_cancelled(self, job: Job) -> None:
        self.failed.emit(job.id, job.lane, Cancelled(f"{job.lane} cancelled"))

    def job_progress(self, job: Job, done: float, total: float, _detail) -> None:
        self.progress.emit(job.id, float(done), float(total or 0))


def progress_tqdm(job: Job):
    """A tqdm class for huggingface_hub's download bars: reports progress, raises on cancel."""
    from huggingface_hub.utils import tqdm as hf_tqdm

    class _Bar(hf_tqdm):
        _last = 0.0

        def update(self, n=1):
            if job.cancelled():
                raise Cancelled("download cancelled")
            out = super().update(n)
            now = time.monotonic()
            if now - self._last > 0.1 and getattr(self, "unit", "") == "B":
                self._last = now
                job.progress(self.n or 0, self.total or 0)
            return out

    return _Bar


def exit_if_left_running(code: int) -> None:
    """The application's last step: when quitting left a model worker running, end the process
    now with ``code`` (``os._exit``: the interpreter's own exit would destroy the running
    QThread, which aborts, or wait for it). Everything the window saves is saved by then;
    stdout and stderr are flushed first. Returns when no worker was left running."""
    if not any(w.isRunning() for w in list(_LEFT_RUNNING)):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)
