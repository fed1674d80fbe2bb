"""Rich-text titles and labels: the panels' small HTML subset laid out without QTextDocument.

    parse_runs   "<b>Q·Kᵀ</b> <span style='color: …'>…</span><br>…" → lines of styled runs
    RunsItem     paints lines of runs, one QTextLayout per line (wrapping, centring)
    RunsLabel    a title or readout label with LabelItem's call shape, wrapping and shrinking
                 to its width, holding its height so plots below it do not jump
    TileLabel    a tile's title inside a view, in pixels, shortened with "…" to the tile
    titled       a plot under its RunsLabel title (outside pyqtgraph's PlotItem)

Text is the expensive part of a repaint: a label lays its text out again only when the text,
font, colour or room changed. Plot styling, ranges and bars are in `plots`.
"""

from __future__ import annotations

import functools
import html
import math
import re
import weakref
from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPen,
    QPixmap,
    QTextCharFormat,
    QTextLayout,
    QTextLine,
    QTransform,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLinearLayout,
    QGraphicsRectItem,
    QGraphicsWidget,
)

_TAG = re.compile(r"<(/?)(b|span|div|br)\b([^>]*)>", re.IGNORECASE)
_CSS_COLOUR = re.compile(r"(?<![-\w])color\s*:\s*([^;'\"]+)")
_CSS_BOLD = re.compile(r"font-weight\s*:\s*(bold|[6-9]00)")

#: one line of a title: runs of (text, bold, colour or None for the label's colour)
Runs = list[tuple[str, bool, str | None]]


#: titles parsed and kept (parse_runs): a title with new numbers is a new entry, so a long
#: session fills this bound (~1 KiB each) and stays there
TITLE_CACHE_SIZE = 1024


@functools.lru_cache(maxsize=TITLE_CACHE_SIZE)
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


class RunsItem(QGraphicsRectItem):
    """Paints lines of styled runs with one QTextLayout per line.

    What a QGraphicsTextItem with HTML would show for the titles' markup, without
    parsing HTML into a QTextDocument on every change. The layout measures and
    draws the runs together, so glyphs from fallback fonts (‖, ∂, ᵀ) keep their
    place. A rectangle item without pen or brush: its bounds are the rectangle,
    which Qt reads itself (it asks on every repaint) instead of calling Python.
    """

    MARGIN = 4.0  # QTextDocument's default documentMargin: titles keep their place
    wrap_width: float | None = None  # text wider than this (px) breaks between words...
    MAX_LINES = 2  # ...each of its own lines onto at most this many (`max_lines`, per item)
    MIN_SCALE = 0.75  # a wrapped line still too wide is drawn down to this size (RunsLabel), then cut
    centre_lines: bool = False  # wrapped lines centred on each other (a centred title)

    def __init__(self, parent: QGraphicsItem | None) -> None:
        super().__init__(parent)
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self.max_lines = self.MAX_LINES
        self._layouts: list[QTextLayout] = []
        self._picture = _Picture()  # an unchanged text repainted from a pixmap
        self._rect = QRectF(0, 0, 2 * self.MARGIN, 2 * self.MARGIN)
        self._runs: tuple[list[Runs], QFont, QColor] = ([], QFont(), QColor())
        self._kept_lines: dict[tuple, QTextLayout] = {}  # the last layout's lines, by their runs
        self._kept_context: tuple | None = None  # (font, colour, wrap, max lines) they were made for
        self.setRect(self._bounds())

    def _bounds(self) -> QRectF:
        """The item's rectangle for the laid-out text (self._rect)."""
        return QRectF(self._rect)

    @property
    def layouts(self) -> list[QTextLayout]:
        """The laid-out lines, one QTextLayout per line of runs (callers must not change them)."""
        return self._layouts

    def plain_text(self) -> str:
        """The text shown, without its styles (every line, joined)."""
        return "".join(t for line in self._runs[0] for t, _b, _c in line)

    def set_runs(self, lines: list[Runs], font: QFont, colour: QColor) -> None:
        if self._same_runs(lines, font, colour):
            return  # laid out already (a relayout that re-sets every label)
        self._runs = (lines, QFont(font), QColor(colour))
        self._lay_out(lines, font, colour)

    def _same_runs(self, lines: list[Runs], font: QFont, colour: QColor) -> bool:
        old_lines, old_font, old_colour = self._runs
        return bool(self._layouts) and old_lines == lines and old_font == font and old_colour == colour

    def _lay_out(self, lines: list[Runs], font: QFont, colour: QColor) -> None:
        self._picture.forget()
        layouts, y, width = [], self.MARGIN, 0.0
        # a line whose runs, font, colour and wrap are those of a line laid out last time keeps
        # its layout (a title's first line stays while its second, with the numbers, changes)
        context = (QFont(font), colour.rgba(), self.wrap_width, self.max_lines)
        kept = self._kept_lines if self._kept_context == context else {}
        made: dict[tuple, QTextLayout] = {}
        for runs in lines:
            key = tuple(runs)
            layout = kept.pop(key, None)
            if layout is None:
                layout = self._line_layout(runs, font, colour)
            made.setdefault(key, layout)
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
        self._kept_lines, self._kept_context = made, context
        self._rect = QRectF(0, 0, width + 2 * self.MARGIN, y + self.MARGIN)
        bounds = self._bounds()
        if bounds == self.rect():
            self.update()  # same size, new text
        else:
            self.setRect(bounds)

    def _line_layout(self, runs: Runs, font: QFont, colour: QColor) -> QTextLayout:
        """One line of runs laid out: broken between words at wrap_width onto at most
        max_lines lines (a longer word overflows; the last line takes the rest of the text,
        its end clipped by the label)."""
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
        wrap_at = self.wrap_width
        for n in range(self.max_lines if wrap_at is not None else 1):
            line = layout.createLine()
            if not line.isValid():
                break
            if wrap_at is not None and n < self.max_lines - 1:
                line.setLineWidth(wrap_at)
        layout.endLayout()  # lays out a line given no width: the whole text
        return layout

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
        if widget is None or not self._layouts:  # an export (PNG, SVG, PDF): the text itself
            self._draw(p)
            return
        self._picture.paint(p, widget, self._rect, self._draw)

    def _draw(self, p) -> None:
        for layout in self._layouts:
            layout.draw(p, QPointF(0, 0))


