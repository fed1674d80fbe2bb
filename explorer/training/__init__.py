"""The training lab's window half: the `training` panel, its thread and its experiments.

`install_training(window)` gives a window its lab (`window.training_lab`) and a menu entry
(Lessons ▸ Training lab…); the panel's dock is made the first time it is asked for, so a
window that never opens the lab never starts its training process. The engine is
`engine.training`.

Importing this package is cheap and Qt-free (the training process imports
`explorer.training.serve` and nothing of the GUI): the Qt parts load on first use.
"""

from __future__ import annotations

import importlib

__all__ = ["PRESETS", "Preset", "Run", "TrainingLab", "TrainingPanel", "install_training", "lab_for",
           "show_training"]

_LAZY = {"PRESETS": "presets", "Preset": "presets", "Run": "lab", "TrainingLab": "lab", "lab_for": "lab",
         "TrainingPanel": "panel"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _actions_class():
    from PySide6.QtCore import QCoreApplication, QEvent, QObject
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QMenu

    class TrainingActions(QObject):
        """The menu entry, in the window's language."""

        def __init__(self, window) -> None:
            super().__init__(window)
            self.window = window
            self.action = QAction(window)
            self.action.setObjectName("action_training_lab")
            self.action.setShortcut(QKeySequence("Ctrl+Shift+T"))
            self.action.triggered.connect(lambda: show_training(window))
            window.addAction(self.action)
            menu = window.menuBar().findChild(QMenu, "menu_lessons")
            if menu is not None:
                menu.addSeparator()
                menu.addAction(self.action)
            else:
                self.menu = window.menuBar().addMenu("")
                self.menu.setObjectName("menu_training")
                self.menu.addAction(self.action)
            window.installEventFilter(self)
            self.retranslate_ui()

        def retranslate_ui(self) -> None:
            self.action.setText(QCoreApplication.translate("TrainingActions", "&Training lab…"))
            self.action.setStatusTip(QCoreApplication.translate(
                "TrainingActions", "Train a tiny transformer and watch its heads form"))
            if hasattr(self, "menu"):
                self.menu.setTitle(QCoreApplication.translate("TrainingActions", "&Training"))

        def eventFilter(self, obj, event) -> bool:
            if obj is self.window and event.type() == QEvent.Type.LanguageChange:
                self.retranslate_ui()
            return False

    return TrainingActions


def install_training(window):
    """Give ``window`` its training lab (``window.training_lab``) and the menu entry that
    opens the panel (idempotent). The lab's thread stops when the window closes."""
    existing = getattr(window, "training_lab", None)
    if existing is not None:
        return existing
    from . import panel  # noqa: F401 (registers the "training" panel)
    from .lab import lab_for

    lab = lab_for(window.selection)
    lab.window = window
    window.training_lab = lab
    window.installEventFilter(lab)  # the window closing stops the training thread
    window.destroyed.connect(lab.worker.stop)
    window._training_actions = _actions_class()(window)
    lab.hook_lessons()  # a lesson panel made before the lab (else: when it is made)
    return lab


def _place(window, dock) -> None:
    """A new lab dock floats over the window at 85 % of its size: the lab needs more room
    than a tab of the panel grid gives (the other docks keep their minimum heights); a
    double click on its title docks it."""
    dock.setFloating(True)
    geo = window.geometry()
    w, h = int(geo.width() * 0.85), int(geo.height() * 0.85)
    dock.resize(max(w, 900), max(h, 640))
    dock.move(geo.x() + (geo.width() - dock.width()) // 2, geo.y() + (geo.height() - dock.height()) // 2)


def show_training(window):
    """Open (or raise) the training panel (its dock made the first time, floating over the
    window). Returns the panel."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMenu

    install_training(window)
    new = "training" not in window.panel_names()
    panel = window.add_panel("training", dock_area=False)
    dock = window.dock("training")
    if new:
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        _place(window, dock)
        view = window.menuBar().findChild(QMenu, "menu_view")
        if view is not None:
            view.addAction(dock.toggleViewAction())
    dock.show()
    dock.raise_()
    return panel
