"""The length profile's curves: one backend on one log–log plot (its line, its markers with
the numbers on hover, and on the memory plot the dashed line on to its estimates)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from engine.profile import ProfilePoint

from ..figures.themes import Theme

#: each backend's colour (Okabe-Ito) and marker: told apart without colour too
STYLE = {"eager": ("#D55E00", "o"), "sdpa": ("#0072B2", "s"), "flash": ("#009E73", "t"), "tiled": ("#CC79A7", "d"),
         "linear": ("#E69F00", "t1"), "performer": ("#56B4E9", "h"), "local+global": ("#7F7F7F", "p"),
         "hierarchical": ("#8C564B", "star")}


def point_value(p: ProfilePoint, kind: str) -> float | None:
    """The point's y on the `kind` plot ("time": seconds, "memory": bytes), None when it has none."""
    v = p.seconds if kind == "time" else p.peak_bytes
    return float(v) if v is not None and v > 0 else None


class Curves:
    """One backend on one plot: the line through its measured points, the markers (hover
    for the numbers) and, on the memory plot, the dashed line on to its estimates."""

    def __init__(self, plot, backend: str, tip) -> None:
        self.backend = backend
        self.line = plot.plot([], [])
        self.ahead = plot.plot([], [])  # measured → estimated (dashed)
        self.spots = pg.ScatterPlotItem(hoverable=True, tip=tip)
        self.spots.setZValue(5)
        plot.addItem(self.spots)

    def set_data(self, kind: str, points: list[ProfilePoint], theme: Theme) -> list[ProfilePoint]:
        """Draw `points` (this backend's, by S); returns the estimated ones drawn."""
        colour, symbol = STYLE[self.backend]
        measured = [(p, v) for p in points if not p.estimated and (v := point_value(p, kind)) is not None]
        estimated = [p for p in points if p.estimated and kind == "memory"]
        xs = np.log10([p.seq_len for p, _v in measured]) if measured else np.zeros(0)
        ys = np.log10([v for _p, v in measured]) if measured else np.zeros(0)
        self.line.setData(xs, ys)
        self.line.setPen(theme.pen(colour, 2))
        size = 9 * theme.font_scale
        spots = [{"pos": (x, y), "data": p, "symbol": symbol, "size": size, "pen": theme.pen(colour, 1.5),
                  "brush": pg.mkBrush(colour)} for (p, _v), x, y in zip(measured, xs, ys, strict=True)]
        hollow = pg.mkBrush(theme.background)
        for p in estimated:
            spots.append({"pos": (math.log10(p.seq_len), math.log10(p.estimate_bytes)), "data": p,
                          "symbol": symbol, "size": size * 1.3, "pen": theme.pen(colour, 2), "brush": hollow})
        self.spots.setData(spots=spots)
        if estimated:
            chain = ([measured[-1][0]] if measured else []) + estimated
            self.ahead.setData(np.log10([p.seq_len for p in chain]),
                               np.log10([p.estimate_bytes if p.estimated else p.peak_bytes for p in chain]))
            self.ahead.setPen(theme.pen(colour, 1.5, Qt.PenStyle.DashLine))
        else:
            self.ahead.setData([], [])
        return estimated
