"""Every dialog the window opens fits a 1280×800 laptop screen, in English and in Chinese: its
size and its smallest size, buttons included (the shortcuts list was 1,176 px tall, its OK
below the screen)."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pytestqt")

from conftest import drawn_window
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QAbstractButton, QApplication, QDialog, QDialogButtonBox

from explorer.bench.monkey import Monkey
from explorer.help_dialog import ShortcutsDialog, show_shortcuts

#: a 1280×800 screen less a title bar (and a taskbar beside, not below, on a laptop)
ROOM_W, ROOM_H = 1280, 800 - 40


@pytest.fixture(scope="module")
def win(qapp):
    with drawn_window(qapp) as w:
        yield w
        w.set_language("en")


def _check(dialog, where: str) -> str:
    """'' when `dialog` fits, else what is wrong."""
    s, m = dialog.size(), dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    bad = []
    if s.width() > ROOM_W or s.height() > ROOM_H:
        bad.append(f"{s.width()}×{s.height()}")
    if m.width() > ROOM_W or m.height() > ROOM_H:
        bad.append(f"at least {m.width()}×{m.height()}")
    for b in dialog.findChildren(QAbstractButton):
        if b.isVisible() and isinstance(b.parent(), QDialogButtonBox):
            bottom = b.mapTo(dialog, b.rect().bottomLeft()).y()
            if bottom > min(s.height(), ROOM_H):
                bad.append(f"button {b.text()!r} at y={bottom}")
    return f"{where}: {dialog.windowTitle()!r} " + ", ".join(bad) if bad else ""


def _dialogs_of_every_menu_action(win, qapp) -> tuple[int, list[str]]:
    """Trigger every menu action (no language, lesson or model change); measure each dialog
    that opens, then dismiss it."""
    seen, problems = [0], []
    monkey = Monkey(win, random.Random(0))
    monkey.stop()  # this test dismisses what opens itself, after measuring it

    def measure() -> None:
        for d in [QApplication.activeModalWidget(), *QApplication.topLevelWidgets()]:
            if isinstance(d, QDialog) and d.isVisible():
                seen[0] += 1
                where = monkey.log[-1] if monkey.log else "?"
                if msg := _check(d, where):
                    problems.append(msg)
                d.reject()

    timer = QTimer()
    timer.timeout.connect(measure)
    timer.start(30)
    try:
        for path, action in monkey.menu_actions():
            if path.startswith(("view/language", "lessons/")) or "model" in path.lower():
                continue
            monkey.log.append(path)
            action.trigger()
            monkey.settle(0.05)
            measure()
    finally:
        timer.stop()
    return seen[0], problems


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_dialog_fits_a_laptop_screen(win, qapp, lang):
    win.set_language(lang)
    n, problems = _dialogs_of_every_menu_action(win, qapp)
    assert n >= 6, f"only {n} dialogs opened"
    for topic in ("overview", "heads", "controls"):
        dlg = win.show_help(topic)
        qapp.processEvents()
        if msg := _check(dlg, f"help {topic}"):
            problems.append(msg)
        dlg.close()
    assert not problems, problems


def test_the_shortcuts_list_scrolls_inside_the_screen(win, qapp):
    win.set_language("en")
    dlg = show_shortcuts(win)
    qapp.processEvents()
    try:
        assert isinstance(dlg, ShortcutsDialog) and dlg.isVisible()
        assert not _check(dlg, "shortcuts"), _check(dlg, "shortcuts")
        table = dlg.table
        rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
        assert rows.get("Undo") == "Ctrl+Z" and "Keyboard shortcuts" in rows
        assert table.rowCount() > 30
        # more rows than fit: the table scrolls to the last one
        assert table.verticalScrollBar().maximum() > 0
    finally:
        dlg.reject()
