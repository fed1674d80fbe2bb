"""Small pyqtgraph helpers shared by the panels: titles, styling, stable ranges, caching.

Repainting is the expensive part of a frame (text above all), so the helpers
avoid it where nothing changed: titles are only re-set when their text
changes, ranges and colour levels snap to "nice" values with hysteresis (no
axis relayout for a small change of the data), and axes and labels are
cached as pixmaps (DeviceCoordinateCache) between changes.
"""

from __future__ import annotations

import functools
import html
import math
import re
import weakref
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPen,
    QTextCharFormat,
    QTextLayout,
    QTextLine,
    QTransform,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLinearLayout,
    QGraphicsRectItem,
    QGraphicsTextItem,
    QGraphicsWidget,
)

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


def sticky_max(current: float | None, needed: float, shrink: float = 0.4) -> float:
    """An upper bound that only moves when `needed` exceeds it or falls below shrink × it."""
    if current is not None and needed <= current and needed >= shrink * current:
        return current
    return nice_ceil(needed)


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


def _key_part(v):
    if isinstance(v, np.ndarray):
        return (v.shape, v.dtype.str, v.tobytes())
    return v


#: what each item last drew, per slot (kept beside the items, not written onto them; an item
#: that is deleted takes its entry with it)
_DRAWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def unchanged(owner, slot: str, *values) -> bool:
    """True when `values` are what `owner` last drew under `slot` (arrays by content).

    Otherwise remembers them and returns False. pyqtgraph items repaint (and
    re-measure) on every setData / setFormat even when nothing changed; this
    is the panels' "emit only when a value really changed".
    """
    key = tuple(_key_part(v) for v in values)
    drawn = _DRAWN.setdefault(owner, {})
    if drawn.get(slot) == key:
        return True
    drawn[slot] = key
    return False


def set_line_label(line: pg.InfiniteLine, text: str) -> None:
    """An InfiniteLine's label text, re-set only when it changes (each set re-lays out the text)."""
    if line.label.format != text:
        line.label.setFormat(text)


