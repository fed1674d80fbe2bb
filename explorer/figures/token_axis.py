"""An axis labelled with tokens: every token shown, rotated when they do not fit side by side.

Built on pyqtgraph's supported extension points: `tickValues` / `tickStrings`
(the way DateAxisItem does it) and `generateDrawSpecs` / `drawPicture`, which
AxisItem's docstring names as the methods to override for control over the
drawing (one level of integer ticks takes a few lines here, not pyqtgraph's
general algorithm, which measured every label through the painter: five times
the cost); the axis is sized through the public `setWidth` / `setHeight`.

The rule a reader can rely on:

- a horizontal (bottom/top) axis shows every visible token side by side when
  each fits in its cell; otherwise every token rotated 90° (reading upwards);
  only when even a rotated line of text is taller than a cell is wide does it
  show every k-th token (k from 1, 2, 5, 10, 20, ...), and the hover readout
  names the others;
- a vertical axis shows every token when a line of text fits in a cell, else
  every k-th one by the same rule.

Long tokens are shortened to 10 characters with "…". A label that would run more than
EDGE_PX past the end of the axis (a token at the edge of a zoomed view) is left out, as
pyqtgraph does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from .plots import LeanAxis

_NICE_STEPS = tuple(m * 10**p for p in range(7) for m in (1, 2, 5))
MAX_CHARS = 10
GAP_PX = 6.0  # between two labels side by side
EDGE_PX = 15.0  # a label may run this far past the axis' end (pyqtgraph's margin); further: left out

_A = Qt.AlignmentFlag
_NO_CLIP = Qt.TextFlag.TextDontClip
#: drawText flags of a label below / above / left of / right of its tick
_FLAGS = {"bottom": int((_A.AlignHCenter | _A.AlignTop | _NO_CLIP).value),
          "top": int((_A.AlignHCenter | _A.AlignBottom | _NO_CLIP).value),
          "left": int((_A.AlignRight | _A.AlignVCenter | _NO_CLIP).value),
          "right": int((_A.AlignLeft | _A.AlignVCenter | _NO_CLIP).value)}


def shorten(token: str) -> str:
    """What a tick shows for a token: at most MAX_CHARS characters."""
    return token if len(token) <= MAX_CHARS else token[: MAX_CHARS - 1] + "…"


def thinning_step(need_px: float, px_per_cell: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, ... cells that gives a label `need_px` of room."""
    raw = need_px / max(px_per_cell, 1e-9)
    return next((s for s in _NICE_STEPS if s >= raw), _NICE_STEPS[-1])


