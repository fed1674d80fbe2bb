"""Many matrices in one view: the heads thumbnails, the Q/K/V strips, the model mosaic and
the training lab's head grid are each a MatrixGrid.

A ViewBox per matrix cost most of a frame, so the matrices are tiles of ONE RGBA image (one
image item updated in place: `compose`) and each kind of decoration is one item: a path for
all outlines, one for the markers, one for the crosshair, one for the hatching under tiles
with masked (NaN, transparent) cells, a rectangle for the selected tile; titles above the
tiles (TileLabel, pixel-sized) or texts in their corners. Tiles whose columns differ in
width (qkv: X's d_model columns beside Q's head_dim ones) get an image each (`paint_tile`):
one image would hold them only blown up to a common grid of d_model / 2 pixels per unit.

Tile i, a (rows, cols) matrix, lies on rects[i] = (x, y, w, h) in view units (y down: the
ViewBox is inverted), inside an optional frame `frame` units wide. The image has `px`
pixels per unit (w·px a multiple of cols: a cell is a block of pixels). Cell (r, c) covers
[x + c·w/cols, x + (c+1)·w/cols) × [y + r·h/rows, ...); `cell_at` maps a point back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem

from .heatmap import CellImage, colorize
from .text import TileLabel, upright

Cell = tuple[int, int, int]  # (tile, row, col)


def path_item(z: float, pen: bool = True) -> QGraphicsPathItem:
    """An empty path item at z-value `z` for outlines and markers (no brush; no pen either
    unless `pen`: a filled-only path is given a brush later)."""
    item = QGraphicsPathItem()
    item.setZValue(z)
    item.setBrush(QBrush(Qt.BrushStyle.NoBrush))
    if not pen:
        item.setPen(QPen(Qt.PenStyle.NoPen))
    return item


def rects_path(rects: Sequence[QRectF]) -> QPainterPath:
    path = QPainterPath()
    for rect in rects:
        path.addRect(rect)
    return path


class MatrixGrid:
    """Tiles of matrices in one ViewBox `vb`: one image, one item per kind of decoration.

    on_hover(cell or None) follows the mouse, on_click(cell) gets a left click on a cell;
    a cell is (tile, row, col) in the tile's matrix.
    """

    def __init__(self, vb: pg.ViewBox, on_hover: Callable[[Cell | None], None] | None = None,
                 on_click: Callable[[Cell], None] | None = None) -> None:
        self.vb = vb
        self.on_hover, self.on_click = on_hover, on_click
        self.image = CellImage(lambda pos: self.cell_at(QPointF(pos.x() / self.px, pos.y() / self.px)),
                               lambda cell: self.on_hover and self.on_hover(cell),
                               lambda cell: self.on_click and self.on_click(cell))
        self.image.diff_updates = True  # a frame that changes some tiles repaints those
        self.hatch = path_item(-10, pen=False)  # under the image: NaN cells are holes onto it
        self.outlines = path_item(10)
        self.current = QGraphicsRectItem()  # the selected tile
        self.current.setZValue(11)
        self.current.hide()
        self.crosshair = path_item(15)
        self.crosshair.hide()
        self.markers = path_item(20)
        for item in (self.hatch, self.image, self.outlines, self.current, self.crosshair, self.markers):
            vb.addItem(item, ignoreBounds=True)
        self.own: list[CellImage] = []  # paint_tile's images, one per tile
        self.titles: list[TileLabel] = []  # above the tiles
        self.texts: list[pg.TextItem] = []  # in a tile's corner
        self.on_band_changed: Callable[[], None] | None = None  # a title needs more (less) room
        self.rects = np.zeros((0, 4))  # (N, 4) x, y, w, h in view units
        self.shapes = np.zeros((0, 2), int)  # (N, 2) rows, cols
        self._marker_rects: list[QRectF] = []
        self.px, self.frame, self.size = 1, 0.0, (0, 0)  # size: the image's (width, height) in pixels
        vb.sigTransformChanged.connect(lambda _vb: upright(vb, self.titles))

    # ---- placement ----------------------------------------------------------------------------
    @property
    def n_tiles(self) -> int:
        return len(self.rects)

    def place(self, rects: Sequence[tuple[float, float, float, float]], shapes: Sequence[tuple[int, int]], *,
              px: int = 1, frame: float = 0.0, size: tuple[float, float] | None = None) -> None:
        """Tile i shows a shapes[i] matrix on rects[i]; the image is `size` (width, height)
        view units from (0, 0) (default: up to the last tile and its frame), `px` pixels each."""
        self.rects = np.asarray(rects, float).reshape(-1, 4)
        self.shapes = np.asarray(shapes, int).reshape(-1, 2)
        self.px, self.frame = int(px), float(frame)
        if size is None:
            far = self.rects[:, :2] + self.rects[:, 2:] + frame
            size = tuple(far.max(axis=0)) if len(far) else (0.0, 0.0)
        self.size = (round(size[0] * px), round(size[1] * px))
        self.image.setRect(QRectF(0, 0, self.size[0] / px, self.size[1] / px))
        for i, item in enumerate(self.own[:self.n_tiles]):
            item.setRect(self.tile_rect(i))
            item.setVisible(bool(self.rects[i, 2] > 0))  # a tile of no width is left out
        for i, item in enumerate(self.titles[:self.n_tiles]):
            item.setPos(self.rects[i, 0], self.rects[i, 1])

    def tile_rect(self, tile: int, pad: float = 0.0) -> QRectF:
        """Tile's rectangle in view units, grown by `pad` on every side."""
        x, y, w, h = self.rects[tile]
        return QRectF(x - pad, y - pad, w + 2 * pad, h + 2 * pad)

    def cell_rect(self, tile: int, row: int, col: int) -> QRectF:
        x, y, w, h = self.rects[tile]
        rows, cols = self.shapes[tile]
        return QRectF(x + col * w / cols, y + row * h / rows, w / cols, h / rows)

    def cell_center(self, tile: int, row: int, col: int) -> QPointF:
        return self.cell_rect(tile, row, col).center()

    def cell_at(self, pos: QPointF) -> Cell | None:
        """(tile, row, col) under a point in view units, or None off every tile and frame."""
        x, y = pos.x(), pos.y()
        r, f = self.rects, self.frame
        inside = (x >= r[:, 0] - f) & (x < r[:, 0] + r[:, 2] + f) & (y >= r[:, 1] - f) & (y < r[:, 1] + r[:, 3] + f)
        hit = np.flatnonzero(inside)
        if not hit.size:
            return None
        tile = int(hit[0])
        (x0, y0, w, h), (rows, cols) = r[tile], self.shapes[tile]
        row = min(max(int((y - y0) * rows // h), 0), rows - 1)
        col = min(max(int((x - x0) * cols // w), 0), cols - 1)
        return tile, row, col

    def _pixels(self, tile: int, grow: float = 0.0) -> tuple[int, int, int, int]:
        x, y, w, h = (self.rects[tile] + (-grow, -grow, 2 * grow, 2 * grow)) * self.px
        return round(y), round(y + h), round(x), round(x + w)

    # ---- the image ---------------------------------------------------------------------------------
    def compose(self, data: np.ndarray | Sequence[np.ndarray], lut: np.ndarray, levels: tuple[float, float],
                frames: np.ndarray | None = None) -> bool:
        """Colour each tile's matrix (data[i], NaN = transparent) through `lut` at `levels` into
        the one image, each inside its frame colour frames[i] (RGBA uint8) if given; returns
        whether any cell is NaN."""
        stacked = isinstance(data, np.ndarray)
        rgba, has_nan = colorize(data, lut, levels) if stacked else (None, False)
        canvas = np.zeros((self.size[1], self.size[0], 4), np.uint8)  # transparent between tiles
        for i in range(self.n_tiles):
            if frames is not None and self.frame > 0:
                y0, y1, x0, x1 = self._pixels(i, self.frame)
                canvas[y0:y1, x0:x1] = frames[i]
            tile, holes = (rgba[i], False) if stacked else colorize(data[i], lut, levels)
            has_nan |= holes
            y0, y1, x0, x1 = self._pixels(i)
            up_y, up_x = (y1 - y0) // tile.shape[0], (x1 - x0) // tile.shape[1]
            if up_y > 1 or up_x > 1:
                tile = tile.repeat(up_y, axis=0).repeat(up_x, axis=1)
            canvas[y0:y1, x0:x1] = tile
        self.image.setImage(canvas, autoLevels=False)
        return has_nan

    def paint_tile(self, tile: int, data: np.ndarray, lut: np.ndarray, levels: tuple[float, float]) -> None:
        """Tile `tile`'s (rows, cols) matrix as an image of its own over its rectangle."""
        new = len(self.own) <= tile  # else it keeps the rectangle place() gave it
        while len(self.own) <= tile:
            i = len(self.own)
            self.own.append(CellImage(lambda pos, i=i: self.cell_at(self.own[i].mapToParent(pos)),
                                      lambda cell: self.on_hover and self.on_hover(cell),
                                      lambda cell: self.on_click and self.on_click(cell)))
            self.vb.addItem(self.own[i], ignoreBounds=True)
        self.own[tile].setImage(colorize(data, lut, levels)[0], autoLevels=False)
        if new and tile < self.n_tiles:
            self.own[tile].setRect(self.tile_rect(tile))

    def tile_rgba(self, tile: int) -> np.ndarray:
        """The pixels of one tile's matrix as drawn."""
        y0, y1, x0, x1 = self._pixels(tile)
        return self.image.image[y0:y1, x0:x1]

    # ---- decorations ------------------------------------------------------------------------------
    def draw_outlines(self) -> None:
        """Outline every tile."""
        self.outlines.setPath(rects_path([self.tile_rect(i) for i in range(self.n_tiles)]))

    def draw_hatch(self, tiles: Sequence[int]) -> None:
        """Hatch under these tiles: their NaN cells show as hatched holes."""
        self.hatch.setPath(rects_path([self.tile_rect(i) for i in tiles]))

    def select(self, tile: int | None, pad: float = 0.0) -> None:
        """One rectangle around the selected tile (grown by `pad` view units); None hides it."""
        self.current.setVisible(tile is not None and 0 <= tile < self.n_tiles)
        if self.current.isVisible():
            self.current.setRect(self.tile_rect(tile, pad))

    def draw_markers(self, rects: Sequence[QRectF]) -> None:
        """The markers item: these rectangles (a cell in every tile, a hovered tile...)."""
        if list(rects) != self._marker_rects:  # a frame re-sets the same markers
            self._marker_rects = list(rects)
            self.markers.setPath(rects_path(rects))

    def draw_crosshair(self, row: int | None, col: int | None = None, tiles: Sequence[int] | None = None) -> None:
        """A vertical line through column `col` and a horizontal one through `row` of every
        tile (of `tiles`) that has them; None hides the crosshair."""
        path = QPainterPath()
        for i in [] if row is None else range(self.n_tiles) if tiles is None else tiles:
            x, y, w, h = self.rects[i]
            rows, cols = self.shapes[i]
            if 0 <= col < cols:
                path.moveTo(x + (col + 0.5) * w / cols, y)
                path.lineTo(x + (col + 0.5) * w / cols, y + h)
            if 0 <= row < rows:
                path.moveTo(x, y + (row + 0.5) * h / rows)
                path.lineTo(x + w, y + (row + 0.5) * h / rows)
        self.crosshair.setPath(path)
        self.crosshair.setVisible(not path.isEmpty())

    # ---- labels --------------------------------------------------------------------------------------
    def set_titles(self, runs: Sequence[list | None], font: QFont, colour: QColor) -> None:
        """runs[i]: the title lines (plots.Runs) above tile i at the font's pixel size, or None."""
        for i in range(max(len(runs), len(self.titles))):
            self.set_title(i, runs[i] if i < len(runs) else None, font, colour)
        upright(self.vb, self.titles)

    def set_title(self, tile: int, runs: list | None, font: QFont, colour: QColor) -> None:
        while len(self.titles) <= tile:
            item = TileLabel(None)
            item.on_band_changed = lambda: self.on_band_changed and self.on_band_changed()
            item.setZValue(30)
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            self.vb.addItem(item, ignoreBounds=True)
            self.titles.append(item)
            upright(self.vb, [item])
        item = self.titles[tile]
        if runs is not None:
            item.set_runs(runs, font, colour)
        if tile < self.n_tiles:
            item.setPos(self.rects[tile, 0], self.rects[tile, 1])
        item.setVisible(bool(runs is not None and tile < self.n_tiles and self.rects[tile, 2] > 0))

    def title_band(self, default: float = 14.0) -> float:
        """Pixels the tallest title needs above its tile."""
        return max((t.band() for t in self.titles[:self.n_tiles]), default=default)

    def set_corner_texts(self, texts: Sequence[str], font: QFont | None, colour: str, fill, *,
                         right: bool = False) -> None:
        """texts[i] in tile i's (or its frame's) top-left (top-right if `right`) corner over a `fill`
        backing; "" hides."""
        while len(self.texts) < len(texts):
            item = pg.TextItem(anchor=(1, 0) if right else (0, 0))
            item.setZValue(25)
            self.vb.addItem(item, ignoreBounds=True)
            self.texts.append(item)
        for i, item in enumerate(self.texts):
            if i >= len(texts) or not texts[i] or i >= self.n_tiles:
                item.hide()
                continue
            item.fill = pg.mkBrush(fill)
            if item.toPlainText() != texts[i] or item.color != pg.mkColor(colour):
                item.setText(texts[i], color=colour)
            if font is not None and item.textItem.font() != font:
                item.setFont(font)
            x, y, w, _h = self.rects[i] + (-self.frame, -self.frame, 2 * self.frame, 0)  # on the frame
            item.setPos(x + w if right else x, y)
            item.show()
