"""A feature of the window: made in one place (`MainWindow._create_features`) from the window
and its state, owning its actions, menu entries and texts.

    class SnapshotsFeature(Feature):
        name = "snapshots"
        def __init__(self, window):
            super().__init__(window)              # self.window, self.state
            self.action = QAction(window)          # its actions, into the window's menus
            window.menu_edit.addAction(self.action)
            self.retranslate_ui()
        def retranslate_ui(self):                 # the window calls it on a language change
            self.action.setText(self.tr("S&napshots…"))

The window keeps them in `MainWindow.features` (name → feature); a feature finds another one
there (the animation entry goes after `features["export"].export_action`), never through an
attribute attached to the window.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import QObject


class Feature(QObject):
    """See the module docstring."""

    name: ClassVar[str] = ""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.state = window.state

    def retranslate_ui(self) -> None:
        """Set the feature's texts in the current language (the window calls this once the
        feature is made and on every language change)."""

    def may_close(self) -> bool:
        """Whether the window may close now (its closeEvent asks every feature first): False
        keeps it open (a question about unsaved work answered Cancel, or a save that closes
        the window once done)."""
        return True

    def shutdown(self) -> None:
        """Stop what the feature runs (the window calls this when it closes)."""
