"""The help window: a panel's explanation with today's numbers (explorer.help), kept up to date.

One non-modal dialog per main window. `show_help(state, host, name)` opens it on
panel `name` (or "controls", "overview"); it follows the window's frames while
open, so the formula it shows is always the one on screen. Links `lesson:NN-name`
open that chapter in the lessons dock.
"""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

import explorer.i18n as i18n

from .help import OVERVIEW, has_help, help_values, load_help
from .subscribe import follow


class HelpDialog(QDialog):
    def __init__(self, state, host) -> None:
        super().__init__(host.parent_widget())
        self.setObjectName("help_dialog")
        self.state = state
        self.host = host  # (a lesson: link opens the chapter in the lessons feature)
        self.topic = OVERVIEW
        self.resize(640, 560)
        lay = QVBoxLayout(self)
        self.browser = QTextBrowser()
        self.browser.setObjectName("help_text")
        self.browser.setOpenLinks(False)  # lesson: links are ours
        self.browser.anchorClicked.connect(self._on_link)
        lay.addWidget(self.browser, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay.addWidget(buttons)
        host.frame_rendered.connect(self._on_selection_changed)
        follow(state.selection.changed, self._on_selection_changed)

    def show_topic(self, name: str) -> None:
        self.topic = name if has_help(name) else OVERVIEW
        self.refresh()
        self.show()
        self.raise_()
        self.activateWindow()

    def _on_selection_changed(self, *_args) -> None:
        if self.isVisible():
            self.refresh()

    def refresh(self) -> None:
        lang = i18n.lesson_language()
        sel = self.state.selection
        values = help_values(self.state.frame, sel.head, sel.query, sel.key, lang)
        title, body = load_help(self.topic, lang, values)
        self.setWindowTitle(title)
        self.browser.setMarkdown(f"# {title}\n\n{body}")

    def text(self) -> str:
        """What the dialog shows, as plain text."""
        return self.browser.toPlainText()

    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == "lesson":
            from .lessons import LessonError, load_chapters

            try:
                keys = [ch.key for ch in load_chapters()]
            except LessonError:
                return
            key = url.path() or url.toString().partition(":")[2]
            if key in keys:
                self.host.feature("lessons").show_lessons(keys.index(key))
            return
        QDesktopServices.openUrl(url)


def show_help(state, host, name: str) -> HelpDialog:
    """Open (or raise) the window's help on `name` (one dialog per window, its Qt child)."""
    dlg = host.parent_widget().findChild(HelpDialog, "help_dialog")
    if dlg is None:
        dlg = HelpDialog(state, host)
    dlg.show_topic(name)
    return dlg
