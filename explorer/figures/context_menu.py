"""The app's own right-click menu on a pyqtgraph view, instead of pyqtgraph's.

pyqtgraph gives every scene an "Export…" action (its own exporter, which raised
`AttributeError: 'GraphicsScene' object has no attribute 'contextMenuItem'` when triggered
other than from its menu), every `ViewBox` and `PlotItem` a menu (axis ranges, log scale,
"Plot options"), and every `ColorBarItem` a colour-map menu that recolours a figure behind
the panel's back. A student meets the app's menu instead:

    FigureMenu(view, fill)   # fill(menu: QMenu) adds the entries (Copy as image, Export…,
                             # Reset view: `Panel` does it)

How, with pyqtgraph's public API only:
- the scene's `contextMenu` list (the actions it appends to its items' menus) is emptied and
  its actions deleted, so no "Export…" action is left to trigger;
- on every right-button press, before pyqtgraph sees it, each `ViewBox` / `PlotItem` of the
  scene gets `setMenuEnabled(False)` and each `ColorBarItem` `colorMapMenu = False` (their
  documented switch): items a panel adds after a new frame are covered too;
- the right click itself arrives through the scene's `sigMouseClicked` (no item accepts it
  any more), and the app's menu pops up there.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtWidgets import QMenu


def quiet_pyqtgraph_menus(scene: pg.GraphicsScene) -> None:
    """Turn off every menu pyqtgraph would open in `scene` (see the module docstring)."""
    for act in scene.contextMenu:
        act.setParent(None)  # no longer a child of the window's tree; freed with the list below
    scene.contextMenu = []
    for item in scene.items():
        if isinstance(item, (pg.ViewBox, pg.PlotItem)) and item.menuEnabled():
            item.setMenuEnabled(False)
        elif isinstance(item, pg.ColorBarItem):
            item.colorMapMenu = False


class FigureMenu(QObject):
    """The right-click menu of one pyqtgraph view: `fill(menu)` adds its entries each time it
    opens (so their texts follow the language). `last_menu` is the menu (made on first use, refilled each time)."""

    def __init__(self, view: pg.GraphicsView, fill: Callable[[QMenu], None]) -> None:
        super().__init__(view)
        self.view = view
        self.fill = fill
        self.last_menu: QMenu | None = None
        quiet_pyqtgraph_menus(view.scene())
        view.viewport().installEventFilter(self)
        view.scene().sigMouseClicked.connect(self._on_click)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.RightButton:
            quiet_pyqtgraph_menus(self.view.scene())
        return False  # pyqtgraph still gets the press (a right-drag still zooms where allowed)

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.RightButton or ev.isAccepted():
            return
        ev.accept()
        pos = ev.screenPos()
        self.popup(QPoint(int(pos.x()), int(pos.y())))

    def popup(self, at: QPoint) -> QMenu:
        """Open the menu at global position `at` (what a right click does)."""
        if self.last_menu is None:  # one menu, a child of the view: Qt deletes it with the view
            self.last_menu = QMenu(self.view)
        menu = self.last_menu
        menu.clear()
        self.fill(menu)
        menu.popup(at)
        return menu
