"""Every layer × head of the model being trained, as tiles of one image in one plot.

Rows are layers (layer 0 on top), columns heads; each tile is that head's (S, S) attention
on the probe sequence at fixed levels 0..1 (so a head sharpening is a tile brightening, and
a replayed step compares with today's). One RGBA image (the pyqtgraph idiom of one image
item updated in place), the layer and head names as axis ticks, one outline for the
selected head, one text per tile with its score in the tile's upper-right triangle, which
a causal head never fills.

    x: head h's tile spans [h·(S+g), h·(S+g)+S)     y: layer l's [l·(S+g), l·(S+g)+S)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QGraphicsRectItem

from ..figures.heatmap import CellImage, colorize
from ..figures.plots import LeanAxis, LeanPlotItem, style_plot
from ..figures.themes import Theme
from ..selection import HoverLink

#: the tiles' score texts (on viridis' dark end)
TEXT_COLOUR = "#f4f4f4"


class HeadGrid:
    """A (L, H, S, S) attention stack; ``plot`` goes into a GraphicsLayout.

    on_click(layer, head) for a left click on a tile; describe(layer, head, row, col) gives
    the hover readout (the window's status bar)."""

    def __init__(self, hover: HoverLink, cmap: str, on_click: Callable[[int, int], None] | None = None,
                 describe: Callable[[int, int, int, int], str] | None = None) -> None:
        self.hover = hover
        self.on_click = on_click
        self.describe = describe
        self.plot = LeanPlotItem(axisItems={"left": LeanAxis("left"), "top": LeanAxis("top")})
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.hideAxis("bottom")
        self.plot.showAxis("top")
        self.vb = self.plot.getViewBox()
        self.vb.invertY(True)
        self.vb.setMouseEnabled(False, False)
        self.vb.setDefaultPadding(0.0)
        self.vb.setAspectLocked(True)  # square tiles: a row of the attention is a row
        self.lut = pg.colormap.get(cmap).getLookupTable(nPts=256, alpha=True)
        self.image = CellImage(self._cell_at, self._hover, lambda cell: self._click(*cell))
        self.vb.addItem(self.image)
        self.outline = QGraphicsRectItem()
        self.outline.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.outline.setZValue(10)
        self.vb.addItem(self.outline, ignoreBounds=True)
        self.texts: list[pg.TextItem] = []
        self.data: np.ndarray | None = None
        self.shape = (0, 0, 0)  # L, H, S
        self.gap = 1
        self.selected = (0, 0)
        self._theme: Theme | None = None

    # ---- geometry ------------------------------------------------------------------------
    def tile_origin(self, layer: int, head: int) -> tuple[int, int]:
        s, g = self.shape[2], self.gap
        return head * (s + g), layer * (s + g)

    def _cell_at(self, pos: QPointF) -> tuple[int, int, int, int] | None:
        n_layers, n_heads, s = self.shape
        step = s + self.gap
        x, y = math.floor(pos.x()), math.floor(pos.y())
        head, col = divmod(x, step)
        layer, row = divmod(y, step)
        if not (0 <= head < n_heads and 0 <= layer < n_layers and col < s and row < s):
            return None
        return layer, head, row, col

    # ---- data ------------------------------------------------------------------------------
    def set_data(self, attentions: np.ndarray, labels: list[list[str]] | None = None) -> None:
        """attentions (L, H, S, S) in [0, 1]; labels[l][h]: the text in tile (l, h)'s corner."""
        a = np.asarray(attentions, dtype=np.float32)
        n_layers, n_heads, s = a.shape[0], a.shape[1], a.shape[2]
        shape = (n_layers, n_heads, s)
        if shape != self.shape:
            self.shape = shape
            self.gap = max(1, s // 6)
            step = s + self.gap
            pad = self.gap / 2  # room for the selected head's outline
            self.vb.setRange(QRectF(-pad, -pad, n_heads * step - self.gap + 2 * pad,
                                    n_layers * step - self.gap + 2 * pad), padding=0)
            self.plot.getAxis("top").setTicks([[(h * step + s / 2, f"H{h}") for h in range(n_heads)]])
            self.plot.getAxis("left").setTicks([[(layer * step + s / 2, f"L{layer}") for layer in range(n_layers)]])
            self._place_outline()
        self.data = a
        rgba, _ = colorize(a, self.lut, (0.0, 1.0))  # (L, H, S, S, 4)
        step = s + self.gap
        canvas = np.zeros((n_layers * step - self.gap, n_heads * step - self.gap, 4), np.uint8)
        for layer in range(n_layers):
            for head in range(n_heads):
                x, y = self.tile_origin(layer, head)
                canvas[y:y + s, x:x + s] = rgba[layer, head]
        self.image.setImage(canvas)
        self._set_texts(labels)

    def _set_texts(self, labels: list[list[str]] | None) -> None:
        n_layers, n_heads, s = self.shape
        flat = [] if labels is None else [(layer, head, labels[layer][head])
                                          for layer in range(n_layers) for head in range(n_heads)]
        while len(self.texts) < len(flat):
            # light on the dark, empty (future) corner of a causal tile, whatever the theme
            item = pg.TextItem(anchor=(1, 0), color=TEXT_COLOUR, fill=pg.mkBrush(0, 0, 0, 90))
            item.setZValue(20)
            self.vb.addItem(item, ignoreBounds=True)
            self.texts.append(item)
        font = self._theme.font(7.5) if self._theme else None
        for i, item in enumerate(self.texts):
            if i >= len(flat) or not flat[i][2]:
                item.hide()
                continue
            layer, head, text = flat[i]
            x, y = self.tile_origin(layer, head)
            if item.toPlainText() != text:
                item.setText(text, color=TEXT_COLOUR)
            if font is not None and item.textItem.font() != font:
                item.setFont(font)
            item.setPos(x + s, y)
            item.show()

    def set_selection(self, layer: int, head: int) -> None:
        self.selected = (layer, head)
        self._place_outline()

    def _place_outline(self) -> None:
        n_layers, n_heads, s = self.shape
        layer, head = self.selected
        if not (0 <= layer < n_layers and 0 <= head < n_heads):
            self.outline.hide()
            return
        x, y = self.tile_origin(layer, head)
        pad = self.gap / 3
        self.outline.setRect(QRectF(x - pad, y - pad, s + 2 * pad, s + 2 * pad))
        self.outline.show()

    def tile_rgba(self, layer: int, head: int) -> np.ndarray:
        """The (S, S, 4) pixels of one tile as drawn."""
        s = self.shape[2]
        x, y = self.tile_origin(layer, head)
        return self.image.image[y:y + s, x:x + s]

    # ---- mouse -------------------------------------------------------------------------------
    def _hover(self, cell) -> None:
        if cell is None:
            self.hover.describe("")
            return
        if self.describe is not None:
            self.hover.describe(self.describe(*cell))

    def _click(self, layer: int, head: int, _row: int, _col: int) -> None:
        if self.on_click is not None:
            self.on_click(layer, head)

    # ---- look ----------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        style_plot(self.plot, theme)
        self.outline.setPen(theme.pen(theme.accent, 2.5))
        for item in self.texts:
            item.setFont(theme.font(7.5))
