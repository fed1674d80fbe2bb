"""The training lab's panel (issue 17, the window half): it trains in the background while
the window stays responsive, and shows what a student must see: the loss falling, the heads
forming, the moment the induction head appears, an earlier step replayed, runs compared,
bad settings refused by name, the model opened in the inspector, the figure exported.

Short runs of small models except two: the induction preset to its milestone (~400 steps)
and the √d_k contrast (2 × 150 steps). About a minute on 2 cores.
"""

from __future__ import annotations

import os
import re
import time

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from conftest import shown_window
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
)

from engine.training import TrainConfig
from explorer.figures.layout import text_boxes
from explorer.figures.text import plot_title
from explorer.training.panel import DRAW_BUDGET, REDRAW_S
from explorer.training.series import MAX_POINTS

#: a model that steps in a few ms: for the tests of the controls
SMALL = {"d_model": 32, "n_heads": 2, "n_layers": 2, "batch": 8, "steps": 40, "vocab": 24, "seq_len": 17}
TIMEOUT = 60_000  # ms; the training process starts in ~3 s on a busy machine


@pytest.fixture(scope="module")
def win(qapp):
    from explorer.training import install_training

    with shown_window(qapp) as w:
        install_training(w)
        yield w


@pytest.fixture(scope="module")
def panel(win):
    win.findChild(type(win.sessions.act_open), "action_training_lab").trigger()  # Lessons ▸ Training lab…
    p = win.panel("training")
    assert p.isVisible()
    return p


def texts(widget) -> list[str]:
    """Every text the figures show (titles, tick labels, legends, tile labels)."""
    return [t for _view, boxes in text_boxes(widget) for t, _box, _area in boxes]


def title_of(plot) -> str:
    return plot_title(plot)


def child(panel, kind, name):
    w = panel.findChild(kind, name)
    assert w is not None, name
    return w


def press(panel, name: str) -> None:
    b = child(panel, QPushButton, name)
    assert b.isEnabled(), f"{name} is disabled"
    b.click()


def use_settings(qtbot, panel, **changes) -> None:
    """Custom settings through the lab (what the form does), then Reset: a fresh run."""
    lab = panel.lab
    lab.apply_preset(None)
    lab.set_settings(TrainConfig(**{**SMALL, **changes}))
    press(panel, "training_reset")
    wait_probe(qtbot, panel)


def wait_probe(qtbot, panel) -> None:
    """Until the new run's step-0 heads are drawn."""
    qtbot.waitUntil(lambda: "Heads at step 0" in title_of(panel.grid.plot), timeout=TIMEOUT)


def wait_stopped(qtbot, panel) -> None:
    qtbot.waitUntil(lambda: panel.lab.state in ("paused", "done"), timeout=TIMEOUT)
    QApplication.processEvents()
    time.sleep(0.15)  # the throttled redraw
    qtbot.wait(50)


def status(panel) -> str:
    return child(panel, QLabel, "training_status").text()


# ---- opening -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_menu_opens_the_lab_with_the_induction_preset(win, panel, qtbot):
    assert "training" in win.panel_names()
    preset = panel.findChild(type(panel.preset_combo), "training_preset")
    assert preset.currentText() == "An induction head forms"
    explanation = child(panel, QLabel, "training_explanation").text()
    assert "induction head" in explanation and "std 0.1" in explanation  # which init, and why
    assert "0.5" in child(panel, QLabel, "training_expectation").text()
    wait_probe(qtbot, panel)
    assert "not trained yet" in title_of(panel.loss_plot)
    tiles = [t for t in texts(panel) if t.startswith(("prev ", "★"))]
    assert len(tiles) == 4  # every layer × head, each with its scores
    assert "ready" in status(panel)


# ---- start, pause, step, reset ---------------------------------------------------------------------

