"""`training`: train a tiny transformer and watch its heads form (the training lab's panel).

Left, the experiment (`form.TrainingForm`): a preset (its explanation and expectation,
checked live) or the settings, and the runs kept for comparison. Right, the figures
(`figures.TrainingFigures`), drawn from the window's `TrainingLab` (so an export's fresh
panel draws the same run):

    loss (every shown run, total and predictable part)   | learning rate
    heads: every layer × head on the probe sequence      | the selected head, large, with tokens
    normalised entropy | previous-token score | induction score   (one curve per head)
    timeline: replay the heads at an earlier snapshot while training continues

The moment the milestone is reached (engine.training.induction_reached) a line marks its
step in the loss and induction plots and the loss title says it. The panel wires the two
halves to the lab, holds the toolbar and the timeline, and keeps the redraws within a budget
of the UI thread's time while training.
"""

from __future__ import annotations

import collections
import math
import time

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QToolButton,
    QVBoxLayout,
)

from ..figures.heatmap import Heatmap
from ..figures.themes import Theme
from ..i18n import now
from ..panels.base import Panel, register_panel
from .figures import TrainingFigures
from .form import TrainingForm
from .lab import Run, TrainingLab
from .saving import save_run_dialog
from .texts import set_text

#: the least time between two redraws while training: ~11 Hz (the training process sends
#: ~12 updates a second; drawing each costs the CPU the training shares)
REDRAW_S = 0.085
#: the most: 2 Hz, however slow a redraw (a huge model, a slow machine)
REDRAW_MAX_S = 0.5
#: the share of one core the display may take while training: the time between redraws is
#: the UI thread's measured CPU time per redraw (drawing, painting, relaying) over this,
#: kept between REDRAW_S and REDRAW_MAX_S. The training process runs in a session of its own
#: (explorer/training/serve.py): where the kernel shares the CPU by session, the drawing comes out of
#: the machine's spare time, not the training's share. A third of a core: a redraw of the
#: default run costs 21-27 ms of UI-thread CPU on the 2-core machine, so the display keeps
#: 11-12 Hz; a quarter held it at 8-10 Hz (issue 17). Larger runs cost more a redraw and get
#: fewer redraws.
DRAW_BUDGET = 1 / 3


