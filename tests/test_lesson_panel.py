"""The lesson panel: every chapter opens, its preset gives the window the chapter's config and
selection and marks its panels, and "Do it for me" makes the promised change (the ✓ appears)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from engine import AttentionConfig
from explorer.lessons import load_chapters
from explorer.panels import CORE_PANELS, PANELS

CHAPTERS = load_chapters()
TIMEOUT = 30_000


@pytest.fixture
def lesson(qtbot, window):
    panel = window.show_lessons()
    qtbot.waitUntil(lambda: window.frame is not None, timeout=TIMEOUT)
    return panel


def rendered(qtbot, window, cfg: AttentionConfig):
    """Wait until the panels show `cfg`."""
    qtbot.waitUntil(lambda: window.frame is not None and window.frame.config == cfg and window.config == cfg,
                    timeout=TIMEOUT)


def test_lessons_panel_is_registered_but_not_a_default_panel(window):
    assert "lesson" in PANELS and "lesson" not in CORE_PANELS
    assert PANELS["lesson"].exportable is False
    from explorer.export import panel_names

    assert "lesson" not in panel_names(window)  # not a figure
    assert any(a.text().replace("&", "") == "Show lessons" for a in window.menus["lessons"].actions())
    # one menu entry per chapter, after "Show lessons" and a separator
    titles = [a.text() for a in window.menus["lessons"].actions() if not a.isSeparator()]
    assert sum(any(t.endswith(ch.title()) for ch in CHAPTERS) for t in titles) == len(CHAPTERS)


def test_opened_from_the_menu_in_its_own_dock(qtbot, window):
    window.features["lessons"].act_lessons.trigger()
    panel = window.panel("lesson")
    dock = window.dock("lesson")
    assert dock.isVisible() and dock.widget() is panel
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert panel.chapter_list.count() == len(CHAPTERS) == 15
    assert not panel.prev_button.isEnabled() or panel.index > 0


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(CHAPTERS)), ids=[c.key for c in CHAPTERS])
def test_every_chapter_opens_and_its_preset_applies(qtbot, window, lesson, index):
    ch = CHAPTERS[index]
    lesson.chapter_list.setCurrentRow(index)  # as a click in the chapter list does
    assert lesson.index == index
    assert ch.title("en") in lesson.title_label.text()
    assert lesson.text.toPlainText().strip() and lesson.try_text.text().strip()
    assert lesson.prev_button.isEnabled() == (index > 0)
    assert lesson.next_button.isEnabled() == (index < len(CHAPTERS) - 1)
    if ch.needs == "model":
        # no model loaded yet: the chapter says how to open one; its button opens the demo
        # model when there is one (see the test below), there is no "do it for me"
        assert lesson.notice.isVisible() and "model" in lesson.notice.text()
        assert lesson.apply_button.isEnabled() == (lesson._demo_action() is not None)
        assert not lesson.do_button.isEnabled()
        return
    assert window.highlighted_panels() == tuple(n for n in ch.panels if n in window.panel_names())
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    rendered(qtbot, window, ch.config)
    assert window.config == ch.config
    cfg = ch.config
    want = (min(ch.selection.get("head", 0), cfg.n_heads - 1), min(ch.selection.get("query", 0), cfg.seq_len - 1),
            min(ch.selection.get("key", 0), cfg.key_len - 1))
    s = window.selection
    assert (s.head, s.query, s.key) == want
    # (a training chapter's model panels come with the lab's run: test_lesson_layout opens it)
    for name in (n for n in ch.panels if n in window.panel_names() or not PANELS[n].requires_model):
        dock = window.dock(name)
        assert dock.isVisible() and dock.windowTitle().startswith("★")


@pytest.mark.slow
@pytest.mark.parametrize("index", [i for i, c in enumerate(CHAPTERS) if c.try_changes],
                         ids=[c.key for c in CHAPTERS if c.try_changes])
def test_do_it_for_me_makes_the_promised_change(qtbot, window, lesson, index):
    ch = CHAPTERS[index]
    lesson.open_chapter(index)
    assert lesson.do_button.isEnabled()
    qtbot.mouseClick(lesson.do_button, Qt.MouseButton.LeftButton)
    rendered(qtbot, window, ch.try_config)
    qtbot.waitUntil(lambda: lesson.try_holds is True, timeout=TIMEOUT)
    assert lesson.check_label.isVisible() and lesson.check_label.text() == "✓"
    text = lesson.metric_label.text()
    assert "→" in text and "now" in text, text  # the live before → after values


def test_the_check_follows_a_change_made_by_hand(qtbot, window, lesson):
    """From the preset, making the task's change with the controls gives the same ✓."""
    index = next(i for i, c in enumerate(CHAPTERS) if c.key.startswith("03"))
    ch = CHAPTERS[index]
    window.show_lessons(index + 1)  # somewhere else first: a new chapter starts unchecked
    lesson.open_chapter(index)
    assert lesson.try_holds is None
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    rendered(qtbot, window, ch.config)
    qtbot.waitUntil(lambda: "at the preset" in lesson.metric_label.text(), timeout=TIMEOUT)
    assert lesson.try_holds is None and not lesson.check_label.isVisible()
    combo = window.controls.scale_mode  # "none (×1)": scaling off, what the text asks
    combo.setCurrentIndex(combo.findData("none"))
    combo.activated.emit(combo.currentIndex())
    rendered(qtbot, window, ch.try_config)
    qtbot.waitUntil(lambda: lesson.try_holds is True, timeout=TIMEOUT)


def test_no_check_for_a_config_that_is_not_from_the_preset(qtbot, window, lesson):
    """The default config has lower entropy than chapter 3's preset, but the learner has not
    done the task: no ✓ until the preset is applied."""
    window.set_config(AttentionConfig())
    rendered(qtbot, window, AttentionConfig())
    index = next(i for i, c in enumerate(CHAPTERS) if c.key.startswith("03"))
    lesson.open_chapter(index + 1)
    lesson.open_chapter(index)
    qtbot.wait(300)
    assert lesson.try_holds is None
    assert "Apply the preset" in lesson.metric_label.text()


def test_closing_the_lessons_clears_the_marks(qtbot, window, lesson):
    lesson.open_chapter(0)
    assert window.highlighted_panels() == ("qkv", "scores")
    window.dock("lesson").close()
    qtbot.waitUntil(lambda: window.highlighted_panels() == (), timeout=5_000)
    assert not window.dock("qkv").windowTitle().startswith("★")
    window.show_lessons()
    assert window.highlighted_panels() == ("qkv", "scores")


@pytest.mark.slow
def test_model_chapter_opens_the_demo_model_and_marks_its_panels(qtbot, window, lesson):
    if "model_grid" not in PANELS or lesson._demo_action() is None:
        pytest.skip("no model panels or no demo model in this environment")
    index = next(i for i, c in enumerate(CHAPTERS) if c.needs == "model")
    lesson.open_chapter(index)
    assert lesson.apply_button.text() == "Open the demo model"
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.highlighted_panels() == ("model_grid", "model_head"), timeout=120_000)
    assert not lesson.notice.isVisible()
    assert lesson.apply_button.text() == "Apply preset" and lesson.apply_button.isEnabled()
    assert window.model_selection.head == CHAPTERS[index].selection["head"]
