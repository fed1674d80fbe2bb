"""The window's sessions, recent files and saved geometry (File ▸ Open/Save session, Open recent).

A part of `MainWindow` (explorer.window), in a file of its own: the methods read the window's
attributes (settings, banner, docks, the undo stack). Texts are translated in the "MainWindow"
context, like the rest of the window.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication, QFileDialog

from .session import SessionError, load_session, save_session

MAX_RECENT = 8
#: Environment variable naming an INI file to use instead of the platform settings (tests).
SETTINGS_ENV = "ATTN_EXPLORER_SETTINGS"


def make_settings() -> QSettings:
    """QSettings for geometry, recent files and the interface language only."""
    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("AttentionExplorer", "Attention Explorer")


class SessionsMixin:
    """See the module docstring (mixed into MainWindow)."""

    def _apply_session(self, s) -> None:
        self.banner.hide_message()  # what it said was about the session before
        self.model_info = s.model
        self.state.set_config(s.config, selection=(s.head, s.query, s.key))
        self.undo_stack.clear()  # an opened session starts a history of its own, unmodified
        # loads the session's model off the UI thread (its own code is never trusted from a file)
        self.model_controller.restore(s.model)
        self.snapshots.restore(s.snapshots)  # the one marked as reference becomes A

    def _on_session_model_failed(self, source: str, reason: str) -> None:
        """A session's model was not opened: a banner naming its folder, which stays over new
        frames (a "warning"); the rest of the session is open, and saving it keeps the model's
        entry."""
        from engine.models.files import shown_source

        source = shown_source(source)  # a session may name a path of thousands of characters
        if reason:
            text = lambda: QCoreApplication.translate(  # noqa: E731
                "MainWindow", "The session's model {folder} could not be opened ({reason}); everything else of "
                "the session is open.").format(folder=source, reason=reason)
        else:
            text = lambda: QCoreApplication.translate(  # noqa: E731
                "MainWindow", "The session's model was not opened: its folder {folder} is missing; everything "
                "else of the session is open.").format(folder=source)
        self.banner.show_message(text, kind="warning")

    def set_session_path(self, path: str | os.PathLike | None) -> None:
        """The file that Save writes to (and the window title shows)."""
        self._session_path = None if path is None else Path(path)
        self._update_title()

    def open_session(self, path: str | os.PathLike | None = None) -> bool:
        """Open a session file (a dialog when path is None); a refused file shows in the banner."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, QCoreApplication.translate("MainWindow", "Open session"), self._dialog_dir(),
                                                  QCoreApplication.translate("MainWindow", "Sessions (*.json);;All files (*)"))
            if not path:
                return False
        try:
            s = load_session(path)
        except SessionError as exc:
            self.banner.show_message(QCoreApplication.translate("MainWindow", "Could not open {name}: {reason}").format(
                name=Path(path).name, reason=exc))
            return False
        self._session_path = Path(path)
        self._apply_session(s)
        self._add_recent(path)
        self._update_title()
        return True

    def save_session(self, path: str | os.PathLike | None = None) -> bool:
        """Save config + selection (a dialog when path is None); errors show in the banner."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, QCoreApplication.translate("MainWindow", "Save session"), self._dialog_dir("session.json"),
                                                  QCoreApplication.translate("MainWindow", "Sessions (*.json)"))
            if not path:
                return False
            if not path.endswith(".json"):
                path += ".json"
        cfg = self.state.config
        sel = self.selection
        selection = {"head": min(sel.head, cfg.n_heads - 1), "query": min(sel.query, cfg.seq_len - 1),
                     "key": min(sel.key, cfg.key_len - 1)}
        try:
            save_session(path, cfg, selection, self.model_info, self.snapshots.to_snapshots())
        except (OSError, SessionError) as exc:
            self.banner.show_message(QCoreApplication.translate("MainWindow", "Could not save {name}: {reason}").format(
                name=Path(path).name, reason=exc))
            return False
        self._session_path = Path(path)
        self._add_recent(path)
        self.undo_stack.setClean()
        self.snapshots.mark_saved()
        self._update_title()
        self.statusBar().showMessage(QCoreApplication.translate("MainWindow", "saved {path}").format(path=path), 4000)
        return True

    def _dialog_dir(self, name: str = "") -> str:
        recent = self.recent_files()
        base = Path(recent[0]).parent if recent else Path.home()
        return str(base / name) if name else str(base)

    def recent_files(self) -> list[str]:
        v = self.settings.value("recent_files", [])
        if isinstance(v, str):
            v = [v]
        return [str(p) for p in (v or [])][:MAX_RECENT]

    def _add_recent(self, path) -> None:
        p = str(Path(path).resolve())
        files = [p] + [f for f in self.recent_files() if f != p]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self._update_recent_menu()

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for i, f in enumerate(files):
            a = self.recent_menu.addAction(f"&{i + 1} {Path(f).name}")
            a.setToolTip(f)
            a.triggered.connect(lambda _c=False, f=f: self.open_session(f))
        if not files:
            a = self.recent_menu.addAction(QCoreApplication.translate("MainWindow", "(none)"))
            a.setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction(QCoreApplication.translate("MainWindow", "Clear list"), self._clear_recent)

    def _clear_recent(self) -> None:
        self.settings.setValue("recent_files", [])
        self._update_recent_menu()

    @staticmethod
    def opening_size(available=None) -> tuple[int, int]:
        """1600×1000, or less so the window fits `available` (the screen's free area, a QRect;
        default the primary screen's): a 1366×768 classroom laptop opened it larger than its
        screen. Offscreen (tests, exports) it is 1600×1000: that "screen" is a fixed 800×600."""
        from PySide6.QtGui import QGuiApplication

        if available is None:
            screen = QGuiApplication.primaryScreen()
            if screen is None or QApplication.platformName() == "offscreen":
                return 1600, 1000
            available = screen.availableGeometry()
        return (min(1600, max(800, available.width() - 40)), min(1000, max(560, available.height() - 60)))

    def _restore_settings(self) -> None:
        self._restored_state = False
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray | bytes) and geo:
            self.restoreGeometry(QByteArray(geo))
        state = self.settings.value("window_state")
        if isinstance(state, QByteArray | bytes) and state:
            self._restored_state = bool(self.restoreState(QByteArray(state)))

    def _save_settings(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        self.settings.sync()
