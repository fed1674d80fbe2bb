"""`training`: train a tiny transformer and watch its heads form (the training lab's panel).

Left, the experiment: a preset (its explanation and expectation, checked live) or the
settings, and the runs kept for comparison. Right, the figures, drawn from the window's
`TrainingLab` (so an export's fresh panel draws the same run):

    loss (every shown run, total and predictable part)   | learning rate
    heads: every layer × head on the probe sequence      | the selected head, large, with tokens
    normalised entropy | previous-token score | induction score   (one curve per head)
    timeline: replay the heads at an earlier snapshot while training continues

The moment the milestone is reached (engine.training.induction_reached) a line marks its
step in the loss and induction plots and the loss title says it.
"""

from __future__ import annotations

import collections
import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine import ConfigError
from engine.config import MAX_SEED
from engine.training import TASKS, TrainConfig
from engine.training.trainer import (
    INDUCTION_THRESHOLD,
    MIN_LR_RATIO,
    PREVIOUS_TOKEN_THRESHOLD,
    SOLVED_LOSS,
)

from ..figures.heatmap import Heatmap
from ..figures.plots import (
    add_plot,
    lean_axes,
    nice_ceil,
    set_axis_label,
    set_bar_levels,
    set_plot_title,
    style_colorbar,
    style_plot,
    titled,
)
from ..figures.themes import CATEGORY_COLORS, WEIGHTS_CMAP, Theme
from ..panels.base import Panel, register_panel
from .forming import tile_labels
from .grid import HeadGrid
from .lab import Run, TrainingLab
from .presets import PRESETS
from .series import MAX_POINTS, Series, Thin, points_for

#: the settings form: (field, label); the widgets are built in _build_form
FIELDS = (
    ("task", QT_TRANSLATE_NOOP("TrainingPanel", "Task")),
    ("n_layers", QT_TRANSLATE_NOOP("TrainingPanel", "Layers")),
    ("n_heads", QT_TRANSLATE_NOOP("TrainingPanel", "Heads")),
    ("d_model", QT_TRANSLATE_NOOP("TrainingPanel", "d_model")),
    ("attn_only", QT_TRANSLATE_NOOP("TrainingPanel", "Attention only")),
    ("norm", QT_TRANSLATE_NOOP("TrainingPanel", "LayerNorm")),
    ("dropout", QT_TRANSLATE_NOOP("TrainingPanel", "Dropout")),
    ("scale", QT_TRANSLATE_NOOP("TrainingPanel", "Scale of QKᵀ")),
    ("init_std", QT_TRANSLATE_NOOP("TrainingPanel", "Init std")),
    ("lr", QT_TRANSLATE_NOOP("TrainingPanel", "Learning rate")),
    ("warmup_steps", QT_TRANSLATE_NOOP("TrainingPanel", "Warmup steps")),
    ("schedule", QT_TRANSLATE_NOOP("TrainingPanel", "Schedule")),
    ("steps", QT_TRANSLATE_NOOP("TrainingPanel", "Steps")),
    ("batch", QT_TRANSLATE_NOOP("TrainingPanel", "Batch")),
    ("seed", QT_TRANSLATE_NOOP("TrainingPanel", "Seed")),
)
FIELD_LABELS = dict(FIELDS)
#: the score curves: (TrainStep attribute or score name, title)
SCORE_PLOTS = (
    ("entropy_norm", QT_TRANSLATE_NOOP("TrainingPanel", "Entropy (1 = uniform)")),
    ("previous_token", QT_TRANSLATE_NOOP("TrainingPanel", "Previous-token score")),
    ("induction", QT_TRANSLATE_NOOP("TrainingPanel", "Induction score")),
)
#: the least time between two redraws while training: ~11 Hz (the training process sends
#: ~12 updates a second; drawing each costs the CPU the training shares)
REDRAW_S = 0.085
#: the most: 2 Hz, however slow a redraw (a huge model, a slow machine)
REDRAW_MAX_S = 0.5
#: the share of one core the display may take while training: the time between redraws is
#: the UI thread's measured CPU time per redraw (drawing, painting, relaying) over this,
#: kept between REDRAW_S and REDRAW_MAX_S. The training process runs in a session of its own
#: (serve.serve_process): where the kernel shares the CPU by session, the drawing comes out of
#: the machine's spare time, not the training's share. A third of a core: a redraw of the
#: default run costs 21-27 ms of UI-thread CPU on the 2-core machine, so the display keeps
#: 11-12 Hz; a quarter held it at 8-10 Hz (issue 17). Larger runs cost more a redraw and get
#: fewer redraws.
DRAW_BUDGET = 1 / 3
#: every line the lab draws is this wide in pixels (times the theme's line scale: 2 on
#: slides). Qt draws a 1-px cosmetic line, solid or dashed, directly and strokes a wider one
#: into polygons first: with the loss at 2 px and the 12 score curves and the milestone lines
#: at 1.5 px, a redraw of the default run took 31.2 M instructions, with 1-px lines 24.2 M
#: (callgrind, 60 warm redraws with their paints). The viewed run stands out from compared
#: ones by their colours faded to COMPARED_ALPHA and by being drawn over them.
LINE_PX = 1.0
COMPARED_ALPHA = 140
#: short names of the settings in a legend that tells runs apart
LEGEND_NAMES = {"n_layers": "layers", "n_heads": "heads", "n_kv_heads": "kv", "d_model": "d",
                "warmup_steps": "warmup", "init_std": "init", "attn_only": "attn-only"}


