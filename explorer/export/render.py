"""Painting a panel (pyqtgraph views plus ordinary Qt widgets) onto any QPainter.

A figure is a list of *parts*: the widgets of the panel in painting order,
each with its rectangle in the panel's coordinates. A pyqtgraph view is one
part (its whole scene); every other visible widget is painted on its own,
without its children, so input controls (buttons, combo boxes, sliders…) can
be left out of a figure while the labels and tables around the plots stay.
The same parts feed the PNG and PDF painters here and the SVG writer in
`export_svg`, so the three formats show the same picture.

Nothing here restyles anything: a panel figure is a fresh panel that
`explorer.export.fresh_panel` built offscreen in the figure's theme (the
slides colours, fonts and line widths, its lines also multiplied by the
raster scale, since Qt's cosmetic pens are device pixels). The window itself
is only ever painted as it is (the whole-window screenshot).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QEventLoop, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGraphicsItem,
    QGraphicsView,
    QLabel,
    QLayout,
    QLineEdit,
    QWidget,
)

#: Widgets that are controls, not content: left out of panel figures.
CONTROL_TYPES = (QAbstractButton, QComboBox, QAbstractSpinBox, QAbstractSlider, QLineEdit)


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


# ---- preparing a figure --------------------------------------------------------------


def vector_items(root: QWidget) -> None:
    """Paint every item of the figure's views afresh: items the window caches as pixmaps
    (axes, labels) would reach a PDF or SVG as bitmaps and a large PNG as blurred text.
    Only for a figure's own fresh panel: the window keeps its caches."""
    none = QGraphicsItem.CacheMode.NoCache
    for view in views_of(figure_parts(root, include_controls=True)):
        for it in view.scene().items():
            if it.cacheMode() != none:
                it.setCacheMode(none)


@contextlib.contextmanager
def prepared(root: QWidget, parts_fn: Callable[[], list[Part]], raster_scale: float,
             fresh: bool) -> Iterator[list[Part]]:
    """The figure's parts, after one scratch paint let the axes measure their labels.

    fresh: `root` is a figure's own offscreen panel (explorer.export.fresh_panel), drawn in
    the figure's theme; its items are switched to vector painting. Otherwise `root` is
    painted as it is (the whole window, a screenshot)."""
    if fresh:
        vector_items(root)
    warm_up(root, parts_fn(), raster_scale)
    yield parts_fn()


# ---- captions ------------------------------------------------------------------------


def caption_font(theme) -> QFont:
    f = QFont(QApplication.font())
    pt = f.pointSizeF() if f.pointSizeF() > 0 else 9.0
    f.setPointSizeF(max(pt, 9.0) * 1.1 * theme.font_scale)
    return f


def caption_lines(text: str, theme, width: float) -> list[str]:
    """The caption broken between words into lines that fit `width` logical px."""
    from PySide6.QtGui import QFontMetricsF

    metrics = QFontMetricsF(caption_font(theme))
    room = max(40.0, width - 20)
    lines, line = [], ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and metrics.horizontalAdvance(candidate) > room:
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line] if line else lines


def caption_height(theme, text: str = "", width: float = 1e9) -> int:
    from PySide6.QtGui import QFontMetricsF

    n = max(1, len(caption_lines(text, theme, width))) if text else 1
    return int(QFontMetricsF(caption_font(theme)).height() * (n + 0.8)) + 4


def caption_colours(theme) -> tuple[QColor, QColor]:
    """(text, background) of the caption strip and the figure's margins."""
    return QColor(theme.foreground), QColor(theme.background)


def paint_caption(painter: QPainter, rect: QRectF, text: str, theme) -> None:
    """The caption under the figure, on as many lines as it needs (nothing cut)."""
    fg, bg = caption_colours(theme)
    painter.save()
    try:
        painter.fillRect(rect, bg)
        painter.setPen(fg)
        painter.setFont(caption_font(theme))
        inner = rect.adjusted(10, 0, -10, 0)
        shown = "\n".join(caption_lines(text, theme, rect.width()))
        painter.drawText(inner, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), shown)
    finally:
        painter.restore()


# ---- the two raster/vector painters ------------------------------------------------------


def figure_geometry(parts: list[Part], theme, caption: str | None) -> tuple[QRect, QSize]:
    """(the root's rectangle the figure shows, the figure's logical size with the caption)."""
    rect = figure_rect(parts)
    return rect, QSize(rect.width(), rect.height() + (caption_height(theme, caption, rect.width()) if caption else 0))


def render_image(root: QWidget, width: int, theme, caption: str | None = None,
                 include_controls: bool = False, fresh: bool = True) -> QImage:
    """The figure as a QImage exactly `width` px wide (height keeps the aspect ratio).
    `theme`: what the figure is drawn in (its background, the caption)."""
    def under(rect: QRect) -> float:
        return caption_height(theme, caption, rect.width()) if caption else 0

    def paint_under(p: QPainter, area: QRectF) -> None:
        if caption:
            paint_caption(p, area, caption, theme)

    img = paint_figure(root, width, theme, under, paint_under, include_controls=include_controls, fresh=fresh)
    return img.convertToFormat(QImage.Format.Format_RGB32)


def paint_figure(root: QWidget, width: int, theme, under: Callable[[QRect], float],
                 paint_under: Callable[[QPainter, QRectF], None], *, include_controls: bool = False,
                 fresh: bool = True, image_format=QImage.Format.Format_ARGB32_Premultiplied) -> QImage:
    """The figure `width` px wide on the theme's background, with a strip of ``under(rect)``
    logical px below it (rect: the root's rectangle the figure shows) that ``paint_under(painter,
    area)`` fills: the caption of an export, the value of an animation's frame."""
    parts_fn = lambda: figure_parts(root, include_controls)  # noqa: E731
    estimate = width / max(1, figure_rect(parts_fn()).width())
    with prepared(root, parts_fn, estimate, fresh) as parts:
        rect = figure_rect(parts)
        extra = under(rect)
        scale = width / max(1, rect.width())
        height = max(1, round((rect.height() + extra) * scale))
        img = QImage(width, height, image_format)
        _, bg = caption_colours(theme)
        img.fill(bg)
        p = QPainter(img)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            p.scale(scale, scale)
            p.translate(-rect.x(), -rect.y())
            paint_parts(p, parts, scale)
            if extra:
                paint_under(p, QRectF(rect.x(), rect.bottom() + 1, rect.width(), extra))
        finally:
            p.end()
    return img


def render_pdf(root: QWidget, theme, caption: str | None = None,
               include_controls: bool = False, title: str = "", fresh: bool = True) -> bytes:
    """The figure as a one-page vector PDF sized to the widget (96 logical px per inch)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    with prepared(root, lambda: figure_parts(root, include_controls), 1.0, fresh) as parts:
        rect, logical = figure_geometry(parts, theme, caption)
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
            _, bg = caption_colours(theme)
            p.fillRect(QRectF(0, 0, logical.width(), logical.height()), bg)
            p.translate(-rect.x(), -rect.y())
            paint_parts(p, parts, 1.0)
            if caption:
                paint_caption(p, QRectF(rect.x(), rect.bottom() + 1, rect.width(),
                                        logical.height() - rect.height()), caption, theme)
        finally:
            p.end()
    buf.close()
    return bytes(data.data())