def test_start_pause_step_reset(win, panel, qtbot):
    use_settings(qtbot, panel, steps=400)
    press(panel, "training_start")
    assert "training" in status(panel)
    qtbot.waitUntil(lambda: panel.lab.current.steps_done >= 30, timeout=TIMEOUT)
    press(panel, "training_pause")
    wait_stopped(qtbot, panel)
    paused_at = panel.lab.current.steps_done
    assert "paused" in status(panel) and f"step {paused_at} of 400" in status(panel)
    qtbot.wait(400)
    assert panel.lab.current.steps_done == paused_at  # paused means paused
    child(panel, QSpinBox, "training_step_size").setValue(7)
    press(panel, "training_step")
    wait_stopped(qtbot, panel)
    assert panel.lab.current.steps_done == paused_at + 7
    assert f"Loss</b> at step {paused_at + 7}:" in title_of(panel.loss_plot)
    press(panel, "training_reset")
    wait_probe(qtbot, panel)
    assert panel.lab.current.steps_done == 0 and "not trained yet" in title_of(panel.loss_plot)
    runs = panel.runs_list
    assert runs.count() >= 2  # the trained run is kept for comparison


@pytest.mark.slow
def test_the_window_stays_responsive_and_the_display_follows_at_10_hz(win, panel, qtbot):
    use_settings(qtbot, panel, steps=100_000, d_model=64, batch=32, seq_len=33, vocab=48)
    drawn, updates = [], []
    original = panel.redraw
    panel.redraw = lambda: (drawn.append(time.perf_counter()), original())

    def on_changed(what):
        if what == "progress":
            updates.append(time.perf_counter())

    panel.lab.changed.connect(on_changed)
    try:
        press(panel, "training_start")
        qtbot.waitUntil(lambda: panel.lab.current.steps_done > 0, timeout=TIMEOUT)
        gaps, t0, t_end = [], time.perf_counter(), time.perf_counter() + 2.0
        while time.perf_counter() < t_end:  # the event loop answers within a frame
            t = time.perf_counter()
            QApplication.processEvents()
            gaps.append(time.perf_counter() - t)
            time.sleep(0.005)
        readout = status(panel)
        press(panel, "training_pause")
        span = time.perf_counter() - t0
    finally:
        panel.redraw = original
        panel.lab.changed.disconnect(on_changed)
    wait_stopped(qtbot, panel)
    shown = [t for t in drawn if t >= t0]
    rate = len(shown) / span
    sent = len([t for t in updates if t >= t0]) / span  # the training process's updates a second
    # the display rate adapts to what a redraw costs (DRAW_BUDGET of a core): not held back
    # when a redraw is cheap enough for ~11 Hz (the 10 Hz goal is bench --train's: this loop's
    # polling and a shared machine took a cheap run to 8 Hz), never under 2 Hz
    cheap = panel.draw_cost_ms() <= DRAW_BUDGET * REDRAW_S * 1e3
    # (a busy machine may send fewer than ~12 updates a second: no redraw without one; one
    # with more runnable threads than cores does not give the UI thread the time it asks for)
    busy = os.getloadavg()[0] > (os.cpu_count() or 1)
    want = min(6.0, 0.5 * sent) if cheap and not busy else 1.8
    assert rate >= want, f"{len(shown)} redraws, {sent:.1f} updates/s in {span:.1f} s ({panel.draw_cost_ms():.0f} ms each)"
    hz = float(re.search(r"display (\d+) Hz", readout).group(1))  # the toolbar says the rate
    assert abs(hz - rate) <= max(2.0, 0.3 * rate), (readout, rate)
    assert max(gaps) < 0.5, f"the event loop was blocked for {max(gaps):.2f} s"


@pytest.mark.slow
def test_the_display_rate_adapts_to_the_cost_of_a_redraw(win, panel, qtbot):
    """A model of 6 layers × 16 heads draws 288 score curves and 96 tiles: the display slows
    down (the readout says so) so that drawing keeps within its share of the CPU, and speeds
    up again for a small model."""
    rates = {}
    for name, changes in (("small", {"steps": 100_000}), ("large", {"steps": 100_000, "n_layers": 6,
                                                                     "n_heads": 16, "d_model": 64})):
        use_settings(qtbot, panel, **changes)
        press(panel, "training_start")
        qtbot.waitUntil(lambda: panel.lab.current.steps_done > 10, timeout=TIMEOUT)
        qtbot.wait(2500)
        readout = status(panel)
        press(panel, "training_pause")
        wait_stopped(qtbot, panel)
        rates[name] = float(re.search(r"display (\d+) Hz", readout).group(1))
    assert 1 <= rates["large"] < rates["small"], rates  # (1 Hz: what a loaded 2-core machine gave)


