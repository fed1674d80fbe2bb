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
from PySide6.QtCore import QT_TRANSLATE_NOOP, QSignalBlocker
from PySide6.QtWidgets import QComboBox, QLabel

from engine.numbers import number

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
            v = max(float(a.max()), -float(a.min()))  # NaN and ±inf show up here: then the slow, careful way
            if not math.isfinite(v):
                v = float(np.nanmax(np.abs(np.nan_to_num(a, posinf=0.0, neginf=0.0))))
            m = max(m, v)
    return m if m > 0 else 1.0


@register_panel
class QKVPanel(Panel):
    name = "qkv"
    title = QT_TRANSLATE_NOOP("Panel", "Q, K, V: the projections of the selected head")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        # with a pinned reference A: B (current), A, or B − A of every matrix (same shapes)
        self.view_label = QLabel()
        self.view = QComboBox()
        self.view.addItems(["", "", ""])
        self.view.currentIndexChanged.connect(lambda _i: self.show_frame(self.frame) if self.frame else None)
        self.toolbar.addWidget(self.view_label)
        self.toolbar.addWidget(self.view)
        self.toolbar.addStretch(1)
        for w in (self.view_label, self.view):
            w.hide()
        self._retranslate_view()
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

    def _retranslate_view(self) -> None:
        self.view_label.setText(self.tr("Show"))
        for i, text in enumerate((self.tr("B: current"), self.tr("A: reference"), self.tr("B − A"))):
            self.view.setItemText(i, text)
        self.view.setToolTip(self.tr("Compare X, W, Q, K, V and weights·V with the pinned reference A"))

    def retranslate_ui(self) -> None:
        self._retranslate_view()
        super().retranslate_ui()

    # ---- the pinned reference A ---------------------------------------------------------------
    def set_reference(self, frame) -> None:
        for w in (self.view_label, self.view):
            w.setVisible(frame is not None)
        super().set_reference(frame)

    def diffable(self) -> bool:
        """Whether B − A exists for every matrix: the same shapes (Q, K, V and weights·V are exact
        in a long frame too)."""
        a, b = self.reference, self.frame
        if a is None or b is None:
            return False
        names = ("x", "w_q", "w_k", "w_v", "q", "k", "v", "context")
        if any(getattr(a, n).shape != getattr(b, n).shape for n in names):
            return False
        return (a.memory is None) == (b.memory is None) and (a.memory is None or a.memory.shape == b.memory.shape)

    def comparison(self) -> str:
        """"B", "A" or "B-A" (B − A chosen but not possible: B, the menu entry disabled)."""
        if self.reference is None:
            return "B"
        mode = ("B", "A", "B-A")[max(self.view.currentIndex(), 0)]
        return "B" if mode == "B-A" and not self.diffable() else mode

    def _shown(self, arrays) -> dict[str, np.ndarray]:
        """{name: array} of B (or A) as the view shows it: B − A of each in the difference view."""
        if self.comparison() != "B-A":
            return arrays(self.reference if self.comparison() == "A" else self.frame)
        a, b = arrays(self.reference), arrays(self.frame)
        return {n: b[n] - a[n] for n in b}

    def _lead(self) -> str:
        mode = self.comparison()
        return {"B": "", "A": "A · ", "B-A": "Δ"}[mode]  # Δ: B − A (the Show menu says so)

    def strips(self) -> list[TileStrip]:
        return [self.queries, self.weights, self.keys]

    def _describe(self, name: str, r: int, c: int) -> str:
        a = self._names.get(name)
        if a is None or r >= a.shape[0] or c >= a.shape[1]:
            return ""
        f = self.reference if self.comparison() == "A" else self.frame
        if name == "memory":
            where = self.tr("memory row {row} ‘{label}’, dim {col}").format(row=r, label=f.key_labels[r], col=c)
        elif name in ("X", "Q", "context"):
            where = self.tr("query {row} ‘{label}’, dim {col}").format(row=r, label=f.query_labels[r], col=c)
        elif name in ("K", "V"):
            where = self.tr("key {row} ‘{label}’, dim {col}").format(row=r, label=f.key_labels[r], col=c)
        else:
            where = self.tr("model dim {row} → head dim {col}").format(row=r, col=c)
        return f"{self._lead()}{name}[{r}, {c}] = {number(a[r, c], 4)} · {where}"

    def draw_frame(self, frame: Frame) -> None:
        if self.reference is not None:
            item = self.view.model().item(2) if hasattr(self.view.model(), "item") else None
            if item is not None:
                item.setEnabled(self.diffable())
                item.setToolTip("" if self.diffable() else self.tr("A and B differ in shape: no difference"))
            if self.view.currentIndex() == 2 and not self.diffable():
                with QSignalBlocker(self.view):
                    self.view.setCurrentIndex(0)
        # what the tiles show is taken from (identities: plots.same_sources)
        source = (self.comparison(), frame, self.reference)
        frame = self.reference if self.comparison() == "A" else frame
        diff = self.comparison() == "B-A"
        lead = self._lead()
        self.queries.set_labels(frame.query_labels)
        self.keys.set_labels(frame.key_labels)
        shown = self._shown(lambda fr: {"X": fr.x, "memory": fr.memory if fr.memory is not None else np.zeros((0, 0))})
        x = shown["X"]
        self.x.set_data(x, self._sym("ΔX" if diff else "X", x), source=source)
        cfg = frame.config
        pos = "" if cfg.positional in ("none", "rope", "alibi") else self.tr(" + {positional} positions").format(
            positional=cfg.positional)
        self._names["X"] = x
        mem = None if frame.memory is None else shown["memory"]
        self.mem.set_visible(mem is not None)
        if diff:
            pos += " = B − A"
        if mem is None:
            self.x.set_title(f"{lead}<b>X</b>{pos} · {x.shape[0]}×{x.shape[1]}")
        else:
            self.mem.set_data(mem, self._sym("Δmemory" if diff else "memory", mem), source=source)
            self._names["memory"] = mem
            muted = self.theme.muted
            q_note, kv_note = self.tr("(the queries' input)"), self.tr("(keys and values come from it)")
            self.x.set_title(f"{lead}<b>X</b>{pos} · {x.shape[0]}×{x.shape[1]} <span style='color:{muted}'>{q_note}</span>")
            self.mem.set_title(lead + self.tr("<b>memory</b>{pos} · {rows}×{cols}").format(
                pos=pos, rows=mem.shape[0], cols=mem.shape[1]) + f" <span style='color:{muted}'>{kv_note}</span>")

    def draw_selection(self) -> None:
        mode = self.comparison()
        f, sel = (self.reference if mode == "A" else self.frame), self.selection
        cfg = f.config
        h, dh = min(sel.head, cfg.n_heads - 1), cfg.head_dim
        g = cfg.kv_head_of(h)

        def head_arrays(fr) -> dict[str, np.ndarray]:  # the selected head's slices of one frame
            c = fr.config
            hh, d = min(h, c.n_heads - 1), c.head_dim
            gg = c.kv_head_of(hh)
            return {"W_Q": fr.w_q[:, hh * d:(hh + 1) * d], "W_K": fr.w_k[:, gg * d:(gg + 1) * d],
                    "W_V": fr.w_v[:, gg * d:(gg + 1) * d], "Q": fr.q[hh], "K": fr.k[gg], "V": fr.v[gg],
                    "context": fr.context[hh]}

        arr = self._shown(head_arrays)
        wq, wk, wv = arr["W_Q"], arr["W_K"], arr["W_V"]
        q, k, v, ctx = arr["Q"], arr["K"], arr["V"], arr["context"]
        d = "Δ" if mode == "B-A" else ""  # the difference's own sticky levels
        lead = self._lead()
        w_levels = self._sym(d + "W", wq, wk, wv)
        # the selected head's slices of this frame (and A): a new cell keeps every tile
        source = (mode, self.frame, self.reference, sel.head)
        self.wq.set_data(wq, w_levels, source=source)
        self.wk.set_data(wk, w_levels, source=source)
        self.wv.set_data(wv, w_levels, source=source)
        set_bar_levels(self.w_bar, w_levels)
        qkv_levels = self._sym(d + "QKV", q, k, v)
        self.q.set_data(q, qkv_levels, source=source)
        self.k.set_data(k, qkv_levels, source=source)
        self.v.set_data(v, qkv_levels, source=source)
        set_bar_levels(self.qkv_bar, qkv_levels)
        self.ctx.set_data(ctx, self._sym(d + "context", ctx), source=source)
        self._names.update({"W_Q": wq, "W_K": wk, "W_V": wv, "Q": q, "K": k, "V": v, "context": ctx})
        muted = self.theme.muted
        shared = ""
        if cfg.kv_heads != cfg.n_heads:
            mates = [j for j in range(cfg.n_heads) if cfg.kv_head_of(j) == g]
            mates_text = self.tr("(q heads {first}–{last})").format(first=mates[0], last=mates[-1])
            shared = f" <span style='color:{muted}'>{mates_text}</span>"
        rope = self.tr(" after RoPE") if cfg.positional == "rope" else ""
        head = self.tr("head {h}").format(h=h)
        if mode != "B":  # the narrow W tiles: their slices are named by the Q, K and V titles
            for tile, w_name in ((self.wq, "W_Q"), (self.wk, "W_K"), (self.wv, "W_V")):
                tile.set_title(f"{lead}<b>{w_name}</b>")
        else:
            self.wq.set_title(f"{lead}<b>W_Q</b>[:, h{h}] · {wq.shape[0]}×{dh}")
            self.wk.set_title(f"{lead}<b>W_K</b>[:, kv {g}]{shared}")
            self.wv.set_title(f"{lead}<b>W_V</b>[:, kv {g}]{shared}")
        self.q.set_title(f"{lead}<b>Q</b> {head}{rope} · {q.shape[0]}×{dh}")
        self.k.set_title(f"{lead}<b>K</b> kv {g}{rope} · {k.shape[0]}×{dh}")
        self.v.set_title(f"{lead}<b>V</b> kv {g} · {v.shape[0]}×{dh}")
        self.ctx.set_title(f"{lead}<b>weights·V</b> {head} · {ctx.shape[0]}×{dh}")
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
