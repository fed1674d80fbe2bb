"""One matrix as a pyqtgraph heatmap: token axes, selection marker, linked crosshair.

The pyqtgraph matrix idiom: row-major image order, the ImageItem translated by
−0.5 so cell (row, col) is centred on integer coordinates, `invertY(True)` so
row 0 is on top, the lookup table built once and only `setImage(...,
autoLevels=False)` per frame. NaN cells render transparent over a hatched
rectangle: masked cells show as holes.

Colouring is done here with one numpy `take` into the colour map's RGBA table
and handed to the ImageItem as 8-bit RGBA: pyqtgraph's own indexed path
rebuilds a 256-entry Qt colour table in Python on every render, which cost
more than the rest of a small heatmap's frame. The ImageItem keeps that RGBA as
a premultiplied ARGB32 QImage (RgbaImage), the one format Qt's raster engine
draws without converting every pixel on every paint. The colour bars are
legends driven by the same levels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPen, QTransform
from PySide6.QtWidgets import QGraphicsRectItem

from ..selection import HoverLink
from .plots import LeanPlotItem, LeanViewBox, lean_axes, same_sources, set_plot_title, style_plot
from .text import titled
from .themes import Theme
from .token_axis import TokenAxis

pg.setConfigOptions(imageAxisOrder="row-major")



def colorize(data: np.ndarray, lut: np.ndarray, levels: tuple[float, float]) -> tuple[np.ndarray, bool]:
    """(rows, cols) float → (rows, cols, 4) uint8 RGBA through `lut`; NaN → transparent.

    Returns the image and whether it has NaN cells. ±inf clip to the ends of the map.
    """
    lo, hi = levels
    n = lut.shape[0]
    scale = (n - 1) / (hi - lo)
    idx = (np.asarray(data, dtype=np.float32) - np.float32(lo)) * np.float32(scale)
    nan = np.isnan(idx)
    has_nan = bool(nan.any())
    np.clip(idx, 0, n - 1, out=idx)
    if has_nan:
        idx[nan] = 0
    lut32 = np.ascontiguousarray(lut, dtype=np.uint8).view(np.uint32).ravel()  # one gather per pixel
    rgba = lut32.take(idx.astype(np.uint8 if n <= 256 else np.intp)).view(np.uint8)
    rgba = rgba.reshape(*idx.shape, 4)
    if has_nan:
        rgba[nan, 3] = 0
    return rgba, has_nan


def crosshair_pen(theme: Theme) -> QPen:
    """The dashed hover crosshair of every matrix view, readable on the theme's background."""
    return theme.pen(QColor(255, 255, 255, 170) if theme.dark else QColor(0, 0, 0, 150), 1, Qt.PenStyle.DashLine)


def usable_levels(levels: tuple[float, float]) -> tuple[float, float]:
    """Colour levels (lo, hi) as floats with lo < hi, both finite (an empty range gets a width of 1)."""
    lo, hi = float(levels[0]), float(levels[1])
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        lo, hi = (0.0, 1.0) if not math.isfinite(lo) else (lo, lo + 1.0)
    return lo, hi


