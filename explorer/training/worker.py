"""The training thread: one Trainer, stepped in chunks of ~80 ms, each chunk followed by a probe.

The UI thread never touches the Trainer. It posts commands (a new run, play until a step,
step n, pause, save) and receives a `Progress` after every chunk: the new step records, the
probe batch's attention now, and whether that probe is a timeline snapshot (every N steps).
So the display updates ~12 times a second however fast a step is, and a chunk of steps costs
one probe (1–2 ms) rather than one per step.

Training runs on one torch thread (`Trainer(threads=1)`): the issue-17 prototype measured
two threads 1.4× faster on an idle 2-core machine but 4–20× slower when the GUI needs a core.
`torch.set_num_threads` is process-wide, so while a chunk runs other engine work in the
process (the window's compute worker) runs on one thread too.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass

from PySide6.QtCore import QThread, Signal

from engine.training import CircuitCheck, ProbeSnapshot, TrainConfig, Trainer, TrainStep

from ..worker import stop_at_exit

#: wall time of one chunk of steps (a Progress, i.e. a display update, follows each)
CHUNK_S = 0.08


@dataclass(eq=False)
class Progress:
    """What one chunk produced. ``steps``: the new records (may be empty: a new run's first
    probe); ``probe``: the probe batch after them; ``snapshot``: the probe is a timeline
    snapshot (its step is a multiple of the snapshot interval, or 0); ``stopped``: the worker
    is idle after this chunk (target reached or paused), ``circuit`` then says which circuit
    the run has; ``reached``: the play/step target was reached."""

    run_id: int
    steps: list[TrainStep]
    probe: ProbeSnapshot
    snapshot: bool
    stopped: bool
    reached: bool
    circuit: CircuitCheck | None
    chunk_s: float


class TrainingWorker(QThread):
    """See the module docstring. Signals arrive queued in the UI thread."""

    progressed = Signal(object)  # Progress
    failed = Signal(int, str)  # run id, message
    saved = Signal(int, str, str)  # run id, folder, error ("" when saved)

    def __init__(self, threads: int | None = 1, parent=None) -> None:
        super().__init__(parent)
        self.threads = threads
        self._cond = threading.Condition()
        self._commands: deque = deque()
        self._stop = False
        self._playing = False
        self._target = 0
        self._every = 25
        self._trainer: Trainer | None = None
        self._run_id = 0
        self._step_s = 0.02  # running estimate of one step's wall time
        stop_at_exit(self)

    # ---- the UI thread's side --------------------------------------------------------------
    def _post(self, *command) -> None:
        with self._cond:
            self._commands.append(command)
            self._cond.notify()
        if not self.isRunning() and not self._stop:
            self.start()

    def new_run(self, run_id: int, config: TrainConfig) -> None:
        """Replace the trainer by a fresh one for ``config`` (its step-0 probe follows)."""
        self._post("new", run_id, config)

    def play(self, target: int) -> None:
        """Train until the run has ``target`` steps."""
        self._post("play", target)

    def step(self, n: int) -> None:
        """Train ``n`` more steps."""
        self._post("step", n)

    def pause(self) -> None:
        """Stop after the chunk now running (pending play and step requests are dropped)."""
        with self._cond:
            self._playing = False
            self._commands = deque(c for c in self._commands if c[0] not in ("play", "step"))
            self._cond.notify()

    def save(self, folder: str) -> None:
        self._post("save", folder)

    def set_snapshot_every(self, n: int) -> None:
        with self._cond:
            self._every = max(1, int(n))

    @property
    def idle(self) -> bool:
        """Not training, and no play or step request waiting."""
        with self._cond:
            return not self._busy() and not any(c[0] in ("play", "step") for c in self._commands)

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent; a running chunk finishes first)."""
        with self._cond:
            self._stop = True
            self._playing = False
            self._commands.clear()
            self._cond.notify()
        if self.isRunning():
            self.wait(60_000)

    # ---- the thread --------------------------------------------------------------------------
    def _busy(self) -> bool:
        tr = self._trainer
        return self._playing and tr is not None and tr.steps_done < self._target

    def run(self) -> None:
        while True:
            with self._cond:
                while not self._stop and not self._commands and not self._busy():
                    self._cond.wait()
                if self._stop:
                    return
                command = self._commands.popleft() if self._commands else None
            try:
                if command is None:
                    self._chunk()
                else:
                    self._handle(command)
            except Exception as exc:  # a bug must not kill the thread or the window
                with self._cond:
                    self._playing = False
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                self.failed.emit(self._run_id, detail)

    def _handle(self, command: tuple) -> None:
        kind = command[0]
        if kind == "new":
            _, run_id, config = command
            with self._cond:
                self._playing = False
            self._trainer = Trainer(config, threads=self.threads)
            self._run_id = run_id
            self.progressed.emit(Progress(run_id, [], self._trainer.probe(), True, False, False, None, 0.0))
        elif kind in ("play", "step"):
            if self._trainer is None:
                return
            with self._cond:
                self._target = command[1] if kind == "play" else self._trainer.steps_done + command[1]
                self._playing = self._trainer.steps_done < self._target
        elif kind == "save":
            folder = command[1]
            if self._trainer is None:
                self.saved.emit(self._run_id, folder, "nothing has been trained")
                return
            try:
                self._trainer.save(folder)
            except Exception as exc:
                self.saved.emit(self._run_id, folder, str(exc))
                return
            self.saved.emit(self._run_id, folder, "")

    def _chunk(self) -> None:
        tr = self._trainer
        with self._cond:
            target, every = self._target, self._every
        done = tr.steps_done
        k = max(1, min(target - done, round(CHUNK_S / max(self._step_s, 1e-4))))
        k = min(k, every - done % every)  # end on the next snapshot step
        t0 = time.perf_counter()
        steps = tr.step(k)
        self._step_s = 0.7 * self._step_s + 0.3 * (time.perf_counter() - t0) / k
        probe = tr.probe()
        reached = tr.steps_done >= target
        with self._cond:
            if reached:
                self._playing = False
            stopped = not self._busy() and not any(c[0] in ("play", "step") for c in self._commands)
        circuit = tr.check_circuit() if stopped else None
        self.progressed.emit(Progress(self._run_id, steps, probe, tr.steps_done % every == 0, stopped,
                                      reached, circuit, time.perf_counter() - t0))
