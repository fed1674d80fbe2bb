"""Readable panels: no panel squashed to nothing, a lesson's panels brought forward at a size
they can be read at, and View ▸ Focus panel (or a double click on a dock's title) giving one
panel the whole window and back.

A part of `MainWindow` (explorer.window), in a file of its own: the methods read the window's
docks and panels. Texts are translated in the "MainWindow" context, like the rest of the window.

    readable      Panel.readable_size (w, h) px: below it a panel's charts have no height or
                  its texts are cut. A dock in front (shown, not behind a tab) has its panel's
                  minimum size set to it, so Qt's dock layout gives it that room (taking it from
                  the other docks, down to their own minimums) and a splitter cannot squash it;
                  a dock behind a tab or closed asks nothing, not even its layout's size hint
                  (it would hold its tab group open).
                  On a screen lower than the default window, every minimum shrinks in proportion
                  so the window still fits.
    focus         the other docks hidden (the window's dock layout saved first), the same call
                  again restores the layout; a saved layout is never the focused one.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget

from .panels import PANELS

#: the window height (px) the readable sizes are for (the default window)
DESIGN_HEIGHT = 1000


class FocusMixin:
    """See the module docstring (mixed into MainWindow)."""

    _focus_saved: QByteArray | None = None
    _focused: str | None = None

    # ---- minimum sizes -------------------------------------------------------------------
    def readable_size(self, name: str) -> QSize:
        """Panel `name`'s minimum readable size here (scaled down on a low screen)."""
        panel = self._panels.get(name)
        return self._scaled(*(type(panel) if panel is not None else PANELS[name]).readable_size)

    def _scaled(self, w: int, h: int) -> QSize:
        screen = self.screen() or QGuiApplication.primaryScreen()
        avail = screen.availableGeometry().height() - 60 if screen is not None else DESIGN_HEIGHT
        k = min(1.0, max(avail, self.height(), 400) / DESIGN_HEIGHT)  # (a window taller than its screen: offscreen)
        return QSize(int(w * k), int(h * k))

    def _keep_readable(self, name: str, in_front: bool, panel=None) -> None:
        """A dock came to the front (or went behind a tab / closed): its panel's minimum size."""
        panel = panel or self._panels.get(name)
        if panel is None:
            return
        if not in_front:  # (also while the window is being destroyed: ask nothing of it)
            panel.setMinimumSize(QSize(1, 1))  # (1: not its size hint)
            return
        w, h = type(panel).readable_size  # never below what the panel's own layout needs
        panel.setMinimumSize(self._scaled(w, h).expandedTo(panel.minimumSizeHint()))

    # ---- focus ---------------------------------------------------------------------------
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
        name = name or self._help_topic_here()
        if name not in self._docks:
            self._sync_focus_action()  # (Qt ticked the checkable action before asking)
            self.statusBar().showMessage(QCoreApplication.translate(
                "MainWindow", "Point at a panel (or click in it), then Focus panel gives it the window"), 6000)
            return False
        self._focus_saved = self.saveState()
        self._focused = name
        dock = self._docks[name]
        for other in [self.controls_dock, *self._docks.values()]:
            if other is not dock and not other.isFloating():
                other.hide()
        dock.show()
        dock.raise_()
        self._sync_focus_action()
        self.statusBar().showMessage(QCoreApplication.translate(
            "MainWindow", "{panel} has the window: Focus panel again (or double-click its title) to go back").format(
            panel=dock.windowTitle()), 6000)
        return True

    def unfocus_panel(self) -> None:
        """The layout from before Focus panel (nothing if none is focused); a panel opened
        meanwhile stays open, and the banner shows what it says now (not what it said then)."""
        saved, focused = self._focus_saved, self._focused
        self._focus_saved = self._focused = None
        if saved is not None:
            opened = [d for n, d in self._docks.items() if n != focused and d.isVisible()]
            self.restoreState(saved)
            for dock in opened:
                dock.show()
            if self.banner.bar is not None:
                self.banner.bar.setVisible(self.banner.kind is not None)
        self._sync_focus_action()

    def _sync_focus_action(self) -> None:
        self.act_focus.setChecked(self._focused is not None)

    def _watch_title_clicks(self, dock: QDockWidget) -> None:
        """A double click on a docked panel's title focuses it (floating: Qt docks it back)."""
        dock.installEventFilter(self)

    def _title_double_clicked(self, obj, event) -> bool:
        """eventFilter's part: True when `event` was a double click on a dock's title that
        focused or restored its panel."""
        if event.type() != QEvent.Type.MouseButtonDblClick or not isinstance(obj, QDockWidget):
            return False
        if obj.isFloating() or obj.widget() is None or event.position().y() >= obj.widget().geometry().top():
            return False
        name = next((n for n, d in self._docks.items() if d is obj), None)
        if name is None:
            return False
        self.focus_panel(name)
        return True