class RgbaImage(pg.GraphicsObject):
    """(rows, cols, 4) uint8 RGBA (what colorize makes) drawn as one premultiplied ARGB32
    QImage: the one format Qt's raster engine draws without converting every pixel on every
    paint (pyqtgraph's ImageItem wraps RGBA as RGBA8888, 5-7x dearer to draw scaled).

    A GraphicsObject with `paint` and `boundingRect` (pyqtgraph's supported way to draw
    something of one's own). Like ImageItem, pixel (col, row) covers [col, col+1) ×
    [row, row+1) of the item's coordinates; `setRect` maps the whole image onto a rectangle
    of the parent's coordinates (a transform, as ImageItem does).
    """

    #: repaint only the pixels that changed (MatrixGrid's image of many tiles); otherwise the
    #: whole image on every change (one matrix: a comparison would cost more than it saves)
    diff_updates = False

    def __init__(self) -> None:
        super().__init__()
        self.image: np.ndarray | None = None  # (rows, cols, 4) uint8, as given
        self.qimage: QImage | None = None
        self._size = (0, 0)  # (cols, rows)
        self._rect: QRectF | None = None

    def setImage(self, rgba: np.ndarray, autoLevels: bool = False) -> None:
        """Show `rgba`. With `diff_updates` Qt repaints only the pixels that differ from the
        image shown (none: no repaint), so tiles that did not change, the band of titles above
        them and what lies over it (the heads panel's "?") are not drawn again."""
        rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
        rows, cols = rgba.shape[:2]
        old, self.image = self.image, rgba
        self.qimage = QImage(rgba.data, cols, rows, 4 * cols, QImage.Format.Format_RGBA8888).convertToFormat(
            QImage.Format.Format_ARGB32_Premultiplied)  # a copy: rgba need not outlive it
        if (cols, rows) != self._size:
            self.prepareGeometryChange()
            self._size = (cols, rows)
            if self._rect is not None:
                self._apply_rect()
            self.update()
        elif not self.diff_updates or old is None or old is rgba or old.shape != rgba.shape:
            self.update()
        else:
            changed = old.view(np.uint32)[..., 0] != rgba.view(np.uint32)[..., 0]  # (rows, cols)
            ys, xs = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
            if ys.size:
                self.update(QRectF(float(xs[0]), float(ys[0]), float(xs[-1] + 1 - xs[0]), float(ys[-1] + 1 - ys[0])))

    def setRect(self, rect: QRectF) -> None:
        """Show the image stretched over `rect` (parent coordinates)."""
        self._rect = QRectF(rect)
        self._apply_rect()

    def _apply_rect(self) -> None:
        cols, rows = self._size
        r = self._rect
        tr = QTransform()
        tr.translate(r.left(), r.top())
        if cols and rows:
            tr.scale(r.width() / cols, r.height() / rows)
        self.setTransform(tr)

    def width(self) -> int:
        return self._size[0]

    def height(self) -> int:
        return self._size[1]

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, *self._size)

    def paint(self, p, *args) -> None:
        if self.qimage is not None:
            p.drawImage(QRectF(0, 0, *self._size), self.qimage)


class CellImage(RgbaImage):
    """An ImageItem that reports the cell under the mouse.

    locate(pos) maps a point in the image's own coordinates to a cell (or None
    off the cells); on_hover(cell or None) follows the mouse, on_click(cell)
    gets a left click on a cell.
    """

    def __init__(self, locate: Callable, on_hover: Callable, on_click: Callable) -> None:
        super().__init__()
        self._locate, self._on_hover, self._on_click = locate, on_hover, on_click
        self.setAcceptHoverEvents(True)

    def hoverEvent(self, ev):
        self._on_hover(None if ev.isExit() else self._locate(ev.pos()))

    def mouseClickEvent(self, ev):
        if ev.button() == Qt.MouseButton.LeftButton:
            cell = self._locate(ev.pos())
            if cell is not None:
                ev.accept()
                self._on_click(cell)


