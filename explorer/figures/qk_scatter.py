"""Queries and keys as points in one plane (a PCA of both), each labelled with its token.

    fig = QKScatter(on_hover=f, on_click=g)   # f(i or None), g(i): i indexes the points
    layout.addItem(fig.cell, 0, 0); layout.addItem(fig.legend, 1, 0)
    fig.set_points(xy, is_key, groups, labels, faded=None)  # xy (n, 2) plane units
    fig.set_marks(selected=[i, …], hovered=[…]); fig.set_origin((x, y) | None)
    fig.set_rays([i, …])                      # dashed lines from the origin to these points

A query is a filled marker in the theme's second colour, a key a hollow one in the accent
colour; the marker's shape says which text (`SHAPES`, one per text). The plane keeps its
aspect (one unit is as long across as up), so distances and angles read truly. Labels are
one item (`PointLabels`) laid out in logical pixels at paint time (a zoom does not scale
them), each beside its point where it covers no other label and no other marker (the
selected points first, and their labels may cover markers); a label with no free place is
left out, as is one for the same token on the same spot (the hover readout names every
point). Not cached as pixmaps (a view clips its children, see `plots.cache_static_items`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF

from .plots import LeanPlotItem, cache_static_items, same_sources, style_plot
from .text import RunsLabel, titled
from .themes import SLIDES, Theme

__all__ = ["SHAPES", "SHAPE_GLYPHS", "PointLabels", "QKScatter"]

#: the marker of each text (pyqtgraph symbols), and how a legend writes it
SHAPES = ("o", "t", "s", "d", "star", "p", "h", "t1")
SHAPE_GLYPHS = ("●", "▼", "■", "◆", "★", "⬟", "⬢", "▲")
#: marker diameter and the selection's ring diameter in logical pixels
SIZE = 9.0
RING = SIZE + 11.0
#: labels are left out (hover names the point) above this many points
MAX_LABELS = 160


class PointLabels(pg.GraphicsObject):
    """One text beside each of many points (see the module docstring)."""

    PAD = 5.0  # logical px between a marker (and its pen) and its label

    def __init__(self) -> None:
        super().__init__()
        self._xy = np.zeros((0, 2))
        self._texts: list[str] = []
        self._colours: list[str] = []
        self._order: list[int] = []
        self._font = QFont()
        self._rect = QRectF()
        self._placed: list[tuple[int, QRectF]] = []
        self._version = 0  # bumped by set_labels: what the placement was computed from
        self._placed_for: tuple | None = None  # (version, transform, view box) of _placed
        self._ringed: set[int] = set()
        self._scale = 1.0
        self.setZValue(12)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_labels(self, xy: np.ndarray, texts: Sequence[str], colours: Sequence[str], font: QFont,
                   first: Sequence[int] = (), ringed: Sequence[int] = (), scale: float = 1.0) -> None:
        """Points xy (n, 2) in view units, their texts and "#rrggbb" colours; the indices in
        `first` are placed before the others (then in order); `ringed` points wear a ring
        that their own and other labels keep clear of. Markers are `SIZE` × `scale` logical
        px across, rings `RING` × `scale`."""
        self._ringed = {int(i) for i in ringed}
        self._scale = float(scale)
        self._xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        self._texts, self._colours, self._font = list(texts), list(colours), QFont(font)
        first = [i for i in dict.fromkeys(first) if 0 <= i < len(self._texts)]
        self._order = first + [i for i in range(len(self._texts)) if i not in set(first)]
        self._version += 1
        self._update_rect()

    def texts(self) -> list[str]:
        return list(self._texts)

    def _update_rect(self) -> None:
        vb = self.getViewBox()
        rect = QRectF() if vb is None else self.mapRectFromScene(vb.sceneBoundingRect())
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.update()

    def viewRangeChanged(self) -> None:
        self._update_rect()

    def viewTransformChanged(self) -> None:
        self._update_rect()

    def boundingRect(self) -> QRectF:
        return QRectF(self._rect)

    def arrange(self) -> list[tuple[int, QRectF]]:
        """[(point index, its label's box in scene units)] for the labels shown now."""
        vb = self.getViewBox()
        n = len(self._texts)
        if vb is None or n == 0:
            return []
        to_scene = self.sceneTransform()
        area = vb.sceneBoundingRect().adjusted(1, 1, -1, -1)
        fm = QFontMetricsF(self._font)
        h = fm.height()
        centres = [to_scene.map(QPointF(float(x), float(y))) for x, y in self._xy]
        # every marker (and ring) is an obstacle too: a label never covers another point
        sizes = [(RING if i in self._ringed else SIZE) * self._scale for i in range(n)]
        dots = [QRectF(c.x() - d / 2, c.y() - d / 2, d, d) for c, d in zip(centres, sizes, strict=True)]
        taken: list[QRectF] = []
        placed = []
        for i in self._order:
            text = self._texts[i]
            if not text:
                continue
            c = centres[i]
            if any(self._texts[j] == text and abs(centres[j].x() - c.x()) < 2 and abs(centres[j].y() - c.y()) < 2
                   for j, _box in placed):
                continue  # the same token on the same spot (equal vectors): one label
            w = fm.horizontalAdvance(text) + 2
            r = sizes[i] / 2 + self.PAD
            spots = (QRectF(c.x() + r, c.y() - h / 2, w, h), QRectF(c.x() - r - w, c.y() - h / 2, w, h),
                     QRectF(c.x() - w / 2, c.y() - r - h, w, h), QRectF(c.x() - w / 2, c.y() + r, w, h),
                     QRectF(c.x() + r * 0.7, c.y() - r * 0.7 - h, w, h),
                     QRectF(c.x() - r * 0.7 - w, c.y() - r * 0.7 - h, w, h),
                     QRectF(c.x() + r * 0.7, c.y() + r * 0.7, w, h),
                     QRectF(c.x() - r * 0.7 - w, c.y() + r * 0.7, w, h))
            # a ringed (selected) point's label may cover other markers when nothing else is free
            for over_dots in (False, True) if i in self._ringed else (False,):
                box = next((b for b in spots if area.contains(b) and not any(b.intersects(t) for t in taken)
                            and (over_dots or not any(j != i and b.intersects(d) for j, d in enumerate(dots)))),
                           None)
                if box is not None:
                    taken.append(box)
                    placed.append((i, box))
                    break
        return placed

    def placed(self) -> list[tuple[int, QRectF]]:
        """What the last paint placed: [(point index, box in scene units)]."""
        return list(self._placed)

    def paint(self, p, *args) -> None:
        if not any(self._texts):
            self._placed = []
            return
        inv, ok = self.sceneTransform().inverted()
        if not ok:
            return
        vb = self.getViewBox()
        t = self.sceneTransform()
        box = vb.sceneBoundingRect() if vb is not None else QRectF()
        key = (self._version, t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(),
               box.x(), box.y(), box.width(), box.height())
        if key != self._placed_for:  # placing is O(n²) in the labels: only when something moved
            self._placed, self._placed_for = self.arrange(), key
        p.save()
        p.setTransform(inv * p.transform())  # scene units: the view's scaling left out
        p.setFont(self._font)
        for i, box in self._placed:
            p.setPen(QColor(self._colours[i] if i < len(self._colours) else "#888888"))
            p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), self._texts[i])
        p.restore()


