"""`efficient`: an efficient variant of attention against full softmax on the same layer.

    variant's weights | full softmax's weights | variant − full      (selected head, batch 0;
                                                                     the first 256 queries and keys)
    the report: output error, mean total variation, FLOPs and bytes, each beside full's
    FLOPs against S | bytes against S: full, sparse, linear, hierarchical, this config marked

The data (explorer.efficient_view: two forwards and engine.approximation_report) is computed
off the UI thread by a StepWorker, latest request wins; an export's figure computes it at once.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt

from ..efficient_view import KINDS, EfficientView, efficient_view
from ..figures.heatmap import Heatmap
from ..figures.plots import (
    add_plot,
    fmt_number,
    lean_axes,
    set_axis_label,
    set_bar_levels,
    set_label_text,
    set_plot_title,
    style_colorbar,
    style_plot,
    symmetric_levels,
)
from ..figures.text import RunsLabel
from ..figures.themes import CATEGORY_COLORS, SIGNED_CMAP, WEIGHTS_CMAP, Theme
from ..frame import Frame
from ..work.steps import ResultCache, StepRequests
from .base import Panel, register_panel
from .diagnostics import human_bytes

CACHE = ResultCache(8)


@register_panel
class EfficientPanel(Panel):
    name = "efficient"
    title = QT_TRANSLATE_NOOP("Panel", "Efficient attention vs full softmax")
    readable_size = (560, 400)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        self.variant = Heatmap(hover, WEIGHTS_CMAP)
        self.full = Heatmap(hover, WEIGHTS_CMAP)
        self.diff = Heatmap(hover, SIGNED_CMAP)
        lay = self.graphics.ci
        # columns: variant | full | the weights' scale | difference | its signed scale; the
        # scales in columns of their own, so the three maps are equally wide
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=WEIGHTS_CMAP, interactive=False, width=10)
        self.dbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=SIGNED_CMAP, interactive=False, width=10)
        for col, item in enumerate((self.variant.cell, self.full.cell, self.cbar, self.diff.cell, self.dbar)):
            lay.addItem(item, row=0, col=col)
        self.readout = RunsLabel("", justify="left", size="9pt", max_lines=4)
        lay.addItem(self.readout, row=1, col=0, colspan=5)
        self.flops_plot = add_plot(lay, 2, 0, axisItems=lean_axes())
        self.bytes_plot = add_plot(lay, 2, 1, axisItems=lean_axes())
        for col, stretch in enumerate((1, 1, 0, 1, 0)):
            lay.layout.setColumnStretchFactor(col, stretch)
        lay.layout.setRowStretchFactor(0, 3)
        lay.layout.setRowStretchFactor(2, 2)
        self.curves: dict[str, tuple] = {}
        self.points = []
        for plot in (self.flops_plot, self.bytes_plot):
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.setLogMode(x=True, y=True)
            plot.showGrid(x=True, y=True, alpha=0.15)
            lines = {kind: plot.plot([], []) for kind in KINDS}
            self.curves[id(plot)] = lines
            point = plot.plot([], [], pen=None, symbol="o", symbolSize=11)
            point.setZValue(10)
            self.points.append(point)
        self.legend = RunsLabel("", justify="left", size="9pt")
        lay.addItem(self.legend, row=2, col=2, colspan=3)
        self.view: EfficientView | None = None
        self.message = ""
        self._key = None
        self.requests = StepRequests(self, CACHE, self._show)
        self._retranslate_labels()

    def _retranslate_labels(self) -> None:
        for plot in (self.flops_plot, self.bytes_plot):
            set_axis_label(plot, "bottom", self.tr("sequence length S"))

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        super().retranslate_ui()

    def heatmaps(self) -> list[Heatmap]:
        return [self.variant, self.full, self.diff]

    # ---- data ------------------------------------------------------------------------------
    def draw_frame(self, frame: Frame) -> None:
        """Nothing per frame: the selection's head decides what is computed (draw_selection)."""

    def draw_selection(self) -> None:
        cfg = self.frame.config
        head = min(self.selection.head, cfg.n_heads - 1)
        key = (cfg, head)
        if key == self._key and (self.view is not None or self.message):
            self._draw_all()  # the same data in another theme or language
            return
        job = lambda check: efficient_view(cfg, head, check)  # noqa: E731
        if not self.requests.fetch(key, job, cancellable=True):  # stopped by a newer request
            self.variant.set_title(self.tr("<b>{kernel}</b> · head {h}, computing…").format(
                kernel=self._variant_name(cfg), h=head))

    def _show(self, key, view: EfficientView | None, error: str | None) -> None:
        if self.frame is None or key[0] != self.frame.config:
            return  # a result for an earlier config
        self._key = key
        self.view = view
        self.message = error or ""
        self._draw_all()

    # ---- drawing ---------------------------------------------------------------------------
    def _variant_name(self, cfg) -> str:
        parts = []
        if cfg.kernel == "linear":
            parts.append(self.tr("linear (elu + 1)"))
        elif cfg.kernel == "performer":
            parts.append(self.tr("performer, m = {m}").format(m=cfg.n_features))
        if cfg.summary_block is not None:
            parts.append(self.tr("block summaries of {b}").format(b=cfg.summary_block))
        if cfg.window is not None:
            parts.append(self.tr("window {w}").format(w=cfg.window))
        if cfg.global_tokens:
            parts.append(self.tr("{g} global").format(g=cfg.global_tokens))
        return " + ".join(parts) if parts else self.tr("full softmax")

    def _kind_name(self, kind: str) -> str:
        cfg = self.view.config if self.view is not None else None
        if kind == "linear" and cfg is not None and cfg.kernel == "performer":  # the curve is performer's
            return self.tr("performer, m = {m}").format(m=cfg.n_features)
        return {"full": self.tr("full softmax"), "sparse": self.tr("sparse (local + global)"),
                "linear": self.tr("linear"), "hierarchical": self.tr("hierarchical")}[kind]

    def _draw_all(self) -> None:
        th, v = self.theme, self.view
        if v is None:
            for hm in self.heatmaps():
                hm.set_data(np.full((1, 1), np.nan, np.float32), (0.0, 1.0), source=("nothing",))
            self.variant.set_title(self.tr("<b>Efficient attention</b> · cannot compute this"))
            self.full.set_title("")
            self.diff.set_title("")
            set_label_text(self.readout, f"<span style='color:{th.error}'>{self.message}</span>",
                           color=th.foreground, size=th.pt(9.0))
            return
        f = self.frame
        r, c = v.weights.shape
        # a cell neither attention gives any weight (masked in both) is a hole, as in the heads map
        hole = (v.weights == 0) & (v.full == 0)
        weights, full = np.where(hole, np.nan, v.weights), np.where(hole, np.nan, v.full)
        diff = weights - full
        finite = np.isfinite(diff)
        top = float(max(np.max(v.weights[finite], initial=0.0), np.max(v.full[finite], initial=0.0)))
        levels = (0.0, top or 1.0)
        self.variant.set_data(weights, levels, source=(v,))
        self.full.set_data(full, levels, source=(v,))
        dmax = float(np.abs(diff[finite]).max()) if finite.any() else 0.0
        self.diff.set_data(diff, symmetric_levels(dmax or 1e-6), source=(v,))
        set_bar_levels(self.cbar, levels)
        set_bar_levels(self.dbar, self.diff.levels)
        set_axis_label(self.cbar, "left", self.tr("weight"))
        set_axis_label(self.dbar, "left", self.tr("difference"))
        rows = f.query_labels[:r] if f.query_labels is not None else None
        cols = f.key_labels[:c] if f.key_labels is not None else None
        for hm in self.heatmaps():
            hm.set_labels(rows, cols)
        corner = "" if (r, c) == (v.rows, v.cols) else self.tr(" · first {r}×{c} of {S}×{Skv}").format(
            r=r, c=c, S=v.rows, Skv=v.cols)
        self.variant.set_title(self.tr("<b>{variant}</b> · head {h}{corner}").format(
            variant=self._variant_name(v.config), h=v.head, corner=corner))
        self.full.set_title(self.tr("<b>full softmax</b> · the same layer"))
        self.diff.set_title(self.tr("<b>variant − full</b> · largest |Δ| {d}").format(d=fmt_number(dmax)))
        self._draw_readout(v)
        self._draw_costs(v)

    def _draw_readout(self, v: EfficientView) -> None:
        th, rep = self.theme, v.report
        muted = th.muted
        if rep is None:
            text = self.tr("<b>Nothing to compare</b>: this is full softmax attention (output error 0, "
                           "total variation 0). Choose a linear or performer kernel, a window, global "
                           "tokens or block summaries.")
            set_label_text(self.readout, text, color=th.foreground, size=th.pt(9.5))
            return
        tv = self.tr("n/a (grids too large)") if rep.weights_tv is None else f"{rep.weights_tv:.4f}"
        lines = [
            self.tr("<b>output error</b> ‖out − out_full‖/‖out_full‖ = <b>{err}</b> (full: 0) · "
                    "<b>mean total variation</b> of the weights = <b>{tv}</b> (full: 0)").format(
                err=f"{rep.output_rel_error:.4f}", tv=tv),
            self.tr("<b>FLOPs</b> {flops} (full: {flops_full}, ×{fr}) · <b>bytes</b> at peak {b} "
                    "(full: {b_full}, ×{br})").format(
                flops=fmt_number(rep.flops), flops_full=fmt_number(rep.flops_full),
                fr=f"{rep.flops / rep.flops_full:.3g}" if rep.flops_full else "–",
                b=human_bytes(rep.bytes), b_full=human_bytes(rep.bytes_full),
                br=f"{rep.bytes / rep.bytes_full:.3g}" if rep.bytes_full else "–"),
        ]
        text = "<br>".join(lines) + f"<br><span style='color:{muted}'>" + self.tr(
            "same input, weights and positions: the two outputs differ only by the attention pattern") + "</span>"
        set_label_text(self.readout, text, color=th.foreground, size=th.pt(9.5))

    def _draw_costs(self, v: EfficientView) -> None:
        th = self.theme
        colours = {kind: CATEGORY_COLORS[i % len(CATEGORY_COLORS)] for i, kind in enumerate(KINDS)}
        for plot, index, title in ((self.flops_plot, 0, self.tr("<b>FLOPs</b> of one layer against S")),
                                   (self.bytes_plot, 1, self.tr("<b>bytes</b> at peak against S"))):
            for kind, line in self.curves[id(plot)].items():
                line.setData(v.sizes, v.curves[kind][index])
                style = Qt.PenStyle.SolidLine if kind == v.kind else Qt.PenStyle.DashLine
                line.setPen(th.pen(colours[kind], 2.5 if kind == v.kind else 1.5, style))
            set_plot_title(plot, title, th)
        S, flops, nbytes = v.point
        for point, y in zip(self.points, (flops, nbytes)):
            point.setData([max(S, 1)], [max(y, 1.0)])
            point.setSymbolBrush(colours[v.kind])
            point.setSymbolPen(th.pen(th.foreground, 1.5))
        set_axis_label(self.flops_plot, "left", self.tr("FLOPs"))
        set_axis_label(self.bytes_plot, "left", self.tr("bytes"))
        key = "<br>".join(
            f"<span style='color:{colours[k]}'>━</span> {self._kind_name(k)}" for k in KINDS)
        here = self.tr("● this config: S = {S}, {kind}").format(S=S, kind=self._kind_name(v.kind))
        here = here.replace("●", f"<span style='color:{colours[v.kind]}'>●</span>", 1)
        set_label_text(self.legend, f"{key}<br><b>{here}</b>", color=th.foreground, size=th.pt(9.0))

    def apply_theme(self, theme: Theme) -> None:
        for plot in (self.flops_plot, self.bytes_plot):
            style_plot(plot, theme)
        style_colorbar(self.cbar, theme)
        style_colorbar(self.dbar, theme)
        super().apply_theme(theme)
