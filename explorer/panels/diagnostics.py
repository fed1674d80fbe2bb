"""`diagnostics`: per-head metrics, numerical warnings, KV-cache memory, costs, backends.

Entropy (nats; log Skv = uniform, 0 = collapsed onto one key), the mass on key
0 (the attention sink) and the mean attention distance, one bar per head;
overflow / NaN warnings with their one-line explanation; KV-cache bytes for
this config vs MHA vs MQA at a chosen depth and context, next to a
Llama-3-8B-sized reference; FLOPs and bytes per stage; every backend's output
difference from eager and its time.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import torch
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

import engine
from engine.masks import KeyRanges
from engine.numbers import MISSING

from ..compare import a_color
from ..constraints import LLAMA3_8B
from ..figures.cards import Card, SideScroll
from ..figures.plots import (
    HighlightBars,
    add_plot,
    fmt_number,
    lean_axes,
    set_axis_label,
    set_plot_title,
    sticky_max,
    style_plot,
)
from ..figures.text import unbroken
from ..figures.themes import Theme
from ..frame import LOD_CELLS, Frame
from .base import Panel, register_panel

#: a head has collapsed when its mean entropy is under this share of the most its rows could have
COLLAPSE_SHARE = 0.1


def keys_seen(frame: Frame) -> np.ndarray:
    """(S,) int: how many keys each query row's softmax spreads over (its visible keys; a
    fully masked row: none under -inf, every key under min / -1e9, where it is uniform)."""
    mask = frame.mask
    seen = np.asarray(mask.counts() if isinstance(mask, KeyRanges) else mask.sum(-1), dtype=np.int64)
    if frame.config.mask_value != "-inf":
        seen = np.where(seen == 0, frame.config.key_len, seen)
    return seen


def collapsed_heads(frame: Frame) -> list[int]:
    """The heads whose rows are almost one-hot: mean entropy under COLLAPSE_SHARE of the most
    those rows could spread (the mean over the head's non-NaN rows of log(keys seen), i.e.
    uniform over each row's visible keys, not over all Skv keys).

    A head whose rows each see one key (sliding window 1, S = 1) cannot spread at all, so it
    is never called collapsed; neither is a head with no row left (every row NaN).
    """
    ent = frame.head_entropy  # (H,) nats
    if not ent.size:
        return []
    most = np.log(np.maximum(keys_seen(frame), 1)).astype(np.float64)  # (S,) nats, uniform per row
    valid = np.asarray(frame.valid_rows, dtype=bool)  # (H, S)
    low = []
    for g in range(ent.shape[0]):
        rows = valid[g]
        if not rows.any():
            continue
        ceiling = float(most[rows].mean())  # the head's mean entropy if every row were uniform
        if ceiling > 0 and math.isfinite(float(ent[g])) and ent[g] < COLLAPSE_SHARE * ceiling:
            low.append(g)
    return low


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} TiB"


def human_count(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.3g} {unit}"
    return f"{n:.0f}"


#: engine.stage_costs names, translated where shown
_STAGES = {
    "QKV projection": QT_TRANSLATE_NOOP("DiagnosticsPanel", "QKV projection"),
    "scores QKᵀ": QT_TRANSLATE_NOOP("DiagnosticsPanel", "scores QKᵀ"),
    "softmax": QT_TRANSLATE_NOOP("DiagnosticsPanel", "softmax"),
    "weights·V": QT_TRANSLATE_NOOP("DiagnosticsPanel", "weights·V"),
    "output projection": QT_TRANSLATE_NOOP("DiagnosticsPanel", "output projection"),
}


#: a backend whose output is within this many ε (at the output's scale) of eager agrees with it
ROUNDING_ULPS = 8
#: bits of precision (the stored mantissa and its implicit leading 1): ε = 2^(1 − bits)
SIGNIFICAND_BITS = {"float32": 24, "float16": 11, "bfloat16": 8}


def backend_ulps(frame: Frame, diff: float) -> float:
    """max |Δ| of a backend's output in units of ε·max|output| (NaN without a finite output)."""
    eps = torch.finfo(getattr(torch, frame.config.dtype)).eps
    scale = frame.output_scale
    if not (math.isfinite(scale) and math.isfinite(diff)):
        return float("nan")
    return diff / (eps * scale) if scale > 0 else (0.0 if diff == 0 else float("inf"))


def numerics_messages(frame: Frame) -> list[str]:
    """engine.overflow_report's messages in the interface language (same cases, same numbers).

    Falls back to the engine's English when it reports a case this list does not know.
    Literal QCoreApplication.translate calls (not an alias): lupdate reads them.
    """
    rep, cfg = frame.overflow, frame.config
    msgs = []
    limit = f"{torch.finfo(getattr(torch, cfg.dtype)).max:.6g}"
    if rep.inf_scores_raw:
        if cfg.prescale_q and not rep.inf_scores:
            fix = QCoreApplication.translate("DiagnosticsPanel", "pre-scaling Q kept the softmax input finite.")
        else:
            fix = QCoreApplication.translate("DiagnosticsPanel", "pre-scale Q (or use bfloat16) to stay in range.")
        text = QCoreApplication.translate("DiagnosticsPanel", "Q·Kᵀ overflowed {dtype} (max {limit}) in {n} entries: {fix}")
        msgs.append(text.format(dtype=cfg.dtype, limit=limit, n=rep.inf_scores_raw, fix=fix))
    if rep.inf_scores:
        text = QCoreApplication.translate("DiagnosticsPanel", "{n} visible scores are ±inf: softmax turns those rows into NaN.")
        msgs.append(text.format(n=rep.inf_scores))
    if rep.fully_masked_rows:
        if cfg.mask_value == "-1e9" and cfg.dtype == "float16":
            what = QCoreApplication.translate("DiagnosticsPanel", "−1e9 does not fit float16 and became −inf: those rows are NaN")
        elif cfg.mask_value == "-inf":
            what = QCoreApplication.translate("DiagnosticsPanel", "softmax of all −inf is 0/0 = NaN")
        elif cfg.mask_value == "min":
            what = QCoreApplication.translate(
                "DiagnosticsPanel", "finfo.min gives a uniform row over masked keys (silent garbage, not NaN)")
        else:
            what = QCoreApplication.translate(
                "DiagnosticsPanel", "−1e9 gives a uniform row over masked keys (silent garbage, not NaN)")
        n = rep.fully_masked_rows // (cfg.batch * cfg.n_heads)
        if n == 1:
            text = QCoreApplication.translate("DiagnosticsPanel", "1 query row sees no key at all: {what}.")
        else:
            text = QCoreApplication.translate("DiagnosticsPanel", "{n} query rows see no key at all: {what}.")
        msgs.append(text.format(n=n, what=what))
    if rep.nan_rows and not rep.fully_masked_rows:
        if rep.nan_rows == 1:
            msgs.append(QCoreApplication.translate("DiagnosticsPanel", "1 weight row is NaN."))
        else:
            msgs.append(QCoreApplication.translate("DiagnosticsPanel", "{n} weight rows are NaN.").format(
                n=rep.nan_rows))
    return msgs if len(msgs) == len(rep.messages) else list(rep.messages)


def _zeroed(values: np.ndarray) -> np.ndarray:
    """(H,) per-head values with NaN drawn as 0 (np.nan_to_num; the array itself when all
    finite, the common case: no copy)."""
    return values if np.isfinite(values).all() else np.nan_to_num(values)


def llama3_8b_cache(tokens: int) -> tuple[int, int]:
    """(GQA bytes, MHA bytes) of a Llama-3-8B-sized KV cache at `tokens` of context."""
    ref = engine.AttentionConfig(d_model=LLAMA3_8B["d_model"], n_heads=LLAMA3_8B["n_heads"],
                                 n_kv_heads=LLAMA3_8B["n_kv_heads"], dtype=LLAMA3_8B["dtype"], seq_len=1)
    return (engine.kv_cache_bytes(ref, LLAMA3_8B["n_layers"], tokens),
            engine.kv_cache_bytes(ref.replace(n_kv_heads=None), LLAMA3_8B["n_layers"], tokens))


@register_panel
class DiagnosticsPanel(Panel):
    name = "diagnostics"
    title = QT_TRANSLATE_NOOP("Panel", "Diagnostics: heads, numerics, memory, backends")
    readable_size = (320, 380)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.cache_label = QLabel()
        self.toolbar.addWidget(self.cache_label)
        self.layers = QSpinBox()
        self.layers.setRange(1, 256)
        self.layers.setValue(LLAMA3_8B["n_layers"])
        self.context = QSpinBox()
        self.context.setRange(1, 1 << 20)
        self.context.setSingleStep(1024)
        self.context.setValue(8192)
        for w in (self.layers, self.context):
            w.valueChanged.connect(lambda _v: self._draw_cache() if self.frame else None)
            self.toolbar.addWidget(w)
        self.toolbar.addStretch(1)

        lay = self.graphics.ci
        self.metric_plots = []
        self.ref_bars: list[HighlightBars] = []
        for i, (key, label) in enumerate((
                ("head_entropy", QT_TRANSLATE_NOOP("DiagnosticsPanel", "entropy (nats)")),
                ("sink_mass", QT_TRANSLATE_NOOP("DiagnosticsPanel", "sink mass (key 0)")),
                ("mean_distance", QT_TRANSLATE_NOOP("DiagnosticsPanel", "mean distance (tokens)")))):
            plot = add_plot(lay, i // 2, i % 2, axisItems=lean_axes())
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.showGrid(y=True, alpha=0.15)
            plot.setMouseEnabled(x=False, y=False)
            plot.disableAutoRange()
            bars = HighlightBars(plot, width=0.7)
            self.metric_plots.append((key, label, plot, bars))
            # with a pinned reference A: A's bar left of B's for every head both have
            ref_bars = HighlightBars(plot, width=0.36)
            ref_bars.offset = -0.19
            self.ref_bars.append(ref_bars)
        ent_plot = self.metric_plots[0][2]
        self.uniform_line = pg.InfiniteLine(angle=0, movable=False, label="",
                                         labelOpts={"position": 0.99, "anchors": [(1, 1), (1, 1)]})
        ent_plot.addItem(self.uniform_line, ignoreBounds=True)
        ent_plot.vb.sigResized.connect(self._on_entropy_resized)
        self.cache_plot = add_plot(lay, 1, 1, axisItems=lean_axes())
        # the room left above the bars for their labels is in pixels: measure again when resized
        self.cache_plot.vb.sigResized.connect(lambda _vb: self._draw_cache() if self.frame else None)
        self.cache_axis = self.cache_plot.getAxis("bottom")
        self.cache_plot.hideButtons()
        self.cache_plot.setMenuEnabled(False)
        self.cache_plot.setMouseEnabled(x=False, y=False)
        self.cache_plot.disableAutoRange()
        self.cache_plot.showGrid(y=True, alpha=0.15)
        self.cache_bars = pg.BarGraphItem(x=[0, 1, 2], height=[0, 0, 0], width=0.6)
        self.cache_plot.addItem(self.cache_bars)
        self.cache_texts = [pg.TextItem(anchor=(0.5, 1.0)) for _ in range(3)]
        for t in self.cache_texts:
            self.cache_plot.addItem(t, ignoreBounds=True)
        self.graphics.scene().sigMouseClicked.connect(self._on_click)
        self._n_heads = 0
        self._ymax: dict[str, float] = {}
        self._cache_key = None

        cards = QWidget()
        grid = QGridLayout(cards)
        grid.setContentsMargins(6, 0, 6, 6)
        grid.setSpacing(6)
        self.warn_card = Card()
        self.cost_card = Card(columns=3, align_right=(1, 2))
        self.backend_card = Card(columns=4, align_right=(2, 3))
        grid.addWidget(self.warn_card, 0, 0, 1, 2)
        grid.addWidget(self.cost_card, 1, 0)
        grid.addWidget(self.backend_card, 1, 1)
        # the cards scroll sideways when the panel is narrow: their text (a long warning, a
        # wide number) must not widen the dock and squeeze the panels beside it
        self.cards = SideScroll()
        self.cards.setObjectName("cards")
        self.cards.setWidget(cards)
        self.cards.setWidgetResizable(True)
        self.cards.viewport().setAutoFillBackground(False)  # the panel's background shows through
        cards.setAutoFillBackground(False)
        self.cards.setFrameShape(QFrame.Shape.NoFrame)
        self.cards.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)  # a short dock
        self.cards.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.layout().addWidget(self.cards)
        self.layout().setStretch(1, 1)
        self.graphics.setMinimumHeight(230)
        self.cards.MIN_HEIGHT = 56  # (a card's title and first row, the rest scrolls: lesson 10 fits 1280×800)
        self._retranslate_labels()

    def _retranslate_labels(self) -> None:
        self.cache_label.setText(self.tr("KV cache at"))
        self.layers.setSuffix(self.tr(" layers"))
        self.layers.setToolTip(self.tr("Number of layers for the KV-cache estimate"))
        self.context.setSuffix(self.tr(" tokens"))
        self.context.setToolTip(self.tr("Context length (cached tokens) for the KV-cache estimate"))
        for _key, _label, plot, _bars in self.metric_plots:
            set_axis_label(plot, "bottom", self.tr("head"))
        self.uniform_line.label.setFormat(self.tr("uniform log Skv"))
        self.warn_card.title = self.tr("Numerics")
        self.cost_card.title = self.tr("Cost per stage (batch · all heads)")
        self.backend_card.title = self.tr("Backends: output vs eager")

    def retranslate_ui(self) -> None:
        self._retranslate_labels()
        self._cache_key = None  # the bar names are translated too
        super().retranslate_ui()

    def reset_view(self) -> None:
        self._ymax.clear()
        super().reset_view()

    # ---- interaction -----------------------------------------------------------
    def _on_click(self, ev) -> None:
        if self.frame is None or ev.button() != Qt.MouseButton.LeftButton:
            return
        for _key, _label, plot, _bars in self.metric_plots:
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(ev.scenePos()):
                h = round(vb.mapSceneToView(ev.scenePos()).x())
                if 0 <= h < self.frame.config.n_heads:
                    self.selection.set(head=h)
                    ev.accept()
                return

    # ---- drawing ----------------------------------------------------------------
    def draw_frame(self, frame: Frame) -> None:
        cfg = frame.config
        H = cfg.n_heads
        ticks = [[(h, str(h)) for h in range(0, H, max(1, H // 16))]]
        new_h = H != self._n_heads
        self._n_heads = H
        for key, _label, plot, _bars in self.metric_plots:
            if new_h:
                plot.getAxis("bottom").setTicks(ticks)
                plot.setXRange(-0.6, H - 0.4, padding=0)
            vals = _zeroed(getattr(frame, key))
            if self.reference is not None:  # A's bars fit too
                vals = np.concatenate([vals, _zeroed(getattr(self.reference, key))])
            top = float(vals.max()) if vals.size else 1.0
            if key == "head_entropy":  # the uniform line and, above it, its label (in pixels)
                # (the label as drawn: a Chinese one's fallback font is taller than the theme's)
                drawn = self.uniform_line.label.boundingRect().height()
                label_px = max(QFontMetricsF(self.theme.font(8.0)).height(), drawn) + 4
                room = min(0.6, label_px / max(plot.vb.height(), 1.0))
                top = max(top, math.log(max(cfg.key_len, 1)) / (1 - room))
            elif key == "sink_mass":
                top = max(top, 0.05)
            ymax = sticky_max(self._ymax.get(key), max(top * 1.05, 1e-3), shrink=0.25)
            if ymax != self._ymax.get(key):
                self._ymax[key] = ymax
                plot.setYRange(0, ymax, padding=0)
        self.uniform_line.setValue(math.log(max(cfg.key_len, 1)))
        self._draw_warnings()
        self._draw_costs()
        self._draw_cache()
        self._draw_backends()

    def draw_selection(self) -> None:
        f, th = self.frame, self.theme
        h = self.selection.head
        ref = self.reference
        for (key, label, plot, bars), ref_bars in zip(self.metric_plots, self.ref_bars):
            raw = getattr(f, key)
            vals = _zeroed(raw)
            none = np.isnan(raw)  # heads with no row left: hatched, "NaN" in the title
            bars.width, bars.offset = (0.36, 0.19) if ref is not None else (0.7, 0.0)  # paired A | B
            bars.set(vals, selected=h, other=none if none.any() else None, source=(raw,))
            head = self.tr("head {h}").format(h=h)
            value = "NaN" if none[h] else fmt_number(vals[h])
            if ref is not None:
                a_all = getattr(ref, key)
                a_raw = a_all[: f.config.n_heads]  # (≤H,) the heads both have
                ref_bars.set(_zeroed(a_raw), other=np.isnan(a_raw) if np.isnan(a_raw).any() else None,
                             source=(a_all, f.config.n_heads))
                a_value = ("NaN" if np.isnan(a_raw[h]) else fmt_number(float(a_raw[h]))) if h < len(a_raw) else "–"
                value = self.tr("A {a} | B {b}").format(a=a_value, b=value)
            else:
                ref_bars.set(np.zeros(0), source=("no A",))
            extra = ""
            if key == "head_entropy":  # every head at once (lessons 2, 3 and 5 quote these)
                ent = f.entropy[f.valid_rows]
                mean = fmt_number(float(ent.mean())) if ent.size else "NaN"
                spread = fmt_number(float(raw[~none].std())) if (~none).any() else "NaN"
                extra = " · " + unbroken(self.tr("all heads: mean {mean}, spread {spread}").format(
                    mean=mean, spread=spread))
                if f.stat_rows is not None:  # a long linear kernel's entropy: of a sample of rows
                    extra += " · " + unbroken(self.tr("{n} sampled rows of {S}").format(
                        n=len(f.stat_rows), S=f.config.seq_len))
            set_plot_title(plot, f"<b>{self.tr(label)}</b> · {head}: {value}{extra}", th, size=9.0)

    def set_backends(self, result: dict) -> None:
        """Redraw the backend table; the window has stored `result` in frame.backends."""
        if self.frame is not None:
            self._draw_backends()

    def _draw_warnings(self) -> None:
        f = self.frame
        rep = f.overflow
        rows = [([f"⚠ {msg}"], "error") for msg in numerics_messages(f)]
        if not rows:
            rows.append(([self.tr("✓ no overflow, no NaN, every query sees a key")], "ok"))
        limit = {"float16": 65504.0, "bfloat16": 3.39e38, "float32": 3.40e38}[f.config.dtype]
        peak = rep.max_abs_score_raw
        if rep.inf_scores_raw:  # the peak is of the finite entries only: say so, and count the rest
            line = self.tr("largest finite |Q·Kᵀ| = {peak} ({dtype} max {limit}) · {n} entries ±inf").format(
                peak=f"{peak:.4g}" if math.isfinite(peak) else "–", dtype=f.config.dtype,
                limit=f"{limit:.4g}", n=rep.inf_scores_raw)
            rows.append(([line], "note"))
        elif math.isfinite(peak) and rep.sampled_rows is not None:  # a long linear kernel's: a sample
            rows.append(([self.tr("largest |Q·Kᵀ| in {n} sampled rows = {peak} ({dtype} max {limit})").format(
                n=rep.sampled_rows, peak=f"{peak:.4g}", dtype=f.config.dtype, limit=f"{limit:.4g}")], "note"))
        elif math.isfinite(peak):
            rows.append(([self.tr("largest |Q·Kᵀ| = {peak} ({dtype} max {limit})").format(
                peak=f"{peak:.4g}", dtype=f.config.dtype, limit=f"{limit:.4g}")], "note"))
        rows += self._coverage_rows()
        rows += self._reference_rows()
        self.warn_card.set_rows(rows)

    def set_reference(self, frame) -> None:
        self._ymax.clear()  # A's bars may be taller (or not any more)
        super().set_reference(frame)

    def _reference_rows(self) -> list[tuple[list[str], str]]:
        """With a pinned reference A: each number for A and for the current B, and the change."""
        ref, f = self.reference, self.frame
        if ref is None:
            return []

        def mean_entropy(fr: Frame) -> float:
            ent = fr.entropy[fr.valid_rows]
            return float(ent.mean()) if ent.size else math.nan

        def change(a: float, b: float) -> str:
            if not (math.isfinite(a) and math.isfinite(b)):
                return ""
            d = b - a
            return f" ({'+' if d > 0 else '−' if d < 0 else '±'}{fmt_number(abs(d))})"

        items = [
            (self.tr("mean entropy"), mean_entropy(ref), mean_entropy(f)),
            (self.tr("largest finite |Q·Kᵀ|"), ref.overflow.max_abs_score_raw, f.overflow.max_abs_score_raw),
            (self.tr("NaN weight rows"), float(ref.overflow.nan_rows), float(f.overflow.nan_rows)),
            (self.tr("future keys' share"), ref.future_share, f.future_share),
        ]
        rows = [([self.tr("A → B (A: {config})").format(config=ref.config.summary())], "note")]
        for name, a, b in items:
            rows.append(([f"{name}: {fmt_number(a)} → {fmt_number(b)}{change(a, b)}"], "note"))
        return rows

    def _coverage_rows(self) -> list[tuple[list[str], str]]:
        """What the per-head bars average over, and which heads collapsed.

        NaN rows (a fully masked row under -inf, an overflow) have no entropy: they are left
        out of every per-head mean, and a head with no row left has no value (NaN), which
        is not a collapse.
        """
        f = self.frame
        S = f.config.seq_len
        rows = []
        covered = f.head_rows
        if int(covered.min(initial=S)) < S:
            if int(covered.max(initial=0)) == 0:
                rows.append(([self.tr("every weight row is NaN: the per-head bars have no value")], "warning"))
            elif int(covered.min()) == int(covered.max()):
                rows.append(([self.tr("per-head bars: means over {n} of {S} rows (NaN rows left out)").format(
                    n=int(covered[0]), S=S)], "note"))
            else:
                rows.append(([self.tr("per-head bars: means over {lo}–{hi} of {S} rows (NaN rows left out)").format(
                    lo=int(covered.min()), hi=int(covered.max()), S=S)], "note"))
        low = collapsed_heads(f)
        if low:
            if len(low) == 1:
                text = self.tr("head {heads} has collapsed (entropy &lt; 10% of uniform): "
                               "almost one-hot rows, tiny gradients")
            else:
                text = self.tr("heads {heads} have collapsed (entropy &lt; 10% of uniform): "
                               "almost one-hot rows, tiny gradients")  # (the source string was HTML)
            rows.append(([text.replace("&lt;", "<").format(heads=", ".join(map(str, low)))], "warning"))
        return rows

    _kv_reference = ""  # the real model's KV cache at the chosen size (a note in the cost card)

    def _draw_costs(self) -> None:
        f = self.frame
        rows = [([self.tr("stage"), "FLOPs", self.tr("bytes")], "head")]
        rows += [([self.tr(_STAGES.get(c["stage"], c["stage"])), f"{human_count(c['flops'])}FLOP",
                   human_bytes(c["bytes"])], "body") for c in f.stage_costs]
        tot_f = sum(c["flops"] for c in f.stage_costs)
        tot_b = sum(c["bytes"] for c in f.stage_costs)
        rows.append(([self.tr("total"), f"{human_count(tot_f)}FLOP", human_bytes(tot_b)], "total"))
        grid = f.config.batch * f.config.n_heads * f.config.seq_len * f.config.key_len
        item = {"float32": 4, "float16": 2, "bfloat16": 2}[f.config.dtype]
        # the grid's size in the bytes column (a held cell: no relayout while S is dragged),
        # the lesson in a note that stays the same
        rows.append(([self.tr("S×Skv score grid"), "", human_bytes(grid * item)], "note"))
        rows.append(([self.tr("O(n²): what FlashAttention never writes out")], "note"))
        if self._kv_reference:
            rows.append(([self._kv_reference], "note"))
        self.cost_card.set_rows(rows)

    def _on_entropy_resized(self, _vb) -> None:
        """The room above the uniform line for its label is in pixels: range the plot again."""
        self._ymax.pop("head_entropy", None)
        if self.frame is not None:
            self.draw_frame(self.frame)

    def _draw_cache(self) -> None:
        f, th = self.frame, self.theme
        cfg = f.config
        n_layers, tokens = self.layers.value(), self.context.value()
        comp = engine.kv_cache_comparison(cfg, n_layers, tokens)
        names = [self.tr("this ({kind})").format(kind=cfg.attention_kind), f"MHA ({cfg.n_heads} kv)", "MQA (1 kv)"]
        vals = [comp["this"], comp["MHA"], comp["MQA"]]
        key = (tuple(names), tuple(vals), n_layers, tokens, cfg.dtype, th, round(self.cache_plot.vb.height()))
        if key == self._cache_key:
            return  # unchanged: keep the plot as painted
        self._cache_key = key
        unit, div = "GiB", 1024**3
        if max(vals) < 1024**3:
            unit, div = "MiB", 1024**2
        heights = [v / div for v in vals]
        self.cache_bars.setOpts(x=[0, 1, 2], height=heights, width=0.6,
                                brushes=[pg.mkBrush(c) for c in (th.accent, th.bar, th.ok)], pen=pg.mkPen(None))
        self.cache_axis.setTicks([[(i, n) for i, n in enumerate(names)]])
        self.cache_plot.setXRange(-0.6, 2.6, padding=0)
        # room above the tallest bar for its value label, in the plot's own pixels
        label_px = QFontMetricsF(th.font(8.5)).height() + 6
        plot_px = max(self.cache_plot.vb.height(), 2 * label_px)
        top = max(heights) / max(0.3, 1 - label_px / plot_px)
        self.cache_plot.setYRange(0, max(top, max(heights) * 1.15) or 1, padding=0)
        set_axis_label(self.cache_plot, "left", unit)
        for t, x, v in zip(self.cache_texts, range(3), vals):
            t.setFont(th.font(8.5))
            t.setText(human_bytes(v), color=th.foreground)
            t.setPos(x, v / div)
        llama, llama_mha = llama3_8b_cache(tokens)
        head = self.tr("<b>KV cache</b> · {layers} layers × {tokens} tokens · {dtype}").format(
            layers=n_layers, tokens=tokens, dtype=cfg.dtype)
        ref = self.tr("Llama-3-8B (32 layers, 32 q / 8 kv heads, bf16): {gqa} vs {mha} as MHA").format(
            gqa=human_bytes(llama), mha=human_bytes(llama_mha))
        # one title line: the plot keeps its height; the real model's figure goes in the cost card
        set_plot_title(self.cache_plot, head, th, size=9.0)
        self._kv_reference = self.tr("KV cache of {ref}").format(ref=ref)
        if self.frame is not None:
            self._draw_costs()

    def _draw_backends(self) -> None:
        f = self.frame
        cfg = f.config
        rows = [([self.tr("backend"), self.tr("ran as"), "max |Δ|", self.tr("time")], "head")]
        res = f.backends
        for name in engine.available_backends(cfg.device, cfg.dtype):
            mark = " ◀" if name == cfg.backend else ""
            if res is not None and name in res:
                r = res[name]
                if "error" in r:
                    rows.append(([f"{name}{mark}", r["error"]], "note"))
                    continue
                impl, diff, ms = r["impl"], r["max_abs_diff"], r["ms"]
            elif name == cfg.backend:
                impl, diff = f.trace.backend_impl, f.trace.backend_max_abs_diff
                ms = f.trace.attention_ms
            elif f.lod is not None:  # one line each (a long frame's card was cut: three lines per backend)
                rows.append(([name, self.tr("not compared beyond {n} tokens").format(n=LOD_CELLS)], "note"))
                continue
            else:  # (the table's four cells, as the measured row will have: no relayout when it comes)
                rows.append(([name, self.tr("measuring…"), "", ""], "note"))
                continue
            rows.append(([f"{name}{mark}", impl, self._diff_text(diff), f"{ms:.2f} ms" if math.isfinite(ms) else MISSING],
                         "body"))
        rows.append(([self._rounding_note()], "note"))
        self.backend_card.set_rows(rows)
        # why, where the card has no room for it
        tip = self.tr(
            "Beyond {n} tokens each comparison would be another exact pass over every row: only the "
            "chosen backend runs. Switch the backend to see another.").format(n=LOD_CELLS) if f.lod is not None else ""
        if self.backend_card.toolTip() != tip:
            self.backend_card.setToolTip(tip)

    def _diff_text(self, diff: float | None) -> str:
        """max |Δ| and what it is in units of the dtype's rounding at the output's scale."""
        if diff is None:
            return self.tr("reference")
        ulps = backend_ulps(self.frame, diff)
        if not math.isfinite(ulps):
            return fmt_number(diff, 2)
        verdict = "✓" if ulps <= ROUNDING_ULPS else "⚠"
        return f"{fmt_number(diff, 2)} = {fmt_number(ulps, 2)} ε {verdict}"

    def _rounding_note(self) -> str:
        f = self.frame
        dtype = f.config.dtype
        info = torch.finfo(getattr(torch, dtype))
        if not math.isfinite(f.output_scale):
            return self.tr("the output is NaN: there is nothing to compare")
        return self.tr("ε = {eps} ({bits} significand bits) at the output's scale {scale}: up to {k} ε (✓) "
                       "is rounding, from summing in another order; more (⚠) is a real disagreement").format(
            eps=f"{info.eps:.2g}", bits=SIGNIFICAND_BITS[dtype], scale=fmt_number(f.output_scale), k=ROUNDING_ULPS)

    def apply_theme(self, theme: Theme) -> None:
        for _key, _label, plot, bars in self.metric_plots:
            style_plot(plot, theme)
            bars.set_colors(theme.bar, theme.hatch, theme.accent)
        for bars in self.ref_bars:
            bars.set_colors(a_color(theme), theme.hatch, a_color(theme))
        style_plot(self.cache_plot, theme)
        self.uniform_line.setPen(theme.pen(theme.muted, 1, Qt.PenStyle.DashLine))
        self.uniform_line.label.setColor(theme.muted)
        self.uniform_line.label.setFont(theme.font(8.0))
        for card in (self.warn_card, self.cost_card, self.backend_card):
            card.set_theme(theme)
        super().apply_theme(theme)
