"""Where a figure's texts are: for tests and checks that nothing is cut or overlapping.

`text_boxes(widget)` lists, for every pyqtgraph view inside `widget`, each
visible text (titles, readouts, axis titles, line labels, tile labels) with
its box in the view's own pixel coordinates.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem, QGraphicsView, QWidget

from .text import RunsItem
from .token_axis import TokenAxis


def _text_of(item: QGraphicsItem) -> str | None:
    if isinstance(item, RunsItem):
        return item.plain_text()
    if isinstance(item, QGraphicsTextItem):
        return item.toPlainText()
    return None


def _clip_of(view: QGraphicsView, item: QGraphicsItem) -> QRectF:
    """Where `item` can be seen, in the view's pixels: the view, within the ViewBox that clips
    it and every item between that clips its children (a RunsLabel: a line wider than the
    label is cut at its edge)."""
    area = QRectF(view.rect())
    parent = item.parentItem()
    while parent is not None:
        clips = bool(parent.flags() & QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape)
        if clips or isinstance(parent, pg.ViewBox):
            area = area.intersected(view.mapFromScene(parent.sceneBoundingRect()).boundingRect().toRectF())
        if isinstance(parent, pg.ViewBox):
            return area
        parent = parent.parentItem()
    return area


def text_boxes(widget: QWidget) -> list[tuple[QGraphicsView, list[tuple[str, QRectF, QRectF]]]]:
    """[(view, [(text, box, area it must lie in), ...]), ...] of the visible texts, in the
    view's pixels; the area is the view, or the plot that clips the text (a bar's value)."""
    out = []
    for view in widget.findChildren(QGraphicsView):
        if not isinstance(view.scene(), pg.GraphicsScene) or not view.isVisible():
            continue
        boxes = []
        for item in view.scene().items():
            if isinstance(item, TokenAxis) and item.isVisible():
                whole = QRectF(view.rect())
                boxes += [(t, QRectF(view.mapFromScene(b).boundingRect()), whole) for t, b in item.label_boxes() if t]
                continue
            text = _text_of(item)
            if not text or not text.strip() or not item.isVisible():
                continue
            ink = item.boundingRect()
            if isinstance(item, QGraphicsTextItem):  # the text, not the document's margins
                m = item.document().documentMargin()
                ink = ink.adjusted(m, m, -m, -m)
            if isinstance(item, RunsItem) and item.layouts:  # the lines' ink, not the margins
                ink = QRectF()
                for layout in item.layouts:
                    for i in range(layout.lineCount()):
                        line = layout.lineAt(i)
                        ink = ink.united(QRectF(line.position().x(), line.position().y(),
                                                line.naturalTextWidth(), line.height()))
            box = view.mapFromScene(item.mapToScene(ink)).boundingRect()
            boxes.append((text, QRectF(box), _clip_of(view, item)))
        out.append((view, boxes))
    return out
