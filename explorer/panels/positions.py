"""`positions`: the positional encoding in use, and what it does to a score as distance grows.

    sinusoidal / learned   the table added to X (position × dim) | cos-similarity vs distance
    rope                   cos(p·θ_i) per position and pair      | q·k of one vector Δ apart
    alibi                  the selected head's bias (query × key)| −slope·Δ of every head
    none                   cos(x_i, x_j) of X's rows: content only, a set and not a sequence

"Shuffle the words" permutes the typed sentence: without positions every weight
only moves with its token (the rows and columns permute, the numbers stay).
"""

from __future__ import annotations

import random

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtWidgets import QLabel, QPushButton

from engine import positional as pe

from ..figures.heatmap import Heatmap
from ..figures.plots import (
    add_plot,
    lean_axes,
    set_axis_label,
    set_bar_levels,
    set_label_text,
    set_plot_title,
    style_colorbar,
    style_plot,
)
from ..figures.text import RunsLabel
from ..figures.themes import CATEGORY_COLORS, SIGNED_CMAP, Theme
from ..frame import Frame, positional_view
from .base import Panel, register_panel

#: at most this many heads get a line of their own in the ALiBi plot
MAX_LINES = 8


@register_panel
class PositionsPanel(Panel):
    name = "positions"
    title = QT_TRANSLATE_NOOP("Panel", "Positions: the encoding and distance")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        self.shuffle = QPushButton()
        self.shuffle.clicked.connect(self.shuffle_words)
        self.toolbar.addWidget(self.shuffle)
        self.shuffle_note = QLabel()
        self.shuffle_note.setObjectName("hint")
        self.toolbar.addWidget(self.shuffle_note, 1)
        self.toolbar.addSpacing(24)  # the panel's "?" sits in the corner
        self.table = Heatmap(hover, SIGNED_CMAP)
        self.graphics.addItem(self.table.cell, row=0, col=0)
        # the table's colour scale (a legend for the levels the heatmap colours itself with)
        self.cbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=SIGNED_CMAP, interactive=False, width=12)
        self.cbar.setImageItem([], insert_in=self.table.item)  # (beside the table, right of its axes)
        self.curve_plot = add_plot(self.graphics.ci, 0, 1, axisItems=lean_axes())
        self.curve_plot.hideButtons()
        self.curve_plot.setMenuEnabled(False)
        self.curve_plot.showGrid(x=True, y=True, alpha=0.15)
        self.curves = [self.curve_plot.plot([], []) for _ in range(MAX_LINES)]
        self.note = RunsLabel("", justify="left", size="9pt")
        self.graphics.ci.addItem(self.note, row=1, col=0, colspan=2)
        self.graphics.ci.layout.setColumnStretchFactor(0, 3)
        self.graphics.ci.layout.setColumnStretchFactor(1, 2)
        self._shuffles = 0
        self._retranslate_labels()

    def _retranslate_labels(self) -> None:
        self.shuffle.setText(self.tr("Shuffle the words"))
        self.shuffle.setToolTip(self.tr("Put the typed words in a random order: without positions, the "
                                        "weights move with their tokens and do not change"))
        set_axis_label(self.curve_plot, "bottom", self.tr("distance Δ (tokens)"))

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        super().retranslate_ui()

    def heatmaps(self) -> list[Heatmap]:
        return [self.table]

    _view_of: tuple | None = None  # ((config, head), PositionalView) last computed

    def _view(self, cfg, head: int):
        """positional_view of `cfg`, computed once per config (and head, for ALiBi): a
        selection or language change at S = 4096 recomputed its S×S similarity (~2.5 s)."""
        key = (cfg, head if cfg.positional == "alibi" else 0)
        if self._view_of is None or self._view_of[0] != key:
            self._view_of = (key, positional_view(cfg, head))
        return self._view_of[1]

    def shuffle_words(self) -> None:
        """The typed sentence in another order (a new config: Ctrl+Z takes it back)."""
        cfg = self.frame.config if self.frame is not None else None
        if cfg is None or not cfg.tokens or len(cfg.tokens) < 2:
            return
        self._shuffles += 1
        words = list(cfg.tokens)
        rng = random.Random(self._shuffles)
        order = words[:]
        while order == words and len(set(words)) > 1:
            rng.shuffle(order)
        self.app_state.set_config(cfg.replace(tokens=tuple(order)))

    def draw_frame(self, frame: Frame) -> None:
        cfg = frame.config
        can = bool(cfg.tokens) and len(set(cfg.tokens)) > 1
        self.shuffle.setEnabled(can)
        self.shuffle_note.setText("" if can else self.tr("type a sentence to shuffle it"))

    def draw_selection(self) -> None:
        f, th = self.frame, self.theme
        cfg = f.config
        view = self._view(cfg, self.selection.head)
        muted = th.muted
        self.table.set_data(view.table, view.levels, source=(view,))  # (one view object per config: _view)
        set_bar_levels(self.cbar, view.levels)
        values = {"none": self.tr("cos similarity"), "sinusoidal": self.tr("value"),
                  "learned": self.tr("value"), "rope": "cos(p·θ_i)", "alibi": self.tr("bias")}
        set_axis_label(self.cbar, "left", values.get(view.kind, ""))
        tokens = {"query": f.query_labels, "key": f.key_labels}
        self.table.set_labels(tokens.get(view.rows), tokens.get(view.cols))
        names = {"position": self.tr("position"), "dim": self.tr("dim"), "pair": self.tr("pair i"),
                 "query": self.tr("query"), "key": self.tr("key")}
        set_axis_label(self.table.item, "left", names[view.rows])
        set_axis_label(self.table.item, "bottom", names[view.cols])
        rows, cols = view.table.shape
        if view.kind == "none":
            self.table.set_title(self.tr("<b>No positional encoding</b>: cos(x_i, x_j) of X's rows · {rows}×{cols}").format(
                rows=rows, cols=cols))
            curve_title = self.tr("<b>similarity</b> of two rows Δ apart")
            note = self.tr("attention sees a set, not a sequence: only equal tokens have equal rows")
        elif view.kind in ("sinusoidal", "learned"):
            kind = self.tr("sinusoidal") if view.kind == "sinusoidal" else self.tr("learned")
            self.table.set_title(self.tr("<b>{kind} table</b> added to X · {rows}×{cols}").format(
                kind=kind, rows=rows, cols=cols))
            curve_title = self.tr("<b>similarity</b> of two positions Δ apart")
            note = (self.tr("nearby positions get similar vectors: scores can tell near from far")
                    if view.kind == "sinusoidal" else
                    self.tr("a trained vector per position (random here): nothing says which are near"))
        elif view.kind == "rope":
            self.table.set_title(self.tr("<b>RoPE</b>: cos(p·θ_i), pair i turned by p·10000^(−2i/d_k) · "
                                         "{rows}×{cols}").format(rows=rows, cols=cols))
            curve_title = self.tr("<b>q·k</b> of one vector Δ positions apart")
            note = self.tr("q·k depends on the distance Δ only, not on where the pair sits")
        else:
            self.table.set_title(self.tr("<b>ALiBi</b> bias of head {h} · {rows}×{cols}").format(
                h=min(self.selection.head, cfg.n_heads - 1), rows=rows, cols=cols))
            curve_title = self.tr("<b>bias</b> −slope·Δ per head")
            slopes = pe.alibi_slopes(cfg.n_heads).tolist()
            key = " ".join(  # the lines' legend: each head's colour and slope
                f"<span style='color:{CATEGORY_COLORS[g % len(CATEGORY_COLORS)]}'>━</span>&nbsp;"
                f"h{g}&nbsp;{slopes[g]:.3g}" for g in range(min(cfg.n_heads, MAX_LINES)))
            more = self.tr(" (first {n} of {h} heads)").format(n=MAX_LINES, h=cfg.n_heads) \
                if cfg.n_heads > MAX_LINES else ""
            note = self.tr("each head its own slope: some look far, some only near") + f" · {key}{more}"
        set_plot_title(self.curve_plot, curve_title, th)
        set_label_text(self.note, f"<span style='color:{muted}'>{note}</span>", color=th.foreground,
                       size=th.pt(9.0))
        items = list(view.curves.items())
        for i, line in enumerate(self.curves):
            if i < len(items):
                _label, ys = items[i]
                line.setData(view.distance, ys)
                colour = CATEGORY_COLORS[i % len(CATEGORY_COLORS)] if len(items) > 1 else th.accent
                line.setPen(th.pen(colour, 2))
                line.show()
            else:
                line.hide()
        lo = min(float(np.min(ys)) for _l, ys in items[:MAX_LINES])
        hi = max(float(np.max(ys)) for _l, ys in items[:MAX_LINES])
        self.curve_plot.setRange(xRange=(0, max(float(view.distance[-1]), 1.0)),
                                 yRange=(min(lo, 0.0), max(hi, 0.0) or 1.0), padding=0.05)
        set_axis_label(self.curve_plot, "left", items[0][0] if len(items) == 1 else self.tr("bias"))

    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.curve_plot, theme)
        style_colorbar(self.cbar, theme)
        super().apply_theme(theme)

