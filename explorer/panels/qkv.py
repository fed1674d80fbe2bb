"""`qkv`: X, the selected head's W_Q/W_K/W_V slices and Q, K, V (and weights·V).

    X (S×d) ─·W_Q[:, h]→ Q_h (S×Dh)      for GQA, K and V are those of the
            ─·W_K[:, g]→ K_g (Skv×Dh)    KV head g = kv_head_of(h) that the
            ─·W_V[:, g]→ V_g (Skv×Dh)    selected query head reads
    softmax(Q_h K_gᵀ·scale) · V_g = context_h (S×Dh)

Signed matrices use the diverging map centred on zero; the W slices share one
colour bar, Q, K and V another (X and the context have their own levels). The
matrices sit in three strips (tiles.py) by what their rows are: query tokens
(X | Q | weights·V), model dims (W_Q | W_K | W_V) and key tokens (K | V).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP

from ..figures.plots import set_bar_levels, sticky_max, style_colorbar
from ..figures.themes import SIGNED_CMAP, Theme
from ..figures.tiles import TileStrip
from ..frame import Frame
from .base import Panel, register_panel


def _absmax(*arrays: np.ndarray) -> float:
    """The largest finite |value| of the arrays (1 when there is none)."""
    m = 0.0
    for a in arrays:
        if a.size:
            v = float(np.abs(a).max())  # NaN and ±inf show up here: then the slow, careful way
            if not math.isfinite(v):
                v = float(np.nanmax(np.abs(np.nan_to_num(a, posinf=0.0, neginf=0.0))))
            m = max(m, v)
    return m if m > 0 else 1.0


@register_panel
class QKVPanel(Panel):
    name = "qkv"
    title = QT_TRANSLATE_NOOP("Panel", "Q, K, V: the projections of the selected head")

    def __init__(self, selection, hover, parent=None) -> None:
        super().__init__(selection, hover, parent)
        sel = self.selection
        pick_q = lambda r, c: sel.set(query=r)  # noqa: E731
        pick_k = lambda r, c: sel.set(key=r)  # noqa: E731

        def describe(name):
            return lambda r, c: self._describe(name, r, c)

        # three strips: the matrices with query-token rows, the W slices (model-dim rows),
        # the matrices with key-token rows
        self.queries = TileStrip(hover, SIGNED_CMAP)
        self.x = self.queries.add("X", 2.0, pick_q, describe("X"))
        self.q = self.queries.add("Q", 1.0, pick_q, describe("Q"))
        self.ctx = self.queries.add("context", 1.0, pick_q, describe("context"))
        self.weights = TileStrip(hover, SIGNED_CMAP, axis=False)
        self.wq = self.weights.add("W_Q", 1.0, None, describe("W_Q"))
        self.wk = self.weights.add("W_K", 1.0, None, describe("W_K"))
        self.wv = self.weights.add("W_V", 1.0, None, describe("W_V"))
        self.keys = TileStrip(hover, SIGNED_CMAP)
        # cross-attention: the memory K and V are computed from (shown only then)
        self.mem = self.keys.add("memory", 2.0, pick_k, describe("memory"))
        self.mem.set_visible(False)
        self.k = self.keys.add("K", 1.0, pick_k, describe("K"))
        self.v = self.keys.add("V", 1.0, pick_k, describe("V"))
        g = self.graphics
        # colour bars: legends for the levels the W slices and Q, K, V share
        self.w_bar = pg.ColorBarItem(values=(-1, 1), colorMap=SIGNED_CMAP, interactive=False, width=10)
        self.qkv_bar = pg.ColorBarItem(values=(-1, 1), colorMap=SIGNED_CMAP, interactive=False, width=10)
        g.addItem(self.queries.item, row=0, col=0, colspan=3)
        g.addItem(self.keys.item, row=1, col=0)
        g.addItem(self.weights.item, row=1, col=1)
        g.addItem(self.w_bar, row=1, col=2)
        g.addItem(self.qkv_bar, row=0, col=3, rowspan=2)
        lay = g.ci.layout
        lay.setColumnStretchFactor(0, 1)
        lay.setColumnStretchFactor(1, 1)
        self._names: dict[str, np.ndarray] = {}
        self._levels: dict[str, float] = {}  # sticky colour levels; reset_view forgets them

    def _sym(self, name: str, *arrays: np.ndarray) -> tuple[float, float]:
        """Symmetric levels ±M, M nice and sticky (colour bars keep their ticks while dragging)."""
        m = sticky_max(self._levels.get(name), _absmax(*arrays), shrink=0.5)
        self._levels[name] = m
        return (-m, m)

    def strips(self) -> list[TileStrip]:
        return [self.queries, self.weights, self.keys]

    def _describe(self, name: str, r: int, c: int) -> str:
        a = self._names.get(name)
        if a is None or r >= a.shape[0] or c >= a.shape[1]:
            return ""
        f = self.frame
        if name == "memory":
            where = self.tr("memory row {row} ‘{label}’, dim {col}").format(row=r, label=f.key_labels[r], col=c)
        elif name in ("X", "Q", "context"):
            where = self.tr("query {row} ‘{label}’, dim {col}").format(row=r, label=f.query_labels[r], col=c)
        elif name in ("K", "V"):
            where = self.tr("key {row} ‘{label}’, dim {col}").format(row=r, label=f.key_labels[r], col=c)
        else:
            where = self.tr("model dim {row} → head dim {col}").format(row=r, col=c)
        return f"{name}[{r}, {c}] = {a[r, c]:.4g} · {where}"

    def draw_frame(self, frame: Frame) -> None:
        self.queries.set_labels(frame.query_labels)
        self.keys.set_labels(frame.key_labels)
        x = frame.x
        self.x.set_data(x, self._sym("X", x))
        cfg = frame.config
        pos = "" if cfg.positional in ("none", "rope", "alibi") else self.tr(" + {positional} positions").format(
            positional=cfg.positional)
        self._names["X"] = x
        mem = frame.memory
        self.mem.set_visible(mem is not None)
        if mem is None:
            self.x.set_title(f"<b>X</b>{pos} · {x.shape[0]}×{x.shape[1]}")
        else:
            self.mem.set_data(mem, self._sym("memory", mem))
            self._names["memory"] = mem
            muted = self.theme.muted
            q_note, kv_note = self.tr("(the queries' input)"), self.tr("(keys and values come from it)")
            self.x.set_title(f"<b>X</b>{pos} · {x.shape[0]}×{x.shape[1]} <span style='color:{muted}'>{q_note}</span>")
            self.mem.set_title(self.tr("<b>memory</b>{pos} · {rows}×{cols}").format(
                pos=pos, rows=mem.shape[0], cols=mem.shape[1]) + f" <span style='color:{muted}'>{kv_note}</span>")

    def draw_selection(self) -> None:
        f, sel = self.frame, self.selection
        cfg = f.config
        h, dh = sel.head, cfg.head_dim
        g = cfg.kv_head_of(h)
        wq = f.w_q[:, h * dh:(h + 1) * dh]
        wk = f.w_k[:, g * dh:(g + 1) * dh]
        wv = f.w_v[:, g * dh:(g + 1) * dh]
        q, k, v, ctx = f.q[h], f.k[g], f.v[g], f.context[h]
        w_levels = self._sym("W", wq, wk, wv)
        self.wq.set_data(wq, w_levels)
        self.wk.set_data(wk, w_levels)
        self.wv.set_data(wv, w_levels)
        set_bar_levels(self.w_bar, w_levels)
        qkv_levels = self._sym("QKV", q, k, v)
        self.q.set_data(q, qkv_levels)
        self.k.set_data(k, qkv_levels)
        self.v.set_data(v, qkv_levels)
        set_bar_levels(self.qkv_bar, qkv_levels)
        self.ctx.set_data(ctx, self._sym("context", ctx))
        self._names.update({"W_Q": wq, "W_K": wk, "W_V": wv, "Q": q, "K": k, "V": v, "context": ctx})
        muted = self.theme.muted
        shared = ""
        if cfg.kv_heads != cfg.n_heads:
            mates = [j for j in range(cfg.n_heads) if cfg.kv_head_of(j) == g]
            mates_text = self.tr("(q heads {first}–{last})").format(first=mates[0], last=mates[-1])
            shared = f" <span style='color:{muted}'>{mates_text}</span>"
        rope = self.tr(" after RoPE") if cfg.positional == "rope" else ""
        head = self.tr("head {h}").format(h=h)
        self.wq.set_title(f"<b>W_Q</b>[:, h{h}] · {wq.shape[0]}×{dh}")
        self.wk.set_title(f"<b>W_K</b>[:, kv {g}]{shared}")
        self.wv.set_title(f"<b>W_V</b>[:, kv {g}]{shared}")
        self.q.set_title(f"<b>Q</b> {head}{rope} · {q.shape[0]}×{dh}")
        self.k.set_title(f"<b>K</b> kv {g}{rope} · {k.shape[0]}×{dh}")
        self.v.set_title(f"<b>V</b> kv {g} · {v.shape[0]}×{dh}")
        self.ctx.set_title(f"<b>weights·V</b> {head} · {ctx.shape[0]}×{dh}")
        for tile in (self.x, self.q, self.ctx):
            tile.set_marker("row", sel.query)
        for tile in (self.mem, self.k, self.v):
            tile.set_marker("row", sel.key)
        for strip in self.strips():
            strip.settle()

    def apply_theme(self, theme: Theme) -> None:
        for bar in (self.w_bar, self.qkv_bar):
            style_colorbar(bar, theme)
        for strip in self.strips():
            strip.apply_theme(theme)
        super().apply_theme(theme)
