"""The training panel's figures, drawn from the lab's runs (explorer.training.lab):

    loss (every shown run, total and predictable part)   | learning rate
    heads: every layer × head on the probe sequence      | the selected head, large, with tokens
    normalised entropy | previous-token score | induction score   (one curve per head)

with the milestone (engine.training.induction_reached) and the replayed step of the panel's
timeline as vertical lines. `TrainingFigures` builds them into the panel's graphics layout
and redraws them ~10 times a second while training, so every setter is skipped when what it
would set is what is drawn (`_fresh`). Its texts are the panel's: translated in the context
"TrainingPanel" (explorer.training.texts).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QColor

from engine.numbers import fixed
from engine.training import TrainConfig
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
)
from ..figures.text import titled
from ..figures.themes import CATEGORY_COLORS, WEIGHTS_CMAP, Theme
from ..i18n import engine_text
from .forming import tile_labels
from .grid import HeadGrid
from .lab import Run, TrainingLab
from .series import MAX_POINTS, Series, Thin, points_for
from .texts import legend_labels, num, translate, translated

#: the score curves: (TrainStep attribute or score name, title)
SCORE_PLOTS = (
    ("entropy_norm", QT_TRANSLATE_NOOP("TrainingPanel", "Entropy (1 = uniform)")),
    ("previous_token", QT_TRANSLATE_NOOP("TrainingPanel", "Previous-token score")),
    ("induction", QT_TRANSLATE_NOOP("TrainingPanel", "Induction score")),
)
#: every line the lab draws is this wide in pixels (times the theme's line scale: 2 on
#: slides). Qt draws a 1-px cosmetic line, solid or dashed, directly and strokes a wider one
#: into polygons first: with the loss at 2 px and the 12 score curves and the milestone lines
#: at 1.5 px, a redraw of the default run took 31.2 M instructions, with 1-px lines 24.2 M
#: (callgrind, 60 warm redraws with their paints). The viewed run stands out from compared
#: ones by their colours faded to COMPARED_ALPHA and by being drawn over them.
LINE_PX = 1.0
COMPARED_ALPHA = 140


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


def _curve(plot) -> pg.PlotDataItem:
    """A curve given at most MAX_POINTS points (series.Thin), unchecked for NaN. A
    PlotDataItem: the loss plot's log scale needs one."""
    item = plot.plot([], [])
    item.setSkipFiniteCheck(True)
    return item


def nan_best(values, pick) -> float:
    """The largest (`pick` max) or smallest (min) finite value of `values`; NaN when none is
    (a run whose weights overflowed), without numpy's all-NaN warning."""
    a = np.asarray(values, dtype=float)
    a = a[np.isfinite(a)]
    return float(pick(a)) if a.size else float("nan")


def _line(plot) -> pg.PlotCurveItem:
    """A bare curve for the per-head score plots (linear axes): one item where a
    PlotDataItem is three (itself, its curve, its scatter) and re-checks its data's bounds
    twice on every setData; 12 of them redraw 10 times a second."""
    item = pg.PlotCurveItem(skipFiniteCheck=True)
    plot.addItem(item)
    return item


