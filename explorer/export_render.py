"""Painting a panel (pyqtgraph views plus ordinary Qt widgets) onto any QPainter.

A figure is a list of *parts*: the widgets of the panel in painting order,
each with its rectangle in the panel's coordinates. A pyqtgraph view is one
part (its whole scene); every other visible widget is painted on its own,
without its children, so input controls (buttons, combo boxes, sliders…) can
be left out of a figure while the labels and tables around the plots stay.
The same parts feed the PNG and PDF painters here and the SVG writer in
`export_svg`, so the three formats show the same picture.

Two things pyqtgraph does not do for a larger-than-screen export are done
here, and undone afterwards (`restyled`):

- cosmetic pens (every `pg.mkPen`) are a fixed number of *device* pixels, so
  a figure rendered at 2× would get hair-thin lines; their widths are
  multiplied by the render scale (and by the look's line factor);
- the "slides" look: light colours, larger fonts, thicker lines.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QEventLoop, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractGraphicsShapeItem,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsTextItem,
    QGraphicsView,
    QLabel,
    QLayout,
    QLineEdit,
    QWidget,
)

from .sizing import release_size

#: Widgets that are controls, not content: left out of panel figures.
CONTROL_TYPES = (QAbstractButton, QComboBox, QAbstractSpinBox, QAbstractSlider, QLineEdit)


@dataclass(frozen=True)
class Look:
    """How a figure is drawn: `screen` is what the window shows; `slides` is for a projector."""

    name: str
    light: bool  # force light colours (white plot background, dark text)
    font_scale: float  # multiplies every font size
    pen_scale: float  # multiplies every cosmetic line width


SCREEN = Look("screen", light=False, font_scale=1.0, pen_scale=1.0)
SLIDES = Look("slides", light=True, font_scale=1.45, pen_scale=2.0)
LOOKS = {"screen": SCREEN, "slides": SLIDES}


@dataclass
class Part:
    """One widget of a figure. rect is in the root widget's coordinates (logical px);
    clip is the part of it not hidden by a scrolling/clipping ancestor."""

    widget: QWidget
    rect: QRect
    clip: QRect
    is_view: bool  # a pyqtgraph GraphicsView: drawn as a whole (scene included)


def is_pg_view(w: QWidget) -> bool:
    return isinstance(w, QGraphicsView) and isinstance(w.scene(), pg.GraphicsScene)


def figure_parts(root: QWidget, include_controls: bool = False) -> list[Part]:
    """The visible widgets of `root` in painting order (parents before children)."""
    parts: list[Part] = []
    full = QRect(QPoint(0, 0), root.size())

    def visit(w: QWidget, clip: QRect) -> None:
        if w is not root:
            if w.isWindow() or not w.isVisibleTo(root):
                return
            if not include_controls and (isinstance(w, CONTROL_TYPES) or _labels_a_control(w)):
                return
        rect = QRect(w.mapTo(root, QPoint(0, 0)), w.size()) if w is not root else full
        vis = rect.intersected(clip)
        if vis.isEmpty():
            return
        view = is_pg_view(w)
        parts.append(Part(w, rect, vis, view))
        if view:
            return
        for ch in w.children():
            if isinstance(ch, QWidget):
                visit(ch, vis)

    visit(root, full)
    return parts


def _layout_of(w: QWidget) -> QLayout | None:
    """The (innermost) layout that holds `w`."""
    parent = w.parentWidget()
    top = parent.layout() if parent is not None else None
    if top is None:
        return None
    stack = [top]
    while stack:
        lay = stack.pop()
        if lay.indexOf(w) >= 0:
            return lay
        stack.extend(lay.itemAt(i).layout() for i in range(lay.count()) if lay.itemAt(i).layout())
    return None


def _labels_a_control(w: QWidget) -> bool:
    """A label that names a control ("head:", "KV cache at") goes with the control: its
    buddy is one, or it shares a toolbar row with one."""
    if not isinstance(w, QLabel):
        return False
    if isinstance(w.buddy(), CONTROL_TYPES):
        return True
    lay = _layout_of(w)
    if lay is None:
        return False
    return any(isinstance(lay.itemAt(i).widget(), CONTROL_TYPES) for i in range(lay.count()))


def figure_rect(parts: list[Part]) -> QRect:
    """The part of the root the figure shows: everything drawn except the root's own
    empty margins (a toolbar row whose controls were left out, for instance)."""
    inner = [p.clip for p in parts[1:]]
    if not inner:
        return parts[0].clip
    r = inner[0]
    for c in inner[1:]:
        r = r.united(c)
    return r.intersected(parts[0].clip)


def overflow(parts: list[Part], preferred_width: bool = False) -> tuple[int, int]:
    """How many logical px the plots need beyond what their views give them (a pyqtgraph
    layout wider than its view is cut off at the right). preferred_width: measure the width
    the plots would like (titles at full length) instead of the least they accept."""
    dx = dy = 0
    for v in views_of(parts):
        cw = getattr(v, "centralWidget", None)
        if cw is None or not hasattr(cw, "effectiveSizeHint"):
            continue
        need = cw.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        if preferred_width:
            need.setWidth(max(need.width(), cw.effectiveSizeHint(Qt.SizeHint.PreferredSize).width()))
        dx = max(dx, int(need.width() + 0.999) - v.viewport().width())
        dy = max(dy, int(need.height() + 0.999) - v.viewport().height())
    return max(0, dx), max(0, dy)


def views_of(parts: list[Part]) -> list[QGraphicsView]:
    return [p.widget for p in parts if p.is_view]


# ---- painting ---------------------------------------------------------------------


@contextlib.contextmanager
def export_mode(views: list[QGraphicsView], painter: QPainter, scale: float) -> Iterator[None]:
    """pyqtgraph's own export switch: hides plot buttons, draws scatter symbols as
    vectors at `scale` (what its exporters do), for every item of the views' scenes."""
    items = [it for v in views for it in v.scene().items() if hasattr(it, "setExportMode")]
    opts = {"antialias": True, "painter": painter, "resolutionScale": scale}
    for it in items:
        it.setExportMode(True, dict(opts, background=views[0].backgroundBrush().color()))
    try:
        yield
    finally:
        for it in items:
            it.setExportMode(False)