def _tr(text: str) -> str:
    return QCoreApplication.translate("TrainingPanel", text)


def _num(v: float) -> str:
    return f"{v:.3g}" if math.isfinite(v) else "—"


def planned_lr(config: TrainConfig, steps: np.ndarray) -> np.ndarray:
    """The learning rate of each (1-based) step: engine.training.Trainer.lr_at, vectorised."""
    c = config
    s = np.asarray(steps, dtype=np.float64)
    if c.warmup_steps:
        warm = c.lr * s / c.warmup_steps
    else:
        warm = np.full_like(s, c.lr)
    if c.schedule == "constant":
        after = np.full_like(s, c.lr)
    else:
        span = max(1, c.steps - c.warmup_steps)
        progress = np.clip((s - c.warmup_steps) / span, 0.0, 1.0)
        low = c.lr * MIN_LR_RATIO
        after = low + 0.5 * (c.lr - low) * (1.0 + np.cos(np.pi * progress))
    return np.where(s <= c.warmup_steps, warm, after)


def _set_text(label: QLabel, text: str) -> None:
    """label.setText, skipped when unchanged (a word-wrapped label re-lays out its column)."""
    if label.text() != text:
        label.setText(text)


def _curve(plot) -> pg.PlotDataItem:
    """A curve given at most MAX_POINTS points (series.Thin), unchecked for NaN. A
    PlotDataItem: the loss plot's log scale needs one."""
    item = plot.plot([], [])
    item.setSkipFiniteCheck(True)
    return item


def _line(plot) -> pg.PlotCurveItem:
    """A bare curve for the per-head score plots (linear axes): one item where a
    PlotDataItem is three (itself, its curve, its scatter) and re-checks its data's bounds
    twice on every setData; 12 of them redraw 10 times a second."""
    item = pg.PlotCurveItem(skipFiniteCheck=True)
    plot.addItem(item)
    return item


def legend_labels(runs: list[Run]) -> dict[int, str]:
    """Each run's legend text: its name and the settings that tell it from the other runs
    (all of its settings when it is alone or they agree)."""
    dicts = {r.id: r.config.to_dict() for r in runs}
    keys = [k for k in TrainConfig().to_dict()
            if len({repr(d[k]) for d in dicts.values()}) > 1]
    out = {}
    for r in runs:
        if keys:
            parts = []
            for k in keys:
                v = dicts[r.id][k]
                name = LEGEND_NAMES.get(k, k)
                parts.append(f"{name} {v:g}" if isinstance(v, float) else f"{name} {v}")
            text = " · ".join(parts)
        else:
            text = r.config.summary()
        out[r.id] = f"{r.display_name()}: {text}"
    return out