@pytest.mark.slow
def test_the_curves_get_at_most_max_points_each_however_long_the_run(win, panel, qtbot):
    use_settings(qtbot, panel, steps=MAX_POINTS + 150, d_model=16, batch=4)
    press(panel, "training_start")
    qtbot.waitUntil(lambda: panel.lab.state == "done", timeout=120_000)
    wait_stopped(qtbot, panel)
    steps = MAX_POINTS + 150
    curves = [c for plot in panel.score_plots.values() for c in plot.listDataItems()]
    curves += [c for c in panel.loss_plot.listDataItems() if c.opts["pen"].color().name() == panel.lab.current.colour]
    assert len(curves) == 14
    for c in curves:
        x, _y = c.getData()
        assert len(x) <= MAX_POINTS and x[-1] == steps  # thinned, the last step always drawn
    for plot in panel.score_plots.values():  # about one point per 2 px of the plot
        width = plot.vb.width()
        assert all(len(c.getData()[0]) <= max(50, width / 2 + 1) for c in plot.listDataItems()), width
    assert f"Loss</b> at step {steps}:" in title_of(panel.loss_plot)


# ---- what a short run shows ---------------------------------------------------------------------

def test_a_short_run_draws_the_loss_the_schedule_and_the_heads(win, panel, qtbot):
    use_settings(qtbot, panel, steps=30, warmup_steps=10)
    before = panel.grid.tile_rgba(1, 0).copy()
    press(panel, "training_start")
    wait_stopped(qtbot, panel)
    assert panel.lab.state == "done" and "done" in status(panel)
    colour = panel.lab.current.colour  # this run's curves (the earlier runs' are overlaid)
    mine = [item.getOriginalDataset() for item in panel.loss_plot.listDataItems() if item.opts["pen"].color().name() == colour]
    assert len(mine) == 2  # the total loss and its predictable part
    x, y = mine[0]
    assert len(x) == 30 and x[-1] == 30 and np.isfinite(y).all()
    assert "Loss</b> at step 30:" in title_of(panel.loss_plot)
    _x, ly = panel.lr_used.getOriginalDataset()
    assert ly[0] == pytest.approx(3e-3 / 10) and ly[-1] == pytest.approx(3e-3)  # the warmup ramp
    assert "warmup 10" in title_of(panel.lr_plot)
    assert "Heads at step 30" in title_of(panel.grid.plot)
    assert not np.array_equal(panel.grid.tile_rgba(1, 0), before)  # the heads changed
    for name in ("entropy_norm", "previous_token", "induction"):
        curves = panel.score_plots[name].listDataItems()
        assert len(curves) == 4 and all(len(c.getData()[0]) == 30 for c in curves)  # one per head
    shown = texts(panel)
    assert any(t.startswith("prev ") for t in shown)  # each tile says its scores
    assert {"L0H0", "L1H1"} <= set(shown)  # the curves' legend


def test_clicking_a_head_shows_it_large_with_its_tokens(win, panel, qtbot):
    wait_stopped(qtbot, panel)
    grid = panel.grid
    x, y = grid.tile_origin(0, 1)
    s = grid.shape[2]
    scene_pos = grid.vb.mapViewToScene(QPointF(x + s / 2, y + s / 2))
    view = panel.graphics
    pos = view.mapFromScene(scene_pos)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.waitUntil(lambda: "<b>L0 H1</b>" in plot_title(panel.big.item), timeout=5000)
    tokens = panel.lab.current.latest.tokens
    assert tokens[0] == "<bos>"
    shown = panel.big.left_axis.shown_labels()  # the query rows are labelled with the probe's tokens
    assert shown and set(shown) <= set(tokens) and "<bos>" in shown