class Heatmap:
    """A (rows, cols) matrix in a PlotItem (with token axes) or a bare ViewBox.

    on_click(row, col) is called for a left click on a cell; describe(row, col)
    returns the text shown while hovering (the window puts it in the status bar).
    """

    def __init__(self, hover: HoverLink, cmap: str, *, axes: bool | tuple[str, ...] = True, title: str = "",
                 on_click: Callable[[int, int], None] | None = None,
                 describe: Callable[[int, int], str] | None = None,
                 row_title: str = "", col_title: str = "") -> None:
        self.hover = hover
        self.on_click = on_click
        self.describe = describe
        self.shape: tuple[int, int] = (0, 0)
        if axes is not False:
            self.left_axis = TokenAxis("left")
            self.bottom_axis = TokenAxis("bottom")
            self.item = LeanPlotItem(axisItems=lean_axes(left=self.left_axis, bottom=self.bottom_axis))
            self.cell = titled(self.item)  # what a panel puts in its layout: the plot and its title
            set_plot_title(self.item, title, None)  # (a title row from the start)
            self.vb = self.item.getViewBox()
            if row_title:
                self.item.setLabel("left", row_title)
            if col_title:
                self.item.setLabel("bottom", col_title)
            self.item.hideButtons()
            if isinstance(axes, tuple):
                for name in ("left", "bottom"):
                    if name not in axes:
                        self.item.hideAxis(name)
        else:
            self.left_axis = self.bottom_axis = None
            self.item = self.vb = self.cell = LeanViewBox()
        self.vb.invertY(True)
        self.vb.setMenuEnabled(False)
        self.vb.setDefaultPadding(0.0)
        # image pixel (col, row) is cell (row·rows per pixel, col·cols per pixel): one pixel per
        # cell, or one per tile of cells for data drawn at a level of detail (set_data's extent)
        self._per_pixel = (1, 1)
        self.image = CellImage(
            lambda pos: (math.floor(pos.y() * self._per_pixel[0]), math.floor(pos.x() * self._per_pixel[1])),
            lambda cell: self._hover(*(cell if cell is not None else (-1, -1))),
            lambda cell: self._click(*cell))
        self.cmap = pg.colormap.get(cmap)
        self.lut = self.cmap.getLookupTable(nPts=256, alpha=True)  # (256, 4) uint8
        self.levels: tuple[float, float] = (0.0, 1.0)
        #: (source, shape, levels) drawn last (see set_data); None: draw again
        self._drawn: tuple | None = None
        self.data: np.ndarray | None = None
        self.hatch = QGraphicsRectItem()
        self.hatch.setPen(QPen(Qt.PenStyle.NoPen))
        self.hatch.setZValue(-10)
        self.vb.addItem(self.hatch, ignoreBounds=True)
        self.vb.addItem(self.image)
        self.marker = QGraphicsRectItem()
        self.marker.setZValue(20)
        self.marker.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.marker.hide()
        self.vb.addItem(self.marker, ignoreBounds=True)
        self.vline = pg.InfiniteLine(angle=90, movable=False)
        self.hline = pg.InfiniteLine(angle=0, movable=False)
        for line in (self.vline, self.hline):
            line.setZValue(15)
            line.hide()
            self.vb.addItem(line, ignoreBounds=True)
        self._marker_spec: tuple[str, int, int] | None = None
        self._theme: Theme | None = None
        hover.hovered.connect(self._on_link_hover)

    # ---- data ------------------------------------------------------------
    def set_data(self, data: np.ndarray, levels: tuple[float, float] | None = None,
                 extent: tuple[int, int] | None = None, *, source: tuple) -> None:
        """Show a (rows, cols) float array; levels fixed (no autoLevels), None keeps them.

        ``extent`` = (S, Skv) the cells ``data`` stands for when it is a level of detail:
        each value then covers a tile of ⌈S/rows⌉ × ⌈Skv/cols⌉ cells, the axes, hover and
        clicks keep the cells' own indices.

        ``source``: what ``data`` was taken from (e.g. ``(frame, head)``, ``(result,)``,
        ``(view, step)``; compared by plots.same_sources: identities): the map is kept when
        the source, the shape and the levels are those drawn last, without a look at the
        data; a new source always repaints. No number of ``data`` is ever compared."""
        shape = (int(data.shape[0]), int(data.shape[1])) if extent is None else (int(extent[0]), int(extent[1]))
        per_pixel = (-(-shape[0] // max(1, data.shape[0])), -(-shape[1] // max(1, data.shape[1])))
        levels = self.levels if levels is None else usable_levels(levels)
        key = (source, shape, levels)
        if self.data is not None and same_sources(self._drawn, key):
            return  # drawn from the same data (a move of the selected cell, a theme)
        self._drawn = key
        self.levels = levels
        self.data = data
        rgba, has_nan = colorize(data, self.lut, self.levels)
        self.image.setImage(rgba, autoLevels=False)
        self.hatch.setVisible(has_nan)  # the pattern fill only where there are holes
        if per_pixel != self._per_pixel or shape != self.shape:
            self._per_pixel = per_pixel
            # the image's pixels stretched over their cells (the last tile may hang past the edge)
            self.image.setRect(QRectF(-0.5, -0.5, data.shape[1] * per_pixel[1], data.shape[0] * per_pixel[0]))
        if shape != self.shape:
            self.shape = shape
            rows, cols = shape
            rect = QRectF(-0.5, -0.5, cols, rows)
            self.hatch.setRect(rect)
            self.vb.setLimits(xMin=-0.5, xMax=cols - 0.5, yMin=-0.5, yMax=rows - 0.5)
            self.vb.setRange(rect, padding=0)
            self._place_marker()

    def set_cmap(self, cmap: str) -> None:
        """Another colour map (recolours the current data)."""
        if cmap != self.cmap.name:
            self.cmap = pg.colormap.get(cmap)
            self.lut = self.cmap.getLookupTable(nPts=256, alpha=True)
            source, self._drawn = self._drawn and self._drawn[0], None  # (recoloured: drawn again)
            if self.data is not None:  # (a level of detail keeps the cells it stands for, and the view)
                self.set_data(self.data, extent=self.shape, source=source)

    def set_levels(self, levels: tuple[float, float]) -> None:
        """Change the colour levels (recolours the current data if they changed)."""
        levels = (float(levels[0]), float(levels[1]))
        if levels != self.levels:
            self.levels = levels
            if self.data is not None:  # (a level of detail keeps the cells it stands for, and the view)
                self.set_data(self.data, extent=self.shape, source=self._drawn and self._drawn[0])

    def set_labels(self, rows: Sequence[str] | None, cols: Sequence[str] | None) -> None:
        if self.left_axis is not None:
            self.left_axis.set_labels(rows)
            self.bottom_axis.set_labels(cols)

    def set_title(self, text: str) -> None:
        if isinstance(self.item, pg.PlotItem):
            set_plot_title(self.item, text, self._theme)

    def reset_view(self) -> None:
        """Show the whole matrix again (forget a zoom or pan)."""
        rows, cols = self.shape
        if rows > 0:
            self.vb.setRange(QRectF(-0.5, -0.5, cols, rows), padding=0)

    def zoomed(self) -> bool:
        """Whether the view shows less than the whole matrix (the user zoomed or panned)."""
        rows, cols = self.shape
        (x0, x1), (y0, y1) = self.vb.viewRange()
        return rows > 0 and (x0 > -0.49 or y0 > -0.49 or x1 < cols - 0.51 or y1 < rows - 0.51)

    # ---- selection ---------------------------------------------------------
    def set_marker(self, kind: str | None, row: int = 0, col: int = 0) -> None:
        """Outline the selected 'cell', 'row' or 'col'; None hides it."""
        self._marker_spec = None if kind is None else (kind, row, col)
        self._place_marker()

    def _place_marker(self) -> None:
        spec, (rows, cols) = self._marker_spec, self.shape
        if spec is None or rows == 0:
            self.marker.hide()
            return
        kind, r, c = spec
        if kind == "cell":
            rect = QRectF(c - 0.5, r - 0.5, 1, 1)
        elif kind == "row":
            rect = QRectF(-0.5, r - 0.5, cols, 1)
        else:
            rect = QRectF(c - 0.5, -0.5, 1, rows)
        self.marker.setRect(rect)
        self.marker.show()

    # ---- hover and click -----------------------------------------------------
    def cell_center(self, row: int, col: int) -> QPointF:
        """The centre of cell (row, col) in view units."""
        return QPointF(col, row)

    def _inside(self, row: int, col: int) -> bool:
        return 0 <= row < self.shape[0] and 0 <= col < self.shape[1]

    def _hover(self, row: int, col: int) -> None:
        if self._inside(row, col):
            self.hover.publish(self.shape, row, col)
            if self.describe is not None:
                self.hover.describe(self.describe(row, col))
        else:
            self.hover.clear(self.shape)

    def _click(self, row: int, col: int) -> None:
        if self.on_click is not None and self._inside(row, col):
            self.on_click(row, col)

    def _on_link_hover(self, shape: tuple[int, int], row: int, col: int) -> None:
        if shape != self.shape:
            return
        if row < 0:
            self.vline.hide()
            self.hline.hide()
            return
        self.vline.setValue(col)
        self.hline.setValue(row)
        self.vline.show()
        self.hline.show()

    # ---- look --------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.hatch.setBrush(QBrush(QColor(theme.hatch), Qt.BrushStyle.BDiagPattern))
        self.marker.setPen(theme.pen(theme.accent, 2.5))
        cross = crosshair_pen(theme)
        self.vline.setPen(cross)
        self.hline.setPen(cross)
        if isinstance(self.item, pg.PlotItem):
            style_plot(self.item, theme)


def link_views(heatmaps: Sequence[Heatmap]) -> None:
    """Link zoom and pan between heatmaps of the same shape: zoom one, all show that range.

    The range is copied, not linked with pyqtgraph's setXLink/setYLink: those
    line views up by their position on screen when they overlap (meant for
    stacked plots), which showed the thumbnails beside the large heads heatmap
    a shifted slice of rows.
    """
    groups: dict[tuple[int, int], list[Heatmap]] = {}
    for hm in heatmaps:
        groups.setdefault(hm.shape, []).append(hm)
    for members in groups.values():
        for hm in members:
            if getattr(hm, "_range_group", None) is None:
                hm.vb.sigRangeChangedManually.connect(lambda *_, h=hm: _copy_range(h))
            hm._range_group = members


def _copy_range(source: Heatmap) -> None:
    """Give every heatmap of `source`'s group the range the user just zoomed or panned to."""
    rect = source.vb.viewRect()
    for hm in getattr(source, "_range_group", ()):
        if hm is not source and hm.shape == source.shape:
            hm.vb.setRange(rect, padding=0)