def set_bar_levels(bar: pg.ColorBarItem, levels: tuple[float, float]) -> None:
    """ColorBarItem.setLevels, skipped when unchanged (it would redraw its axis)."""
    if tuple(bar.levels()) != tuple(levels):
        bar.setLevels(levels)


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

    def set(self, heights: np.ndarray, selected: int | None = None, other: np.ndarray | None = None) -> None:
        """heights (n,); `selected` gets the accent; `other` (bool mask) the second colour."""
        heights = np.asarray(heights, dtype=float)
        key = (selected, None if other is None else np.asarray(other, bool).tobytes(), self.width, self.offset)
        if key == self._key and np.array_equal(heights, self.heights):
            return  # unchanged: keep the painted bars
        self._key = key
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
      view's geometry; every change of those passes through one of the overrides below.
    """

    _bounds: QRectF | None = None

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
    """pg.ViewBox that Qt does not ask to paint when it has no border to draw.

    Without a border a view draws nothing itself (its background is a child item), so it
    flags ItemHasNoContents: Qt then skips its paint (a Python call per repaint that
    strokes an empty pen); its children are drawn as before.
    """

    def __init__(self, *args, **kwargs) -> None:
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
    """pg.PlotItem on a LeanViewBox."""

    def __init__(self, **kwargs) -> None:
        if kwargs.get("viewBox") is None:
            kwargs["viewBox"] = LeanViewBox()
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


_TAG = re.compile(r"<(/?)(b|span|div|br)\b([^>]*)>", re.IGNORECASE)
_CSS_COLOUR = re.compile(r"(?<![-\w])color\s*:\s*([^;'\"]+)")
_CSS_BOLD = re.compile(r"font-weight\s*:\s*(bold|[6-9]00)")

#: one line of a title: runs of (text, bold, colour or None for the label's colour)
Runs = list[tuple[str, bool, str | None]]


@functools.lru_cache(maxsize=1024)
def parse_runs(text: str) -> list[Runs]:
    """The small HTML subset of the panels' titles as lines of styled runs.

    <b>, <span style='color: …; font-weight: …'> (nested), <br> and entities;
    any other markup is kept as text. Lines are split at <br>. Cached (titles
    come back as a slider goes to and fro): callers must not change the lists.
    """
    lines: list[Runs] = [[]]
    stack = [(False, None)]
    pos = 0

    def add(chunk: str) -> None:
        if chunk:
            bold, colour = stack[-1]
            lines[-1].append((html.unescape(chunk), bold, colour))

    for m in _TAG.finditer(text):
        add(text[pos:m.start()])
        pos = m.end()
        closing, tag, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if tag == "br":
            lines.append([])
        elif closing:
            if len(stack) > 1:
                stack.pop()
        else:
            bold, colour = stack[-1]
            if tag == "b" or _CSS_BOLD.search(attrs):
                bold = True
            c = _CSS_COLOUR.search(attrs)
            if c:
                colour = c.group(1).strip()
            stack.append((bold, colour))
    add(text[pos:])
    return lines


def _font_of(opts: dict) -> QFont:
    font = QFont()
    size = str(opts.get("size") or "")
    try:
        if size.endswith("pt"):
            font.setPointSizeF(float(size[:-2]))
        elif size.endswith("px"):
            font.setPixelSize(max(1, round(float(size[:-2]))))
    except ValueError:
        pass
    if opts.get("bold") is True:
        font.setBold(True)
    if opts.get("italic") is True:
        font.setItalic(True)
    if opts.get("family"):
        font.setFamily(opts["family"])
    return font


@functools.lru_cache(maxsize=256)
def _char_format(colour: str | None, bold: bool, default_rgba: int) -> QTextCharFormat:
    """A run's character format: its colour (None: the label's, given as QColor.rgba()), bold."""
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour) if colour else QColor.fromRgba(default_rgba))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class _RunsItem(QGraphicsRectItem):
    """Paints lines of styled runs with one QTextLayout per line.

    What a QGraphicsTextItem with HTML would show for the titles' markup, without
    parsing HTML into a QTextDocument on every change. The layout measures and
    draws the runs together, so glyphs from fallback fonts (‖, ∂, ᵀ) keep their
    place. A rectangle item without pen or brush: its bounds are the rectangle,
    which Qt reads itself (it asks on every repaint) instead of calling Python.
    """

    MARGIN = 4.0  # QTextDocument's default documentMargin: titles keep their place
    wrap_width: float | None = None  # text wider than this (px) breaks between words...
    MAX_LINES = 2  # ...each of its own lines onto at most this many
    MIN_SCALE = 0.75  # a wrapped line still too wide is drawn down to this size (RunsLabel), then cut
    centre_lines: bool = False  # wrapped lines centred on each other (a centred title)

    def __init__(self, parent: QGraphicsItem | None) -> None:
        super().__init__(parent)
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self._layouts: list[QTextLayout] = []
        self._rect = QRectF(0, 0, 2 * self.MARGIN, 2 * self.MARGIN)
        self._runs: tuple[list[Runs], QFont, QColor] = ([], QFont(), QColor())
        self.setRect(self._bounds())

    def _bounds(self) -> QRectF:
        """The item's rectangle for the laid-out text (self._rect)."""
        return QRectF(self._rect)

    def set_runs(self, lines: list[Runs], font: QFont, colour: QColor) -> None:
        if self._same_runs(lines, font, colour):
            return  # laid out already (a relayout that re-sets every label)
        self._runs = (lines, QFont(font), QColor(colour))
        self._lay_out(lines, font, colour)

    def _same_runs(self, lines: list[Runs], font: QFont, colour: QColor) -> bool:
        old_lines, old_font, old_colour = self._runs
        return bool(self._layouts) and old_lines == lines and old_font == font and old_colour == colour

    def _lay_out(self, lines: list[Runs], font: QFont, colour: QColor) -> None:
        layouts, y, width = [], self.MARGIN, 0.0
        for runs in lines:
            text = "".join(t for t, _b, _c in runs)
            layout = QTextLayout(text, font)
            formats, start = [], 0
            for t, bold, c in runs:
                fr = QTextLayout.FormatRange()
                fr.start, fr.length = start, len(t)
                fr.format = _char_format(c, bold, colour.rgba())
                formats.append(fr)
                start += len(t)
            layout.setFormats(formats)
            layout.beginLayout()
            # wrapped lines break at a space (a longer word overflows); the last line allowed
            # takes the rest of the text (its end is clipped by the label)
            wrap_at = self.wrap_width
            for n in range(self.MAX_LINES if wrap_at is not None else 1):
                line = layout.createLine()
                if not line.isValid():
                    break
                if wrap_at is not None and n < self.MAX_LINES - 1:
                    line.setLineWidth(wrap_at)
            layout.endLayout()  # lays out a line given no width: the whole text
            if layout.lineCount() == 0:
                y += QFontMetricsF(font).height()
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                line.setPosition(QPointF(self.MARGIN, y))
                y += line.height()
                width = max(width, line.naturalTextWidth())
            layouts.append(layout)
        room = self.wrap_width
        if self.centre_lines and (room is None or width <= room or (len(lines) == 1 and width * self.MIN_SCALE <= room)):
            # (a block that will not fit even drawn smaller keeps its lines' starts in view)
            for layout in layouts:
                for i in range(layout.lineCount()):
                    line = layout.lineAt(i)
                    if line.naturalTextWidth() < width:
                        line.setPosition(QPointF(self.MARGIN + (width - line.naturalTextWidth()) / 2, line.y()))
        self._layouts = layouts
        self._rect = QRectF(0, 0, width + 2 * self.MARGIN, y + self.MARGIN)
        bounds = self._bounds()
        if bounds == self.rect():
            self.update()  # same size, new text
        else:
            self.setRect(bounds)

    def set_wrap(self, width: float | None, centre: bool = False) -> None:
        """Break lines wider than `width` pixels between words (None: never)."""
        if (width, centre) != (self.wrap_width, self.centre_lines):
            self.wrap_width, self.centre_lines = width, centre
            if self._layouts:
                self._lay_out(*self._runs)

    def scale_font(self, k: float) -> Callable[[], None]:
        """Lay the text out again with its font k times larger (exports); returns the undo."""
        lines, font, colour = self._runs
        bigger = QFont(font)
        bigger.setPointSizeF(font.pointSizeF() * k)
        self.set_runs(lines, bigger, colour)
        return lambda: self.set_runs(lines, font, colour)

    def paint(self, p, opt, widget=None) -> None:
        for layout in self._layouts:
            layout.draw(p, QPointF(0, 0))


