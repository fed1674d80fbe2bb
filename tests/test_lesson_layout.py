"""Every panel a lesson sends you to is there at a readable size (issue 27, item 1), the
training lab never covers its lesson (item 3), and View ▸ Focus panel gives one panel the
window and back. In the default 1600×1000 window, both languages. A training chapter that
names model panels (14) has them once the lab's run is opened in the inspector: the test opens
the (untrained) run there, as Open in inspector does, and checks them then."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from conftest import drawn_window
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtTest import QTest

from explorer.figures.layout import text_boxes
from explorer.lessons import load_chapters
from explorer.panels.base import PANELS
from explorer.training.lessons import training_task


@pytest.fixture(scope="module")
def win(qapp):
    with drawn_window(qapp) as w:
        yield w


def crowded_by_model_panels(win, chapter) -> bool:
    """Whether model panels an earlier chapter (11–14) left open, and this one does not name,
    are in front: they keep their own readable size (400 px high), and the scores panel below
    them in the same column is left 138 px, too little for its readout in Chinese. The one
    place a lesson's panel may still be cut (issue 27, item 15); checked everywhere else."""
    return any(PANELS[n].requires_model and n not in chapter.panels and win.dock(n).isVisible()
               for n in win.panel_names())


def global_rect(widget) -> QRect:
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def open_run_in_inspector(win, qtbot) -> None:
    """The lab's current run in the model panels (Open in inspector), waited for."""
    lab, ctl = win.training_lab, win.model_controller
    before = lab.inspector_folder  # (a folder of an earlier pass: the new run is saved elsewhere)
    assert lab.open_in_inspector()
    qtbot.waitUntil(lambda: lab.inspector_folder not in (None, before) and ctl.source == lab.inspector_folder
                    and not ctl.loading, timeout=60000)
    assert win.model_controller.wait_ready(60) is None


def in_front(win, qapp, chapter, name) -> bool:
    """Whether panel `name` is in front, raising it when a panel the chapter also names hides
    it in the same tab group (only one tab of a group can be in front)."""
    dock, panel = win.dock(name), win.panel(name)
    if panel.visibleRegion().isEmpty() and any(win.dock(o) in win.tabifiedDockWidgets(dock)
                                               for o in chapter.panels if o != name and o in win.panel_names()):
        dock.raise_()
        for _ in range(3):
            qapp.processEvents()
    return dock.isVisible() and not panel.visibleRegion().isEmpty()


def cut_texts(panel) -> list[str]:
    """The texts of `panel`'s plots that do not fit inside their view."""
    return [text for _view, boxes in text_boxes(panel) for text, box, area in boxes
            if not area.adjusted(-1, -1, 1, 1).contains(box)]


def check_panels(win, qapp, chapter, names, index, lang) -> None:
    """Each panel of `names` in front at its readable size, nothing cut (the lab: beside the lesson)."""
    win.render_sync(win.config)
    for _ in range(3):
        qapp.processEvents()
    for name in names:
        where = f"lesson {index + 1} ({lang}): {name}"
        dock, panel = win.dock(name), win.panel(name)
        assert in_front(win, qapp, chapter, name), f"{where} is not in front"
        need = win.readable_size(name)
        assert panel.width() >= need.width() and panel.height() >= need.height(), (
            f"{where} is {panel.width()}×{panel.height()} px, readable from {need.width()}×{need.height()}")
        if name == "training":  # the lab floats beside the lesson, never over it
            assert not global_rect(dock).intersects(global_rect(win.dock("lesson"))), where
        elif not (name == "scores" and crowded_by_model_panels(win, chapter)):
            assert cut_texts(panel) == [], f"{where}: cut {cut_texts(panel)}"


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_lesson_shows_the_panels_it_names_at_a_readable_size(win, qapp, qtbot, lang):
    assert win.set_language(lang)
    try:
        for index, chapter in enumerate(load_chapters()):
            lesson = win.show_lessons(index)
            qtbot.waitUntil(lambda lesson=lesson: lesson.apply_button.isEnabled(), timeout=5000)
            qapp.processEvents()  # the training lab hooks Apply preset once the lesson exists
            lesson.apply_button.click()
            if chapter.panels and set(chapter.panels) <= {"model_grid", "model_head"}:
                qtbot.waitUntil(lambda names=chapter.panels: all(n in win.panel_names() for n in names)
                                and win.model_controller.loaded is not None, timeout=60000)
            model_panels = [n for n in chapter.panels if PANELS[n].requires_model]
            if "training" in chapter.panels and model_panels:  # first the lab, then the run's panels
                check_panels(win, qapp, chapter, [n for n in chapter.panels if n not in model_panels], index, lang)
                open_run_in_inspector(win, qtbot)
                # the lesson marks the model panels and gives them the chapter's text; the lab steps aside
                qtbot.waitUntil(lambda names=model_panels: set(names) <= set(win.highlighted_panels()), timeout=10000)
                assert win.model_controller.text == training_task(chapter.key).text
                assert not win.dock("training").isVisible()
                check_panels(win, qapp, chapter, model_panels, index, lang)
            else:
                check_panels(win, qapp, chapter, chapter.panels, index, lang)
            assert win.size().width() <= 1600 and win.size().height() <= 1000, f"lesson {index + 1} ({lang}): the window grew"
    finally:
        win.set_language("en")
        if "training" in win.panel_names():
            win.dock("training").close()
        win.dock("lesson").close()
        qapp.processEvents()


