"""The training lab's state: the runs, what is shown of them, and the training thread.

One `TrainingLab` per window (`window.state.training_lab`, made by explorer.training.feature). Every
training panel draws from it: the one in the window and the fresh one an export builds
offscreen (`type(panel)(selection, hover)`), so both show the same run, head and step.
The panel only mirrors the lab; the lab says what changed with `changed(what)`:

- "settings": the settings for the next run or the preset;
- "runs": a run was added, removed, shown or hidden;
- "progress": the current run trained (new steps, a new probe);
- "view": the head, the step replayed (the timeline) or the log scale;
- "state": running / paused / done; "message": the line under the settings.

`saved(folder, error)` follows every *Save run…* (`save_run`; error "" when saved): the
quit question (explorer.training.saving) closes the window once its save is done.

The UI thread never touches a Trainer: the training process behind `TrainingWorker` holds
the current run's, and its `Progress` messages are appended here (`Run.history`,
`Run.snapshots`).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Signal

from engine import ConfigError
from engine.training import CircuitCheck, ProbeSnapshot, TrainConfig, TrainStep, first_reached

from ..i18n import LiveText
from .presets import PRESETS, Preset, PresetRun, Verdict
from .worker import Progress, TrainingWorker

#: one colour per run, in order (readable on the dark and the light theme)
RUN_COLORS = ("#4e9ae8", "#e8604e", "#4ec07a", "#c27ee8", "#e8b04e", "#4ed0d0", "#e87ec0", "#a0a0a0")
#: runs kept for comparison (the oldest are dropped first)
MAX_RUNS = 8


def _tr(text: str) -> str:
    return QCoreApplication.translate("TrainingLab", text)


def _live(text: str, **values) -> LiveText:
    """A message line the lab's panel translates again after a language switch."""
    return LiveText("TrainingLab", text, **values)


@dataclass(eq=False)
class Run:
    """One training run as the window knows it: its step records, its timeline of probe
    snapshots (the first at step 0), the latest probe, and when the induction head formed
    (`milestone`: the first step meeting `engine.training.induction_reached`; `milestone_wall_s`:
    wall seconds of training, pauses left out, until it arrived here)."""

    id: int
    config: TrainConfig
    name: str  # a preset's name for it (English, translated when shown), or ""
    colour: str
    history: list[TrainStep] = field(default_factory=list)
    snapshots: list[ProbeSnapshot] = field(default_factory=list)
    latest: ProbeSnapshot | None = None
    milestone: TrainStep | None = None
    milestone_wall_s: float | None = None
    circuit: CircuitCheck | None = None
    wall_s: float = 0.0
    shown: bool = True  # overlaid on the loss plot
    #: the training process holds its model (the current run until that process dies): only
    #: such a run can be saved, the others keep their curves and snapshots only
    savable: bool = True
    saved_folder: str | None = None  # where *Save run…* last put it
    saved_steps: int | None = None  # its steps then

    @property
    def unsaved(self) -> bool:
        """Trained here, savable, and not saved as it is now."""
        return self.savable and self.steps_done > 0 and self.saved_steps != self.steps_done

    @property
    def steps_done(self) -> int:
        return len(self.history)

    def display_name(self) -> str:
        return _tr(self.name) if self.name else f"#{self.id}"

    def snapshot_at(self, step: int | None) -> ProbeSnapshot | None:
        """The probe at ``step`` (the last snapshot at or before it); None: the latest probe."""
        if step is None or not self.snapshots:
            return self.latest
        best = self.snapshots[0]
        for s in self.snapshots:
            if s.step > step:
                break
            best = s
        return best


