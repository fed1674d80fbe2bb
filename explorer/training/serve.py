"""The training loop the window's lab drives, Qt-free: it runs in a child process.

`serve(commands, results, threads)` owns one Trainer and answers commands read from
`commands` (a multiprocessing Connection) with messages on `results`:

    ("new", run_id, config)      a fresh Trainer; answered by its step-0 Progress
    ("play", seq, target)        train until the run has `target` steps
    ("step", seq, n)             train n more steps
    ("pause", seq)               stop after the chunk now running
    ("every", n)                 the timeline's snapshot interval
    ("save", folder)             Trainer.save; answered by ("saved", run_id, folder, error)
    ("stop",)                    end the loop

While training it runs chunks of up to 70 ms of steps, each answered by ("progress", Progress):
the new step records and (at most every PROBE_S) one probe, so the window updates ~12 times a second whatever a
step costs. A process rather than a thread of the window: the GUI's drawing is Python
(pyqtgraph), and a training thread that must take the GIL back after every torch call ran
at 40 % of its bare speed beside a 10 Hz display (measured here); in its own process it
runs on its own core.

The process is started in a session of its own (`engine.child.ChildProcess(...,
own_session=True)`): where the kernel shares the CPU between sessions before threads
(Linux's autogroup, on by default in desktop kernels) a child of the window's session would
split one share with the window: every millisecond of drawing came out of the training
(measured on the 2-core machine beside three other busy sessions: the window drawing at
~25 % of a core and the training at ~30 %, their sum the session's ~55 %). In its own
session the training has its own share, as a script started beside the window would.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

from engine.training import CircuitCheck, ProbeSnapshot, RunFolderError, Trainer, TrainStep

#: the most wall time of one chunk of steps (a Progress, i.e. a display update, follows
#: each): under it, so that updates come ≥ 12 times a second with the probe's cost added
CHUNK_S = 0.07
#: the least time between two probes while training: a step of the default model takes
#: 30–50 ms on a busy 2-core machine, so a chunk is often one or two steps, and a probe
#: (~5 ms) after each cost the training 10–15 %; the heads redraw at most ~11 Hz anyway.
#: Timeline snapshots, the first message of a run and the one that stops always carry one.
PROBE_S = 0.09


@dataclass(eq=False)
class Progress:
    """What one chunk produced. ``steps``: the new records (empty for a new run's first
    probe or a pause); ``probe``: the probe batch after them, or None when the last one is
    less than PROBE_S old (never for a snapshot or a stop); ``snapshot``: the probe is a
    timeline snapshot (its step is a multiple of the snapshot interval, or 0); ``stopped``:
    the loop is idle after this message (target reached or paused), ``circuit`` then says
    which circuit the run has; ``reached``: the play/step target was reached; ``seq``: the
    latest play/step/pause request handled (a newer one may be on its way)."""

    run_id: int
    steps: list[TrainStep]
    probe: ProbeSnapshot | None
    snapshot: bool
    stopped: bool
    reached: bool
    circuit: CircuitCheck | None
    seq: int
    chunk_s: float


class _Loop:
    def __init__(self, commands, results, threads: int | None) -> None:
        self.commands, self.results, self.threads = commands, results, threads
        self.trainer: Trainer | None = None
        self.run_id = 0
        self.playing = False
        self.target = 0
        self.every = 25
        self.seq = 0
        self.step_s = 0.02  # running estimate of one step's wall time
        self.probed_at = float("-inf")  # when the last probe was sent (perf_counter)

    def busy(self) -> bool:
        return self.playing and self.trainer is not None and self.trainer.steps_done < self.target

    def run(self) -> None:
        while True:
            if self.busy():
                while self.commands.poll():
                    if not self.handle(self.commands.recv()):
                        return
                if self.busy():
                    self.chunk()
                continue
            try:
                command = self.commands.recv()
            except (EOFError, OSError):
                return
            if not self.handle(command):
                return

    def send(self, *message) -> None:
        self.results.send(message)

    def progress(self, steps, snapshot: bool, stopped: bool, reached: bool, chunk_s: float = 0.0) -> None:
        tr = self.trainer
        circuit = tr.check_circuit() if stopped and tr.steps_done else None
        now = time.perf_counter()
        probe = None
        if snapshot or stopped or not steps or now - self.probed_at >= PROBE_S:
            probe, self.probed_at = tr.probe(), now
        self.send("progress", Progress(self.run_id, steps, probe, snapshot, stopped, reached, circuit,
                                       self.seq, chunk_s))

    def handle(self, command: tuple) -> bool:
        kind = command[0]
        try:
            if kind == "stop":
                return False
            if kind == "new":
                _, self.run_id, config = command
                self.playing = False
                self.trainer = Trainer(config, threads=self.threads)
                self.progress([], True, False, False)
            elif kind in ("play", "step"):
                self.seq = command[1]
                if self.trainer is not None:
                    done = self.trainer.steps_done
                    self.target = command[2] if kind == "play" else done + command[2]
                    self.playing = done < self.target
                    if not self.playing:
                        self.progress([], False, True, True)
            elif kind == "pause":
                self.seq = command[1]
                was = self.playing
                self.playing = False
                if was and self.trainer is not None:
                    self.progress([], False, True, False)
            elif kind == "every":
                self.every = max(1, int(command[1]))
            elif kind == "save":
                folder = command[1]
                if self.trainer is None:
                    self.send("saved", self.run_id, folder, "nothing has been trained")
                else:
                    self.trainer.save(folder)
                    self.send("saved", self.run_id, folder, "")
        except Exception as exc:  # a bug or a refusal must not end the loop
            self.playing = False
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            if isinstance(exc, RunFolderError):
                detail = str(exc)  # it names the folder and why (no permission, disk full)
            if kind == "save":
                self.send("saved", self.run_id, command[1], detail)
            else:
                self.send("failed", self.run_id, detail)
        return True

    def chunk(self) -> None:
        tr = self.trainer
        done = tr.steps_done
        k = max(1, min(self.target - done, int(CHUNK_S / max(self.step_s, 1e-4))))
        k = min(k, self.every - done % self.every)  # end on the next snapshot step
        t0 = time.perf_counter()
        try:
            steps = tr.step(k)
        except Exception as exc:
            self.playing = False
            self.send("failed", self.run_id, traceback.format_exception_only(type(exc), exc)[-1].strip())
            return
        self.step_s = 0.7 * self.step_s + 0.3 * (time.perf_counter() - t0) / k
        reached = tr.steps_done >= self.target
        if reached:
            self.playing = False
        stopped = not self.busy() and not self.commands.poll()
        self.progress(steps, tr.steps_done % self.every == 0, stopped, reached, time.perf_counter() - t0)


def serve(commands, results, threads: int | None = 1) -> None:
    """The loop (see the module docstring); returns on ("stop",) or when `commands` closes."""
    try:
        _Loop(commands, results, threads).run()
    finally:
        results.close()