def test_the_timeline_replays_an_earlier_step_while_training_continues(win, panel, qtbot, monkeypatch):
    use_settings(qtbot, panel, steps=4000)
    child(panel, QSpinBox, "training_snapshot_every").setValue(10)
    press(panel, "training_start")
    qtbot.waitUntil(lambda: len(panel.lab.current.snapshots) >= 4, timeout=TIMEOUT)
    slider = child(panel, QSlider, "training_timeline")
    qtbot.waitUntil(lambda: slider.maximum() >= 3, timeout=5000)  # (the display follows at ~10 Hz)
    slider.setValue(1)  # the snapshot at step 10
    qtbot.waitUntil(lambda: "Heads at step 10" in title_of(panel.grid.plot), timeout=5000)
    assert "replay" in title_of(panel.grid.plot)
    tiles_10, big_10 = panel.grid.tile_rgba(1, 0).copy(), panel.big.image.image.copy()
    repaints = []  # the heads' pixels handed to pyqtgraph (issue 44: redraw by what changed)
    for image in (panel.grid.tiles.image, panel.big.image):
        original = image.setImage
        monkeypatch.setattr(image, "setImage", lambda *a, _o=original, **k: (repaints.append(1), _o(*a, **k)))
    at = panel.lab.current.steps_done
    qtbot.waitUntil(lambda: panel.lab.current.steps_done > at + 20, timeout=TIMEOUT)  # it keeps training
    qtbot.wait(200)
    assert "Heads at step 10" in title_of(panel.grid.plot)  # and the replay stays
    assert not repaints, "the same snapshot was painted again at each redraw while training went on"
    slider.setValue(2)  # the snapshot at step 20: the same shapes, other weights
    qtbot.waitUntil(lambda: "Heads at step 20" in title_of(panel.grid.plot), timeout=5000)
    assert len(repaints) >= 2  # the tiles and the large head
    assert not np.array_equal(panel.grid.tile_rgba(1, 0), tiles_10)
    assert panel.big.image.image.shape == big_10.shape and not np.array_equal(panel.big.image.image, big_10)
    child(panel, type(panel.live_button), "training_live").click()
    qtbot.waitUntil(lambda: "replay" not in title_of(panel.grid.plot), timeout=5000)
    press(panel, "training_pause")
    wait_stopped(qtbot, panel)
    child(panel, QSpinBox, "training_snapshot_every").setValue(25)


# ---- settings --------------------------------------------------------------------------------------

def test_bad_settings_are_refused_with_a_message_naming_the_field(win, panel, qtbot):
    use_settings(qtbot, panel)
    message = child(panel, QLabel, "training_message")
    heads = child(panel, QSpinBox, "training_field_n_heads")
    heads.setValue(3)  # does not divide d_model 32
    assert message.isVisible() and "n_heads" in message.text() and "Heads" in message.text()
    press(panel, "training_start")
    qtbot.wait(300)
    assert panel.lab.current.steps_done == 0 and panel.lab.state == "idle"  # refused: nothing trains
    heads.setValue(4)
    assert not message.isVisible()
    lr = child(panel, QLineEdit, "training_field_lr")
    lr.setText("fast")
    lr.editingFinished.emit()
    assert message.isVisible() and "lr must be a number" in message.text()
    lr.setText("0.5e-2")
    lr.editingFinished.emit()
    assert not message.isVisible() and panel.lab.settings.lr == 5e-3 and panel.lab.settings.n_heads == 4


def test_the_form_shows_the_settings_of_the_run_on_screen(win, panel, qtbot):
    """Two runs of different settings: clicking one in the list shows its settings in the form
    (it kept the next run's); a preset applied shows the preset's (a scale typed before stayed)."""
    heads = child(panel, QSpinBox, "training_field_n_heads")
    scale = child(panel, QComboBox, "training_field_scale")
    lr = child(panel, QLineEdit, "training_field_lr")
    use_settings(qtbot, panel, n_heads=2)
    press(panel, "training_step")
    wait_stopped(qtbot, panel)
    first = panel.lab.current
    heads.setValue(4)  # the settings of the next run; the trained one stays
    assert heads.value() == 4 and panel.lab.settings.n_heads == 4  # (the form kept what was typed)
    press(panel, "training_step")
    wait_stopped(qtbot, panel)
    second = panel.lab.current
    assert (first.config.n_heads, second.config.n_heads) == (2, 4) and first in panel.lab.runs
    items = {panel.runs_list.item(i).data(Qt.ItemDataRole.UserRole): panel.runs_list.item(i)
             for i in range(panel.runs_list.count())}
    panel.runs_list.setCurrentItem(items[first.id])  # what a click on it does
    assert panel.lab.viewed_run() is first and heads.value() == 2
    panel.runs_list.setCurrentItem(items[second.id])
    assert panel.lab.viewed_run() is second and heads.value() == 4
    scale.setEditText("0.5")
    scale.lineEdit().editingFinished.emit()
    assert panel.lab.settings.scale == 0.5 and scale.currentText() == "0.5"
    panel.preset_combo.setCurrentIndex(panel.preset_combo.findData("induction"))
    wait_probe(qtbot, panel)
    want = panel.lab.current.config
    assert want.scale == "sqrt" and scale.currentText() == "1/√d_k"
    assert heads.value() == want.n_heads and float(lr.text()) == want.lr


