"""The model's worker thread: loading, inspecting, the deletion test, one at a time.

A `WorkerThread` (explorer/work/base.py) whose lanes are the job kinds. A job is
`fn(job)`: `job.id`, `job.cancelled()` and `job.progress(done, total)` (a download's bytes)
are what it sees of the worker (`explorer.work.jobs.Job`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal

from ..work.base import Cancelled, Job, WorkerThread, one_line

__all__ = ["Cancelled", "ModelWorker", "first_line", "progress_tqdm"]


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
