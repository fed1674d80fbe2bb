"""`diagnostics`: per-head metrics, numerical warnings, KV-cache memory, costs, backends.

Entropy (nats; log Skv = uniform, 0 = collapsed onto one key), the mass on key
0 (the attention sink) and the mean attention distance, one bar per head;
overflow / NaN warnings with their one-line explanation; KV-cache bytes for
this config vs MHA vs MQA at a chosen depth and context, next to a
Llama-3-8B-sized reference; FLOPs and bytes per stage; every backend's output
difference from eager and its time.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
import torch
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

import engine

from ..constraints import LLAMA3_8B
from ..frame import Frame
from ..themes import Theme
from .base import Panel, register_panel
from .plotting import HighlightBars, set_axis_label, set_plot_title, sticky_max, style_plot


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
        text = QCoreApplication.translate("DiagnosticsPanel", "{n} query rows see no key at all: {what}.")
        msgs.append(text.format(n=n, what=what))
    if rep.nan_rows and not rep.fully_masked_rows:
        msgs.append(QCoreApplication.translate("DiagnosticsPanel", "{n} weight rows are NaN.").format(n=rep.nan_rows))
    return msgs if len(msgs) == len(rep.messages) else list(rep.messages)


def llama3_8b_cache(tokens: int) -> tuple[int, int]:
    """(GQA bytes, MHA bytes) of a Llama-3-8B-sized KV cache at `tokens` of context."""
    ref = engine.AttentionConfig(d_model=LLAMA3_8B["d_model"], n_heads=LLAMA3_8B["n_heads"],
                                 n_kv_heads=LLAMA3_8B["n_kv_heads"], dtype=LLAMA3_8B["dtype"], seq_len=1)
    return (engine.kv_cache_bytes(ref, LLAMA3_8B["n_layers"], tokens),
            engine.kv_cache_bytes(ref.replace(n_kv_heads=None), LLAMA3_8B["n_layers"], tokens))


class _Card(QFrame):
    """A titled rich-text box."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.setObjectName("card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.label)
        self.title = title

    def set_html(self, body: str, theme: Theme) -> None:
        self.label.setText(f"<div style='font-weight:600; margin-bottom:3px'>{self.title}</div>{body}")