def paint_parts(painter: QPainter, parts: list[Part], scale: float) -> None:
    """Paint the parts with `painter`, whose transform already maps root coords to the device."""
    flags_self = QWidget.RenderFlag.DrawWindowBackground
    with export_mode(views_of(parts), painter, scale):
        for i, part in enumerate(parts):
            painter.save()
            try:
                painter.setClipRect(part.clip, Qt.ClipOperation.IntersectClip)
                if part.is_view:
                    _paint_view(painter, part)
                else:
                    # the root paints the background; children only themselves
                    flags = flags_self if i == 0 else QWidget.RenderFlag(0)
                    QWidget.render(part.widget, painter, part.rect.topLeft(), _whole(part.widget), flags)
            finally:
                painter.restore()


def _paint_view(painter: QPainter, part: Part) -> None:
    """The view's scene as the view shows it (its viewport, background included)."""
    view = part.widget
    view.scene().prepareForPaint()  # what pyqtgraph's GraphicsView.paintEvent does first
    vp = view.viewport()
    target = QRectF(QRect(vp.mapTo(view, QPoint(0, 0)) + part.rect.topLeft(), vp.size()))
    QGraphicsView.render(view, painter, target, vp.rect(), Qt.AspectRatioMode.IgnoreAspectRatio)


def _whole(w: QWidget):
    from PySide6.QtGui import QRegion

    return QRegion(QRect(QPoint(0, 0), w.size()))


def settle(rounds: int = 2) -> None:
    """Let pending layout requests run (font and pen changes resize axes and labels)."""
    app = QApplication.instance()
    for _ in range(rounds):
        app.sendPostedEvents()
        app.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)


