"""`softmax_grad`: how much gradient the softmax passes, and why √d_k keeps it alive.

‖∂softmax/∂s‖_F per query row is largest for a flat row and → 0 as the row
saturates to one-hot. Left: that norm for each query of the selected head
(other heads faint); middle: the selected query's weight row; right: the
scaling sweep (mean norm vs d_k, scaled and unscaled) with today's d_k marked.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QColor, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from ..compare import a_color, a_legend
from ..figures.heatmap import TokenAxis
from ..figures.plots import (
    MAX_BARS,
    Drawn,
    HighlightBars,
    add_plot,
    fmt_number,
    lean_axes,
    set_axis_label,
    set_curve,
    set_plot_title,
    sticky_max,
    style_plot,
)
from ..figures.text import unbroken, upright
from ..figures.themes import Theme
from ..frame import Frame, scaling_sweep
from .base import Panel, register_panel


def _bar_plot(layout, row: int, col: int) -> tuple[pg.PlotItem, TokenAxis]:
    axis = TokenAxis("bottom")
    plot = add_plot(layout, row, col, axisItems=lean_axes(bottom=axis))
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.showGrid(y=True, alpha=0.15)
    return plot, axis


@register_panel
class SoftmaxGradPanel(Panel):
    name = "softmax_grad"
    title = QT_TRANSLATE_NOOP("Panel", "Softmax gradient and the √d_k sweep")
    readable_size = (320, 240)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        lay = self.graphics.ci
        self.jac_plot, self.jac_axis = _bar_plot(lay, 0, 0)
        self.jac_others = pg.PlotCurveItem()
        self.jac_plot.addItem(self.jac_others)
        self.jac_bars = HighlightBars(self.jac_plot)
        # the pinned reference A: its norms (and its row, below) as a line over B's bars
        self.jac_ref = pg.PlotCurveItem()
        self.jac_ref.setZValue(5)
        self.jac_plot.addItem(self.jac_ref)
        self.jac_plot.disableAutoRange()
        self.jac_plot.setYRange(0, 0.75, padding=0)  # 1/√2 (two equal keys) is the largest norm
        self.jac_plot.setMouseEnabled(y=False)

        self.row_plot, self.row_axis = _bar_plot(lay, 0, 1)
        self.row_bars = HighlightBars(self.row_plot)
        self.row_ref = pg.PlotCurveItem()
        #: what the lines and marks were drawn from (frames and indices: see plots.Drawn)
        self._drawn = Drawn()
        self.row_ref.setZValue(5)
        self.row_plot.addItem(self.row_ref, ignoreBounds=True)
        self.masked_marks = pg.ScatterPlotItem(symbol="x", size=8)
        self.row_plot.addItem(self.masked_marks)
        self.uniform = pg.InfiniteLine(angle=0, movable=False, label="",
                                       labelOpts={"position": 0.99, "anchors": [(1, 1), (1, 1)]})
        self.row_plot.addItem(self.uniform, ignoreBounds=True)
        self.row_plot.setMouseEnabled(y=False)
        self.row_plot.disableAutoRange()

        self.sweep_plot = add_plot(lay, 0, 2, axisItems=lean_axes())
        self.sweep_plot.setLogMode(x=True, y=False)
        self.sweep_plot.hideButtons()
        self.sweep_plot.setMenuEnabled(False)
        self.sweep_plot.showGrid(x=True, y=True, alpha=0.15)
        self._legend_size = "7.5pt"  # the legend's text size, as last set (apply_theme scales it)
        self.sweep_legend = self.sweep_plot.addLegend(offset=(-4, 4), labelTextSize=self._legend_size, verSpacing=-5)
        sw = scaling_sweep()  # until the first frame: 64 keys; then the frame's key counts
        self._sweep_counts: tuple | None = None
        self.sweep_scaled = self.sweep_plot.plot(sw["d_k"], sw["grad_scaled"], name="÷√d_k",
                                                 symbol="o", symbolSize=6, antialias=True)
        self.sweep_unscaled = self.sweep_plot.plot(sw["d_k"], sw["grad_unscaled"], name="unscaled",
                                                   symbol="s", symbolSize=6, antialias=True)
        for item in (self.sweep_scaled, self.sweep_unscaled):  # fixed curves: drawn once, kept as pixmaps,
            for part in (item.curve, item.scatter):  # so the moving star does not repaint their symbols
                part.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.sweep_now = pg.InfiniteLine(angle=90, movable=False)
        # its label at the foot of the line (the legend holds the top right, the curves stay
        # above 0.15 left of d_k = 512), on the side of the line with room
        self.sweep_now_label = pg.TextItem(anchor=(0, 1))
        self.sweep_plot.addItem(self.sweep_now_label, ignoreBounds=True)
        self.sweep_plot.addItem(self.sweep_now, ignoreBounds=True)
        # today's point: a star path drawn by Qt (x given as log10 d_k), kept at 16 px by undoing
        # the view's scaling; a one-point ScatterPlotItem cost as much to repaint as the bars.
        # sweep_here is the star's legend sample (it is not in the plot)
        self.sweep_here = pg.ScatterPlotItem(symbol="star", size=16)
        self.here_mark = QGraphicsPathItem(QTransform.fromScale(16, 16).map(Symbols["star"]))
        self.here_mark.setZValue(10)
        self.sweep_plot.addItem(self.here_mark, ignoreBounds=True)
        self.sweep_plot.vb.sigTransformChanged.connect(lambda *_: upright(self.sweep_plot.vb, [self.here_mark]))
        self.sweep_plot.vb.sigResized.connect(lambda *_: self._fit_sweep_top())
        self.sweep_legend.addItem(self.sweep_here, "this config")
        # fixed ranges: no autorange pass (and no second repaint) when the star moves
        self.sweep_plot.disableAutoRange()
        self.sweep_plot.setRange(xRange=(math.log10(1.4), math.log10(3000)), yRange=(0, 0.75), padding=0)
        lay.layout.setColumnStretchFactor(0, 3)
        lay.layout.setColumnStretchFactor(1, 3)
        lay.layout.setColumnStretchFactor(2, 2)
        self.graphics.scene().sigMouseClicked.connect(self._on_click)
        self._shape: tuple[int, int] | None = None
        self._row_ymax: float | None = None
        self._retranslate_labels()

    def _retranslate_labels(self) -> None:
        set_axis_label(self.jac_plot, "bottom", self.tr("query"))
        set_axis_label(self.jac_plot, "left", "‖∂softmax/∂s‖_F")
        set_axis_label(self.row_plot, "bottom", self.tr("key"))
        set_axis_label(self.row_plot, "left", self.tr("weight"))
        self.uniform.label.setFormat(self.tr("uniform"))
        set_axis_label(self.sweep_plot, "bottom", self.tr("d_k (head dim)"))
        set_axis_label(self.sweep_plot, "left", self.tr("mean ‖∂softmax/∂s‖_F"))
        self._name_legend()

    def _name_legend(self) -> None:
        """The sweep legend's labels: their names, in the colour and size last set."""
        names = {self.sweep_scaled: "÷√d_k", self.sweep_unscaled: self.tr("unscaled"),
                 self.sweep_here: self.tr("this config")}
        for sample, label in self.sweep_legend.items:
            item = sample.item
            if item in names:
                label.setText(names[item], size=self._legend_size)

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        super().retranslate_ui()

    def reset_view(self) -> None:
        self._row_ymax = None
        self._shape = None
        self._drawn.forget()
        super().reset_view()

    def _on_click(self, ev) -> None:
        if self.frame is None or ev.button() != Qt.MouseButton.LeftButton:
            return
        pos = ev.scenePos()
        for plot, n, field in ((self.jac_plot, self.frame.config.seq_len, "query"),
                               (self.row_plot, self.frame.config.key_len, "key")):
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(pos):
                x = round(vb.mapSceneToView(pos).x())
                if 0 <= x < n:
                    self.selection.set(**{field: x})
                    ev.accept()
                return

    def draw_frame(self, frame: Frame) -> None:
        cfg = frame.config
        self.jac_axis.set_labels(frame.query_labels)
        self.row_axis.set_labels(frame.key_labels)
        if self._shape != (cfg.seq_len, cfg.key_len):
            self._shape = (cfg.seq_len, cfg.key_len)
            self.jac_plot.setXRange(-0.6, cfg.seq_len - 0.4, padding=0)
            self.row_plot.setXRange(-0.6, cfg.key_len - 0.4, padding=0)
        dk = cfg.head_dim
        x = math.log10(dk)
        self.sweep_now.setValue(x)
        (x0, x1), _ = self.sweep_plot.viewRange()
        self.sweep_now_label.setAnchor((0, 1) if x < (x0 + x1) / 2 else (1, 1))
        self.sweep_now_label.setPos(x, 0.01)
        if frame.sweep_counts != self._sweep_counts:  # curves for the key counts of this mask
            self._sweep_counts = frame.sweep_counts
            sw = scaling_sweep(frame.sweep_counts)
            set_curve(self.sweep_scaled, sw["d_k"], sw["grad_scaled"])
            set_curve(self.sweep_unscaled, sw["d_k"], sw["grad_unscaled"])
        # the curves are for the key counts of this config's rows: say so at the line
        counts = [n for n, _rows in frame.sweep_counts]
        for curve in (self.sweep_scaled, self.sweep_unscaled):  # no row sees a key: nothing to compare
            curve.setVisible(bool(counts))
        if not counts:
            keys = ""
        elif len(counts) == 1:
            keys = self.tr(" {n} keys/row").format(n=counts[0])
        else:
            keys = self.tr(" {lo}–{hi} keys/row").format(lo=min(counts), hi=max(counts))
        if self.sweep_now_label.toPlainText() != f"d_k = {dk}":
            self.sweep_now_label.setText(f"d_k = {dk}")
        curves = self.tr("curves:")
        if keys:
            keys_note = f"<br><span style='color:{self.theme.muted}'>{unbroken(curves + keys)}</span>"
        else:
            none = self.tr("no curves: no row sees a key")  # (a narrow column: said short)
            keys_note = f"<br><span style='color:{self.theme.warning}'>{none}</span>"
        jac = frame.jac_norm[frame.valid_rows]
        here = float(jac.mean()) if jac.size else float("nan")
        self.here_mark.setVisible(math.isfinite(here))
        if math.isfinite(here):
            self.here_mark.setPos(math.log10(dk), here)
        scaled = (self.tr("scaled") if cfg.scale is None
                  else self.tr("scale {scale}").format(scale=f"{cfg.effective_scale:.3g}"))
        value = f"{here:.3f}" if math.isfinite(here) else "NaN"  # (why: the line under it)
        set_plot_title(self.sweep_plot, self.tr("<b>why √d_k</b> · here ({scaled}): {value}").format(
            scaled=scaled, value=value) + keys_note, self.theme)
        self._fit_sweep_top()

    def _fit_sweep_top(self) -> None:
        """The sweep's y range: 0 to above the curves and the star by the legend's height
        (the legend holds the top right and covered the ÷√d_k curve of a small panel); in
        steps of 0.05, at least 0.75 (1/√2, two equal keys, is the largest norm)."""
        view_px = self.sweep_plot.vb.height()
        if view_px <= 0:
            return
        tops = [0.0]
        for curve in (self.sweep_scaled, self.sweep_unscaled):
            y = curve.yData
            if curve.isVisible() and y is not None and np.isfinite(y).any():
                tops.append(float(np.nanmax(y)))
        if self.here_mark.isVisible():
            tops.append(float(self.here_mark.pos().y()))
        share = min(0.7, (self.sweep_legend.boundingRect().height() + 10) / view_px)
        top = max(0.75, math.ceil(max(tops) / (1.0 - share) * 20) / 20)
        if self.sweep_plot.viewRange()[1] != [0.0, top]:
            self.sweep_plot.setYRange(0.0, top, padding=0)

    def draw_selection(self) -> None:
        f, sel, th = self.frame, self.selection, self.theme
        cfg = f.config
        h, i, j = sel.head, sel.query, sel.key
        S = cfg.seq_len
        # ---- Jacobian norm per query ------------------------------------------
        # (a long linear kernel's norms: on its sampled rows only, no bar elsewhere)
        jac = np.nan_to_num(f.jac_norm[h]) if f.stat_rows is None else f.jac_norm[h]
        xs = np.arange(S) if f.stat_rows is None else f.stat_rows
        self.jac_bars.set(jac, selected=i, source=(f, h))
        if cfg.n_heads > 1:
            if self._drawn.changed("others", f, h):
                # every other head's row, each ended by a NaN (a break in the one curve): (H−1)·(S+1)
                rows = np.full((cfg.n_heads, len(xs) + 1), np.nan)
                rows[:, :-1] = np.nan_to_num(f.jac_norm[:, xs])
                others = np.delete(rows, h, axis=0).ravel()
                xs_all = np.tile(np.append(xs, np.nan), cfg.n_heads - 1)
                self.jac_others.setData(xs_all, others, connect="finite")
            self.jac_others.show()
        else:
            self.jac_others.hide()
        others = unbroken(self.tr("(lines: other heads)"))
        ref_note = self._draw_reference_jac(h)
        if f.stat_rows is not None:  # say that the norms are of a sample of rows
            others += " · " + unbroken(self.tr("{n} sampled rows of {S}").format(n=len(f.stat_rows), S=S))
        set_plot_title(self.jac_plot, self.tr("<b>‖∂softmax/∂s‖</b> per query · head {h}").format(h=h)
                       + f" <span style='color:{th.muted}'>{others}</span>" + ref_note, th)
        # ---- the selected query's weights ----------------------------------------
        row = f.row("weights", h, i)
        vis = f.mask[i]
        heights = np.nan_to_num(row)
        self.row_bars.set(heights, selected=j, other=~vis, source=(f, h, i))
        hidden = np.nonzero(~vis)[0]
        if len(hidden) > MAX_BARS:  # more marks than pixels: the bars' second colour says it
            hidden = hidden[:0]
        if self._drawn.changed("masked", f, i):
            self.masked_marks.setData(hidden, np.zeros(len(hidden)))
            self.masked_marks.setVisible(len(hidden) > 0)  # an empty scatter still repaints with the bars
        n_vis = int(vis.sum())
        if n_vis:
            self.uniform.setValue(1.0 / n_vis)
            self.uniform.show()
        else:
            self.uniform.hide()
        ent = float(f.entropy[h, i])  # (+ 0.0 below: a one-hot row prints "0", not "-0")
        if math.isnan(ent) and f.stat_rows is not None and not np.isnan(row).any():
            p = row[row > 0].astype(np.float64)  # a row outside a linear kernel's sample: its exact row's
            ent = float(-(p * np.log(p)).sum())
        top = max(float(np.nanmax(heights)) if heights.size else 1.0, 1.0 / max(n_vis, 1))
        ymax = sticky_max(self._row_ymax, min(1.0, top * 1.08), shrink=0.25)
        if ymax != self._row_ymax:
            self._row_ymax = ymax
            self.row_plot.setYRange(0, ymax, padding=0)
        uniform = f"log {n_vis} = {math.log(n_vis):.2f}" if n_vis else self.tr("no visible key")
        nan_text = self.tr("NaN row")
        nan = f" · <span style='color:{th.error}'>{nan_text}</span>" if np.isnan(row).any() else ""
        if math.isnan(ent):  # a NaN row has no entropy: not "nan nats"
            head = self.tr("<b>row {i}</b> ‘{label}’ · H undefined").format(i=i, label=f.query_labels[i])
        else:
            head = self.tr("<b>row {i}</b> ‘{label}’ · H = {entropy} nats").format(
                i=i, label=f.query_labels[i], entropy=fmt_number(ent))
        uniform_text = unbroken(self.tr("(uniform {value})").format(value=uniform))
        ref_note = self._draw_reference_row(h, i)
        set_plot_title(self.row_plot, f"{head} <span style='color:{th.muted}'>{uniform_text}</span>{nan}{ref_note}", th)

    # ---- the pinned reference A ----------------------------------------------------------------
    def _ref_head(self, h: int) -> int:
        return min(h, self.reference.config.n_heads - 1)

    def _draw_reference_jac(self, h: int) -> str:
        """A's norms of the same head as a line over B's bars (when A has as many queries);
        returns the title's note."""
        ref, f = self.reference, self.frame
        if ref is None:
            self.jac_ref.hide()
            return ""
        if ref.config.seq_len != f.config.seq_len:
            self.jac_ref.hide()
            return "<br>" + unbroken(self.tr("A has {n} queries: not drawn").format(n=ref.config.seq_len))
        if self._drawn.changed("ref_jac", ref, self._ref_head(h)):  # the same A line: keep it
            ys = np.nan_to_num(ref.jac_norm[self._ref_head(h)])  # (S,)
            self.jac_ref.setData(np.arange(len(ys)), ys)
        self.jac_ref.show()
        mean = ref.jac_norm[ref.valid_rows]
        a = f"{float(mean.mean()):.3f}" if mean.size else "NaN"
        return "<br>" + a_legend(self.theme, self.tr("A, mean {value}").format(value=a))

    def _draw_reference_row(self, h: int, i: int) -> str:
        """A's weight row of the same query as a line over B's bars (when A has as many keys)."""
        ref, f = self.reference, self.frame
        if ref is None:
            self.row_ref.hide()
            return ""
        if ref.config.key_len != f.config.key_len or i >= ref.config.seq_len:
            self.row_ref.hide()
            return "<br>" + unbroken(self.tr("A has {n} keys: not drawn").format(n=ref.config.key_len))
        ha = self._ref_head(h)
        if self._drawn.changed("ref_row", ref, ha, i):
            ys = np.nan_to_num(ref.row("weights", ha, i))  # (Skv,)
            self.row_ref.setData(np.arange(len(ys)), ys)
        self.row_ref.show()
        ent = float(ref.entropy[ha, i])
        if math.isnan(ent):
            return "<br>" + a_legend(self.theme, self.tr("A: H undefined (NaN row)"))
        return "<br>" + a_legend(self.theme, self.tr("A: H = {entropy} nats").format(entropy=fmt_number(ent)))

    def apply_theme(self, theme: Theme) -> None:
        for plot in (self.jac_plot, self.row_plot, self.sweep_plot):
            style_plot(plot, theme)
        faint = QColor(theme.muted)
        faint.setAlpha(120)
        self.jac_others.setPen(theme.pen(faint, 1))
        for line in (self.jac_ref, self.row_ref):
            line.setPen(theme.pen(a_color(theme), 2))
        self.jac_bars.set_colors(theme.bar, theme.hatch, theme.accent)
        self.row_bars.set_colors(theme.bar, theme.hatch, theme.accent)
        self.masked_marks.setPen(theme.pen(theme.muted, 1.5))
        self.masked_marks.setBrush(pg.mkBrush(None))
        self.uniform.setPen(theme.pen(theme.muted, 1, Qt.PenStyle.DashLine))
        self.uniform.label.setColor(theme.muted)
        self.uniform.label.setFont(theme.font(8.0))
        self.sweep_scaled.setPen(theme.pen(theme.ok, 2))
        self.sweep_scaled.setSymbolBrush(theme.ok)
        self.sweep_scaled.setSymbolPen(None)
        self.sweep_unscaled.setPen(theme.pen(theme.warning, 2))
        self.sweep_unscaled.setSymbolBrush(theme.warning)
        self.sweep_unscaled.setSymbolPen(None)
        self.sweep_here.setBrush(pg.mkBrush(theme.accent))
        self.sweep_here.setPen(theme.pen(theme.foreground, 1))
        self.here_mark.setBrush(pg.mkBrush(theme.accent))
        self.here_mark.setPen(theme.pen(theme.foreground, 1))
        self.sweep_now.setPen(theme.pen(theme.accent, 1.5, Qt.PenStyle.DashLine))
        self.sweep_now_label.setColor(theme.accent)
        self.sweep_now_label.setFont(theme.font(8.0))
        self.sweep_legend.setLabelTextColor(theme.foreground)
        self._legend_size = theme.pt(7.5)
        self.sweep_legend.setLabelTextSize(self._legend_size)
        self._name_legend()  # (the two setters above store the style; setting the text draws it)
        self.sweep_legend.setBrush(pg.mkBrush(QColor(theme.background)))
        self.sweep_legend.setPen(theme.pen(theme.hatch))
        super().apply_theme(theme)
