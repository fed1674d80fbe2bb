"""`logit_lens`: what a causal language model would predict after each of its layers.

One heatmap, layers × positions (engine.models.lens.logit_lens): row 0 is the embeddings, row
l + 1 the residual stream after layer l, put through the model's final norm and unembedding
as if it were the last layer; the last row is the model's own prediction. Each cell names the
top next token there, its colour is that token's probability; a cell is outlined where the
top token is the text's real next token, which the top axis names. Hovering a cell gives its
top-k. The selected layer's row is marked, the model selection's query its column. Encoders
predict no next token: the panel says so in one line.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP

from ..figures.cell_text import CellOutlines, CellTexts, contrast_colours
from ..figures.heatmap import Heatmap, colorize
from ..figures.plots import (
    Drawn,
    cache_static_items,
    fmt_percent,
    set_axis_label,
    set_bar_levels,
    style_colorbar,
)
from ..figures.text import RunsLabel, short_token
from ..figures.themes import WEIGHTS_CMAP, Theme
from ..figures.token_axis import TokenAxis
from .analysis import AnalysisPanel
from .base import register_panel

#: top tokens per cell kept for the hover readout
TOP_K = 5


@register_panel
class LogitLensPanel(AnalysisPanel):
    name = "logit_lens"
    title = QT_TRANSLATE_NOOP("Panel", "Logit lens: the prediction after each layer")
    readable_size = (420, 320)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.lens = None
        #: what the cells' tokens and outlines were drawn from: (lens, theme); see plots.Drawn
        self._painted = Drawn()
        self.map = Heatmap(self.hover, WEIGHTS_CMAP, describe=self.describe_cell, on_click=self._click)
        self.next_axis = TokenAxis("top")
        self.map.item.setAxisItems({"top": self.next_axis})
        self.map.item.showAxis("top")
        self.graphics.ci.addItem(self.map.cell, 0, 0)
        self.texts = CellTexts()
        self.map.vb.addItem(self.texts, ignoreBounds=True)
        self.hits = CellOutlines()
        self.map.vb.addItem(self.hits, ignoreBounds=True)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(WEIGHTS_CMAP),
                                    interactive=False, width=12)
        self.cbar.axis.enableAutoSIPrefix(False)
        set_bar_levels(self.cbar, (0.0, 1.0))
        self.graphics.ci.addItem(self.cbar, 0, 1)
        # (wraps at the panel's width: a LabelItem is as wide as its text and pushed the grid,
        # its title and itself past the panel's right edge)
        self.legend = RunsLabel("", justify="left", max_lines=4)
        self.graphics.ci.addItem(self.legend, 1, 0, 1, 2)
        self.retranslate_ui()

    def busy_text(self, kind: str) -> str:
        return self.tr("Reading every layer's residual stream through the unembedding…")

    # ---- what to compute ---------------------------------------------------------------------
    def needs(self):
        model = self.loaded
        if not model.summary.causal:
            return self.tr("No logit lens for {name}: it is an encoder (bidirectional), which "
                           "predicts no next token; open a causal language model (GPT-2, Llama, "
                           "Qwen2, a training-lab run).").format(name=model.name)
        text = self.model_text()
        return [("lens", (text, TOP_K), lambda job: model.logit_lens(text, k=TOP_K, progress=job.progress))]

    # ---- drawing -----------------------------------------------------------------------------
    def draw_refusal(self, line: str) -> None:
        self.lens = None
        self._painted.forget()  # (the cells are cleared: the same lens again draws them again)
        self.map.set_data(np.full((1, 1), np.nan, dtype=np.float32), (0.0, 1.0), source=("refused",))
        self.map.set_labels([""], [""])
        self.next_axis.set_labels([""])
        self.map.set_marker(None)
        self.texts.clear()
        self.hits.set_cells([])
        self.cbar.hide()
        self.map.set_title(self.tr("<b>Logit lens</b> · {name}").format(name=html.escape(self.loaded.name)))
        self.legend.setText(line, color=self.theme.warning, size=self.theme.pt(9.0))

    def row_labels(self, n_rows: int) -> list[str]:
        """Row 0 the embeddings, row l + 1 after layer l (the last: the model's output)."""
        return [self.tr("embed")] + [str(i) for i in range(n_rows - 1)]

    def draw(self, outcomes) -> None:
        got = outcomes.get("lens")
        if got is not None:
            self.lens = got.result if got.ok else None
        lens = self.lens
        if lens is None:
            return
        self.cbar.show()
        probs = lens.top_probs[:, :, 0].astype(np.float32)  # (L+1, S)
        rows, S = probs.shape
        th = self.theme
        self.map.set_data(probs, (0.0, 1.0), source=(lens,))
        self.map.set_labels(self.row_labels(rows), [short_token(t, 12) for t in lens.tokens])
        self.next_axis.set_labels([short_token(t, 12) for t in lens.tokens[1:]] + ["–"])
        set_axis_label(self.map.item, "left", self.tr("residual stream after layer"))
        set_axis_label(self.map.item, "bottom", self.tr("position (its token)"))
        set_axis_label(self.map.item, "top", self.tr("the text's real next token"))
        set_axis_label(self.cbar.axis, "right", self.tr("probability of the top token"))
        nxt = np.array([*lens.token_ids[1:], -1])
        hit = lens.top_ids[:, :, 0] == nxt[None, :]
        final = int(hit[-1, :-1].sum()) if S > 1 else 0
        if self._painted.changed("cells", lens, th):  # (a move of the selected cell keeps them)
            rgba, _nan = colorize(probs, self.map.lut, (0.0, 1.0))
            texts = [[short_token(lens.top_tokens[r][p][0]) for p in range(S)] for r in range(rows)]
            self.texts.set_texts(texts, contrast_colours(rgba), th.font(9.5))
            self.hits.set_cells(list(zip(*np.nonzero(hit), strict=True)))
        self.map.set_title(self.tr("<b>Logit lens</b> · {name} · {n} tokens").format(
            name=html.escape(self.loaded.name), n=S))
        self.legend.setText(self.tr("The last row is the model's own prediction. ")
                            + self.tr("Each cell: the most likely next token after that layer, "
                                    "coloured by its probability; outlined: it is the text's real "
                                    "next token ({hits} of {n} positions at the output). Hover a "
                                    "cell for the top {k}.").format(hits=final, n=max(S - 1, 0), k=TOP_K),
                            color=th.muted, size=th.pt(8.5))
        self.draw_selection()
        cache_static_items(self.graphics.scene())

    def draw_selection(self) -> None:
        lens = self.lens
        if lens is None:
            return
        row = min(self.model_layer() + 1, lens.n_rows - 1)
        self.map.set_marker("cell", row, min(self.selection.query, len(lens.tokens) - 1))

    # ---- interaction -------------------------------------------------------------------------
    def _click(self, row: int, col: int) -> None:
        """A cell selects its layer (the embeddings row: layer 0) and its position as query."""
        self.selection.set(layer=self.layer_index(max(0, row - 1)), query=col)

    def describe_cell(self, row: int, col: int) -> str:
        lens = self.lens
        if lens is None:
            return ""
        where = self.tr("embeddings") if row == 0 else self.tr("after layer {layer}").format(layer=row - 1)
        top = ", ".join(f"“{short_token(t, 16)}” {fmt_percent(float(p))}"
                        for t, p in zip(lens.top_tokens[row][col], lens.top_probs[row, col], strict=True))
        text = self.tr("{where} · position {pos} “{token}” · top {k}: {top}").format(
            where=where, pos=col, token=short_token(lens.tokens[col], 16), k=len(lens.top_tokens[row][col]),
            top=top)
        if col + 1 < len(lens.tokens):
            text += self.tr(" · the real next token “{token}”: {p}").format(
                token=short_token(lens.tokens[col + 1], 16), p=fmt_percent(float(lens.next_probs[row, col])))
        return text

    def heatmaps(self):
        return []  # not linked with the attention layer's heatmaps

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        self.map.apply_theme(theme)
        style_colorbar(self.cbar, theme)
        self.hits.setPen(theme.pen(theme.foreground, 1.5))
        cache_static_items(self.graphics.scene())
        self.update_request()