@register_panel
class DiagnosticsPanel(Panel):
    name = "diagnostics"
    title = QT_TRANSLATE_NOOP("Panel", "Diagnostics: heads, numerics, memory, backends")

    def __init__(self, selection, hover, parent=None) -> None:
        super().__init__(selection, hover, parent)
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
        for i, (key, label) in enumerate((
                ("head_entropy", QT_TRANSLATE_NOOP("DiagnosticsPanel", "entropy (nats)")),
                ("sink_mass", QT_TRANSLATE_NOOP("DiagnosticsPanel", "sink mass (key 0)")),
                ("mean_distance", QT_TRANSLATE_NOOP("DiagnosticsPanel", "mean distance (tokens)")))):
            plot = lay.addPlot(row=i // 2, col=i % 2)
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.showGrid(y=True, alpha=0.15)
            plot.setMouseEnabled(x=False, y=False)
            plot.disableAutoRange()
            bars = HighlightBars(plot, width=0.7)
            self.metric_plots.append((key, label, plot, bars))
        ent_plot = self.metric_plots[0][2]
        self.uniform_line = pg.InfiniteLine(angle=0, movable=False, label="", labelOpts={"position": 0.8})
        ent_plot.addItem(self.uniform_line, ignoreBounds=True)
        self.cache_plot = lay.addPlot(row=1, col=1)
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
        self.warn_card = _Card("")
        self.cost_card = _Card("")
        self.backend_card = _Card("")
        grid.addWidget(self.warn_card, 0, 0, 1, 2)
        grid.addWidget(self.cost_card, 1, 0)
        grid.addWidget(self.backend_card, 1, 1)
        self.layout().addWidget(cards)
        self.layout().setStretch(1, 1)
        self.graphics.setMinimumHeight(230)
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
            vals = np.nan_to_num(getattr(frame, key))
            top = float(vals.max()) if vals.size else 1.0
            if key == "head_entropy":
                top = max(top, math.log(max(cfg.key_len, 1)))
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
        for key, label, plot, bars in self.metric_plots:
            vals = np.nan_to_num(getattr(f, key))
            bars.set(vals, selected=h)
            head = self.tr("head {h}").format(h=h)
            set_plot_title(plot, f"<b>{self.tr(label)}</b> · {head}: {vals[h]:.3g}", th, size="9pt")

    def set_backends(self, result: dict) -> None:
        """Redraw the backend table; the window has stored `result` in frame.backends."""
        if self.frame is not None:
            self._draw_backends()

    def _draw_warnings(self) -> None:
        f, th = self.frame, self.theme
        rep = f.overflow
        items = []
        for msg in numerics_messages(f):
            items.append(f"<div style='color:{th.error}; margin:2px 0'>⚠ {html.escape(msg)}</div>")
        if not items:
            ok = self.tr("✓ no overflow, no NaN, every query sees a key")
            items.append(f"<div style='color:{th.ok}'>{ok}</div>")
        limit = {"float16": 65504.0, "bfloat16": 3.39e38, "float32": 3.40e38}[f.config.dtype]
        peak = rep.max_abs_score_raw
        if math.isfinite(peak):
            text = self.tr("largest |Q·Kᵀ| = {peak} ({dtype} max {limit})").format(
                peak=f"{peak:.4g}", dtype=f.config.dtype, limit=f"{limit:.4g}")
            items.append(f"<div style='color:{th.muted}'>{text}</div>")
        ent = f.head_entropy
        if f.config.key_len > 1 and ent.size:
            low = [g for g in range(len(ent)) if ent[g] < 0.1 * math.log(f.config.key_len)]
            if low:
                text = self.tr("heads {heads} have collapsed (entropy &lt; 10% of uniform): "
                               "almost one-hot rows, tiny gradients").format(heads=", ".join(map(str, low)))
                items.append(f"<div style='color:{th.warning}'>{text}</div>")
        self.warn_card.set_html("".join(items), th)

    def _draw_costs(self) -> None:
        f, th = self.frame, self.theme
        rows = "".join(
            f"<tr><td>{html.escape(self.tr(_STAGES.get(c['stage'], c['stage'])))}</td>"
            f"<td align='right'>{human_count(c['flops'])}FLOP</td>"
            f"<td align='right'>{human_bytes(c['bytes'])}</td></tr>"
            for c in f.stage_costs
        )
        grid_text = self.tr("the S×Skv score grid alone: {bytes} (O(n²): what FlashAttention never writes out)")
        stage, nbytes, total = self.tr("stage"), self.tr("bytes"), self.tr("total")
        tot_f = sum(c["flops"] for c in f.stage_costs)
        tot_b = sum(c["bytes"] for c in f.stage_costs)
        grid = f.config.batch * f.config.n_heads * f.config.seq_len * f.config.key_len
        item = {"float32": 4, "float16": 2, "bfloat16": 2}[f.config.dtype]
        self.cost_card.set_html(
            f"<table cellspacing='0' cellpadding='1' width='100%'>"
            f"<tr style='color:{th.muted}'><td>{stage}</td><td align='right'>FLOPs</td>"
            f"<td align='right'>{nbytes}</td></tr>"
            f"{rows}<tr style='font-weight:600'><td>{total}</td><td align='right'>{human_count(tot_f)}FLOP</td>"
            f"<td align='right'>{human_bytes(tot_b)}</td></tr></table>"
            f"<div style='color:{th.muted}'>{grid_text.format(bytes=human_bytes(grid * item))}</div>", th)

    def _draw_cache(self) -> None:
        f, th = self.frame, self.theme
        cfg = f.config
        n_layers, tokens = self.layers.value(), self.context.value()
        comp = engine.kv_cache_comparison(cfg, n_layers, tokens)
        names = [self.tr("this ({kind})").format(kind=cfg.attention_kind), f"MHA ({cfg.n_heads} kv)", "MQA (1 kv)"]
        vals = [comp["this"], comp["MHA"], comp["MQA"]]
        key = (tuple(names), tuple(vals), n_layers, tokens, cfg.dtype, th.name)
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
        self.cache_plot.setYRange(0, max(heights) * 1.45 or 1, padding=0)
        set_axis_label(self.cache_plot, "left", unit)
        for t, x, v in zip(self.cache_texts, range(3), vals):
            t.setText(human_bytes(v), color=th.foreground)
            t.setPos(x, v / div)
        llama, llama_mha = llama3_8b_cache(tokens)
        head = self.tr("<b>KV cache</b> · {layers} layers × {tokens} tokens · {dtype}").format(
            layers=n_layers, tokens=tokens, dtype=cfg.dtype)
        ref = self.tr("Llama-3-8B (32 layers, 32 q / 8 kv heads, bf16): {gqa} vs {mha} as MHA").format(
            gqa=human_bytes(llama), mha=human_bytes(llama_mha))
        set_plot_title(self.cache_plot, f"{head}<br><span style='color:{th.muted}'>{ref}</span>", th, size="9pt")

    def _draw_backends(self) -> None:
        f, th = self.frame, self.theme
        cfg = f.config
        rows = []
        res = f.backends
        names = list(engine.available_backends(cfg.device, cfg.dtype))
        for name in names:
            mark = " ◀" if name == cfg.backend else ""
            if res is not None and name in res:
                r = res[name]
                if "error" in r:
                    rows.append(f"<tr><td>{name}{mark}</td><td colspan='3' style='color:{th.muted}'>"
                                f"{html.escape(r['error'])}</td></tr>")
                    continue
                impl, diff, ms = r["impl"], r["max_abs_diff"], r["ms"]
            elif name == cfg.backend:
                impl, diff = f.trace.backend_impl, f.trace.backend_max_abs_diff
                ms = f.timings_ms.get("backend", f.timings_ms.get("eager", float("nan")))
            else:
                measuring = self.tr("measuring…")
                rows.append(f"<tr><td>{name}</td><td colspan='3' style='color:{th.muted}'>{measuring}</td></tr>")
                continue
            dtxt = self.tr("reference") if diff is None else f"{diff:.2g}"
            rows.append(f"<tr><td>{name}{mark}</td><td>{html.escape(impl)}</td>"
                        f"<td align='right'>{dtxt}</td><td align='right'>{ms:.2f} ms</td></tr>")
        backend, ran_as, time = self.tr("backend"), self.tr("ran as"), self.tr("time")
        self.backend_card.set_html(
            f"<table cellspacing='0' cellpadding='1' width='100%'><tr style='color:{th.muted}'>"
            f"<td>{backend}</td><td>{ran_as}</td><td align='right'>max |Δ|</td>"
            f"<td align='right'>{time}</td></tr>"
            + "".join(rows) + "</table>", th)

    def apply_theme(self, theme: Theme) -> None:
        for _key, _label, plot, bars in self.metric_plots:
            style_plot(plot, theme)
            bars.set_colors(theme.bar, theme.hatch, theme.accent)
        style_plot(self.cache_plot, theme)
        self.uniform_line.setPen(pg.mkPen(theme.muted, width=1, style=Qt.PenStyle.DashLine))
        self.uniform_line.label.setColor(theme.muted)
        card_bg = QColor(theme.background)
        for card in (self.warn_card, self.cost_card, self.backend_card):
            card.setStyleSheet(f"QFrame#card {{ background: {card_bg.name()}; border: 1px solid {theme.hatch};"
                               f" border-radius: 5px; }} QLabel {{ color: {theme.foreground}; font-size: 8pt; }}")
        super().apply_theme(theme)
