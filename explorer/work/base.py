"""One latest-wins worker thread: the base of the window's workers (compute, step-throughs,
models, the length profile, lessons, the zoomed detail).

`WorkerThread` is a QThread serving a `JobQueue` (explorer/work/jobs.py, Qt-free: ids,
lanes, cancel, what a job sees). `submit(fn, lane)` queues `fn(job)` and starts the thread
if needed; a newer submission in the same lane replaces the pending job and makes the
running one stale. Outcomes travel back to the thread that made the worker (the UI thread)
through a `Mailbox` (explorer/work/mailbox.py: no Python callable is called from the worker
thread), in the order they happened, and reach the hooks there only if
the job is still the latest of its lane and the worker not stopped: checked in the thread
where requests are made, so a superseded request's result is never handed on.

Hooks, in the UI thread (a subclass overrides them and emits its own signals):
`job_done(job, result)`, `job_failed(job, exc)`, `job_cancelled(job)` (the job raised
`Cancelled`), `job_progress(job, done, total, detail)`; `idle()` runs in the worker thread
when the queue empties after a job. `Worker` is the plain worker with signals for each.

`stop()` closes the queue (a running job sees `cancelled()` turn true and should return
soon: every job here checks it between blocks, files or engine calls), then waits for the
thread up to STOP_WAIT_S. Every worker is also stopped at interpreter exit: a QThread
destroyed while it runs aborts the process.

`TaskWorker` is the same thread serving tasks in the order given (none replaces another),
each with a `concurrent.futures.Future`: for a loop in the UI thread that polls its
results one step at a time (the sweep and heads-forming exports: a frame computed ahead,
frames streamed to an encoder). `stop()` cancels what has not started; `drain()` waits for
every task given, then stops.
"""

from __future__ import annotations

import atexit
import itertools
import weakref
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from . import collector
from .jobs import Cancelled, Job, JobQueue, one_line
from .mailbox import Mailbox

__all__ = ["Cancelled", "Job", "TaskWorker", "Worker", "WorkerThread", "one_line", "run_events_until",
           "stop_at_exit"]

#: Every live worker thread, stopped at exit.
_LIVE: weakref.WeakSet = weakref.WeakSet()
#: The worker threads running now, held until they finish: a QThread whose Python owner went
#: away (a figure's panel deleted while its step-through was computing) would otherwise be
#: garbage-collected while its thread runs, and Qt crashes on that (seen once in the suite:
#: a segfault in the collector during test_stepthrough)
_RUNNING: set = set()


def run_events_until(done: Callable[[], bool], timeout_s: float) -> bool:
    """Run the calling thread's event loop until `done()` or `timeout_s` passed; `done()`.

    For scripts, exports and tests that wait for a worker. A nested QEventLoop runs (it
    sleeps until an event comes, and it deletes what `deleteLater` left, as the
    application's loop would: processEvents does neither: with a time limit it spun a
    core, and the widgets a test had deleted piled up until restyling took minutes); a
    timer of this call looks at `done()` every 50 ms. No timer outlives the call (a
    pending `QTimer.singleShot(…, loop.quit)` of a returned call holds a dead loop, a
    PySide crash site)."""
    from PySide6.QtCore import QDeadlineTimer, QEventLoop, QTimer

    if done():
        return True
    deadline = QDeadlineTimer(int(timeout_s * 1000))
    loop = QEventLoop()
    tick = QTimer()

    def look() -> None:
        if done() or deadline.hasExpired():
            loop.quit()

    tick.timeout.connect(look)
    tick.start(50)
    try:
        loop.exec()
    finally:
        tick.stop()
        tick.timeout.disconnect(look)
    return done()


def stop_at_exit(thread) -> None:
    """Stop `thread` (anything with .stop()) at interpreter exit if it still runs."""
    _LIVE.add(thread)


@atexit.register
def _stop_all() -> None:
    for w in list(_LIVE):
        try:
            w.stop()
        except RuntimeError:  # its C++ side is already gone
            pass


