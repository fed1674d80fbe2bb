"""The help window: a panel's explanation with today's numbers (explorer.help), kept up to date;
the keyboard shortcuts; every dialog kept inside a laptop's screen.

One non-modal dialog per main window. `show_help(state, host, name)` opens it on
panel `name` (or "controls", "overview"); it follows the window's frames while
open, so the formula it shows is always the one on screen. Links `lesson:NN-name`
open that chapter in the lessons dock.

`show_shortcuts(window)` (Help ▸ Keyboard shortcuts) lists every shortcut in a table that
scrolls: as a message box it was 1,176 px tall and its OK sat below a laptop's screen.
`fit_to_screen(dialog)` caps any dialog at its screen's free area (a 1280×800 laptop
included).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QSize, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

import explorer.i18n as i18n

from .help import OVERVIEW, has_help, help_values, load_help
from .subscribe import follow

#: the smallest screen a dialog must fit whole (a 13" laptop); its free area is smaller still
#: (a taskbar, the title bar), hence the margin
SMALL_SCREEN = QSize(1280, 800)
SCREEN_MARGIN = 80


def screen_room(widget: QWidget | None = None) -> QSize:
    """The room a dialog may take: its screen's free area (the primary screen's when it has
    none yet) less SCREEN_MARGIN, and never more than SMALL_SCREEN less the margin: a dialog
    made on a big monitor still fits the laptop it is shown on next."""
    screen = widget.screen() if widget is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    free = screen.availableGeometry().size() if screen is not None else SMALL_SCREEN
    return QSize(min(free.width(), SMALL_SCREEN.width()) - SCREEN_MARGIN,
                 min(free.height(), SMALL_SCREEN.height()) - SCREEN_MARGIN)


def fit_to_screen(dialog: QWidget) -> None:
    """Cap `dialog` at `screen_room`: its maximum size, and its size when it is larger."""
    room = screen_room(dialog)
    dialog.setMaximumSize(room)
    size = dialog.size().boundedTo(room)
    if size != dialog.size():
        dialog.resize(size)


def shortcut_rows(window) -> list[tuple[str, str]]:
    """(what, keys) for every action of the window with a shortcut, then every dock's toggle."""
    rows = [(a.text().replace("&", ""), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
            for a in window.actions() if not a.shortcut().isEmpty()]
    named = {what for what, _ in rows}
    for dock in window.findChildren(QDockWidget):
        keys = dock.toggleViewAction().shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if dock.windowTitle() and keys and dock.windowTitle() not in named:
            rows.append((dock.windowTitle(), keys))
    return rows


class ShortcutsDialog(QDialog):
    """Help ▸ Keyboard shortcuts: a two-column table that scrolls, inside the screen."""

    def __init__(self, parent: QWidget, rows: list[tuple[str, str]]) -> None:
        super().__init__(parent)
        self.setObjectName("shortcuts_dialog")
        self.setWindowTitle(QCoreApplication.translate("MainWindow", "Keyboard shortcuts"))
        lay = QVBoxLayout(self)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels([QCoreApplication.translate("MainWindow", "Command"),
                                              QCoreApplication.translate("MainWindow", "Keys")])
        for r, (what, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        lay.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self.accept)
        lay.addWidget(buttons)
        self.table.resizeColumnsToContents()
        # as tall as the rows, up to the screen: the table scrolls beyond that
        rows_h = sum(self.table.rowHeight(r) for r in range(len(rows))) + self.table.horizontalHeader().height()
        want = QSize(max(420, self.table.horizontalHeader().length() + 60), rows_h + 90)
        self.resize(want.boundedTo(screen_room(parent)))
        fit_to_screen(self)


def show_shortcuts(window) -> ShortcutsDialog:
    """Open Help ▸ Keyboard shortcuts (window-modal; deleted once closed)."""
    dlg = ShortcutsDialog(window, shortcut_rows(window))
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dlg.open()
    return dlg


class HelpDialog(QDialog):
    def __init__(self, state, host) -> None:
        super().__init__(host.parent_widget())
        self.setObjectName("help_dialog")
        self.state = state
        self.host = host  # (a lesson: link opens the chapter in the lessons feature)
        self.topic = OVERVIEW
        self.resize(QSize(640, 560).boundedTo(screen_room(host.parent_widget())))
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
