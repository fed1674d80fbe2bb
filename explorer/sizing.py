"""Widgets whose text changes every frame, kept from re-laying out and repainting the window.

Qt asks every layout from a widget up to the main window to lay itself out
again whenever the widget's size hint may have changed (QLabel.setText,
QSpinBox.setRange): for the status bar, the diagnostics cards and the sliders'
spin boxes that was a third of a frame while a slider was dragged. A widget
with a fixed size does not ask, so these get one, grown (never shrunk) when a
new text needs more room. And a label that paints its own background (`OpaqueLabel`)
repaints only itself on a new text; a transparent one makes Qt repaint every widget
beneath it, up to the window (a fifth of a frame for the cards and the status bar).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QWidget

QWIDGETSIZE_MAX = (1 << 24) - 1
_LABEL_SLACK = 8  # pixels: a plain label's size hint beyond its text (margins, indent), until measured
_SLACK = "held_slack"  # the measured slack, kept on the label (a Qt property: survives its Python wrapper)


def hold_size(widget: QWidget) -> None:
    """Fix the widget's size to fit its size hint, at least its current (minimum) width."""
    fixed = widget.minimumSize() == widget.maximumSize()
    if fixed and isinstance(widget, QLabel):
        # the common case, a held label whose new text still fits: a font-metrics lookup,
        # not a size hint (which lays the text out: ~10× dearer)
        slack = widget.property(_SLACK)
        metrics = widget.fontMetrics()
        need = metrics.horizontalAdvance(widget.text()) + (_LABEL_SLACK if slack is None else slack)
        # (the height too: a new font, e.g. the CJK one of Chinese, is taller)
        if need <= widget.maximumWidth() and metrics.height() <= widget.maximumHeight():
            return
    hint = widget.sizeHint()
    if isinstance(widget, QLabel):  # what this label's hint adds to its text (style margins, indent)
        widget.setProperty(_SLACK, max(0, hint.width() - widget.fontMetrics().horizontalAdvance(widget.text())))
    if not fixed or hint.width() > widget.maximumWidth() or hint.height() != widget.maximumHeight():
        widget.setFixedSize(max(hint.width(), widget.minimumWidth()), hint.height())


def release_size(widget: QWidget) -> None:
    """Undo hold_size: the widget sizes itself again (a new language, a larger export font)."""
    widget.setMinimumSize(0, 0)
    widget.setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX)


class OpaqueLabel(QLabel):
    """A QLabel that fills its background (its palette's colour for its background role, which
    a style sheet's `background` sets), so Qt need not repaint what lies beneath it.

    A style sheet turns autoFillBackground off when it polishes a widget (it draws the
    background itself, but Qt then counts the label as transparent); it is turned back on
    after every polish and style change."""

    def event(self, ev) -> bool:
        handled = super().event(ev)
        if ev.type() in (QEvent.Type.Polish, QEvent.Type.StyleChange) and not self.autoFillBackground():
            self.setAutoFillBackground(True)
        return handled
