"""`tiling`: FlashAttention's tiles for the selected head, step by step.

    score grid (S × Skv), Q block × K block tiles | running max m of the block's rows
    the tile being computed outlined, the rest     | running sum ℓ
    fogged (pending) or grey (masked: skipped)     | rescale e^(m_old − m_new)
                                                   | partial output O/ℓ of the rows
    readout: tiles computed and skipped, max |Δ| of the final output vs eager (in ε)

The steps come from `engine.tiled_attention` (explorer.stepthrough.tiling_view),
computed once per (config, head, blocks) in a worker thread; an animation frame
only re-sets a few items: the fog image, the outline, three curves, one small
heatmap and two titles.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QRectF, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QComboBox, QGraphicsRectItem, QHBoxLayout, QLabel

from ..figures.heatmap import Heatmap, RgbaImage
from ..figures.plots import (
    BarsItem,
    LeanPlotItem,
    fmt_number,
    lean_axes,
    set_axis_label,
    set_bar_levels,
    set_curve,
    set_label_text,
    set_plot_title,
    style_colorbar,
    style_plot,
    symmetric_levels,
)
from ..figures.text import RunsLabel, titled
from ..figures.themes import SIGNED_CMAP, Theme
from ..frame import Frame
from ..stepthrough import (
    BLOCK_SIZES,
    ROUNDING_ULPS,
    TilingView,
    auto_block,
    tile_states,
    tiling_view,
)
from ..work.steps import ResultCache, StepRequests
from .base import Panel, register_panel
from .player import StepPlayer

#: views of the last few (config, head, blocks): the window's panel and an export's share them
CACHE = ResultCache(8)

#: the notes explorer.stepthrough attaches (English there), for lupdate: the panel translates them
_NOTES = (
    QT_TRANSLATE_NOOP("TilingPanel", "query block {b} > S = {n}: one block holds every query"),
    QT_TRANSLATE_NOOP("TilingPanel", "key block {b} > Skv = {n}: one block holds every key"),
    QT_TRANSLATE_NOOP("TilingPanel", "one query (S = 1): a single row of tiles"),
    QT_TRANSLATE_NOOP("TilingPanel", "{n} rows see no key: m stays −∞, ℓ = 0 and O/ℓ is NaN, as eager gives with −inf"),
    QT_TRANSLATE_NOOP("TilingPanel", "{n} rows see no key: the tiles give NaN there; eager with {value} gives a uniform row (left out of max |Δ|)"),
)


def verdict_text(diff: float, ulps_: float) -> str:
    """"max |Δ| vs eager = 2.4e-07 = 1.4 ε ✓" (⚠ beyond ROUNDING_ULPS, NaN spelled out)."""
    if not math.isfinite(ulps_):
        return QCoreApplication.translate("TilingPanel", "max |Δ| vs eager: {diff} (nothing finite to compare)").format(diff=fmt_number(diff, 2))
    mark = "✓" if ulps_ <= ROUNDING_ULPS else "⚠"
    return QCoreApplication.translate("TilingPanel", "max |Δ| vs eager = {diff} = {ulps} ε {mark}").format(
        diff=fmt_number(diff, 2), ulps=fmt_number(ulps_, 2), mark=mark)


def block_combo(tip: str) -> QComboBox:
    box = QComboBox()
    box.addItem("", None)  # auto
    for b in BLOCK_SIZES:
        box.addItem(str(b), b)
    box.setToolTip(tip)
    return box


@register_panel
class TilingPanel(Panel):
    name = "tiling"
    title = QT_TRANSLATE_NOOP("Panel", "Tiling: FlashAttention step by step")
    readable_size = (560, 400)  # the player on a row of its own: 501 px across at least

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        self.block_label = QLabel()
        self.toolbar.addWidget(self.block_label)
        self.block_q = block_combo("")
        self.block_k = block_combo("")
        self.toolbar.addWidget(self.block_q)
        self.times = QLabel("×")
        self.toolbar.addWidget(self.times)
        self.toolbar.addWidget(self.block_k)
        self.toolbar.addStretch(1)
        self.toolbar.addSpacing(24)  # the panel's "?" sits in the corner
        # the player on a row of its own under the blocks: beside them both needed 739 px
        # across, more than the panel's readable width (the window grew at 1280×800)
        self.player = StepPlayer()
        player_row = QHBoxLayout()
        player_row.setContentsMargins(6, 0, 6, 0)
        player_row.addWidget(self.player, 1)
        self.layout().insertLayout(1, player_row)
        for box in (self.block_q, self.block_k):
            box.currentIndexChanged.connect(self._on_blocks)
        self.player.position_changed.connect(self.draw_step)

        ci = self.graphics.ci
        self.grid = Heatmap(hover, SIGNED_CMAP, describe=self._describe)
        ci.addItem(self.grid.cell, row=0, col=0, rowspan=3)
        # the scores' colour scale, beside the grid (a legend for the levels the grid uses)
        self.cbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=SIGNED_CMAP, interactive=False, width=12)
        self.cbar.setImageItem([], insert_in=self.grid.item)
        vb = self.grid.vb
        self.fog = RgbaImage()  # one pixel per tile: pending / done / skipped / current
        self.fog.setZValue(5)
        vb.addItem(self.fog, ignoreBounds=True)
        self.lines = pg.PlotDataItem([], [], connect="pairs")
        self.lines.setZValue(6)
        vb.addItem(self.lines, ignoreBounds=True)
        self.current = QGraphicsRectItem()
        self.current.setZValue(21)
        self.current.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        vb.addItem(self.current, ignoreBounds=True)

        def small(row: int, col: int = 1, colspan: int = 1) -> pg.PlotItem:
            p = LeanPlotItem(axisItems=lean_axes())
            ci.addItem(titled(p), row=row, col=col, colspan=colspan)
            p.hideButtons()
            p.setMenuEnabled(False)
            p.setMouseEnabled(x=False, y=False)
            p.showGrid(x=False, y=True, alpha=0.15)
            return p

        #   grid | m | ℓ        m and ℓ side by side: three rows of small plots, not four, each
        #        | rescale      with its title row (a low panel, 320 px at 1280×800, left the
        #        | partial      four ~10 px of plot)
        #   note
        self.m_plot = small(0, 1)
        self.m_old_curve = self.m_plot.plot([], [])
        self.m_curve = self.m_plot.plot([], [])
        self.l_plot = small(0, 2)
        self.l_curve = self.l_plot.plot([], [])
        self.r_plot = small(1, 1, 2)
        # the three share their x (the tile's query rows, set together in draw_step): only the
        # lowest numbers them, so the column fits the panel's readable height (~40 px of axes)
        for p in (self.m_plot, self.l_plot):
            p.hideAxis("bottom")
        self.r_bars = BarsItem()
        self.r_plot.addItem(self.r_bars)
        self.partial = Heatmap(hover, SIGNED_CMAP)
        ci.addItem(self.partial.cell, row=2, col=1, colspan=2)
        # the partial output gets no more height than the small plots above it (its rows are
        # the tile's few query rows): no minimum heights, a dock's minimum would take height
        # from the panels beside it
        for row in range(3):
            ci.layout.setRowStretchFactor(row, 1)
        self.note = RunsLabel("", justify="left", size="9pt")
        ci.addItem(self.note, row=3, col=0, colspan=3)
        # (the small plots as wide as the grid: the grid is held square by the height at a low
        # window, and the small plots' titles fit one line each)
        ci.layout.setColumnStretchFactor(0, 2)
        ci.layout.setColumnStretchFactor(1, 1)
        ci.layout.setColumnStretchFactor(2, 1)
        self.view: TilingView | None = None
        self.message = ""  # why nothing is drawn (a refused request), else ""
        self._key = None
        self.requests = StepRequests(self, CACHE, self._show)
        self._retranslate_labels()

    # ---- language --------------------------------------------------------------------------
    def _retranslate_labels(self) -> None:
        self.block_label.setText(self.tr("blocks"))
        self.block_q.setToolTip(self.tr("Query block: rows of Q per tile"))
        self.block_k.setToolTip(self.tr("Key block: rows of K and V per tile"))
        for box, n in ((self.block_q, self.frame.config.seq_len if self.frame else 8),
                       (self.block_k, self.frame.config.key_len if self.frame else 8)):
            box.setItemText(0, self.tr("auto ({n})").format(n=auto_block(n)))
        set_axis_label(self.grid.item, "left", self.tr("query"))
        set_axis_label(self.grid.item, "bottom", self.tr("key"))
        # (the small plots' x: the query rows numbered as on the grid's query axis; no label of
        # their own, which took the rescale's last pixels in the panel's readable height)
        set_axis_label(self.partial.item, "left", self.tr("query"))
        set_axis_label(self.partial.item, "bottom", self.tr("dim of V"))

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        self.player.retranslate_ui()
        super().retranslate_ui()

    def heatmaps(self) -> list[Heatmap]:
        return [self.grid, self.partial]

    # ---- requests --------------------------------------------------------------------------
    def blocks(self) -> tuple[int | None, int | None]:
        """The chosen (query block, key block); None = auto."""
        return self.block_q.currentData(), self.block_k.currentData()

    def _on_blocks(self, _index: int) -> None:
        if self.frame is not None:
            self.draw_selection()

    def draw_frame(self, frame: Frame) -> None:
        self._retranslate_labels()  # the auto entries name this config's block

    def draw_selection(self) -> None:
        f = self.frame
        cfg = f.config
        head = min(self.selection.head, cfg.n_heads - 1)
        bq, bk = self.blocks()
        key = (cfg, head, bq, bk)
        if key == self._key and (self.view is not None or self.message):
            self._draw_all(keep=True)  # the same steps in another theme or language
            return
        job = lambda: tiling_view(f, head, bq, bk)  # noqa: E731
        if not self.requests.fetch(key, job):
            self.grid.set_title(self.tr("<b>Tiling</b> · the steps of head {h}, computing…").format(h=head))

    def _show(self, key, view: TilingView | None, error: str | None) -> None:
        if self.frame is None or key[0] != self.frame.config:
            return  # a result for an earlier config
        # the first steps shown keep the position the player holds (an export's copy of the
        # window's); later ones start at their last step, the whole result
        keep = self._key is None
        self._key = key
        self.view = view
        self.message = error or ""
        self._draw_all(keep=keep)

    # ---- drawing ---------------------------------------------------------------------------
    def _draw_all(self, keep: bool) -> None:
        th, v = self.theme, self.view
        shown = v is not None
        for item in (self.fog, self.lines, self.current, self.m_curve, self.m_old_curve, self.l_curve,
                     self.r_bars, self.cbar):
            item.setVisible(shown)
        if not shown:
            self.player.set_count(0, keep=False)
            self.grid.set_title(self.tr("<b>Tiling</b> · cannot step through this"))
            set_label_text(self.note, f"<span style='color:{th.error}'>{self.message}</span>",
                           color=th.foreground, size=th.pt(9.0))
            return
        f = self.frame
        finite = v.scores[np.isfinite(v.scores)]
        self.grid.set_data(v.scores, symmetric_levels(float(np.abs(finite).max()) if finite.size else 1.0),
                           source=(v,))
        set_bar_levels(self.cbar, self.grid.levels)
        set_axis_label(self.cbar, "left", self.tr("score"))
        self.grid.set_labels(f.query_labels, f.key_labels)
        S, Skv = v.scores.shape
        self.fog.setRect(QRectF(-0.5, -0.5, v.n_k * v.block_k, v.n_q * v.block_q))
        xs, ys = [], []
        for j in range(1, v.n_k):
            xs += [j * v.block_k - 0.5] * 2
            ys += [-0.5, S - 0.5]
        for i in range(1, v.n_q):
            xs += [-0.5, Skv - 0.5]
            ys += [i * v.block_q - 0.5] * 2
        self.lines.setData(np.array(xs, float), np.array(ys, float))
        grid = QColor(th.foreground)
        grid.setAlpha(150)
        self.lines.setPen(th.pen(grid, 1))
        self.current.setPen(th.pen(th.accent, 3))
        fog = QColor(th.background)
        skip = QColor(th.hatch)
        self._fog_lut = np.array([[fog.red(), fog.green(), fog.blue(), 200], [0, 0, 0, 0],
                                  [skip.red(), skip.green(), skip.blue(), 235], [0, 0, 0, 0]], np.uint8)
        self.m_curve.setPen(th.pen(th.accent, 2))
        self.m_curve.setSymbol("o")
        self.m_curve.setSymbolSize(7)
        self.m_curve.setSymbolBrush(QColor(th.accent))
        self.m_curve.setSymbolPen(None)
        self.m_old_curve.setPen(th.pen(th.muted, 1, Qt.PenStyle.DashLine))
        self.m_old_curve.setSymbol("o")
        self.m_old_curve.setSymbolSize(5)
        self.m_old_curve.setSymbolBrush(QColor(th.muted))
        self.m_old_curve.setSymbolPen(None)
        self.l_curve.setPen(th.pen(th.accent2, 2))
        self.l_curve.setSymbol("s")
        self.l_curve.setSymbolSize(6)
        self.l_curve.setSymbolBrush(QColor(th.accent2))
        self.l_curve.setSymbolPen(None)
        self._brushes = (QBrush(QColor(th.bar)), QBrush(QColor(th.accent)))
        for plot, data in ((self.m_plot, np.concatenate([v.m, v.m_old])), (self.l_plot, v.l)):
            fin = data[np.isfinite(data)]
            lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 1.0)
            lo = min(lo, 0.0) if plot is self.l_plot else lo
            pad = 0.08 * (hi - lo) if hi > lo else 0.5
            plot.setYRange(lo - pad, hi + pad, padding=0)
        self.r_plot.setYRange(0, 1.08, padding=0)
        scale = float(np.nanmax(np.abs(v.eager))) if np.isfinite(v.eager).any() else 1.0
        self._partial_levels = symmetric_levels(scale or 1.0)
        self.partial.set_labels(None, [str(i) for i in range(v.partial.shape[-1])])
        set_plot_title(self.m_plot, self.tr("running max <b>m</b>"), th, size=9.0)
        set_plot_title(self.l_plot, self.tr("running sum <b>ℓ</b>"), th, size=9.0)
        set_plot_title(self.r_plot, self.tr("rescale <b>e^(m_old − m_new)</b>"), th, size=9.0)
        pos = self.player.set_count(v.n_steps, keep=keep)
        self.draw_step(pos)

    def draw_step(self, i: int) -> None:
        """Step `i`: the cheap per-frame part of the drawing (the animation calls only this)."""
        v, f, th = self.view, self.frame, self.theme
        if v is None or not 0 <= i < v.n_steps:
            return
        states = tile_states(v, i)
        self.fog.setImage(self._fog_lut[states])
        q0, q1, k0, k1 = int(v.q0[i]), int(v.q1[i]), int(v.k0[i]), int(v.k1[i])
        self.current.setRect(QRectF(k0 - 0.5, q0 - 0.5, k1 - k0, q1 - q0))
        r = q1 - q0
        rows = np.arange(q0, q1, dtype=float)
        m, m_old = v.m[i, :r], v.m_old[i, :r]
        # (rows that see no key yet have m = −inf: a gap; all of them: no points, see set_curve)
        set_curve(self.m_curve, rows, np.where(np.isfinite(m), m, np.nan), connect="finite")
        set_curve(self.m_old_curve, rows, np.where(np.isfinite(m_old), m_old, np.nan), connect="finite")
        set_curve(self.l_curve, rows, v.l[i, :r])
        for p in (self.m_plot, self.l_plot, self.r_plot):
            p.setXRange(q0 - 0.6, q0 + v.block_q - 0.4, padding=0)
        rs = v.rescale[i, :r]
        grew = rs < 1
        groups = []
        for brush, sel in zip(self._brushes, (~grew, grew)):
            rects = [QRectF(q - 0.35, 0.0, 0.7, float(h)) for q, h in zip(rows[sel], rs[sel])]
            if rects:
                groups.append((brush, rects))
        self.r_bars.set_groups(groups, QRectF(q0 - 0.35, 0.0, v.block_q - 0.3, 1.0))
        self.partial.set_data(v.partial[i, :r], self._partial_levels, source=(v, i))
        self.partial.set_labels(f.query_labels[q0:q1], [str(d) for d in range(v.partial.shape[-1])])
        skipped = bool(v.skipped[i])
        what = self.tr("skipped: every cell masked") if skipped else self.tr("computed")
        self.grid.set_title(self.tr("<b>tile ({qi}, {ki})</b> of {nq}×{nk} · queries {q0}–{q1} × keys {k0}–{k1} · "
                               "{what} · step {step} of {n}").format(
            qi=int(v.qi[i]), ki=int(v.ki[i]), nq=v.n_q, nk=v.n_k, q0=q0, q1=q1 - 1, k0=k0, k1=k1 - 1, what=what,
            step=i + 1, n=v.n_steps))
        out = v.partial[i, :r]
        final = v.output[q0:q1]
        ok = np.isfinite(out) & np.isfinite(final)
        gap = float(np.abs(out[ok] - final[ok]).max()) if ok.any() else float("nan")
        set_plot_title(self.partial.item, self.tr("partial <b>O/ℓ</b> · max |Δ final| = {gap}").format(
            gap=fmt_number(gap, 2)), th, size=9.0)
        n_grew = int(grew.sum())
        if skipped:
            line1 = self.tr("this tile: skipped, m, ℓ and O unchanged")
        elif np.isneginf(m_old).all():  # no key seen before: m goes from −∞, nothing held to rescale
            line1 = self.tr("this tile: the first these {r} rows see: m, ℓ and O start from its scores, "
                            "nothing to rescale").format(r=r)
        elif n_grew == 0:
            line1 = self.tr("this tile: no row's max grew ({r} rows), so ℓ and O were not rescaled: this tile's "
                            "terms are added as they are (dashed: m before the tile)").format(r=r)
        else:
            line1 = self.tr("this tile: {n} of {r} rows rescaled: their max grew, so ℓ and O were multiplied by "
                            "e^(m_old − m_new), below 1 (dashed: m before the tile)").format(n=n_grew, r=r)
        done = int((v.step_of <= i).sum())
        skipped_so_far = int(v.skipped[: i + 1].sum())
        line2 = self.tr("tiles: {done} of {n} visited, {skipped} skipped (masked) · block {bq} × {bk}").format(
            done=done, n=v.n_steps, skipped=skipped_so_far, bq=v.block_q, bk=v.block_k)
        if i == v.n_steps - 1:
            line2 += " · " + verdict_text(v.max_abs_diff, v.ulps)
        else:
            line2 += " · " + self.tr("the match with eager shows at the last step")
        notes = [self.tr(text).format(**values) for text, values in v.notes]
        muted = th.muted
        html = "<br>".join([line1, line2, *(f"<span style='color:{muted}'>{n}</span>" for n in notes)])
        set_label_text(self.note, html, color=th.foreground, size=th.pt(9.0))

    def _describe(self, row: int, col: int) -> str:
        v = self.view
        if v is None:
            return ""
        s = v.scores[row, col]
        tile = (row // v.block_q, col // v.block_k)
        return self.tr("score[{q}, {k}] = {s} · tile {tile}").format(q=row, k=col, s=fmt_number(float(s)),
                                                                    tile=tile)

    def apply_theme(self, theme: Theme) -> None:
        for p in (self.m_plot, self.l_plot, self.r_plot):
            style_plot(p, theme)
        style_colorbar(self.cbar, theme)
        super().apply_theme(theme)