def test_the_lab_axis_titles_follow_the_language(win, panel, qtbot):
    """Live switch to Chinese: the large head's axes ("query", "key") and its colour bar
    ("weight") are Chinese too, like the plots' "step" (they were set once, in English)."""
    from PySide6.QtCore import QCoreApplication

    def titles() -> set[str]:
        return {t.strip() for t in texts(panel)}  # (an axis title ends in a space)

    sources = ("query", "key", "weight", "step", "loss (nats)")
    assert set(sources) <= titles()
    task = panel.form.fields["task"]
    assert task.currentText() == "induction"
    assert win.set_language("zh_CN")
    try:
        shown = titles()
        for source in sources:
            zh = QCoreApplication.translate("TrainingPanel", source)
            assert zh != source and zh in shown and source not in shown, (source, zh)
        # the form's task reads in the language too; the run's config keeps the engine's name
        assert task.currentText() == "归纳" and task.currentData() == "induction"
    finally:
        assert win.set_language("en")
    assert set(sources) <= titles() and task.currentText() == "induction"


# ---- experiments ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_induction_preset_forms_its_head_and_says_so(win, panel, qtbot):
    panel.preset_combo.setCurrentIndex(panel.preset_combo.findData("induction"))
    wait_probe(qtbot, panel)
    t0 = time.perf_counter()
    press(panel, "training_start")
    qtbot.waitUntil(lambda: "Induction head formed at step" in title_of(panel.loss_plot), timeout=120_000)
    seconds = time.perf_counter() - t0
    press(panel, "training_pause")
    wait_stopped(qtbot, panel)
    run = panel.lab.current
    assert 300 <= run.milestone.step <= 500, run.milestone.step  # seed 0: step 397
    assert f"Induction head formed at step {run.milestone.step}" in title_of(panel.loss_plot)
    assert any(t.startswith("induction head, step") for t in texts(panel))  # the line marking it
    assert any(t.startswith("★") for t in texts(panel))  # and the heads that did it
    assert "✓ met" in child(panel, QLabel, "training_expectation").text()
    print(f"induction head in the window after {seconds:.1f} s (step {run.milestone.step})")


def test_open_in_inspector_shows_the_trained_model_in_the_model_panels(win, panel, qtbot):
    press(panel, "training_inspect")
    qtbot.waitUntil(lambda: "model_grid" in win.panel_names(), timeout=TIMEOUT)
    assert win.model_controller.wait_ready(60) is None
    trace = win.model_controller.trace
    assert trace.n_heads == panel.lab.current.config.n_heads and len(trace.layers) == panel.lab.current.config.n_layers
    assert "Opened in the inspector" in child(panel, QLabel, "training_message").text()
    # issue 27: beside a model, the sliders' panels say they are not the model; the lab is not
    # the sliders' layer either (it trains a model of its own)
    assert "the sliders' layer" in win.dock("qkv").windowTitle()
    assert "the sliders' layer" not in win.dock("training").windowTitle(), win.dock("training").windowTitle()


@pytest.mark.slow
def test_the_scale_contrast_overlays_two_runs_and_checks_its_expectation(win, panel, qtbot):
    panel.preset_combo.setCurrentIndex(panel.preset_combo.findData("scale"))
    wait_probe(qtbot, panel)
    assert "pre-LN" in child(panel, QLabel, "training_explanation").text()
    press(panel, "training_start")
    qtbot.waitUntil(lambda: panel.lab.state == "done", timeout=120_000)
    wait_stopped(qtbot, panel)
    legend = [label.text for _sample, label in panel.legend.items]
    assert len(legend) == 2 and legend[0].startswith("with 1/√d_k") and legend[1].startswith("no 1/√d_k")
    assert "scale sqrt" in legend[0] and "scale none" in legend[1]  # the setting that differs
    assert "✓ met" in child(panel, QLabel, "training_expectation").text()
    # the form shows the run on screen: the contrast's second run, then the first one clicked
    scale = child(panel, QComboBox, "training_field_scale")
    assert scale.currentText() == "none"
    panel.runs_list.setCurrentRow(panel.runs_list.count() - 2)
    assert panel.lab.viewed_run().config.scale == "sqrt" and scale.currentText() == "1/√d_k"


