"""Every layer × head of the model being trained, as tiles of one MatrixGrid in one plot.

Rows are layers (layer 0 on top), columns heads; each tile is that head's (S, S) attention
on the probe sequence at fixed levels 0..1 (so a head sharpening is a tile brightening, and
a replayed step compares with today's). The layer and head names are axis ticks, one
outline marks the selected head, and each tile's scores are a text in its upper-right
triangle, which a causal head never fills.

    x: head h's tile spans [h·(S+g), h·(S+g)+S)     y: layer l's [l·(S+g), l·(S+g)+S)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

from ..figures.matrix_grid import MatrixGrid
from ..figures.plots import LeanAxis, LeanPlotItem, same_sources, style_plot
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
        self.hover, self.on_click, self.describe = hover, on_click, describe
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
        self.tiles = MatrixGrid(self.vb, self._hover, self._click)
        self.outline = self.tiles.current
        self.data: np.ndarray | None = None
        self.shape = (0, 0, 0)  # L, H, S
        self.gap = 1
        self.selected = (0, 0)
        self._theme: Theme | None = None
        self._source: tuple | None = None  # what the tiles were drawn from (see set_data)

    def tile_origin(self, layer: int, head: int) -> tuple[int, int]:
        s, g = self.shape[2], self.gap
        return head * (s + g), layer * (s + g)

    def set_data(self, attentions: np.ndarray, labels: list[list[str]] | None = None, *, source: tuple) -> None:
        """attentions (L, H, S, S) in [0, 1]; labels[l][h]: the text in tile (l, h)'s corner.

        `source`: what they were taken from (a probe snapshot: `(probe,)`; compared by
        plots.same_sources, by identity): the same snapshot again keeps the painted tiles
        (a training update that brought no new snapshot, a head clicked); another one, of
        the same shape or not, is painted. No attention value is compared."""
        if self.data is not None and same_sources(self._source, source):
            return
        self._source = source
        a = np.asarray(attentions, dtype=np.float32)
        n_layers, n_heads, s = a.shape[0], a.shape[1], a.shape[2]
        if (n_layers, n_heads, s) != self.shape:
            self.shape = (n_layers, n_heads, s)
            self.gap = max(1, s // 6)
            step = s + self.gap
            self.tiles.place([(*self.tile_origin(layer, head), s, s) for layer in range(n_layers)
                              for head in range(n_heads)], [(s, s)] * (n_layers * n_heads))
            pad = self.gap / 2  # room for the selected head's outline
            self.vb.setRange(QRectF(-pad, -pad, n_heads * step - self.gap + 2 * pad,
                                    n_layers * step - self.gap + 2 * pad), padding=0)
            self.plot.getAxis("top").setTicks([[(h * step + s / 2, f"H{h}") for h in range(n_heads)]])
            self.plot.getAxis("left").setTicks([[(layer * step + s / 2, f"L{layer}") for layer in range(n_layers)]])
            self._place_outline()
        self.data = a
        self.tiles.compose(a.reshape(-1, s, s), self.lut, (0.0, 1.0))
        # light on the dark, empty (future) corner of a causal tile, whatever the theme
        self.tiles.set_corner_texts([] if labels is None else [t for row in labels for t in row],
                                    self._theme.font(7.5) if self._theme else None, TEXT_COLOUR, (0, 0, 0, 90),
                                    right=True)

    def set_selection(self, layer: int, head: int) -> None:
        self.selected = (layer, head)
        self._place_outline()

    def clear(self) -> None:
        """No tiles, no outline, no names: a model being prepared has no heads to show yet (the
        last run's tiles and its selected head, in slots the new model may not have, would lie)."""
        self.shape, self.data, self._source = (0, 0, 0), None, None
        self.tiles.place([], [])
        self.tiles.compose(np.zeros((0, 1, 1), np.float32), self.lut, (0.0, 1.0))
        self.tiles.select(None)
        self.tiles.set_corner_texts([], None, TEXT_COLOUR, (0, 0, 0, 90), right=True)
        for name in ("top", "left"):
            self.plot.getAxis(name).setTicks([[]])

    def _place_outline(self) -> None:
        (layer, head), (n_layers, n_heads, _s) = self.selected, self.shape
        inside = 0 <= layer < n_layers and 0 <= head < n_heads
        self.tiles.select(layer * n_heads + head if inside else None, pad=self.gap / 3)

    def tile_rgba(self, layer: int, head: int) -> np.ndarray:
        """The (S, S, 4) pixels of one tile as drawn."""
        return self.tiles.tile_rgba(layer * self.shape[1] + head)

    # ---- mouse -------------------------------------------------------------------------------
    def _hover(self, cell) -> None:
        if cell is None:
            self.hover.describe("")
        elif self.describe is not None:
            tile, row, col = cell
            self.hover.describe(self.describe(*divmod(tile, self.shape[1]), row, col))

    def _click(self, cell) -> None:
        if self.on_click is not None:
            self.on_click(*divmod(cell[0], self.shape[1]))

    # ---- look ----------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        style_plot(self.plot, theme)
        self.outline.setPen(theme.pen(theme.accent, 2.5))
        for item in self.tiles.texts:
            item.setFont(theme.font(7.5))
