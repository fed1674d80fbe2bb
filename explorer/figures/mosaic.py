"""The model mosaic: every layer × head of a real model as the tiles of one MatrixGrid.

Rows are layers, columns the heads of each layer in the order chosen; each tile is that
head's attention for the text (blocks of tokens averaged past THUMB_CELLS), scaled to its own
maximum so the pattern shows, inside a frame coloured by a metric: a colour map over levels,
or one colour per pattern label. One image instead of 72+ ImageItems keeps a 32 × 32-head
model as cheap to draw as MiniLM's 6 × 12. The panel (`panels/model_grid.py`) wires the
controls, the table and the selection to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from .heatmap import colorize
from .matrix_grid import Cell, MatrixGrid
from .plots import nice_ceil

#: the frame colours of numeric metrics (viridis is taken by the thumbnails)
METRIC_CMAP = "plasma"
#: the pixel budget of one thumbnail side: longer texts are averaged into blocks of tokens
THUMB_CELLS = 40
THUMB_PX = 36

#: one colour per pattern label (Okabe-Ito, and a violet for long-range readable on both themes;
#: none of them is a viridis blue or green)
PATTERN_COLORS = {
    "vertical/sink": "#E69F00", "diagonal": "#D55E00", "previous-token": "#CC79A7",
    "broad": "#56B4E9", "block": "#F0E442", "long-range": "#9467BD", "mixed": "#999999",
}

#: metrics that are shares of a row's weight: their frames span 0–1
SHARE_METRICS = ("sink", "prev_token", "diagonal")


def pattern_color(label: str) -> str:
    return PATTERN_COLORS.get(label, PATTERN_COLORS["mixed"])


def thumbnails(attn: np.ndarray, max_cells: int = THUMB_CELLS) -> np.ndarray:
    """(L, H, S, S) → (L, H, T, T): blocks of k×k cells averaged, T = ceil(S / k) ≤ max_cells."""
    s = attn.shape[-1]
    k = max(1, math.ceil(s / max_cells))
    if k == 1:
        return attn
    t = math.ceil(s / k)
    pad = t * k - s
    a = np.pad(attn, ((0, 0), (0, 0), (0, pad), (0, pad))) if pad else attn
    return a.reshape(*a.shape[:2], t, k, t, k).mean(axis=(3, 5))


def mosaic_geometry(t: int) -> tuple[int, int, int]:
    """(cell, border, thumbnail) in pixels of a T-cell thumbnail: each head's square cell of the
    mosaic holds the thumbnail (blown up to about THUMB_PX) inside its frame, 2 px apart."""
    p = t * max(1, round(THUMB_PX / t))
    border = max(2, p // 12)
    return p + 2 * border + 4, border, p


def pattern_frames(labels: np.ndarray, known: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Pattern labels (L, H) → (values to order by: the label's index in `known`, unknown ones
    last (L, H); frame colours (L, H, 4) uint8)."""
    values = np.vectorize(lambda s: known.index(s) if s in known else len(known))(labels).astype(float)
    colors = np.zeros((*labels.shape, 4), np.uint8)
    for idx in np.ndindex(labels.shape):
        c = QColor(pattern_color(str(labels[idx])))
        colors[idx] = (c.red(), c.green(), c.blue(), 255)
    return values, colors


def metric_levels(key: str, values: np.ndarray, seq_len: int) -> tuple[float, float]:
    """The colour levels of a numeric metric's frames: 0–1 for a share of weight, 0 to a nice
    value above log(S) for entropy (its maximum), else 0 to a nice value above the largest."""
    if key in SHARE_METRICS:
        return (0.0, 1.0)
    if key == "entropy":
        return (0.0, nice_ceil(max(math.log(max(2, seq_len)), 1e-6)))
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 1.0
    return (0.0, nice_ceil(max(top, 1e-6)))


def metric_frames(values: np.ndarray, lut: np.ndarray, levels: tuple[float, float]) -> np.ndarray:
    """Frame colours (L, H, 4) of a numeric metric (NaN drawn as 0)."""
    colors, _ = colorize(np.nan_to_num(values, nan=0.0), lut, levels)
    return colors


def head_order(values: np.ndarray, mode: int) -> np.ndarray:
    """(L, H) head at each position of each layer: model order (mode 0), or sorted by `values`
    ascending (1) or descending (2), NaN last in both."""
    L, H = values.shape
    if mode == 0:
        return np.tile(np.arange(H), (L, 1))
    key = np.where(np.isfinite(values), values, np.inf)
    return np.argsort(key if mode == 1 else -key, axis=1, kind="stable")


class HeadMosaic(MatrixGrid):
    """A MatrixGrid with a tile per head: view unit (pos, layer) is the head at position pos
    of that layer; each tile sits inside its cell, `inset` view units from its edges."""

    inset = 0.0  # from a head's cell of the mosaic to its thumbnail, in view units

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._key: tuple[int, int, int] | None = None  # (L, H, T) the tiles were placed for

    def show_heads(self, attn: np.ndarray, order: np.ndarray, frames: np.ndarray, lut: np.ndarray) -> None:
        """Draw `attn` (L, H, S, S) with the heads of each layer in `order` (L, H), each in its
        frame colour (`frames`, (L, H, 4), in model order), and frame the view on the mosaic."""
        L, H = order.shape
        th = thumbnails(attn)
        peak = th.max(axis=(2, 3), keepdims=True)  # each thumbnail scaled to its own maximum
        th = th / np.where(peak > 0, peak, 1.0)
        t = th.shape[-1]
        if self._key != (L, H, t):
            self._key = (L, H, t)
            cell, border, p = mosaic_geometry(t)
            o = self.inset = (cell - p) / 2 / cell
            self.place([(pos + o, layer + o, p / cell, p / cell) for layer in range(L) for pos in range(H)],
                       [(t, t)] * (L * H), px=cell, frame=border / cell, size=(H, L))
        rows = np.arange(L)[:, None]  # in display order
        self.compose(th[rows, order].reshape(L * H, t, t), lut, (0.0, 1.0), frames[rows, order].reshape(L * H, 4))
        self.vb.setRange(QRectF(0, 0, H, L), padding=0.01)

    def row_pos(self, cell: Cell, heads: int) -> tuple[int, int]:
        """A mosaic cell (tile, row, col) as (layer row, position in the layer) of `heads` heads."""
        return divmod(cell[0], heads)

    def select_position(self, layer: int, pos: int, heads: int) -> None:
        """Outline the whole cell of the head at position `pos` of `layer`."""
        self.select(layer * heads + pos, pad=self.inset - 0.02)

    def mark_position(self, layer: int, pos: int) -> None:
        """The hover marker on the head's cell at position `pos` of `layer` (layer -1: none)."""
        self.draw_markers([] if layer < 0 else [QRectF(pos + 0.04, layer + 0.04, 0.92, 0.92)])
