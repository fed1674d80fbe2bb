"""The app's one child-process runner (engine/child.py) and the export threads behind the
worker base (explorer/work/base.py `TaskWorker`), issue 44: a training process ends with a
killed window as the profile's does, and quitting during an export leaves no thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.child import ChildProcess
from engine.training import TrainConfig
from explorer.training.serve import serve

ROOT = Path(__file__).resolve().parents[1]
TINY = TrainConfig(task="copy", n_layers=1, n_heads=1, d_model=16, seq_len=8, vocab=8)


def _first_progress(child: ChildProcess):
    child.send(("new", 7, TINY))
    reply = child.wait(timeout_s=120)
    assert reply is not None, f"the training process did not answer: {child.why_ended(0)}"
    return reply


def test_the_training_process_answers_in_a_session_of_its_own_and_stops():
    child = ChildProcess(serve, 1, name="attention-explorer-training", own_session=True)
    try:
        kind, progress = _first_progress(child)
        assert kind == "progress" and progress.run_id == 7 and progress.probe is not None
        assert os.getsid(child.pid) == child.pid != os.getsid(0)
    finally:
        child.close()
    assert not child.alive() and child.why_ended() == "exit status 0"


def test_a_killed_child_says_so():
    child = ChildProcess(serve, 1, name="attention-explorer-training")
    try:
        _first_progress(child)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout_s=10) is None  # the pipe ends with it
        assert child.why_ended() == "killed by SIGKILL: out of memory?"
    finally:
        child.close()


_ORPHAN_PARENT = """
import sys
from engine.child import ChildProcess
from engine.training import TrainConfig
from explorer.training.serve import serve

child = ChildProcess(serve, 1, name="attention-explorer-training", own_session=True)
child.send(("new", 1, TrainConfig(task="copy", n_layers=1, n_heads=1, d_model=16, seq_len=8, vocab=8)))
child.wait(timeout_s=120)
child.send(("play", 1, 10**9))  # trains until stopped
print(child.pid, flush=True)
sys.stdin.read()  # waits to be killed
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and /proc")
def test_the_training_process_ends_when_the_window_is_killed():
    """The training child had no parent-death rule of its own; the runner gives it the
    profile's (a process training on after the window was killed held a core)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN_PARENT], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=str(ROOT), env=env)
    try:
        pid = int(parent.stdout.readline())
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]:
            assert time.monotonic() < deadline, "the training process outlived its parent"
            time.sleep(0.1)
    finally:
        if parent.poll() is None:
            parent.kill()


# ---- TaskWorker: the export threads ---------------------------------------------------------


def test_tasks_run_in_order_and_stop_cancels_the_rest(qapp):
    from explorer.work.base import Cancelled, TaskWorker

    worker = TaskWorker("test-tasks")
    order: list[int] = []
    started = threading.Event()

    def long(job):
        started.set()
        while not job.wait(0.05):
            pass
        job.check()  # raises Cancelled: the worker is stopping

    first = [worker.task(lambda job, i=i: order.append(i)) for i in range(5)]
    running, after = worker.task(long), worker.task(lambda job: order.append(99))
    assert started.wait(30)
    worker.stop()
    assert order == [0, 1, 2, 3, 4] and all(f.done() and f.result() is None for f in first)
    assert isinstance(running.exception(), Cancelled) and after.cancelled()
    assert not worker.isRunning()
    assert worker.task(lambda job: 1).cancelled()  # a stopped worker runs nothing


def test_drain_waits_for_every_task(qapp):
    from explorer.work.base import TaskWorker

    worker = TaskWorker("test-drain")
    futures = [worker.task(lambda job, i=i: (time.sleep(0.02), i)[1]) for i in range(5)]
    assert worker.drain(30)
    assert [f.result() for f in futures] == list(range(5)) and not worker.isRunning()


_QUIT_DURING_EXPORT = r"""
import gc, sys, threading, faulthandler
faulthandler.enable()
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication
app = QApplication([])
import explorer
from explorer.export.animation import AnimationRequest
from explorer.export.animation_dialog import start_animation
from explorer.export.sweep import parse_sweep

w = explorer.create_window()
w.resize(1600, 1000)
w.show()
w.render_sync()
out = sys.argv[1]
req = AnimationRequest(parse_sweep("seq_len=8:64:8"), ("heads", "diagnostics"), "gif", out, width=480)
progress = start_animation(w, req)
while progress.running and progress.job.done < 3:
    app.processEvents()
assert progress.running, "the export ended before the window closed"
w.close()  # quit mid-export
for _ in range(5):
    app.processEvents()
threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
# the export's own threads (the window's workers idle until their panels go, at exit)
qthreads = [o.objectName() for o in gc.get_objects()
            if isinstance(o, QThread) and o.objectName().startswith("sweep-") and o.isRunning()]
print("python threads:", threads, "export threads:", qthreads)
import os
print("files:", sorted(os.listdir(out)))
"""


@pytest.mark.slow
def test_quitting_during_an_animation_export_leaves_no_thread_and_no_file(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ATTN_EXPLORER_SETTINGS": str(tmp_path / "s.ini"),
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run([sys.executable, "-c", _QUIT_DURING_EXPORT, str(out)], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0, f"exit status {run.returncode}:\n{run.stderr[-3000:]}"
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert "python threads: [] export threads: []" in run.stdout, run.stdout
    assert "files: []" in run.stdout, run.stdout
