"""`attribution`: which heads and MLPs write one token's logit (direct logit attribution).

engine.models.lens.logit_attribution: in a pre-norm causal LM the target token's logit at one
position of the model's text is a sum of what the embeddings, every head (L × H), every MLP
and the biases write into the residual stream there, read through the final norm (its scale
frozen at the real run's) and the unembedding. One bar per part, in logit units: the
embeddings, then layer by layer its H heads (blue) and its MLP (orange), then the biases. The
title names the target and the position and says both numbers, the sum of the bars and the
model's own logit, which agree. The position is the model selection's query; the target
defaults to the text's real next token there (at the last position: the model's own top
prediction), and the field in the toolbar takes another token. A click on a head's bar
selects that head in every model panel. Post-norm models (each block's norm rescales the
stream, so the logit is no sum) and encoders (no next token) are refused in one line.
"""

from __future__ import annotations

import html
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QRectF, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QLineEdit

from engine.numbers import fixed

from ..figures.plots import (
    BarsItem,
    Drawn,
    add_plot,
    cache_static_items,
    fmt_number,
    set_axis_label,
    set_label_text,
    set_plot_title,
    style_plot,
)
from ..figures.text import RunsLabel, short_token
from ..figures.themes import CATEGORY_COLORS, Theme
from .analysis import AnalysisPanel
from .base import register_panel

#: bar width in x units (a bar's centre is its part's x)
BAR_W = 0.8
#: gap between two layers' groups of bars, in x units
GAP = 0.9
#: parts named in the legend below the bars
TOP_PARTS = 5
#: the MLP bars' colour (the heads take the theme's second accent)
MLP_COLOUR = CATEGORY_COLORS[1]


def logit_text(value: float, scale: float) -> str:
    """`value` in logit units with as many decimals as a logit of size `scale` needs: 3 from
    |scale| ≥ 1, more below (4 significant digits), at most 6."""
    a = abs(scale)
    decimals = 3 if a >= 1 or a == 0 else min(6, 3 - math.floor(math.log10(a)))
    return f"{value:.{decimals}f}"


@dataclass(frozen=True)
class Part:
    """One bar: `kind` "embeddings", "head", "mlp" or "biases"; `layer`, `head` (−1 when
    none); `x` its centre; `value` its logit contribution."""

    kind: str
    layer: int
    head: int
    x: float
    value: float


@dataclass(eq=False)
class AttributionView:
    """A job's result: the engine's LogitAttribution and where its target came from
    ("typed", "next": the text's real next token, "prediction": the model's top one)."""

    result: object
    source: str


def attribution_job(model, text: str, position: int, typed: str):
    """The job (in the model's worker): the target resolved, then the attribution."""
    def job(j) -> AttributionView:
        check = j.check  # a cancel is seen inside each forward pass (engine.models.cancel)
        if typed:
            return AttributionView(model.logit_attribution(text, typed, position=position, progress=check),
                                   "typed")
        ids, _notice, _n = model.tokenize(text)
        p = min(position, len(ids) - 1)
        if p + 1 < len(ids):
            return AttributionView(model.logit_attribution(text, int(ids[p + 1]), position=p, progress=check),
                                   "next")
        top = model.top_prediction(text, position=p, progress=check)
        return AttributionView(model.logit_attribution(text, top, position=p, progress=check), "prediction")
    return job


class ClickBars(BarsItem):
    """Bars that report a click and the hovered bar by x (the nearest centre)."""

    def __init__(self, on_click, on_hover) -> None:
        super().__init__()
        self.xs = np.zeros(0)
        self.on_click, self.on_hover = on_click, on_hover
        self.setAcceptHoverEvents(True)

    def index_at(self, x: float) -> int | None:
        if not self.xs.size:
            return None
        i = int(np.argmin(np.abs(self.xs - x)))
        return i if abs(self.xs[i] - x) <= (BAR_W + GAP) / 2 else None

    def mouseClickEvent(self, ev) -> None:  # pyqtgraph's scene calls it
        i = self.index_at(ev.pos().x())
        if i is not None:
            ev.accept()
            self.on_click(i)

    def hoverEvent(self, ev) -> None:
        self.on_hover(None if ev.isExit() else self.index_at(ev.pos().x()))


