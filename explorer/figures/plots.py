"""Small pyqtgraph helpers shared by the panels: styling, stable ranges, bars, axes, caching.

Repainting is the expensive part of a frame (text above all), so the helpers
avoid it where nothing changed: titles are only re-set when their text
changes, ranges and colour levels snap to "nice" values with hysteresis (no
axis relayout for a small change of the data), and axes and labels are
cached as pixmaps (DeviceCoordinateCache) between changes. The titles' and
labels' rich text is laid out by `text` (RunsLabel, TileLabel, titled).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsTextItem

from engine.numbers import number

# (their home is text.py; re-exported for the modules that import them from here still)
from .text import title_label, titled, use_runs_title
from .themes import Theme

_NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def nice_ceil(x: float) -> float:
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (× 10^k) that is ≥ x (x > 0)."""
    if not math.isfinite(x) or x <= 0:
        return 1.0
    e = math.floor(math.log10(x))
    for m in _NICE:
        v = m * 10.0**e
        if v >= x * (1 - 1e-9):
            return v
    return 10.0 ** (e + 1)


def sticky_max(current: float | None, needed: float, shrink: float = 0.4, room: float = 1.0) -> float:
    """An upper bound that only moves when `needed` exceeds it or falls below shrink × it.

    The first bound (and one after a shrink) is the nice value ≥ needed; one that had to grow
    is the nice value ≥ room × needed (room > 1: a need that jitters from frame to frame, e.g.
    a histogram's peak across seeds, then moves the bound and its ticks less often)."""
    if current is None or needed < shrink * current:
        return nice_ceil(needed)
    return current if needed <= current else nice_ceil(room * needed)


