"""The length profile in the window: View ▸ Length profile…, the panel's dock (made the first
time it is asked for: `show_profile`, or an export naming "profile": `profile_panel(window)`
makes it with its dock closed), so a window that never profiles pays nothing.

    ProfileActions(state, host)   # the feature: MainWindow.features["profile"], state.profile
    show_profile(window) -> ProfilePanel
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence

from ..feature import Feature
from ..host import host_of
from .state import ProfileState


class ProfileActions(Feature):
    """View ▸ Length profile… (Ctrl+Shift+L), and the window's ProfileState
    (`state.profile`), whose measuring stops when the window goes."""

    name = "profile"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        if self.state.profile is None:
            self.state.profile = ProfileState()
        self.destroyed.connect(self.state.profile.stop)  # (a Qt child of the window: deleted with it)
        self.action = QAction(host.parent_widget())
        self.action.setObjectName("action_length_profile")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.action.triggered.connect(lambda: show_profile(host))
        host.menu("view").addSeparator()
        host.add_action("view", self.action)
        self.retranslate_ui()

    def shutdown(self) -> None:
        """The window closes: a measurement stops with its process (not when the app exits)."""
        self.state.profile.stop()

    def retranslate_ui(self) -> None:
        self.action.setText(QCoreApplication.translate("ProfileActions", "&Length profile…"))
        self.action.setStatusTip(QCoreApplication.translate(
            "ProfileActions", "Measure time and memory of every backend as the sequence grows"))


def install_profile(window) -> ProfileState:
    """The window's ProfileState (made with the feature `MainWindow.features["profile"]`)."""
    return host_of(window).state.profile


def profile_panel(window):
    """The window's `profile` panel, made (with its dock closed) if it is not there yet."""
    from . import panel  # noqa: F401 (registers the "profile" panel)

    window = host_of(window)  # (the window or its host)
    if "profile" in window.panel_names():
        return window.panel("profile")
    made = window.add_panel("profile", dock_area=False)
    dock = window.dock("profile")
    window.add_dock(dock)
    dock.hide()
    window.add_view_entry("profile")
    return made


def show_profile(window):
    """Open (or raise) the length profile: its dock floats over the window the first time
    (two log–log plots and a table need more room than a tab of the panel grid)."""
    window = host_of(window)  # (the window or its host)
    new = "profile" not in window.panel_names()
    made = profile_panel(window)
    dock = window.dock("profile")
    if new or not dock.isVisible():
        if new:
            dock.setFloating(True)
            geo = window.parent_widget().geometry()
            w, h = max(int(geo.width() * 0.8), 900), max(int(geo.height() * 0.8), 620)
            dock.resize(w, h)
            dock.move(geo.x() + (geo.width() - w) // 2, geo.y() + (geo.height() - h) // 2)
    dock.show()
    dock.raise_()
    return made