@register_panel
class TrainingPanel(Panel):
    name = "training"
    title = QT_TRANSLATE_NOOP("Panel", "Training lab")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self._drawn: dict[tuple[object, str], object] = {}  # see _fresh
        if state.training_lab is None:  # the window's lab is made by explorer.training.feature
            state.training_lab = TrainingLab(self.selection)
        self.lab: TrainingLab = state.training_lab
        self._series: dict[int, Series] = {}
        self._thins: dict[object, Thin] = {}  # each curve's preallocated points, by curve
        self._pens: dict = {}
        self._loss_items: dict[int, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self._head_items: dict[str, list[pg.PlotCurveItem]] = {name: [] for name, _t in SCORE_PLOTS}
        self._legend_key = None
        self._draw_times: collections.deque[float] = collections.deque(maxlen=64)
        self._interval = REDRAW_S  # the adaptive time between redraws while training
        self._cost: float | None = None  # UI-thread CPU seconds per redraw (smoothed)
        self._cpu_at: float | None = None
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.timeout.connect(self._deferred_redraw)
        self._stale = False
        self._syncing = False
        self._build_layout()
        self._build_figures()
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
        for b in (self.start_button, self.pause_button, self.step_button, self.reset_button):
            tb.addWidget(b)
        tb.addSpacing(8)
        tb.addWidget(self.inspect_button)
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
        self.side = QScrollArea()
        self.side.setObjectName("training_side")
        self.side.setWidgetResizable(True)
        self.side.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.side.setFixedWidth(290)
        inner = QWidget()
        col = QVBoxLayout(inner)
        col.setContentsMargins(6, 4, 6, 4)
        self.preset_label = QLabel()
        self.preset_combo = QComboBox()
        self.preset_combo.setObjectName("training_preset")
        for key, p in PRESETS.items():
            self.preset_combo.addItem(p.title, key)
        self.preset_combo.addItem("", None)  # custom settings
        self.preset_combo.currentIndexChanged.connect(self._on_preset_chosen)
        self.preset_label.setBuddy(self.preset_combo)
        col.addWidget(self.preset_label)
        col.addWidget(self.preset_combo)
        self.explanation = QLabel()
        self.explanation.setObjectName("training_explanation")
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        col.addWidget(self.explanation)
        self.expectation = QLabel()
        self.expectation.setObjectName("training_expectation")
        self.expectation.setWordWrap(True)
        self.expectation.setTextFormat(Qt.TextFormat.RichText)
        col.addWidget(self.expectation)
        self.message = QLabel()
        self.message.setObjectName("training_message")
        self.message.setWordWrap(True)
        self.message.hide()
        col.addWidget(self.message)
        self.form = QFormLayout()
        self.form.setContentsMargins(0, 4, 0, 4)
        self.form.setVerticalSpacing(3)
        self._build_form()
        col.addLayout(self.form)
        self.runs_label = QLabel()
        col.addWidget(self.runs_label)
        self.runs_list = QListWidget()
        self.runs_list.setObjectName("training_runs")
        self.runs_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.runs_list.setMinimumHeight(90)
        self.runs_list.itemChanged.connect(self._on_run_item_changed)
        self.runs_list.currentItemChanged.connect(self._on_run_item_current)
        col.addWidget(self.runs_list)
        self.clear_button = self._button("training_clear_runs", lambda: self.lab.clear_runs())
        col.addWidget(self.clear_button)
        col.addStretch(1)
        self.side.setWidget(inner)
        body.addWidget(self.side)

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

    def _build_form(self) -> None:
        self.fields: dict[str, QWidget] = {}
        self.field_labels: dict[str, QLabel] = {}

        def spin(lo: int, hi: int, step: int = 1) -> QSpinBox:
            w = QSpinBox()
            w.setRange(lo, hi)
            w.setSingleStep(step)
            w.setKeyboardTracking(False)
            w.valueChanged.connect(self._on_form_changed)
            return w

        def combo(items) -> QComboBox:
            w = QComboBox()
            for text, data in items:
                w.addItem(text, data)
            w.currentIndexChanged.connect(self._on_form_changed)
            return w

        def line() -> QLineEdit:
            w = QLineEdit()
            w.editingFinished.connect(self._on_form_changed)
            return w

        f = self.fields
        f["task"] = combo([(t, t) for t in TASKS])
        f["n_layers"] = spin(1, 6)
        f["n_heads"] = spin(1, 16)
        f["d_model"] = spin(4, 512, 16)
        f["attn_only"] = QCheckBox()
        f["attn_only"].toggled.connect(self._on_form_changed)
        f["norm"] = combo([("pre-LN", "pre"), ("post-LN", "post"), ("none", "none")])
        f["dropout"] = QDoubleSpinBox()
        f["dropout"].setRange(0.0, 0.9)
        f["dropout"].setSingleStep(0.05)
        f["dropout"].setKeyboardTracking(False)
        f["dropout"].valueChanged.connect(self._on_form_changed)
        f["scale"] = QComboBox()
        f["scale"].setEditable(True)
        f["scale"].addItem("1/√d_k", "sqrt")
        f["scale"].addItem("none", "none")
        f["scale"].currentIndexChanged.connect(self._on_form_changed)
        f["scale"].lineEdit().editingFinished.connect(self._on_form_changed)
        f["init_std"] = line()
        f["lr"] = line()
        f["warmup_steps"] = spin(0, 100_000, 50)
        f["schedule"] = combo([("constant", "constant"), ("cosine", "cosine")])
        f["steps"] = spin(1, 1_000_000, 50)
        f["batch"] = spin(1, 1024, 8)
        f["seed"] = spin(0, MAX_SEED)
        for key, _label in FIELDS:
            w = f[key]
            w.setObjectName(f"training_field_{key}")
            label = QLabel()
            label.setBuddy(w)
            self.field_labels[key] = label
            self.form.addRow(label, w)
        self.step_size = spin(1, 10_000, 10)
        self.step_size.setObjectName("training_step_size")
        self.step_size.valueChanged.disconnect(self._on_form_changed)
        self.step_size.valueChanged.connect(lambda n: setattr(self.lab, "step_size", int(n)))
        self.every = spin(1, 10_000, 5)
        self.every.setObjectName("training_snapshot_every")
        self.every.valueChanged.disconnect(self._on_form_changed)
        self.every.valueChanged.connect(lambda n: self.lab.set_snapshot_every(n))
        self.step_size_label, self.every_label = QLabel(), QLabel()
        self.step_size_label.setBuddy(self.step_size)
        self.every_label.setBuddy(self.every)
        self.form.addRow(self.step_size_label, self.step_size)
        self.form.addRow(self.every_label, self.every)

    def _build_figures(self) -> None:
        ci = self.graphics.ci
        top = ci.addLayout(row=0, col=0)
        self.loss_plot = add_plot(top, 0, 0, axisItems=lean_axes())
        self.lr_plot = add_plot(top, 0, 1, axisItems=lean_axes())
        top.layout.setColumnStretchFactor(0, 3)
        top.layout.setColumnStretchFactor(1, 1)
        for plot in (self.loss_plot, self.lr_plot):
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMouseEnabled(x=False, y=False)
        self.legend = self.loss_plot.addLegend(offset=(-6, 6), labelTextSize="7.5pt", verSpacing=-6)
        self.chance = pg.InfiniteLine(angle=0, movable=False, label="",
                                      labelOpts={"position": 0.02, "anchors": [(0, 1), (0, 1)]})
        self.loss_plot.addItem(self.chance, ignoreBounds=True)
        self.lr_used = self.lr_plot.plot([], [])
        self.lr_planned = self.lr_plot.plot([], [])

        mid = ci.addLayout(row=1, col=0)
        self.grid = HeadGrid(self.hover, WEIGHTS_CMAP, on_click=lambda layer, head: self.lab.select_head(layer, head),
                             describe=self._describe_tile)
        mid.addItem(titled(self.grid.plot), row=0, col=0)
        self.big = Heatmap(self.hover, WEIGHTS_CMAP, title="", row_title=self.tr("query"), col_title=self.tr("key"),
                           describe=self._describe_cell)
        self.big.set_levels((0.0, 1.0))
        mid.addItem(self.big.cell, row=0, col=1)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=WEIGHTS_CMAP, interactive=False, width=12,
                                    label=self.tr("weight"))
        self.cbar.setImageItem([], insert_in=self.big.item)
        set_bar_levels(self.cbar, (0.0, 1.0))
        mid.layout.setColumnStretchFactor(0, 1)
        mid.layout.setColumnStretchFactor(1, 1)

        bottom = ci.addLayout(row=2, col=0)
        self.score_plots: dict[str, pg.PlotItem] = {}
        self.thresholds: dict[str, pg.InfiniteLine] = {}
        for i, (name, _title) in enumerate(SCORE_PLOTS):
            plot = add_plot(bottom, 0, i, axisItems=lean_axes())
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setYRange(0, 1.02, padding=0)
            plot.enableAutoRange(y=False)
            self.score_plots[name] = plot
            if name in ("previous_token", "induction"):
                value = PREVIOUS_TOKEN_THRESHOLD if name == "previous_token" else INDUCTION_THRESHOLD
                line = pg.InfiniteLine(pos=value, angle=0, movable=False)
                plot.addItem(line, ignoreBounds=True)
                self.thresholds[name] = line
        # top left of the induction plot: empty until the heads form, late in the run
        self.head_legend = self.score_plots["induction"].addLegend(offset=(4, 2), labelTextSize="7pt",
                                                                   verSpacing=-8, colCount=2)
        # the milestone and the replayed step: a vertical line in the loss and score plots
        self.milestone_lines = []
        self.scrub_lines = []
        for plot in (self.loss_plot, *self.score_plots.values()):
            m = pg.InfiniteLine(angle=90, movable=False, label="",
                                labelOpts={"position": 0.93, "anchors": [(1, 0), (1, 0)]})
            m.hide()
            plot.addItem(m, ignoreBounds=True)
            self.milestone_lines.append(m)
            s = pg.InfiniteLine(angle=90, movable=False)
            s.hide()
            plot.addItem(s, ignoreBounds=True)
            self.scrub_lines.append(s)
        ci.layout.setRowStretchFactor(0, 3)
        ci.layout.setRowStretchFactor(1, 4)
        ci.layout.setRowStretchFactor(2, 3)

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
        self.log_check.setText(self.tr("log scale"))
        self.preset_label.setText(self.tr("Experiment"))
        for i in range(self.preset_combo.count()):
            key = self.preset_combo.itemData(i)
            self.preset_combo.setItemText(i, PRESETS[key].display_title() if key else self.tr("Custom settings"))
        for key, label in self.field_labels.items():
            label.setText(_tr(FIELD_LABELS[key]))
        self.step_size_label.setText(self.tr("Step by"))
        self.every_label.setText(self.tr("Snapshot every"))
        self.runs_label.setText(self.tr("Runs (tick to overlay, click to view)"))
        self.clear_button.setText(self.tr("Forget the other runs"))
        self.timeline_label.setText(self.tr("Timeline"))
        self.live_button.setText(self.tr("Live"))
        self.live_button.setToolTip(self.tr("Follow the training again"))
        set_axis_label(self.loss_plot, "bottom", self.tr("step"))
        set_axis_label(self.loss_plot, "left", self.tr("loss (nats)"))
        set_axis_label(self.lr_plot, "bottom", self.tr("step"))
        for plot in self.score_plots.values():
            set_axis_label(plot, "bottom", self.tr("step"))
        self.chance.label.setFormat(self.tr("chance"))
        self._legend_key = None
        super().retranslate_ui()
        self._sync_controls()
        self.redraw()

    # ---- the lab ---------------------------------------------------------------------------------
    def _on_lab_changed(self, what: str) -> None:
        if what in ("settings", "runs"):
            self._sync_form()
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
        """Mirror the lab's settings in the form (signals blocked: no feedback)."""
        self._syncing = True
        try:
            c = self.lab.settings
            f = self.fields
            idx = self.preset_combo.findData(self.lab.preset_key)
            self.preset_combo.setCurrentIndex(idx if idx >= 0 else self.preset_combo.count() - 1)
            f["task"].setCurrentIndex(max(0, f["task"].findData(c.task)))
            for key in ("n_layers", "n_heads", "d_model", "warmup_steps", "steps", "batch", "seed"):
                f[key].setValue(getattr(c, key))
            f["attn_only"].setChecked(c.attn_only)
            f["norm"].setCurrentIndex(max(0, f["norm"].findData(c.norm)))
            f["dropout"].setValue(c.dropout)
            if isinstance(c.scale, str):
                f["scale"].setCurrentIndex(max(0, f["scale"].findData(c.scale)))
            else:
                f["scale"].setEditText(f"{c.scale:g}")
            f["init_std"].setText(f"{c.init_std:g}")
            f["lr"].setText(f"{c.lr:g}")
            f["schedule"].setCurrentIndex(max(0, f["schedule"].findData(c.schedule)))
            self.step_size.setValue(self.lab.step_size)
            self.every.setValue(self.lab.snapshot_every)
            self.log_check.setChecked(self.lab.log_scale)
            self._sync_preset_texts()
            self._sync_runs_list()
        finally:
            self._syncing = False

    def _sync_preset_texts(self) -> None:
        p = self.lab.preset
        if p is None:
            _set_text(self.explanation, self.tr("Your own settings: Start trains them; Reset begins a new run."))
            self.expectation.hide()
            return
        _set_text(self.explanation, p.display_explanation())
        self.expectation.show()
        v = self.lab.verdict()
        th = self.theme
        expect = self.tr("Expect:")
        text = f"<b>{expect}</b> {p.display_expectation()}"
        if v is not None and v.state != "pending":
            colour = th.ok if v.state == "met" else th.error
            mark = self.tr("✓ met") if v.state == "met" else self.tr("✗ not met")
            text += f"<br><span style='color:{colour}'><b>{mark}</b>: {v.text}</span>"
        elif self.lab.running:
            checking = self.tr("checking while it trains…")
            text += f"<br><i>{checking}</i>"
        _set_text(self.expectation, text)

    def _sync_runs_list(self) -> None:
        self.runs_list.blockSignals(True)
        try:
            self.runs_list.clear()
            labels = legend_labels(self.lab.runs)
            viewed = self.lab.viewed_run()
            for run in self.lab.runs:
                item = QListWidgetItem(labels[run.id])
                pix = QPixmap(12, 12)
                pix.fill(QColor(run.colour))
                item.setIcon(QIcon(pix))
                item.setData(Qt.ItemDataRole.UserRole, run.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if run.shown else Qt.CheckState.Unchecked)
                item.setToolTip(run.config.summary())
                self.runs_list.addItem(item)
                if run is viewed:
                    self.runs_list.setCurrentItem(item)
        finally:
            self.runs_list.blockSignals(False)

    def _sync_controls(self) -> None:
        lab = self.lab
        run = lab.current
        running = lab.running
        self.start_button.setEnabled(not running)
        self.step_button.setEnabled(not running)
        self.pause_button.setEnabled(running)
        self.inspect_button.setEnabled(getattr(lab.window, "model_controller", None) is not None)
        text, kind = lab.message
        self.message.setVisible(bool(text))
        _set_text(self.message, text)
        colour = self.theme.error if kind == "error" else self.theme.muted
        if self.message.styleSheet() != f"color: {colour};":
            self.message.setStyleSheet(f"color: {colour};")
        if run is None:
            _set_text(self.status_label, "")
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
        _set_text(self.status_label, " · ".join(parts))
        self._sync_preset_texts()

    # ---- form ---------------------------------------------------------------------------------------
    def _form_values(self) -> dict:
        f = self.fields

        def number(text: str):
            try:
                return float(text)
            except ValueError:
                return text.strip()  # the engine names the field and says what it must be

        scale_box = f["scale"]
        i = scale_box.findText(scale_box.currentText())
        scale = scale_box.itemData(i) if i >= 0 else number(scale_box.currentText())
        return {
            "task": f["task"].currentData(), "n_layers": f["n_layers"].value(), "n_heads": f["n_heads"].value(),
            "d_model": f["d_model"].value(), "attn_only": f["attn_only"].isChecked(),
            "norm": f["norm"].currentData(), "dropout": round(f["dropout"].value(), 6), "scale": scale,
            "init_std": number(f["init_std"].text()), "lr": number(f["lr"].text()),
            "warmup_steps": f["warmup_steps"].value(), "schedule": f["schedule"].currentData(),
            "steps": f["steps"].value(), "batch": f["batch"].value(), "seed": f["seed"].value(),
        }

    def _on_form_changed(self, *_args) -> None:
        if self._syncing:
            return
        try:
            config = self.lab.make_config(self._form_values())
        except ConfigError as exc:
            message = str(exc)
            field = message.split(" ", 1)[0]
            if field in FIELD_LABELS:
                message = f"{_tr(FIELD_LABELS[field])}: {message}"
            self.lab.refuse(message)
            return
        self.lab.set_settings(config)

    def _on_preset_chosen(self, index: int) -> None:
        if self._syncing:
            return
        self.lab.apply_preset(self.preset_combo.itemData(index))

    def _on_run_item_changed(self, item: QListWidgetItem) -> None:
        self.lab.set_run_shown(item.data(Qt.ItemDataRole.UserRole), item.checkState() == Qt.CheckState.Checked)

    def _on_run_item_current(self, item: QListWidgetItem | None, _previous) -> None:
        if item is not None:
            self.lab.set_view_run(item.data(Qt.ItemDataRole.UserRole))

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

    # ---- hover readouts ------------------------------------------------------------------------------
    def _shown_probe(self):
        run = self.lab.viewed_run()
        return None if run is None else run.snapshot_at(self.lab.scrub_step)

    def _describe_tile(self, layer: int, head: int, row: int, col: int) -> str:
        p = self._shown_probe()
        if p is None or row >= len(p.tokens) or col >= len(p.tokens):
            return ""
        return self.tr("L{layer} H{head} · query {row} ‘{q}’ → key {col} ‘{k}’ · weight {w}").format(
            layer=layer, head=head, row=row, q=p.tokens[row], col=col, k=p.tokens[col],
            w=f"{p.attentions[layer, head, row, col]:.3g}")

    def _describe_cell(self, row: int, col: int) -> str:
        layer, head = self.lab.selected
        return self._describe_tile(layer, head, row, col)

    # ---- drawing ---------------------------------------------------------------------------------------
    def draw_frame(self, frame) -> None:
        self.redraw()  # the sliders' frame is not what this panel shows: the lab's run is

    def draw_selection(self) -> None:
        pass  # the head shown large is the lab's (layer, head), drawn by redraw

    def heatmaps(self) -> list[Heatmap]:
        return [self.big]

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
        for r in lab.runs:
            self._series.setdefault(r.id, Series()).update(r.history)
        for rid in list(self._series):
            if all(r.id != rid for r in lab.runs):
                del self._series[rid]
        self._draw_loss(run)
        self._draw_lr(run)
        self._draw_heads(run)
        self._draw_scores(run)
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

    def _fresh(self, item, slot: str, value) -> bool:
        """True (and remembered) when `value` is not what `item` last got under `slot`: pyqtgraph
        repaints (and re-lays out) on every setPen / setRange, changed or not. The memory is
        the panel's own, not an attribute written onto pyqtgraph's objects."""
        key = (item, slot)  # (the item itself: an id could be reused by a later run's curve)
        if self._drawn.get(key) == value:
            return False
        self._drawn[key] = value
        return True

    def _thin(self, item) -> Thin:
        """The preallocated points of ``item`` (made on its first draw)."""
        t = self._thins.get(item)
        if t is None:
            t = self._thins[item] = Thin()
        return t

    def _set_xrange(self, plot, xmax: float) -> None:
        """plot.setXRange(0, xmax), skipped when unchanged (a range change re-lays out the axis)."""
        if self._fresh(plot, "xmax", xmax):
            plot.setXRange(0, xmax, padding=0.02)

    def _set_pen(self, item, pen) -> None:
        """item.setPen(pen), skipped when the pen is the one drawn (setPen repaints the item)."""
        if self._fresh(item, "pen", (pen.color().rgba(), pen.widthF(), pen.style())):
            item.setPen(pen)

    def _pen(self, colour, width: float = 1.0, style=None):
        """theme.pen, made once per theme (a redraw asks for ~20 pens, 10 times a second)."""
        key = (colour, width, style)
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = self.theme.pen(colour, width, style)
        return pen

    def _xmax(self, runs: list[Run]) -> float:
        return float(max(max(r.config.steps, r.steps_done) for r in runs))

    def _draw_loss(self, run: Run) -> None:
        lab, th = self.lab, self.theme
        shown = [r for r in lab.runs if r.shown or r is run]
        log = lab.log_scale
        if self._log != log:
            self._log = log
            self.loss_plot.setLogMode(y=log)
        if log:
            if self._fresh(self.loss_plot, "yrange", "auto"):
                self.loss_plot.enableAutoRange(y=True)
        else:
            # a y range that moves only when a loss leaves it: autoranging to the falling loss
            # re-laid out the axis (and with it the plot) on nearly every redraw
            top = max([math.log(run.config.vocab)] + [float(np.nanmax(self._series[r.id].loss))
                                                      for r in shown if len(self._series[r.id].loss)])
            ymax = nice_ceil(top * 1.05)
            if self._fresh(self.loss_plot, "yrange", ymax):
                self.loss_plot.setYRange(0, ymax, padding=0)
        for rid in list(self._loss_items):
            if all(r.id != rid for r in shown):
                for item in self._loss_items.pop(rid):
                    self.loss_plot.removeItem(item)
                    self._thins.pop(item, None)
        for r in shown:
            s = self._series[r.id]
            items = self._loss_items.get(r.id)
            if items is None:
                items = (_curve(self.loss_plot), _curve(self.loss_plot))
                self._loss_items[r.id] = items
            if r is run:
                colour = r.colour
            else:
                c = QColor(r.colour)
                colour = (c.red(), c.green(), c.blue(), COMPARED_ALPHA)
            for item in items:
                item.setZValue(1 if r is run else 0)
            self._set_pen(items[0], self._pen(colour, LINE_PX))
            self._set_pen(items[1], self._pen(colour, LINE_PX, Qt.PenStyle.DashLine))
            cap = points_for(self.loss_plot.vb.width())
            self._thin(items[0]).set(items[0], s.steps, s.loss, cap=cap)
            self._thin(items[1]).set(items[1], s.steps, s.pred, finite_only=True, cap=cap)
        key = (tuple((r.id, r.shown) for r in shown), th.name, th.font_scale, tuple(r.config for r in shown))
        if key != self._legend_key:
            self._legend_key = key
            self.legend.clear()
            self.legend.setLabelTextColor(th.foreground)  # (the labels added next take these)
            self.legend.setLabelTextSize(th.pt(7.5))
            labels = legend_labels(shown)
            if len(shown) > 1:  # one run: the title says what it is
                for r in shown:
                    self.legend.addItem(self._loss_items[r.id][0], labels[r.id])
        self._set_xrange(self.loss_plot, self._xmax(shown))
        chance = math.log(run.config.vocab)
        self.chance.setPos(math.log10(chance) if log else chance)
        self._set_pen(self.chance, self._pen(th.muted, 1, Qt.PenStyle.DotLine))
        if self._fresh(self.chance.label, "colour", th.muted):
            self.chance.label.setColor(QColor(th.muted))
        # the title: today's numbers, then the milestone, unmistakable
        last = run.history[-1] if run.history else None
        if last is None:
            head = self.tr("<b>Loss</b> · not trained yet · chance ln {v} = {c} nats").format(
                v=run.config.vocab, c=_num(chance))
        else:
            head = self.tr("<b>Loss</b> at step {step}: {loss} nats · predictable part (dashed) {pred} · "
                           "chance {c}").format(step=last.step, loss=_num(last.loss),
                                                pred=_num(last.loss_predictable), c=_num(chance))
        lines = [head]
        hit = run.milestone
        if hit is not None:
            wall = f" ({run.milestone_wall_s:.1f} s)" if run.milestone_wall_s else ""
            lines.append(f"<span style='color:{th.accent}'><b>★ "
                         + self.tr("Induction head formed at step {step}").format(step=hit.step)
                         + f"</b>{wall}</span>" + self._unseen_note(run))
        elif run.circuit is not None and run.circuit.verdict == "other":
            other = self.tr("Another circuit formed")
            lines.append(f"<span style='color:{th.warning}'>{other}: {run.circuit.message}</span>")
        set_plot_title(self.loss_plot, "<br>".join(lines), th)
        for line in self.milestone_lines:
            if hit is None:
                line.hide()
                continue
            line.setPos(hit.step)
            self._set_pen(line, self._pen(th.accent, LINE_PX, Qt.PenStyle.DashLine))
            line.show()
        label = self.milestone_lines[0].label
        if hit is not None and self._fresh(label, "text", (hit.step, th.accent, self.tr("induction head, step {step}"))):
            label.setFormat(self.tr("induction head, step {step}").format(step=hit.step))  # (lays its text out)
            label.setColor(QColor(th.accent))

    def _unseen_note(self, run: Run) -> str:
        """" · at the unseen prefix length 4 the loss is 2.60 nats: not a general circuit"
        once the run's circuit check (on pausing or finishing) found it tied to the trained
        lengths; "" otherwise."""
        c = run.circuit
        if c is None or c.loss_predictable_unseen is None or c.loss_predictable_unseen < 2 * SOLVED_LOSS:
            return ""
        note = self.tr("at the unseen prefix length {n} the loss is {loss} nats: not a general circuit").format(
            n=c.unseen_prefix, loss=f"{c.loss_predictable_unseen:.2f}")
        return f" · <span style='color:{self.theme.warning}'>{note}</span>"

    def _draw_lr(self, run: Run) -> None:
        th = self.theme
        s = self._series[run.id]
        c = run.config
        xmax = max(c.steps, run.steps_done)
        if self._fresh(self.lr_planned, "plan", (c, xmax)):  # the plan: MAX_POINTS steps and the warmup's end
            plan = np.unique(np.concatenate([np.linspace(1, xmax, MAX_POINTS).round(),
                                             [min(c.warmup_steps, xmax) or 1]]))
            self.lr_planned.setData(plan, planned_lr(c, plan))
        self._set_pen(self.lr_planned, self._pen(th.muted, 1, Qt.PenStyle.DotLine))
        self._thin(self.lr_used).set(self.lr_used, s.steps, s.lr, cap=points_for(self.lr_plot.vb.width()))
        self._set_pen(self.lr_used, self._pen(run.colour, LINE_PX))
        self._set_xrange(self.lr_plot, xmax)
        if self._fresh(self.lr_plot, "ymax", c.lr):
            self.lr_plot.setYRange(0, c.lr * 1.08, padding=0)
        now = s.lr[-1] if len(s.lr) else planned_lr(c, np.array([1]))[0]
        warm = self.tr(" · warmup {n}").format(n=c.warmup_steps) if c.warmup_steps else ""
        set_plot_title(self.lr_plot, self.tr("<b>Learning rate</b> {lr}{warm}").format(lr=f"{now:.2g}", warm=warm), th)

    def _draw_heads(self, run: Run) -> None:
        lab, th = self.lab, self.theme
        probe = run.snapshot_at(lab.scrub_step)
        if probe is None:
            set_plot_title(self.grid.plot, self.tr("<b>Heads</b> · preparing the model…"), th)
            return
        L, H = probe.attentions.shape[:2]
        self.grid.set_data(probe.attentions, tile_labels(probe))
        layer, head = lab.selected
        layer, head = min(layer, L - 1), min(head, H - 1)
        self.grid.set_selection(layer, head)
        replay = lab.scrub_step is not None and probe is not run.latest
        at = self.tr("<b>Heads at step {step}</b>").format(step=probe.step)
        if replay:
            latest = run.latest.step if run.latest is not None else run.steps_done
            note = self.tr("replay; training is at step {now}").format(now=latest)
            at += f" · <span style='color:{th.accent2}'>{note}</span>"
        at += f"<br><span style='color:{th.muted}'>" + self.tr(
            "probe sequence · click a head to see it large") + "</span>"
        set_plot_title(self.grid.plot, at, th)
        self.big.set_labels(probe.tokens, probe.tokens)
        self.big.set_data(probe.attentions[layer, head], (0.0, 1.0))
        self.big.set_title(self.tr(
            "<b>L{layer} H{head}</b> at step {step} · induction {ind} · previous-token {prev} · entropy {ent}").format(
            layer=layer, head=head, step=probe.step, ind=f"{probe.scores['induction'][layer, head]:.2f}",
            prev=f"{probe.scores['previous_token'][layer, head]:.2f}",
            ent=f"{probe.entropy_norm[layer, head]:.2f}"))

    def _draw_scores(self, run: Run) -> None:
        th = self.theme
        s = self._series[run.id]
        c = run.config
        n_curves = c.n_layers * c.n_heads
        xmax = max(c.steps, run.steps_done)
        rebuilt = False
        for name, title in SCORE_PLOTS:
            plot = self.score_plots[name]
            items = self._head_items[name]
            while len(items) > n_curves:
                gone = items.pop()
                plot.removeItem(gone)
                self._thins.pop(gone, None)
                rebuilt = True
            while len(items) < n_curves:
                items.append(_line(plot))
                rebuilt = True
            data = s.head(name)
            cap = points_for(plot.vb.width())
            for i, item in enumerate(items):
                layer, head = divmod(i, c.n_heads)
                colour = CATEGORY_COLORS[i % len(CATEGORY_COLORS)]
                style = Qt.PenStyle.SolidLine if layer % 2 == 0 else Qt.PenStyle.DashLine
                self._set_pen(item, self._pen(colour, LINE_PX, style))
                if data is None:
                    item.setData([], [])
                else:
                    self._thin(item).set(item, s.steps, data[:, layer, head], cap=cap)
            self._set_xrange(plot, xmax)
            line = self.thresholds.get(name)
            if line is not None:
                self._set_pen(line, self._pen(th.muted, 1, Qt.PenStyle.DotLine))
            text = f"<b>{_tr(title)}</b>"
            if data is not None and len(data):
                last = data[-1]
                if name == "previous_token":
                    text += self.tr(" · best layer-0 head {v} (line: {t})").format(
                        v=f"{np.nanmax(last[0]):.2f}", t=PREVIOUS_TOKEN_THRESHOLD)
                elif name == "induction":
                    later = last[1:] if c.n_layers > 1 else last
                    text += self.tr(" · best later head {v} (line: {t})").format(
                        v=f"{np.nanmax(later):.2f}", t=INDUCTION_THRESHOLD)
                else:
                    text += self.tr(" · lowest {v}").format(v=f"{np.nanmin(last):.2f}")
            set_plot_title(plot, text, th, size=9.0)
        key = (n_curves, c.n_heads, th.name, th.font_scale)
        if rebuilt or key != getattr(self, "_head_legend_key", None):
            self._head_legend_key = key
            self.head_legend.clear()
            self.head_legend.setLabelTextColor(th.foreground)
            self.head_legend.setLabelTextSize(th.pt(7.0))
            for i, item in enumerate(self._head_items["entropy_norm"]):
                layer, head = divmod(i, c.n_heads)
                self.head_legend.addItem(item, f"L{layer}H{head}")
        step = self.lab.scrub_step
        for line in self.scrub_lines:
            if step is None:
                line.hide()
            else:
                line.setPos(step)
                self._set_pen(line, self._pen(th.accent2, LINE_PX))
                line.show()

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
            _set_text(self.timeline_step, self.tr("step {n} (live)").format(n=shown))
        else:
            _set_text(self.timeline_step, self.tr("step {n} of {total}").format(n=shown, total=run.steps_done))
        self.live_button.setEnabled(step is not None)

    # ---- look --------------------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        for plot in (self.loss_plot, self.lr_plot, *self.score_plots.values()):
            style_plot(plot, theme)
        self.grid.apply_theme(theme)
        style_colorbar(self.cbar, theme)
        self._legend_key = None
        self._head_legend_key = None
        self._pens = {}
        super().apply_theme(theme)
        self._sync_controls()
        self.redraw()

    _head_legend_key = None
    _log = False
    _drawn_at = 0.0

