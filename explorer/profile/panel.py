"""`profile`: the length profile, time and peak memory of each backend as S doubles.

    time of one layer vs S (log–log)      | peak memory a run adds vs S (log–log)
    O(n²) and O(n) guides through the first points; hollow markers: not run, the estimate
    a note: the config, the crossover, what each number measures  ·  a table: every point's numbers

The efficient variants (linear, performer, local + global, hierarchical) are rows like the
backends, to S = 65,536 (full attention's stop at 16,384: past it, not run, at their
estimate). Where linear and full attention were both measured, the S from which linear is
faster (`engine.profile.crossover`) is a dashed line on the time plot and a line of the note.

The numbers are `engine.profile.length_profile`'s, measured off the UI thread (see
state.py); the panel draws the window's `ProfileState`, so an export draws the last
results (or says none were measured) and never starts measuring.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QPointF, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.memory import format_bytes
from engine.profile import (
    ALL_BACKENDS,
    BACKENDS,
    MAX_LENGTH,
    Crossover,
    ProfilePoint,
    config_shape,
    crossover,
    format_seconds,
)

from ..figures.plots import (
    add_plot,
    lean_axes,
    set_axis_label,
    set_label_text,
    set_plot_title,
    style_plot,
)
from ..figures.tables import setup_table, style_table
from ..figures.text import RunsLabel
from ..figures.themes import Theme
from ..panels.base import Panel, register_panel
from .curves import STYLE, Curves, point_value
from .state import LENGTH_CHOICES, ProfileState, doubling

#: what a backend's line is called in the legend and the table
NAMES = {"eager": QT_TRANSLATE_NOOP("ProfilePanel", "eager (materialises the grids)"),
         "sdpa": QT_TRANSLATE_NOOP("ProfilePanel", "sdpa (fused)"),
         "flash": QT_TRANSLATE_NOOP("ProfilePanel", "flash (fused, tiled kernel)"),
         "tiled": QT_TRANSLATE_NOOP("ProfilePanel", "tiled reference (plain torch)"),
         "linear": QT_TRANSLATE_NOOP("ProfilePanel", "linear attention (elu + 1)"),
         "performer": QT_TRANSLATE_NOOP("ProfilePanel", "performer (FAVOR+, m = 64)"),
         "local+global": QT_TRANSLATE_NOOP("ProfilePanel", "local + global (window 256, 16 global)"),
         "hierarchical": QT_TRANSLATE_NOOP("ProfilePanel", "hierarchical (blocks of 256)")}
#: y ticks: seconds (decades) and bytes (1, 10, 100 of each binary unit)
TIME_TICKS = [(10.0**k, label) for k, label in zip(range(-6, 4), (
    "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s", "1000 s"), strict=True)]
BYTE_TICKS = [(m * 1024**e, f"{m} {u}") for e, u in ((1, "KiB"), (2, "MiB"), (3, "GiB"), (4, "TiB"))
              for m in (1, 10, 100)]
#: the table grows with its rows up to this height, then scrolls
TABLE_MAX_PX = 260
#: the y range of an empty plot (log10 of seconds, bytes)
EMPTY_Y = {"time": (-4.0, 1.0), "memory": (6.0, 9.5)}


def _tr(text: str) -> str:
    return QCoreApplication.translate("ProfilePanel", text)


#: the texts `_tr` translates at run time, marked for lupdate (a variable's text is not found)
TR_TEXTS = (
    QT_TRANSLATE_NOOP("ProfilePanel", "not run: full attention is measured to S = {max} (its time grows as n²); it would need {need}"),
    QT_TRANSLATE_NOOP("ProfilePanel", "not run: would need {need}, over the {budget} memory budget"),
    QT_TRANSLATE_NOOP("ProfilePanel", "no numbers: {why}"),
    QT_TRANSLATE_NOOP("ProfilePanel", "not readable here"),
    QT_TRANSLATE_NOOP("ProfilePanel", "time: {t} (median of {n}: {runs})"),
    QT_TRANSLATE_NOOP("ProfilePanel", "peak memory added: {peak} (estimate {est})"),
    QT_TRANSLATE_NOOP("ProfilePanel", "ran: {impl}"),
    QT_TRANSLATE_NOOP("ProfilePanel", "not run (> {max})"),
    QT_TRANSLATE_NOOP("ProfilePanel", "not run: would need {need}"),
    QT_TRANSLATE_NOOP("ProfilePanel", "failed"),
    QT_TRANSLATE_NOOP("ProfilePanel", "<b>Crossover</b>: {variant} beats {exact} from S ≈ {S} on this machine (slower at S = {below}, faster at S = {above} and every S measured after)"),
    QT_TRANSLATE_NOOP("ProfilePanel", "<b>Crossover</b>: {variant} beats {exact} at every S measured (S = {first} to {last})"),
    QT_TRANSLATE_NOOP("ProfilePanel", "<b>Crossover</b>: {variant} never beats {exact} up to S = {last}"),
    QT_TRANSLATE_NOOP("ProfilePanel", "<b>Crossover</b>: measure {variant} beside flash, sdpa or eager to see where it wins"),
    QT_TRANSLATE_NOOP("ProfilePanel", "not measured yet — press Measure"),
)


def _length_label(S: int) -> str:
    return f"{S // 1024}K" if S >= 1024 and S % 1024 == 0 else str(S)


def point_text(p: ProfilePoint) -> str:
    """A point's numbers, for its tooltip and table cell's tooltip."""
    head = f"S = {p.seq_len} · {_tr(NAMES[p.backend])}"
    if p.estimated and p.note:
        return "\n".join((head, _tr("not run: full attention is measured to S = {max} (its time grows as n²); "
                                    "it would need {need}").format(max=MAX_LENGTH, need=format_bytes(p.estimate_bytes))))
    if p.estimated:
        return "\n".join((head, _tr("not run: would need {need}, over the {budget} memory budget").format(
            need=format_bytes(p.estimate_bytes), budget=format_bytes(p.budget_bytes))))
    if p.error:
        return "\n".join((head, _tr("no numbers: {why}").format(why=p.error)))
    runs = ", ".join(format_seconds(s) for s in p.samples)
    peak = _tr("not readable here") if p.peak_bytes is None else format_bytes(p.peak_bytes)
    lines = [head,
             _tr("time: {t} (median of {n}: {runs})").format(t=format_seconds(p.seconds), n=len(p.samples), runs=runs),
             _tr("peak memory added: {peak} (estimate {est})").format(peak=peak, est=format_bytes(p.estimate_bytes))]
    if p.impl:
        lines.append(_tr("ran: {impl}").format(impl=p.impl))
    return "\n".join(lines)


def cell_text(p: ProfilePoint | None, pending: bool = False) -> str:
    """A table cell: 'time · memory', 'not run: would need …', 'failed', '…' (to come while
    measuring) or '—' (not measured)."""
    if p is None:
        return "…" if pending else "—"
    if p.estimated and p.note:
        return _tr("not run (> {max})").format(max=MAX_LENGTH)
    if p.estimated:
        return _tr("not run: would need {need}").format(need=format_bytes(p.estimate_bytes))
    if p.error:
        return _tr("failed")
    peak = "?" if p.peak_bytes is None else format_bytes(p.peak_bytes)
    return f"{format_seconds(p.seconds)} · {peak}"


def crossover_text(c: Crossover) -> str:
    """The crossover's line of the note (rich text), in the current language."""
    if c.kind == "crosses":
        return _tr("<b>Crossover</b>: {variant} beats {exact} from S ≈ {S} on this machine "
                   "(slower at S = {below}, faster at S = {above} and every S measured after)").format(
            variant=c.variant, exact=c.exact, S=f"{c.seq_len:,.0f}", below=f"{c.below:,}", above=f"{c.above:,}")
    if c.kind == "always":
        return _tr("<b>Crossover</b>: {variant} beats {exact} at every S measured (S = {first} to {last})").format(
            variant=c.variant, exact=c.exact, first=f"{c.above:,}", last=f"{c.longest:,}")
    if c.kind == "never":
        return _tr("<b>Crossover</b>: {variant} never beats {exact} up to S = {last}").format(
            variant=c.variant, exact=c.exact, last=f"{c.longest:,}")
    return _tr("<b>Crossover</b>: measure {variant} beside flash, sdpa or eager to see where it wins").format(
        variant=c.variant)


