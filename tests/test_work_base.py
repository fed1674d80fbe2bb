"""The one latest-wins worker (explorer/work/base.py, its Qt-free core explorer/work/jobs.py):
latest wins, cancel, progress in order, a failure in one line, stop within 1.5 s. Nothing
here sleeps to wait: the tests wait for signals and events."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from explorer.work.base import Cancelled, Worker, WorkerThread
from explorer.work.jobs import Job, JobQueue, one_line

TIMEOUT = 10_000


@pytest.fixture
def worker():
    w = Worker()
    outcomes: list[tuple] = []
    w.done.connect(lambda rid, result: outcomes.append(("done", rid, result)))
    w.failed.connect(lambda rid, message: outcomes.append(("failed", rid, message)))
    w.cancelled.connect(lambda rid: outcomes.append(("cancelled", rid)))
    w.progress.connect(lambda rid, done, total: outcomes.append(("progress", rid, done, total)))
    w.outcomes = outcomes
    yield w
    w.stop()


def blocking_job(started: threading.Event, release: threading.Event, result):
    """A job that says it started, then waits (in the worker thread) to be released."""
    def job(_job):
        started.set()
        assert release.wait(TIMEOUT / 1000)
        return result
    return job


def test_a_superseded_request_is_never_delivered(qtbot, worker):
    started, release = threading.Event(), threading.Event()
    first = worker.submit(blocking_job(started, release, "first"))
    assert started.wait(TIMEOUT / 1000)
    pending = worker.submit(lambda _job: "pending")  # replaced before it ever runs
    last = worker.submit(lambda _job: "last")
    release.set()  # the first finishes now, after the newer requests
    with qtbot.waitSignal(worker.done, timeout=TIMEOUT, check_params_cb=lambda rid, _r: rid == last):
        pass
    assert worker.outcomes == [("done", last, "last")]
    assert worker.dropped == 1 and first < pending < last


def test_lanes_run_in_order_and_an_exclusive_request_clears_the_others(qtbot):
    class Ordered(Worker):
        ORDER = ("load", "inspect", "delete")

    w = Ordered()
    try:
        seen = []
        w.done.connect(lambda rid, result: seen.append(result))
        started, release = threading.Event(), threading.Event()
        w.submit(blocking_job(started, release, "busy"), "delete")
        assert started.wait(TIMEOUT / 1000)
        w.submit(lambda _j: "delete", "delete")
        w.submit(lambda _j: "inspect", "inspect")
        w.submit(lambda _j: "load", "load")
        release.set()
        with qtbot.waitSignal(w.done, timeout=TIMEOUT, check_params_cb=lambda _rid, r: r == "delete"):
            pass
        assert seen == ["load", "inspect", "delete"]  # "busy" was superseded by the newer "delete"
        started.clear()
        release.clear()
        w.submit(blocking_job(started, release, "old inspect"), "inspect")
        assert started.wait(TIMEOUT / 1000)
        w.submit(lambda _j: "dropped delete", "delete")
        load = w.submit(lambda _j: "new model", "load", exclusive=True)
        release.set()
        with qtbot.waitSignal(w.done, timeout=TIMEOUT, check_params_cb=lambda rid, _r: rid == load):
            pass
        assert seen[3:] == ["new model"]
    finally:
        w.stop()


def test_cancel_stops_a_running_job_and_a_pending_one_never_runs(qtbot, worker):
    started = threading.Event()

    def until_cancelled(job):
        started.set()
        if job.wait(TIMEOUT / 1000):
            raise Cancelled
        return "not cancelled"

    running = worker.submit(until_cancelled, "a")
    assert started.wait(TIMEOUT / 1000)
    pending = worker.submit(lambda _job: "never", "b")
    assert worker.cancel(pending) == pending
    assert worker.cancel() == running  # the running one
    with qtbot.waitSignal(worker.cancelled, timeout=TIMEOUT, check_params_cb=lambda rid: rid == running):
        pass
    assert worker.outcomes == [("cancelled", pending), ("cancelled", running)]  # the pending one never ran
    assert worker.cancel() is None  # nothing under way


def test_progress_arrives_in_order_before_the_result(qtbot, worker):
    def counting(job):
        for i in range(6):
            job.progress(i, 5)
        return "counted"

    rid = worker.submit(counting)
    with qtbot.waitSignal(worker.done, timeout=TIMEOUT):
        pass
    assert worker.outcomes == [("progress", rid, float(i), 5.0) for i in range(6)] + [("done", rid, "counted")]


def test_an_exception_becomes_a_failure_in_one_line(qtbot, worker):
    def broken(_job):
        raise ValueError("the engine refused it\nand a second line nobody needs")

    rid = worker.submit(broken)
    with qtbot.waitSignal(worker.failed, timeout=TIMEOUT):
        pass
    assert worker.outcomes == [("failed", rid, "ValueError: the engine refused it")]
    assert one_line(KeyError()) == "KeyError"
    # the thread lives on
    with qtbot.waitSignal(worker.done, timeout=TIMEOUT):
        worker.submit(lambda _job: "still here")


def test_stop_returns_within_1_5_s_while_a_job_runs(qtbot, worker):
    started = threading.Event()

    def long_job(job):  # minutes of blocks, checking between them
        started.set()
        for block in range(100_000):
            job.progress(block, 100_000)
            job.wait(0.01)
        return "finished"

    worker.submit(long_job)
    assert started.wait(TIMEOUT / 1000)
    t0 = time.perf_counter()
    worker.stop()
    assert time.perf_counter() - t0 < 1.5 and not worker.isRunning()
    qtbot.wait(50)  # what it posted meanwhile is dropped, and nothing new starts
    assert not any(o[0] == "done" for o in worker.outcomes)
    worker.submit(lambda _job: "after stop")
    assert not worker.isRunning()


def test_the_core_runs_without_qt():
    """JobQueue in a plain thread, its outcomes posted in order; the module imports no Qt."""
    posted, finished = [], threading.Event()

    def post(kind, job, payload):
        posted.append((kind, job.id, payload))
        if kind != "progress" and job.data == "last":
            finished.set()

    queue = JobQueue(post)
    thread = threading.Thread(target=queue.serve, daemon=True)
    thread.start()
    try:
        def stepping(job):
            job.progress(1, 2)
            return "result"

        a = queue.submit(stepping, data="last")
        assert finished.wait(TIMEOUT / 1000)
        assert posted == [("progress", a, (1, 2, None)), ("done", a, "result")]
        job = Job(a, None, stepping, "last", queue)
        assert not queue.is_stale(job)
        queue.supersede()
        assert queue.is_stale(job) and job.cancelled()
    finally:
        queue.close()
        thread.join(TIMEOUT / 1000)
    assert not thread.is_alive()
    source = Path(__file__).resolve().parents[1] / "explorer" / "work" / "jobs.py"
    modules = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split(".")[0])
    assert modules <= {"__future__", "threading", "time", "collections", "typing"}, modules


def test_a_superseded_jobs_cancel_or_failure_wakes_no_one_but_its_stale_result_is_counted():
    """Each slider change supersedes the backend comparison: its end must not wake the UI thread."""
    posted, ended = [], threading.Event()

    def post(kind, job, payload):
        posted.append((kind, job.data))
        if job.data == "last":
            ended.set()

    def held(outcome, started, release):
        def job(_j):
            started.set()
            assert release.wait(TIMEOUT / 1000)
            if outcome == "cancelled":
                raise Cancelled
            if outcome == "failed":
                raise RuntimeError("boom")
            return outcome
        return job

    queue = JobQueue(post)
    thread = threading.Thread(target=queue.serve, daemon=True)
    thread.start()
    try:
        for outcome in ("cancelled", "failed", "done"):
            started, release = threading.Event(), threading.Event()
            queue.submit(held(outcome, started, release), data=outcome)
            assert started.wait(TIMEOUT / 1000)
            queue.supersede()  # a newer change: the running job is stale before it ends
            release.set()
        queue.submit(lambda _j: "fresh", data="last")
        assert ended.wait(TIMEOUT / 1000)
    finally:
        queue.close()
        thread.join(TIMEOUT / 1000)
    assert posted == [("done", "done"), ("done", "last")]
    # a job cancelled or failing while still the latest is reported as before
    posted.clear()
    ended.clear()
    queue = JobQueue(post)
    release = threading.Event()
    release.set()
    queue.submit(held("failed", threading.Event(), release), data="x")
    thread = threading.Thread(target=queue.serve, daemon=True)
    thread.start()
    try:
        queue.submit(lambda _j: 1, lane="other", data="last")
        assert ended.wait(TIMEOUT / 1000)
    finally:
        queue.close()
        thread.join(TIMEOUT / 1000)
    assert posted[0] == ("failed", "x")


def test_a_reporter_posts_a_quick_jobs_progress_not_at_all_and_a_slow_ones_paced():
    """Job.reporter(every_s): the progress of a job quicker than every_s never leaves its thread;
    a slow one's arrives about every every_s; a cancel is seen at the next report regardless."""
    posted = []
    queue = JobQueue(lambda kind, job, payload: posted.append((kind, payload)))
    job = Job(queue.submit(lambda _j: None), None, None, None, queue)
    quick = job.reporter(0.05)
    for i in range(10):
        quick(i, 10)
    assert posted == []
    slow = job.reporter(0.02)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.21:
        slow(time.monotonic() - t0, 0.21)
        time.sleep(0.002)
    assert 5 <= len(posted) <= 11, posted
    assert [p[1][0] for p in posted] == sorted(p[1][0] for p in posted)
    queue.supersede()
    with pytest.raises(Cancelled):
        quick(10, 10)