class _Picture:
    """A text item's drawing kept as a pixmap in a view's device pixels.

    A view repaints every item its dirty region touches: a step-through's frame repaints all
    its titles, a new seed the titles next to a changed one. An unchanged text is then copied
    from the pixmap instead of laid out glyph by glyph. The pixmap is made on the second paint
    at the same text, device scale and sub-pixel offset (a text new every frame is drawn
    directly: a pixmap would cost more than it saves). It always holds the whole text, so a
    label first painted while its view clipped part of it away shows all of it later (what
    Qt's own item cache got wrong for clipped items). Rotated or sheared: drawn directly.
    """

    PAD = 2  # device pixels around the text's rectangle: antialiased ink may reach past it

    def __init__(self) -> None:
        self._seen: tuple | None = None  # the last paint's key (device scale and offset)
        self._pixmap: QPixmap | None = None
        self._key: tuple | None = None  # the key the pixmap was drawn at

    def forget(self) -> None:
        """A new layout: the next paint draws it directly, the one after makes the pixmap."""
        self._seen = self._pixmap = self._key = None

    def paint(self, p, widget, rect: QRectF, draw: Callable) -> None:
        t = p.worldTransform()
        if t.type().value > QTransform.TransformationType.TxScale.value:
            draw(p)
            return
        dev = t.mapRect(rect).adjusted(-self.PAD, -self.PAD, self.PAD, self.PAD)  # (device pixels)
        x0, y0 = math.floor(dev.left()), math.floor(dev.top())
        dpr = widget.devicePixelRatioF()
        key = (t.m11(), t.m22(), round(dev.left() - x0, 3), round(dev.top() - y0, 3), dpr)
        if key != self._key:
            if key != self._seen:  # first paint of this text here: as it is
                self._seen = key
                draw(p)
                return
            w, h = math.ceil(dev.right()) - x0, math.ceil(dev.bottom()) - y0
            pixmap = QPixmap(max(1, math.ceil(w * dpr)), max(1, math.ceil(h * dpr)))
            pixmap.setDevicePixelRatio(dpr)
            pixmap.fill(Qt.GlobalColor.transparent)
            q = QPainter(pixmap)
            q.setRenderHints(p.renderHints())
            q.setWorldTransform(t * QTransform.fromTranslate(-x0, -y0))
            draw(q)
            q.end()
            self._pixmap, self._key = pixmap, key
        p.save()
        p.setWorldTransform(QTransform())
        p.drawPixmap(x0, y0, self._pixmap)
        p.restore()


def head_runs(runs: Runs, n: int) -> Runs:
    """The first n characters of a line of runs."""
    out: Runs = []
    for text, bold, colour in runs:
        if n <= 0:
            break
        out.append((text[:n], bold, colour))
        n -= len(text)
    return out


def truncated_runs(runs: Runs, n: int) -> Runs:
    """The first n characters of a line of runs, then "…"."""
    out = head_runs(runs, n)
    if out:
        text, bold, colour = out[-1]
        out[-1] = (text.rstrip() + "…", bold, colour)
    return out


#: what separates a title's name from its details ("W_Q[:, h0] · 64×16")
DETAIL_SEPARATOR = " · "


