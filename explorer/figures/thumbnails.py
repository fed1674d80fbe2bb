"""The heads panel's thumbnails: every head's weights as tiles of one MatrixGrid, in a near-square
grid, labelled "h3 ●kv1", the selected cell and the linked hover crosshair in every tile,
masked cells and rows that see no key hatched.

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
from PySide6.QtGui import QBrush, QColor

from ..selection import HoverLink
from .heatmap import crosshair_pen
from .matrix_grid import MatrixGrid, path_item, rects_path
from .plots import LeanViewBox
from .themes import CATEGORY_COLORS, Theme, plot_font

GAP_PX = 6.0  # room between tiles


class HeadThumbnails:
    """All heads' (S, Skv) weight maps, small, in one ViewBox (`self.vb`).

    on_click(head, row, col) for a left click on a cell; describe(head, row, col)
    gives the hover readout. Cells are in the heads' own coordinates (the window
    offset is added back).
    """

    def __init__(self, hover: HoverLink, cmap: str,
                 on_click: Callable[[int, int, int], None] | None = None,
                 describe: Callable[[int, int, int], str] | None = None) -> None:
        self.hover, self.on_click, self.describe = hover, on_click, describe
        self.vb = LeanViewBox(invertY=True, enableMenu=False, defaultPadding=0.0)
        self.vb.setMouseEnabled(False, False)  # zoom the large map: the tiles follow it
        self.vb.disableAutoRange()
        self._cmap = ""
        self.set_cmap(cmap)
        self.grid = MatrixGrid(self.vb, self._hover, lambda cell: self.on_click and self.on_click(*self._heads(cell)))
        self.grid.on_band_changed = self._on_band_changed
        self.tile_rgba = self.grid.tile_rgba  # tile_rgba(head): the (h, w, 4) pixels of its tile as shown
        self.image, self.hatch, self.current = self.grid.image, self.grid.hatch, self.grid.current
        self.markers, self.crosshair, self.labels = self.grid.markers, self.grid.crosshair, self.grid.titles
        # over the colour: rows that see no key but got weights (a uniform fallback row)
        self.blind = path_item(5, pen=False)
        self.blind_rows = np.zeros(0, bool)  # (S,) True = the query sees no key
        self.data: np.ndarray | None = None  # (H, S, Skv), NaN = masked
        self.levels: tuple[float, float] = (0.0, 1.0)
        self.shape: tuple[int, int] = (0, 0)  # (S, Skv) of one head
        self.window: tuple[int, int, int, int] = (0, 0, 0, 0)  # r0, r1, c0, c1
        self.n_cols = 1
        self.gaps: tuple[int, int] = (1, 1)  # (ky, kx) in cells
        self.selected: tuple[int, int, int] = (0, 0, 0)  # head, row, col
        self.kv_of: list[int] = []
        self._hovered: tuple[int, int] | None = None
        self._holes: list[int] | None = None  # the heads with masked cells in the window, as hatched
        self._theme: Theme | None = None
        self._label_key = None
        self._in_relayout = self._band_moved = False  # _relayout running; a label's band changed meanwhile
        self.labels_fit = True
        hover.hovered.connect(self._on_link_hover)
        self.vb.sigResized.connect(lambda _vb: self._relayout())
        self.vb.addItem(self.blind, ignoreBounds=True)

    @property
    def n_heads(self) -> int:
        return 0 if self.data is None else self.data.shape[0]

    # ---- data -------------------------------------------------------------------
    def set_cmap(self, cmap: str) -> None:
        """Another colour map (a B − A view: the diverging one); drawn with the next set_data."""
        if cmap != self._cmap:
            self._cmap = cmap
            self.lut = pg.colormap.get(cmap).getLookupTable(nPts=256, alpha=True)  # (256, 4) uint8

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
                self._draw_blind()

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

    def _heads(self, cell: tuple[int, int, int]) -> tuple[int, int, int]:
        """A grid cell (tile, row, col) as (head, row, col) in the heads' coordinates."""
        return cell[0], self.window[0] + cell[1], self.window[2] + cell[2]

    def cell_center(self, head: int, row: int, col: int) -> QPointF:
        """The centre of a cell (heads' coordinates) in view units."""
        return self.grid.cell_center(head, row - self.window[0], col - self.window[2])

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
        H, nc = self.n_heads, self.n_cols
        nr = math.ceil(H / nc)
        width, height = self.vb.size().width(), self.vb.size().height()
        band = self.grid.title_band()  # pixels above a tile row
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
        ky, kx = gaps
        self.grid.place([(*self.tile_origin(g), w, h) for g in range(H)], [(h, w)] * H,
                        size=(nc * (w + kx) - kx, nr * (h + ky)))
        # a quarter gap beyond the last tiles: their outlines are not cut at the view's edge
        self.vb.setRange(QRectF(0, 0, nc * (w + kx) - kx + kx / 4, nr * (h + ky) + ky / 4), padding=0)
        self._holes = None  # the tiles moved: hatch them afresh
        self._draw_image()
        self.grid.draw_outlines()
        self._draw_blind()
        self._draw_selection()
        self._draw_labels(force=True)
        self._draw_crosshair()

    # ---- drawing -----------------------------------------------------------------
    def _draw_image(self) -> None:
        shown = self.data[:, self.window[0]:self.window[1], self.window[2]:self.window[3]]
        # a NaN cell makes its tile's max NaN: one reduction, no (H, S, Skv) mask
        holes = list(np.flatnonzero(np.isnan(shown.reshape(len(shown), -1).max(axis=1)))) if self.grid.compose(
            shown, self.lut, self.levels) else []
        if holes != self._holes:  # the pattern only under tiles with holes
            self._holes = holes
            self.grid.draw_hatch(holes)

    def _draw_blind(self) -> None:
        r0, r1 = self.window[0], self.window[1]
        rows = np.flatnonzero(self.blind_rows[r0:r1]) if self.blind_rows.size == self.shape[0] else []
        masked = np.isnan(self.data[:, r0:r1, self.window[2]:self.window[3]]).all(axis=2) if len(rows) else None
        self.blind.setPath(rects_path([
            QRectF(rect.x(), rect.y() + r, rect.width(), 1)
            for head, rect in enumerate(self.grid.tile_rect(g) for g in range(self.n_heads))
            for r in rows if not masked[head, r]]))  # (a NaN row shows the hatch below already)

    def set_selection(self, head: int, row: int, col: int) -> None:
        if (head, row, col) != self.selected:
            self.selected = (head, row, col)
            self._draw_selection()
            self._draw_labels()

    def _draw_selection(self) -> None:
        head, row, col = self.selected
        r0, r1, c0, c1 = self.window
        self.grid.select(head if head < self.n_heads else None)
        self.grid.draw_markers([self.grid.cell_rect(g, row - r0, col - c0) for g in range(self.n_heads)]
                               if r0 <= row < r1 and c0 <= col < c1 else [])

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
        font = self._theme.font(8.0) if self._theme else plot_font(8.0)
        colour = QColor(self._theme.foreground if self._theme else "#888888")
        self.grid.set_titles([[self._label_runs(g, wide)] if self.labels_fit else None
                              for g in range(self.n_heads)], font, colour)

    def _draw_crosshair(self) -> None:
        r0, _r1, c0, _c1 = self.window
        row, col = self._hovered or (None, None)
        self.grid.draw_crosshair(None if row is None else row - r0, None if col is None else col - c0)

    # ---- hover and click ------------------------------------------------------------
    def _hover(self, cell: tuple[int, int, int] | None) -> None:
        if cell is None:
            self.hover.clear(self.shape)
            return
        head, row, col = self._heads(cell)
        self.hover.publish(self.shape, row, col)
        if self.describe is not None:
            self.hover.describe(self.describe(head, row, col))

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
        self.grid.outlines.setPen(theme.pen(theme.hatch, 1))
        self.current.setPen(theme.pen(theme.accent, 2))
        self.markers.setPen(theme.pen(theme.accent, 2.5))
        self.crosshair.setPen(crosshair_pen(theme))
        if self.data is not None:
            self._draw_labels(force=True)
