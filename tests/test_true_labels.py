"""Two places that show one thing say the same (issue 27, item 16).

Each test reads what the user sees (a button's text, a spin box, a title, a menu entry, a
drawn outline, a GIF's caption against the printed line) where the old code said two
different things: the formula strip's "custom" against the controls' "none (×1)", the
player's "15 / 15" against "step 16 of 16", "0 of 4 rows rescaled: their max grew", the
training lab's selected head outlined in a slot the new model does not have, "Undo 4
settings" after Reset, two samples cut to the same text, `train --gif` printing one
induction score and writing another.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from conftest import panel_text, shown_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from engine import AttentionConfig
from explorer.figures.layout import text_boxes

TIMEOUT = 60_000  # ms; the training process starts in ~3 s on a busy machine


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        yield w


texts = panel_text  # every text the panel draws


# ---- the formula strip names the scaling as the controls do ---------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("scale", [None, 1.0, 0.5])
def test_the_formula_strip_names_the_scaling_the_control_shows(win, qapp, scale):
    win.render_sync(AttentionConfig(scale=scale))
    qapp.processEvents()
    control = win.controls.scale_mode.currentText()
    step = win.formula.buttons["scale"].text().split("\n")
    assert step[1] == control, (step, control)
    assert {None: "1/√d_k", 1.0: "none (×1)", 0.5: "custom"}[scale] == control


# ---- the tiling player counts steps as the title does --------------------------------------------

def tiling(win, qapp, qtbot, cfg: AttentionConfig):
    win.render_sync(cfg)
    win.show_panel("tiling")
    win.selection.set(head=0, query=0, key=0)
    panel = win.panel("tiling")
    qtbot.waitUntil(lambda: panel.view is not None and panel.view.config == cfg and "computing…" not in texts(panel),
                    timeout=30000)
    qapp.processEvents()
    return panel


@pytest.mark.slow
def test_the_step_player_counts_as_the_tile_title(win, qapp, qtbot):
    panel = tiling(win, qapp, qtbot, AttentionConfig(seq_len=16))
    player = panel.player
    for pos in (player.count - 1, 0, 6):
        player.set_position(pos)
        qapp.processEvents()
        step, of = re.search(r"step (\d+) of (\d+)", texts(panel)).groups()
        shown = f"{player.spin.text()} {player.count_label.text()}"
        assert shown == f"{step} / {of}", (shown, step, of)
    player.set_position(player.count - 1)
    assert f"{player.spin.text()} {player.count_label.text()}" == "16 / 16"
    # typing a step number shows that step
    player.spin.setValue(3)
    qapp.processEvents()
    assert "step 3 of 16" in texts(panel) and player.position == 2


def test_a_tile_without_a_rescale_does_not_say_their_max_grew(win, qapp, qtbot):
    """Tile (1, 1) of head 0, seed 0: no row's max grows; the first tile of a row has none to grow."""
    panel = tiling(win, qapp, qtbot, AttentionConfig(seq_len=16, seed=0))
    v = panel.view
    first = next(i for i in range(v.n_steps) if int(v.qi[i]) == 1 and int(v.ki[i]) == 0)
    flat = next(i for i in range(v.n_steps) if int(v.qi[i]) == 1 and int(v.ki[i]) == 1)
    assert not (v.rescale[flat, :4] < 1).any(), "the chosen tile rescales: pick another"
    panel.player.set_position(flat)
    qapp.processEvents()
    text = texts(panel)
    assert "0 of 4 rows rescaled" not in text and "their max grew" not in text
    assert "no row's max grew (4 rows), so ℓ and O were not rescaled" in text
    panel.player.set_position(first)
    qapp.processEvents()
    text = texts(panel)
    assert "their max grew" not in text
    assert "the first these 4 rows see: m, ℓ and O start from its scores, nothing to rescale" in text
    grows = next(i for i in range(v.n_steps) if int(v.ki[i]) > 0 and (v.rescale[i, :4] < 1).any())
    panel.player.set_position(grows)
    qapp.processEvents()
    n = int((v.rescale[grows, :4] < 1).sum())
    assert f"this tile: {n} of 4 rows rescaled: their max grew" in texts(panel)


# ---- Undo names Reset ---------------------------------------------------------------------------------

