"""`circuits`: what each head of a real model does, by detectors and by its weights.

Left, every layer × head as one heatmap of a detector's score (engine.models.detectors:
previous-token, duplicate-token, induction, TransformerLens' definitions, on repeated random
tokens), the value written in each cell; the heads of each layer can be ranked by it (each
cell then names its head). Right, the selected head's circuits from its weights
(engine.models.circuits): the singular values of W_QK = W_Q·W_Kᵀ and W_OV = W_V·W_O, the OV
copying score (Σλ/Σ|λ| of W_E·W_OV·W_U, where the model has both) and the top token pairs of
the full QK and OV circuits. Both are computed in the model's worker; a click on a cell
selects that head in every model panel.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QComboBox, QLabel

from engine.numbers import fixed

from ..figures.cell_text import CellTexts, contrast_colours
from ..figures.heatmap import Heatmap, colorize
from ..figures.plots import (
    Drawn,
    add_plot,
    cache_static_items,
    fmt_number,
    set_axis_label,
    set_bar_levels,
    set_label_text,
    set_plot_title,
    style_colorbar,
    style_plot,
)
from ..figures.text import RunsLabel
from ..figures.themes import WEIGHTS_CMAP, Theme
from .analysis import AnalysisPanel
from .base import register_panel

#: detector key (engine.models.detectors.DETECTOR_NAMES) → (menu text, what it measures)
DETECTORS = {
    "induction": (QT_TRANSLATE_NOOP("CircuitsPanel", "induction"),
                  QT_TRANSLATE_NOOP("CircuitsPanel", "weight on the token after an earlier copy of "
                                    "the current token ([A][B] … [A] → [B])")),
    "previous_token": (QT_TRANSLATE_NOOP("CircuitsPanel", "previous token"),
                       QT_TRANSLATE_NOOP("CircuitsPanel", "weight on the token just before")),
    "duplicate_token": (QT_TRANSLATE_NOOP("CircuitsPanel", "duplicate token"),
                        QT_TRANSLATE_NOOP("CircuitsPanel", "weight on earlier copies of the "
                                          "current token")),
}
#: top token pairs shown per circuit
PAIRS = 5
#: px the spectra plot keeps (with its axes and title) however narrow the panel
SPECTRA_MIN_WIDTH = 180


def _tr(text: str) -> str:
    return QCoreApplication.translate("CircuitsPanel", text)


def _tok(s: str) -> str:
    """A token for a title: escaped, shortened."""
    s = s if len(s) <= 14 else s[:13] + "…"
    return html.escape(s)


@register_panel
class CircuitsPanel(AnalysisPanel):
    name = "circuits"
    title = QT_TRANSLATE_NOOP("Panel", "Circuits: what each head does")
    readable_size = (420, 400)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.scores: dict[str, np.ndarray] | None = None
        self.head_circuits = None
        self._order: np.ndarray | None = None  # (L, H): the head shown at each column
        #: what the cells' numbers were drawn from: (scores, detector, ranked, theme); see plots.Drawn
        self._painted = Drawn()
        # ---- toolbar ---------------------------------------------------------------------
        self.detector_label = QLabel()
        self.detector = QComboBox()
        self.detector.setObjectName("circuits_detector")
        for key in DETECTORS:
            self.detector.addItem("", key)
        self.detector.currentIndexChanged.connect(lambda _i: self.update_request())
        self.detector_label.setBuddy(self.detector)
        self.order = QComboBox()
        self.order.setObjectName("circuits_order")
        self.order.addItems(["", ""])
        self.order.currentIndexChanged.connect(lambda _i: self.update_request())
        self.toolbar.addStretch(1)
        self.toolbar.addWidget(self.detector_label)
        self.toolbar.addWidget(self.detector)
        self.toolbar.addWidget(self.order)
        self.toolbar.addSpacing(24)  # room for the "?" button
        # ---- the grid of detector scores ---------------------------------------------------
        self.grid = Heatmap(self.hover, WEIGHTS_CMAP, on_click=self._click, describe=self.describe_cell)
        self.graphics.ci.addItem(self.grid.cell, 0, 0)
        self.grid.vb.setMouseEnabled(x=False, y=False)
        self.texts = CellTexts()
        self.grid.vb.addItem(self.texts, ignoreBounds=True)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(WEIGHTS_CMAP),
                                    interactive=False, width=12)
        self.cbar.axis.enableAutoSIPrefix(False)
        set_bar_levels(self.cbar, (0.0, 1.0))
        self.graphics.ci.addItem(self.cbar, 0, 1)
        # ---- the selected head's spectra and pairs -------------------------------------------
        self.spectra = add_plot(self.graphics.ci, 0, 2)
        self.spectra.hideButtons()
        self.spectra.setMenuEnabled(False)
        self.spectra.setMouseEnabled(x=False, y=False)
        self.qk_curve = pg.PlotDataItem(symbol="o", symbolSize=6)
        self.ov_curve = pg.PlotDataItem(symbol="s", symbolSize=6)
        self.spectra.addItem(self.qk_curve)
        self.spectra.addItem(self.ov_curve)
        # the spectra keep a readable width beside the grid (its square cells give way)
        self.spectra.parentWidget().setMinimumWidth(SPECTRA_MIN_WIDTH)
        self.pairs = RunsLabel("", justify="left")  # its long lines wrap at the panel's width
        self.graphics.ci.addItem(self.pairs, 1, 0, 1, 3)
        lay = self.graphics.ci.layout
        lay.setColumnStretchFactor(0, 3)
        lay.setColumnStretchFactor(2, 2)
        self.retranslate_ui()

    # ---- language --------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self.detector_label.setText(self.tr("detector"))
        for i, key in enumerate(DETECTORS):
            self.detector.setItemText(i, _tr(DETECTORS[key][0]))
        self.detector.setToolTip(self.tr("Which head detector colours the grid (TransformerLens' "
                                         "definitions, on repeated random tokens)"))
        self.order.setItemText(0, self.tr("head order"))
        self.order.setItemText(1, self.tr("ranked in each layer ↓"))
        self.order.setToolTip(self.tr("Rank the heads of each layer by the score (each cell then "
                                      "names its head)"))
        super().retranslate_ui()

    def busy_text(self, kind: str) -> str:
        if kind == "detectors":
            return self.tr("Running the head detectors on repeated random tokens…")
        return self.tr("Computing the selected head's circuits…")

    # ---- what to compute ---------------------------------------------------------------------
    def detector_key(self) -> str:
        return self.detector.currentData() or "induction"

    def needs(self):
        model = self.loaded
        layer, head = self.model_layer(), min(self.selection.head, model.n_heads - 1)
        return [("detectors", (), lambda job: model.all_head_scores(progress=job.check)),
                ("circuits", (layer, head), lambda job: model.circuits(layer, head, top=PAIRS, progress=job.check))]

    # ---- drawing -----------------------------------------------------------------------------
    def draw_refusal(self, line: str) -> None:
        self.scores = self.head_circuits = None
        self._painted.forget()

    def draw(self, outcomes) -> None:
        det, circ = outcomes.get("detectors"), outcomes.get("circuits")
        if det is not None:
            self.scores = det.result if det.ok else None
        if circ is not None:
            self.head_circuits = circ.result if circ.ok else None
        self.draw_grid()
        self.draw_head(running=circ is None)
        cache_static_items(self.graphics.scene())

    def shown_scores(self) -> np.ndarray | None:
        """(L, H) the grid's values as shown (ranked when ranked)."""
        if self.scores is None:
            return None
        values = np.asarray(self.scores[self.detector_key()], dtype=np.float32)
        if self.order.currentIndex() == 1:
            self._order = np.argsort(-values, axis=1, kind="stable")
        else:
            self._order = np.tile(np.arange(values.shape[1]), (values.shape[0], 1))
        return np.take_along_axis(values, self._order, axis=1)

    def draw_grid(self) -> None:
        shown = self.shown_scores()
        if shown is None:
            return
        L, H = shown.shape
        ranked = self.order.currentIndex() == 1
        self.grid.set_data(shown, (0.0, 1.0), source=(self.scores, self.detector_key(), ranked))
        self.grid.set_labels([str(i) for i in range(L)],
                             [str(i + 1) for i in range(H)] if ranked else [str(h) for h in range(H)])
        set_axis_label(self.grid.item, "left", self.tr("layer"))
        set_axis_label(self.grid.item, "bottom", self.tr("rank in the layer") if ranked else self.tr("head"))
        name = _tr(DETECTORS[self.detector_key()][0])
        model = self.loaded
        self.grid.set_title(self.tr("<b>{detector}</b> score of every head · {name}").format(
            detector=name, name=html.escape(model.name if model is not None else "")))
        set_axis_label(self.cbar.axis, "right", self.tr("{detector} score").format(detector=name))
        if self._painted.changed("texts", self.scores, self.detector_key(), ranked, self.theme):
            rgba, _nan = colorize(shown, self.grid.lut, (0.0, 1.0))  # (not on a move of the selected head)
            colours = contrast_colours(rgba)
            if ranked:
                texts = [[f"h{int(self._order[li, c])}\n{fixed(shown[li, c])}" for c in range(H)] for li in range(L)]
            else:
                texts = [[fixed(shown[li, c]) for c in range(H)] for li in range(L)]
            self.texts.set_texts(texts, colours, self.theme.font(10.0))
        self.draw_selection()

    def draw_selection(self) -> None:
        if self._order is None or self.loaded is None:
            return
        layer, head = self.model_layer(), self.selection.head
        if layer < self._order.shape[0] and head < self._order.shape[1]:
            col = int(np.nonzero(self._order[layer] == head)[0][0])
            self.grid.set_marker("cell", layer, col)

    def draw_head(self, running: bool) -> None:
        c = self.head_circuits
        th = self.theme
        layer, head = self.model_layer(), self.selection.head
        if c is None or (c.layer, c.head) != (layer, head):
            if not running:  # refused: the status line says why
                self.qk_curve.setData([], [])
                self.ov_curve.setData([], [])
                set_label_text(self.pairs, "")
            return
        x = np.arange(1, len(c.qk_singular) + 1)
        self.qk_curve.setData(x, c.qk_singular, pen=th.pen(th.accent, 2), symbolBrush=th.accent,
                              symbolPen=th.pen(th.accent, 1))
        self.ov_curve.setData(x, c.ov_singular, pen=th.pen(th.accent2, 2), symbolBrush=th.accent2,
                              symbolPen=th.pen(th.accent2, 1))
        kv = self.tr(" (kv {kv})").format(kv=c.kv_head) if self.loaded.n_kv_heads != self.loaded.n_heads else ""
        set_plot_title(self.spectra, self.tr(
            "<b>layer {layer} · head {head}</b>{kv}: singular values of "
            "<span style='color:{qk}'>W_QK</span> and <span style='color:{ov}'>W_OV</span>").format(layer=c.layer, head=c.head, kv=kv, qk=th.accent, ov=th.accent2), th)
        set_axis_label(self.spectra, "bottom", self.tr("singular value index"))
        set_axis_label(self.spectra, "left", self.tr("σ"))
        set_label_text(self.pairs, self.pairs_html(c), color=th.foreground, size=th.pt(9.0))

    def pairs_html(self, c) -> str:
        """The copying score and the top token pairs, as the label below the plots shows them."""
        th = self.theme
        lines = []
        if c.copying_score is not None:
            lines.append(self.tr("<b>OV copying score {score}</b> (Σλ/Σ|λ| of W_E·W_OV·W_U: 1 = "
                                 "attending to a token raises that token's own logit)").format(
                score=fmt_number(c.copying_score, 3)))
        else:
            lines.append(self.tr("No OV copying score: this model has no unembedding (W_U)."))
        if c.qk_pairs:
            pairs = " &nbsp; ".join(f"{_tok(p.row)} → {_tok(p.col)} <span style='color:{th.muted}'>"
                                    f"{fmt_number(p.value, 3)}</span>" for p in c.qk_pairs[:PAIRS])
            lines.append(self.tr("<b>QK</b> (query → key): {pairs}").format(pairs=pairs))
        if c.ov_pairs:
            pairs = " &nbsp; ".join(f"{_tok(p.row)} → {_tok(p.col)} <span style='color:{th.muted}'>"
                                    f"{fmt_number(p.value, 3)}</span>" for p in c.ov_pairs[:PAIRS])
            lines.append(self.tr("<b>OV</b> (attended → output): {pairs}").format(pairs=pairs))
        for note in c.notes:
            lines.append(f"<span style='color:{th.muted}'>ℹ {html.escape(note)}</span>")
        return "<br>".join(lines)

    # ---- interaction -------------------------------------------------------------------------
    def _click(self, row: int, col: int) -> None:
        if self._order is None:
            return
        head = int(self._order[row, col])
        self.selection.set(head=head, layer=self.layer_index(row))

    def describe_cell(self, row: int, col: int) -> str:
        if self.scores is None or self._order is None:
            return ""
        head = int(self._order[row, col])
        parts = " · ".join(f"{_tr(DETECTORS[k][0])} {fixed(self.scores[k][row, head], 3)}" for k in DETECTORS)
        return self.tr("layer {layer} · head {head} · {scores}").format(layer=row, head=head, scores=parts)

    def heatmaps(self):
        return []  # not linked with the attention layer's heatmaps

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        self.grid.apply_theme(theme)
        style_plot(self.spectra, theme)
        style_colorbar(self.cbar, theme)
        self.spectra.showGrid(x=False, y=True, alpha=0.25)
        cache_static_items(self.graphics.scene())
        self.update_request()
