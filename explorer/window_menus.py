"""The window's own actions and menus (File, Edit, View, Selection, Lessons, Help) and their slots:
undo, redo, reset, pin and clear the reference A. Features add their entries to these menus.

A part of `MainWindow` (explorer.window), in a file of its own: the methods read the window's
attributes. Texts are translated in the "MainWindow" context, like the rest of the window.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QToolButton

import explorer.i18n as i18n
from engine import AttentionConfig

from .figures.themes import DARK, LIGHT
from .frame import Frame


class MenusMixin:
    """See the module docstring (mixed into MainWindow)."""

    def _create_actions(self) -> None:
        # texts and tips are set in _retranslate_actions (again on every language change)
        def act(slot, shortcut=None) -> QAction:
            a = QAction(self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.act_open = act(lambda: self.open_session(), QKeySequence.StandardKey.Open)
        self.act_save = act(lambda: self.save_session(self._session_path), QKeySequence.StandardKey.Save)
        self.act_save_as = act(lambda: self.save_session(None), "Ctrl+Shift+S")
        self.act_reset = act(self.reset, "Ctrl+R")
        self.act_pin = act(lambda: self.pin_reference(), "Ctrl+P")
        self.act_unpin = act(self.clear_reference)
        self.act_unpin.setEnabled(False)
        self.act_undo = act(self.undo, QKeySequence.StandardKey.Undo)
        self.act_redo = act(self.redo, QKeySequence.StandardKey.Redo)
        self.undo_stack.indexChanged.connect(self._retranslate_history)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.act_quit = act(self.close, QKeySequence.StandardKey.Quit)
        self.act_dark = act(lambda checked=False: self.apply_theme(DARK if checked else LIGHT), "Ctrl+T")
        self.act_dark.setCheckable(True)
        self.act_next_head = act(lambda: self.selection.step(head=1), "]")
        self.act_prev_head = act(lambda: self.selection.step(head=-1), "[")
        self.act_query_down = act(lambda: self.selection.step(query=1), "Alt+Down")
        self.act_query_up = act(lambda: self.selection.step(query=-1), "Alt+Up")
        self.act_key_right = act(lambda: self.selection.step(key=1), "Alt+Right")
        self.act_key_left = act(lambda: self.selection.step(key=-1), "Alt+Left")
        self.act_help = act(lambda: self.show_help(self._help_topic_here()), QKeySequence.StandardKey.HelpContents)
        self.act_shortcuts = act(self._show_shortcuts, "Ctrl+/")
        self.act_about = act(self._show_about)
        self.act_lessons = act(lambda: self.show_lessons(), "Ctrl+L")
        self.act_focus = act(lambda: self.focus_panel(), "Ctrl+Shift+F")
        self.act_focus.setCheckable(True)
        # each language is named in itself, never translated
        self.language_group = QActionGroup(self)
        self.language_group.setExclusive(True)
        self.act_languages: dict[str, QAction] = {}
        for code, name in i18n.LANGUAGES.items():
            a = QAction(name, self)
            a.setCheckable(True)
            a.setData(code)
            a.triggered.connect(lambda _checked=False, code=code: self.set_language(code))
            self.language_group.addAction(a)
            self.act_languages[code] = a

    def _on_clean_changed(self, clean: bool) -> None:
        snaps = self.state.snapshots  # snapshot edits are changes to save too
        self.setWindowModified(not clean or (snaps is not None and snaps.edited))

    def _retranslate_history(self, _index: int = 0) -> None:
        """Undo/Redo name the step they take back (enabled only when there is one)."""
        st = self.undo_stack
        self.act_undo.setEnabled(st.canUndo())
        self.act_redo.setEnabled(st.canRedo())
        self.act_undo.setText(QCoreApplication.translate("MainWindow", "&Undo {change}").format(change=st.undoText()).strip()
                              if st.canUndo() else QCoreApplication.translate("MainWindow", "&Undo"))
        self.act_redo.setText(QCoreApplication.translate("MainWindow", "&Redo {change}").format(change=st.redoText()).strip()
                              if st.canRedo() else QCoreApplication.translate("MainWindow", "&Redo"))

    def _retranslate_actions(self) -> None:
        for a, text, tip in (
            (self.act_open, QCoreApplication.translate("MainWindow", "&Open session…"), QCoreApplication.translate("MainWindow", "Open a session file (.json)")),
            (self.act_save, QCoreApplication.translate("MainWindow", "&Save session"), QCoreApplication.translate("MainWindow", "Save the configuration and selection")),
            (self.act_save_as, QCoreApplication.translate("MainWindow", "Save session &as…"), ""),
            (self.act_reset, QCoreApplication.translate("MainWindow", "&Reset to defaults"), QCoreApplication.translate("MainWindow", "Back to the default configuration")),
            (self.act_pin, QCoreApplication.translate("MainWindow", "&Pin as reference A"),
             QCoreApplication.translate("MainWindow", "Keep what is shown now as A: the heads panel then shows A, the current B or B − A, "
                     "the diagnostics both")),
            (self.act_unpin, QCoreApplication.translate("MainWindow", "&Clear the reference"), ""),
            (self.act_quit, QCoreApplication.translate("MainWindow", "&Quit"), ""),
            (self.act_dark, QCoreApplication.translate("MainWindow", "&Dark theme"), QCoreApplication.translate("MainWindow", "Switch between the dark and the light theme")),
            (self.act_next_head, QCoreApplication.translate("MainWindow", "Next head"), ""),
            (self.act_prev_head, QCoreApplication.translate("MainWindow", "Previous head"), ""),
            (self.act_query_down, QCoreApplication.translate("MainWindow", "Next query"), ""),
            (self.act_query_up, QCoreApplication.translate("MainWindow", "Previous query"), ""),
            (self.act_key_right, QCoreApplication.translate("MainWindow", "Next key"), ""),
            (self.act_key_left, QCoreApplication.translate("MainWindow", "Previous key"), ""),
            (self.act_help, QCoreApplication.translate("MainWindow", "&Help on this panel"),
             QCoreApplication.translate("MainWindow", "What the panel under the mouse shows and how to read it, with today's numbers")),
            (self.act_shortcuts, QCoreApplication.translate("MainWindow", "&Keyboard shortcuts"), ""),
            (self.act_about, QCoreApplication.translate("MainWindow", "&About"), ""),
            (self.act_focus, QCoreApplication.translate("MainWindow", "&Focus panel"),
             QCoreApplication.translate("MainWindow", "The panel under the mouse gets the whole window; again (or a double click on its title) to go back")),
            (self.act_lessons, QCoreApplication.translate("MainWindow", "Show &lessons"),
             QCoreApplication.translate("MainWindow", "Step-by-step lessons: presets, explanations and a task to try in each chapter")),
        ):
            a.setText(text)
            a.setStatusTip(tip)
        self._retranslate_history()

    def _create_menus(self) -> None:
        mb = self.menuBar()

        def menu(parent, key: str):
            m = parent.addMenu("")
            m.setObjectName(f"menu_{key}")  # found by name, whatever the language (export_dialog)
            return m

        m = self.menu_file = menu(mb, "file")
        m.addAction(self.act_open)
        self.recent_menu = menu(m, "recent")
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_save_as)
        m.addSeparator()
        m.addAction(self.act_reset)
        m.addSeparator()
        m.addAction(self.act_quit)
        e = self.menu_edit = menu(mb, "edit")  # (Copy panel joins it: export_dialog)
        e.addAction(self.act_undo)
        e.addAction(self.act_redo)
        e.addSeparator()
        e.addAction(self.act_pin)
        e.addAction(self.act_unpin)
        e.addSeparator()
        v = self.menu_view = menu(mb, "view")
        v.addAction(self.act_dark)
        self.language_menu = menu(v, "language")
        for a in self.language_group.actions():
            self.language_menu.addAction(a)
        v.addAction(self.formula_bar.toggleViewAction())
        v.addAction(self.act_focus)
        v.addSeparator()
        for i, dock in enumerate([self.controls_dock, *self._docks.values()]):
            a = dock.toggleViewAction()
            self._follow_dock_tab(dock)
            a.triggered.connect(lambda checked, dock=dock: self._on_dock_toggled(dock, checked))
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            v.addAction(a)
        s = self.menu_selection = menu(mb, "selection")
        for a in (self.act_next_head, self.act_prev_head, self.act_query_down, self.act_query_up,
                  self.act_key_right, self.act_key_left):
            s.addAction(a)
        self.menu_lessons = menu(mb, "lessons")
        self.menu_lessons.addAction(self.act_lessons)
        self.menu_lessons.addSeparator()
        self._chapter_actions: list[QAction] = []
        h = self.menu_help = menu(mb, "help")
        h.addAction(self.act_help)
        h.addAction(self.act_shortcuts)
        h.addAction(self.act_about)
        # a Lessons button at the right end of the menu bar: found at a glance, costs no height
        self.lessons_button = QToolButton()
        self.lessons_button.setObjectName("lessons_button")
        self.lessons_button.setAutoRaise(True)
        self.lessons_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.lessons_button.clicked.connect(lambda: self.show_lessons())
        mb.setCornerWidget(self.lessons_button, Qt.Corner.TopRightCorner)
        self._sync_language_actions()

    def _follow_dock_tab(self, dock) -> None:
        """Remember whether `dock` is in front of its tab group: it goes behind a tab with
        visibilityChanged(False) while not hidden (closing it hides it)."""
        def seen(visible: bool) -> None:
            if visible or not dock.isHidden():
                self._dock_in_front[dock] = visible

        dock.visibilityChanged.connect(seen)

    def _on_dock_toggled(self, dock, checked: bool) -> None:
        """View ▸ a panel (Ctrl+<n>): opened in front, also in a tab group; a panel behind a
        tab is brought forward, not closed (the toggle has just hidden it: show it again)."""
        if not checked and self._dock_in_front.get(dock) is False:
            dock.show()
        if not dock.isHidden():
            dock.raise_()

    @property
    def reference(self) -> Frame | None:
        """The pinned frame A the panels compare the current one (B) with, or None."""
        return self.state.reference

    def pin_reference(self, frame: Frame | None = None) -> Frame | None:
        """Pin `frame` (default: the one shown) as the reference A; returns it."""
        frame = self.state.frame if frame is None else frame
        if frame is None:
            return None
        self._set_reference(frame)
        self.statusBar().showMessage(QCoreApplication.translate("MainWindow", "pinned as A: {config}").format(config=frame.config.summary()), 5000)
        return frame

    def clear_reference(self) -> None:
        self._set_reference(None)

    def _set_reference(self, frame: Frame | None) -> None:
        self.state.set_reference(frame)

    def _on_reference_changed(self, frame: Frame | None) -> None:
        """The state's A changed (the panels follow it themselves)."""
        self.act_unpin.setEnabled(frame is not None)
        self.reference_changed.emit(frame)

    def undo(self) -> None:
        """Edit ▸ Undo: the configuration before the last change."""
        self.controls.flush()  # a throttled slider value first: it is part of the last step
        self.undo_stack.undo()

    def redo(self) -> None:
        self.undo_stack.redo()

    def reset(self) -> None:
        """Back to the default configuration (selection to 0, 0, 0), framed as in a new window
        (zooms and remembered axis ranges forgotten). Undo brings the old config back."""
        for panel in self._panels.values():
            panel.reset_view()
        was = self.config
        self.state.set_config(AttentionConfig(), selection=(0, 0, 0), whole_step=True)
        if was != AttentionConfig():  # its step (a step of its own) is named "Reset", not "4 settings"
            self.history.name_last_step(QCoreApplication.translate("History", "Reset"))
            self._retranslate_history()