def _truncated(runs: Runs, n: int) -> Runs:
    """The first n characters of a line of runs, then "…"."""
    out: Runs = []
    for text, bold, colour in runs:
        if n <= 0:
            break
        out.append((text[:n], bold, colour))
        n -= len(text)
    if out:
        text, bold, colour = out[-1]
        out[-1] = (text.rstrip() + "…", bold, colour)
    return out


class TileLabel(_RunsItem):
    """A tile's title: its bottom-left corner at the item's position, drawn at a fixed pixel size,
    shortened with "…" to `max_width` pixels (the tile's width on screen) when set.

    Like pg.TextItem it undoes the view's scaling with its own transform (see `upright`),
    rather than ItemIgnoresTransformations, so an export that scales the painter scales the
    labels with everything else. `on_band_changed()` is called when the room the label
    needs above its tile changes (a larger font in an export).
    """

    max_width: float | None = None
    on_band_changed: Callable[[], None] | None = None

    def set_runs(self, lines: list[Runs], font: QFont, colour: QColor) -> None:
        if self._same_runs(lines, font, colour):
            return
        band = self.band()
        self._runs = (lines, QFont(font), QColor(colour))
        self._fit()
        if self.band() != band and self.on_band_changed is not None:
            self.on_band_changed()

    def set_max_width(self, px: float | None) -> None:
        if px != self.max_width:
            self.max_width = px
            self._fit()

    def _fit(self) -> None:
        lines, font, colour = self._runs
        self._lay_out(lines, font, colour)
        if self.max_width is None or not lines or self._rect.width() - 2 * self.MARGIN <= self.max_width:
            return
        # the most characters of line 1 that fit with "…": read off the full line's layout, then
        # checked (a bold "…" or kerning may need one character less)
        room = self.max_width - QFontMetricsF(font).horizontalAdvance("…")
        n = (self._layouts[0].lineAt(0).xToCursor(room + self.MARGIN, QTextLine.CursorPosition.CursorOnCharacter)
             if room > 0 else 0)
        while n > 0:
            self._lay_out([_truncated(lines[0], n)], font, colour)
            if self._rect.width() - 2 * self.MARGIN <= self.max_width:
                return
            n -= 1
        self._lay_out([[]], font, colour)

    def band(self) -> float:
        """Pixels the label needs above its anchor."""
        return self._rect.height() - self.MARGIN + 2

    def _bounds(self) -> QRectF:
        return QRectF(self._rect).translated(-self.MARGIN, 1 - self._rect.height())

    def paint(self, p, opt, widget=None) -> None:
        p.translate(-self.MARGIN, 1 - self._rect.height())
        super().paint(p, opt, widget)


