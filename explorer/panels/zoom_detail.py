"""Full resolution under a zoom: a long frame's heatmap shows block maxima until the view is
small enough to draw every cell, then the exact weights of the visible cells, computed off
the UI thread for that region only (the rows it spans, a block at a time in the engine).

The heads panel owns one; `request` after every view change (debounced), `clear` when the
frame or the head changes. Nothing is drawn past the view: the overlay covers the region
computed and is hidden again when the view grows past DETAIL_CELLS on a side.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from PySide6.QtCore import QObject, QRectF, QTimer, Signal

from ..figures.heatmap import Heatmap, RgbaImage, colorize

#: A zoomed view of at most this many cells on each side is drawn cell by cell.
DETAIL_CELLS = 512
#: Quiet time after the last view change before the region is computed.
DEBOUNCE_MS = 120


class ZoomDetail(QObject):
    """The exact cells of a zoomed long heatmap, as an overlay of its view."""

    ready = Signal(object)  # (token, region (r0, r1, c0, c1), (r, c) float32 weights) from the thread
    changed = Signal()  # an exact region appeared, or went with a zoom out (the panel re-titles)

    def __init__(self, heatmap: Heatmap, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.heatmap = heatmap
        self.overlay = RgbaImage()
        self.overlay.setZValue(3)  # above the level of detail, below the marker and overlays
        self.overlay.hide()
        heatmap.vb.addItem(self.overlay, ignoreBounds=True)
        self.region: tuple[int, int, int, int] | None = None  # what the overlay shows
        self._values: np.ndarray | None = None
        self._token = 0
        self._job: tuple | None = None
        self._background = (0, 0, 0)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)
        self.ready.connect(self._on_ready)

    @property
    def active(self) -> bool:
        """Whether the exact cells of a region are on screen."""
        return self.overlay.isVisible()

    def clear(self) -> None:
        """Forget the region (another frame, head or colour scale)."""
        self._token += 1
        self._timer.stop()
        self.region = self._values = None
        self.overlay.hide()

    def set_background(self, rgb: tuple[int, int, int]) -> None:
        self._background = rgb

    def recolour(self) -> None:
        """Draw the kept values again (the levels or colour map changed)."""
        if self._values is not None and self.region is not None:
            self._draw(self.region, self._values)

    def request(self, frame, head: int) -> None:
        """The view changed: compute its exact cells once it settles, if it is small enough."""
        if frame is None or frame.lod is None:
            self.clear()
            return
        rows, cols = frame.config.seq_len, frame.config.key_len
        (x0, x1), (y0, y1) = self.heatmap.vb.viewRange()
        r0, r1 = max(0, math.floor(y0 + 0.5)), min(rows, math.ceil(y1 - 0.5) + 1)
        c0, c1 = max(0, math.floor(x0 + 0.5)), min(cols, math.ceil(x1 - 0.5) + 1)
        if r1 - r0 > DETAIL_CELLS or c1 - c0 > DETAIL_CELLS or r1 <= r0 or c1 <= c0:
            was = self.active
            self.clear()
            if was:
                self.changed.emit()
            return
        if self.region is not None and self.active:
            a0, a1, b0, b1 = self.region
            if a0 <= r0 and r1 <= a1 and b0 <= c0 and c1 <= b1:
                return  # already exact there
        self._token += 1
        # a margin of half a view on each side: small pans stay exact without a new pass
        dr, dc = (r1 - r0) // 2, (c1 - c0) // 2
        region = (max(0, r0 - dr), min(rows, r1 + dr), max(0, c0 - dc), min(cols, c1 + dc))
        self._job = (self._token, frame, head, region)
        self._timer.start()

    def _start(self) -> None:
        job, self._job = self._job, None
        if job is None:
            return
        threading.Thread(target=self._compute, args=job, daemon=True, name="zoom-detail").start()

    def _compute(self, token: int, frame, head: int, region) -> None:  # in its own thread
        r0, r1, c0, c1 = region
        try:
            w = frame.trace.head_rows("weights", head, slice(r0, r1))[:, c0:c1].float().numpy()
            w = np.where(frame.mask[r0:r1, c0:c1] | (w != 0), w, np.float32(np.nan))  # masked: a hole
        except Exception:  # (memory refused, a closed trace): the level of detail stays
            return
        if token == self._token:
            self.ready.emit((token, region, np.ascontiguousarray(w, np.float32)))

    def _on_ready(self, result) -> None:
        token, region, values = result
        if token != self._token:
            return  # the view or the frame moved on meanwhile
        self.region, self._values = region, values
        self._draw(region, values)
        self.changed.emit()

    def _draw(self, region, values: np.ndarray) -> None:
        rgba, has_nan = colorize(values, self.heatmap.lut, self.heatmap.levels)
        if has_nan:  # holes drawn as the plot's background: the coarse tile must not show through
            nan = np.isnan(values)
            rgba[nan, :3] = self._background
            rgba[nan, 3] = 255
        r0, r1, c0, c1 = region
        self.overlay.setImage(rgba)
        self.overlay.setRect(QRectF(c0 - 0.5, r0 - 0.5, c1 - c0, r1 - r0))
        self.overlay.show()
