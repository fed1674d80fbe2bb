"""The menus feature: the window's own actions in File, Edit, View and Selection — Reset,
Quit, Undo/Redo (named after the step), pin and clear the reference A, the dark theme, the
formula strip, a View entry per panel (Ctrl+<n>: brought forward, never hidden when behind a
tab), and the selection's keyboard steps.

Made from the state and the host (explorer.host): each action changes the state (or asks
the host to show a panel); the Undo/Redo texts follow the undo history, Clear the reference
follows `state.reference`. Other features add their entries to the same menus. Texts are
translated in the "MainWindow" context, like the rest of the window.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence

from engine import AttentionConfig

from .feature import Feature
from .figures.themes import DARK, LIGHT
from .frame import Frame
from .subscribe import follow


class MenusFeature(Feature):
    """See the module docstring."""

    name = "menus"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)

        def act(menu: str | None, slot, shortcut=None) -> QAction:
            a = QAction(host.parent_widget())
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            a.triggered.connect(slot)
            host.add_action(menu, a)
            return a

        sel = state.selection
        file_menu, edit_menu = host.menu("file"), host.menu("edit")
        self.act_reset = act("file", self.reset, "Ctrl+R")
        file_menu.addSeparator()
        self.act_quit = act("file", lambda: host.parent_widget().close(), QKeySequence.StandardKey.Quit)
        self.act_undo = act("edit", self.undo, QKeySequence.StandardKey.Undo)
        self.act_redo = act("edit", self.redo, QKeySequence.StandardKey.Redo)
        edit_menu.addSeparator()
        self.act_pin = act("edit", lambda: self.pin_reference(), "Ctrl+P")
        self.act_unpin = act("edit", lambda: state.set_reference(None))
        self.act_unpin.setEnabled(state.reference is not None)
        edit_menu.addSeparator()  # (Copy panel joins it: export_dialog)
        self.act_dark = act("view", lambda checked=False: state.set_theme(DARK if checked else LIGHT), "Ctrl+T")
        self.act_dark.setCheckable(True)
        self.act_dark.setChecked(bool(state.theme is not None and state.theme.dark))
        # (the help feature puts View ▸ Language before the formula strip's entry)
        self.act_formula = host.formula_action()
        host.add_action("view", self.act_formula)
        self.act_next_head = act("selection", lambda: sel.step(head=1), "]")
        self.act_prev_head = act("selection", lambda: sel.step(head=-1), "[")
        self.act_query_down = act("selection", lambda: sel.step(query=1), "Alt+Down")
        self.act_query_up = act("selection", lambda: sel.step(query=-1), "Alt+Up")
        self.act_key_right = act("selection", lambda: sel.step(key=1), "Alt+Right")
        self.act_key_left = act("selection", lambda: sel.step(key=-1), "Alt+Left")
        host.history.stack.indexChanged.connect(self._retranslate_history)
        follow(state.reference_changed, self._on_reference_changed)
        follow(state.theme_changed, self._on_theme_changed)

    def add_panel_entries(self) -> None:
        """View ▸ Reset layout, then one entry per dock made so far (Ctrl+1…), after the other
        features' View entries (the window calls this once every feature is made). An entry
        shows its panel in front at its readable size and never closes it (explorer.layout)."""
        view = self.host.menu("view")
        view.addSeparator()
        self.act_reset_layout = QAction(self.host.parent_widget())
        self.act_reset_layout.setObjectName("act_reset_layout")
        self.act_reset_layout.triggered.connect(lambda: self.host.reset_layout())
        self.host.add_action("view", self.act_reset_layout)
        view.addSeparator()
        for i, dock in enumerate(self.host.docks()):
            name = dock.objectName().removeprefix("dock_")
            a = self.host.add_view_entry(name)
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        for a, text, tip in (
            (self.act_reset, QCoreApplication.translate("MainWindow", "&Reset to defaults"), QCoreApplication.translate("MainWindow", "Back to the default configuration")),
            *([(self.act_reset_layout, QCoreApplication.translate("MainWindow", "Reset &layout"),
                QCoreApplication.translate("MainWindow", "The panels back where a new window has them, each at a readable size"))]
              if hasattr(self, "act_reset_layout") else []),
            (self.act_pin, QCoreApplication.translate("MainWindow", "&Pin as reference A"),
             QCoreApplication.translate("MainWindow", "Keep what is shown now as A: the heads panel then shows A, the current B or B − A, "
                     "the diagnostics both")),
            (self.act_unpin, QCoreApplication.translate("MainWindow", "&Clear the reference"), ""),
            (self.act_quit, QCoreApplication.translate("MainWindow", "&Quit"), ""),
            (self.act_dark, QCoreApplication.translate("MainWindow", "&Dark theme"),
             QCoreApplication.translate("MainWindow", "Switch between the dark and the light theme")),
            (self.act_next_head, QCoreApplication.translate("MainWindow", "Next head"), ""),
            (self.act_prev_head, QCoreApplication.translate("MainWindow", "Previous head"), ""),
            (self.act_query_down, QCoreApplication.translate("MainWindow", "Next query"), ""),
            (self.act_query_up, QCoreApplication.translate("MainWindow", "Previous query"), ""),
            (self.act_key_right, QCoreApplication.translate("MainWindow", "Next key"), ""),
            (self.act_key_left, QCoreApplication.translate("MainWindow", "Previous key"), ""),
        ):
            a.setText(text)
            a.setStatusTip(tip)
        self._retranslate_history()

    def _retranslate_history(self, _index: int = 0) -> None:
        """Undo/Redo name the step they take back (enabled only when there is one)."""
        if not self.host.history.alive():
            return
        st = self.host.history.stack
        self.act_undo.setEnabled(st.canUndo())
        self.act_redo.setEnabled(st.canRedo())
        self.act_undo.setText(QCoreApplication.translate("MainWindow", "&Undo {change}").format(change=st.undoText()).strip()
                              if st.canUndo() else QCoreApplication.translate("MainWindow", "&Undo"))
        self.act_redo.setText(QCoreApplication.translate("MainWindow", "&Redo {change}").format(change=st.redoText()).strip()
                              if st.canRedo() else QCoreApplication.translate("MainWindow", "&Redo"))

    # ---- the state's events -----------------------------------------------------------------------
    def _on_reference_changed(self, frame: Frame | None) -> None:
        self.act_unpin.setEnabled(frame is not None)

    def _on_theme_changed(self, theme) -> None:
        self.act_dark.blockSignals(True)
        self.act_dark.setChecked(theme.dark)
        self.act_dark.blockSignals(False)

    # ---- Edit -------------------------------------------------------------------------------------
    def pin_reference(self, frame: Frame | None = None) -> Frame | None:
        """Pin `frame` (default: the one shown) as the reference A; returns it."""
        frame = self.state.frame if frame is None else frame
        if frame is None:
            return None
        self.state.set_reference(frame)
        self.host.show_status(QCoreApplication.translate("MainWindow", "pinned as A: {config}").format(
            config=frame.config.summary()), 5000)
        return frame

    def undo(self) -> None:
        """Edit ▸ Undo: the configuration before the last change."""
        self.host.flush_controls()  # a throttled slider value first: it is part of the last step
        self.host.history.stack.undo()

    def redo(self) -> None:
        self.host.history.stack.redo()

    def reset(self) -> None:
        """Back to the default configuration (selection to 0, 0, 0), framed as in a new window
        (zooms and remembered axis ranges forgotten). Undo brings the old config back."""
        for name in self.host.panel_names(made=True):  # (one not made yet is framed as new)
            self.host.panel(name).reset_view()
        was = self.state.config
        self.state.set_config(AttentionConfig(), selection=(0, 0, 0), whole_step=True)
        if was != AttentionConfig():  # its step (a step of its own) is named "Reset", not "4 settings"
            self.host.history.name_last_step(QCoreApplication.translate("History", "Reset"))
            self._retranslate_history()
