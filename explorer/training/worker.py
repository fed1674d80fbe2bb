"""The window's side of the training loop: a child process trains, a QThread relays.

`TrainingWorker` starts `serve.serve` in a child process (engine/child.py, the app's one
child-process runner: a fresh interpreter, no Qt in it, in a session of its own, ending
with the window) and a QThread that reads the child's messages and posts them to a
`Mailbox` (explorer/work/mailbox.py), whose delivery in the UI thread emits them as signals. The UI thread only ever sends commands, so
neither the training nor the drawing waits for the other: a 10 Hz display costs the
training nothing on a 2-core machine (see serve.py for the measurement that chose a
process over a thread).

Training runs on one torch thread (`Trainer(threads=1)`): the issue-17 prototype measured
two threads 1.4× faster on an idle 2-core machine but 4–20× slower when the GUI needs a core.

Where a child process cannot be started the same loop runs in a thread of this process
("thread" mode): a frozen app whose entry point did not call main.freeze_support (which
sets ATTN_EXPLORER_FREEZE_SUPPORT), ATTN_EXPLORER_TRAINING=thread, or a child that fails
to start or dies before its first answer (the commands sent so far are replayed to the
thread); it is correct, only slower beside the display.

Why the relay is not a `WorkerThread` (explorer/work/base.py): it runs no jobs. It has no
requests to supersede (every command goes to the child, in order, and the child's own
sequence numbers tell a stale "stopped" from a real one), every message it relays must
arrive (none is stale: the runs' histories are built from them), and it blocks in
`recv()` on the child's pipe, ending when the pipe closes, so there is no `cancelled()` to
poll. Forced into the base it would be one never-ending job whose results bypass the
base's dropping. What it shares is the stop at interpreter exit (`stop_at_exit`).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading

from PySide6.QtCore import QThread, Signal

from engine.child import ChildProcess
from engine.training import TrainConfig

from ..work import collector
from ..work.base import stop_at_exit
from ..work.mailbox import Mailbox
from .serve import Progress, serve

__all__ = ["Progress", "TrainingWorker", "default_mode"]


def default_mode() -> str:
    """"process", or "thread" where a child process would not work (a frozen app whose
    main did not call freeze_support: its executable would start the GUI again) or
    ATTN_EXPLORER_TRAINING says so."""
    asked = os.environ.get("ATTN_EXPLORER_TRAINING", "").strip().lower()
    if asked in ("thread", "process"):
        return asked
    frozen = getattr(sys, "frozen", False)
    return "thread" if frozen and os.environ.get("ATTN_EXPLORER_FREEZE_SUPPORT") != "1" else "process"


class TrainingWorker(QThread):
    """See the module docstring. Signals are emitted in the UI thread."""

    progressed = Signal(object)  # serve.Progress
    failed = Signal(int, str)  # run id, message
    saved = Signal(int, str, str)  # run id, folder, error ("" when saved)
    #: the child ended while training (killed: the kernel's OOM killer, a SIGTERM): why, in
    #: words; the next command starts a fresh child (its trainer is gone with the old one)
    died = Signal(str)

    def __init__(self, threads: int | None = 1, mode: str | None = None, parent=None) -> None:
        super().__init__(parent)
        self.threads = threads
        self.mode = mode or default_mode()
        self.seq = 0  # the latest play/step/pause request sent
        self._stopped = False
        self._lock = threading.Lock()
        self._child: ChildProcess | None = None
        self._thread = None
        self._commands = None
        self._replay: list[tuple] | None = []  # commands sent before the child's first answer
        self._inbox = Mailbox(self._deliver)  # the child's messages, relayed to the UI thread
        self._held = False  # the collector is held for the relay (explorer/work/collector.py)
        self._relays = 0  # relays started (one per child: a dead child's relay ends)
        stop_at_exit(self)

    # ---- starting ---------------------------------------------------------------------------
    def _ensure_started(self) -> None:
        if self._commands is not None or self._stopped:
            return
        if self.isRunning():  # the relay of a child that died is ending
            self.wait(2000)
        if self.mode == "process":
            try:
                # its own session: see serve.py's note on the CPU share
                self._child = ChildProcess(serve, self.threads, name="attention-explorer-training", own_session=True)
                cmd_w, res_r = self._child.commands, self._child.results
            except (OSError, RuntimeError, ValueError):
                self.mode = "thread"
        if self.mode == "thread":
            cmd_w, res_r = self._start_thread()
        self._commands, self._results = cmd_w, res_r
        if not self._held:
            self._held = True
            collector.hold()
        self._relays += 1
        self.start()

    def _start_thread(self):
        cmd_r, cmd_w = multiprocessing.Pipe(duplex=False)
        res_r, res_w = multiprocessing.Pipe(duplex=False)
        self._thread = threading.Thread(target=serve, args=(cmd_r, res_w, self.threads), daemon=True,
                                        name="attention-explorer-training")
        self._thread.start()
        return cmd_w, res_r

    def _fall_back(self) -> bool:
        """The child ended before its first answer: train in a thread instead, replaying
        what was sent. False when stopping (or already answered)."""
        with self._lock:
            if self._stopped or self._replay is None or self.mode != "process":
                return False
            self.mode = "thread"
            self._child = None  # (it has ended)
            old = self._commands
            cmd_w, self._results = self._start_thread()
            self._commands = cmd_w
            for command in self._replay:
                cmd_w.send(command)
        if old is not None:
            old.close()
        return True

    def run(self) -> None:  # the relay thread
        relay = self._relays
        try:
            self._relay()
        finally:
            self._inbox.post(("ended", relay))

    def _relay(self) -> None:
        while True:
            try:
                message = self._results.recv()
            except (EOFError, OSError):
                if self._fall_back():
                    continue
                reason = self._forget_dead_child()
                if reason:
                    self._inbox.post(("died", reason))
                return
            with self._lock:
                self._replay = None  # it answers: no fallback from here on
            self._inbox.post(message)

    def _deliver(self, message: tuple) -> None:  # the UI thread
        kind = message[0]
        if kind == "progress":
            self.progressed.emit(message[1])
        elif kind == "failed":
            self.failed.emit(message[1], message[2])
        elif kind == "saved":
            self.saved.emit(message[1], message[2], message[3])
        elif kind == "died":
            self.died.emit(message[1])
        elif kind == "ended" and message[1] == self._relays and (not self.isRunning() or self.wait(2000)):
            self._release_collector()  # (not when another relay has started since)

    def _release_collector(self) -> None:
        if self._held:
            self._held = False
            collector.release()

    def _forget_dead_child(self) -> str:
        """After the pipe closed: "" when stopping; else why the child ended, and the worker
        ready to start another on the next command."""
        with self._lock:
            if self._stopped:
                return ""
            child, commands = self._child, self._commands
            self._child, self._commands, self._replay = None, None, []
        if commands is not None:
            commands.close()
        return "ended" if child is None else child.why_ended()

    def _send(self, *command) -> None:
        with self._lock:
            self._ensure_started()
            if self._commands is None:
                return
            if self._replay is not None:
                self._replay.append(command)
            try:
                self._commands.send(command)
            except (OSError, ValueError):  # the loop has ended
                pass

    # ---- commands (from the UI thread) ----------------------------------------------------------
    def new_run(self, run_id: int, config: TrainConfig) -> None:
        """Replace the trainer by a fresh one for ``config`` (its step-0 probe follows)."""
        self._send("new", run_id, config)

    def play(self, target: int) -> None:
        """Train until the run has ``target`` steps."""
        self.seq += 1
        self._send("play", self.seq, int(target))

    def step(self, n: int) -> None:
        """Train ``n`` more steps."""
        self.seq += 1
        self._send("step", self.seq, int(n))

    def pause(self) -> None:
        """Stop after the chunk now running."""
        self.seq += 1
        self._send("pause", self.seq)

    def save(self, folder: str) -> None:
        self._send("save", str(folder))

    def set_snapshot_every(self, n: int) -> None:
        self._send("every", max(1, int(n)))

    def stop(self) -> None:
        """End the loop and the relay, and wait for both (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            commands, self._commands = self._commands, None
            # a child that never answered is still starting (importing torch: seconds on a
            # loaded machine) and holds nothing to keep: ended at once, not waited for
            starting = self._replay is not None
        if commands is None:
            return
        try:
            commands.send(("stop",))
        except (OSError, ValueError):
            pass
        commands.close()
        if self._child is not None:
            # up to 10 s to return, then SIGTERM, then SIGKILL (a starting child: SIGTERM at once)
            self._child.end(kill=starting, wait_s=10)
        if self._thread is not None:
            self._thread.join(10)
        if not self.isRunning() or self.wait(10_000):
            self._release_collector()