def test_check_posts_nothing_and_raises_once_cancelled():
    """Job.check: the progress callback of a job no one watches (a snapshot's frame): the
    cancel check alone."""
    posted = []
    queue = JobQueue(lambda kind, job, payload: posted.append((kind, payload)))
    job = Job(queue.submit(lambda _j: None), None, None, None, queue)
    for i in range(10):
        job.check(i, 10)
    assert posted == []
    queue.supersede()
    with pytest.raises(Cancelled):
        job.check(10, 10)


@pytest.fixture
def earlier_work_ended(qtbot):
    """Automatic collection back on before the test: every worker holds the collector while its
    thread lives, so the workers earlier tests left running (a window left open, a panel's
    worker) are stopped first; a thread an earlier test stopped releases it when the UI thread
    handles its `finished` (the event loop runs meanwhile)."""
    import gc
    import warnings

    from explorer.training.worker import TrainingWorker

    gc.unfreeze()  # (a window's start-up objects, its workers among them, are frozen: explorer/__init__.py)
    with warnings.catch_warnings():  # (isinstance on torch's deprecated module attributes warns)
        warnings.simplefilter("ignore")
        workers = [obj for obj in gc.get_objects() if isinstance(obj, (WorkerThread, TrainingWorker))]
    for obj in workers:
        try:
            obj.stop()
        except RuntimeError:  # its C++ side is already gone
            pass
    qtbot.waitUntil(gc.isenabled, timeout=30_000)


