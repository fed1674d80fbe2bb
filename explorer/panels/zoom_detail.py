"""Full resolution under a zoom: a long frame's heatmap shows block maxima until the view is
small enough to draw every cell, then the exact weights of the visible cells, computed off
the UI thread for that region only (the rows it spans, a block at a time in the engine).

The heads panel owns one; `request` after every view change (debounced), `clear` when the
frame or the head changes. The region is computed by a worker thread (explorer/work/base.py,
made on first use): the latest region wins, and one a newer request or `clear` superseded
is never drawn. Nothing is drawn past the view: the overlay covers the region computed and
is hidden again when the view grows past DETAIL_CELLS on a side.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QObject, QRectF, QTimer, Signal

from ..figures.heatmap import Heatmap, RgbaImage, colorize
from ..work.base import Worker

#: A zoomed view of at most this many cells on each side is drawn cell by cell.
DETAIL_CELLS = 512
#: Quiet time after the last view change before the region is computed.
DEBOUNCE_MS = 120


class ZoomDetail(QObject):
    """The exact cells of a zoomed long heatmap, as an overlay of its view."""

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
        self._job: tuple | None = None  # (frame, head, region) waiting for the view to settle
        self._worker: Worker | None = None
        self._background = (0, 0, 0)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)

    @property
    def active(self) -> bool:
        """Whether the exact cells of a region are on screen."""
        return self.overlay.isVisible()

    def clear(self) -> None:
        """Forget the region (another frame, head or colour scale)."""
        self._job = None
        if self._worker is not None:
            self._worker.supersede()  # a region under way is of the old frame
        self._timer.stop()
        self.region = self._values = None
        self.overlay.hide()

    def region_max(self) -> float:
        """The largest finite weight of the exact region on screen (NaN when none is)."""
        if not self.active or self._values is None:
            return math.nan
        finite = self._values[np.isfinite(self._values)]
        return float(finite.max()) if finite.size else math.nan

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
        # a margin of half a view on each side: small pans stay exact without a new pass
        dr, dc = (r1 - r0) // 2, (c1 - c0) // 2
        region = (max(0, r0 - dr), min(rows, r1 + dr), max(0, c0 - dc), min(cols, c1 + dc))
        self._job = (frame, head, region)
        if self._worker is not None:
            self._worker.supersede()  # a region under way is of the old view
        self._timer.start()

    def worker(self) -> Worker:
        if self._worker is None:
            self._worker = Worker()
            # a failure (memory refused, a closed trace) is not connected: the level of detail stays
            self._worker.done.connect(lambda _rid, result: self._on_ready(*result))
            self.destroyed.connect(self._worker.retire)
        return self._worker

    def _start(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            self.worker().submit(lambda _job: exact_region(*job))

    def _on_ready(self, region, values: np.ndarray) -> None:
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


def exact_region(frame, head: int, region) -> tuple[tuple[int, int, int, int], np.ndarray]:
    """(region, the exact weights of its cells: NaN where masked), in the worker thread."""
    r0, r1, c0, c1 = region
    w = frame.trace.head_rows("weights", head, slice(r0, r1))[:, c0:c1].float().numpy()
    w = np.where(frame.mask[r0:r1, c0:c1] | (w != 0), w, np.float32(np.nan))  # masked: a hole
    return region, np.ascontiguousarray(w, np.float32)