class TrainingLab(QObject):
    """See the module docstring."""

    changed = Signal(str)
    saved = Signal(str, str)  # a *Save run…*: folder, error ("" when saved)

    def __init__(self, parent: QObject | None = None, models=None, *, threads: int | None = 1) -> None:
        super().__init__(parent)
        #: the window's model controller (explorer.models.controller), where *Open in
        #: inspector* opens a run; None: no inspector (a lab of its own, the CLI)
        self.models = models
        self.worker = TrainingWorker(threads=threads)
        self.worker.progressed.connect(self._on_progress)
        self.worker.failed.connect(self._on_failed)
        self.worker.saved.connect(self._on_saved)
        self.worker.died.connect(self._on_died)
        first = PRESETS["induction"]
        self.settings: TrainConfig = first.runs[0].config
        self.preset_key: str | None = first.key
        self.runs: list[Run] = []
        self.current: Run | None = None
        self.view_id: int | None = None  # the run whose heads are shown (None: the current one)
        self.selected: tuple[int, int] = (1, 0)  # (layer, head) shown large
        self.scrub_step: int | None = None  # the step replayed; None: live
        self.snapshot_every = 25
        self.step_size = 10
        self.log_scale = False
        self.state = "idle"  # idle, running, paused, done
        self.message: tuple[str, str] = ("", "")  # (text, "error" | "info")
        self._blocking = False  # the message is a refusal: Start and Step wait for new settings
        self._refused = False  # the message is the form's refused setting (refuse)
        self.inspector_folder: str | None = None
        self._inspected: tuple[int, int, str] | None = None  # (run id, steps, folder) in the inspector
        self._saves: dict[str, str] = {}  # folder → "user" | "inspector", saving now
        self.last_save_dir: str | None = None  # where the Save run dialog opens
        self._queue: list[PresetRun] = []
        self._preset_runs: list[Run] = []  # the runs of the preset's latest start
        self._settings_dirty = False  # the settings changed since the current run began
        self._tick: float | None = None
        self._temp_dirs: list[str] = []
        self._next_id = 0
        self._colour = 0

    def ensure_run(self) -> None:
        """Prepare the first run (a panel opening the lab for the first time does this)."""
        if self.current is None:
            self.reset()

    # ---- reading ----------------------------------------------------------------------------
    @property
    def preset(self) -> Preset | None:
        return PRESETS.get(self.preset_key) if self.preset_key else None

    def can_save(self) -> bool:
        """Whether *Save run…* can save the viewed run (the latest, its model still held)."""
        run = self.viewed_run()
        return run is not None and run is self.current and run.savable

    def say_cannot_save(self) -> None:
        self._set_message(_live(QT_TRANSLATE_NOOP("TrainingLab", "Only the latest run can be saved: the earlier "
                                                  "runs keep their curves and heads, not their model.")),
                          "error", blocking=False)

    def viewed_run(self) -> Run | None:
        """The run whose heads, scores and timeline are shown."""
        for run in self.runs:
            if run.id == self.view_id:
                return run
        return self.current

    def shown_settings(self) -> TrainConfig:
        """The settings the form shows: those of the run on screen (a preset's run as it
        begins, a run clicked in the list), or, once changed after the current run began,
        the settings for the next run."""
        run = self.viewed_run()
        return self.settings if run is None or self._settings_dirty else run.config

    def verdict(self) -> Verdict | None:
        """The preset's expectation as trained so far (None without a preset)."""
        p = self.preset
        return None if p is None else p.check(self._preset_runs)

    @property
    def running(self) -> bool:
        return self.state == "running"

    # ---- settings ---------------------------------------------------------------------------
    def apply_preset(self, key: str | None) -> None:
        """Choose an experiment (None: custom settings): its first run is prepared (Start
        trains it, then the others of a contrast), earlier runs are hidden from the plot."""
        if key is not None and key not in PRESETS:
            raise KeyError(f"unknown preset {key!r}; presets: {', '.join(PRESETS)}")
        self.preset_key = key
        if key is not None:
            self.settings = PRESETS[key].runs[0].config
            for run in self.runs:
                run.shown = False
        self._set_message("", "")
        self.changed.emit("settings")
        if key is not None:
            self.reset()

    def set_settings(self, config: TrainConfig) -> None:
        """The settings for the next run (a run with no steps yet is replaced at once)."""
        if not isinstance(config, TrainConfig):
            raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
        if config == self.settings:
            if self._refused:  # the refused value was put back as it was: nothing is refused now
                self._refused = False
                self._set_message("", "")
            return
        self._refused = False
        self.settings = config
        p = self.preset
        if p is not None and config != p.runs[0].config:
            self.preset_key = None
        self._set_message("", "")
        replace = self.current is not None and self.current.steps_done == 0 and not self.running
        if not replace:
            self._settings_dirty = True  # (before "settings": the form shows these, not the run's)
        self.changed.emit("settings")
        if replace:
            self._new_run(config, "")
            self._queue = []
            self._preset_runs = [self.current]

    def refuse(self, error: str) -> None:
        """A setting the engine refused (the panel's form): say why, naming the field."""
        self._refused = True
        self._set_message(QCoreApplication.translate("TrainingLab", "Not accepted: {reason}").format(reason=error), "error")

    def make_config(self, values: dict) -> TrainConfig:
        """A TrainConfig of the settings on screen (`shown_settings`) with ``values`` changed;
        raises ConfigError naming the field."""
        try:
            return TrainConfig.from_dict({**self.shown_settings().to_dict(), **values})
        except TypeError as exc:  # a value of the wrong kind that validation did not name
            raise ConfigError(str(exc)) from None

    # ---- training -----------------------------------------------------------------------------
    def start(self) -> None:
        """Train the current run to its planned steps (a finished run: that many more)."""
        if self._blocking:
            return  # the settings on screen are not the ones that would train
        if self.current is None or self._settings_dirty:
            self._new_run(self.settings, "")
            self._queue = []
            self._preset_runs = [self.current]
        run = self.current
        target = run.config.steps
        if run.steps_done >= target:
            target = run.steps_done + run.config.steps
        self.worker.play(target)
        self._tick = time.perf_counter()
        self._set_state("running")

    def pause(self) -> None:
        self.worker.pause()
        if self.running:
            self._account_time()
            self._tick = None
            self._set_state("paused")

    def step(self, n: int | None = None) -> None:
        """Train ``n`` (default: the step size) more steps, then stop."""
        if self._blocking:
            return
        if self.current is None or self._settings_dirty:
            self._new_run(self.settings, "")
            self._queue = []
            self._preset_runs = [self.current]
        self.worker.step(int(n or self.step_size))
        self._tick = time.perf_counter()
        self._set_state("running")

    def reset(self) -> None:
        """Stop, and prepare a new run of the settings (of the preset: its first run, then the
        others). The old run stays for comparison when it trained."""
        self.worker.pause()
        self._tick = None
        p = self.preset
        if p is not None:
            first, *rest = p.runs
            self._new_run(first.config, first.name)
            self._queue = list(rest)
        else:
            self._new_run(self.settings, "")
            self._queue = []
        self._preset_runs = [self.current]
        self.scrub_step = None
        self._set_state("idle")

    def _new_run(self, config: TrainConfig, name: str) -> None:
        old = self.current
        if old is not None and old.steps_done == 0:
            self.runs.remove(old)  # never trained: nothing to compare
        self._next_id += 1
        run = Run(self._next_id, config, name, RUN_COLORS[self._colour % len(RUN_COLORS)])
        self._colour += 1
        self.runs.append(run)
        while len(self.runs) > MAX_RUNS:
            self.runs.pop(0)
        self.current = run
        self.view_id = None
        self.scrub_step = None
        self._settings_dirty = False
        layer, head = self.selected
        self.selected = (min(layer, config.n_layers - 1), min(head, config.n_heads - 1))
        self.worker.set_snapshot_every(self.snapshot_every)
        self.worker.new_run(run.id, config)
        self.changed.emit("runs")

    def _account_time(self) -> None:
        if self._tick is not None and self.current is not None:
            now = time.perf_counter()
            self.current.wall_s += now - self._tick
            self._tick = now

    def _on_progress(self, p: Progress) -> None:
        run = self.current
        if run is None or p.run_id != run.id:
            return
        if self.running:
            self._account_time()
        if p.steps:
            run.history.extend(p.steps)
            if run.milestone is None:
                hit = first_reached(p.steps)
                if hit is not None:
                    run.milestone = hit
                    run.milestone_wall_s = run.wall_s
        if p.probe is not None:  # (None: the training process probes at most every serve.PROBE_S)
            run.latest = p.probe
        if p.snapshot and p.probe is not None and (not run.snapshots or run.snapshots[-1].step < p.probe.step):
            run.snapshots.append(p.probe)
        if p.circuit is not None:
            run.circuit = p.circuit
        if p.stopped and self.running and p.seq == self.worker.seq:  # no newer request on its way
            if p.reached and self._queue and run.steps_done >= run.config.steps:
                nxt = self._queue.pop(0)
                self._new_run(nxt.config, nxt.name)
                self._preset_runs.append(self.current)
                self.worker.play(nxt.config.steps)
            else:
                self._tick = None
                done = run.steps_done >= run.config.steps and not self._queue
                self._set_state("done" if done else "paused")
        self.changed.emit("progress")

    def _on_failed(self, run_id: int, message: str) -> None:
        self._tick = None
        self._set_state("paused")
        self._set_message(QCoreApplication.translate("TrainingLab", "Training failed: {reason}").format(reason=message), "error")

    def _on_died(self, reason: str) -> None:
        """The training process ended under us: the steps and history received stay; the
        trainer went with it, so Start trains a new run of the settings."""
        self._account_time()
        self._tick = None
        self._settings_dirty = True  # the next Start / Step makes a new run (this one is kept)
        if self.current is not None:
            self.current.savable = False  # its model went with the process
        self._set_state("paused" if self.current is not None and self.current.steps_done else "idle")
        self._set_message(QCoreApplication.translate(
            "TrainingLab", "The training process stopped ({reason}). The steps so far are kept; "
            "Start trains a new run.").format(reason=reason), "info")
        saves, self._saves = self._saves, {}
        for folder, purpose in saves.items():  # no answer will come: a Save asked for failed
            if purpose == "user":
                self.saved.emit(folder, reason)

    # ---- what is shown -----------------------------------------------------------------------------
    def select_head(self, layer: int, head: int) -> None:
        run = self.viewed_run()
        if run is None:
            return
        sel = (min(max(0, int(layer)), run.config.n_layers - 1), min(max(0, int(head)), run.config.n_heads - 1))
        if sel != self.selected:
            self.selected = sel
            self.changed.emit("view")

    def set_scrub(self, step: int | None) -> None:
        """Replay the heads at ``step`` (None: follow the training live)."""
        if step != self.scrub_step:
            self.scrub_step = None if step is None else int(step)
            self.changed.emit("view")

    def set_log_scale(self, on: bool) -> None:
        if bool(on) != self.log_scale:
            self.log_scale = bool(on)
            self.changed.emit("view")

    def set_snapshot_every(self, n: int) -> None:
        self.snapshot_every = max(1, int(n))
        self.worker.set_snapshot_every(self.snapshot_every)

    def set_view_run(self, run_id: int | None) -> None:
        if run_id is not None and self.current is not None and run_id == self.current.id:
            run_id = None
        if run_id != self.view_id:
            self.view_id = run_id
            self.scrub_step = None
            run = self.viewed_run()
            if run is not None:
                layer, head = self.selected
                self.selected = (min(layer, run.config.n_layers - 1), min(head, run.config.n_heads - 1))
            self.changed.emit("view")

    def set_run_shown(self, run_id: int, shown: bool) -> None:
        for run in self.runs:
            if run.id == run_id and run.shown != bool(shown):
                run.shown = bool(shown)
                self.changed.emit("runs")

    def clear_runs(self) -> None:
        """Forget every run but the current one."""
        self.runs = [r for r in self.runs if r is self.current]
        self._preset_runs = [r for r in self._preset_runs if r in self.runs]
        self.view_id = None
        self.changed.emit("runs")

    # ---- the inspector and saving ---------------------------------------------------------------
    def open_in_inspector(self) -> bool:
        """Open the current run in the model panels (the window's model controller): its saved
        folder when *Save run…* saved it as it is, else a save to a temporary folder (deleted
        at quit). Returns False when there is no window to open it in."""
        ctl = self.models
        if ctl is None or self.current is None:
            self._set_message(_live(QT_TRANSLATE_NOOP("TrainingLab", "There is no model inspector in this window.")),
                              "error", blocking=False)
            return False
        self.pause()
        run = self.current
        if run.saved_folder is not None and run.saved_steps == run.steps_done and Path(run.saved_folder).is_dir():
            self._show_in_inspector(run, run.saved_folder)
            return True
        folder = str(Path(tempfile.mkdtemp(prefix="attention-explorer-run-")) / "run")
        self._temp_dirs.append(str(Path(folder).parent))
        self._saves[folder] = "inspector"
        self.worker.save(folder)
        self._set_message(_live(QT_TRANSLATE_NOOP("TrainingLab", "Saving the run for the inspector…")), "info")
        return True

    def save_run(self, folder: str | Path) -> bool:
        """*Save run…*: the viewed run to the run folder ``folder`` (engine.training.run_folder:
        written aside, then renamed into place), off the UI thread; the message line says
        "Saved to …" or why not, and `saved` follows. Only the current run can be saved (the
        training process holds its model); False when the viewed run is another."""
        if not self.can_save():
            self.say_cannot_save()
            return False
        self.pause()
        folder = str(Path(folder).expanduser())
        self._saves[folder] = "user"
        self.worker.save(folder)
        self._set_message(_live(QT_TRANSLATE_NOOP("TrainingLab", "Saving the run to {folder}…"), folder=folder), "info")
        return True

    def unsaved_run(self) -> Run | None:
        """The current run when it trained in this window and is not saved as it is now (what
        the quit question asks about); None otherwise."""
        run = self.current
        return run if run is not None and run.unsaved else None

    def _on_saved(self, run_id: int, folder: str, error: str) -> None:
        # (an inspector's folder is a new temporary one; a user's may be asked twice)
        purpose = self._saves.pop(folder, "user")
        run = next((r for r in self.runs if r.id == run_id), None)
        if purpose == "user":
            self._on_saved_by_user(run, folder, error)
            return
        if error:
            self._set_message(QCoreApplication.translate("TrainingLab", "The run could not be saved: {reason}").format(reason=error),
                              "error", blocking=False)
            return
        self._show_in_inspector(run, folder)

    def _show_in_inspector(self, run: Run | None, folder: str) -> None:
        self.inspector_folder = folder
        if run is not None:
            self._inspected = (run.id, run.steps_done, folder)
        ctl = self.models
        if ctl is not None:
            ctl.load(folder)
            self._set_message(_live(QT_TRANSLATE_NOOP(
                "TrainingLab", "Opened in the inspector: the model panels show this run's model.")), "info")

    def _on_saved_by_user(self, run: Run | None, folder: str, error: str) -> None:
        if error:
            self._set_message(_tr("Not saved: {reason}").format(reason=_one_line(error)), "error", blocking=False)
            self.saved.emit(folder, error)
            return
        if run is not None:
            run.saved_folder, run.saved_steps = folder, run.steps_done
            self._follow_in_inspector(run, folder)
        self._set_message(_live(QT_TRANSLATE_NOOP("TrainingLab", "Saved to {folder}"), folder=folder), "info")
        self.saved.emit(folder, "")

    def _follow_in_inspector(self, run: Run, folder: str) -> None:
        """The inspector shows ``run`` from a temporary folder: a session names the saved one
        from now on (the same model; a run trained further since: the saved one is opened)."""
        ctl = self.models
        if ctl is None or self._inspected is None or self._inspected[0] != run.id:
            return
        _, steps, shown = self._inspected
        if not ctl.shows(shown):
            return
        if steps == run.steps_done:
            ctl.relocate(shown, folder)
        else:
            ctl.load(folder)
        self._inspected = (run.id, run.steps_done, folder)
        self.inspector_folder = folder

    # ---- state and shutdown --------------------------------------------------------------------------
    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.changed.emit("state")

    def _set_message(self, text: str, kind: str, *, blocking: bool | None = None) -> None:
        """The line under the settings; an error blocks Start and Step (a refused setting, a
        failed training) unless ``blocking=False`` (a save that failed)."""
        self._blocking = kind == "error" if blocking is None else blocking
        if (text, kind) != self.message:
            self.message = (text, kind)
            self.changed.emit("message")

    def clear_message(self) -> None:
        self._set_message("", "")

    def shutdown(self) -> None:
        """Stop the training thread and delete the temporary folders saved for the inspector
        (idempotent; a run kept with *Save run…* stays where it was saved)."""
        self.worker.stop()
        for d in self._temp_dirs:
            with contextlib.suppress(OSError):
                shutil.rmtree(d)
        self._temp_dirs = []



def _one_line(text: str) -> str:
    return " ".join(str(text).split())
