"""What a feature may ask of the window it is part of: the host interface.

A feature (export, models, training, profile, animation, snapshots, compare, and the
window's own menus, sessions, lessons, help, focus and status) is made in one place
(`MainWindow._create_features`) from the state and a `Host`, and asks the host only for
what is listed here. It never stores the window, never reads another object's private
attributes, and finds another feature with `host.feature(name)`.

    class SnapshotsFeature(Feature):
        name = "snapshots"
        def __init__(self, state, host):
            super().__init__(state, host)               # self.state, self.host
            self.action = QAction(host.parent_widget())
            host.add_action("edit", self.action)        # into Edit, its shortcut live
        def retranslate_ui(self):                       # the host calls it on a language change
            self.action.setText(self.tr("S&napshots…"))

`explorer.window.WindowHost` (one per MainWindow, `window.host`) is the one implementation;
a test may hand a feature any object with these members.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QByteArray, QSettings
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QMenu, QStatusBar, QWidget

    from engine import AttentionConfig

    from .figures.themes import Theme
    from .frame import Frame
    from .history import UndoHistory
    from .state import AppState

#: the menus a feature may add to, by key (their titles are the host's)
MENUS = ("file", "edit", "view", "selection", "lessons", "help")


class Host(Protocol):
    """See the module docstring."""

    state: AppState
    history: UndoHistory       # the undo history (its QUndoStack: `history.stack`)
    settings: QSettings        # what outlives the window: recent files, folders, the language
    #: Qt signals of the window: frame_requested(config) when a frame is asked of the worker;
    #: frame_shown(frame) then frame_rendered(config) after the panels repainted it;
    #: frame_progressed(rid, done, total) of a long frame; compute_failed(config, message);
    #: frame_cancelled(config); dock_added(name) when a panel's dock is made
    frame_requested: Any
    frame_shown: Any
    frame_rendered: Any
    frame_progressed: Any
    compute_failed: Any
    frame_cancelled: Any
    dock_added: Any

    # ---- widgets, menus and messages ----------------------------------------------------------
    def parent_widget(self) -> QWidget:
        """The parent of a feature's dialogs, actions and widgets (the main window)."""

    def menu(self, key: str) -> QMenu:
        """The menu `key` (one of MENUS)."""

    def add_action(self, menu: str | None, action: QAction, *, after: QAction | None = None,
                   before: QAction | None = None) -> None:
        """`action` into menu `menu` (None: no menu), after `after` or before `before` (else
        at the end); its shortcut works anywhere in the window."""

    def feature(self, name: str) -> Any:
        """Another feature, by name (made earlier: explorer.window.FEATURES' order)."""

    def status_bar(self) -> QStatusBar:
        """The status bar (a feature's permanent widgets go there)."""

    def show_status(self, text: str, ms: int = 0) -> None:
        """A transient message in the status bar (ms = 0: until the next one)."""

    def take_back_status(self, text: str) -> None:
        """Clear the status bar's message if it is still `text` (a hover's readout ends; a
        control's tip or a notice shown since stays)."""

    def show_banner(self, text: Any, kind: str = "error") -> None:
        """A message in the bar under the menus (`text`: a string, or a callable giving it in
        the current language); kinds: "error", "warning", "info", "cancelled"."""

    def hide_banner(self) -> None:
        """Take the banner's message away."""

    def banner_kind(self) -> str | None:
        """The kind of message the banner shows, None when it shows none."""

    def set_menu_corner_widget(self, widget: QWidget) -> None:
        """`widget` at the right end of the menu bar."""

    def formula_action(self) -> QAction:
        """The action showing or hiding the formula strip (View ▸ Formula)."""

    def set_window_title(self, text: str) -> None:
        """The window title ("[*]" marks where Qt shows "*" while modified)."""

    def set_window_modified(self, modified: bool) -> None:
        """Whether the window has unsaved changes."""

    # ---- panels and their docks ---------------------------------------------------------------
    def add_panel(self, name: str, dock_area: bool = True) -> QWidget:
        """The registered panel `name` in its own dock (made the first time)."""

    def panel(self, name: str) -> QWidget:
        """The panel `name` (KeyError if the window has none); a panel closed since the window
        opened is made now."""

    def panel_names(self, *, made: bool = False) -> list[str]:
        """The panels the window has, in the order their docks were made; `made`: only the
        panels made so far (one closed since the window opened is made when first shown)."""

    def dock(self, name: str) -> QDockWidget:
        """Panel `name`'s dock."""

    def docks(self) -> list[QDockWidget]:
        """Every dock: the configuration's first, then each panel's."""

    def show_panel(self, name: str) -> None:
        """Bring panel `name` forward (reopened if closed): what View ▸ a panel does."""

    def add_view_entry(self, name: str) -> QAction:
        """View ▸ panel `name` (or "controls"): shows it at its readable size, never closes
        it (explorer.layout); made once."""

    def reset_layout(self) -> None:
        """View ▸ Reset layout: the default docks at their default sizes (explorer.layout)."""

    def highlight_panels(self, names: Iterable[str]) -> None:
        """A lesson's perspective: mark the docks of `names` and bring them forward at a size
        they can be read at; an empty list clears the marks."""

    def place_beside_controls(self, name: str) -> None:
        """Panel `name`'s dock under the configuration (or where the user left it)."""

    def float_panel(self, name: str) -> None:
        """Panel `name`'s dock floating over the panels, beside the lesson and configuration."""

    def tabify(self, beside: str, name: str) -> None:
        """Panel `name`'s dock in a tab beside panel `beside`'s."""

    def add_dock(self, dock: QDockWidget, floating: bool = False) -> None:
        """A feature's own dock (not a panel's) into the window."""

    def save_layout(self) -> QByteArray:
        """The docks' layout now (for `restore_layout`)."""

    def restore_layout(self, saved: QByteArray) -> None:
        """A layout saved before."""

    # ---- the frame ----------------------------------------------------------------------------
    def timings(self) -> tuple[float, float]:
        """(render ms, latency ms) of the frame just shown (latency NaN: not requested)."""

    def cancel_frame(self) -> bool:
        """Stop the frame being computed; whether one was."""

    def render_sync(self, config: AttentionConfig | None = None, *, all_panels: bool = True) -> Frame:
        """Compute and draw `config` (default: the state's) now, in this thread."""

    def apply_theme(self, theme: Theme) -> None:
        """The window in `theme` (again when it is the theme already: fonts re-measured)."""

    def flush_controls(self) -> None:
        """Send a slider value the controls still hold back (throttled) now."""


def host_of(window_or_host: Any) -> Host:
    """The host of `window_or_host`: a MainWindow's (`window.host`), or the host itself. The
    export, compare and training helpers take either (scripts and tests pass the window)."""
    return getattr(window_or_host, "host", window_or_host)
