"""Where a figure's texts are: for tests and checks that nothing is cut or overlapping.

`text_boxes(widget)` lists, for every pyqtgraph view inside `widget`, each
visible text (titles, readouts, axis titles, line labels, tile labels) with
its box in the view's own pixel coordinates.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem, QGraphicsView, QWidget

from .plots import _RunsItem
from .token_axis import TokenAxis


def _text_of(item: QGraphicsItem) -> str | None:
    if isinstance(item, _RunsItem):
        return "".join(t for line in item._runs[0] for t, _b, _c in line)
    if isinstance(item, QGraphicsTextItem):
        return item.toPlainText()
    return None


def text_boxes(widget: QWidget) -> list[tuple[QGraphicsView, list[tuple[str, QRectF]]]]:
    """[(view, [(text, box in the view's pixels), ...]), ...] of the visible texts."""
    out = []
    for view in widget.findChildren(QGraphicsView):
        if not isinstance(view.scene(), pg.GraphicsScene) or not view.isVisible():
            continue
        boxes = []
        for item in view.scene().items():
            if isinstance(item, TokenAxis) and item.isVisible():
                boxes += [(t, QRectF(view.mapFromScene(b).boundingRect())) for t, b in item.label_boxes() if t]
                continue
            text = _text_of(item)
            if not text or not text.strip() or not item.isVisible():
                continue
            ink = item.boundingRect()
            if isinstance(item, QGraphicsTextItem):  # the text, not the document's margins
                m = item.document().documentMargin()
                ink = ink.adjusted(m, m, -m, -m)
            if isinstance(item, _RunsItem) and item._layouts:  # the lines' ink, not the margins
                ink = QRectF()
                for layout in item._layouts:
                    for i in range(layout.lineCount()):
                        line = layout.lineAt(i)
                        ink = ink.united(QRectF(line.position().x(), line.position().y(),
                                                line.naturalTextWidth(), line.height()))
            box = view.mapFromScene(item.mapToScene(ink)).boundingRect()
            boxes.append((text, QRectF(box)))
        out.append((view, boxes))
    return out