@pytest.mark.slow
def test_focus_panel_gives_one_panel_the_window_and_back(win, qapp):
    shown = {n for n in win.panel_names() if win.dock(n).isVisible()}
    sizes = {n: win.dock(n).size() for n in shown}
    assert win.focus_panel("scores") and win.features["focus"].act_focus.isChecked()
    qapp.processEvents()
    assert [n for n in win.panel_names() if win.dock(n).isVisible()] == ["scores"]
    assert not win.controls_dock.isVisible()
    assert win.dock("scores").width() >= 0.95 * win.width()
    assert not win.focus_panel()  # again: the layout from before
    qapp.processEvents()
    assert {n for n in win.panel_names() if win.dock(n).isVisible()} == shown
    assert win.controls_dock.isVisible() and not win.features["focus"].act_focus.isChecked()
    for n in shown:  # (restoreState may move a splitter by a few pixels)
        got, was = win.dock(n).size(), sizes[n]
        assert abs(got.width() - was.width()) <= 0.06 * was.width(), (n, got, was)
        assert abs(got.height() - was.height()) <= 0.06 * was.height(), (n, got, was)


def test_what_happened_while_focused_stays_after(win, qapp):
    """A banner shown and a panel opened while one panel has the window are still there
    when the layout comes back."""
    was_open = win.dock("positions").isVisible()
    win.dock("positions").close()
    assert win.focus_panel("scores")
    win.banner.show_message("Could not open the model: test", "error")
    win.dock("positions").show()
    assert not win.focus_panel()
    qapp.processEvents()
    assert win.banner.bar.isVisible() and win.banner.kind == "error"
    assert win.dock("positions").isVisible()
    win.banner.hide_message()
    assert win.focus_panel("scores")
    win.banner.show_message("a warning dismissed while focused", "warning")
    win.banner.hide_message()
    win.focus_panel()
    qapp.processEvents()
    assert not win.banner.bar.isVisible()
    win.dock("positions").setVisible(was_open)


def test_a_double_click_on_a_dock_title_focuses_its_panel_and_back(win, qapp):
    dock = win.dock("heads")
    title = QPoint(40, max(4, dock.widget().geometry().top() // 2))

    def double_click():
        QTest.mouseDClick(dock, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, title)
        # QTest's double click ends on the second press: release it as a hand does (a button left
        # down made every later mouse move a drag, and no control got the mouse's Enter)
        QTest.mouseRelease(dock, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, title)
        qapp.processEvents()

    double_click()
    assert win.focused_panel() == "heads" and not dock.isFloating()
    assert not win.dock("qkv").isVisible()
    double_click()
    assert win.focused_panel() is None and win.dock("qkv").isVisible() and not dock.isFloating()


def test_focus_panel_without_a_panel_says_how(win, qapp):
    win.statusBar().clearMessage()
    win.features["focus"].act_focus.setChecked(True)  # as Qt ticks the checkable action before asking
    assert not win.focus_panel("no such panel")
    assert not win.features["focus"].act_focus.isChecked()
    assert "Focus panel" in win.statusBar().currentMessage()
