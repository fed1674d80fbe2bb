"""Texts inside the cells of a heatmap, as one item: a token or a number per cell.

    texts = CellTexts()                     # one GraphicsObject for every cell
    heatmap.vb.addItem(texts, ignoreBounds=True)
    texts.set_texts(labels, colours, font)  # (rows, cols) strings and "#rrggbb" colours
    texts = CellOutlines()                  # a path of cell outlines (one item)

Cell (row, col) is centred on view point (col, row), as in `heatmap.Heatmap`. The texts are
laid out in device pixels at paint time (they do not scale with a zoom), shortened with "…"
to their cell, and left out altogether when a cell is too small for two characters: the
hover readout names every cell anyway. Not cached as a pixmap (a view clips its children,
see `plots.cache_static_items`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem

__all__ = ["CellOutlines", "CellTexts", "contrast_colours"]


def contrast_colours(rgba: np.ndarray, dark: str = "#111111", light: str = "#f5f5f5") -> np.ndarray:
    """(rows, cols, 4) uint8 cell colours → (rows, cols) text colours readable on them
    (`dark` on a light cell, `light` on a dark one; transparent cells get `dark`)."""
    rgb = rgba[..., :3].astype(np.float32) / 255.0
    lum = 0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]
    out = np.where(lum > 0.5, dark, light).astype(object)
    out[rgba[..., 3] < 64] = dark
    return out


class CellTexts(pg.GraphicsObject):
    """One text per cell (see the module docstring); an empty string leaves a cell blank."""

    def __init__(self) -> None:
        super().__init__()
        self._texts: list[list[str]] = []
        self._colours: list[list[str]] = []
        self._font = QFont()
        self._rect = QRectF()
        self.setZValue(12)  # over the image and the hatching, under the marker and crosshair
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_texts(self, texts: Sequence[Sequence[str]], colours: Sequence[Sequence[str]] | np.ndarray,
                  font: QFont) -> None:
        texts = [list(map(str, row)) for row in texts]
        colours = [list(map(str, row)) for row in colours]
        rows = len(texts)
        cols = max((len(r) for r in texts), default=0)
        rect = QRectF(-0.5, -0.5, cols, rows)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self._texts, self._colours, self._font = texts, colours, QFont(font)
        self.update()

    def clear(self) -> None:
        self.set_texts([], [], self._font)

    def texts(self) -> list[list[str]]:
        """What each cell says (before shortening to its width)."""
        return [list(r) for r in self._texts]

    def boundingRect(self) -> QRectF:
        return QRectF(self._rect)

    def paint(self, p, *args) -> None:
        if not self._texts:
            return
        # lay out in scene units (logical px): the view's cell scaling left out, the device's
        # own scale (an export's raster scale) kept, so the texts match the other labels
        to_scene = self.sceneTransform()
        inv, ok = to_scene.inverted()
        if not ok:
            return
        scene_to_device = inv * p.transform()
        cell_w, cell_h = abs(to_scene.m11()), abs(to_scene.m22())  # logical px per cell
        fm = QFontMetricsF(self._font)
        if cell_h < fm.height() * 0.8 or cell_w < fm.horizontalAdvance("00"):
            return  # too small to read: the hover readout names the cell
        p.save()
        p.setTransform(scene_to_device)
        p.setFont(self._font)
        room = max(1.0, cell_w - 4.0)
        lines_fit = max(1, int(cell_h // fm.height()))
        for r, row in enumerate(self._texts):
            for c, text in enumerate(row):
                if not text:
                    continue
                centre = to_scene.map(QPointF(c, r))
                lines = text.split("\n")[:lines_fit]
                shown = "\n".join(fm.elidedText(s, Qt.TextElideMode.ElideRight, room) for s in lines)
                try:
                    colour = self._colours[r][c]
                except IndexError:
                    colour = "#111111"
                p.setPen(QColor(colour))
                box = QRectF(centre.x() - cell_w / 2, centre.y() - cell_h / 2, cell_w, cell_h)
                p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), shown)
        p.restore()


class CellOutlines(QGraphicsPathItem):
    """Outlines around chosen cells (one path): `set_cells([(row, col), …])`."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(14)
        self.setBrush(Qt.BrushStyle.NoBrush)
        self.cells: list[tuple[int, int]] = []

    def set_cells(self, cells: Sequence[tuple[int, int]], inset: float = 0.06) -> None:
        self.cells = [(int(r), int(c)) for r, c in cells]
        path = QPainterPath()
        side = 1.0 - 2 * inset
        for r, c in self.cells:
            path.addRect(QRectF(c - 0.5 + inset, r - 0.5 + inset, side, side))
        self.setPath(path)