def test_undo_after_reset_says_reset(win, qapp):
    win.set_config(AttentionConfig(d_model=128, n_heads=2, causal=True, pad=2))
    qapp.processEvents()
    win.controls.reset.click()  # the controls' "Reset to defaults"
    qapp.processEvents()
    assert win.config == AttentionConfig()
    assert win.menus_feature.act_undo.text() == "&Undo Reset"
    win.undo()
    qapp.processEvents()
    assert win.config == AttentionConfig(d_model=128, n_heads=2, causal=True, pad=2)
    assert win.menus_feature.act_redo.text() == "&Redo Reset"
    win.redo()
    qapp.processEvents()
    assert win.menus_feature.act_undo.text() == "&Undo Reset" and win.config == AttentionConfig()
    win.menus_feature.act_reset.trigger()  # already the defaults: no step, the last one keeps its name
    assert win.menus_feature.act_undo.text() == "&Undo Reset"


# ---- the Samples menu tells every sentence apart ------------------------------------------------------

def test_the_samples_menu_tells_the_sentences_apart(win, qapp):
    from assets import sample_texts
    from explorer.panels import PANELS

    panel = PANELS["model_grid"](win.state)
    try:
        box = panel.samples
        items = [box.itemText(i) for i in range(1, box.count())]
        sentences = [s for ss in sample_texts().values() for s in ss]
        assert len(items) == len(sentences) and len(set(items)) == len(items), items
        animal = [t for t in items if t.startswith("en: The animal didn't cross")]
        assert len(animal) == 2 and animal[0] != animal[1]
        assert animal[0].endswith("too tired.") and animal[1].endswith("too wide."), animal
        assert all(len(t) <= len("en: ") + 50 for t in items)
        # the whole sentence on hover, and it is what the entry runs
        for i, s in enumerate(sentences, start=1):
            assert box.itemData(i) == s and box.itemData(i, Qt.ItemDataRole.ToolTipRole) == s
    finally:
        panel.deleteLater()
        qapp.processEvents()


def test_sample_labels_grow_their_end_until_they_differ():
    from explorer.models.source import sample_labels

    long = "word " * 20
    labels = sample_labels([long + "alpha beta gamma", long + "alpha beta delta", "short"])
    assert labels[2] == "short" and labels[0] != labels[1]
    assert labels[0].endswith("gamma") and labels[1].endswith("delta")
    assert sample_labels(["x" * 80, "x" * 80]) == sample_labels(["x" * 80, "x" * 80])  # no endless loop


# ---- the training lab outlines only a head the model has ---------------------------------------------

@pytest.mark.slow
def test_a_new_model_being_prepared_shows_no_head_of_the_last(win, qapp, qtbot):
    from explorer.figures.text import plot_title

    win.findChild(QAction, "action_training_lab").trigger()  # Lessons ▸ Training lab…
    panel = win.panel("training")
    lab, grid = panel.lab, panel.grid
    lab.apply_preset("differentiate")  # 2 layers × 4 heads
    qtbot.waitUntil(lambda: "Heads at step 0" in plot_title(grid.plot) and grid.shape[1] == 4, timeout=TIMEOUT)
    lab.select_head(0, 3)
    panel.redraw()
    assert grid.outline.isVisible() and grid.outline.rect().contains(grid.tiles.tile_rect(3))
    lab.apply_preset("induction")  # 2 layers × 2 heads: no head 3
    panel.redraw()  # what the deferred redraw draws, before the new model's first probe
    assert "preparing the model" in plot_title(grid.plot)
    assert not grid.outline.isVisible(), "the last model's head 3 is still outlined"
    image = grid.tiles.image.image
    assert image is None or image.size == 0 or not image[..., 3].any(), "the last model's tiles are still drawn"
    assert not panel.figures.big.image.isVisible()
    # the new model's heads: the outline on a head it has (the selection clamped to head 1)
    qtbot.waitUntil(lambda: "Heads at step 0" in plot_title(grid.plot), timeout=TIMEOUT)
    panel.redraw()
    assert grid.shape[:2] == (2, 2)
    rect = grid.outline.rect()
    assert grid.outline.isVisible() and rect.contains(grid.tiles.tile_rect(1))
    assert not any(rect.contains(grid.tiles.tile_rect(i)) for i in (0, 2, 3))
    assert image is not None and grid.tiles.image.image[..., 3].any()


# ---- nothing cut (issue 27, item 15): the selected cell's label, the backends card -------------------

