"""The heads panel's thumbnails: every head's weights as tiles of one image in one view.

A ViewBox per head cost most of the heads panel's frame (each brings its own
range, layout and paint bookkeeping for a dozen items), so here the H maps are
tiles of one RGBA image (the pyqtgraph idiom of one ImageItem updated with
`setImage(..., autoLevels=False)`), and the per-head decorations are one item
each: tile outlines, the selected cell in every tile, the hover crosshair and
the hatching under masked cells.

Layout in view units (one unit = one cell; row 0 on top; image pixel = cell):

    ky ┊ h0 ●kv0      h1 ●kv0        tile of head h = r·nc + c is w × h_ cells at
       ┌────────┐ kx ┌────────┐      x = c·(w + kx),  y = r·(h_ + ky) + ky
       │        │    │        │      the ky rows above a tile row hold the labels,
       └────────┘    └────────┘      kx columns separate the tiles; both are sized
                                     from the view's pixels so a label fits

The tiles show the cell window [r0, r1) × [c0, c1) of every head: the range the
large map is zoomed to (all cells unless the user zoomed it).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem

from ..selection import HoverLink
from .heatmap import CellImage, colorize, crosshair_pen
from .plots import LeanViewBox, TileLabel, upright
from .themes import CATEGORY_COLORS, Theme, plot_font

GAP_PX = 6.0  # room between tiles


def _path_item(z: float) -> QGraphicsPathItem:
    item = QGraphicsPathItem()
    item.setZValue(z)
    item.setBrush(QBrush(Qt.BrushStyle.NoBrush))
    return item


class HeadThumbnails:
    """All heads' (S, Skv) weight maps, small, in one ViewBox (`self.vb`).

    on_click(head, row, col) for a left click on a cell; describe(head, row, col)
    gives the hover readout. Cells are in the heads' own coordinates (the window
    offset is added back).
    """

    def __init__(self, hover: HoverLink, cmap: str,
                 on_click: Callable[[int, int, int], None] | None = None,
                 describe: Callable[[int, int, int], str] | None = None) -> None:
        self.hover = hover
        self.on_click = on_click
        self.describe = describe
        self.vb = LeanViewBox(invertY=True, enableMenu=False, defaultPadding=0.0)
        self.vb.setMouseEnabled(False, False)  # zoom the large map: the tiles follow it
        self.vb.disableAutoRange()
        self._cmap = cmap
        self.lut = pg.colormap.get(cmap).getLookupTable(nPts=256, alpha=True)  # (256, 4) uint8
        self.image = CellImage(self.cell_at, self._hover, lambda cell: self._click(*cell))  # pixel = view unit
        self.hatch = _path_item(-10)
        self.hatch.setPen(QPen(Qt.PenStyle.NoPen))
        # over the colour: rows that see no key but got weights (a uniform fallback row)
        self.blind = _path_item(5)
        self.blind.setPen(QPen(Qt.PenStyle.NoPen))
        self.blind_rows = np.zeros(0, bool)  # (S,) True = the query sees no key
        self.outlines = _path_item(10)
        self.current = QGraphicsRectItem()
        self.current.setZValue(11)
        self.current.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.markers = _path_item(20)
        self.crosshair = _path_item(15)
        self.crosshair.hide()
        for item in (self.hatch, self.image, self.blind, self.outlines, self.current, self.markers, self.crosshair):
            self.vb.addItem(item, ignoreBounds=True)
        self.labels: list[TileLabel] = []
        self.data: np.ndarray | None = None  # (H, S, Skv), NaN = masked
        self.levels: tuple[float, float] = (0.0, 1.0)
        self.shape: tuple[int, int] = (0, 0)  # (S, Skv) of one head
        self.window: tuple[int, int, int, int] = (0, 0, 0, 0)  # r0, r1, c0, c1
        self.n_cols = 1
        self.gaps: tuple[int, int] = (1, 1)  # (ky, kx) in cells
        self.selected: tuple[int, int, int] = (0, 0, 0)  # head, row, col
        self.kv_of: list[int] = []
        self._hovered: tuple[int, int] | None = None
        self._theme: Theme | None = None
        self._label_key = None
        self._in_relayout = False
        self._band_moved = False
        self.labels_fit = True
        hover.hovered.connect(self._on_link_hover)
        self.vb.sigResized.connect(lambda _vb: self._relayout())
        self.vb.sigTransformChanged.connect(lambda _vb: self._orient_labels())

    @property
    def n_heads(self) -> int:
        return 0 if self.data is None else self.data.shape[0]

    # ---- data -------------------------------------------------------------------
    def set_cmap(self, cmap: str) -> None:
        """Another colour map (a B − A view: the diverging one); drawn with the next set_data."""
        if cmap != self._cmap:
            self._cmap = cmap
            self.lut = pg.colormap.get(cmap).getLookupTable(nPts=256, alpha=True)

    def set_data(self, data: np.ndarray, levels: tuple[float, float], kv_of: list[int]) -> None:
        """data (H, S, Skv) weights (NaN = masked); levels of the colour map; kv_of[h]: h's KV head."""
        shape_changed = data.shape[1:] != self.shape or data.shape[0] != self.n_heads
        self.levels = (float(levels[0]), float(levels[1]))
        self.data = data
        self.kv_of = list(kv_of)
        if shape_changed:
            self.shape = (int(data.shape[1]), int(data.shape[2]))
            self.n_cols = max(1, math.ceil(math.sqrt(data.shape[0])))
            self.window = (0, self.shape[0], 0, self.shape[1])
            self._relayout(force=True)
        else:
            self._draw_image()
            self._draw_labels()

    def set_blind_rows(self, rows: np.ndarray) -> None:
        """(S,) bool: query rows that see no key; hatched over their colour in every tile."""
        rows = np.asarray(rows, bool)
        if not np.array_equal(rows, self.blind_rows):
            self.blind_rows = rows
            if self.data is not None:
                self._draw_tiles()

    def set_window(self, r0: int, r1: int, c0: int, c1: int) -> None:
        """Show cells [r0, r1) × [c0, c1) of every head (clamped to the maps)."""
        rows, cols = self.shape
        r0 = min(max(r0, 0), max(rows - 1, 0))
        c0 = min(max(c0, 0), max(cols - 1, 0))
        window = (r0, min(max(r1, r0 + 1), rows), c0, min(max(c1, c0 + 1), cols))
        if window != self.window:
            self.window = window
            self._relayout(force=True)

    def follow_range(self, view_range) -> None:
        """Show the cells a heatmap's view range [[x0, x1], [y0, y1]] covers."""
        (x0, x1), (y0, y1) = view_range
        self.set_window(math.floor(y0 + 0.5), math.ceil(y1 - 0.5) + 1,
                        math.floor(x0 + 0.5), math.ceil(x1 - 0.5) + 1)

    # ---- geometry -----------------------------------------------------------------
    def _tile_size(self) -> tuple[int, int]:
        r0, r1, c0, c1 = self.window
        return r1 - r0, c1 - c0

    def tile_origin(self, head: int) -> tuple[int, int]:
        """(x, y) of head's tile's top-left corner in view units."""
        h, w = self._tile_size()
        ky, kx = self.gaps
        r, c = divmod(head, self.n_cols)
        return c * (w + kx), r * (h + ky) + ky

    def cell_at(self, pos: QPointF) -> tuple[int, int, int] | None:
        """(head, row, col) under a point in view units, or None between tiles."""
        h, w = self._tile_size()
        ky, kx = self.gaps
        x, y = math.floor(pos.x()), math.floor(pos.y())
        c, dx = divmod(x, w + kx)
        r, dy = divmod(y, h + ky)
        dy -= ky
        head = r * self.n_cols + c
        if not (0 <= c < self.n_cols and 0 <= dx < w and 0 <= dy < h and 0 <= head < self.n_heads):
            return None
        return head, self.window[0] + dy, self.window[2] + dx

    def cell_center(self, head: int, row: int, col: int) -> QPointF:
        """The centre of a cell (heads' coordinates) in view units."""
        x, y = self.tile_origin(head)
        return QPointF(x + col - self.window[2] + 0.5, y + row - self.window[0] + 0.5)

    def _relayout(self, force: bool = False) -> None:
        """Size the gaps from the view's pixels, then redraw everything."""
        if self.data is None or self._in_relayout:
            return
        self._in_relayout = True
        try:
            self._relayout_now(force)
        finally:
            self._in_relayout = False
        if self._band_moved:  # a label grew or shrank while drawing: size the gaps again
            self._band_moved = False
            self._relayout(force=True)

    def _relayout_now(self, force: bool) -> None:
        h, w = self._tile_size()
        H = self.n_heads
        nc = self.n_cols
        nr = math.ceil(H / nc)
        size = self.vb.size()
        width, height = size.width(), size.height()
        band = max((label.band() for label in self.labels[:H]), default=14.0)  # pixels above a tile row
        # labels only where they leave the tiles at least half the height (else the selected
        # tile's outline and the hover readout say which head is which)
        self.labels_fit = height == 0 or height > band * nr * 2
        if self.labels_fit and height > 0:
            ky = math.ceil(band * nr * h / (height - band * nr))
        else:
            ky = max(1, h // 8)
        if width > GAP_PX * nc * 2:
            kx = math.ceil(GAP_PX * nc * w / (width - GAP_PX * (nc - 1)))
        else:
            kx = max(1, w // 8)
        gaps = (max(ky, 1), max(kx, 1))
        if gaps == self.gaps and not force:
            self._draw_labels()  # the short or the long label may fit now
            return
        self.gaps = gaps
        # a quarter gap beyond the last tiles: their outlines are not cut at the view's edge
        self.vb.setRange(QRectF(0, 0, nc * (w + kx) - kx + kx / 4, nr * (h + ky) + ky / 4), padding=0)
        self._draw_image()
        self._draw_tiles()
        self._draw_selection()
        self._draw_labels(force=True)
        self._draw_crosshair()

    # ---- drawing -----------------------------------------------------------------
    def _draw_image(self) -> None:
        r0, r1, c0, c1 = self.window
        h, w = self._tile_size()
        ky, kx = self.gaps
        H, nc = self.n_heads, self.n_cols
        nr = math.ceil(H / nc)
        rgba, _ = colorize(self.data[:, r0:r1, c0:c1], self.lut, self.levels)  # (H, h, w, 4)
        canvas = np.zeros((nr * (h + ky), nc * (w + kx) - kx, 4), np.uint8)  # transparent gaps
        for head in range(H):
            x, y = self.tile_origin(head)
            canvas[y:y + h, x:x + w] = rgba[head]
        self.image.setImage(canvas, autoLevels=False)

    def tile_rgba(self, head: int) -> np.ndarray:
        """The (h, w, 4) pixels of one head's tile as shown."""
        h, w = self._tile_size()
        x, y = self.tile_origin(head)
        return self.image.image[y:y + h, x:x + w]

    def _tile_rects(self) -> list[QRectF]:
        h, w = self._tile_size()
        return [QRectF(*self.tile_origin(head), w, h) for head in range(self.n_heads)]

    def _draw_tiles(self) -> None:
        outlines = QPainterPath()
        for rect in self._tile_rects():
            outlines.addRect(rect)
        self.outlines.setPath(outlines)
        masked = np.isnan(self.data[:, self.window[0]:self.window[1], self.window[2]:self.window[3]])
        hatch = QPainterPath()
        blind = QPainterPath()
        r0, r1 = self.window[0], self.window[1]
        rows = np.flatnonzero(self.blind_rows[r0:r1]) if self.blind_rows.size == self.shape[0] else []
        for head, rect in enumerate(self._tile_rects()):
            if masked[head].any():  # the pattern only under tiles with holes
                hatch.addRect(rect)
            for r in rows:
                if not masked[head, r].all():  # (a NaN row shows the hatch below already)
                    blind.addRect(QRectF(rect.x(), rect.y() + r, rect.width(), 1))
        self.hatch.setPath(hatch)
        self.blind.setPath(blind)

    def set_selection(self, head: int, row: int, col: int) -> None:
        if (head, row, col) != self.selected:
            self.selected = (head, row, col)
            self._draw_selection()
            self._draw_labels()

    def _draw_selection(self) -> None:
        head, row, col = self.selected
        r0, r1, c0, c1 = self.window
        h, w = self._tile_size()
        if 0 <= head < self.n_heads:
            self.current.setRect(QRectF(*self.tile_origin(head), w, h))
            self.current.show()
        else:
            self.current.hide()
        path = QPainterPath()
        if r0 <= row < r1 and c0 <= col < c1:
            for g in range(self.n_heads):
                x, y = self.tile_origin(g)
                path.addRect(QRectF(x + col - c0, y + row - r0, 1, 1))
        self.markers.setPath(path)

    def _label_runs(self, g: int, wide: bool) -> list[tuple[str, bool, str | None]]:
        theme = self._theme
        sel = g == self.selected[0]
        colour = (theme.accent if sel else theme.foreground) if theme else None
        runs = [(("▶ " if sel else "") + f"h{g}", sel, colour)]
        if wide and g < len(self.kv_of):
            kv = self.kv_of[g]
            runs.append((f" ●kv{kv}", sel, CATEGORY_COLORS[kv % len(CATEGORY_COLORS)]))
        return runs

    def _on_band_changed(self) -> None:
        if self._in_relayout:
            self._band_moved = True
        else:
            self._relayout(force=True)

    def _draw_labels(self, force: bool = False) -> None:
        _rows, w = self._tile_size()
        scale_x = self.vb.size().width() / max(self.n_cols * (w + self.gaps[1]) - self.gaps[1], 1)
        wide = w * scale_x >= 58 or self.vb.size().width() == 0  # room for "h12 ●kv3"
        key = (self.n_heads, self.selected[0], tuple(self.kv_of), wide, self.labels_fit,
               self._theme and self._theme.name)
        if key == self._label_key and not force:
            return
        self._label_key = key
        while len(self.labels) < self.n_heads:
            item = TileLabel(None)
            item.on_band_changed = self._on_band_changed
            item.setZValue(30)
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            self.vb.addItem(item, ignoreBounds=True)
            self.labels.append(item)
        font = self._theme.font(8.0) if self._theme else plot_font(8.0)
        colour = QColor(self._theme.foreground if self._theme else "#888888")
        for g, item in enumerate(self.labels):
            if g >= self.n_heads or not self.labels_fit:
                item.hide()
                continue
            item.set_runs([self._label_runs(g, wide)], font, colour)
            item.setPos(*self.tile_origin(g))
            item.show()
        self._orient_labels()

    def _orient_labels(self) -> None:
        upright(self.vb, self.labels)

    def _draw_crosshair(self) -> None:
        if self._hovered is None:
            self.crosshair.hide()
            return
        row, col = self._hovered
        r0, r1, c0, c1 = self.window
        h, w = self._tile_size()
        path = QPainterPath()
        for g in range(self.n_heads):
            x, y = self.tile_origin(g)
            if c0 <= col < c1:
                path.moveTo(x + col - c0 + 0.5, y)
                path.lineTo(x + col - c0 + 0.5, y + h)
            if r0 <= row < r1:
                path.moveTo(x, y + row - r0 + 0.5)
                path.lineTo(x + w, y + row - r0 + 0.5)
        self.crosshair.setPath(path)
        self.crosshair.show()

    # ---- hover and click ------------------------------------------------------------
    def _hover(self, cell: tuple[int, int, int] | None) -> None:
        if cell is None:
            self.hover.clear(self.shape)
            return
        head, row, col = cell
        self.hover.publish(self.shape, row, col)
        if self.describe is not None:
            self.hover.describe(self.describe(head, row, col))

    def _click(self, head: int, row: int, col: int) -> None:
        if self.on_click is not None:
            self.on_click(head, row, col)

    def _on_link_hover(self, shape: tuple[int, int], row: int, col: int) -> None:
        if shape != self.shape:
            return
        hovered = None if row < 0 else (row, col)
        if hovered != self._hovered:
            self._hovered = hovered
            self._draw_crosshair()

    def hovered(self) -> tuple[int, int] | None:
        """The (row, col) the crosshair marks in every tile, or None."""
        return self._hovered if self.crosshair.isVisible() else None

    # ---- look --------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.hatch.setBrush(QBrush(QColor(theme.hatch), Qt.BrushStyle.BDiagPattern))
        self.blind.setBrush(QBrush(QColor(theme.foreground), Qt.BrushStyle.BDiagPattern))
        self.outlines.setPen(theme.pen(theme.hatch, 1))
        self.current.setPen(theme.pen(theme.accent, 2))
        self.markers.setPen(theme.pen(theme.accent, 2.5))
        self.crosshair.setPen(crosshair_pen(theme))
        if self.data is not None:
            self._draw_labels(force=True)
