"""`decode`: the KV cache filling token by token, and what it saves.

    K cache (Hkv × max_len), filled up to the offset | FLOPs of each step: with the
    V cache (Hkv × max_len)                          |   cache (O(n)) vs recomputing (O(n²))
    the new query row's weights, every query head,   | measured time of the two
      grouped by the KV head it reads (GQA)          |
    readout: this step's cost both ways, the running totals, and at the end
    decode(config) vs run(causal=True).output

The steps come from `engine.decode_steps` (explorer.stepthrough.decode_view),
computed once per config in a worker thread; an animation frame re-sets three
small images, two lines and the readout.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QColor

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
)
from ..figures.text import RunsLabel
from ..figures.themes import WEIGHTS_CMAP, Theme
from ..frame import Frame
from ..stepthrough import ROUNDING_ULPS, DecodeView, decode_view
from ..work.steps import ResultCache, StepRequests
from .base import Panel, register_panel
from .diagnostics import human_bytes, human_count
from .player import StepPlayer

CACHE = ResultCache(8)

#: the notes explorer.stepthrough attaches (English there), for lupdate: the panel translates them
_NOTES = (
    QT_TRANSLATE_NOOP("DecodePanel", "timed {n} of {total} steps (the rest would take over {s} s)"),
    QT_TRANSLATE_NOOP("DecodePanel", "one token (S = 1): the cache holds one key, with or without it the same work"),
    QT_TRANSLATE_NOOP("DecodePanel", "decoding is causal: each token sees the cache so far, so this equals the causal version of this config"),
)


#: a cache strip of up to this many rows labels every row (a taller one thins its labels out)
LABELLED_ROWS = 4


def group_labels(view: DecodeView) -> tuple[list[str], list[str]]:
    """(cache rows "K0←q0–3" … "V1←q4–7", query head rows "q5 → kv1"): which query heads share
    each KV head (short: a tick label holds 10 characters)."""
    reads = [f"q{h[0]}" if len(h) == 1 else f"q{h[0]}–{h[-1]}" for h in view.groups()]
    kv = [f"{kind}{j}←{r}" for kind in "KV" for j, r in enumerate(reads)]
    g = view.config.group_size
    return kv, [f"q{h} → kv{h // g}" for h in range(view.config.n_heads)]


@register_panel
class DecodePanel(Panel):
    name = "decode"
    title = QT_TRANSLATE_NOOP("Panel", "Decode: the KV cache step by step")
    readable_size = (520, 400)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        self.player = StepPlayer()
        self.toolbar.addWidget(self.player, 1)
        self.toolbar.addSpacing(24)
        self.player.position_changed.connect(self.draw_step)
        ci = self.graphics.ci
        # keys (rows 0 … Hkv−1) over values (rows Hkv … 2·Hkv−1): one image, one title
        self.cache = Heatmap(hover, WEIGHTS_CMAP, axes=("left",))
        self.weights = Heatmap(hover, WEIGHTS_CMAP)
        ci.addItem(self.cache.cell, row=0, col=0)
        ci.addItem(self.weights.cell, row=1, col=0, rowspan=2)
        # their colour scales, beside them (both strips get one: their slots stay in line):
        # ‖k‖ and ‖v‖ each over its largest, and the new query's weights
        self.cache_bar, self.weights_bar = (
            pg.ColorBarItem(values=(0.0, 1.0), colorMap=WEIGHTS_CMAP, interactive=False, width=12) for _ in range(2))
        for bar, strip in ((self.cache_bar, self.cache), (self.weights_bar, self.weights)):
            bar.setImageItem([], insert_in=strip.item)
            set_bar_levels(bar, (0.0, 1.0))
        self.kv_line = pg.PlotDataItem([], [])
        self.kv_line.setZValue(6)
        self.cache.vb.addItem(self.kv_line, ignoreBounds=True)
        self.group_lines = pg.PlotDataItem([], [], connect="pairs")
        self.group_lines.setZValue(6)
        self.weights.vb.addItem(self.group_lines, ignoreBounds=True)

        def plot(row: int) -> pg.PlotItem:
            p = add_plot(ci, row, 1, axisItems=lean_axes())
            p.hideButtons()
            p.setMenuEnabled(False)
            p.setMouseEnabled(x=False, y=False)
            p.showGrid(x=True, y=True, alpha=0.15)
            return p

        self.flops_plot = plot(0)
        ci.layout.setRowStretchFactor(0, 1)
        self.flops_cached = self.flops_plot.plot([], [])
        self.flops_full = self.flops_plot.plot([], [])
        self.ms_plot = plot(1)
        self.ms_cached = self.ms_plot.plot([], [], connect="finite")
        self.ms_full = self.ms_plot.plot([], [], connect="finite")
        self.cum_plot = plot(2)
        self.cum_cached = self.cum_plot.plot([], [])
        self.cum_full = self.cum_plot.plot([], [])
        # the current step: one line per plot, moved each frame (ranges fixed per view, so a
        # frame re-lays out no axis)
        self.now_lines = [pg.InfiniteLine(angle=90, movable=False) for _ in range(3)]
        for p, line in zip((self.flops_plot, self.ms_plot, self.cum_plot), self.now_lines):
            p.addItem(line, ignoreBounds=True)
        self.note = RunsLabel("", justify="left", size="9pt")
        ci.addItem(self.note, row=3, col=0, colspan=2)
        ci.layout.setColumnStretchFactor(0, 3)
        ci.layout.setColumnStretchFactor(1, 2)
        self.view: DecodeView | None = None
        self.message = ""
        self._key = None
        self.requests = StepRequests(self, CACHE, self._show)
        self._strip = np.zeros((0, 0), np.float32)  # (2·Hkv, S) ‖k‖ over ‖v‖, each over its max
        self._retranslate_labels()

    def _retranslate_labels(self) -> None:
        # one axis title per column, at the bottom: the strips above keep their height for cells
        set_axis_label(self.weights.item, "bottom", self.tr("cache slot = token position"))
        set_axis_label(self.cum_plot, "bottom", self.tr("tokens in the cache n"))
        # (short: the strip is a few rows high; each norm is over its largest, the help says so)
        set_axis_label(self.cache_bar, "left", "‖k‖, ‖v‖")
        set_axis_label(self.weights_bar, "left", self.tr("weight"))

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        self.player.retranslate_ui()
        super().retranslate_ui()

    def heatmaps(self) -> list[Heatmap]:
        return [self.cache, self.weights]

    # ---- requests --------------------------------------------------------------------------
    def draw_frame(self, frame: Frame) -> None:
        pass  # the steps depend on the config alone: draw_selection asks for them

    def draw_selection(self) -> None:
        cfg = self.frame.config
        key = cfg
        if key == self._key and (self.view is not None or self.message):
            self._draw_all(keep=True)
            return
        job = lambda: decode_view(cfg)  # noqa: E731
        if not self.requests.fetch(key, job):
            self.cache.set_title(self.tr("<b>KV cache</b> · decoding {n} tokens, computing…").format(n=cfg.seq_len))

    def _show(self, key, view: DecodeView | None, error: str | None) -> None:
        if self.frame is None or key != self.frame.config:
            return
        keep = self._key is None  # see TilingPanel._show
        self._key = key
        self.view = view
        self.message = error or ""
        self._draw_all(keep=keep)

    # ---- drawing ---------------------------------------------------------------------------
    def _draw_all(self, keep: bool) -> None:
        th, v, f = self.theme, self.view, self.frame
        items = [self.group_lines, self.kv_line, *self.now_lines, self.flops_cached, self.flops_full,
                 self.ms_cached, self.ms_full, self.cum_cached, self.cum_full, self.cache_bar, self.weights_bar]
        for it in items:
            it.setVisible(v is not None)
        if v is None:
            self.player.set_count(0, keep=False)
            self.cache.set_title(self.tr("<b>KV cache</b> · cannot step through this"))
            set_label_text(self.note, f"<span style='color:{th.error}'>{self.message}</span>",
                           color=th.foreground, size=th.pt(9.0))
            return
        cfg = v.config
        kv_rows, q_rows = group_labels(v)
        cols = f.key_labels[: cfg.seq_len]
        self.cache.set_labels(kv_rows, cols)
        # ‖k‖ and ‖v‖ each on its own scale: the colour compares slots, not keys with values
        self._strip = np.concatenate([v.k_norm / (np.nanmax(v.k_norm) or 1.0),
                                      v.v_norm / (np.nanmax(v.v_norm) or 1.0)]).astype(np.float32)
        self.weights.set_labels(q_rows, cols)
        # a label on every cache row (the lesson says so) while it has at most LABELLED_ROWS:
        # the strip is given the height (only K0 and V0 of a GQA 2-KV-head cache were labelled)
        n = len(kv_rows)
        self.cache.vb.setMinimumHeight(self.fontMetrics().height() * n if n <= LABELLED_ROWS else 0)
        g, S = cfg.group_size, cfg.seq_len
        self.kv_line.setData([-0.5, S - 0.5], [cfg.kv_heads - 0.5] * 2)
        self.kv_line.setPen(th.pen(QColor(th.foreground), 2))
        xs, ys = [], []
        for j in range(1, cfg.kv_heads):
            xs += [-0.5, S - 0.5]
            ys += [j * g - 0.5] * 2
        self.group_lines.setData(np.array(xs, float), np.array(ys, float))
        self.group_lines.setPen(th.pen(QColor(th.foreground), 1.5))
        n = np.arange(1, S + 1, dtype=float)
        styles = ((self.flops_cached, self.flops_full, v.flops_cached, v.flops_recompute),
                  (self.ms_cached, self.ms_full, v.ms_cached, v.ms_recompute),
                  (self.cum_cached, self.cum_full, np.cumsum(v.flops_cached), np.cumsum(v.flops_recompute)))
        for cached, full, a, b in styles:
            cached.setData(n, a, connect="finite")
            full.setData(n, b, connect="finite")
            cached.setPen(th.pen(th.accent2, 2))
            full.setPen(th.pen(th.accent, 2))
            for c, colour in ((cached, th.accent2), (full, th.accent)):
                c.setSymbol("o" if c in (self.ms_cached, self.ms_full) else None)
                c.setSymbolSize(4)
                c.setSymbolBrush(QColor(colour))
                c.setSymbolPen(None)
        for line in self.now_lines:
            line.setPen(th.pen(th.muted, 1, Qt.PenStyle.DashLine))
        for p, (_c, _f, a, b) in zip((self.flops_plot, self.ms_plot, self.cum_plot), styles):
            top = np.nanmax(np.concatenate([a, b])) if np.isfinite(np.concatenate([a, b])).any() else 1.0
            p.setRange(xRange=(0.5, S + 0.5), yRange=(0.0, 1.06 * float(top) or 1.0), padding=0)
        set_plot_title(self.flops_plot, self.tr("FLOPs of each step: <span style='color:{c}'>with the cache</span> "
                                                "vs <span style='color:{r}'>recomputing</span>").format(
            c=th.accent2, r=th.accent), th, size=9.0)
        timed = int(np.isfinite(v.ms_cached).sum())
        set_plot_title(self.ms_plot, self.tr("measured ms per step ({n} timed)").format(n=timed), th, size=9.0)
        set_plot_title(self.cum_plot, self.tr("FLOPs so far (sums of the above)"), th, size=9.0)
        pos = self.player.set_count(v.n_steps, keep=keep)
        self.draw_step(pos)

    def draw_step(self, t: int) -> None:
        """Step `t` (token t decoded, the cache holding t + 1): the per-frame part."""
        v, th, f = self.view, self.theme, self.frame
        if v is None or not 0 <= t < v.n_steps:
            return
        cfg = v.config
        off = int(v.offset[t])
        shown = np.full_like(self._strip, np.nan)
        shown[:, :off] = self._strip[:, :off]  # the slots written so far; the rest is the empty buffer
        self.cache.set_data(shown, (0.0, 1.0), source=(v, t))
        self.weights.set_data(v.weights[t], (0.0, 1.0), source=(v, t))
        head = min(self.selection.head, cfg.n_heads - 1)
        self.weights.set_marker("row", head, 0)

        token = f.query_labels[t] if t < len(f.query_labels) else str(t)
        self.cache.set_title(self.tr("<b>KV cache</b> · K and V, {hkv}×{max} each, preallocated ({b}) · offset {o}: "
                                "{o} filled, {left} empty").format(hkv=cfg.kv_heads, max=cfg.seq_len, o=off,
                                                                   b=human_bytes(v.cache_bytes), left=cfg.seq_len - off))
        shared = self.tr("{g} query heads share each KV head").format(g=cfg.group_size) if cfg.group_size > 1 \
            else self.tr("one KV head per query head (MHA)")
        self.weights.set_title(self.tr("<b>the new query</b> (token {t} ‘{tok}’) over the {n} cached keys · "
                                  "{shared}").format(t=t, tok=token, n=off, shared=shared))
        for line in self.now_lines:
            line.setValue(float(off))
        fc, fr = v.flops_cached[t], v.flops_recompute[t]
        line1 = self.tr("token {t}: {c} FLOPs with the cache vs {r} recomputing ({x}×)").format(
            t=t, c=human_count(fc), r=human_count(fr), x=fmt_number(fr / fc, 3))
        if math.isfinite(v.ms_cached[t]):
            line1 += " · " + self.tr("measured {a} ms vs {b} ms").format(a=fmt_number(v.ms_cached[t], 2),
                                                                   b=fmt_number(v.ms_recompute[t], 2))
        sc, sr = v.flops_cached[: t + 1].sum(), v.flops_recompute[: t + 1].sum()
        line2 = self.tr("so far: {c} vs {r} FLOPs ({x}× saved)").format(c=human_count(sc), r=human_count(sr),
                                                                   x=fmt_number(sr / sc, 3))
        if t == v.n_steps - 1:
            if math.isfinite(v.ulps):
                mark = "✓" if v.ulps <= ROUNDING_ULPS else "⚠"
                line2 += " · " + self.tr("decode vs full causal attention: max |Δ| = {d} = {u} ε {m}").format(
                    d=fmt_number(v.max_abs_diff, 2), u=fmt_number(v.ulps, 2), m=mark)
            else:
                line2 += " · " + self.tr("decode vs full causal attention: nothing finite to compare")
        else:
            line2 += " · " + self.tr("the match with full causal attention shows at the last step")
        notes = [self.tr(text).format(**values) for text, values in v.notes]
        html = "<br>".join([line1, line2, *(f"<span style='color:{th.muted}'>{n}</span>" for n in notes)])
        set_label_text(self.note, html, color=th.foreground, size=th.pt(9.0))

    def apply_theme(self, theme: Theme) -> None:
        for p in (self.flops_plot, self.ms_plot, self.cum_plot):
            style_plot(p, theme)
        for bar in (self.cache_bar, self.weights_bar):
            style_colorbar(bar, theme)
        super().apply_theme(theme)
