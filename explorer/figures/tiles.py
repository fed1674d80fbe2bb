"""Matrices side by side in one plot: the qkv panel's strips (X | Q | weights·V, K | V, W_Q | W_K | W_V).

The matrices of a strip share their rows (query tokens, key tokens or model
dims), so they share one plot and one token axis; each is a `Tile`: an
ImageItem placed in its own band, its title drawn above it, a row or cell
marker and the hover crosshair. A PlotItem per matrix cost most of the qkv
panel's frame (range, layout, axis and title work for each of eight).

View units: row r is centred on y = r (spans r ± 0.5, as in heatmap.py, so the
token axis labels it). Across, tile i spans [x_i, x_i + width_i] whatever its
number of columns, tiles GAP apart. Above row 0 the view keeps a band for the
titles, sized from the view's pixels:

        W_Q[:, h0] · 64×16     W_K[:, kv 0]       ← titles (TileLabel)
    ┌──────────────┐  ┌──────────────┐
    │ x_0 … x_0+w_0│  │ x_1 …        │           rows −0.5 … rows − 0.5
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem

from ..selection import HoverLink
from .heatmap import CellImage, TokenAxis, colorize, crosshair_pen, usable_levels
from .plots import LeanPlotItem, TileLabel, lean_axes, parse_runs, style_plot, upright
from .themes import Theme, plot_font

GAP = 0.12  # between tiles, in units of one tile width


class Tile:
    """One (rows, cols) matrix of a TileStrip; on_click(row, col), describe(row, col) as in Heatmap."""

    def __init__(self, strip: TileStrip, name: str, width: float,
                 on_click: Callable[[int, int], None] | None, describe: Callable[[int, int], str] | None) -> None:
        self.strip, self.name, self.width = strip, name, width
        self.on_click, self.describe = on_click, describe
        self.x0 = 0.0
        self.data: np.ndarray | None = None
        self.shape: tuple[int, int] = (0, 0)
        self.levels: tuple[float, float] = (0.0, 1.0)
        self._marker_spec: tuple[str, int, int] | None = None
        self.title = ""
        self.visible = True
        self.image = CellImage(lambda pos: self.cell_at(self.image.mapToParent(pos)), self._hover,
                               lambda cell: self._click(*cell))
        self.marker = QGraphicsRectItem()
        self.marker.setZValue(20)
        self.marker.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.marker.hide()
        self.label = TileLabel(None)
        self.label.on_band_changed = strip.relayout
        self.label.setZValue(30)
        self.label.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        for item in (self.image, self.marker, self.label):
            strip.vb.addItem(item, ignoreBounds=True)

    @property
    def vb(self) -> pg.ViewBox:
        return self.strip.vb

    # ---- data ----------------------------------------------------------------------
    def set_data(self, data: np.ndarray, levels: tuple[float, float]) -> None:
        """Show a (rows, cols) float array with fixed colour levels (skipped when unchanged)."""
        levels = usable_levels(levels)
        shape = (int(data.shape[0]), int(data.shape[1]))
        if (self.data is not None and shape == self.shape and levels == self.levels
                and np.array_equal(data, self.data, equal_nan=True)):
            return
        self.levels = levels
        self.data = data
        rgba, _ = colorize(data, self.strip.lut, self.levels)
        self.image.setImage(rgba, autoLevels=False)  # same shape: keeps the rect it was placed in
        if shape != self.shape:
            self.shape = shape
            self.strip.needs_layout = True  # laid out once, in settle(), after all its tiles

    def set_visible(self, visible: bool) -> None:
        """Show or leave out the tile; a hidden tile takes no room in its strip."""
        if visible != self.visible:
            self.visible = visible
            for item in (self.image, self.label):
                item.setVisible(visible)
            if not visible:
                self.marker.hide()
            self.strip.needs_layout = True

    def set_title(self, text: str) -> None:
        """The title above the tile (the titles' HTML subset, see plotting.parse_runs)."""
        if text != self.title:
            self.title = text
            self._draw_title()

    def _draw_title(self) -> None:
        theme = self.strip.theme
        colour = QColor(theme.foreground if theme else "#888888")
        self.label.set_runs(parse_runs(self.title), theme.font(8.5) if theme else plot_font(8.5), colour)

    def set_marker(self, kind: str | None, row: int = 0, col: int = 0) -> None:
        """Outline the selected 'row' or 'cell'; None hides it."""
        self._marker_spec = None if kind is None else (kind, row, col)
        self._place_marker()

    # ---- geometry --------------------------------------------------------------------
    @property
    def col_width(self) -> float:
        return self.width / max(self.shape[1], 1)

    def cell_center(self, row: int, col: int) -> QPointF:
        """The centre of cell (row, col) in view units."""
        return QPointF(self.x0 + (col + 0.5) * self.col_width, row)

    def cell_at(self, pos: QPointF) -> tuple[int, int] | None:
        row = math.floor(pos.y() + 0.5)
        col = math.floor((pos.x() - self.x0) / self.col_width)
        rows, cols = self.shape
        return (row, col) if 0 <= row < rows and 0 <= col < cols else None

    def _place(self) -> None:
        rows = self.shape[0]
        self.image.setRect(QRectF(self.x0, -0.5, self.width, rows))
        self.label.setPos(self.x0, -0.5)
        self._place_marker()

    def _place_marker(self) -> None:
        spec, rows = self._marker_spec, self.shape[0]
        if spec is None or rows == 0:
            self.marker.hide()
            return
        if not self.visible:
            self.marker.hide()
            return
        kind, r, c = spec
        if kind == "row":
            rect = QRectF(self.x0, r - 0.5, self.width, 1)
        else:
            rect = QRectF(self.x0 + c * self.col_width, r - 0.5, self.col_width, 1)
        self.marker.setRect(rect)
        self.marker.show()

    # ---- hover and click ---------------------------------------------------------------
    def _hover(self, cell: tuple[int, int] | None) -> None:
        if cell is None:
            self.strip.hover.clear(self.shape)
            return
        self.strip.hover.publish(self.shape, *cell)
        if self.describe is not None:
            self.strip.hover.describe(self.describe(*cell))

    def _click(self, row: int, col: int) -> None:
        if self.on_click is not None:
            self.on_click(row, col)


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
        self.crosshair = QGraphicsPathItem()
        self.crosshair.setZValue(15)
        self.crosshair.hide()
        self.vb.addItem(self.crosshair, ignoreBounds=True)
        self.theme: Theme | None = None
        self.needs_layout = False
        self._extent: tuple[float, float, float] | None = None
        self._hovered: tuple[tuple[int, int], int, int] | None = None
        hover.hovered.connect(self._on_link_hover)
        self.vb.sigResized.connect(lambda _vb: self.relayout())
        self.vb.sigTransformChanged.connect(lambda _vb: self._fit_labels())

    def add(self, name: str, width: float = 1.0, on_click=None, describe=None) -> Tile:
        tile = Tile(self, name, width, on_click, describe)
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
        x = 0.0
        shown = [t for t in self.tiles if t.visible]
        for tile in shown:
            tile.x0 = x
            tile._place()
            x += tile.width * (1 + GAP)
        width = x - GAP * (shown[-1].width if shown else 0)
        rows = max((t.shape[0] for t in shown), default=0)
        height = self.vb.size().height()
        band = max((t.label.band() for t in shown), default=0.0)  # pixels
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
        labels = [t.label for t in self.tiles]
        upright(self.vb, labels)
        (x0, x1), _ = self.vb.viewRange()
        px = self.vb.width() / max(x1 - x0, 1e-9)  # pixels per view unit across
        for tile in self.tiles:
            tile.label.set_max_width(tile.width * px)

    # ---- hover ---------------------------------------------------------------------------
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
        path = QPainterPath()
        if self._hovered is not None:
            shape, row, col = self._hovered
            for tile in self.tiles:
                if tile.visible and tile.shape == shape:  # every matrix of the hovered one's shape shows the cell
                    c = tile.cell_center(row, col)
                    path.moveTo(c.x(), -0.5)
                    path.lineTo(c.x(), shape[0] - 0.5)
                    path.moveTo(tile.x0, row)
                    path.lineTo(tile.x0 + tile.width, row)
        self.crosshair.setPath(path)
        self.crosshair.setVisible(not path.isEmpty())

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
        for tile in self.tiles:
            tile.marker.setPen(theme.pen(theme.accent, 2.5))
            tile._draw_title()