def sticky_range(current: tuple[float, float] | None, lo: float, hi: float,
                 fill: float = 0.45) -> tuple[float, float]:
    """A (lo, hi) view range with hysteresis: kept while it contains the data and the data
    fills at least `fill` of it; otherwise snapped outward to nice values."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return current or (-1.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    if current is not None:
        c0, c1 = current
        if c0 <= lo and hi <= c1 and (hi - lo) >= fill * (c1 - c0):
            return current
    pad = 0.04 * (hi - lo)
    step = nice_ceil((hi - lo + 2 * pad) / 8)
    return (math.floor((lo - pad) / step) * step, math.ceil((hi + pad) / step) * step)


def symmetric_levels(m: float) -> tuple[float, float]:
    """(−M, M) with M a nice value ≥ m: stable colour levels for signed matrices."""
    v = nice_ceil(m)
    return (-v, v)


#: what a key of `same_sources` may hold by value; anything else (a frame, an array) by identity
_PLAIN = (int, float, str, bytes, bool, type(None))


def same_sources(a: tuple | None, b: tuple) -> bool:
    """Whether two keys of what a drawing was made from are the same, element by element:
    plain values (int, float, str, None; tuples of them) by value, anything else — a frame,
    a frame's array, a theme — by identity, never by content. A panel hands the objects its
    state gave it (`state.frame`, the selection's ints, `state.reference`): a new frame is a
    new object, so a drawing of it is redone without comparing a single number."""
    if a is None or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if isinstance(x, tuple) and isinstance(y, tuple):
            if not same_sources(x, y):
                return False
        elif not (isinstance(x, _PLAIN) and type(x) is type(y) and x == y):
            return False
    return True


class Drawn:
    """What a panel's items were last drawn from, per slot: the redraw-by-what-changed
    bookkeeping (issue 44). `changed(slot, *sources)` is True — and remembers `sources` — when
    they differ from the slot's last (see `same_sources`: identities, no content compared);
    `forget()` makes every slot draw again (Reset view, a theme)."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple] = {}

    def changed(self, slot: str, *sources) -> bool:
        if same_sources(self._keys.get(slot), sources):
            return False
        self._keys[slot] = sources
        return True

    def forget(self, slot: str | None = None) -> None:
        if slot is None:
            self._keys.clear()
        else:
            self._keys.pop(slot, None)


def set_curve(curve: pg.PlotDataItem, x, y, **opts) -> None:
    """``curve.setData(x, y, **opts)``, or no points when no (x, y) is finite (a step whose
    rows are all masked, a sweep with no row that sees a key): pyqtgraph's symbols take the
    bounds of all-NaN data with nanmin/nanmax, and printed "RuntimeWarning: All-NaN slice
    encountered" at every paint (issue 46, item 15). NaN among finite points stay (the gaps
    of ``connect="finite"``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not (np.isfinite(x) & np.isfinite(y)).any():
        curve.setData([], [])
    else:
        curve.setData(x, y, **opts)


def set_line_label(line: pg.InfiniteLine, text: str) -> None:
    """An InfiniteLine's label text, re-set only when it changes (each set re-lays out the text)."""
    if line.label.format != text:
        line.label.setFormat(text)


def _fit_anchor(at: float, size: float, room: float, after: bool) -> float:
    """The anchor fraction (0: the text starts at `at`, 1: it ends there) that keeps a text of
    `size` px inside [0, room]: on the `after` side of `at` when it fits there, else on the
    other side, else shifted over `at` as little as it takes (pixels of the view)."""
    sides = (0.0, 1.0) if after else (1.0, 0.0)
    for anchor in sides:
        start = at - anchor * size
        if start >= 0 and start + size <= room:
            return anchor
    start = min(max(at - size / 2, 0.0), max(room - size, 0.0))
    return min(max((at - start) / size, 0.0), 1.0) if size > 0 else 0.0


class InsideLineLabel(pg.InfLineLabel):
    """A vertical InfiniteLine's label that stays inside its plot: right of the line while
    the line is left of the middle and the text fits there, left of it near the right edge,
    and shifted across the line when the plot is too narrow for either side (a squeezed
    panel). `short`: a shorter text shown when the whole one is wider than the plot.

    pyqtgraph's own label flips side at the view's middle only: a text wider than half the
    plot then ran past its edge. `attach` puts one on a line made without a label.
    """

    def __init__(self, line: pg.InfiniteLine, position: float = 0.5) -> None:
        self.short = ""
        super().__init__(line, text="", position=position, anchors=[(0, 0), (1, 0)])

    @classmethod
    def attach(cls, line: pg.InfiniteLine, position: float = 0.5) -> InsideLineLabel:
        line.label = cls(line, position)  # (the attribute InfiniteLine's own label lives in)
        return line.label

    def updatePosition(self) -> None:
        super().updatePosition()
        view = self.getViewBox()
        if not isinstance(view, pg.ViewBox) or not self.isVisible():
            return
        area = view.boundingRect()  # the plot, in its pixels
        at = view.mapFromItem(self.line, self.pos())
        whole = self.format.format(value=self.line.value())
        text = whole
        if self.short and self._width(whole) > area.width():
            text = self.short
        if self.toPlainText() != text:
            self.setText(text)
        box = self.boundingRect()  # (its own units are pixels: TextItem undoes the view's scale)
        x = at.x() - area.left()
        ax = _fit_anchor(x, box.width(), area.width(), after=x < area.width() / 2)
        ay = _fit_anchor(at.y() - area.top(), box.height(), area.height(), after=True)
        if (ax, ay) != tuple(self.anchor):
            self.setAnchor((ax, ay))

    def _width(self, text: str) -> float:
        if self.toPlainText() != text:
            self.setText(text)
        return self.boundingRect().width()


def set_bar_levels(bar: pg.ColorBarItem, levels: tuple[float, float]) -> None:
    """ColorBarItem.setLevels, skipped when unchanged (it would redraw its axis)."""
    if tuple(bar.levels()) != tuple(levels):
        bar.setLevels(levels)


def set_bar_cmap(bar: pg.ColorBarItem, name: str) -> None:
    """ColorBarItem.setColorMap(name), skipped when the bar shows that map already (it would
    make its pixmap again and redraw its axis: a repaint of the bar on every selection)."""
    shown = bar.colorMap()
    if shown is None or shown.name != name:
        bar.setColorMap(pg.colormap.get(name))


class BarsItem(QGraphicsRectItem):
    """Outline-free bars in a few colours, one drawRects call per colour.

    pyqtgraph's BarGraphItem re-derives its bounds with a pixel-sized pen margin
    on every boundingRect call (Qt asks several times per frame), and a chart
    with a highlighted bar needed three of them; here the bounds are the bars'
    own, computed once per change, and kept as the rectangle of a pen-less
    rectangle item, which Qt reads itself.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self._groups: list[tuple[QBrush, list[QRectF]]] = []
        self._bounds = QRectF()

    def set_groups(self, groups: list[tuple[QBrush, list[QRectF]]], bounds: QRectF | None = None) -> None:
        """groups: (brush, rectangles in data units); bounds: their union, if the caller knows it."""
        self._groups = groups
        if bounds is None:
            bounds = QRectF()
            for _brush, rects in groups:
                for r in rects:
                    bounds = bounds.united(r)
        self._bounds = bounds
        if bounds == self.rect():
            self.update()  # same extent, new bars
        else:
            self.setRect(bounds)

    def bars(self) -> list[tuple[QColor, QRectF]]:
        """The bars drawn: (colour, rectangle in data units), group by group."""
        return [(brush.color(), QRectF(r)) for brush, rects in self._groups for r in rects]

    def set_brushes(self, brushes: list[QBrush]) -> None:
        """New colours for the groups, in order (a theme change); the bars stay."""
        self._groups = [(brush, rects) for brush, (_old, rects) in zip(brushes, self._groups)]
        self.update()

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        if self._bounds.isNull():
            return None, None
        b = self._bounds
        return (b.left(), b.right()) if ax == 0 else (b.top(), b.bottom())

    def paint(self, p, *args) -> None:
        p.setPen(Qt.PenStyle.NoPen)
        for brush, rects in self._groups:
            p.setBrush(brush)
            p.drawRects(rects)


#: A bar chart draws at most this many bars; more are pooled into bins (HighlightBars).
MAX_BARS = 512


class HighlightBars:
    """A bar chart with one highlighted bar and an optional set drawn in a second colour."""

    def __init__(self, plot: pg.PlotItem, width: float = 0.75) -> None:
        self.width = width
        self.offset = 0.0  # bar i is centred on i + offset (bars paired with another set)
        self.item = BarsItem()
        plot.addItem(self.item)
        self.heights = np.zeros(0)
        self._brushes = [QBrush(QColor("#888888"))] * 3
        self._key = None

    def set(self, heights: np.ndarray, selected: int | None = None, other: np.ndarray | None = None,
            source: tuple | None = None) -> None:
        """heights (n,); `selected` gets the accent; `other` (bool mask) the second colour.

        `source`: what heights and `other` were computed from (e.g. `(frame, head)`, compared
        by `same_sources`: identities); without it, the `heights` object itself. The bars are
        kept when the source, `selected`, the width and the offset are the same as last time;
        no bar height is compared (a caller handing a new source always repaints)."""
        key = (heights if source is None else source, selected, self.width, self.offset)
        if same_sources(self._key, key):
            return  # drawn from the same data: keep the painted bars
        self._key = key
        heights = np.asarray(heights, dtype=float)
        self.heights = heights
        n = len(heights)
        alt = np.zeros(n, bool) if other is None else np.asarray(other, bool)
        if n > MAX_BARS:
            self._set_pooled(heights, alt, selected)
            return
        group = np.where(alt, 1, 0)
        if selected is not None and 0 <= selected < n:
            group[selected] = 2
        half = self.width / 2
        rects: list[list[QRectF]] = [[], [], []]
        for i, (h, g) in enumerate(zip(heights.tolist(), group.tolist())):
            rects[g].append(QRectF(i + self.offset - half, min(h, 0.0), self.width, abs(h)))
        self.item.set_groups([(b, r) for b, r in zip(self._brushes, rects) if r])

    def _set_pooled(self, heights: np.ndarray, alt: np.ndarray, selected: int | None) -> None:
        """More bars than a plot has pixels: one bar per bin of ⌈n/MAX_BARS⌉ neighbours, as tall
        as the tallest of them (second colour when all are), edge to edge over the bins' indices;
        the selected bar keeps its own height, drawn over its bin."""
        n = len(heights)
        b = -(-n // MAX_BARS)
        m = -(-n // b)
        h = np.full(m * b, np.nan)
        h[:n] = heights
        a = np.ones(m * b, bool)
        a[:n] = alt
        # the extreme of each bin, by magnitude (bars may be negative)
        hb = h.reshape(m, b)
        finite = np.where(np.isfinite(hb), hb, 0.0)
        idx = np.abs(finite).argmax(1)
        tall = finite[np.arange(m), idx]
        ab = a.reshape(m, b).all(1)
        rects: list[list[QRectF]] = [[], [], []]
        for i, (v, g) in enumerate(zip(tall.tolist(), ab.tolist())):
            rects[1 if g else 0].append(QRectF(i * b - 0.5, min(v, 0.0), b, abs(v)))
        if selected is not None and 0 <= selected < n:
            v = float(heights[selected]) if np.isfinite(heights[selected]) else 0.0
            rects[2].append(QRectF(selected - b / 2, min(v, 0.0), b, abs(v)))
        self.item.set_groups([(br, r) for br, r in zip(self._brushes, rects) if r])

    def set_colors(self, base: str, other: str, highlight: str) -> None:
        self._brushes = [QBrush(QColor(c)) for c in (base, other, highlight)]
        self._key = None  # redraw on the next set
        if self.heights.size:
            self.set(self.heights)


class LeanAxis(pg.AxisItem):
    """pyqtgraph's AxisItem with two savings through public methods:

    - painted directly when cached as a pixmap (cache_static_items): Qt then calls paint
      only when the axis changed, so recording pyqtgraph's QPicture to replay it once
      would draw everything twice;
    - its bounding rectangle kept until the axis or its view changes: Qt asks for it
      several times per repaint and pyqtgraph's drawing once per tick label (each a trip
      into Python). It depends on the axis' geometry, style and grid and on the linked
      view's geometry; every change of those passes through one of the overrides below;
    - no automatic SI prefix while its label is hidden: pyqtgraph lays the label's HTML out
      again at every change of the range while the prefix is on, shown or not, and a hidden
      label never shows a prefix (its scale is 1). Shown again, the axis takes the prefix
      its owner asked for (`enableAutoSIPrefix`, on by default).
    """

    _bounds: QRectF | None = None
    _si_prefix = True  # the owner's choice (enableAutoSIPrefix); on only while the label shows

    def enableAutoSIPrefix(self, enable: bool = True) -> None:
        self._si_prefix = enable
        super().enableAutoSIPrefix(enable and self.label.isVisible())

    def showLabel(self, show: bool = True) -> None:
        if show:
            self.autoSIPrefix = self._si_prefix
        super().showLabel(show)  # (hidden with the prefix on: its scale goes back to 1 first)
        if not show:
            self.autoSIPrefix = False

    def boundingRect(self) -> QRectF:
        if self._bounds is None:
            self._bounds = super().boundingRect()
        return QRectF(self._bounds)

    def prepareGeometryChange(self) -> None:
        self._bounds = None
        super().prepareGeometryChange()

    def resizeEvent(self, ev=None) -> None:
        self._bounds = None
        super().resizeEvent(ev)

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            self._bounds = None  # the grid's extent is the view's rectangle in axis coordinates
        return super().itemChange(change, value)

    def setStyle(self, **kwargs) -> None:
        self._bounds = None
        super().setStyle(**kwargs)

    def linkedViewChanged(self, view, newRange=None) -> None:
        self._bounds = None  # the view was resized (or its range changed)
        super().linkedViewChanged(view, newRange)

    def linkToView(self, view) -> None:
        self._bounds = None
        super().linkToView(view)

    def unlinkFromView(self) -> None:
        self._bounds = None
        super().unlinkFromView()

    def paint(self, p, opt, widget=None) -> None:
        if self.cacheMode() == QGraphicsItem.CacheMode.NoCache:
            super().paint(p, opt, widget)
            return
        p.save()
        try:
            if self.style["tickFont"] is not None:
                p.setFont(self.style["tickFont"])
            specs = self.generateDrawSpecs(p)
            if specs is not None:
                self.drawPicture(p, *specs)
        finally:
            p.restore()


class LeanViewBox(pg.ViewBox):
    """pg.ViewBox that Qt does not ask to paint when it has no border to draw, with no
    pyqtgraph menu unless asked (`enableMenu=True`).

    Without a border a view draws nothing itself (its background is a child item), so it
    flags ItemHasNoContents: Qt then skips its paint (a Python call per repaint that
    strokes an empty pen); its children are drawn as before. The app's own right-click menu
    replaces pyqtgraph's (figures/context_menu.py), so the view does not build pyqtgraph's
    (two axis forms, ~7 ms a view: a tenth of a new window, and of each exported figure).
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("enableMenu", False)
        super().__init__(*args, **kwargs)
        self._sync_contents()

    def setBorder(self, *args, **kwargs) -> None:
        super().setBorder(*args, **kwargs)
        self._sync_contents()

    def _sync_contents(self) -> None:
        border = self.border
        empty = border is None or border.style() == Qt.PenStyle.NoPen
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, empty)


