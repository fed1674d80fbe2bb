"""Issue 27: lesson 5 teaches multi-head while keeping several heads, lesson 7 exercises
cross-attention. Each "Try this" is done as a student does it, and every number its text
quotes is read where the text sends the student: the controls, the heads title, the
diagnostics' cards, the lesson's own check."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from conftest import plain, shown_window
from PySide6.QtWidgets import QLabel

from explorer.figures.layout import text_boxes
from explorer.lessons import LANGUAGES, load_chapters

KEYS = [c.key for c in load_chapters()]
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        yield w


def shown(win, name: str) -> str:
    """Every text panel `name` shows: plot titles, readouts, labels."""
    panel = win.panel(name)
    texts = [plain(t) for _view, boxes in text_boxes(panel) for t, _b, _a in boxes]
    texts += [plain(lab.text()) for lab in panel.findChildren(QLabel) if lab.isVisible() and lab.text()]
    return "\n".join(texts)


def open_chapter(win, qtbot, key: str):
    lesson = win.show_lessons(KEYS.index(key))
    lesson.apply_preset()
    ch = lesson.chapter()
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == ch.config, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "at the preset" in lesson.metric_label.text(), timeout=TIMEOUT)
    return lesson, ch


def change(win, qtbot, lesson, cfg, tracked: bool = True) -> None:
    """`cfg` drawn, and (`tracked`: the task's fields moved) the lesson's check computed for it."""
    if win.config != cfg:
        win.set_config(cfg)
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == cfg, timeout=TIMEOUT)
    if tracked:
        qtbot.waitUntil(lambda: "now" in lesson.metric_label.text() and "…" not in lesson.metric_label.text(),
                        timeout=TIMEOUT)


def cost_row(win, stage: str) -> list[str]:
    card = win.panel("diagnostics").cost_card.text()
    return next(line.split("\t") for line in card.splitlines() if line.startswith(stage))


def test_lesson_5_keeps_several_heads_and_shows_the_split(win, qtbot):
    lesson, ch = open_chapter(win, qtbot, "05-multihead")
    assert ch.config.n_heads == 8 and ch.try_config.n_heads > 1  # multi-head stays multi-head
    text = ch.try_text("en")
    assert "from 8 to **4**" in text and "head_dim becomes 64 / 4 = **16**" in text
    assert "draws 4 maps" in text
    assert win.controls.head_dim.text().startswith("8 ")
    qk_before = cost_row(win, "scores QKᵀ")[1]
    grid_before = cost_row(win, "S×Skv score grid")[2]
    assert len(re.findall(r"\bh(\d+) ●kv", shown(win, "heads"))) == 8
    lesson.do_it()
    change(win, qtbot, lesson, ch.try_config)
    assert win.config.n_heads == 4
    # the controls: head_dim 16
    assert win.controls.head_dim.text().startswith("16 ")
    # the heads panel: 4 thumbnails, one per head
    thumbs = re.findall(r"\bh(\d+) ●kv", shown(win, "heads"))
    assert thumbs == ["0", "1", "2", "3"]
    # the cost card: Q·Kᵀ FLOPs the same, the score grid halved, as the text says
    qk_after = cost_row(win, "scores QKᵀ")[1]
    grid_after = cost_row(win, "S×Skv score grid")[2]
    assert qk_before == qk_after == "8.19 kFLOP" and f"stays at {qk_after}" in text
    assert (grid_before, grid_after) == ("2 KiB", "1 KiB")
    assert f"halves, {grid_before} → {grid_after}" in text
    # the lesson's own check quotes those numbers and gives the ✓
    label = plain(lesson.metric_label.text())
    assert "2 KiB at the preset → 1 KiB now" in label and lesson.try_holds is True
    # "the 4 heads' entropy bars still differ": their mean entropies are not all one
    ent = win.frame.head_entropy
    assert len(ent) == 4 and float(np.ptp(ent)) > 0.1
    # the Chinese text quotes the same numbers
    zh = ch.try_text("zh")
    for number in ("**4**", "**16**", "8.19 kFLOP", "2 KiB", "1 KiB"):
        assert number in zh, number


def test_lesson_7_exercises_cross_attention_then_causal(win, qtbot):
    lesson, ch = open_chapter(win, qtbot, "07-self-cross-causal")
    cfg = ch.config
    assert cfg.key_len == cfg.seq_len == 4 and not cfg.causal  # the preset: self-attention
    assert "4×4" in shown(win, "heads")
    # the try: cross-attention, the key length differs from the query length
    assert ch.try_config.key_len == 8 != ch.try_config.seq_len
    text = ch.try_text("en")
    lesson.do_it()
    change(win, qtbot, lesson, ch.try_config)
    controls = win.controls
    assert controls.cross.isChecked() and controls.kv_len.value() == 8  # what the text says to set
    heads = shown(win, "heads")
    assert "4×8" in heads and "a 4×8 rectangle" in text
    assert win.frame.weights.shape[-2:] == (4, 8)
    assert np.allclose(win.frame.weights.sum(-1), 1.0, atol=1e-5)  # each row one softmax over 8 keys
    label = plain(lesson.metric_label.text())
    assert "keys the first query sees: 4 at the preset → 8 now" in label and lesson.try_holds is True
    assert "the first query sees 8 keys" in text
    # then causal as well: bottom-right aligned, the first query sees m0…m4, the last all 8
    change(win, qtbot, lesson, win.config.replace(causal=True))
    mask = win.frame.mask
    assert mask[0].sum() == 5 and mask[0, :5].all() and mask[-1].all()
    assert "je sees m0…m4 (5 keys), étudiant all 8" in text
    assert "→ 5 now" in plain(lesson.metric_label.text()) and lesson.try_holds is True  # the ✓ stays
    heads = shown(win, "heads")
    assert "0 % on future keys" in heads and "0 % on future keys" in text
    # back to self-attention, causal: the first query sees only itself
    change(win, qtbot, lesson, win.config.replace(kv_len=None), tracked=False)
    assert win.frame.mask[0].sum() == 1 and "4×4" in shown(win, "heads")
    assert "in the square matrix the first query sees only itself" in " ".join(ch.body("en").split())
    for lang in LANGUAGES:  # both languages quote the same numbers
        t = ch.try_text(lang)
        for number in ("**8**", "4×8", "m0…m4", "0 %"):
            assert number in t, (lang, number)