@pytest.mark.parametrize("started", ["by its first job", "at once, idle until its first job"])
def test_garbage_is_collected_in_the_ui_thread_only_while_a_worker_runs(qtbot, earlier_work_ended, worker,
                                                                        started):
    """A worker thread that allocates reference cycles never runs the cyclic collector itself
    (a collection there would run Qt destructors of dropped panels outside the UI thread: a
    native crash); the UI thread collects on a timer meanwhile, and automatic collection is
    back once the worker has stopped."""
    import gc

    threads: list[int] = []

    def note(phase, _info):
        if phase == "start":
            threads.append(threading.get_ident())

    def churn(_job):  # ~200k cycles: CPython alone would collect in this thread ~300 times
        for _ in range(200_000):
            a: list = []
            a.append(a)
        return "churned"

    gc.callbacks.append(note)
    try:
        if started != "by its first job":  # as the window's and the model controller's workers
            worker.start()
        with qtbot.waitSignal(worker.done, timeout=TIMEOUT):
            worker.submit(churn)
        assert not gc.isenabled()  # the worker thread still runs (waiting for jobs)
        qtbot.waitUntil(lambda: threading.main_thread().ident in threads, timeout=TIMEOUT)
    finally:
        gc.callbacks.remove(note)
    assert set(threads) == {threading.main_thread().ident}
    worker.stop()
    assert gc.isenabled()