class TileLabel(RunsItem):
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
        # the text's ink may reach a pixel past its advance (antialiasing, a bold glyph's overhang):
        # a title that fills its tile exactly would cross the tile's (the view's) edge
        room_px = None if self.max_width is None else self.max_width - 2
        if room_px is None or not lines or self._rect.width() - 2 * self.MARGIN <= room_px:
            return
        # the details go first, whole ("W_Q[:, h0] · 64×16" → "W_Q[:, h0]"), the last first
        text = "".join(t for t, _b, _c in lines[0])
        cut = text.rfind(DETAIL_SEPARATOR)
        while cut > 0:
            self._lay_out([head_runs(lines[0], cut)], font, colour)
            if self._rect.width() - 2 * self.MARGIN <= room_px:
                return
            cut = text.rfind(DETAIL_SEPARATOR, 0, cut)
        self._lay_out(lines, font, colour)
        # the most characters of line 1 that fit with "…": read off the full line's layout, then
        # checked (a bold "…" or kerning may need one character less)
        room = room_px - QFontMetricsF(font).horizontalAdvance("…")
        n = (self._layouts[0].lineAt(0).xToCursor(room + self.MARGIN, QTextLine.CursorPosition.CursorOnCharacter)
             if room > 0 else 0)
        while n > 0:
            self._lay_out([truncated_runs(lines[0], n)], font, colour)
            if self._rect.width() - 2 * self.MARGIN <= room_px:
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
    `text`, `opts`, `item`, `itemRect()`), drawn by a RunsItem.

    A QGraphicsWidget of its own (Qt's `sizeHint` is its one layout hook; Qt's own C++
    bounding rectangle and shape, asked for on every repaint): the titles' HTML
    subset (see parse_runs) costs a few font-metric lookups, not a rich-text document. Its
    width is the layout's, never the text's, so a new title does not re-lay out the plot
    grid: text wider than the label wraps between words (a line still too wide is drawn
    smaller, down to 3/4), and the label (and a plot's title row) grows to show it. The
    height and scale it settled on are kept until the label grows REGROW_PX wider (any wider
    while its text is the one they were measured for), so a readout that changes every frame
    does not make the plot below it jump.
    """

    title_row = False  # a plot's title (`titled`): a row exactly as high as its text once shown
    REGROW_PX = 48  # the label must grow this much wider before the held size is measured afresh

    def __init__(self, text: str = "", parent=None, *, max_lines: int = RunsItem.MAX_LINES, **args) -> None:
        super().__init__(parent)
        self.opts = {"color": None, "justify": "center", **args}
        self.text = ""
        self.item = RunsItem(self)
        self.item.max_lines = max_lines  # what each of its own lines wraps onto, at most
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape, True)
        self._height = 0.0  # what sizeHint says
        self._held_height = 0.0  # the most height the text needed at this width
        self._held_font: QFont | None = None
        self._held_scale = 1.0  # the smallest scale the text needed at this width
        self._held_at = -math.inf  # the label width the held height and scale were measured from
        self._held_text: str | None = None  # the text when they were measured afresh
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
        self._held_text = self.text  # (a label whose text has not changed since: any widening re-measures)

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
        """A plot title (see `titled`) gets a row as high as its text needs: its lines at its
        font and the text's margins (a 9 pt title 22 px, an 11 pt one 26), not pyqtgraph's
        fixed 30 px, which took a third of a small plot's height."""
        if not self.title_row or not self.isVisible():
            return
        need = math.ceil(self._held_height)
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
            # (the same text wider: measured afresh, a title laid out narrow while its plot was
            # made kept a second line's height at its real width and a small plot lost it)
            if width > self._held_at + self.REGROW_PX or (width > self._held_at and self.text == self._held_text):
                self._hold_afresh(width)
            else:
                self._held_at = min(self._held_at, width)
            room = width - 2 * RunsItem.MARGIN
            item.set_wrap(room if room > 40 else None, self.opts.get("justify", "center") == "center")
        natural = item.rect().width()
        k = 1.0 if natural <= width or width <= 0 or item.wrap_width is None or len(item.layouts) > 1 \
            else max(RunsItem.MIN_SCALE, width / natural)  # (text with line breaks of its own: cut)
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
    title's lines need once a title is set (nothing before).
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


def title_label(plot: pg.PlotItem) -> RunsLabel | None:
    """The RunsLabel that titles `plot` (made by `titled`), None for a plot without one."""
    return _TITLES.get(plot)


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


def short_token(s: str, n: int = 10) -> str:
    """A model's token as a cell or a label shows it: its space marks (GPT-2's "Ġ",
    SentencePiece's "▁") as a visible "␣", a newline as "⏎", at most `n` characters."""
    s = s.replace("Ġ", "␣").replace("▁", "␣").replace("\n", "⏎")
    return s if len(s) <= n else s[:n - 1] + "…"