def upright(vb: pg.ViewBox, items) -> None:
    """Give items in `vb` the inverse of the view's scaling and flip: they draw in pixels, upright
    (what pg.TextItem does for itself; call it on vb.sigTransformChanged)."""
    view = vb.childTransform() * vb.sceneTransform()  # the view's items → scene
    inv, ok = view.inverted()
    if not ok:
        return
    inv = QTransform(inv.m11(), inv.m12(), inv.m21(), inv.m22(), 0.0, 0.0)
    for item in items:
        if item.transform() != inv:
            item.setTransform(inv)


class RunsLabel(QGraphicsWidget):
    """A title or readout label: LabelItem's call shape (`setText(text, color=, size=, bold=)`,
    `text`, `opts`, `item`, `itemRect()`), drawn by a _RunsItem.

    A QGraphicsWidget of its own (Qt's `sizeHint` is its one layout hook; Qt's own C++
    bounding rectangle and shape, asked for on every repaint): the titles' HTML
    subset (see parse_runs) costs a few font-metric lookups, not a rich-text document. Its
    width is the layout's, never the text's, so a new title does not re-lay out the plot
    grid: text wider than the label wraps between words (a line still too wide is drawn
    smaller, down to 3/4), and the label (and a plot's title row) grows to show it. The
    height and scale it settled on are kept until the label grows REGROW_PX wider, so a
    readout that changes every frame does not make the plot below it jump.
    """

    TITLE_ROW = 30  # pyqtgraph's fixed title row height (PlotItem.setTitle)
    title_row = False  # a plot's title (`titled`): at least TITLE_ROW high once shown
    REGROW_PX = 48  # the label must grow this much wider before the held size is measured afresh

    def __init__(self, text: str = "", parent=None, **args) -> None:
        super().__init__(parent)
        self.opts = {"color": None, "justify": "center", **args}
        self.text = ""
        self.item = _RunsItem(self)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape, True)
        self._height = 0.0  # what sizeHint says
        self._held_height = 0.0  # the most height the text needed at this width
        self._held_font: QFont | None = None
        self._held_scale = 1.0  # the smallest scale the text needed at this width
        self._held_at = -math.inf  # the label width the held height and scale were measured from
        self._wrapped_for: float | None = None  # the label width the text was last wrapped at
        self.setText(text)

    def setText(self, text: str, **args) -> None:
        self.text = text
        self.opts.update(args)
        colour = self.opts.get("color")
        colour = pg.mkColor(colour if colour is not None else pg.getConfigOption("foreground"))
        font = _font_of(self.opts)
        if font != self._held_font:  # another size: hold afresh
            self._held_font = font
            self._hold_afresh(self.rect().width())
        self.item.set_runs(parse_runs(text), font, colour)
        self._place()
        self._fit_title_row()

    def itemRect(self) -> QRectF:
        return self.item.mapRectToParent(self.item.boundingRect())

    def sizeHint(self, which, constraint=None):
        if which in (Qt.SizeHint.MinimumSize, Qt.SizeHint.PreferredSize):
            return QSizeF(0, self._height)
        if which == Qt.SizeHint.MaximumSize:
            return QSizeF(-1, -1)
        return QSizeF(0, 0)

    def _hold_afresh(self, width: float) -> None:
        self._held_height, self._held_scale, self._held_at = 0.0, 1.0, width

    def _hold_height(self) -> None:
        """Ask the layout for more height only when the text needs more than it holds."""
        height = max(self.itemRect().height(), self._held_height)
        self._held_height = height
        if height != self._height:
            self._height = height
            self.setMinimumHeight(height)
            self.updateGeometry()
            self._fit_title_row()

    def _fit_title_row(self) -> None:
        """A plot title (see `titled`) gets a row as high as its text needs, at least 30 px."""
        if not self.title_row or not self.isVisible():
            return
        need = max(self.TITLE_ROW, math.ceil(self._held_height))
        if self.maximumHeight() != need:
            self.setMinimumHeight(need)
            self.setMaximumHeight(need)

    def resizeEvent(self, ev) -> None:
        self._place()

    def _place(self) -> None:
        """Wrap the text at the label's width, scale it down if still too wide, and place it."""
        item, width = self.item, self.rect().width()
        if width != self._wrapped_for:
            self._wrapped_for = width
            # much wider: maybe fewer lines now; an axis whose labels change width moves the
            # title's edge by a few pixels from frame to frame, and that must not make plots jump
            if width > self._held_at + self.REGROW_PX:
                self._hold_afresh(width)
            else:
                self._held_at = min(self._held_at, width)
            room = width - 2 * _RunsItem.MARGIN
            item.set_wrap(room if room > 40 else None, self.opts.get("justify", "center") == "center")
        natural = item.rect().width()
        k = 1.0 if natural <= width or width <= 0 or item.wrap_width is None or len(item._layouts) > 1 \
            else max(_RunsItem.MIN_SCALE, width / natural)  # (text with line breaks of its own: cut)
        self._held_scale = k = min(k, self._held_scale)  # kept, like the height: no size jitter
        if item.scale() != k:
            item.setScale(k)
        rect, box = self.rect(), self.itemRect()
        justify = self.opts.get("justify", "center")
        if justify == "left" or box.width() > rect.width():  # (a word longer than the label: its start)
            x = rect.left()
        elif justify == "right":
            x = rect.right() - box.width()
        else:
            x = rect.center().x() - box.width() / 2
        y = rect.center().y() - box.height() / 2 if box.height() <= rect.height() else rect.top()
        item.setPos(item.pos() + QPointF(x - box.left(), y - box.top()))
        self._hold_height()