@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_selected_cells_label_stays_inside_its_plot(win, qapp, lang):
    """The cell with the largest score puts the scores' "selected cell" line at the plots'
    right edge: its label ("q12·k15 = 17.1") goes left of the line there, inside the plot
    (it ran off the edge); the smallest, at the left edge, keeps it right of the line."""
    win.render_sync(AttentionConfig(seq_len=16))
    scores = win.frame.scores_raw[0]
    panel = win.panel("scores")
    assert win.set_language(lang)
    assert win.focus_panel("scores")  # (room for the plots: the default layout leaves them short in Chinese)
    try:
        for pick in (np.argmax, np.argmin):
            i, j = (int(v) for v in np.unravel_index(int(pick(scores)), scores.shape))
            win.selection.set(0, i, j)
            qapp.processEvents()
            labels = [(text, box, area) for _view, boxes in text_boxes(panel) for text, box, area in boxes
                      if text.startswith(f"q{i}·k{j} = ")]
            assert len(labels) == 2, labels  # before and after scaling
            for text, box, area in labels:
                assert area.adjusted(-1, -1, 1, 1).contains(box), f"{text!r} at {box} is cut by {area}"
    finally:
        assert not win.focus_panel()
        assert win.set_language("en")


def test_the_float16_limit_is_labelled(win, qapp):
    """float16 after float32 (lesson 8's preset): the dotted ±65504 lines come with their label
    "fp16 max" (set while the lines were hidden, it stayed empty; tests/test_lesson_layout.py
    checks it is inside the plot in lesson 8)."""
    win.render_sync(AttentionConfig())
    win.render_sync(AttentionConfig(dtype="float16", d_model=256, n_heads=2, seq_len=16, init_std=3.0))
    qapp.processEvents()
    try:
        assert "fp16 max" in texts(win.panel("scores")).split("\n")
    finally:
        win.render_sync(AttentionConfig())


def whole(label) -> bool:
    """Whether a card's label shows its whole text (a wrapped note: every line)."""
    if label.wordWrap():
        return label.heightForWidth(label.width()) <= label.height()
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sdpa", "flash"])
def test_the_backends_card_of_a_long_frame_is_whole(win, qapp, backend):
    """A long frame: the backends the card does not compare say so in one line each (three-line
    notes made the card taller than the cost card beside it, its end out of sight), and every
    label shows its whole text, both languages.

    S = 1024, the cheapest long frame that is not at the edge (S > LOD_CELLS = 512 makes a frame
    long): the card's rows (DiagnosticsPanel._draw_backends) are the same at every long S, the
    notes name LOD_CELLS, not S; only the chosen backend's time and Δ are numbers of the run
    (S = 4096 cost an exact pass 16 × as long and showed the same lines)."""
    from PySide6.QtWidgets import QLabel

    card = win.panel("diagnostics").backend_card
    try:
        win.render_sync(AttentionConfig(seq_len=1024, backend=backend))
        assert win.frame.lod is not None  # a long frame (drawn at a level of detail)
        for lang in ("en", "zh_CN"):
            assert win.set_language(lang)
            for _ in range(3):
                qapp.processEvents()
            lines = card.text().splitlines()
            assert sum("512" in line for line in lines) == 2, lines  # the two not compared
            labels = [label for label in card.findChildren(QLabel) if label.isVisible() and label.text()]
            assert labels and all(whole(label) for label in labels), [
                label.text() for label in labels if not whole(label)]
            notes = [label for label in labels if "512" in label.text()]
            assert len(notes) == 2 and all(label.height() < 2 * label.fontMetrics().lineSpacing() for label in notes), [
                (label.text(), label.height()) for label in notes]
    finally:
        assert win.set_language("en")
        win.render_sync(AttentionConfig())


# ---- train --gif: the last frame's caption is what the command printed -----------------------------

def test_the_gif_caption_says_the_scores_train_printed(qapp):
    from engine.training.cli import train_command
    from explorer.training.forming import frame_caption, run_of

    got = {}

    def finish(trainer, probes) -> int:
        got["run"], got["probes"] = run_of(trainer.config, trainer.history, probes), probes
        return 0

    out = io.StringIO()
    assert train_command(None, 60, None, None, None, False, out=out, snapshots=3, finish=finish) == 0
    last = [line for line in out.getvalue().splitlines() if line.startswith("step")][-1]
    ind, prev = re.search(r"induction ([0-9.]+)\s+prev-token ([0-9.]+)", last).groups()
    probe = got["probes"][-1]
    assert probe.step == 60 and last.split()[1] == "60"
    label, summary = frame_caption(got["run"], probe)
    assert label == "step 60 of 60"
    assert f"best induction score {ind}" in summary, (last, summary)
    assert f"best layer-0 previous-token score {prev}" in summary, (last, summary)
    # the probe sequence scores otherwise (the tiles'): the old caption's numbers
    assert np.isfinite(probe.scores["induction"]).all()