def warm_up(root: QWidget, parts: list[Part], scale: float) -> None:
    """Paint once into a scratch image: pyqtgraph axes measure their tick text while
    painting and then ask for more room; the real render comes after the relayout."""
    size = root.size()
    img = QImage(max(1, size.width()), max(1, size.height()), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(0)
    p = QPainter(img)
    try:
        paint_parts(p, parts, scale)
    finally:
        p.end()
    settle()


# ---- restyling (undone afterwards) -----------------------------------------------------

_FONT_SIZE = re.compile(r"(font-size\s*:\s*)([0-9.]+)(pt|px)")


def scale_html_fonts(html: str, k: float) -> str:
    """Multiply every CSS font-size in an HTML string by k."""
    return _FONT_SIZE.sub(lambda m: f"{m.group(1)}{float(m.group(2)) * k:.3g}{m.group(3)}", html)


def _scaled_font(font: QFont | None, k: float) -> QFont:
    f = QFont(font) if font is not None else QFont()
    if f.pointSizeF() > 0:
        f.setPointSizeF(f.pointSizeF() * k)
    elif f.pixelSize() > 0:
        f.setPixelSize(max(1, round(f.pixelSize() * k)))
    return f


def _scaled_pen(pen: QPen, k: float) -> QPen:
    pen = QPen(pen)
    if pen.isCosmetic() or pen.widthF() == 0:
        pen.setWidthF(max(pen.widthF(), 1.0) * k)
    return pen


class Restyler:
    """Records every change it makes so that `undo()` puts the panel back."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def undo(self) -> None:
        while self._undo:
            fn = self._undo.pop()
            with contextlib.suppress(RuntimeError):  # an item deleted meanwhile
                fn()

    # -- pens --
    def scale_pens(self, views: list[QGraphicsView], k: float) -> None:
        if abs(k - 1.0) < 1e-6:
            return
        for view in views:
            for it in view.scene().items():
                self._scale_item_pens(it, k)

    def _scale_item_pens(self, it, k: float) -> None:
        if isinstance(it, pg.PlotDataItem):
            # its curve re-reads these opts whenever the view range changes
            old = dict(it.opts)
            it.setPen(_scaled_pen(pg.mkPen(old["pen"]), k) if old["pen"] is not None else None)
            if old.get("shadowPen") is not None:
                it.setShadowPen(_scaled_pen(pg.mkPen(old["shadowPen"]), k))

            def restore(it=it, old=old):
                it.opts["pen"], it.opts["shadowPen"] = old["pen"], old.get("shadowPen")
                it.updateItems(styleUpdate=True)

            self._undo.append(restore)
        elif isinstance(it, pg.PlotCurveItem):
            if isinstance(it.parentItem(), pg.PlotDataItem):
                return  # done through its PlotDataItem
            old = dict(it.opts)
            it.setPen(_scaled_pen(pg.mkPen(old["pen"]), k))
            if old.get("shadowPen") is not None:
                it.setShadowPen(_scaled_pen(pg.mkPen(old["shadowPen"]), k))

            def restore(it=it, old=old):
                it.setPen(old["pen"])
                it.setShadowPen(old.get("shadowPen"))

            self._undo.append(restore)
        elif isinstance(it, pg.BarGraphItem):
            old_pen = it.opts.get("pen")
            if old_pen is not None:
                it.setOpts(pen=_scaled_pen(pg.mkPen(old_pen), k))
                self._undo.append(lambda it=it, p=old_pen: it.setOpts(pen=p))
        elif isinstance(it, pg.AxisItem):
            pen, tpen = it.pen(), it.textPen()
            it.setPen(_scaled_pen(pen, k))
            self._undo.append(lambda it=it, p=pen: it.setPen(p))
            del tpen  # text is drawn with the font, its pen width does not matter
        elif isinstance(it, pg.InfiniteLine):
            pen = QPen(it.pen)
            it.setPen(_scaled_pen(pen, k))
            self._undo.append(lambda it=it, p=pen: it.setPen(p))
        elif isinstance(it, pg.ViewBox):
            border = it.border
            if border is not None and border.style() != Qt.PenStyle.NoPen:
                saved = QPen(border)
                it.setBorder(_scaled_pen(border, k))
                self._undo.append(lambda it=it, p=saved: it.setBorder(p))
        elif isinstance(it, (QAbstractGraphicsShapeItem, QGraphicsLineItem)):
            pen = it.pen()
            if pen.style() != Qt.PenStyle.NoPen:
                saved = QPen(pen)
                it.setPen(_scaled_pen(pen, k))
                self._undo.append(lambda it=it, p=saved: it.setPen(p))

    # -- fonts --
    def scale_fonts(self, parts: list[Part], k: float) -> None:
        if abs(k - 1.0) < 1e-6:
            return
        # Only labels among the Qt widgets: they re-lay themselves out; tables and
        # headers keep their row heights and would clip larger text.
        labels = [(p.widget, QFont(p.widget.font()), p.widget.testAttribute(Qt.WidgetAttribute.WA_SetFont))
                  for p in parts if isinstance(p.widget, QLabel)]
        for w, old, had in labels:
            if w.minimumSize() == w.maximumSize():  # held (sizing.hold_size): let it grow
                size = w.minimumSize()
                release_size(w)
                self._undo.append(lambda w=w, size=size: w.setFixedSize(size))
            w.setFont(_scaled_font(old, k))
            self._undo.append(lambda w=w, f=old, had=had: w.setFont(f if had else QFont()))
        for part in parts:
            if part.is_view:
                for it in part.widget.scene().items():
                    self._scale_item_font(it, k)

    def _scale_item_font(self, it, k: float) -> None:
        if isinstance(it, pg.AxisItem):
            font = it.style.get("tickFont")
            tw, th = it.textWidth, it.textHeight
            it.setStyle(tickFont=_scaled_font(font, k))
            style = dict(it.labelStyle)
            if it.label.isVisible() or it.labelText:
                size = style.get("font-size")
                new = dict(style)
                if size:
                    new["font-size"] = scale_html_fonts(f"font-size:{size}", k).split(":", 1)[1]
                else:
                    new["font-size"] = f"{_default_pt() * k:.3g}pt"
                it.labelStyle = new
                it._updateLabel()

            def restore(it=it, font=font, style=style, tw=tw, th=th):
                it.labelStyle = style
                it.setStyle(tickFont=font)
                it.textWidth, it.textHeight = tw, th
                it._updateLabel()

            self._undo.append(restore)
        elif isinstance(it, pg.LabelItem):
            opts = dict(it.opts)
            size = opts.get("size")
            new = scale_html_fonts(f"font-size:{size}", k).split(":", 1)[1] if size else (
                f"{_default_pt() * k:.3g}pt")
            it.setText(it.text, size=new)

            def restore(it=it, opts=opts):
                it.opts = dict(opts)
                it.setText(it.text)

            self._undo.append(restore)
        elif hasattr(it, "scale_font") and not isinstance(it.parentItem(), pg.LabelItem):
            self._undo.append(it.scale_font(k))  # plotting._RunsItem outside a RunsLabel (tile labels)
        elif isinstance(it, QGraphicsTextItem):
            parent = it.parentItem()
            if isinstance(parent, (pg.AxisItem, pg.LabelItem)):
                return  # handled with their owner
            html, font = it.toHtml(), QFont(it.font())
            it.setFont(_scaled_font(font, k))
            it.setHtml(scale_html_fonts(html, k))
            if hasattr(parent, "updateTextPos"):
                parent.updateTextPos()

            def restore(it=it, html=html, font=font, parent=parent):
                it.setFont(font)
                it.setHtml(html)
                if hasattr(parent, "updateTextPos"):
                    parent.updateTextPos()

            self._undo.append(restore)

    # -- item caches --
    def vector_items(self, views: list[QGraphicsView]) -> None:
        """Items cached as pixmaps (a window may cache axes and labels for speed) would
        reach a PDF or SVG as bitmaps and a large PNG as blurred text: paint them afresh."""
        none = QGraphicsItem.CacheMode.NoCache
        for view in views:
            for it in view.scene().items():
                mode = it.cacheMode()
                if mode != none:
                    it.setCacheMode(none)
                    self._undo.append(lambda it=it, m=mode: it.setCacheMode(m))

    # -- title rows --
    def fit_titles(self, views: list[QGraphicsView]) -> None:
        """pyqtgraph fixes a PlotItem's title row at 30 px; a two-line or enlarged title
        would be cut off, so give the row the height its text needs."""
        for view in views:
            for it in view.scene().items():
                if not isinstance(it, pg.PlotItem):
                    continue
                label = it.titleLabel
                if label is None or not label.isVisible():
                    continue
                need = int(label.item.boundingRect().height() + 0.999)
                have = it.layout.rowMinimumHeight(0)
                if need > have + 1:
                    saved = (it.layout.rowMaximumHeight(0), label.minimumHeight(), label.maximumHeight())
                    it.layout.setRowFixedHeight(0, need)
                    label.setMaximumHeight(need)
                    label.setMinimumHeight(need)

                    def restore(it=it, label=label, have=have, saved=saved):
                        it.layout.setRowMinimumHeight(0, have)
                        it.layout.setRowMaximumHeight(0, saved[0])
                        label.setMinimumHeight(saved[1])
                        label.setMaximumHeight(saved[2])

                    self._undo.append(restore)

    # -- colours --
    def light_colours(self, root: QWidget, parts: list[Part]) -> None:
        """The light theme: the panel's own `apply_theme` when it has one, else a generic
        white background with dark axes and text."""
        light = _light_theme()
        had = root.testAttribute(Qt.WidgetAttribute.WA_SetPalette)
        pal = QPalette(root.palette())
        fill = root.autoFillBackground()
        root.setPalette(_light_palette())
        root.setAutoFillBackground(True)
        self._undo.append(lambda: (root.setPalette(pal if had else QPalette()),
                                   root.setAutoFillBackground(fill)))
        if light is not None and hasattr(root, "apply_theme") and hasattr(root, "theme"):
            old = root.theme
            if getattr(old, "name", None) != light.name:
                root.apply_theme(light)
                self._undo.append(lambda root=root, old=old: root.apply_theme(old))
            return
        fg, bg = QColor("#1f2328"), QColor("#ffffff")
        for part in parts:
            w = part.widget
            if part.is_view:
                brush = w.backgroundBrush()
                w.setBackground(bg)
                self._undo.append(lambda w=w, b=brush: w.setBackgroundBrush(b))
                for it in w.scene().items():
                    if isinstance(it, pg.AxisItem):
                        pen, tpen = QPen(it.pen()), QPen(it.textPen())
                        it.setPen(pg.mkPen(fg, width=pen.widthF()))
                        it.setTextPen(pg.mkPen(fg))
                        self._undo.append(lambda it=it, p=pen, t=tpen: (it.setPen(p), it.setTextPen(t)))
                    elif isinstance(it, pg.LabelItem):
                        opts = dict(it.opts)
                        it.setText(it.text, color=fg)
                        self._undo.append(lambda it=it, o=opts: (setattr(it, "opts", dict(o)), it.setText(it.text)))


def _default_pt() -> float:
    f = QApplication.font()
    return f.pointSizeF() if f.pointSizeF() > 0 else 9.0


def _light_theme():
    try:
        from .figures.themes import LIGHT
    except ImportError:  # the window's themes are optional for this module
        return None
    return LIGHT


def _light_palette() -> QPalette:
    try:
        from .figures.themes import LIGHT, qt_palette

        return qt_palette(LIGHT)
    except ImportError:
        pal = QPalette(QColor("#f3f4f6"))
        pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
        return pal


@contextlib.contextmanager
def restyled(root: QWidget, parts_fn: Callable[[], list[Part]], look: Look,
             raster_scale: float = 1.0, adapt: bool = True) -> Iterator[list[Part]]:
    """Apply `look` (and pen widths for `raster_scale`) to the panel; yield its parts,
    recomputed after the relayout; undo everything on exit.

    adapt: when the larger fonts would push plots out of their views (the panel cannot
    grow inside the window), step the font scale down until they fit again."""
    base = overflow(parts_fn())
    font_scale = look.font_scale
    while True:
        r = Restyler()
        try:
            parts = parts_fn()
            if look.light:
                r.light_colours(root, parts)
                settle(1)
                parts = parts_fn()
            r.scale_fonts(parts, font_scale)
            r.scale_pens(views_of(parts), look.pen_scale * raster_scale)
            r.fit_titles(views_of(parts))
            r.vector_items(views_of(parts))  # after apply_theme, which may re-enable caches
            settle()
            warm_up(root, parts_fn(), raster_scale)
            parts = parts_fn()
            r.vector_items(views_of(parts))
            over = overflow(parts)
            if adapt and font_scale > 1.0 and (over[0] > base[0] + 1 or over[1] > base[1] + 1):
                font_scale = 1.0 if font_scale < 1.1 else max(1.0, font_scale - 0.15)
                continue  # (the finally clause undoes this attempt first)
            yield parts
            return
        finally:
            r.undo()
            settle(1)


# ---- captions ------------------------------------------------------------------------


def caption_font(look: Look) -> QFont:
    f = QFont(QApplication.font())
    f.setPointSizeF(max(_default_pt(), 9.0) * 1.1 * look.font_scale)
    return f


def caption_height(look: Look) -> int:
    from PySide6.QtGui import QFontMetricsF

    return int(QFontMetricsF(caption_font(look)).height() * 1.8) + 4


def caption_colours(look: Look, root: QWidget) -> tuple[QColor, QColor]:
    """(text, background) of the caption strip."""
    if look.light:
        return QColor("#1f2328"), QColor("#ffffff")
    pal = root.palette()
    return pal.color(QPalette.ColorRole.WindowText), pal.color(QPalette.ColorRole.Window)


def paint_caption(painter: QPainter, rect: QRectF, text: str, look: Look, root: QWidget) -> None:
    fg, bg = caption_colours(look, root)
    painter.save()
    try:
        painter.fillRect(rect, bg)
        painter.setPen(fg)
        painter.setFont(caption_font(look))
        inner = rect.adjusted(10, 0, -10, 0)
        painter.drawText(inner, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text)
    finally:
        painter.restore()


# ---- the two raster/vector painters ------------------------------------------------------


def figure_geometry(parts: list[Part], look: Look, caption: str | None) -> tuple[QRect, QSize]:
    """(the root's rectangle the figure shows, the figure's logical size with the caption)."""
    rect = figure_rect(parts)
    return rect, QSize(rect.width(), rect.height() + (caption_height(look) if caption else 0))


def render_image(root: QWidget, width: int, look: Look, caption: str | None = None,
                 include_controls: bool = False) -> QImage:
    """The figure as a QImage exactly `width` px wide (height keeps the aspect ratio)."""
    parts_fn = lambda: figure_parts(root, include_controls)  # noqa: E731
    estimate = width / max(1, figure_rect(parts_fn()).width())
    with restyled(root, parts_fn, look, estimate) as parts:
        rect, logical = figure_geometry(parts, look, caption)
        scale = width / max(1, logical.width())
        height = max(1, round(logical.height() * scale))
        img = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        _, bg = caption_colours(look, root)
        img.fill(bg)
        p = QPainter(img)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            p.scale(scale, scale)
            p.translate(-rect.x(), -rect.y())
            paint_parts(p, parts, scale)
            if caption:
                paint_caption(p, QRectF(rect.x(), rect.bottom() + 1, rect.width(),
                                        logical.height() - rect.height()), caption, look, root)
        finally:
            p.end()
    return img.convertToFormat(QImage.Format.Format_RGB32)


def render_pdf(root: QWidget, look: Look, caption: str | None = None,
               include_controls: bool = False, title: str = "") -> bytes:
    """The figure as a one-page vector PDF sized to the widget (96 logical px per inch)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    with restyled(root, lambda: figure_parts(root, include_controls), look, 1.0) as parts:
        rect, logical = figure_geometry(parts, look, caption)
        writer = QPdfWriter(buf)
        writer.setResolution(96)  # 1 device unit = 1 logical pixel: cosmetic pens keep their look
        writer.setCreator("Attention Explorer")
        if title:
            writer.setTitle(title)
        points = QSizeF(logical.width() * 72 / 96, logical.height() * 72 / 96)
        writer.setPageLayout(QPageLayout(QPageSize(points, QPageSize.Unit.Point, "figure",
                                                   QPageSize.SizeMatchPolicy.ExactMatch),
                                         QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
        p = QPainter()
        if not p.begin(writer):
            raise RuntimeError("Qt could not start a PDF page")
        try:
            # heatmaps are images: keep their exact colours (no JPEG)
            p.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            _, bg = caption_colours(look, root)
            p.fillRect(QRectF(0, 0, logical.width(), logical.height()), bg)
            p.translate(-rect.x(), -rect.y())
            paint_parts(p, parts, 1.0)
            if caption:
                paint_caption(p, QRectF(rect.x(), rect.bottom() + 1, rect.width(),
                                        logical.height() - rect.height()), caption, look, root)
        finally:
            p.end()
    buf.close()
    return bytes(data.data())