#: PlotItem's own title size (its title LabelItem is made with it); set_plot_title passes its own
PLOT_TITLE_SIZE = "11pt"

#: each titled plot's title label (see `titled`), kept beside the plots, not written onto them
_TITLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def titled(plot: pg.PlotItem) -> QGraphicsWidget:
    """`plot` under a RunsLabel title: the widget to put in a layout in the plot's place.

    The title lives outside pyqtgraph's PlotItem (whose own title LabelItem stays hidden:
    titles go through set_plot_title, never PlotItem.setTitle): a plain QGraphicsWidget
    with a vertical layout holds the label above the plot. Its row is as high as the
    title needs (at least PlotItem's 30 px once a title is set; nothing before).
    """
    cell = QGraphicsWidget()
    cell.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
    cell.setSizePolicy(plot.sizePolicy())
    column = QGraphicsLinearLayout(Qt.Orientation.Vertical)
    cell.setLayout(column)  # (the cell owns the layout, and the layout the two items)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    label = RunsLabel(size=PLOT_TITLE_SIZE)
    label.title_row = True
    label.setVisible(False)  # shown with its first text
    label.setMaximumHeight(0)
    column.addItem(label)
    column.addItem(plot)
    column.setStretchFactor(plot, 1)
    _TITLES[plot] = label
    return cell


def use_runs_title(plot: pg.PlotItem) -> RunsLabel:
    """The RunsLabel that titles `plot` (made by `titled`)."""
    label = _TITLES.get(plot)
    if label is None:
        raise ValueError("a plot given a title must be placed with titled(plot) (or made by add_plot)")
    return label


def plot_title(plot: pg.PlotItem) -> str:
    """The title `plot` shows (its HTML), "" if none: what a reader sees above the plot."""
    label = _TITLES.get(plot)
    return label.text if label is not None else ""


def unbroken(text: str) -> str:
    """`text` with non-breaking spaces: a wrapping title moves it to the next line whole
    (a note such as "(theory √d_k = 4)" is not split after its "=")."""
    return text.replace(" ", "\u00a0")


def fmt_number(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant digits for a readout: "NaN" and "±inf" spelled out,
    and no "-0" (a value that rounds to zero prints as 0)."""
    v = float(value)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "−inf"
    text = f"{v:.{digits}g}"
    return "0" if float(text) == 0 else text


def fmt_percent(share: float) -> str:
    """A share (0–1) as a percentage to 3 significant digits: 0.4567 → "45.7 %"."""
    return "NaN" if math.isnan(share) else f"{fmt_number(100 * share)} %"


def set_label_text(label: pg.LabelItem, text: str, **opts) -> None:
    """LabelItem.setText, skipped when text and options are unchanged (setHtml is costly)."""
    if unchanged(label, "text", text, tuple(sorted(opts.items()))):
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
    if unchanged(plot, "title", text, color, css):
        return
    label = use_runs_title(plot)
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
    title = _TITLES.get(plot)
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
