"""`scores`: the distribution of QKᵀ before and after scaling, against theory.

With q and k entries of unit variance, q·k is a sum of d_k unit-variance
products: N(0, d_k). Multiplying by 1/√d_k brings it back to N(0, 1), which
keeps softmax out of saturation. Left: Q·Kᵀ as computed (every cell, masked or
not: that product is what overflows float16); right: the softmax input
(scaled, ALiBi added, masked cells left out).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QRectF, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QComboBox, QGraphicsItem, QLabel

from ..compare import a_color, a_legend
from ..figures.plots import (
    BarsItem,
    Drawn,
    InsideLineLabel,
    add_plot,
    fmt_number,
    lean_axes,
    set_axis_label,
    set_label_text,
    set_line_label,
    set_plot_title,
    sticky_max,
    sticky_range,
    style_plot,
)
from ..figures.text import RunsLabel, unbroken
from ..figures.themes import Theme
from ..frame import Frame, finite_std, gaussian_pdf, histogram
from .base import Panel, register_panel

FLOAT16_MAX = 65504.0


class _HistPlot:
    """One histogram with a theory curve, a selected-value line and a readout."""

    def __init__(self, layout, row: int, col: int, xlabel: str) -> None:
        self.plot: pg.PlotItem = add_plot(layout, row, col, axisItems=lean_axes())
        self.xlabel = xlabel  # English, marked for translation; see retranslate_ui
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.disableAutoRange()  # ranges are set with hysteresis in set()
        self.plot.setMouseEnabled(x=True, y=False)
        self.xrange: tuple[float, float] | None = None
        self.ymax: float | None = None
        self._forced: tuple[float, float] | None = None
        #: what the histogram, the theory curve and the view were drawn from (see plots.Drawn)
        self._drawn = Drawn()
        self._last_result: tuple[float, int] = (float("nan"), 0)
        # the histogram: filled bins (one drawRects) under a step outline (a plain curve item;
        # pyqtgraph's own curve fill splits the area into polygons, three times the cost)
        self.hist_fill = BarsItem()
        self.hist = pg.PlotCurveItem()  # stepMode comes with the first data
        self._fill = QBrush(QColor("#888888"))
        self.theory = pg.PlotCurveItem(antialias=True)
        # it changes only with the range or d_k: kept as a pixmap, so the histogram's repaint
        # (which overlaps it) blits it instead of stroking an antialiased dashed path again
        self.theory.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._pdf = np.zeros(1)
        # the pinned reference A's histogram over B's: a step outline in A's colour
        self.ref_hist = pg.PlotCurveItem()
        self.ref_hist.hide()
        self.plot.addItem(self.hist_fill)
        self.plot.addItem(self.hist)
        self.plot.addItem(self.ref_hist)
        self.plot.addItem(self.theory)
        # its label right of the line, left of it near the right edge, across it in a plot too
        # narrow for either side; just the value where even that is too wide: always inside
        self.selected = pg.InfiniteLine(angle=90, movable=False)
        InsideLineLabel.attach(self.selected, position=0.97)
        self.plot.addItem(self.selected, ignoreBounds=True)
        # (their label below the selected cell's, which sits at the top: a short plot keeps them apart)
        self.limits = [pg.InfiniteLine(pos=s * FLOAT16_MAX, angle=90, movable=False) for s in (1, -1)]
        for line in self.limits:
            InsideLineLabel.attach(line, position=0.45)
            self.plot.addItem(line, ignoreBounds=True)
            line.hide()
        # legend and readout share one line under the plot, so the bars keep the height; beside
        # a pinned A (its legend entry and its std) that line wraps onto up to three
        self.readout = RunsLabel("", justify="left", size="8.5pt", max_lines=3)
        layout.addItem(self.readout, row=row + 1, col=col)
        # the density ticks ("0.25" after "0.3") only widen the axis: a narrower label would
        # shift the plot and redraw both axes on the next seed
        self.plot.getAxis("left").setStyle(autoReduceTextSpace=False)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        set_axis_label(self.plot, "bottom", QCoreApplication.translate("ScoresPanel", self.xlabel))
        set_axis_label(self.plot, "left", QCoreApplication.translate("ScoresPanel", "density"))
        self.limits[0].label.setFormat(QCoreApplication.translate("ScoresPanel", "fp16 max"))

    def legend_html(self, theme: Theme, theory_name: str) -> str:
        measured = QCoreApplication.translate("ScoresPanel", "measured")
        selected = QCoreApplication.translate("ScoresPanel", "selected cell")
        ref = f"{a_legend(theme)}  " if self.ref_hist.isVisible() else ""
        if ref:
            measured = QCoreApplication.translate("ScoresPanel", "B (current)")
        return (f"<span style='color:{theme.bar}'>█</span> {measured}  {ref}"
                f"<span style='color:{theme.foreground}'>╌╌</span> {theory_name}  "
                f"<span style='color:{theme.accent}'>┃</span> {selected}")

    def forget(self) -> None:
        """Frame the next histogram afresh: no remembered range, height or data."""
        self.xrange, self.ymax = None, None
        self._drawn.forget()

    def set(self, values: np.ndarray, theory_std: float, xrange: tuple[float, float] | None = None,
            bins: int = 60, ref: np.ndarray | None = None, source: tuple | None = None) -> tuple[float, int]:
        """Histogram `values` against N(0, theory_std²); xrange forces the view (fp16 limits).
        `ref`: the same values of the pinned reference A, overlaid with bins of their own.
        `source`: what `values` and `ref` were taken from (the frame, the head or "all", A and
        its head: identities, see plots.same_sources); the same source as last time keeps the
        painted histogram without looking at a value (a move of the selected cell); None: drawn anew."""
        if source is None:
            self._drawn.forget("hist")
        if not self._drawn.changed("hist", source, theory_std, xrange, bins, ref is None):
            return self._last_result  # drawn from the same data: keep what is painted
        edges, density, n_bad = histogram(values, bins)
        self.hist.setData(edges, density, stepMode="center")
        self._fill_bins(edges, density)
        lo, hi = float(edges[0]), float(edges[-1])
        self.ref_hist.setVisible(ref is not None)
        if ref is not None:
            r_edges, r_density, _ = histogram(ref, bins)
            self.ref_hist.setData(r_edges, r_density, stepMode="center")
            lo, hi = min(lo, float(r_edges[0])), max(hi, float(r_edges[-1]))
            density = np.concatenate([density, r_density])  # (the height fits both)
        t_lo, t_hi = -3 * theory_std, 3 * theory_std
        if t_hi - t_lo < 5 * (hi - lo):  # show the theory's bulk unless it would squash the data
            lo, hi = min(lo, t_lo), max(hi, t_hi)
        if xrange is not None:
            self.xrange = xrange
        else:
            self.xrange = sticky_range(None if self._forced else self.xrange, lo, hi)
        self._forced = xrange
        x0, x1 = self.xrange
        if self._drawn.changed("theory", x0, x1, theory_std):  # the same curve: keep its pixmap
            xs = np.linspace(x0, x1, 240)
            self._pdf = gaussian_pdf(xs, theory_std)
            self.theory.setData(xs, self._pdf)
        pdf = self._pdf
        peak = max(float(density.max()) if density.size else 0.0, float(pdf.max()))
        self.ymax = sticky_max(self.ymax, 1.08 * peak, shrink=0.35, room=1.3)
        if self._drawn.changed("range", self.xrange, self.ymax):
            self.plot.setRange(xRange=self.xrange, yRange=(0, self.ymax), padding=0)
        self._last_result = (finite_std(values), n_bad)
        return self._last_result

    def _fill_bins(self, edges: np.ndarray, density: np.ndarray) -> None:
        rects = [QRectF(x0, 0.0, x1 - x0, d)
                 for x0, x1, d in zip(edges[:-1].tolist(), edges[1:].tolist(), density.tolist()) if d > 0]
        top = float(density.max()) if density.size else 0.0
        self.hist_fill.set_groups([(self._fill, rects)],
                                  QRectF(float(edges[0]), 0.0, float(edges[-1] - edges[0]), top))

    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.plot, theme)
        # one-pixel pens: Qt draws those directly; a wider (or fractional) pen is stroked as a
        # polygon first, which cost as much as the rest of the panel's repaint
        self.hist.setPen(theme.pen(theme.bar, 1))
        self.ref_hist.setPen(theme.pen(a_color(theme), 2))
        fill = QColor(theme.bar)
        fill.setAlpha(110)
        self._fill = QBrush(fill)
        self.hist_fill.set_brushes([self._fill])
        self.theory.setPen(theme.pen(theme.foreground, 1, Qt.PenStyle.DashLine))
        self.selected.setPen(theme.pen(theme.accent, 2))
        self.selected.label.setColor(theme.accent)
        self.selected.label.setFont(theme.font(8.5))
        self.readout.setText(self.readout.text, size=theme.pt(8.5))
        for line in self.limits:
            line.setPen(theme.pen(theme.warning, 2, Qt.PenStyle.DotLine))
            line.label.setColor(theme.warning)
            line.label.setFont(theme.font(8.5))



@register_panel
class ScoresPanel(Panel):
    name = "scores"
    title = QT_TRANSLATE_NOOP("Panel", "Scores: QKᵀ before and after √d_k")
    # in lesson 8 (float16, A pinned) the readouts are five lines: the histograms keep a height
    lesson_size = (320, 300)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.show_label = QLabel()
        self.toolbar.addWidget(self.show_label)
        self.scope = QComboBox()
        self.scope.addItems(["", ""])
        self.scope.currentIndexChanged.connect(lambda _i: self.draw_selection() if self.frame else None)
        self.toolbar.addWidget(self.scope)
        self.toolbar.addStretch(1)
        lay = self.graphics.ci
        self.raw = _HistPlot(lay, 0, 0, QT_TRANSLATE_NOOP("ScoresPanel", "Q·Kᵀ (unscaled)"))
        self.scaled = _HistPlot(lay, 0, 1, QT_TRANSLATE_NOOP("ScoresPanel", "softmax input (masked cells left out)"))
        self._retranslate_labels()

    def _retranslate_labels(self) -> None:
        self.show_label.setText(self.tr("Show"))
        self.scope.setItemText(0, self.tr("selected head"))
        self.scope.setItemText(1, self.tr("all heads"))
        self.scope.setToolTip(self.tr("Histogram the selected head's scores or every head's"))
        self.raw.retranslate_ui()
        self.scaled.retranslate_ui()

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        super().retranslate_ui()

    def reset_view(self) -> None:
        for hist in (self.raw, self.scaled):
            hist.forget()
        super().reset_view()

    def all_heads(self) -> bool:
        return self.scope.currentIndex() == 1

    def draw_frame(self, frame: Frame) -> None:
        pass  # everything depends on the selected head

    def draw_selection(self) -> None:
        f, sel = self.frame, self.selection
        cfg = f.config
        h, i, j = sel.head, sel.query, sel.key
        dk = cfg.head_dim
        scale = cfg.effective_scale
        mask = f.score_mask  # (rows held, Skv): every row, or a long frame's sample rows
        if self.all_heads():
            raw, after = f.scores_raw, f.scores[:, mask]
            who = self.tr("all {n} heads").format(n=cfg.n_heads)
        else:
            raw, after = f.scores_raw[h], f.scores[h][mask]
            who = self.tr("head {h}").format(h=h)
        if f.sample_rows is not None:  # say that the histograms are of a sample of rows
            who += " · " + unbroken(self.tr("{n} of {S} query rows").format(n=len(f.sample_rows), S=cfg.seq_len))
        ref_raw, ref_after = self._reference_values(h)
        # what both histograms are taken from: this frame's head (or all heads) and A's
        ref = self.reference
        source = (f, None if self.all_heads() else h,
                  ref, None if ref is None or self.all_heads() else min(h, ref.config.n_heads - 1))
        muted, th = self.theme.muted, self.theme
        # ---- before scaling -----------------------------------------------------
        fp16 = cfg.dtype == "float16"
        peak = f.overflow.max_abs_score_raw
        # near the float16 limit, show it: the bars pile up against ±65504
        near = fp16 and (f.overflow.inf_scores_raw or (math.isfinite(peak) and peak > 0.25 * FLOAT16_MAX))
        std_raw, bad_raw = self.raw.set(raw, math.sqrt(dk),
                                        (-1.08 * FLOAT16_MAX, 1.08 * FLOAT16_MAX) if near else None, ref=ref_raw,
                                        source=source)
        std = self.tr("std")
        set_plot_title(self.raw.plot, self.tr("<b>Q·Kᵀ</b> before scaling · {who}").format(who=who), th)
        theory = unbroken(self.tr("(theory √d_k = {value})").format(value=f"{math.sqrt(dk):.3g}"))
        lines = [self.raw.legend_html(th, f"N(0, {dk})") + f"  ·  {std}\u00a0<b>{fmt_number(std_raw)}</b> "
                 f"<span style='color:{muted}'>{theory}</span>" + self._a_std(ref_raw)]
        if bad_raw:
            text = self.tr("{n} entries overflowed to ±inf (not drawn)").format(n=bad_raw)
            lines.append(f"<span style='color:{th.error}'>{text}</span>")
        for line in self.raw.limits:
            if fp16 and not line.isVisible():
                line.setVisible(True)
                line.label.valueChanged()  # (its text, set while hidden, is laid out only when shown)
            line.setVisible(fp16)
        if fp16:
            if not math.isfinite(peak):
                lines.append(self.tr("float16 max 65504 · no finite |QKᵀ|"))
            elif bad_raw:  # the peak is of the finite entries; the ±inf ones are counted above
                lines.append(self.tr("float16 max 65504 · largest finite |QKᵀ| {peak} ({share} of it)").format(
                    peak=f"{peak:.4g}", share=f"{peak / FLOAT16_MAX:.1%}"))
            else:
                lines.append(self.tr("float16 max 65504 · largest |QKᵀ| {peak} ({share} of it)").format(
                    peak=f"{peak:.4g}", share=f"{peak / FLOAT16_MAX:.1%}"))

        set_label_text(self.raw.readout, "<br>".join(lines), color=th.foreground)
        v_raw = f.cell("scores_raw", h, i, j)
        self.raw.selected.setValue(v_raw if math.isfinite(v_raw) else 0.0)
        self.raw.selected.label.short = fmt_number(v_raw)
        set_line_label(self.raw.selected, f"q{i}·k{j} = {fmt_number(v_raw)}")
        # ---- after scaling ------------------------------------------------------
        theory = scale * math.sqrt(dk)
        name = "N(0, 1)" if cfg.scale is None else f"N(0, ({scale:.3g}·√d_k)²)"
        std_after, bad_after = self.scaled.set(after, theory, ref=ref_after, source=source)
        how = self.tr("pre-scaled Q") if cfg.prescale_q else f"×{scale:.3g}"
        extra = " + ALiBi" if cfg.positional == "alibi" else ""
        set_plot_title(self.scaled.plot, self.tr("<b>softmax input</b> ({how}) · {who}").format(
            how=how + extra, who=who), th)
        theory_text = unbroken(self.tr("(theory {value})").format(value=f"{theory:.3g}"))
        lines = [self.scaled.legend_html(th, name) + f"  ·  {std}\u00a0<b>{fmt_number(std_after)}</b> "
                 f"<span style='color:{muted}'>{theory_text}</span>" + self._a_std(ref_after)]
        if bad_after:
            text = self.tr("{n} visible entries are ±inf").format(n=bad_after)
            lines.append(f"<span style='color:{th.error}'>{text}</span>")
        set_label_text(self.scaled.readout, "<br>".join(lines), color=th.foreground)
        v = f.cell("scores", h, i, j)
        visible = bool(f.mask[i, j])
        self.scaled.selected.setVisible(visible and math.isfinite(v))
        if visible and math.isfinite(v):
            self.scaled.selected.setValue(v)
            self.scaled.selected.label.short = fmt_number(v)
            set_line_label(self.scaled.selected, f"q{i}·k{j} = {fmt_number(v)}")

    def _reference_values(self, h: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The pinned A's values for the two histograms, in the same scope as B's (the selected
        head, or A's last head when A has fewer; or all heads); (None, None) without A. A long
        A gives its sample rows, as a long B does."""
        ref = self.reference
        if ref is None:
            return None, None
        mask = ref.score_mask
        if self.all_heads():
            return ref.scores_raw, ref.scores[:, mask]
        ha = min(h, ref.config.n_heads - 1)
        return ref.scores_raw[ha], ref.scores[ha][mask]

    def _a_std(self, values: np.ndarray | None) -> str:
        if values is None:
            return ""
        text = self.tr("A: std {value}").format(value=fmt_number(finite_std(values)))
        return f"  ·  <span style='color:{self.theme.muted}'>{unbroken(text)}</span>"

    def apply_theme(self, theme: Theme) -> None:
        self.raw.apply_theme(theme)
        self.scaled.apply_theme(theme)
        super().apply_theme(theme)
