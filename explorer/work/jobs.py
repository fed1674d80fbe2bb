"""The Qt-free core of every worker thread: a queue where the latest request wins.

`JobQueue.submit(fn, lane)` queues `fn(job)` under a new id. A lane holds at most one
pending job: a newer submission in the same lane replaces it and makes the one running
there stale, and a stale job's results are dropped (`is_stale`). Lanes run in `order`
when one is given, else in the order they were submitted. `serve()` is the thread's body;
every outcome goes to `post(kind, job, payload)` in that thread, in order:
("progress", job, (done, total, detail)), then one of ("done", job, result),
("failed", job, exception) or ("cancelled", job, None) — except that a job stale when it
ends posts its "failed" or "cancelled" not at all (no one waits for it).

What a job sees (`Job`): its `id`, `cancelled()` (cancel(id), a newer request in its
lane, or the worker stopping), `progress(done, total)` (reported; `Cancelled` raised
instead once the job is cancelled, so a job that reports progress stops at its next
report; `check` is the same check with nothing reported), and `wait(seconds)` (a sleep that a cancel cuts short). Raising `Cancelled` ends a job as
"cancelled"; any other exception as "failed" (`one_line(exc)` is its message).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any


class Cancelled(Exception):
    """Raised inside a job to stop it (`Job.progress` raises it once the job is cancelled)."""


def one_line(exc: BaseException) -> str:
    """"Type: the message's first non-empty line" (the type alone for an empty message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


class Job:
    """One request: `fn(job)` runs in the worker thread. `data`: what the request is about
    (a config, a key), for whoever handles its outcome."""

    __slots__ = ("_queue", "data", "fn", "id", "lane")

    def __init__(self, id: int, lane: Hashable, fn: Callable[[Job], Any], data: Any, queue: JobQueue) -> None:
        self.id, self.lane, self.fn, self.data, self._queue = id, lane, fn, data, queue

    def cancelled(self) -> bool:
        return self._queue.is_cancelled(self)

    def progress(self, done: float, total: float, detail: Any = None) -> None:
        if self.cancelled():
            raise Cancelled
        self._queue.post("progress", self, (done, total, detail))

    def check(self, done: float = 0, total: float = 0, detail: Any = None) -> None:
        """A progress callback that only checks: `Cancelled` once the job is cancelled,
        nothing posted (for engine calls whose progress no one shows, so a cancel or the
        worker stopping still ends them at their next block)."""
        if self.cancelled():
            raise Cancelled

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True (at once) when the job is or gets cancelled."""
        return self._queue.wait_cancelled(self, seconds)

    def reporter(self, every_s: float) -> Callable[[float, float], None]:
        """`progress`, posted at most once every `every_s` seconds (the first after `every_s`
        of running), and checking for a cancel at every call all the same. For a job whose
        engine calls report often: a quick one (the default frame, ~1 ms, reported ten times)
        posts nothing, so the UI thread is not woken ten times a frame for a bar it would not
        show."""
        last = [time.monotonic()]

        def report(done: float, total: float, detail: Any = None) -> None:
            if self.cancelled():
                raise Cancelled
            now = time.monotonic()
            if now - last[0] >= every_s:
                last[0] = now
                self._queue.post("progress", self, (done, total, detail))

        return report


class JobQueue:
    """See the module docstring. Every method but `serve` may be called from any thread."""

    def __init__(self, post: Callable[[str, Job, Any], None], order: Sequence[Hashable] | None = None) -> None:
        self.post = post
        self.order = tuple(order) if order is not None else None
        self._cond = threading.Condition()
        self._pending: dict[Hashable, Job] = {}  # lane → its one pending job, in submission order
        self._latest: dict[Hashable, int] = {}  # lane → the newest id; an older job there is stale
        self._cancelled: set[int] = set()
        self._running: Job | None = None
        self._next = 0
        self.closed = False

    def submit(self, fn: Callable[[Job], Any], lane: Hashable = None, *, exclusive: bool = False,
               data: Any = None) -> int:
        """Queue `fn(job)`; returns its id. `exclusive`: every other lane's pending job is
        dropped and its running one made stale too."""
        with self._cond:
            self._next += 1
            if exclusive:
                self._pending.clear()
                self._latest = dict.fromkeys(self._latest, self._next)
            if not self.closed:
                self._pending.pop(lane, None)
                self._pending[lane] = Job(self._next, lane, fn, data, self)
            self._latest[lane] = self._next
            self._cond.notify_all()
            return self._next

    def supersede(self, lane: Hashable = None) -> int:
        """A new id with nothing to run: what is pending or running in `lane` is stale."""
        with self._cond:
            self._next += 1
            self._pending.pop(lane, None)
            self._latest[lane] = self._next
            self._cond.notify_all()
            return self._next

    def cancel(self, rid: int | None = None) -> int | None:
        """Cancel job `rid` (default: the one running): a pending one ends as "cancelled"
        without running, a running one sees `cancelled()` turn true. Its id, or None if
        neither."""
        with self._cond:
            running = self._running
            if rid is None and running is not None:
                rid = running.id
            for lane, job in list(self._pending.items()):
                if job.id == rid:
                    del self._pending[lane]
                    self.post("cancelled", job, None)
                    return rid
            if running is None or running.id != rid:
                return None
            self._cancelled.add(rid)
            self._cond.notify_all()
            return rid

    @property
    def running(self) -> Job | None:
        with self._cond:
            return self._running

    def is_stale(self, job: Job) -> bool:
        """Superseded by a newer request in its lane, or the queue closed."""
        with self._cond:
            return self.closed or self._latest.get(job.lane) != job.id

    def is_cancelled(self, job: Job) -> bool:
        """Stale, or cancelled by `cancel`."""
        with self._cond:
            return self.closed or self._latest.get(job.lane) != job.id or job.id in self._cancelled

    def wait_cancelled(self, job: Job, seconds: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.is_cancelled(job), seconds)

    def forget(self, job: Job) -> None:
        """`job`'s outcome was handled: its lane is forgotten unless newer work is there (keeps
        a queue whose lanes are keys from growing)."""
        with self._cond:
            if self._latest.get(job.lane) == job.id and job.lane not in self._pending:
                del self._latest[job.lane]

    def close(self) -> None:
        """Stop: drop what is pending, cancel what runs; `serve` returns after it."""
        with self._cond:
            self.closed = True
            self._pending.clear()
            self._cond.notify_all()

    def serve(self, idle: Callable[[], None] = lambda: None) -> None:
        """Run jobs until closed (the worker thread's body). `idle()` runs when the queue
        empties after a job."""
        ran = False
        while True:
            with self._cond:
                quiet = ran and not self._pending and not self.closed
            if quiet:
                idle()
                ran = False
            with self._cond:
                while not self.closed and not self._pending:
                    self._cond.wait()
                if self.closed:
                    return
                lanes = self._pending
                first = next(iter(lanes))
                lane = next((k for k in self.order if k in lanes), first) if self.order else first
                job = self._running = lanes.pop(lane)
            try:
                kind, payload = "done", job.fn(job)
            except Cancelled:
                kind, payload = "cancelled", None
            except Exception as exc:  # a failing job must not end the thread
                kind, payload = "failed", exc
            finally:
                with self._cond:
                    self._running = None
                    self._cancelled.discard(job.id)
            ran = True
            # a superseded job's cancel or failure is news to no one: not posting it spares the
            # UI thread a wake-up per change (the superseded backend comparison ends so each time).
            # A stale result still goes (the worker counts what it computed in vain).
            if kind == "done" or not self.is_stale(job):
                self.post(kind, job, payload)
            # not held while this thread waits for the next job: the job's closure (a frame of
            # the zoomed detail, ~800 MiB at S=4096) and its result go with their handling
            job = payload = None
