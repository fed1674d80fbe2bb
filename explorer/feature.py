"""A feature of the window: made in one place (`MainWindow._create_features`) from the state
and a host (explorer.host.Host), owning its actions, menu entries, texts and widgets.

    class SnapshotsFeature(Feature):
        name = "snapshots"
        def __init__(self, state, host):
            super().__init__(state, host)         # self.state, self.host
            self.action = QAction(host.parent_widget())
            host.add_action("edit", self.action)
            self.retranslate_ui()
        def retranslate_ui(self):                 # the host calls it on a language change
            self.action.setText(self.tr("S&napshots…"))

A feature is a Qt child of the host's widget (deleted with it) and keeps no reference to
the window: it asks the host (add a panel, an action to a menu, a status message, a panel
brought forward) and follows the state's events. It finds another feature with
`host.feature(name)` (the animation entry goes after `host.feature("export").export_action`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from .host import Host
    from .state import AppState


class Feature(QObject):
    """See the module docstring."""

    name: ClassVar[str] = ""

    def __init__(self, state: AppState, host: Host) -> None:
        super().__init__(host.parent_widget())
        self.state = state
        self.host = host

    def retranslate_ui(self) -> None:
        """Set the feature's texts in the current language (the host calls this once every
        feature is made and on every language change)."""

    def may_close(self) -> bool:
        """Whether the window may close now (its closeEvent asks every feature first): False
        keeps it open (a question about unsaved work answered Cancel, or a save that closes
        the window once done)."""
        return True

    def closing(self) -> None:
        """The window closes (every feature agreed): put back what must not outlive it (the
        window's layout is saved next)."""

    def shutdown(self) -> None:
        """Stop what the feature runs (the window calls this when it closes)."""
