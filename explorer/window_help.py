"""The interface language (View ▸ Language) and help (F1 on the panel under the mouse, shortcuts, About).

A part of `MainWindow` (explorer.window), in a file of its own: the methods read the window's
attributes (settings, banner, docks, the undo stack). Texts are translated in the "MainWindow"
context, like the rest of the window.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMessageBox

import explorer.i18n as i18n

from .panels.base import Panel


class HelpMixin:
    """See the module docstring (mixed into MainWindow)."""

    def _sync_language_actions(self) -> None:
        current = i18n.current_language()
        for code, a in self.act_languages.items():
            a.setChecked(code == current)

    def language(self) -> str:
        """The interface language now shown: "en" or "zh_CN"."""
        return i18n.current_language()

    def set_language(self, lang: str) -> bool:
        """Switch the interface language live and remember it (View ▸ Language).

        Every widget relabels itself on the LanguageChange event; delivered here
        before returning, so the window shows the new language when this returns.
        """
        ok = i18n.set_language(lang)
        self.state.set_language(i18n.current_language())
        self.settings.setValue(i18n.SETTINGS_KEY, i18n.current_language())
        # deliver now: the application posts LanguageChange to the windows, which pass it to their
        # children; the relabelled plots then post their layout requests. All of it is handled
        # before returning, so nothing of the switch is left pending (a window deleted with
        # such events queued crashed PySide's clean-up at exit)
        for _ in range(3):
            QCoreApplication.sendPostedEvents()
        # the language may have changed the UI font's lead family (i18n: Chinese measures lines
        # with the CJK font): style sheets measured dock titles with the old one until re-applied
        self.apply_theme(self.theme)
        QCoreApplication.sendPostedEvents()
        self._sync_language_actions()
        if not ok:
            self.banner.show_message(lambda: QCoreApplication.translate("MainWindow",
                "The Chinese translation is not built: run `make translations` (needs pyside6-lrelease)."),
                kind="info")
        return ok

    def show_help(self, name: str = "overview"):
        """Open the help window on panel `name` ("controls", "overview" also); it follows the
        frames while open. Returns the dialog."""
        from .help_dialog import show_help

        return show_help(self, name)

    def _help_topic_here(self) -> str:
        """The panel under the mouse (else the one with the focus), the controls, or the overview."""
        from PySide6.QtGui import QCursor

        for w in (QApplication.widgetAt(QCursor.pos()), QApplication.focusWidget()):
            while w is not None:
                if isinstance(w, Panel):
                    return w.name
                if w is self.controls_dock:
                    return "controls"
                w = w.parentWidget()
        return "overview"

    def _show_shortcuts(self) -> None:
        rows = [(a.text().replace("&", ""), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
                for a in self.actions() if not a.shortcut().isEmpty()]
        rows += [(d.windowTitle(), d.toggleViewAction().shortcut().toString())
                 for d in [self.controls_dock, *self._docks.values()]]
        text = "".join(f"<tr><td>{t}</td><td><b>{k}</b></td></tr>" for t, k in rows)
        QMessageBox.information(self, QCoreApplication.translate("MainWindow", "Keyboard shortcuts"), f"<table cellpadding='3'>{text}</table>")

    def _show_about(self) -> None:
        QMessageBox.about(self, QCoreApplication.translate("MainWindow", "Attention Explorer"),
                          QCoreApplication.translate("MainWindow", "Change the architecture of an attention layer and watch it recompute.<br>"
                                  "Click any cell to select a head, query and key in every panel."))