class LeanPlotItem(pg.PlotItem):
    """pg.PlotItem on a LeanViewBox; no pyqtgraph menu unless asked (`enableMenu=True`)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("enableMenu", False)
        if kwargs.get("viewBox") is None:
            kwargs["viewBox"] = LeanViewBox(enableMenu=kwargs["enableMenu"])
        super().__init__(**kwargs)


def add_plot(layout: pg.GraphicsLayout, row: int, col: int, **kwargs) -> LeanPlotItem:
    """layout.addPlot(row=row, col=col, **kwargs): a LeanPlotItem, under its title (`titled`)."""
    plot = LeanPlotItem(**kwargs)
    layout.addItem(titled(plot), row=row, col=col)
    return plot


def lean_axes(**given: pg.AxisItem) -> dict[str, pg.AxisItem]:
    """axisItems for a PlotItem: LeanAxis on the left and bottom unless given (PlotItem shows
    every axis it is given; it makes its hidden right and top ones itself, see style_plot)."""
    return {side: given.get(side) or LeanAxis(side) for side in ("left", "bottom")}



def fmt_number(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant digits for a readout: "NaN" and "±inf" spelled out,
    and no "-0" (a value that rounds to zero prints as 0): engine.numbers.number."""
    return number(value, digits)


def fmt_percent(share: float) -> str:
    """A share (0–1) as a percentage to 3 significant digits: 0.4567 → "45.7 %"."""
    return "NaN" if math.isnan(share) else f"{fmt_number(100 * share)} %"