class TokenAxis(LeanAxis):
    """Integer ticks labelled with tokens (or positions), see the module docstring."""


    def __init__(self, orientation: str, **kw) -> None:
        super().__init__(orientation, **kw)
        self._labels: list[str] | None = None
        self.rotated = False  # the labels of a horizontal axis are drawn upright (read upwards)
        self.step = 1  # every step-th token is labelled
        self._reserved: int | None = None
        self._reserved_for: int | None = None  # how many labels the axis had when it reserved that
        self.setStyle(tickTextOffset=3, hideOverlappingLabels=False)
        self.enableAutoSIPrefix(False)  # positions, not quantities: never "query (x0.001)"

    @property
    def horizontal(self) -> bool:
        return self.orientation in ("bottom", "top")

    def set_labels(self, labels: Sequence[str] | None) -> None:
        labels = None if labels is None else [str(s) for s in labels]
        if labels != self._labels:
            self._labels = labels  # (shortened when drawn: a long frame has 65,536, a few show)
            self.setTicks(None)  # (automatic ticks, i.e. tickValues: pyqtgraph redraws the axis)

    def shown_labels(self) -> list[str]:
        """The label of every tick at the current zoom, in order (what a user reads)."""
        lo, hi = sorted(self.range)
        size = self.geometry().width() if self.horizontal else self.geometry().height()
        values = [v for _spacing, vs in self.tickValues(lo, hi, size) for v in vs]
        return self.tickStrings(values, 1.0, 1.0)

    def _font(self) -> QFont:
        return self.style["tickFont"] or QFont()

    # ---- which ticks --------------------------------------------------------------------------
    def tickValues(self, minVal, maxVal, size):
        if minVal > maxVal:  # an inverted view (invertY) passes the range reversed
            minVal, maxVal = maxVal, minVal
        n = len(self._labels) if self._labels is not None else None
        lo = max(0, math.ceil(minVal))
        hi = math.floor(maxVal) if n is None else min(n - 1, math.floor(maxVal))
        if hi < lo or size <= 0:
            return []
        px_per_cell = size / max(maxVal - minVal, 1e-9)
        metrics = QFontMetricsF(self._font())
        line = metrics.height()
        if not self.horizontal:  # (a pixel between two lines: they must not touch)
            self.step = thinning_step(line + 1, px_per_cell)
        elif GAP_PX >= px_per_cell:  # not even the gap fits beside a cell: rotated, whatever the texts
            self.rotated = True
            self.step = thinning_step(line + 2, px_per_cell)
        else:
            if hi - lo <= 2000:
                texts = self.tickStrings(range(lo, hi + 1), 1.0, 1.0)
            else:  # thousands of cells: the label with the most characters stands for all
                texts = [max(self.tickStrings(range(lo, hi + 1), 1.0, 1.0), key=len)]
            widest = max((metrics.horizontalAdvance(t) for t in texts), default=0.0)
            self.rotated = widest + GAP_PX > px_per_cell
            self.step = thinning_step(line + 2, px_per_cell) if self.rotated else 1
        start = (lo + self.step - 1) // self.step * self.step
        return [(float(self.step), [float(v) for v in range(start, hi + 1, self.step)])]

    def tickStrings(self, values, scale, spacing):
        if self._labels is None:
            return [str(round(v)) for v in values]
        labels, n = self._labels, len(self._labels)
        return [shorten(labels[i]) if 0 <= i < n else "" for i in map(round, values)]

    # ---- size -----------------------------------------------------------------------------------
    def _reserve(self, across: float) -> None:
        """Room for `across` px of label text beside the axis line, through the public
        setHeight / setWidth (a fixed size is all of the axis: its title is added here)."""
        title = self.label.boundingRect().height() if self.label.isVisible() else 0.0
        gap = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][int(self.horizontal)]
        need = math.ceil(across + gap + title + 4)
        # held while the axis shows as many tokens: a step-through moving its block from rows
        # 0–3 to rows 12–15 must not re-lay out every plot at each step as the labels' width
        # changes; a sequence of another length is measured afresh
        count = None if self._labels is None else len(self._labels)
        if need < (self._reserved or 0) and count == self._reserved_for:
            return
        if need != self._reserved:
            self._reserved, self._reserved_for = need, count
            if self.horizontal:
                self.setHeight(need)
            else:
                self.setWidth(need)

    # ---- drawing ----------------------------------------------------------------------------------
    def generateDrawSpecs(self, p):
        """The axis line, one tick and one label per shown token: the specs pyqtgraph's
        drawPicture takes, in the axis' own coordinates."""
        bounds = self.mapRectFromParent(self.geometry())
        lo, hi = self.range
        # the axis' length in device pixels (as pyqtgraph measures it: an export draws larger)
        ends = (bounds.topLeft(), bounds.topRight() if self.horizontal else bounds.bottomLeft())
        p0, p1 = (self.mapToDevice(e) for e in ends)
        if p0 is None or p1 is None or hi == lo:
            return None
        length = math.hypot(p1.x() - p0.x(), p1.y() - p0.y())
        if length <= 0:
            return None
        values = [v for _s, vs in self.tickValues(min(lo, hi), max(lo, hi), length) for v in vs]
        strings = self.tickStrings(values, 1.0, 1.0)
        metrics = QFontMetricsF(self._font())
        line = metrics.height()
        tick_len = self.style["tickLength"]
        gap = max(0, tick_len) + self.style["tickTextOffset"][int(self.horizontal)]
        flags = _FLAGS[self.orientation]
        tick_pen = self.tickPen()
        ticks, texts, widest = [], [], 0.0
        if self.horizontal:
            out = 1 if self.orientation == "bottom" else -1  # away from the plot
            y0 = bounds.top() if out > 0 else bounds.bottom()
            axis = (self.pen(), QPointF(bounds.left() - 1, y0 + out), QPointF(bounds.right() + 1, y0 + out))
            for v, text in zip(values, strings):
                x = bounds.left() + (v - lo) / (hi - lo) * bounds.width()
                ticks.append((tick_pen, QPointF(x, y0), QPointF(x, y0 + out * tick_len)))
                w = metrics.horizontalAdvance(text)
                widest = max(widest, w)
                if self.rotated:  # the box the upright text covers: a line wide, the text long
                    box = QRectF(x - line / 2, y0 + gap if out > 0 else y0 - gap - w, line, w)
                else:
                    box = QRectF(x - w / 2, y0 + gap if out > 0 else y0 - gap - line, w, line)
                if box.left() >= bounds.left() - EDGE_PX and box.right() <= bounds.right() + EDGE_PX:
                    texts.append((box, flags, text))
            self._reserve(widest if self.rotated else line)
        else:
            out = -1 if self.orientation == "left" else 1
            x0 = bounds.right() if out < 0 else bounds.left()
            axis = (self.pen(), QPointF(x0 + out, bounds.top() - 1), QPointF(x0 + out, bounds.bottom() + 1))
            for v, text in zip(values, strings):
                y = bounds.top() + (1 - (v - lo) / (hi - lo)) * bounds.height()
                ticks.append((tick_pen, QPointF(x0, y), QPointF(x0 + out * tick_len, y)))
                w = metrics.horizontalAdvance(text)
                widest = max(widest, w)
                box = QRectF(x0 - gap - w if out < 0 else x0 + gap, y - line / 2, w, line)
                if box.top() >= bounds.top() - EDGE_PX and box.bottom() <= bounds.bottom() + EDGE_PX:
                    texts.append((box, flags, text))
            self._reserve(widest)
        return axis, ticks, texts if self.style["showValues"] else []

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs) -> None:
        if not self.rotated:
            super().drawPicture(p, axisSpec, tickSpecs, textSpecs)
            return
        super().drawPicture(p, axisSpec, tickSpecs, [])
        p.setFont(self._font())
        p.setPen(self.textPen())
        for rect, _flags, text in textSpecs:
            p.save()
            p.translate(rect.center())
            p.rotate(-90)
            # in the rotated frame x runs up the figure: the text ends next to the axis
            box = QRectF(-rect.height() / 2, -rect.width() / 2, rect.height(), rect.width())
            p.drawText(box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), text)
            p.restore()

    def label_boxes(self) -> list[tuple[str, QRectF]]:
        """Each visible tick label's box in scene coordinates (for layout checks)."""
        from PySide6.QtGui import QImage, QPainter

        img = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
        painter = QPainter(img)
        try:
            specs = self.generateDrawSpecs(painter)
        finally:
            painter.end()
        if specs is None:
            return []
        return [(text, self.mapRectToScene(rect)) for rect, _f, text in specs[2]]


__all__ = ["TokenAxis", "shorten", "thinning_step"]