@register_panel
class ProfilePanel(Panel):
    name = "profile"
    title = QT_TRANSLATE_NOOP("Panel", "Length profile: time and memory as S grows")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        if state.profile is None:  # the window's is made by install_profile
            state.profile = ProfileState()
        self.state: ProfileState = state.profile
        self._build_controls()
        self.time_plot = self._plot(0, "time")
        self.mem_plot = self._plot(1, "memory")
        self.note = RunsLabel("", justify="left", size="9pt")
        self.graphics.ci.addItem(self.note, row=1, col=0, colspan=2)
        # each backend's items, made the first time it is drawn (most profiles show a few)
        self.curves: dict[str, dict[str, Curves]] = {"time": {}, "memory": {}}
        # the S from which linear is faster: a dashed line on the time plot, labelled near its foot
        self.cross_line = pg.InfiniteLine(angle=90, movable=False, label="",
                                          labelOpts={"position": 0.06, "anchors": [(0, 1), (0, 1)]})
        self.cross_line.setZValue(3)
        self.cross_line.hide()
        self.time_plot.addItem(self.cross_line, ignoreBounds=True)
        # (texts set here, not later: a text item cached as a pixmap while empty stays blank)
        self.guides = {kind: [(plot.plot([], []), pg.TextItem(text, anchor=(1, 0))) for text in ("O(n²)", "O(n)")]
                       for kind, plot in (("time", self.time_plot), ("memory", self.mem_plot))}
        for kind, plot in (("time", self.time_plot), ("memory", self.mem_plot)):
            for _line, label in self.guides[kind]:
                plot.addItem(label, ignoreBounds=True)
        self.placeholders = {}
        for kind, plot in (("time", self.time_plot), ("memory", self.mem_plot)):
            t = pg.TextItem(_tr("not measured yet — press Measure"), anchor=(0.5, 0.5))
            plot.addItem(t, ignoreBounds=True)
            self.placeholders[kind] = t
        self.estimate_labels: list[pg.TextItem] = []
        self.legend = pg.LegendItem(offset=(8, 8), verSpacing=-4)
        self._guide_at: dict[int, tuple[float, float, tuple[float, float]]] = {}  # label → its own place
        self.time_plot.vb.sigResized.connect(self._keep_guides_off_the_legend)
        self.legend.setParentItem(self.time_plot.vb)
        self._legend_key = None
        self.table = setup_table(QTableWidget(), "profile_table", select_rows=False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.layout().addWidget(self.table)
        self.state.changed.connect(self._on_state_changed)
        self._stale = False
        self._drawn: dict = {}  # what each part was last drawn from (see _fresh)
        self._cells: dict = {}  # (row, col) → (point, running) the table cell shows
        self._retranslate_labels()
        self._sync_controls()

    # ---- construction ------------------------------------------------------------------------
    def _build_controls(self) -> None:
        self.controls = QWidget()
        # two rows: the sweep, full attention's backends and the buttons; the variants and the status
        rows = QVBoxLayout(self.controls)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(2)
        row, second = QHBoxLayout(), QHBoxLayout()
        rows.addLayout(row)
        rows.addLayout(second)
        self.variants_label = QLabel()
        self.from_label, self.to_label, self.repeats_label = QLabel(), QLabel(), QLabel()
        self.first = QComboBox()
        self.last = QComboBox()
        for S in LENGTH_CHOICES:
            self.first.addItem(str(S), S)
            self.last.addItem(str(S), S)
        self.first.setObjectName("profile_first")
        self.last.setObjectName("profile_last")
        self.from_label.setBuddy(self.first)
        self.to_label.setBuddy(self.last)
        self.checks: dict[str, QCheckBox] = {}
        for w in (self.from_label, self.first, self.to_label, self.last):
            row.addWidget(w)
        row.addSpacing(8)
        second.addWidget(self.variants_label)
        for b in ALL_BACKENDS:
            box = QCheckBox(b)
            box.setObjectName(f"profile_{b}")
            box.toggled.connect(self._on_settings)
            self.checks[b] = box
            (row if b in BACKENDS else second).addWidget(box)
        row.addSpacing(8)
        self.repeats = QSpinBox()
        self.repeats.setObjectName("profile_repeats")
        self.repeats.setRange(1, 9)
        self.repeats_label.setBuddy(self.repeats)
        row.addWidget(self.repeats_label)
        row.addWidget(self.repeats)
        self.measure_button = QPushButton()
        self.measure_button.setObjectName("profile_measure")
        self.measure_button.clicked.connect(self.measure)
        self.cancel_button = QPushButton()
        self.cancel_button.setObjectName("profile_cancel")
        self.cancel_button.clicked.connect(self.state.cancel)
        row.addWidget(self.measure_button)
        row.addWidget(self.cancel_button)
        self.progress = QProgressBar()
        self.progress.setObjectName("profile_progress")
        self.progress.setMaximumWidth(160)
        row.addWidget(self.progress)
        self.status = QLabel()
        self.status.setObjectName("hint")
        row.addStretch(1)
        second.addSpacing(12)
        second.addWidget(self.status, 1)
        self.first.currentIndexChanged.connect(self._on_settings)
        self.last.currentIndexChanged.connect(self._on_settings)
        self.repeats.valueChanged.connect(self._on_settings)
        self.toolbar.addWidget(self.controls, 1)
        self.toolbar.addSpacing(24)  # the panel's "?" sits in the corner

    def _plot(self, col: int, kind: str):
        plot = add_plot(self.graphics.ci, 0, col, axisItems=lean_axes())
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.showGrid(x=True, y=True, alpha=0.15)
        ticks = TIME_TICKS if kind == "time" else BYTE_TICKS
        plot.getAxis("left").setTicks([[(math.log10(v), s) for v, s in ticks], []])
        return plot

    # ---- language ------------------------------------------------------------------------------
    def _retranslate_labels(self) -> None:
        self.from_label.setText(self.tr("S from"))
        self.variants_label.setText(self.tr("ways out of O(n²):"))
        self.variants_label.setToolTip(self.tr("The efficient variants, each on full attention's layer: they may "
                                               "go to S = 65,536 (full attention stops at 16,384)"))
        self.to_label.setText(self.tr("to"))
        self.repeats_label.setText(self.tr("repeats"))
        self.repeats.setToolTip(self.tr("Runs per point; the time is their median, the memory the first run's"))
        self.measure_button.setText(self.tr("Measure"))
        self.measure_button.setToolTip(self.tr("Measure every backend at every length for the current config "
                                               "(in a separate process; the window stays usable)"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.cancel_button.setToolTip(self.tr("Stop now; the points measured so far stay"))
        for b, box in self.checks.items():
            box.setToolTip(_tr(NAMES[b]))
        for plot in (self.time_plot, self.mem_plot):
            set_axis_label(plot, "bottom", self.tr("sequence length S (tokens)"))
        set_axis_label(self.time_plot, "left", self.tr("time of one run"))
        set_axis_label(self.mem_plot, "left", self.tr("peak memory added"))
        self._legend_key = None

    def retranslate_ui(self) -> None:
        self._drawn.clear()  # the table's and tooltips' texts are in the old language
        self._cells.clear()
        self._retranslate_labels()
        super().retranslate_ui()
        self._sync_controls()
        self.redraw()

    # ---- controls and state ------------------------------------------------------------------------
    def _sync_controls(self) -> None:
        """Mirror the state's settings and progress in the controls (signals blocked)."""
        st = self.state
        widgets = (self.first, self.last, self.repeats, *self.checks.values())
        for w in widgets:
            w.blockSignals(True)
        try:
            self.first.setCurrentIndex(max(0, self.first.findData(st.lengths[0])))
            self.last.setCurrentIndex(max(0, self.last.findData(st.lengths[-1])))
            self.repeats.setValue(st.repeats)
            for b, box in self.checks.items():
                box.setChecked(b in st.backends)
        finally:
            for w in widgets:
                w.blockSignals(False)
        for w in widgets:
            w.setEnabled(not st.running)
        self.measure_button.setEnabled(not st.running and bool(st.backends))
        self.cancel_button.setEnabled(st.running)
        self.progress.setVisible(st.running)
        self.progress.setRange(0, max(1, st.total))
        self.progress.setValue(st.done)
        self.status.setText(self._status_text())

    def _status_text(self) -> str:
        st = self.state
        if st.running:
            nxt = st.next_point()
            if nxt is None:
                return self.tr("finishing…")
            return self.tr("measuring {backend} at S = {S} ({done} of {total} done)").format(
                backend=nxt[1], S=nxt[0], done=st.done, total=st.total)
        if st.error:
            return self.tr("failed: {why}").format(why=st.error)
        if st.cancelled:
            return self.tr("cancelled: {n} of {total} points measured").format(n=len(st.points), total=st.total)
        if not st.backends:
            return self.tr("choose at least one backend")
        return ""

    def _on_settings(self, *_args) -> None:
        first, last = self.first.currentData(), self.last.currentData()
        if first > last:  # the range follows the combo just changed
            if self.sender() is self.first:
                last = first
            else:
                first = last
        self.state.set_settings(lengths=doubling(first, last),
                                backends=[b for b, box in self.checks.items() if box.isChecked()],
                                repeats=self.repeats.value())

    def measure(self) -> bool:
        """Measure the window's current config (the one the sliders show)."""
        config = self.app_state.config
        if config is None and self.frame is not None:
            config = self.frame.config
        if config is None:
            return False
        return self.state.measure(config)

    def _on_state_changed(self, what: str) -> None:
        self._sync_controls()
        if what == "settings" and self.state.running:
            return
        if not self.isVisible():
            self._stale = True
            return
        self.redraw()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        # a figure (an export's offscreen panel) shows the plots and the table, not the controls
        self.controls.setVisible(not self.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen))
        if self._stale:
            self._stale = False
            self.redraw()

    def detach(self) -> None:
        super().detach()
        try:
            self.state.changed.disconnect(self._on_state_changed)
        except (RuntimeError, TypeError):
            pass

    # ---- drawing ---------------------------------------------------------------------------------------
    def draw_frame(self, frame) -> None:
        self.redraw()  # the points are the state's (of the config measured), not this frame's

    def draw_selection(self) -> None:
        pass  # nothing here depends on the selected head or cell

    def _tip(self, x, y, data) -> str:
        return point_text(data) if isinstance(data, ProfilePoint) else ""

    def _lengths(self) -> tuple[int, ...]:
        st = self.state
        if st.plan:
            return tuple(sorted({S for S, _b in st.plan}))
        return st.lengths

    def _backends(self) -> list[str]:
        st = self.state
        shown = {b for _S, b in st.plan} if st.plan else set(st.backends)
        return [b for b in ALL_BACKENDS if b in shown]

    def redraw(self) -> None:
        st, th = self.state, self.theme
        lengths, backends = self._lengths(), self._backends()
        points = st.points
        xr = (math.log10(lengths[0]) - 0.12, math.log10(lengths[-1]) + 0.12)
        ticks = [[(math.log10(S), _length_label(S)) for S in lengths], []]
        for kind, plot in (("time", self.time_plot), ("memory", self.mem_plot)):
            plot.getAxis("bottom").setTicks(ticks)
            drawn: list[ProfilePoint] = []
            for b in ALL_BACKENDS:
                mine = sorted((p for p in points if p.backend == b), key=lambda p: p.seq_len)
                mine = mine if b in backends else []
                curves = self.curves[kind].get(b)
                if curves is None and b in backends:
                    curves = self.curves[kind][b] = Curves(plot, b, self._tip)
                if curves is not None and self._fresh((kind, b), (tuple(mine), th)):  # a new point: its backend
                    curves.set_data(kind, mine, th)
                drawn += [p for p in mine if p.estimated and not p.note and kind == "memory"]
            if kind == "memory":
                self._label_estimates(drawn)
            ys = [math.log10(v) for p in points if (v := point_value(p, kind)) is not None]
            ys += [math.log10(p.estimate_bytes) for p in points if p.estimated and kind == "memory"]
            lo, hi = (min(ys) - 0.25, max(ys) + 0.45) if ys else EMPTY_Y[kind]
            if hi - lo < 1.5:  # at least a decade and a half: the slopes stay readable
                mid = (lo + hi) / 2
                lo, hi = mid - 0.75, mid + 0.75
            plot.setRange(xRange=xr, yRange=(lo, hi), padding=0)
            self._draw_guides(kind, points, (xr, (lo, hi)))
            holder = self.placeholders[kind]
            if points or st.running:
                holder.hide()
            else:
                holder.setText(self.tr("not measured yet — press Measure"))
                holder.setColor(QColor(th.muted))
                holder.setFont(th.font(10.0))
                holder.setPos((xr[0] + xr[1]) / 2, (lo + hi) / 2)
                holder.show()
        self._draw_crossover(backends)
        self._draw_titles()
        self._draw_legend(backends)
        self._keep_guides_off_the_legend()
        self._fill_table(lengths, backends)

    def _keep_guides_off_the_legend(self, *_args) -> None:
        """A guide's label over the legend (a steep O(n²) ends top left) goes just under it;
        redone from its own place on every resize (the legend keeps pixels, a label values)."""
        vb = self.time_plot.vb
        legend = self.legend.sceneBoundingRect()
        for _line, label in self.guides["time"]:
            at = self._guide_at.get(id(label))
            if at is None or not label.isVisible():
                continue
            label.setAnchor(at[2])
            label.setPos(at[0], at[1])
            box = label.sceneBoundingRect()
            if self.legend.isVisible() and box.intersects(legend):
                below = vb.mapSceneToView(QPointF(box.left(), legend.bottom() + 2))
                label.setAnchor((0.0, 0.0))
                label.setPos(below.x(), below.y())

    def _fresh(self, slot, value) -> bool:
        """True (and remembered) when ``value`` is not what ``slot`` was last drawn from: a
        point arriving redraws only what it changes (the panel's own memory, nothing written
        onto pyqtgraph's items)."""
        if self._drawn.get(slot) == value:
            return False
        self._drawn[slot] = value
        return True

    def _draw_guides(self, kind: str, points: list[ProfilePoint], view) -> None:
        """O(n²) through the highest, O(n) through the lowest value at the shortest S measured,
        drawn until they leave the view; labelled at their far end."""
        (_x0, x1v), (_lo, hi) = view
        th = self.theme
        vals = [(p.seq_len, v) for p in points if not p.estimated and (v := point_value(p, kind)) is not None]
        if not self._fresh(("guides", kind), (tuple(vals), view, th)):
            return
        pairs = self.guides[kind]
        if not vals:
            for line, label in pairs:
                line.setData([], [])
                label.hide()
            return
        S0 = min(S for S, _v in vals)
        at_s0 = [v for S, v in vals if S == S0]
        anchors = ((2, max(at_s0), "O(n²)"), (1, min(at_s0), "O(n)"))
        for (line, label), (power, v0, _text) in zip(pairs, anchors, strict=True):
            x0, y0 = math.log10(S0), math.log10(v0)
            x1 = x1v - 0.02
            y1 = y0 + power * (x1 - x0)
            top = y1 > hi - 0.05
            if top:  # leaves through the top: stop there, the label beside its end
                y1 = hi - 0.05
                x1 = x0 + (y1 - y0) / power
            # right of a top end when there is room, else below-left of the end (under the line)
            anchor = (-0.1, 0.0) if top and x1 < x1v - 0.35 else (1.0, 0.0)
            label.setAnchor(anchor)
            self._guide_at[id(label)] = (x1, y1, anchor)
            line.setData([x0, x1], [y0, y1])
            line.setPen(th.pen(th.muted, 1.5, Qt.PenStyle.DotLine))
            label.setColor(QColor(th.muted))
            label.setFont(th.font(9.0))
            label.setPos(x1, y1)
            label.show()

    def _label_estimates(self, estimated: list[ProfilePoint]) -> None:
        """'would need 24 GiB' to the left of each hollow marker."""
        th = self.theme
        while len(self.estimate_labels) < len(estimated):
            t = pg.TextItem(anchor=(1.0, 0.5))
            t.setZValue(6)
            self.mem_plot.addItem(t, ignoreBounds=True)
            self.estimate_labels.append(t)
        for i, t in enumerate(self.estimate_labels):
            if i < len(estimated):
                p = estimated[i]
                t.setText(self.tr("would need {need}").format(need=format_bytes(p.estimate_bytes)))
                t.setColor(QColor(STYLE[p.backend][0]))
                t.setFont(th.font(8.5))
                t.setPos(math.log10(p.seq_len) - 0.04, math.log10(p.estimate_bytes))
                t.show()
            else:
                t.hide()  # (never emptied: see the guides)

    def _draw_titles(self) -> None:
        st, th = self.state, self.theme
        reps = st.repeats if not st.points else max((len(p.samples) for p in st.points if p.samples), default=1)
        set_plot_title(self.time_plot, self.tr("<b>Time</b> of one run vs S · median of {n} · log–log").format(
            n=reps), th)
        budget = st.points[0].budget_bytes if st.points else None
        if any(p.note for p in st.points):
            over = self.tr(" · hollow: not run (over the {budget} budget, or full attention past S = {max})").format(
                budget=format_bytes(budget), max=MAX_LENGTH)
        elif any(p.estimated for p in st.points):
            over = self.tr(" · hollow: not run, over the {budget} budget").format(budget=format_bytes(budget))
        else:
            over = ""
        set_plot_title(self.mem_plot, self.tr("<b>Peak memory</b> a run adds vs S{over}").format(over=over), th)
        muted = th.muted
        if st.config is None:
            first = self.tr("Not measured yet: press Measure to profile the current config.")
        else:
            shape = config_shape(st.config)
            if st.running:
                first = self.tr("<b>Measuring</b> {shape} · {done} of {total} points").format(
                    shape=shape, done=st.done, total=st.total)
            else:
                first = self.tr("<b>Measured</b> {shape} · {n} points in {t} s").format(
                    shape=shape, n=len(st.points), t=f"{st.elapsed_s:.0f}")
        how = self.tr("time: engine.run of the config at each S (projections, attention, W_O; tiled: "
                      "engine.tiled_attention alone), one torch thread · memory: the peak resident memory "
                      "the first run added in the measuring process (Linux VmHWM) · not run: "
                      "engine.memory_estimate over the budget")
        cross = self.crossover_line()
        cross = f"<br>{cross}" if cross else ""
        set_label_text(self.note, f"{first}{cross}<br><span style='color:{muted}'>{how}</span>",
                       color=th.foreground, size=th.pt(8.5))

    def crossover(self) -> Crossover | None:
        """Linear attention against flash (else sdpa, else eager) as measured, or None when
        linear is not part of the profile."""
        if "linear" not in self._backends():
            return None
        return crossover(self.state.points)

    def crossover_line(self) -> str:
        """The note's crossover line (rich text; "" without a linear row): where linear's
        measured time beats flash (or sdpa, eager), or that it never does up to the longest S."""
        c = self.crossover()
        if c is None or (c.kind == "unmeasured" and self.state.running):
            return ""
        return crossover_text(c)

    def _draw_crossover(self, backends: list[str]) -> None:
        """The dashed vertical line at the crossover's S on the time plot (hidden otherwise)."""
        c = self.crossover() if "linear" in backends else None
        th = self.theme
        if c is None or c.kind != "crosses":
            self.cross_line.hide()
            return
        self.cross_line.show()  # (first: a hidden line's label keeps its old text)
        self.cross_line.setPos(math.log10(c.seq_len))
        self.cross_line.setPen(th.pen(STYLE["linear"][0], 1.5, Qt.PenStyle.DashLine))
        self.cross_line.label.setFormat(self.tr("linear < {exact} from S ≈ {S}").format(
            exact=c.exact, S=f"{c.seq_len:,.0f}"))
        self.cross_line.label.setColor(QColor(th.foreground))
        self.cross_line.label.setFont(th.font(8.5))

    def _draw_legend(self, backends: list[str]) -> None:
        th = self.theme
        key = (tuple(backends), th.name, th.font_scale, th.line_scale)
        if key == self._legend_key:
            return
        self._legend_key = key
        self.legend.clear()
        self.legend.setLabelTextColor(th.foreground)  # (the labels added next take these)
        self.legend.setLabelTextSize(th.pt(8.0))
        self._samples = []
        for b in backends:
            colour, symbol = STYLE[b]
            sample = pg.PlotDataItem([], [], pen=th.pen(colour, 2), symbol=symbol, symbolBrush=colour,
                                     symbolPen=th.pen(colour, 1), symbolSize=8 * th.font_scale)
            self._samples.append(sample)  # (not drawn: the legend's picture of the line)
            self.legend.addItem(sample, _tr(NAMES[b]))
        self.legend.setBrush(pg.mkBrush(QColor(th.background)))

    def _fill_table(self, lengths, backends: list[str]) -> None:
        th, t = self.theme, self.table
        cells = {(p.seq_len, p.backend): p for p in self.state.points}
        if self._fresh("table shape", (tuple(lengths), tuple(backends), th)):
            t.clear()
            t.setRowCount(len(lengths))
            t.setColumnCount(len(backends))
            t.setHorizontalHeaderLabels(backends)
            t.setVerticalHeaderLabels([f"S = {S}" for S in lengths])
            for r in range(len(lengths)):
                for c in range(len(backends)):
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    t.setItem(r, c, item)
            self._cells = {}
        italic = QFont(t.font())
        italic.setItalic(True)
        for r, S in enumerate(lengths):
            for c, b in enumerate(backends):
                p = cells.get((S, b))
                key = (p, self.state.running)
                if self._cells.get((r, c)) == key:  # only the cells that changed
                    continue
                self._cells[(r, c)] = key
                item = t.item(r, c)
                item.setText(cell_text(p, self.state.running))
                item.setToolTip(point_text(p) if p is not None else "")
                quiet = p is not None and (p.estimated or p.error)
                item.setFont(italic if quiet else t.font())
                item.setForeground(QColor(th.warning if p is not None and p.error else
                                          th.muted if quiet else th.foreground))
        t.resizeRowsToContents()
        frame = 2 * self.table.frameWidth()
        self.table.setFixedHeight(min(self.table.horizontalHeader().height() + self.table.verticalHeader().length()
                                      + frame, TABLE_MAX_PX))

    # ---- look --------------------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        for plot in (self.time_plot, self.mem_plot):
            style_plot(plot, theme)
        self._legend_key = None
        self._drawn.clear()
        self._cells.clear()
        style_table(self.table, theme)
        super().apply_theme(theme)  # (texts inside the plots stay uncached: cache_static_items)
        self.redraw()
