"""The matrix grid (explorer/figures/matrix_grid.py), as a user meets it: the pixels each tile
shows, the cell a click or hover lands on, and titles that stay inside the view and off the
tiles."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor

from explorer.figures.heatmap import colorize
from explorer.figures.matrix_grid import MatrixGrid
from explorer.figures.themes import plot_font

LUT = pg.colormap.get("viridis").getLookupTable(nPts=256, alpha=True)
RED = np.array([255, 0, 0, 255], np.uint8)


@pytest.fixture
def view(qtbot):
    """A shown 400×300 GraphicsView holding one inverted ViewBox."""
    gv = pg.GraphicsView()
    gv.resize(400, 300)
    vb = pg.ViewBox(invertY=True, enableMenu=False, defaultPadding=0.0)
    vb.setMouseEnabled(False, False)
    gv.setCentralItem(vb)
    qtbot.addWidget(gv)
    gv.show()
    qtbot.waitExposed(gv)
    return gv, vb


def _press(qtbot, gv, vb, point: QPointF) -> None:
    pt = gv.mapFromScene(vb.mapViewToScene(point))
    qtbot.mouseClick(gv.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))


def test_each_tile_shows_its_own_matrix_at_its_place(view):
    _gv, vb = view
    a = np.arange(6, dtype=float).reshape(2, 3) / 5  # 2×3
    b = np.array([[1.0, np.nan], [0.0, 0.5]])  # 2×2, one masked cell
    grid = MatrixGrid(vb)
    grid.place([(0, 1, 3, 2), (4, 1, 2, 2)], [(2, 3), (2, 2)], px=2)
    assert grid.compose([a, b], LUT, (0.0, 1.0)) is True  # it says a cell is masked
    want_a, _ = colorize(a, LUT, (0.0, 1.0))
    assert np.array_equal(grid.tile_rgba(0), want_a.repeat(2, 0).repeat(2, 1))  # 2 px a view unit
    img = grid.image.image
    assert img.shape == (6, 12, 4)  # the bounding box of the tiles, 2 px per unit
    assert np.array_equal(img[2, 8], colorize(np.array([[1.0]]), LUT, (0, 1))[0][0, 0])  # b[0, 0]
    assert img[2, 10, 3] == 0  # the masked cell is a hole
    assert img[0].max() == 0 and img[:, 6:8].max() == 0  # nothing above or between the tiles
    grid.draw_hatch([1])
    assert grid.hatch.path().boundingRect() == QRectF(4, 1, 2, 2)  # the hatch under the holed tile


def test_frames_and_thumbnails_blown_up(view):
    _gv, vb = view
    grid = MatrixGrid(vb)
    # two 2×2 thumbnails in unit cells, 8 px each, inside a 1-px (1/8 unit) red frame
    grid.place([(0.25, 0.25, 0.5, 0.5), (1.25, 0.25, 0.5, 0.5)], [(2, 2)] * 2, px=8, frame=0.125, size=(2, 1))
    data = np.array([[[0.0, 1.0], [1.0, 0.0]], [[0.5, 0.5], [0.5, 0.5]]])
    grid.compose(data, LUT, (0.0, 1.0), frames=np.stack([RED, RED]))
    img = grid.image.image
    assert img.shape == (8, 16, 4)
    assert np.array_equal(img[1, 1], RED) and np.array_equal(img[6, 9], RED)  # the frames
    assert img[0, 0, 3] == 0  # outside them: transparent
    cells, _ = colorize(data[0], LUT, (0.0, 1.0))
    assert np.array_equal(img[2:6, 2:6], cells.repeat(2, 0).repeat(2, 1))  # 2 px per cell


def test_a_click_and_a_hover_land_on_the_right_tile_and_cell(view, qtbot):
    gv, vb = view
    clicks, hovers = [], []
    grid = MatrixGrid(vb, on_hover=hovers.append, on_click=clicks.append)
    grid.place([(0, 0, 4, 4), (5, 0, 2, 4)], [(4, 4), (4, 8)], px=4)  # the second tile: 4 cells per unit across
    grid.compose([np.zeros((4, 4)), np.ones((4, 8))], LUT, (0.0, 1.0))
    vb.setRange(QRectF(0, 0, 7, 4), padding=0)
    qtbot.wait(10)
    assert grid.cell_at(QPointF(2.5, 1.5)) == (0, 1, 2)
    assert grid.cell_at(QPointF(4.5, 1.5)) is None  # between the tiles
    assert grid.cell_at(grid.cell_center(1, 3, 5)) == (1, 3, 5)
    _press(qtbot, gv, vb, grid.cell_center(1, 2, 6))
    _press(qtbot, gv, vb, grid.cell_center(0, 3, 0))
    assert clicks == [(1, 2, 6), (0, 3, 0)]
    pt = gv.mapFromScene(vb.mapViewToScene(grid.cell_center(0, 1, 3)))
    qtbot.mouseMove(gv.viewport(), QPoint(pt.x(), pt.y()))
    qtbot.waitUntil(lambda: (0, 1, 3) in hovers, timeout=2000)
    grid.draw_crosshair(1, 3)  # through the cell in every tile that has it
    lines = grid.crosshair.path()
    assert grid.crosshair.isVisible() and lines.elementCount() == 8
    grid.draw_crosshair(None)
    assert not grid.crosshair.isVisible()


def test_selection_outline_and_markers(view):
    _gv, vb = view
    grid = MatrixGrid(vb)
    grid.place([(0, 0, 3, 3), (4, 0, 3, 3)], [(3, 3)] * 2)
    grid.select(1, pad=0.5)
    assert grid.current.isVisible() and grid.current.rect() == QRectF(3.5, -0.5, 4, 4)
    grid.select(None)
    assert not grid.current.isVisible()
    grid.draw_markers([grid.cell_rect(t, 2, 1) for t in range(2)])
    assert grid.markers.path().boundingRect() == QRectF(1, 2, 5, 1)  # cell (2, 1) of both tiles
    grid.draw_outlines()
    assert grid.outlines.path().boundingRect() == QRectF(0, 0, 7, 3)


def test_titles_sit_above_their_tiles_inside_the_view(view, qtbot):
    _gv, vb = view
    grid = MatrixGrid(vb)
    grid.place([(1, 2, 4, 4), (6, 2, 4, 4)], [(4, 4)] * 2)
    vb.setRange(QRectF(0, 0, 11, 6), padding=0)
    grid.set_titles([[[("h0", True, None)]], [[("h1 ●kv0", False, None)]]], plot_font(8.0), QColor("#444"))
    grid.set_corner_texts(["0.5", ""], plot_font(7.5), "#ffffff", (0, 0, 0, 90), right=True)
    qtbot.wait(10)
    inside = vb.sceneBoundingRect()
    tiles = [vb.mapViewToScene(grid.tile_rect(t)).boundingRect() for t in range(2)]
    for t, label in enumerate(grid.titles):
        box = label.sceneBoundingRect().adjusted(2, 2, -2, -2)
        assert label.isVisible() and inside.contains(box)
        assert not any(box.intersects(tile) for tile in tiles)  # above the tile, not over it
        assert abs(box.left() - tiles[t].left()) < 8  # at its tile's left edge
    assert 0 < grid.title_band() < 40  # pixels
    shown = [t for t in grid.texts if t.isVisible()]
    assert [t.toPlainText() for t in shown] == ["0.5"]  # "" shows nothing
    assert tiles[0].adjusted(-1, -1, 1, 1).contains(shown[0].sceneBoundingRect().adjusted(2, 2, -2, -2))


def test_a_qkv_tile_of_65536_rows_is_drawn_at_8192_rows_and_read_at_every_row(qtbot):
    """A long frame's X, Q, K, V (issue 45): the image holds every ⌈rows/8192⌉-th row (an
    8192-token frame's level of detail, each image row the first of its rows), while the
    tile's shape, its hover readout and its values stay those of every row."""
    from explorer.figures.themes import SIGNED_CMAP
    from explorer.figures.tiles import MAX_IMAGE_ROWS, TileStrip
    from explorer.selection import HoverLink

    gv = pg.GraphicsView()
    gv.resize(400, 300)
    strip = TileStrip(HoverLink(), SIGNED_CMAP)
    gv.setCentralItem(strip.item)
    qtbot.addWidget(gv)
    long_tile = strip.add("Q", 1.0, None, None)
    short_tile = strip.add("K", 1.0, None, None)
    rng = np.random.default_rng(0)
    big, small = rng.standard_normal((65536, 8)), rng.standard_normal((MAX_IMAGE_ROWS, 8))
    long_tile.set_data(big, (-3.0, 3.0), source=("a",))
    short_tile.set_data(small, (-3.0, 3.0), source=("a",))
    strip.settle()
    drawn = strip.grid.own[0].image
    assert MAX_IMAGE_ROWS == 8192 and drawn.shape[:2] == (8192, 8)  # every 8th of 65,536 rows
    assert np.array_equal(drawn, colorize(big[::8], strip.lut, (-3.0, 3.0))[0])
    assert strip.grid.own[1].image.shape[:2] == (8192, 8)  # an 8192-row matrix: every row, as before
    assert long_tile.shape == (65536, 8) and long_tile.data is big  # what hover and values read
    for row in (0, 12345, 65535):  # the cell under a point is still one of 65,536 rows
        assert strip.grid.cell_at(long_tile.cell_center(row, 7)) == (0, row, 7)