def set_label_text(label: pg.LabelItem, text: str, **opts) -> None:
    """LabelItem.setText, skipped when the label shows `text` with `opts` already (setHtml is
    costly): compared with what the label holds (its `text` and `opts`), strings only."""
    if label.text == text and all(label.opts.get(k) == v for k, v in opts.items()):
        return
    label.setText(text, **opts)


def cache_static_items(scene) -> None:
    """Cache axes, labels, legends and the text items outside plots (axis titles) as pixmaps:
    they repaint only when they change, not whenever a neighbour's repaint overlaps them.

    Not texts inside a view (line labels, bar values): a view clips its children, and Qt
    keeps the pixmap of a text item it first painted while clipped away (a KV-cache bar
    value then stayed blank in the window, while an export showed it)."""
    for it in scene.items():
        if isinstance(it, pg.AxisItem | pg.LabelItem | pg.LegendItem | QGraphicsTextItem) and not _clipped(it):
            if it.cacheMode() != QGraphicsItem.CacheMode.DeviceCoordinateCache:
                it.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


def _clipped(item: QGraphicsItem) -> bool:
    """Whether an ancestor of `item` clips it (a ViewBox clips what it shows)."""
    parent = item.parentItem()
    while parent is not None:
        if parent.flags() & QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape:
            return True
        parent = parent.parentItem()
    return False