class QKScatter:
    """The plot, its title, the points, the marks and the legend below (module docstring)."""

    def __init__(self, on_hover: Callable[[int | None], None] | None = None,
                 on_click: Callable[[int], None] | None = None) -> None:
        self.on_hover, self.on_click = on_hover, on_click
        self.plot = LeanPlotItem()
        self.cell = titled(self.plot)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.vb = self.plot.getViewBox()
        self.vb.setAspectLocked(True)
        self.rays = pg.PlotDataItem(connect="pairs")
        self.rays.setZValue(2)
        self.plot.addItem(self.rays)
        self.scatter = pg.ScatterPlotItem(pxMode=True, hoverable=True)
        self.scatter.setZValue(5)
        self.scatter.sigHovered.connect(self._hovered)
        self.scatter.sigClicked.connect(self._clicked)
        self.plot.addItem(self.scatter)
        self.origin = pg.ScatterPlotItem(pxMode=True, symbol="+", size=14)
        self.origin.setZValue(7)  # over the points: the arrows start there
        self.plot.addItem(self.origin)
        self.marks = pg.ScatterPlotItem(pxMode=True)
        self.marks.setZValue(8)
        self.marks.setAcceptHoverEvents(False)
        self.plot.addItem(self.marks)
        self.labels = PointLabels()
        self.vb.addItem(self.labels, ignoreBounds=True)
        self.legend = RunsLabel(justify="left")
        self.theme: Theme | None = None
        self.xy = np.zeros((0, 2))
        self.is_key = np.zeros(0, dtype=bool)
        self.groups = np.zeros(0, dtype=int)
        self.faded = np.zeros(0, dtype=bool)
        self._faded_source: tuple | None = None  # what `faded` was taken from (see set_faded)
        self.texts: list[str] = []
        self.selected: list[int] = []
        self.hovered: list[int] = []
        self.origin_xy: tuple[float, float] | None = None
        self._ray_to: list[int] = []
        self._last_hover: int | None = None

    # ---- data ------------------------------------------------------------------------------
    def set_points(self, xy: np.ndarray, is_key: np.ndarray, groups: np.ndarray, labels: Sequence[str],
                   faded: np.ndarray | None = None, faded_source: tuple | None = None) -> None:
        """xy (n, 2) plane units; is_key (n,) bool; groups (n,) int, the text of each point;
        labels (n,) their tokens; faded (n,) bool: drawn pale (a masked key)."""
        self.xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        n = len(self.xy)
        self.selected = [i for i in self.selected if i < n]
        self.hovered = [i for i in self.hovered if i < n]
        self._ray_to = [i for i in self._ray_to if i < n]
        self.is_key = np.asarray(is_key, dtype=bool).reshape(n)
        self.groups = np.asarray(groups, dtype=int).reshape(n)
        self.faded = np.zeros(n, dtype=bool) if faded is None else np.asarray(faded, dtype=bool).reshape(n)
        self._faded_source = faded_source
        self.texts = [str(t) for t in labels]
        self._draw_points()
        self.frame_points()

    def frame_points(self) -> None:
        """Fit the view to the points and the origin, with room for the labels."""
        xy = self.xy if self.origin_xy is None else np.vstack([self.xy, [self.origin_xy]])
        xy = xy[np.isfinite(xy).all(1)]  # (a point with no place is not drawn: see _draw_points)
        if len(xy) == 0:
            return
        lo, hi = xy.min(0), xy.max(0)
        span = np.maximum(hi - lo, 1e-9)
        span = np.maximum(span, 0.02 * span.max())
        pad = (0.14, 0.08)
        self.vb.setRange(xRange=(lo[0] - pad[0] * span[0], hi[0] + pad[0] * span[0]),
                         yRange=(lo[1] - pad[1] * span[1], hi[1] + pad[1] * span[1]), padding=0)

    def set_faded(self, faded: np.ndarray, source: tuple | None = None) -> None:
        """Which points are pale (n,) bool. With `source` (what they were taken from, e.g.
        `(embedding, query)`; compared by plots.same_sources, by identity) the points are kept
        while it is the one drawn last, the mask unread. Without one the small mask is compared
        by value: the live Q·K space's frame changes with every slider step while its masked
        keys rarely do, so a key by frame would repaint the points more often, not less."""
        faded = np.asarray(faded, dtype=bool).reshape(len(self.xy))
        if source is not None:
            if same_sources(self._faded_source, source):
                return
        elif np.array_equal(faded, self.faded):
            return
        self._faded_source = source
        self.faded = faded
        self._draw_points()

    def set_origin(self, xy: tuple[float, float] | None) -> None:
        """Where the zero vector lands ("+"); None hides it."""
        self.origin_xy = None if xy is None else (float(xy[0]), float(xy[1]))
        self._draw_origin()

    def set_marks(self, selected: Sequence[int] = (), hovered: Sequence[int] | None = None) -> None:
        """Ring the selected points (and the hovered ones: `hovered`, None keeps them)."""
        n = len(self.xy)
        self.selected = [int(i) for i in selected if 0 <= i < n]
        if hovered is not None:
            self.hovered = [int(i) for i in hovered if 0 <= i < n]
        self._draw_marks()
        self._draw_labels()

    def set_rays(self, points: Sequence[int]) -> None:
        """Dashed lines from the origin to these points (a query and a key: their score is
        the product of the two arrows)."""
        self._ray_to = [int(i) for i in points if 0 <= i < len(self.xy)]
        self._draw_rays()

    def set_title(self, text: str) -> None:
        from .plots import set_plot_title

        set_plot_title(self.plot, text, self.theme)

    def set_legend(self, text: str) -> None:
        th = self.theme
        if th is None:
            self.legend.setText(text)
        else:
            self.legend.setText(text, color=th.foreground, size=th.pt(8.5))

    def clear(self) -> None:
        self.set_rays([])
        self.set_origin(None)
        self.set_points(np.zeros((0, 2)), np.zeros(0, bool), np.zeros(0, int), [])
        self.set_marks([], [])

    # ---- drawing ---------------------------------------------------------------------------
    def px(self) -> float:
        """Marker px per `SIZE` px: the theme's font scale (slides: larger). An export's
        raster scale is left out: pyqtgraph's export mode multiplies a pxMode marker's size
        and pen by it (`resolutionScale`), unlike the cosmetic pens of lines."""
        return 1.0 if self.theme is None else self.theme.font_scale

    def marker_pen(self, colour, width: float, style: Qt.PenStyle | None = None):
        """A marker's pen: `width` × the theme's own line scale (slides: 2), the raster
        scale left out (see `px`)."""
        th = self.theme
        base = SLIDES.line_scale if th is not None and th.name == SLIDES.name else 1.0
        kw = {} if style is None else {"style": style}
        return pg.mkPen(colour, width=width * base, **kw)

    def colour_of(self, is_key: bool) -> str:
        th = self.theme
        if th is None:
            return "#d62728" if is_key else "#1f77b4"
        return th.accent if is_key else th.accent2

    def _draw_points(self) -> None:
        th = self.theme
        # a point whose coordinates are not finite (a NaN query or key) has no place: drawn
        # not at all (pyqtgraph took its bounds with nanmin: "All-NaN slice" at every paint)
        drawn = np.flatnonzero(np.isfinite(self.xy).all(1))
        if th is None or drawn.size == 0:
            self.scatter.setData([], [])
            self._draw_labels()
            return
        kinds = {}
        for key in (False, True):
            for pale in (False, True):
                c = QColor(self.colour_of(key))
                if pale:
                    c.setAlphaF(0.28)
                fill = QColor(0, 0, 0, 0) if key else QColor(c)  # a key is hollow: what lies under it shows
                kinds[key, pale] = (self.marker_pen(c, 1.8 if key else 0.8), pg.mkBrush(fill))
        key, faded, groups = self.is_key[drawn], self.faded[drawn], self.groups[drawn]
        pens = [kinds[bool(k), bool(f)][0] for k, f in zip(key, faded, strict=True)]
        brushes = [kinds[bool(k), bool(f)][1] for k, f in zip(key, faded, strict=True)]
        symbols = [SHAPES[g % len(SHAPES)] for g in groups]
        self.scatter.setData(x=self.xy[drawn, 0], y=self.xy[drawn, 1], symbol=symbols, pen=pens, brush=brushes,
                             size=SIZE * self.px(), data=drawn,
                             hoverPen=self.marker_pen(th.foreground, 2), hoverSize=(SIZE + 3) * self.px())
        self._draw_marks()
        self._draw_labels()
        self._draw_rays()

    def _draw_marks(self) -> None:
        th = self.theme
        if th is None:
            return
        ring = [(i, self.marker_pen(th.foreground, 2.2)) for i in self.selected]
        ring += [(i, self.marker_pen(th.muted, 1.6, Qt.PenStyle.DashLine)) for i in self.hovered
                 if i not in self.selected]
        ring = [(i, p) for i, p in ring if np.isfinite(self.xy[i]).all()]
        if not ring:
            self.marks.setData([], [])
            return
        idx = [i for i, _p in ring]
        self.marks.setData(x=self.xy[idx, 0], y=self.xy[idx, 1], symbol="o", size=RING * self.px(),
                           pen=[p for _i, p in ring], brush=pg.mkBrush(None))

    def _draw_labels(self) -> None:
        th = self.theme
        if th is None:
            return
        muted, fg = th.muted, th.foreground
        colours = [muted if f else fg for f in self.faded]
        first = [*self.selected, *self.hovered]
        texts = self.texts
        if len(texts) > MAX_LABELS:  # too many to label: the selected and hovered ones only
            keep = set(first)
            texts = [t if i in keep else "" for i, t in enumerate(texts)]
        self.labels.set_labels(self.xy, texts, colours, th.font(8.0), first, first, th.font_scale)

    def _draw_origin(self) -> None:
        th = self.theme
        if self.origin_xy is None or th is None or not np.isfinite(self.origin_xy).all():
            self.origin.setData([], [])
        else:
            self.origin.setData([self.origin_xy[0]], [self.origin_xy[1]], pen=self.marker_pen(th.foreground, 2.0),
                                brush=pg.mkBrush(None), size=16 * self.px())
        self._draw_rays()

    def _draw_rays(self) -> None:
        th = self.theme
        if th is None or self.origin_xy is None or not np.isfinite(self.origin_xy).all() or not self._ray_to:
            self.rays.setData([], [])
            return
        ox, oy = self.origin_xy
        xs, ys = [], []
        for i in self._ray_to:
            if not np.isfinite(self.xy[i]).all():
                continue  # (a point not drawn)
            xs += [ox, self.xy[i, 0]]
            ys += [oy, self.xy[i, 1]]
        self.rays.setData(xs, ys, pen=th.pen(th.muted, 1.2, Qt.PenStyle.DashLine))

    # ---- interaction -------------------------------------------------------------------------
    def _hovered(self, _item, points, _ev) -> None:
        i = int(points[0].data()) if len(points) else None
        if i != self._last_hover:
            self._last_hover = i
            if self.on_hover is not None:
                self.on_hover(i)

    def _clicked(self, _item, points, _ev) -> None:
        if len(points) and self.on_click is not None:
            self.on_click(int(points[0].data()))

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        style_plot(self.plot, theme)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        if self.legend.text:
            self.set_legend(self.legend.text)
        self._draw_points()
        self._draw_origin()
        scene = self.plot.scene()
        if scene is not None:
            cache_static_items(scene)