class TrainingFigures:
    """The panel's plots in ``ci`` (its GraphicsLayout), drawn from ``lab`` in ``theme``:
    `draw(run)` for the viewed run (and every shown run's loss), `apply_theme`,
    `retranslate_ui`. ``hover`` is the panel's hover link (the head grid and the large head)."""

    def __init__(self, ci, hover, lab: TrainingLab, theme: Theme) -> None:
        self.lab = lab
        self.theme = theme
        self._drawn: dict[tuple[object, str], object] = {}  # see _fresh
        self._series: dict[int, Series] = {}
        self._thins: dict[object, Thin] = {}  # each curve's preallocated points, by curve
        self._pens: dict = {}
        self._loss_items: dict[int, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self._head_items: dict[str, list[pg.PlotCurveItem]] = {name: [] for name, _t in SCORE_PLOTS}
        self._legend_key = None
        self._head_legend_key = None
        self._log = False
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
        self.grid = HeadGrid(hover, WEIGHTS_CMAP, on_click=lambda layer, head: self.lab.select_head(layer, head),
                             describe=self._describe_tile)
        mid.addItem(titled(self.grid.plot), row=0, col=0)
        self.big = Heatmap(hover, WEIGHTS_CMAP, title="", describe=self._describe_cell)  # (axis titles: retranslate_ui)
        self.big.set_levels((0.0, 1.0))
        mid.addItem(self.big.cell, row=0, col=1)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=WEIGHTS_CMAP, interactive=False, width=12)
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
        set_axis_label(self.loss_plot, "bottom", translate("TrainingPanel", "step"))
        set_axis_label(self.loss_plot, "left", translate("TrainingPanel", "loss (nats)"))
        set_axis_label(self.lr_plot, "bottom", translate("TrainingPanel", "step"))
        for plot in self.score_plots.values():
            set_axis_label(plot, "bottom", translate("TrainingPanel", "step"))
        self.chance.label.setFormat(translate("TrainingPanel", "chance"))
        set_axis_label(self.big.item, "left", translate("TrainingPanel", "query"))
        set_axis_label(self.big.item, "bottom", translate("TrainingPanel", "key"))
        set_axis_label(self.cbar, "left", translate("TrainingPanel", "weight"))
        self._legend_key = None

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

    # ---- hover readouts ------------------------------------------------------------------------------
    def _shown_probe(self):
        run = self.lab.viewed_run()
        return None if run is None else run.snapshot_at(self.lab.scrub_step)

    def _describe_tile(self, layer: int, head: int, row: int, col: int) -> str:
        p = self._shown_probe()
        if p is None or row >= len(p.tokens) or col >= len(p.tokens):
            return ""
        return translate("TrainingPanel",
                         "L{layer} H{head} · query {row} ‘{q}’ → key {col} ‘{k}’ · weight {w}").format(
            layer=layer, head=head, row=row, q=p.tokens[row], col=col, k=p.tokens[col],
            w=num(p.attentions[layer, head, row, col]))

    def _describe_cell(self, row: int, col: int) -> str:
        layer, head = self.lab.selected
        return self._describe_tile(layer, head, row, col)

    # ---- drawing ---------------------------------------------------------------------------------------
    def draw(self, run: Run) -> None:
        """Draw ``run`` (the lab's viewed run): the shown runs' loss curves, its learning
        rate, heads and scores."""
        lab = self.lab
        for r in lab.runs:
            self._series.setdefault(r.id, Series()).update(r.history)
        for rid in list(self._series):
            if all(r.id != rid for r in lab.runs):
                del self._series[rid]
        self._draw_loss(run)
        self._draw_lr(run)
        self._draw_heads(run)
        self._draw_scores(run)

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
            top = max([math.log(run.config.vocab)] + [nan_best(self._series[r.id].loss, max)
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
            head = translate("TrainingPanel", "<b>Loss</b> · not trained yet · chance ln {v} = {c} nats").format(
                v=run.config.vocab, c=num(chance))
        elif not math.isfinite(last.loss):  # (never "nan nats")
            head = translate("TrainingPanel", "<b>Loss</b> at step {step}: not a number · the run diverged "
                             "(its weights overflowed: a lower learning rate or gradient clipping keeps "
                             "them finite)").format(step=last.step)
        else:
            head = translate("TrainingPanel", "<b>Loss</b> at step {step}: {loss} nats · "
                             "predictable part (dashed) {pred} · chance {c}").format(
                step=last.step, loss=num(last.loss), pred=num(last.loss_predictable), c=num(chance))
        lines = [head]
        hit = run.milestone
        if hit is not None:
            wall = f" ({run.milestone_wall_s:.1f} s)" if run.milestone_wall_s else ""
            lines.append(f"<span style='color:{th.accent}'><b>★ "
                         + translate("TrainingPanel", "Induction head formed at step {step}").format(step=hit.step)
                         + f"</b>{wall}</span>" + self._unseen_note(run))
        elif run.circuit is not None and run.circuit.verdict == "other":
            other = translate("TrainingPanel", "Another circuit formed")
            lines.append(f"<span style='color:{th.warning}'>{other}: {engine_text(run.circuit.message)}</span>")
        set_plot_title(self.loss_plot, "<br>".join(lines), th)
        for line in self.milestone_lines:
            if hit is None:
                line.hide()
                continue
            line.setPos(hit.step)
            self._set_pen(line, self._pen(th.accent, LINE_PX, Qt.PenStyle.DashLine))
            line.show()
        label = self.milestone_lines[0].label
        marked = translate("TrainingPanel", "induction head, step {step}")
        if hit is not None and self._fresh(label, "text", (hit.step, th.accent, marked)):
            label.setFormat(marked.format(step=hit.step))  # (lays its text out)
            label.setColor(QColor(th.accent))

    def _unseen_note(self, run: Run) -> str:
        """" · at the unseen prefix length 4 the loss is 2.60 nats: not a general circuit"
        once the run's circuit check (on pausing or finishing) found it tied to the trained
        lengths; "" otherwise."""
        c = run.circuit
        if c is None or c.loss_predictable_unseen is None or c.loss_predictable_unseen < 2 * SOLVED_LOSS:
            return ""
        note = translate("TrainingPanel",
                         "at the unseen prefix length {n} the loss is {loss} nats: not a general circuit").format(
            n=c.unseen_prefix, loss=fixed(c.loss_predictable_unseen))
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
        warm = translate("TrainingPanel", " · warmup {n}").format(n=c.warmup_steps) if c.warmup_steps else ""
        title = translate("TrainingPanel", "<b>Learning rate</b> {lr}{warm}").format(lr=f"{now:.2g}", warm=warm)
        set_plot_title(self.lr_plot, title, th)

    def _draw_heads(self, run: Run) -> None:
        lab, th = self.lab, self.theme
        probe = run.snapshot_at(lab.scrub_step)
        if probe is None:
            self.grid.clear()
            set_plot_title(self.grid.plot, translate("TrainingPanel", "<b>Heads</b> · preparing the model…"), th)
            self.big.image.hide()
            self.big.set_labels(None, None)
            self.big.set_title("")
            return
        self.big.image.show()
        L, H = probe.attentions.shape[:2]
        self.grid.set_data(probe.attentions, tile_labels(probe), source=(probe,))
        layer, head = lab.selected
        layer, head = min(layer, L - 1), min(head, H - 1)
        self.grid.set_selection(layer, head)
        replay = lab.scrub_step is not None and probe is not run.latest
        at = translate("TrainingPanel", "<b>Heads at step {step}</b>").format(step=probe.step)
        if replay:
            latest = run.latest.step if run.latest is not None else run.steps_done
            note = translate("TrainingPanel", "replay; training is at step {now}").format(now=latest)
            at += f" · <span style='color:{th.accent2}'>{note}</span>"
        at += f"<br><span style='color:{th.muted}'>" + translate(
            "TrainingPanel", "probe sequence · click a head to see it large") + "</span>"
        set_plot_title(self.grid.plot, at, th)
        self.big.set_labels(probe.tokens, probe.tokens)
        self.big.set_data(probe.attentions[layer, head], (0.0, 1.0), source=(probe, layer, head))
        self.big.set_title(translate(
            "TrainingPanel",
            "<b>L{layer} H{head}</b> at step {step} · induction {ind} · previous-token {prev} · entropy {ent}").format(
            layer=layer, head=head, step=probe.step, ind=fixed(probe.scores['induction'][layer, head]),
            prev=fixed(probe.scores['previous_token'][layer, head]),
            ent=fixed(probe.entropy_norm[layer, head])))

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
            text = f"<b>{translated(title)}</b>"
            if data is not None and len(data):
                last = data[-1]
                if name == "previous_token":
                    text += translate("TrainingPanel", " · best layer-0 head {v} (line: {t})").format(
                        v=fixed(nan_best(last[0], max)), t=PREVIOUS_TOKEN_THRESHOLD)
                elif name == "induction":
                    later = last[1:] if c.n_layers > 1 else last
                    text += translate("TrainingPanel", " · best later head {v} (line: {t})").format(
                        v=fixed(nan_best(later, max)), t=INDUCTION_THRESHOLD)
                else:
                    text += translate("TrainingPanel", " · lowest {v}").format(v=fixed(nan_best(last, min)))
            set_plot_title(plot, text, th, size=9.0)
        key = (n_curves, c.n_heads, th.name, th.font_scale)
        if rebuilt or key != self._head_legend_key:
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
