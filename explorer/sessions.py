"""The sessions feature: File ▸ Open session…, Open recent ▸, Save session, Save session as…,
the window title (the session's name, "*" while there are unsaved changes).

Made from the state and the host (explorer.host): opening a session sets the state (config,
selection, the model, the snapshots) and starts a history of its own; saving writes the
state. Texts are translated in the "MainWindow" context, like the rest of the window.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox

from .feature import Feature
from .i18n import engine_text
from .session import SessionError, load_session, save_session

MAX_RECENT = 8


class SessionsFeature(Feature):
    """See the module docstring. `session_path`: the file Save writes to (None: untitled)."""

    name = "sessions"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        self.session_path: Path | None = None
        parent = host.parent_widget()
        self.act_open = QAction(parent)
        self.act_open.setShortcut(QKeySequence(QKeySequence.StandardKey.Open))
        self.act_open.triggered.connect(lambda: self.open_session())
        self.act_save = QAction(parent)
        self.act_save.setShortcut(QKeySequence(QKeySequence.StandardKey.Save))
        self.act_save.triggered.connect(lambda: self.save_session(self.session_path))
        self.act_save_as = QAction(parent)
        self.act_save_as.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.act_save_as.triggered.connect(lambda: self.save_session(None))
        menu = host.menu("file")
        host.add_action("file", self.act_open)
        self.recent_menu = menu.addMenu("")
        self.recent_menu.setObjectName("menu_recent")
        menu.addSeparator()
        host.add_action("file", self.act_save)
        host.add_action("file", self.act_save_as)
        menu.addSeparator()
        host.history.stack.cleanChanged.connect(self._update_modified)
        #: ask Save / Discard / Cancel when the window closes with unsaved changes (only where a
        #: person can answer: not offscreen)
        self.interactive = QGuiApplication.platformName() != "offscreen"

    def retranslate_ui(self) -> None:
        for a, text, tip in (
            (self.act_open, QCoreApplication.translate("MainWindow", "&Open session…"),
             QCoreApplication.translate("MainWindow", "Open a session file (.json)")),
            (self.act_save, QCoreApplication.translate("MainWindow", "&Save session"),
             QCoreApplication.translate("MainWindow", "Save the configuration and selection")),
            (self.act_save_as, QCoreApplication.translate("MainWindow", "Save session &as…"), ""),
        ):
            a.setText(text)
            a.setStatusTip(tip)
        self.recent_menu.setTitle(QCoreApplication.translate("MainWindow", "Open &recent"))
        self._update_recent_menu()
        self.update_title()

    # ---- the title ------------------------------------------------------------------------------
    def update_title(self) -> None:
        name = self.session_path.name if self.session_path else QCoreApplication.translate("MainWindow", "untitled")
        # "[*]": Qt shows "*" there while windowModified (changes since the session was saved)
        self.host.set_window_title(QCoreApplication.translate(
            "MainWindow", "Attention Explorer — {name}").format(name=name) + "[*]")
        self._update_modified()

    def _update_modified(self, *_args) -> None:
        if not self.host.history.alive():
            return
        snaps = self.state.snapshots  # snapshot edits are changes to save too
        clean = self.host.history.stack.isClean()
        self.host.set_window_modified(not clean or (snaps is not None and snaps.edited))

    # ---- closing --------------------------------------------------------------------------------
    def may_close(self) -> bool:
        """Unsaved changes (the title's "*"), untitled or not: Save (the file it came from, or a
        dialog for an untitled one), Discard or Cancel. Save cancelled or failed: stay open."""
        if not self.interactive or not self.host.parent_widget().isWindowModified():
            return True
        box = self.unsaved_question()
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save_session(self.session_path)
        return answer == QMessageBox.StandardButton.Discard

    def unsaved_question(self) -> QMessageBox:
        """The question the window asks on closing with unsaved changes."""
        if self.session_path is None:
            text = QCoreApplication.translate("MainWindow", "This session is untitled and has changes: the configuration, selection "
                                    "and snapshots are lost when the window closes. Save it first?")
        else:
            text = QCoreApplication.translate("MainWindow", "{name} has changes that are not saved. Save them first?").format(
                name=self.session_path.name)
        box = QMessageBox(QMessageBox.Icon.Question, QCoreApplication.translate("MainWindow", "Unsaved session"), text,
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.host.parent_widget())
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        return box

    # ---- open and save --------------------------------------------------------------------------
    def apply_session(self, s) -> None:
        """Show session `s` (explorer.session.Session): its config and selection, its model
        (loaded off the UI thread) and snapshots; a history of its own, unmodified."""
        self.host.hide_banner()  # what it said was about the session before
        self.state.model_info = s.model  # kept when its model cannot be opened, for Save
        self.state.set_config(s.config, selection=(s.head, s.query, s.key))
        self.host.history.stack.clear()  # an opened session starts a history of its own
        # loads the session's model off the UI thread (its own code is never trusted from a file)
        self.state.models.restore(s.model)
        self.state.snapshots.restore(s.snapshots)  # the one marked as reference becomes A

    def set_session_path(self, path: str | os.PathLike | None) -> None:
        """The file that Save writes to (and the window title shows)."""
        self.session_path = None if path is None else Path(path)
        self.update_title()

    def open_session(self, path: str | os.PathLike | None = None) -> bool:
        """Open a session file (a dialog when path is None); a refused file shows in the banner."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.host.parent_widget(), QCoreApplication.translate("MainWindow", "Open session"),
                self._dialog_dir(), QCoreApplication.translate("MainWindow", "Sessions (*.json);;All files (*)"))
            if not path:
                return False
        try:
            s = load_session(path)
        except SessionError as exc:
            self.host.show_banner(QCoreApplication.translate("MainWindow", "Could not open {name}: {reason}").format(
                name=Path(path).name, reason=engine_text(str(exc))))
            return False
        self.session_path = Path(path)
        self.apply_session(s)
        self._add_recent(path)
        self.update_title()
        return True

    def save_session(self, path: str | os.PathLike | None = None) -> bool:
        """Save config + selection (a dialog when path is None); errors show in the banner."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self.host.parent_widget(), QCoreApplication.translate("MainWindow", "Save session"),
                self._dialog_dir("session.json"), QCoreApplication.translate("MainWindow", "Sessions (*.json)"))
            if not path:
                return False
            if not path.endswith(".json"):
                path += ".json"
        cfg = self.state.config
        sel = self.state.selection
        selection = {"head": min(sel.head, cfg.n_heads - 1), "query": min(sel.query, cfg.seq_len - 1),
                     "key": min(sel.key, cfg.key_len - 1)}
        snaps = self.state.snapshots
        try:
            save_session(path, cfg, selection, self.state.model_info, snaps.to_snapshots())
        except (OSError, SessionError) as exc:
            self.host.show_banner(QCoreApplication.translate("MainWindow", "Could not save {name}: {reason}").format(
                name=Path(path).name, reason=engine_text(str(exc))))
            return False
        self.session_path = Path(path)
        self._add_recent(path)
        self.host.history.stack.setClean()
        snaps.mark_saved()
        self.update_title()
        self.host.show_status(QCoreApplication.translate("MainWindow", "saved {path}").format(path=path), 4000)
        return True

    # ---- recent files ---------------------------------------------------------------------------
    def _dialog_dir(self, name: str = "") -> str:
        recent = self.recent_files()
        base = Path(recent[0]).parent if recent else Path.home()
        return str(base / name) if name else str(base)

    def recent_files(self) -> list[str]:
        v = self.host.settings.value("recent_files", [])
        if isinstance(v, str):
            v = [v]
        return [str(p) for p in (v or [])][:MAX_RECENT]

    def _add_recent(self, path) -> None:
        p = str(Path(path).resolve())
        files = [p] + [f for f in self.recent_files() if f != p]
        self.host.settings.setValue("recent_files", files[:MAX_RECENT])
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
        self.host.settings.setValue("recent_files", [])
        self._update_recent_menu()
