"""Issue 47's newcomer items, as the learner sees them: a comparison chapter's first view (B
until it differs from A, and a line saying the difference will come)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from conftest import plain, shown_window
from PySide6.QtCore import Qt

import engine
from explorer.figures.layout import text_boxes
from explorer.lessons import load_chapters

CHAPTERS = load_chapters()
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        yield w


def texts(panel) -> str:
    return "\n".join(plain(t) for _view, boxes in text_boxes(panel) for t, _b, _a in boxes)


def weights(cfg, head: int) -> np.ndarray:
    return engine.run(cfg).weights[0, head].float().numpy()


# ---- item 3: a comparison chapter opens on B, not a flat B − A ------------------------------------

@pytest.mark.parametrize("key", ["04-masks", "06-positions"])
def test_a_comparison_chapter_opens_on_b_and_says_the_difference_will_come(qtbot, win, qapp, key):
    index = next(i for i, c in enumerate(CHAPTERS) if c.key == key)
    ch = CHAPTERS[index]
    lesson = win.show_lessons(index)
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.reference is not None and win.reference.config == ch.config, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == ch.config, timeout=TIMEOUT)
    qapp.processEvents()
    heads = win.panel("heads")
    head = win.selection.head
    assert heads.comparison() == "B"
    np.testing.assert_array_equal(np.nan_to_num(heads.big.data), weights(ch.config, head))  # the preset's (masked: blank)
    assert float(np.nanmax(heads.big.data)) > 0.05
    assert "B is still A: change the config and B − A appears" in texts(heads)
    assert "showing B (current)" in win.compare_status.label.text()
    win.grab().save(f"/tmp/nc/compare-{key}-before.png")
    qtbot.mouseClick(lesson.do_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == ch.try_config, timeout=TIMEOUT)
    qapp.processEvents()
    assert heads.comparison() == "B-A"
    assert "B is still A" not in texts(heads)
    np.testing.assert_array_equal(heads.big.data, weights(ch.try_config, head) - weights(ch.config, head))
    win.grab().save(f"/tmp/nc/compare-{key}-after.png")
    win.clear_reference()
