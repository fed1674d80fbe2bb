"""`qkv`: X, the selected head's W_Q/W_K/W_V slices and Q, K, V (and weights·V).

    X (S×d) ─·W_Q[:, h]→ Q_h (S×Dh)      for GQA, K and V are those of the
            ─·W_K[:, g]→ K_g (Skv×Dh)    KV head g = kv_head_of(h) that the
            ─·W_V[:, g]→ V_g (Skv×Dh)    selected query head reads
    softmax(Q_h K_gᵀ·scale) · V_g = context_h (S×Dh)

Signed matrices use the diverging map centred on zero; the W slices share one
colour bar, Q, K, V and the context share another.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtGui import QColor

from ..frame import Frame
from ..themes import SIGNED_CMAP, Theme
from .base import Panel, register_panel
from .heatmap import Heatmap
from .plotting import set_bar_levels, sticky_max


def _absmax(*arrays: np.ndarray) -> float:
    m = 0.0
    for a in arrays:
        if a.size:
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

        def make(title, row_title, col_title, on_click=None, describe=None):
            # shapes are in the plot titles and token labels on the rows: the space goes
            # to the matrices (W rows are model dims, no labels needed)
            axes = ("left",) if row_title != "model dim" else ()
            return Heatmap(hover, SIGNED_CMAP, axes=axes, title=title, on_click=on_click, describe=describe)

        pick_q = lambda r, c: sel.set(query=r)  # noqa: E731
        pick_k = lambda r, c: sel.set(key=r)  # noqa: E731
        self.x = make("X", "query token", "model dim", pick_q, lambda r, c: self._describe("X", r, c))
        self.wq = make("W_Q", "model dim", "head dim", None, lambda r, c: self._describe("W_Q", r, c))
        self.wk = make("W_K", "model dim", "head dim", None, lambda r, c: self._describe("W_K", r, c))
        self.wv = make("W_V", "model dim", "head dim", None, lambda r, c: self._describe("W_V", r, c))
        self.ctx = make("context", "query token", "head dim", pick_q, lambda r, c: self._describe("context", r, c))
        self.q = make("Q", "query token", "head dim", pick_q, lambda r, c: self._describe("Q", r, c))
        self.k = make("K", "key token", "head dim", pick_k, lambda r, c: self._describe("K", r, c))
        self.v = make("V", "key token", "head dim", pick_k, lambda r, c: self._describe("V", r, c))
        g = self.graphics
        for col, hm in enumerate((self.x, self.wq, self.wk, self.wv)):
            g.addItem(hm.item, row=0, col=col)
        for col, hm in enumerate((self.ctx, self.q, self.k, self.v)):
            g.addItem(hm.item, row=1, col=col)
        lay = g.ci.layout
        lay.setColumnStretchFactor(0, 4)
        for c in (1, 2, 3):
            lay.setColumnStretchFactor(c, 2)
        # colour bars: legends for the levels the W slices (row 0) and Q, K, V (row 1) share
        self.w_bar = pg.ColorBarItem(values=(-1, 1), colorMap=SIGNED_CMAP, interactive=False, width=10)
        self.wv.item.layout.addItem(self.w_bar, 2, 5)
        self.qkv_bar = pg.ColorBarItem(values=(-1, 1), colorMap=SIGNED_CMAP, interactive=False, width=10)
        self.v.item.layout.addItem(self.qkv_bar, 2, 5)
        self._names: dict[str, np.ndarray] = {}
        self._levels: dict[str, float] = {}

    def _sym(self, name: str, *arrays: np.ndarray) -> tuple[float, float]:
        """Symmetric levels ±M, M nice and sticky (colour bars keep their ticks while dragging)."""
        m = sticky_max(self._levels.get(name), _absmax(*arrays), shrink=0.5)
        self._levels[name] = m
        return (-m, m)

    def heatmaps(self) -> list[Heatmap]:
        return [self.x, self.wq, self.wk, self.wv, self.ctx, self.q, self.k, self.v]

    def _describe(self, name: str, r: int, c: int) -> str:
        a = self._names.get(name)
        if a is None or r >= a.shape[0] or c >= a.shape[1]:
            return ""
        f = self.frame
        if name in ("X", "Q", "context"):
            where = self.tr("query {row} ‘{label}’, dim {col}").format(row=r, label=f.query_labels[r], col=c)
        elif name in ("K", "V"):
            where = self.tr("key {row} ‘{label}’, dim {col}").format(row=r, label=f.key_labels[r], col=c)
        else:
            where = self.tr("model dim {row} → head dim {col}").format(row=r, col=c)
        return f"{name}[{r}, {c}] = {a[r, c]:.4g} · {where}"

    def draw_frame(self, frame: Frame) -> None:
        ql, kl = frame.query_labels, frame.key_labels
        self.x.set_labels(ql, None)
        self.ctx.set_labels(ql, None)
        self.q.set_labels(ql, None)
        self.k.set_labels(kl, None)
        self.v.set_labels(kl, None)
        for hm in (self.wq, self.wk, self.wv):
            hm.set_labels(None, None)
        x = frame.x
        self.x.set_data(x, self._sym("X", x))
        cfg = frame.config
        pos = "" if cfg.positional in ("none", "rope", "alibi") else self.tr(" + {positional} positions").format(
            positional=cfg.positional)
        self.x.set_title(f"<b>X</b>{pos} · {x.shape[0]}×{x.shape[1]}")
        self._names["X"] = x

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
        for hm in (self.x, self.q, self.ctx):
            hm.set_marker("row", sel.query)
        for hm in (self.k, self.v):
            hm.set_marker("row", sel.key)

    def apply_theme(self, theme: Theme) -> None:
        for bar in (self.w_bar, self.qkv_bar):
            bar.axis.setPen(pg.mkPen(theme.muted))
            bar.axis.setTextPen(pg.mkPen(theme.foreground))
            if bar.axis.label is not None:
                bar.axis.label.setDefaultTextColor(QColor(theme.foreground))
        super().apply_theme(theme)
