"""The focus feature: View ▸ Focus panel (Ctrl+Shift+F), or a double click on a docked panel's
title, gives one panel the whole window; again restores the layout from before.

    focus         the other docks hidden (the window's dock layout saved first, host.save_layout),
                  the same call again restores it; a saved layout is never the focused one.

Made from the state and the host (explorer.host). Texts are translated in the "MainWindow"
context, like the rest of the window.

The keyboard's focus ring (`FocusRing`): the Fusion style marks a focused slider or combo box
so faintly (on the dark theme not at all) that Tab seemed to go nowhere; a ring in the
palette's highlight colour is drawn around whichever control has the keyboard focus.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QObject, QRect, Qt
from PySide6.QtGui import QAction, QKeySequence, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QLineEdit,
    QTabBar,
    QWidget,
)
from shiboken6 import isValid

from .feature import Feature

#: controls that get the ring (a plot's view or a text area shows its focus its own way)
RING_CONTROLS = (QAbstractSlider, QComboBox, QAbstractSpinBox, QAbstractButton, QLineEdit, QTabBar,
                 QAbstractItemView)
RING_WIDTH = 2  # px


class FocusFeature(Feature):
    """See the module docstring."""

    name = "focus"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        self._saved: QByteArray | None = None
        self._focused: str | None = None
        self.act_focus = QAction(host.parent_widget())
        self.act_focus.setShortcut(QKeySequence("Ctrl+Shift+F"))
        self.act_focus.setCheckable(True)
        self.act_focus.triggered.connect(lambda: self.focus_panel())
        host.add_action("view", self.act_focus)
        for dock in host.docks():
            dock.installEventFilter(self)
        host.dock_added.connect(lambda name: host.dock(name).installEventFilter(self))
        self.ring = FocusRing(self)

    def retranslate_ui(self) -> None:
        self.act_focus.setText(QCoreApplication.translate("MainWindow", "&Focus panel"))
        self.act_focus.setStatusTip(QCoreApplication.translate(
            "MainWindow", "The panel under the mouse gets the whole window; again (or a double click on its title) to go back"))

    def focused_panel(self) -> str | None:
        """The panel that has the window to itself (View ▸ Focus panel), or None."""
        return self._focused

    def focus_panel(self, name: str | None = None) -> bool:
        """Give panel `name` (default: the one under the mouse or with the focus) the whole
        window; called again (any name) while one is focused, restore the layout. Returns
        whether a panel is focused now."""
        if self._focused is not None:
            self.unfocus_panel()
            return False
        host = self.host
        name = name or host.feature("help").topic_here()
        if name not in host.panel_names():
            self._sync_action()  # (Qt ticked the checkable action before asking)
            host.show_status(QCoreApplication.translate(
                "MainWindow", "Point at a panel (or click in it), then Focus panel gives it the window"), 6000)
            return False
        self._saved = host.save_layout()
        self._focused = name
        dock = host.dock(name)
        for other in host.docks():
            if other is not dock and not other.isFloating():
                other.hide()
        dock.show()
        dock.raise_()
        self._sync_action()
        host.show_status(QCoreApplication.translate(
            "MainWindow", "{panel} has the window: Focus panel again (or double-click its title) to go back").format(
            panel=dock.windowTitle()), 6000)
        return True

    def unfocus_panel(self) -> None:
        """The layout from before Focus panel (nothing if none is focused); a panel opened
        meanwhile stays open."""
        saved, focused = self._saved, self._focused
        self._saved = self._focused = None
        if saved is not None:
            host = self.host
            opened = [host.dock(n) for n in host.panel_names() if n != focused and host.dock(n).isVisible()]
            host.restore_layout(saved)
            for dock in opened:
                dock.show()
        self._sync_action()

    def closing(self) -> None:
        self.unfocus_panel()  # the layout saved is never the focused one

    def _sync_action(self) -> None:
        self.act_focus.setChecked(self._focused is not None)

    def eventFilter(self, obj, event) -> bool:
        """A double click on a docked panel's title focuses it (floating: Qt docks it back)."""
        if event.type() != QEvent.Type.MouseButtonDblClick or not isinstance(obj, QDockWidget):
            return False
        if obj.isFloating() or obj.widget() is None or event.position().y() >= obj.widget().geometry().top():
            return False
        name = next((n for n in self.host.panel_names() if self.host.dock(n) is obj), None)
        if name is None:
            return False
        self.focus_panel(name)
        return True


class _RingPainter(QWidget):
    """The ring itself: a frame-only child over the focused control's parent (mouse passes through)."""

    def __init__(self) -> None:
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QApplication.palette().color(QPalette.ColorRole.Highlight), RING_WIDTH)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        half = RING_WIDTH / 2
        p.drawRoundedRect(self.rect().toRectF().adjusted(half, half, -half, -half), 3, 3)
        p.end()


class FocusRing(QObject):
    """A ring around the control with the keyboard focus (any of RING_CONTROLS), following it
    as it moves or resizes; hidden when the focus leaves the controls."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._painter: _RingPainter | None = None
        self.target: QWidget | None = None
        QApplication.instance().focusChanged.connect(self._on_focus)

    def _on_focus(self, _old, new) -> None:
        if self.target is not None:
            try:
                self.target.removeEventFilter(self)
            except RuntimeError:  # (deleted)
                pass
        self.target = new if isinstance(new, RING_CONTROLS) and new.parentWidget() is not None else None
        if self.target is None:
            if self._painter is not None and isValid(self._painter):
                self._painter.hide()
            return
        self.target.installEventFilter(self)
        self.place()

    def place(self) -> None:
        """Over the target, RING_WIDTH + 1 px outside it where its parent has room."""
        t = self.target
        if t is None:
            return
        parent = t.parentWidget()
        if self._painter is None or not isValid(self._painter):  # (deleted with its last parent)
            self._painter = _RingPainter()
        ring = self._painter
        if ring.parentWidget() is not parent:
            ring.setParent(parent)
        m = RING_WIDTH + 1
        # (kept inside the parent: a control at its parent's edge would lose that side of the ring)
        ring.setGeometry(QRect(t.geometry()).adjusted(-m, -m, m, m).intersected(parent.rect()))
        ring.setVisible(t.isVisible())
        ring.raise_()
        ring.update()

    @property
    def painter(self) -> QWidget | None:
        """The ring's widget while it is shown somewhere (None before the first focus)."""
        return self._painter if self._painter is not None and isValid(self._painter) else None

    def eventFilter(self, obj, event) -> bool:
        if obj is self.target and event.type() in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show,
                                                   QEvent.Type.Hide):
            self.place()
        return False
