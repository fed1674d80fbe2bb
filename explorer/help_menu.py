"""The help and language feature: View ▸ Language (each language named in itself), Help ▸
Help on this panel (F1: the panel under the mouse), Keyboard shortcuts, About.

Made from the state and the host (explorer.host). A language chosen is set in i18n and in the
state (`state.language`), remembered in the settings, and every widget relabels itself on
Qt's LanguageChange. Texts are translated in the "MainWindow" context, like the rest of the
window.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QMessageBox

import explorer.i18n as i18n

from .feature import Feature
from .panels.base import Panel


class HelpFeature(Feature):
    """See the module docstring."""

    name = "help"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        parent = host.parent_widget()

        def act(slot, shortcut=None) -> QAction:
            a = QAction(parent)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            a.triggered.connect(slot)
            host.add_action("help", a)
            return a

        self.act_help = act(lambda: self.show_help(self.topic_here()), QKeySequence.StandardKey.HelpContents)
        self.act_shortcuts = act(self.show_shortcuts, "Ctrl+/")
        self.act_about = act(self.show_about)
        # each language is named in itself, never translated
        self.language_group = QActionGroup(parent)
        self.language_group.setExclusive(True)
        self.act_languages: dict[str, QAction] = {}
        view = host.menu("view")
        self.language_menu = view.addMenu("")
        self.language_menu.setObjectName("menu_language")
        formula = host.feature("menus").act_formula  # View: Dark theme, Language, Formula …
        view.insertMenu(formula, self.language_menu)
        for code, name in i18n.LANGUAGES.items():
            a = QAction(name, parent)
            a.setCheckable(True)
            a.setData(code)
            a.triggered.connect(lambda _checked=False, code=code: self.set_language(code))
            self.language_group.addAction(a)
            self.language_menu.addAction(a)
            self.act_languages[code] = a
        self._sync_language_actions()

    def retranslate_ui(self) -> None:
        for a, text, tip in (
            (self.act_help, QCoreApplication.translate("MainWindow", "&Help on this panel"),
             QCoreApplication.translate("MainWindow", "What the panel under the mouse shows and how to read it, with today's numbers")),
            (self.act_shortcuts, QCoreApplication.translate("MainWindow", "&Keyboard shortcuts"), ""),
            (self.act_about, QCoreApplication.translate("MainWindow", "&About"), ""),
        ):
            a.setText(text)
            a.setStatusTip(tip)
        self.language_menu.setTitle(QCoreApplication.translate("MainWindow", "&Language"))
        self._sync_language_actions()

    # ---- language -------------------------------------------------------------------------------
    def _sync_language_actions(self) -> None:
        current = i18n.current_language()
        for code, a in self.act_languages.items():
            a.setChecked(code == current)

    def set_language(self, lang: str) -> bool:
        """Switch the interface language live and remember it (View ▸ Language).

        Every widget relabels itself on the LanguageChange event; delivered here
        before returning, so the window shows the new language when this returns.
        """
        ok = i18n.set_language(lang)
        self.state.set_language(i18n.current_language())
        self.host.settings.setValue(i18n.SETTINGS_KEY, i18n.current_language())
        # deliver now: the application posts LanguageChange to the windows, which pass it to their
        # children; the relabelled plots then post their layout requests. All of it is handled
        # before returning, so nothing of the switch is left pending (a window deleted with
        # such events queued crashed PySide's clean-up at exit)
        for _ in range(3):
            QCoreApplication.sendPostedEvents()
        # the language may have changed the UI font's lead family (i18n: Chinese measures lines
        # with the CJK font): style sheets measured dock titles with the old one until re-applied
        self.host.apply_theme(self.state.theme)
        QCoreApplication.sendPostedEvents()
        self._sync_language_actions()
        if not ok:
            self.host.show_banner(lambda: QCoreApplication.translate("MainWindow",
                "The Chinese translation is not built: run `make translations` (needs pyside6-lrelease)."),
                kind="info")
        return ok

    # ---- help -----------------------------------------------------------------------------------
    def show_help(self, name: str = "overview"):
        """Open the help window on panel `name` ("controls", "overview" also); it follows the
        frames while open. Returns the dialog."""
        from .help_dialog import show_help

        return show_help(self.state, self.host, name)

    def topic_here(self) -> str:
        """The panel under the mouse (else the one with the focus), the controls, or the overview."""
        from PySide6.QtGui import QCursor

        controls = self.host.docks()[0]
        for w in (QApplication.widgetAt(QCursor.pos()), QApplication.focusWidget()):
            while w is not None:
                if isinstance(w, Panel):
                    return w.name
                if w is controls:
                    return "controls"
                w = w.parentWidget()
        return "overview"

    def show_shortcuts(self):
        """Every action's shortcut and each dock's (View ▸ Ctrl+<n>), in a list that scrolls
        inside the screen (explorer.help_dialog.ShortcutsDialog)."""
        from .help_dialog import show_shortcuts

        return show_shortcuts(self.host.parent_widget())

    def show_about(self) -> None:
        QMessageBox.about(self.host.parent_widget(), QCoreApplication.translate("MainWindow", "Attention Explorer"),
                          QCoreApplication.translate("MainWindow", "Change the architecture of an attention layer and watch it recompute.<br>"
                                  "Click any cell to select a head, query and key in every panel."))