def set_plot_title(plot: pg.PlotItem, text: str, theme: Theme | None, size: float = 10.0) -> None:
    """A PlotItem title (HTML allowed) in the theme's text colour, `size` points at the
    theme's font scale; skipped when unchanged."""
    color = None if theme is None else theme.foreground
    css = f"{size:.3g}pt" if theme is None else theme.pt(size)
    label = use_runs_title(plot)
    if (label.text == text and label.opts.get("color") == color and label.opts.get("size") == css
            and label.isVisible()):
        return  # the label shows it already (compared with the label's own text and options)
    label.setVisible(True)  # (an empty title keeps its row: the plot does not jump when it comes)
    label.setText(text, color=color, size=css)


#: SI-prefix ranges no value falls in: ticks in plain numbers, no "(x0.001)" beside the title
PLAIN_NUMBERS = ((math.inf, math.inf),)


def set_axis_label(plot: pg.PlotItem | pg.AxisItem, side: str, text: str) -> None:
    """plot.setLabel(side, text) (or an axis' own, e.g. a colour bar's: `side` is then
    ignored) that keeps the plain-number ticks style_plot chose (setLabel would reset the
    SI-prefix ranges and bring back "(x0.001)"); skipped when unchanged."""
    ax = plot if isinstance(plot, pg.AxisItem) else plot.getAxis(side)
    if ax.labelText == text and ax.label.isVisible():
        return
    ax.setLabel(text, siPrefixEnableRanges=PLAIN_NUMBERS)  # (keeps the style style_plot gave it)
    ax.updateAutoSIPrefix()