def test_outcomes_arrive_in_the_ui_thread_in_the_order_posted(qtbot, worker):
    """Progress posted from the worker thread reaches the UI thread's hooks in order, and
    the result after the last progress."""
    seen: list[tuple] = []
    worker.progress.connect(lambda _rid, done, _total: seen.append((done, threading.get_ident())))

    def chatty(job):
        for i in range(500):
            job.progress(i, 500)
        return "end"

    with qtbot.waitSignal(worker.done, timeout=TIMEOUT):
        worker.submit(chatty)
    dones = [d for d, _t in seen]
    assert dones == sorted(dones) and {t for _d, t in seen} == {threading.main_thread().ident}
    assert worker.outcomes[-1][0] == "done"


def test_the_ui_thread_collects_everything_only_when_the_heap_grew(earlier_work_ended):
    """While a worker runs, the UI thread's timer does a full collection (a walk over every
    object: 0.6 s in a large process, a visible stall) only as CPython would: once the heap
    grew by a quarter since the last, not each time the youngest generations overflow."""
    import gc
    import sys

    from explorer.work import collector

    def full_collections() -> int:
        return gc.get_stats()[2]["collections"]

    collector.hold()
    try:
        for _ in range(12):  # generation 2 is due by CPython's counts ...
            gc.collect(1)
        for _ in range(11):  # ... and so is generation 1
            gc.collect(0)
        _kept = [[] for _ in range(1000)]  # and generation 0
        before = full_collections()
        collector.collect_due()
        assert full_collections() == before, "a full collection without the heap growing"
        assert gc.get_count()[1] == 0  # the younger generations were collected

        _grown = [bytes(8) for _ in range(int(0.3 * sys.getallocatedblocks()) + 1000)]
        collector.collect_due()
        assert full_collections() == before + 1
    finally:
        collector.release()
    assert gc.isenabled()


def test_a_step_through_job_superseded_mid_run_stops_at_its_next_check(qtbot):
    """issue 44: Reset after a long frame kept ~100–535 MB while the efficient panel's
    forward of the old config ran on in its StepWorker; a cancellable job gets the
    worker's check and a newer request stops it at the engine's next piece."""
    from explorer.work.steps import ResultCache, StepWorker

    worker = StepWorker(ResultCache())
    shown: list = []
    worker.done.connect(lambda key, result: shown.append((key, result)))
    started, stopped = threading.Event(), threading.Event()

    def long_job(check):  # an engine run: a check between pieces, until cancelled
        started.set()
        try:
            for _ in range(TIMEOUT // 10):
                check(0, 1)
                time.sleep(0.01)
        except Cancelled:
            stopped.set()
            raise
        return "old"

    try:
        worker.request("old", long_job, cancellable=True)
        assert started.wait(TIMEOUT / 1000)
        worker.request("new", lambda check: "new", cancellable=True)
        qtbot.waitUntil(lambda: shown == [("new", "new")], timeout=TIMEOUT)
        assert stopped.is_set() and worker.cache.get("old") is None
    finally:
        worker.stop()