@pytest.mark.slow
def test_the_dropout_norm_preset_overlays_three_runs_and_checks_its_expectation(win, panel, qtbot):
    panel.preset_combo.setCurrentIndex(panel.preset_combo.findData("dropout_norm"))
    wait_probe(qtbot, panel)
    assert panel.preset_combo.currentText() == "Dropout and norm against collapse"
    assert "warmup" in child(panel, QLabel, "training_explanation").text()  # the cure it names
    press(panel, "training_start")
    qtbot.waitUntil(lambda: panel.lab.state == "done", timeout=180_000)
    wait_stopped(qtbot, panel)
    legend = [label.text for _sample, label in panel.legend.items]
    assert [t.split(":")[0] for t in legend] == ["pre-LN", "pre-LN + dropout 0.2", "no LayerNorm"]
    text = child(panel, QLabel, "training_expectation").text()
    assert "✓ met" in text and "without LayerNorm" in text, text


# ---- export ----------------------------------------------------------------------------------------------

def test_export_draws_the_current_run(win, panel, qtbot, tmp_path):
    if panel.lab.viewed_run() is None or panel.lab.state == "idle":  # (the tests before it are slow)
        use_settings(qtbot, panel, **SMALL)
        press(panel, "training_start")
    wait_stopped(qtbot, panel)
    step = panel.lab.viewed_run().steps_done
    written = win.export_figures(tmp_path, panels=["training"])
    assert [p.name for p in written] == ["training.png"]
    img = QImage(str(written[0]))
    assert img.width() >= 1200 and img.height() >= 700
    colours = {img.pixel(x, y) for x in range(0, img.width(), 17) for y in range(0, img.height(), 17)}
    assert len(colours) > 50  # heatmaps and curves, not a blank page
    assert f"Loss</b> at step {step}:" in title_of(panel.loss_plot)  # the window's panel untouched
    assert panel.side.isVisible()


# ---- the training process killed (issue 28) ------------------------------------------------------

@pytest.mark.slow
def test_a_killed_training_process_is_said_and_start_trains_again(win, panel, qtbot, tmp_path):
    """SIGKILL of the child (the kernel's OOM killer) left the lab "running", its steps frozen,
    Start and Reset doing nothing until the app restarted."""
    import multiprocessing
    import signal

    if panel.lab.running:
        wait_stopped(qtbot, panel)
    use_settings(qtbot, panel, **{**SMALL, "steps": 100_000})  # long enough to be killed mid-run
    press(panel, "training_start")
    lab = panel.lab
    qtbot.waitUntil(lambda: lab.current is not None and lab.current.steps_done > 0, timeout=TIMEOUT)
    children = [p for p in multiprocessing.active_children() if p.name == "attention-explorer-training"]
    if not children:
        pytest.skip("the lab trains in a thread here (no child process to kill)")
    killed = lab.current
    answers: list[str] = []
    lab.saved.connect(lambda _folder, error: answers.append(error))
    lab.save_run(tmp_path / "run")  # a Save under way when the child dies (Save on close waits for it)
    os.kill(children[0].pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: "training process stopped" in child(panel, QLabel, "training_message").text(),
                    timeout=20_000)
    qtbot.waitUntil(lambda: bool(answers), timeout=20_000)  # answered: saved, or why not
    assert answers[0] == "" or "SIGKILL" in answers[0], answers
    text = child(panel, QLabel, "training_message").text()
    assert "training process stopped" in text and "SIGKILL" in text, text
    kept = killed.steps_done
    assert kept > 0 and killed in lab.runs, "the steps received were lost"
    assert child(panel, QPushButton, "training_start").isEnabled()
    use_settings(qtbot, panel, **SMALL)
    press(panel, "training_start")  # a new child, a new run of the settings
    qtbot.waitUntil(lambda: lab.current is not killed and lab.current.steps_done > 0, timeout=TIMEOUT)
    assert killed.steps_done == kept and killed in lab.runs
    wait_stopped(qtbot, panel)