def style_plot(plot: pg.PlotItem, theme: Theme, title_size: float = 10.0) -> None:
    """Axis pens, fonts and title of a PlotItem for `theme` (its colours and sizes)."""
    label_style = {"color": theme.foreground, "font-size": theme.pt(9.0)}
    for name in ("left", "bottom", "right", "top"):
        ax = plot.getAxis(name)
        if name in ("right", "top") and not ax.isVisible() and ax.linkedView() is not None:
            # a hidden stock axis still re-sets its label's HTML on every range change
            ax.unlinkFromView()
        ax.setPen(theme.pen(theme.muted))
        ax.setTextPen(pg.mkPen(theme.foreground))
        ax.setStyle(tickFont=theme.font(8.0))
        _style_axis_label(ax, label_style)
    title = title_label(plot)
    if title is not None and title.text:
        title.setText(title.text, color=theme.foreground, size=theme.pt(title_size))


def style_colorbar(bar: pg.ColorBarItem, theme: Theme) -> None:
    """A ColorBarItem's axes (pens, tick font, title) for `theme`, with plain-number ticks."""
    ax = bar.axis
    ax.setPen(theme.pen(theme.muted))
    ax.setTextPen(pg.mkPen(theme.foreground))
    ax.setStyle(tickFont=theme.font(8.0))
    ax.setWidth(None)  # as wide as its labels (ColorBarItem fixes 45 px: slides' ticks ran into the title)
    style = {"color": theme.foreground, "font-size": theme.pt(9.0)}
    # the title may sit on another axis (ColorBarItem puts `label` on the left/bottom one)
    for side in ("left", "bottom", "right", "top"):
        _style_axis_label(bar.getAxis(side), style)  # "0.4", not "400 (x0.001)"


def _style_axis_label(ax: pg.AxisItem, style: dict) -> None:
    """The axis title's style, kept by AxisItem for later setLabel calls, and plain-number
    ticks, through AxisItem.setLabel; a title not set yet stays hidden."""
    ax.setLabel(ax.labelText or None, ax.labelUnits or None, ax.labelUnitPrefix or None,
                siPrefixEnableRanges=PLAIN_NUMBERS, **style)
    ax.updateAutoSIPrefix()
