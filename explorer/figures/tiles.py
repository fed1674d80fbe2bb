"""Matrices side by side in one plot: the qkv panel's strips (X | Q | weights·V, K | V, W_Q | W_K | W_V).

The matrices of a strip share their rows (query tokens, key tokens or model dims), so they
share one plot and one token axis; each is a `Tile` of the strip's MatrixGrid: an image of
its own (its columns are as wide as its band allows, unlike its neighbours'), its title
above it; the markers and the crosshair of all tiles are one item each. (A PlotItem per
matrix cost most of the qkv panel's frame.)

View units: row r is centred on y = r (spans r ± 0.5, as in heatmap.py, so the
token axis labels it). Across, tile i spans [x_i, x_i + width_i] whatever its
number of columns, tiles GAP apart. Above row 0 the view keeps a band for the
titles, sized from the view's pixels:

        W_Q[:, h0] · 64×16     W_K[:, kv 0]       ← titles (TileLabel)
    ┌──────────────┐  ┌──────────────┐
    │ x_0 … x_0+w_0│  │ x_1 …        │           rows −0.5 … rows − 0.5
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor

from ..selection import HoverLink
from .heatmap import TokenAxis, crosshair_pen, usable_levels
from .matrix_grid import MatrixGrid
from .plots import LeanPlotItem, lean_axes, same_sources, style_plot
from .text import parse_runs, upright
from .themes import Theme, plot_font

GAP = 0.12  # between tiles, in units of one tile width
#: The most rows a tile's image holds: a longer matrix (a 65,536-token frame's X, Q, K, V) is
#: drawn from every ⌈rows / MAX_IMAGE_ROWS⌉-th row, each standing for the rows down to the next,
#: the level of detail of an 8192-token frame (whose every row is drawn), far more than a
#: screen's pixel rows; hover, click and the described values stay those of every row.
MAX_IMAGE_ROWS = 8192


class Tile:
    """One (rows, cols) matrix of a TileStrip; on_click(row, col), describe(row, col) as in Heatmap."""

    def __init__(self, strip: TileStrip, index: int, name: str, width: float,
                 on_click: Callable[[int, int], None] | None, describe: Callable[[int, int], str] | None) -> None:
        self.strip, self.index, self.name, self.width = strip, index, name, width
        self.on_click, self.describe = on_click, describe
        self.data: np.ndarray | None = None
        self._drawn: tuple = (None,)  # (source, shape, levels) drawn last (see set_data)
        self.shape: tuple[int, int] = (0, 0)
        self.levels: tuple[float, float] = (0.0, 1.0)
        self._marker_spec: tuple[str, int, int] | None = None
        self.title, self.visible = "", True
        self._runs: list = parse_runs("")  # the title parsed (relayout draws it again)

    @property
    def vb(self) -> pg.ViewBox:
        return self.strip.vb

    def set_data(self, data: np.ndarray, levels: tuple[float, float], *, source: tuple) -> None:
        """Show a (rows, cols) float array with fixed colour levels.

        `source`: what `data` was taken from (e.g. `(frame, head)`; compared by
        plots.same_sources: identities): the tile is kept when the source, the shape and the
        levels are those drawn last, without a look at the data; a new source always
        repaints. No number of `data` is ever compared."""
        levels = usable_levels(levels)
        shape = (int(data.shape[0]), int(data.shape[1]))
        key = (source, shape, levels)
        if self.data is not None and same_sources(self._drawn, key):
            return  # drawn from the same data
        self._drawn = key
        self.levels, self.data = levels, data
        step = -(-shape[0] // MAX_IMAGE_ROWS)
        self.strip.grid.paint_tile(self.index, data[::step] if step > 1 else data, self.strip.lut, levels)
        if shape != self.shape:
            self.shape = shape
            self.strip.needs_layout = True  # laid out once, in settle(), after all its tiles

    def set_visible(self, visible: bool) -> None:
        """Show or leave out the tile; a hidden tile takes no room in its strip."""
        if visible != self.visible:
            self.visible = visible
            self.strip.needs_layout = True

    def set_title(self, text: str) -> None:
        """The title above the tile (the titles' HTML subset, see plotting.parse_runs)."""
        if text != self.title:
            self.title, self._runs = text, parse_runs(text)
            self._draw_title()

    def _draw_title(self) -> None:
        theme = self.strip.theme
        colour = QColor(theme.foreground if theme else "#888888")
        self.strip.grid.set_title(self.index, self._runs if self.visible else None,
                                  theme.font(8.5) if theme else plot_font(8.5), colour)

    def set_marker(self, kind: str | None, row: int = 0, col: int = 0) -> None:
        """Outline the selected 'row' or 'cell'; None hides it."""
        spec = None if kind is None else (kind, row, col)
        if spec != self._marker_spec:  # (every frame sets them again)
            self._marker_spec = spec
            self.strip.draw_markers()

    def cell_center(self, row: int, col: int) -> QPointF:
        """The centre of cell (row, col) in view units."""
        return self.strip.grid.cell_center(self.index, row, col)

    def _hover(self, cell: tuple[int, int] | None) -> None:
        if cell is None:
            self.strip.hover.clear(self.shape)
            return
        self.strip.hover.publish(self.shape, *cell)
        if self.describe is not None:
            self.strip.hover.describe(self.describe(*cell))


class TileStrip:
    """Tiles side by side in one PlotItem (`self.item`), with a token axis on the left if `axis`."""

    def __init__(self, hover: HoverLink, cmap: str, axis: bool = True) -> None:
        self.hover = hover
        self.left_axis = TokenAxis("left") if axis else None
        self.item = LeanPlotItem(axisItems=lean_axes(left=self.left_axis) if axis else lean_axes())
        self.item.hideButtons()
        self.item.setMenuEnabled(False)
        self.item.hideAxis("bottom")
        if not axis:
            self.item.hideAxis("left")
        self.vb = self.item.getViewBox()
        self.vb.invertY(True)
        self.vb.setDefaultPadding(0.0)
        self.lut = pg.colormap.get(cmap).getLookupTable(nPts=256, alpha=True)  # (256, 4) uint8
        self.tiles: list[Tile] = []
        self.grid = MatrixGrid(self.vb, self._hover, self._click)
        self.grid.on_band_changed = self.relayout
        for item in (self.grid.image, self.grid.hatch, self.grid.outlines):  # (each tile has its own image)
            item.hide()
        self.crosshair = self.grid.crosshair
        self.theme: Theme | None = None
        self.needs_layout = False
        self._extent: tuple[float, float, float] | None = None
        self._hovered: tuple[tuple[int, int], int, int] | None = None
        self._last = 0  # the tile hovered last
        hover.hovered.connect(self._on_link_hover)
        self.vb.sigResized.connect(lambda _vb: self.relayout())
        self.vb.sigTransformChanged.connect(lambda _vb: self._fit_labels())

    def add(self, name: str, width: float = 1.0, on_click=None, describe=None) -> Tile:
        tile = Tile(self, len(self.tiles), name, width, on_click, describe)
        self.tiles.append(tile)
        return tile

    def set_labels(self, rows: Sequence[str] | None) -> None:
        if self.left_axis is not None:
            self.left_axis.set_labels(rows)

    def settle(self) -> None:
        """Lay the strip out if a tile's shape changed since the last time."""
        if self.needs_layout:
            self.relayout()

    def relayout(self) -> None:
        """Place the tiles side by side; reset the view when the strip's extent changed."""
        self.needs_layout = False
        x, rects = 0.0, []
        for tile in self.tiles:
            rects.append((x, -0.5, tile.width if tile.visible else 0.0, tile.shape[0]))
            x += tile.width * (1 + GAP) if tile.visible else 0.0
        shown = [t for t in self.tiles if t.visible]
        self.grid.place(rects, [(max(t.shape[0], 1), max(t.shape[1], 1)) for t in self.tiles])
        for tile in self.tiles:
            tile._draw_title()
        self.draw_markers()
        width = x - GAP * (shown[-1].width if shown else 0)
        rows = max((t.shape[0] for t in shown), default=0)
        height = self.vb.size().height()
        band = self.grid.title_band(0.0)  # pixels
        top = band * rows / (height - band) if height > 2 * band else 0.6  # the same in row units
        extent = (width, float(rows), round(top, 3))
        if extent != self._extent and rows:
            self._extent = extent
            y0 = -0.5 - extent[2]
            self.vb.setLimits(xMin=0.0, xMax=width, yMin=y0, yMax=rows - 0.5)
            self.vb.setRange(QRectF(0.0, y0, width, rows - 0.5 - y0), padding=0)
        self._draw_crosshair()

    def _fit_labels(self) -> None:
        """Titles upright at their pixel size, each clipped to its tile's width on screen."""
        upright(self.vb, self.grid.titles)
        (x0, x1), _ = self.vb.viewRange()
        px = self.vb.width() / max(x1 - x0, 1e-9)  # pixels per view unit across
        for tile, label in zip(self.tiles, self.grid.titles, strict=False):
            label.set_max_width(tile.width * px)

    def draw_markers(self) -> None:
        rects = []
        for tile in self.tiles:
            if tile._marker_spec is not None and tile.visible and tile.shape[0] and tile.index < self.grid.n_tiles:
                kind, r, c = tile._marker_spec
                rects.append(self.grid.cell_rect(tile.index, r, c) if kind == "cell"
                             else self.grid.tile_rect(tile.index).adjusted(0, r, 0, r + 1 - tile.shape[0]))
        self.grid.draw_markers(rects)

    # ---- hover ---------------------------------------------------------------------------
    def _hover(self, cell: tuple[int, int, int] | None) -> None:
        if cell is not None:
            self._last = cell[0]
        self.tiles[self._last]._hover(None if cell is None else cell[1:])

    def _click(self, cell: tuple[int, int, int]) -> None:
        tile = self.tiles[cell[0]]
        if tile.on_click is not None:
            tile.on_click(*cell[1:])

    def _on_link_hover(self, shape: tuple[int, int], row: int, col: int) -> None:
        shape = tuple(shape)
        if row < 0:
            hovered = None if self._hovered is not None and self._hovered[0] == shape else self._hovered
        else:
            hovered = (shape, row, col)
        if hovered != self._hovered:
            self._hovered = hovered
            self._draw_crosshair()

    def _draw_crosshair(self) -> None:
        # every matrix of the hovered one's shape shows the cell
        shape, row, col = self._hovered or (None, None, None)
        self.grid.draw_crosshair(row, col, [t.index for t in self.tiles if t.visible and t.shape == shape
                                            and t.index < self.grid.n_tiles])

    def crosshair_tiles(self) -> list[str]:
        """Names of the tiles the crosshair is drawn on."""
        if self._hovered is None or not self.crosshair.isVisible():
            return []
        return [t.name for t in self.tiles if t.shape == self._hovered[0]]

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        style_plot(self.item, theme)
        self.crosshair.setPen(crosshair_pen(theme))
        self.grid.markers.setPen(theme.pen(theme.accent, 2.5))
        for tile in self.tiles:
            tile._draw_title()