@register_panel
class AttributionPanel(AnalysisPanel):
    name = "attribution"
    title = QT_TRANSLATE_NOOP("Panel", "Attribution: what writes a token's logit")
    readable_size = (420, 320)  # (the window keeps a dock in front at least this large)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.view: AttributionView | None = None
        self.parts: list[Part] = []
        #: what the chart (ranges, ticks, title, legend) and the bars were drawn from: a
        #: result object, the selected head, the theme (plots.Drawn: identities, no numbers
        #: compared); the same result again (a key moved, another panel's analysis done)
        #: repaints nothing, another selected head recolours the bars only
        self._drawn = Drawn()
        # ---- toolbar ---------------------------------------------------------------------
        self.target_label = QLabel()
        self.target = QLineEdit()
        self.target.setObjectName("attribution_target")
        self.target.setClearButtonEnabled(True)
        self.target.setMaximumWidth(220)
        self.target.editingFinished.connect(self.update_request)
        self.target_label.setBuddy(self.target)
        self.toolbar.addStretch(1)
        self.toolbar.addWidget(self.target_label)
        self.toolbar.addWidget(self.target)
        self.toolbar.addSpacing(24)  # room for the "?" button
        # ---- the bars --------------------------------------------------------------------
        self.plot = add_plot(self.graphics.ci, 0, 0)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.bars = ClickBars(self._click, self._hover)
        self.plot.addItem(self.bars)
        self.zero = pg.InfiniteLine(pos=0.0, angle=0, movable=False)
        self.plot.addItem(self.zero, ignoreBounds=True)
        self.separators: list[pg.InfiniteLine] = []  # dashed, between the groups of bars
        self.legend = RunsLabel("", justify="left")
        self.graphics.ci.addItem(self.legend, 1, 0)
        self.retranslate_ui()

    # ---- language --------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self._drawn.forget()  # (the title, ticks and legend in the new language)
        self.target_label.setText(self.tr("target token"))
        self.target.setPlaceholderText(self.tr("the next token"))
        self.target.setToolTip(self.tr("The token whose logit is split (a vocabulary entry, or a "
                                       "text that is one token); empty: the text's real next "
                                       "token at the selected position"))
        super().retranslate_ui()

    def busy_text(self, kind: str) -> str:
        return self.tr("Splitting the logit into heads and MLPs…")

    # ---- what to compute ---------------------------------------------------------------------
    def position(self) -> int:
        """The selected query, within the trace's tokens."""
        tr_ = self.trace
        q = int(self.selection.query)
        return min(q, tr_.seq_len - 1) if tr_ is not None else q

    def needs(self):
        model = self.loaded
        if not model.summary.causal:
            return self.tr("No logit attribution for {name}: it is an encoder (bidirectional), "
                           "which predicts no next token; open a causal language model (GPT-2, "
                           "Llama, Qwen2, a pre-norm training-lab run).").format(name=model.name)
        text, pos, typed = self.model_text(), self.position(), self.target.text().strip()
        return [("attribution", (text, pos, typed), attribution_job(model, text, pos, typed))]

    # ---- drawing -----------------------------------------------------------------------------
    def draw_refusal(self, line: str) -> None:
        self.view, self.parts = None, []
        self._drawn.forget()
        self.bars.xs = np.zeros(0)
        self.bars.set_groups([])
        self.plot.getAxis("bottom").setTicks([[]])
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.showGrid(x=False, y=False)
        for rule in (self.zero, *self.separators):
            rule.hide()
        name = html.escape(self.loaded.name) if self.loaded is not None else ""
        set_plot_title(self.plot, self.tr("<b>Direct logit attribution</b> · {name}").format(name=name),
                       self.theme)
        self.say_refusal_below(self.legend, line)

    def draw(self, outcomes) -> None:
        got = outcomes.get("attribution")
        if got is not None and not got.ok:
            self.draw_refusal(got.error)
            return
        if got is not None:
            self.view = got.result
        if self.view is None:
            return
        self.draw_bars()
        cache_static_items(self.graphics.scene())

    def layout_parts(self, a) -> list[Part]:
        """The bars of attribution `a`: embeddings, per layer its heads then its MLP, biases."""
        L, H = a.heads.shape
        parts = [Part("embeddings", -1, -1, 0.0, float(a.parts["embeddings"]))]
        x = 1.0 + GAP
        for layer in range(L):
            for h in range(H):
                parts.append(Part("head", layer, h, x + h, float(a.heads[layer, h])))
            x += H
            mlp = a.parts.get(f"mlp {layer}")
            if mlp is not None:
                parts.append(Part("mlp", layer, -1, x, float(mlp)))
                x += 1
            x += GAP
        parts.append(Part("biases", -1, -1, x, float(a.parts["biases"])))
        return parts

    def part_name(self, part: Part) -> str:
        if part.kind == "head":
            return self.tr("layer {layer} · head {head}").format(layer=part.layer, head=part.head)
        if part.kind == "mlp":
            return self.tr("MLP {layer}").format(layer=part.layer)
        return self.tr("embeddings") if part.kind == "embeddings" else self.tr("biases")

    def headline(self) -> str:
        """The title: the target, the position, the sum of the bars and the logit."""
        a = self.view.result
        p = a.position
        return self.tr("<b>Direct logit attribution</b> of “{target}” at position {pos} “{token}” · "
                       "the bars sum to <b>{total}</b>, the model's logit is <b>{logit}</b>").format(
            target=html.escape(short_token(a.target, 16)), pos=p,
            token=html.escape(short_token(a.tokens[p], 16)), total=logit_text(a.total, a.logit),
            logit=logit_text(a.logit, a.logit))

    def draw_bars(self) -> None:
        """The bars of the result held: the chart around them (ranges, ticks, separators, title,
        legend) when the result or the theme is another, the bars' heights and colours when
        the selected head is another too; the same result and head again: nothing."""
        th = self.theme
        sel = (self.model_layer(), int(self.selection.head))
        if self._drawn.changed("chart", self.view, th):
            self.draw_chart()
        if not self._drawn.changed("bars", self.view, th, sel):
            return
        groups: dict[str, list[QRectF]] = {"head": [], "mlp": [], "other": [], "selected": []}
        for q in self.parts:
            g = "selected" if q.kind == "head" and (q.layer, q.head) == sel else (
                q.kind if q.kind in ("head", "mlp") else "other")
            groups[g].append(QRectF(q.x - BAR_W / 2, min(q.value, 0.0), BAR_W, abs(q.value)))
        colours = {"head": th.accent2, "mlp": MLP_COLOUR, "other": th.muted, "selected": th.accent}
        self.bars.set_groups([(QBrush(QColor(colours[g])), r) for g, r in groups.items() if r])

    def draw_chart(self) -> None:
        """Everything of the chart but the bars' rectangles, for the result held."""
        a, th = self.view.result, self.theme
        self.plot.showAxis("left")
        self.plot.showAxis("bottom")
        self.plot.showGrid(x=False, y=True, alpha=0.25)
        self.zero.show()
        self.parts = parts = self.layout_parts(a)
        self.bars.xs = np.array([q.x for q in parts])
        lo = min(0.0, min(q.value for q in parts))
        hi = max(0.0, max(q.value for q in parts))
        pad = 0.06 * ((hi - lo) or 1.0)
        edge = max(1.0, 0.03 * parts[-1].x)  # room for the "emb" and "bias" tick labels
        self.plot.setXRange(-edge, parts[-1].x + edge, padding=0)
        self.plot.setYRange(lo - pad, hi + pad, padding=0)
        L = a.heads.shape[0]
        ticks = [(0.0, self.tr("emb"))]
        for layer in range(L):
            xs = [q.x for q in parts if q.layer == layer]
            ticks.append(((xs[0] + xs[-1]) / 2, str(layer)))
        ticks.append((parts[-1].x, self.tr("bias")))
        self.draw_separators(parts)
        self.plot.getAxis("bottom").setTicks([ticks])
        mlps = any(q.kind == "mlp" for q in parts)
        set_axis_label(self.plot, "bottom", self.tr("layer: its heads, then its MLP") if mlps
                       else self.tr("layer: its heads"))
        set_axis_label(self.plot, "left", self.tr("contribution to the logit"))
        set_plot_title(self.plot, self.headline(), th)
        set_label_text(self.legend, self.legend_html(), color=th.foreground, size=th.pt(8.5))

    def draw_separators(self, parts: list[Part]) -> None:
        """A dashed line between two groups (the embeddings, each layer, the biases)."""
        xs = []
        for a, b in itertools.pairwise(parts):
            if (a.layer, a.kind == "biases") != (b.layer, b.kind == "biases"):
                xs.append((a.x + b.x) / 2)
        while len(self.separators) < len(xs):
            line = pg.InfiniteLine(angle=90, movable=False)
            self.plot.addItem(line, ignoreBounds=True)
            self.separators.append(line)
        pen = self.theme.pen(self.theme.muted, 1, Qt.PenStyle.DashLine)
        for i, line in enumerate(self.separators):
            line.setVisible(i < len(xs))
            if i < len(xs):
                line.setPos(xs[i])
                line.setPen(pen)

    def legend_html(self) -> str:
        a, th = self.view.result, self.theme
        where = {"typed": self.tr("the typed target"),
                 "next": self.tr("the text's real next token"),
                 "prediction": self.tr("the model's own top prediction (the last position has no "
                                       "next token)")}[self.view.source]
        swatch = "<span style='color:{c}'>■</span> {t}"
        keys = [swatch.format(c=th.accent2, t=self.tr("heads")), swatch.format(c=th.accent, t=self.tr("selected head"))]
        if any(q.kind == "mlp" for q in self.parts):
            keys.append(swatch.format(c=MLP_COLOUR, t=self.tr("MLPs")))
        keys.append(swatch.format(c=th.muted, t=self.tr("embeddings, biases")))
        top = sorted(self.parts, key=lambda q: -abs(q.value))[:TOP_PARTS]
        largest = ", ".join(f"{html.escape(self.part_name(q))} {fixed(q.value, 3, sign=True)}" for q in top)
        lines = [" &nbsp; ".join(keys) + " &nbsp; " + self.tr("Target: {where}.").format(where=where),
                 self.tr("Largest parts: {parts}.").format(parts=largest),
                 self.tr("Each bar: what that part writes into the residual stream, read through the "
                         "final norm (its scale frozen) and the unembedding. Click a head's bar to "
                         "select it.")]
        lines += [f"<span style='color:{th.muted}'>ℹ {html.escape(n)}</span>" for n in a.notes]
        return "<br>".join(lines)

    def draw_selection(self) -> None:
        if self.view is not None and self.loaded is not None:
            self.draw_bars()

    # ---- interaction -------------------------------------------------------------------------
    def _click(self, index: int) -> None:
        part = self.parts[index] if 0 <= index < len(self.parts) else None
        if part is None or part.kind not in ("head", "mlp"):
            return
        layer = self.layer_index(part.layer)
        if part.kind == "head":
            self.selection.set(head=part.head, layer=layer)
        else:
            self.selection.set(layer=layer)

    def _hover(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.parts) or self.view is None:
            self.hover.describe("")
            return
        self.hover.describe(self.describe_bar(index))

    def describe_bar(self, index: int) -> str:
        """The hover readout of bar `index`."""
        q, a = self.parts[index], self.view.result
        share = q.value / a.logit if abs(a.logit) > 1e-12 else float("nan")
        return self.tr("{part}: {value} of the logit {logit} of “{target}” ({share} of it)").format(
            part=self.part_name(q), value=fixed(q.value, 4, sign=True), logit=fixed(a.logit, 4),
            target=short_token(a.target, 16), share=fmt_number(share, 3))

    def heatmaps(self):
        return []  # not linked with the attention layer's heatmaps

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        style_plot(self.plot, theme)
        self.zero.setPen(theme.pen(theme.muted, 1))
        cache_static_items(self.graphics.scene())
        self.update_request()