class WorkerThread(QThread):
    """See the module docstring. Not a Qt child of a widget: a parent deleting it while it
    runs would abort; connect the owner's `destroyed` to `stop` instead."""

    #: lanes in the order they run when several are pending (None: the order submitted)
    ORDER: Sequence[Hashable] | None = None
    #: how long stop() waits for a running job to return
    STOP_WAIT_S = 10.0

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # (kind, job, payload) from the worker thread; ("ended", None, None) as run() returns
        self._outbox = Mailbox(self._dispatch, self)  # (deleted with the worker: no late delivery)
        self.jobs = JobQueue(self._post, self.ORDER)
        self.dropped = 0  # results computed but stale on arrival
        self._held = False  # the collector is held for the running thread (collector.py)
        stop_at_exit(self)

    # ---- requests (from the UI thread) ---------------------------------------------------------
    def submit(self, fn: Callable[[Job], Any], lane: Hashable = None, *, exclusive: bool = False,
               data: Any = None) -> int:
        """Run `fn(job)` in the thread (latest wins in `lane`); returns its id."""
        rid = self.jobs.submit(fn, lane, exclusive=exclusive, data=data)
        if not self.jobs.closed and not self.isRunning():
            self.start()
        return rid

    def start(self, *args) -> None:
        """QThread.start with the thread kept and the collector held until it ends: however it
        is started (the window and the model controller start theirs at once, idle until the
        first job), no cyclic collection may run in it (a segfault in the suite: a model load's
        allocations set off a collection in the model thread while the window's were not held)."""
        _RUNNING.add(self)
        if not self._held:
            self._held = True
            collector.hold()
        super().start(*args)

    def supersede(self, lane: Hashable = None) -> int:
        """A new id with nothing to run: what is pending or running in `lane` is stale."""
        return self.jobs.supersede(lane)

    def cancel(self, rid: int | None = None) -> int | None:
        """Cancel job `rid` (default: the running one); see JobQueue.cancel."""
        return self.jobs.cancel(rid)

    @property
    def running(self) -> int | None:
        """The id of the job running now, or None."""
        job = self.jobs.running
        return None if job is None else job.id

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent)."""
        self.jobs.close()
        if not self.isRunning() or self.wait(int(self.STOP_WAIT_S * 1000)):
            self._ended()

    def retire(self) -> None:
        """`stop()`, then delete this thread object at the next turn of the event loop: what the
        owner's `destroyed` calls. A worker is no Qt child of its owner (see the class
        docstring), so nothing else deletes its C++ side, and that side holds, out of the
        garbage collector's sight, the slots connected to it: a closed window lived on through
        its workers with everything it held (~170,000 objects and 330 widgets a window). A
        thread still running after `stop()` waited is left alone (deleting it aborts)."""
        self.stop()
        if not self.isRunning():
            self.deleteLater()

    def _ended(self) -> None:
        """The thread has finished (UI thread): let go of it and of the collector."""
        _RUNNING.discard(self)
        if self._held:
            self._held = False
            collector.release()

    # ---- the thread ------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self.jobs.serve(self.idle)
        finally:
            self._outbox.post(("ended", None, None))

    def idle(self) -> None:
        """Called in the worker thread when the queue empties after a job."""

    def _post(self, kind: str, job: Job, payload: Any) -> None:  # any thread
        self._outbox.post((kind, job, payload))

    # ---- outcomes (in the UI thread) --------------------------------------------------------------
    def _dispatch(self, item: tuple[str, Job | None, Any]) -> None:
        kind, job, payload = item
        if kind == "ended":  # the thread is ending: wait out its last instructions
            if not self.isRunning() or self.wait(int(self.STOP_WAIT_S * 1000)):
                self._ended()
            return
        if self.jobs.is_stale(job):
            if kind == "done":
                self.dropped += 1
        elif kind == "progress":
            self.job_progress(job, *payload)
        elif kind == "done":
            self.job_done(job, payload)
        elif kind == "failed":
            self.job_failed(job, payload)
        else:
            self.job_cancelled(job)
        if kind != "progress":
            self.jobs.forget(job)

    def job_done(self, job: Job, result: Any) -> None:
        pass

    def job_failed(self, job: Job, exc: Exception) -> None:
        pass

    def job_cancelled(self, job: Job) -> None:
        pass

    def job_progress(self, job: Job, done: float, total: float, detail: Any) -> None:
        pass


class Worker(WorkerThread):
    """The plain worker: each outcome as a signal, with the job's id."""

    done = Signal(int, object)  # id, result
    failed = Signal(int, str)  # id, one line: "Type: message"
    cancelled = Signal(int)  # id
    progress = Signal(int, float, float)  # id, done, total

    def job_done(self, job: Job, result: Any) -> None:
        self.done.emit(job.id, result)

    def job_failed(self, job: Job, exc: Exception) -> None:
        self.failed.emit(job.id, one_line(exc))

    def job_cancelled(self, job: Job) -> None:
        self.cancelled.emit(job.id)

    def job_progress(self, job: Job, done: float, total: float, detail: Any) -> None:
        self.progress.emit(job.id, float(done), float(total))


class TaskWorker(WorkerThread):
    """One thread running tasks in the order given, each answered by a Future (see the
    module docstring). A task is `fn(job)`: `job.check` is a progress callback that ends an
    engine call once the worker stops. The Future is settled in the worker thread (a Future
    is made for that: no Qt object and no Python slot is touched there); a task raising
    `Cancelled` (the worker stopped under it) settles it with that exception."""

    def __init__(self, name: str = "") -> None:
        super().__init__()
        self.setObjectName(name)  # (the thread's name in a debugger)
        self._lanes = itertools.count()  # each task its own lane: nothing is replaced
        self._futures: list[Future] = []  # given and not yet settled (pruned at each call)

    def task(self, fn: Callable[[Job], Any]) -> Future:
        """Queue `fn(job)` after the tasks given before; its Future (cancelled, never run,
        if the worker stops first)."""
        fut: Future = Future()

        def run(job: Job) -> None:
            if not fut.set_running_or_notify_cancel():  # cancelled while it waited
                return
            try:
                result = fn(job)
            except BaseException as exc:  # (Cancelled included: the Future holds it)
                fut.set_exception(exc)
            else:
                fut.set_result(result)

        self._futures = [f for f in self._futures if not f.done()]
        self._futures.append(fut)
        if self.jobs.closed:
            fut.cancel()
        else:
            self.submit(run, ("task", next(self._lanes)))
        return fut

    def stop(self) -> None:
        """Cancel the tasks not started, end the running one at its next check, stop."""
        for fut in self._futures:
            fut.cancel()  # (False for the running one: it sees cancelled() turn true)
        super().stop()

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait for every task given to settle (up to `timeout_s`), then stop; True if all
        did. (Their outcomes are in their Futures: the UI thread need not run meanwhile.)"""
        _, not_done = wait_futures(list(self._futures), timeout=timeout_s)
        self.stop()
        return not not_done