@register_panel
class TrainingPanel(Panel):
    name = "training"
    draws_the_sliders = False  # the lab's own model, not the sliders' layer
    title = QT_TRANSLATE_NOOP("Panel", "Training lab")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        if state.training_lab is None:  # the window's lab is made by explorer.training.feature
            state.training_lab = TrainingLab(models=state.models)
        self.lab: TrainingLab = state.training_lab
        self._draw_times: collections.deque[float] = collections.deque(maxlen=64)
        self._drawn_at = 0.0
        self._interval = REDRAW_S  # the adaptive time between redraws while training
        self._cost: float | None = None  # UI-thread CPU seconds per redraw (smoothed)
        self._cpu_at: float | None = None
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.timeout.connect(self._deferred_redraw)
        self._stale = False
        self._syncing = False
        self._build_layout()
        self.figures = TrainingFigures(self.graphics.ci, self.hover, self.lab, self.theme)
        # the parts tests and tools reach on the panel itself
        self.side = self.form
        self.preset_combo, self.runs_list = self.form.preset_combo, self.form.runs_list
        f = self.figures
        self.loss_plot, self.lr_plot, self.lr_used, self.legend = f.loss_plot, f.lr_plot, f.lr_used, f.legend
        self.grid, self.big, self.score_plots = f.grid, f.big, f.score_plots
        self.retranslate_ui()
        self.lab.changed.connect(self._on_lab_changed)
        self.lab.ensure_run()
        self._sync_form()
        self._sync_controls()
        self.redraw()

    # ---- construction -------------------------------------------------------------------
    def _build_layout(self) -> None:
        outer = self.layout()
        outer.removeWidget(self.graphics)
        # the toolbar row: what acts on the run
        tb = self.toolbar
        self.start_button = self._button("training_start", lambda: self.lab.start())
        self.pause_button = self._button("training_pause", lambda: self.lab.pause())
        self.step_button = self._button("training_step", lambda: self.lab.step())
        self.reset_button = self._button("training_reset", lambda: self.lab.reset())
        self.inspect_button = self._button("training_inspect", lambda: self.lab.open_in_inspector())
        self.save_button = self._button("training_save", lambda: save_run_dialog(self, self.lab))
        for b in (self.start_button, self.pause_button, self.step_button, self.reset_button):
            tb.addWidget(b)
        tb.addSpacing(8)
        tb.addWidget(self.inspect_button)
        tb.addWidget(self.save_button)
        tb.addSpacing(8)
        self.log_check = QCheckBox()
        self.log_check.setObjectName("training_log")
        self.log_check.toggled.connect(lambda on: self.lab.set_log_scale(on))
        tb.addWidget(self.log_check)
        self.status_label = QLabel()
        self.status_label.setObjectName("training_status")
        tb.addWidget(self.status_label, 1)
        tb.addSpacing(22)  # the "?" button sits here

        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(4)
        outer.addLayout(body, 1)
        self.form = TrainingForm(self.lab)  # the experiment: preset, settings, runs
        body.addWidget(self.form)

        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(2)
        right.addWidget(self.graphics, 1)
        row = QHBoxLayout()
        row.setContentsMargins(6, 0, 6, 2)
        self.timeline_label = QLabel()
        self.timeline = QSlider(Qt.Orientation.Horizontal)
        self.timeline.setObjectName("training_timeline")
        self.timeline.setRange(0, 0)
        self.timeline.valueChanged.connect(self._on_timeline)
        self.timeline_label.setBuddy(self.timeline)
        self.live_button = QToolButton()
        self.live_button.setObjectName("training_live")
        self.live_button.clicked.connect(lambda: self.lab.set_scrub(None))
        self.timeline_step = QLabel()
        self.timeline_step.setObjectName("training_timeline_step")
        self.timeline_step.setMinimumWidth(150)
        row.addWidget(self.timeline_label)
        row.addWidget(self.timeline, 1)
        row.addWidget(self.live_button)
        row.addWidget(self.timeline_step)
        right.addLayout(row)
        body.addLayout(right, 1)

    def _button(self, name: str, slot) -> QPushButton:
        b = QPushButton()
        b.setObjectName(name)
        b.clicked.connect(slot)
        return b

    # ---- language ----------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self.start_button.setText(self.tr("Start"))
        self.start_button.setToolTip(self.tr("Train the run to its planned steps (a finished run: that many more)"))
        self.pause_button.setText(self.tr("Pause"))
        self.step_button.setText(self.tr("Step"))
        self.step_button.setToolTip(self.tr("Train a few steps (Step by), then stop"))
        self.reset_button.setText(self.tr("Reset"))
        self.reset_button.setToolTip(self.tr("A new run of the settings; the old one stays for comparison"))
        self.inspect_button.setText(self.tr("Open in inspector"))
        self.inspect_button.setToolTip(self.tr("Save this run and open its model in the model panels"))
        self.save_button.setText(self.tr("Save run…"))
        self.save_button.setToolTip(self.tr("Keep this run in a folder: File ▸ Open model… and a session "
                                            "saved afterwards open it again"))
        self.log_check.setText(self.tr("log scale"))
        self.form.retranslate_ui()
        self.timeline_label.setText(self.tr("Timeline"))
        self.live_button.setText(self.tr("Live"))
        self.live_button.setToolTip(self.tr("Follow the training again"))
        self.figures.retranslate_ui()
        super().retranslate_ui()
        self._sync_controls()
        self.redraw()

    # ---- the lab ---------------------------------------------------------------------------------
    def _on_lab_changed(self, what: str) -> None:
        if what in ("settings", "runs"):
            self._sync_form()
        elif what == "view":  # another run on screen: its settings in the form
            self.form.sync_fields()
        if what != "progress":  # progress: the toolbar and the expectation follow the redraws
            self._sync_controls()
        if what in ("state", "message"):
            return
        if not self.isVisible():
            self._stale = True
            return
        # changes closer than the interval: one redraw; not training: at once (the last steps)
        wait = (self._interval if self.lab.running else 0.0) - (time.perf_counter() - self._drawn_at)
        ms = max(0, int(wait * 1000))
        if not self._redraw_timer.isActive() or self._redraw_timer.remainingTime() > ms:
            self._redraw_timer.start(ms)

    def _deferred_redraw(self) -> None:
        self.redraw()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        # a figure (an export's offscreen panel) shows the plots, not the experiment's form
        self.side.setVisible(not self.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen))
        if self._stale:
            self._stale = False
            self.redraw()

    def detach(self) -> None:
        super().detach()
        try:
            self.lab.changed.disconnect(self._on_lab_changed)
        except (RuntimeError, TypeError):
            pass

    def _sync_form(self) -> None:
        """Mirror the lab's settings in the form and the log-scale box (no feedback)."""
        self.form.sync(self.theme)
        self.log_check.setChecked(self.lab.log_scale)

    def _sync_controls(self) -> None:
        lab = self.lab
        run = lab.current
        running = lab.running
        self.start_button.setEnabled(not running)
        self.step_button.setEnabled(not running)
        self.pause_button.setEnabled(running)
        self.inspect_button.setEnabled(lab.models is not None)
        self.save_button.setEnabled(self.lab.can_save())
        text, kind = lab.message
        self.form.show_message(now(text), kind, self.theme)  # (in the language of now)
        if run is None:
            set_text(self.status_label, "")
            return
        states = {"idle": self.tr("ready"), "running": self.tr("training"), "paused": self.tr("paused"),
                  "done": self.tr("done")}
        rate = run.steps_done / run.wall_s if run.wall_s > 0 else float("nan")
        parts = [states.get(lab.state, lab.state),
                 self.tr("step {n} of {total}").format(n=run.steps_done, total=run.config.steps)]
        if math.isfinite(rate):
            parts.append(self.tr("{rate} steps/s").format(rate=f"{rate:.0f}"))
        hz = self.display_rate() if running else 0.0
        if hz > 0:
            parts.append(self.tr("display {hz} Hz").format(hz=f"{hz:.0f}"))
        set_text(self.status_label, " · ".join(parts))
        self.form.sync_preset_texts(self.theme)

    # ---- the timeline ---------------------------------------------------------------------------------
    def _on_timeline(self, index: int) -> None:
        if self._syncing:
            return
        run = self.lab.viewed_run()
        if run is None or not run.snapshots:
            return
        if index >= len(run.snapshots) - 1:
            self.lab.set_scrub(None)
        else:
            self.lab.set_scrub(run.snapshots[index].step)

    def _sync_timeline(self, run: Run) -> None:
        snaps = run.snapshots
        self._syncing = True
        try:
            self.timeline.setRange(0, max(0, len(snaps) - 1))
            step = self.lab.scrub_step
            if step is None:
                self.timeline.setValue(self.timeline.maximum())
            else:
                idx = max((i for i, s in enumerate(snaps) if s.step <= step), default=0)
                self.timeline.setValue(idx)
        finally:
            self._syncing = False
        probe = run.snapshot_at(step)
        shown = probe.step if probe is not None else 0
        if step is None:
            set_text(self.timeline_step, self.tr("step {n} (live)").format(n=shown))
        else:
            set_text(self.timeline_step, self.tr("step {n} of {total}").format(n=shown, total=run.steps_done))
        self.live_button.setEnabled(step is not None)

    # ---- drawing ---------------------------------------------------------------------------------------
    def draw_frame(self, frame) -> None:
        self.redraw()  # the sliders' frame is not what this panel shows: the lab's run is

    def draw_selection(self) -> None:
        pass  # the head shown large is the lab's (layer, head), drawn by redraw

    def heatmaps(self) -> list[Heatmap]:
        return [self.figures.big]

    def redraw(self) -> None:
        """Draw the lab's state: the shown runs' curves, the viewed run's heads and scores."""
        lab = self.lab
        run = lab.viewed_run()
        self._drawn_at = time.perf_counter()
        self._draw_times.append(self._drawn_at)
        self._adapt_rate()
        self._sync_controls()
        if run is None:
            return
        self.figures.draw(run)
        self._sync_timeline(run)

    def _adapt_rate(self) -> None:
        """The next redraw's earliest time from what the last ones cost: the UI thread's CPU
        time since the previous redraw (this redraw's work comes after: it is counted next
        time, with the paint it causes)."""
        cpu = time.thread_time()
        if self.lab.running and self._cpu_at is not None:
            cost = cpu - self._cpu_at
            self._cost = cost if self._cost is None else 0.7 * self._cost + 0.3 * cost
            self._interval = min(REDRAW_MAX_S, max(REDRAW_S, self._cost / DRAW_BUDGET))
        self._cpu_at = cpu if self.lab.running else None

    def draw_cost_ms(self) -> float:
        """The UI thread's CPU milliseconds per redraw while training (smoothed; NaN before)."""
        return float("nan") if self._cost is None else self._cost * 1e3

    def display_rate(self, window_s: float = 2.0) -> float:
        """Redraws a second over the last ``window_s`` seconds (0 when none)."""
        now = time.perf_counter()
        recent = [t for t in self._draw_times if now - t <= window_s]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / (recent[-1] - recent[0]) if recent[-1] > recent[0] else 0.0

    # ---- look --------------------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.figures.apply_theme(theme)
        super().apply_theme(theme)
        self._sync_controls()
        self.redraw()
