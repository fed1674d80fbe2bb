"""The length profile's window half: the `profile` panel, its state and its thread.

`install_profile(window)` adds View ▸ Length profile… (Ctrl+Shift+L); the panel and its
dock are made the first time they are asked for (`show_profile`, or an export naming
"profile": `profile_panel(window)` makes it with its dock closed), so a window that never
profiles pays nothing. The measuring is `engine.profile.length_profile`.

Importing this package is cheap: the Qt parts load on first use.
"""

from __future__ import annotations

import importlib

__all__ = ["ProfilePanel", "ProfileState", "install_profile", "profile_panel", "show_profile"]

_LAZY = {"ProfilePanel": "panel", "ProfileState": "state"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _actions_class():
    from PySide6.QtCore import QCoreApplication, QEvent, QObject
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QMenu

    class ProfileActions(QObject):
        """View ▸ Length profile…, in the window's language."""

        def __init__(self, window) -> None:
            super().__init__(window)
            self.window = window
            self.action = QAction(window)
            self.action.setObjectName("action_length_profile")
            self.action.setShortcut(QKeySequence("Ctrl+Shift+L"))
            self.action.triggered.connect(lambda: show_profile(window))
            window.addAction(self.action)
            menu = window.menuBar().findChild(QMenu, "menu_view")
            if menu is not None:
                menu.addSeparator()
                menu.addAction(self.action)
            window.installEventFilter(self)
            self.retranslate_ui()

        def retranslate_ui(self) -> None:
            self.action.setText(QCoreApplication.translate("ProfileActions", "&Length profile…"))
            self.action.setStatusTip(QCoreApplication.translate(
                "ProfileActions", "Measure time and memory of every backend as the sequence grows"))

        def eventFilter(self, obj, event) -> bool:
            if obj is self.window and event.type() == QEvent.Type.LanguageChange:
                self.retranslate_ui()
            return False

    return ProfileActions


def install_profile(window):
    """Give ``window`` the menu entry that opens the length profile (idempotent); the
    measuring stops when the window goes. Returns the window's ProfileState."""
    from .state import ProfileState

    if window.state.profile is None:
        window.state.profile = ProfileState()
    state = window.state.profile
    if getattr(window, "_profile_actions", None) is None:
        window._profile_actions = _actions_class()(window)
        window.destroyed.connect(state.stop)
    return state


def profile_panel(window):
    """The window's `profile` panel, made (with its dock closed) if it is not there yet."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMenu

    from . import panel  # noqa: F401 (registers the "profile" panel)

    if "profile" in window.panel_names():
        return window.panel("profile")
    install_profile(window)
    made = window.add_panel("profile", dock_area=False)
    dock = window.dock("profile")
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    dock.hide()
    view = window.menuBar().findChild(QMenu, "menu_view")
    if view is not None:
        view.addAction(dock.toggleViewAction())
    return made


def show_profile(window):
    """Open (or raise) the length profile: its dock floats over the window the first time
    (two log–log plots and a table need more room than a tab of the panel grid)."""
    new = "profile" not in window.panel_names()
    made = profile_panel(window)
    dock = window.dock("profile")
    if new or not dock.isVisible():
        if new:
            dock.setFloating(True)
            geo = window.geometry()
            w, h = max(int(geo.width() * 0.8), 900), max(int(geo.height() * 0.8), 620)
            dock.resize(w, h)
            dock.move(geo.x() + (geo.width() - w) // 2, geo.y() + (geo.height() - h) // 2)
    dock.show()
    dock.raise_()
    return made
