"""The explorer window: contract, controls → config → panels, selection, worker, errors.

One window per module (building one takes about a second); each test starts
from the default configuration.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

import explorer
from engine import AttentionConfig
from explorer.figures.heatmap import colorize
from explorer.figures.text import plot_title, use_runs_title
from explorer.window import MainWindow

TIMEOUT = 20_000


def show(qtbot, window: MainWindow, cfg: AttentionConfig) -> None:
    """set_config and wait until the panels show it."""
    if window.frame is not None and window.frame.config == cfg and window.config == cfg:
        return
    with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c: c == cfg):
        window.set_config(cfg)


def wait_for(qtbot, window: MainWindow, pred) -> AttentionConfig:
    """Wait for a frame whose config satisfies pred (after a control was used)."""
    if window.frame is not None and pred(window.frame.config) and window.config == window.frame.config:
        return window.frame.config
    with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=pred) as blocker:
        pass
    return blocker.args[0]


@pytest.fixture
def w(qtbot, window):
    window.banner.hide_message()
    show(qtbot, window, AttentionConfig())
    window.selection.set(0, 0, 0)
    return window


# ---- the contract ---------------------------------------------------------------------------


@pytest.mark.slow
def test_contract_names(w):
    assert isinstance(w, MainWindow)
    assert w.config == AttentionConfig()
    for name in ("qkv", "scores", "softmax_grad", "heads", "diagnostics"):
        panel = w.panel(name)
        assert isinstance(panel, QWidget)
        assert panel.frame is not None and panel.frame.config == w.config
    with pytest.raises(KeyError, match="model_grid"):
        w.panel("model_grid")
    sel = w.selection
    assert (sel.head, sel.query, sel.key) == (0, 0, 0)


@pytest.mark.slow
def test_create_window_is_not_shown(qtbot):
    w2 = explorer.create_window({"format": "attention-explorer.session", "version": 1,
                                 "config": {"n_heads": 2, "seq_len": 5},
                                 "selection": {"head": 1, "query": 4, "key": 2}, "model": None})
    qtbot.addWidget(w2)
    assert not w2.isVisible()
    assert w2.config == AttentionConfig(n_heads=2, seq_len=5)
    frame = w2.render_sync()  # the synchronous path draws every panel even while hidden
    assert frame.config == w2.config
    assert (w2.selection.head, w2.selection.query, w2.selection.key) == (1, 4, 2)
    assert w2.panel("heads").frame is frame


def test_frame_rendered_carries_the_config_the_panels_show(qtbot, w):
    cfg = AttentionConfig(seq_len=11, n_heads=8, causal=True)
    show(qtbot, w, cfg)
    heads = w.panel("heads")
    assert heads.frame.config == cfg
    assert heads.thumbs.n_heads == 8
    for h in (0, 7):  # every head's tile shows that head's weights
        expected, _ = colorize(heads.frame.weights_shown[h], heads.thumbs.lut, heads.thumbs.levels)
        assert np.array_equal(heads.thumbs.tile_rgba(h), expected)
    assert not heads.thumbs.hatch.path().isEmpty()  # causal: the masked cells are hatched
    assert heads.big.shape == (11, 11)
    assert w.panel("qkv").x.shape == (11, 64)
    assert "compute" in w.status.status_compute.text() and "ms" in w.status.status_render.text()
    assert "eager" in w.status.status_backend.text()
    for label in (w.status.status_config, w.status.status_compute, w.status.status_render, w.status.status_backend):
        # a fixed size (new texts do not re-lay out the window) that fits the whole text
        assert label.minimumWidth() == label.maximumWidth()
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()


# ---- each control changes the config and the panels ------------------------------------------


def _pick(combo, data) -> None:
    """What a user's choice in a combo does: select the item and emit activated."""
    i = combo.findData(data)
    assert i >= 0, f"{data!r} not offered"
    assert combo.model().item(i).isEnabled(), f"{data!r} is disabled"
    combo.setCurrentIndex(i)
    combo.activated.emit(i)


def _slide(vs, value) -> None:
    vs.slider.setValue(vs._to_index(value))


def test_control_d_model(qtbot, w):
    _slide(w.controls.d_model, 128)
    cfg = wait_for(qtbot, w, lambda c: c.d_model == 128)
    assert w.config.d_model == 128 and cfg.n_heads == 4
    assert w.panel("qkv").x.shape == (8, 128)
    assert w.panel("qkv").wq.shape == (128, 32)


def test_control_heads_and_kv_heads(qtbot, w):
    _pick(w.controls.heads, 8)
    wait_for(qtbot, w, lambda c: c.n_heads == 8)
    assert w.panel("heads").thumbs.n_heads == 8
    assert [w.controls.kv_heads.itemData(i) for i in range(w.controls.kv_heads.count())] == [8, 4, 2, 1]
    assert w.controls.kv_heads.itemText(2) == "2 · GQA 4:1"
    assert w.controls.kv_heads.itemText(3) == "1 · MQA"
    _pick(w.controls.kv_heads, 2)
    cfg = wait_for(qtbot, w, lambda c: c.n_kv_heads == 2)
    assert cfg.attention_kind == "GQA 4:1"
    assert "kv0←q0,1,2,3" in w.controls.group_map.text() and "kv1←q4,5,6,7" in w.controls.group_map.text()
    w.selection.set(head=5)
    assert w.panel("qkv").k.title.count("kv 1") == 1  # head 5 reads KV head 1
    assert np.array_equal(w.panel("qkv").k.data, w.frame.k[1])


def test_control_batch_and_seed(qtbot, w):
    x0 = w.frame.x.copy()
    w.controls.batch.setValue(3)
    wait_for(qtbot, w, lambda c: c.batch == 3)
    w.controls.seed.setValue(7)
    wait_for(qtbot, w, lambda c: c.seed == 7)
    assert not np.allclose(w.frame.x, x0)
    assert np.array_equal(w.panel("qkv").x.data, w.frame.x)


def test_control_tokens_label_the_axes(qtbot, w):
    w.controls.tokens.setText("the cat sat on the mat")
    w.controls.tokens.editingFinished.emit()
    cfg = wait_for(qtbot, w, lambda c: c.tokens is not None)
    assert cfg.tokens == ("the", "cat", "sat", "on", "the", "mat") and cfg.seq_len == 6
    heads = w.panel("heads")
    assert heads.big.left_axis._labels == list(cfg.tokens)
    assert heads.big.bottom_axis._labels == list(cfg.tokens)
    assert w.panel("qkv").queries.left_axis._labels == list(cfg.tokens)
    # equal tokens, equal embeddings (no positions): rows 0 and 4 of X are identical
    assert np.array_equal(w.frame.x[0], w.frame.x[4])
    w.controls.tokens.setText("")
    w.controls.tokens.editingFinished.emit()
    wait_for(qtbot, w, lambda c: c.tokens is None)


def test_control_lengths_and_cross_attention(qtbot, w):
    _slide(w.controls.seq_len, 12)
    wait_for(qtbot, w, lambda c: c.seq_len == 12)
    assert w.panel("heads").big.shape == (12, 12)
    w.controls.cross.click()
    wait_for(qtbot, w, lambda c: c.kv_len is not None)
    _slide(w.controls.kv_len, 20)
    wait_for(qtbot, w, lambda c: c.kv_len == 20)
    assert w.panel("heads").big.shape == (12, 20)
    assert w.panel("qkv").k.shape == (20, 16)
    assert w.frame.key_labels[0] == "m0"
    w.controls.cross.click()
    wait_for(qtbot, w, lambda c: c.kv_len is None and c.seq_len == 12)


def test_control_masks(qtbot, w):
    w.controls.causal.click()
    wait_for(qtbot, w, lambda c: c.causal)
    ws = w.panel("heads").big.data
    assert np.isnan(ws[0, 1]) and not np.isnan(ws[1, 0])  # masked cells are holes
    assert w.panel("heads").big.hatch.isVisible()
    w.controls.window_on.click()
    wait_for(qtbot, w, lambda c: c.window is not None)
    _slide(w.controls.window, 2)
    wait_for(qtbot, w, lambda c: c.window == 2)
    assert not w.frame.mask[5, 3] and w.frame.mask[5, 4]
    _slide(w.controls.pad, 3)
    wait_for(qtbot, w, lambda c: c.pad == 3)
    assert not w.frame.mask[:, 5:].any()
    _pick(w.controls.mask_value, "-1e9")
    wait_for(qtbot, w, lambda c: c.mask_value == "-1e9")


def test_control_scaling_and_precision(qtbot, w):
    _pick(w.controls.scale_mode, "none")
    wait_for(qtbot, w, lambda c: c.scale == 1.0)
    _pick(w.controls.scale_mode, "custom")
    _slide(w.controls.scale, 0.5)
    cfg = wait_for(qtbot, w, lambda c: c.scale == 0.5)
    assert cfg.effective_scale == 0.5
    scores = w.panel("scores")
    assert "×0.5" in plot_title(scores.scaled.plot)
    w.controls.prescale_q.click()
    wait_for(qtbot, w, lambda c: c.prescale_q)
    _pick(w.controls.dtype, "float16")
    wait_for(qtbot, w, lambda c: c.dtype == "float16")
    assert w.panel("scores").raw.limits[0].isVisible()  # the 65504 line appears for float16
    _pick(w.controls.scale_mode, "default")
    wait_for(qtbot, w, lambda c: c.scale is None)


def test_control_positional_backend_device(qtbot, w):
    _pick(w.controls.positional, "rope")
    wait_for(qtbot, w, lambda c: c.positional == "rope")
    assert "RoPE" in w.panel("qkv").q.title
    _pick(w.controls.backend, "sdpa")
    wait_for(qtbot, w, lambda c: c.backend == "sdpa")
    assert "sdpa" in w.status.status_backend.text()
    assert w.frame.trace.backend_max_abs_diff is not None
    import torch

    i = w.controls.device.findData("cuda")
    item = w.controls.device.model().item(i)
    assert item.isEnabled() == torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert "CUDA" in item.toolTip()


def test_control_init_std_and_reset(qtbot, w):
    w.controls.init_xavier.click()
    wait_for(qtbot, w, lambda c: c.init_std is not None)
    w.controls.init_std.setValue(0.5)
    wait_for(qtbot, w, lambda c: c.init_std == 0.5)
    assert np.std(w.frame.w_q) == pytest.approx(0.5, rel=0.1)
    w.controls.reset.click()
    wait_for(qtbot, w, lambda c: c == AttentionConfig())


# ---- invalid combinations cannot be chosen ------------------------------------------------------


def test_controls_offer_only_valid_combinations(qtbot, w):
    c = w.controls
    for d_model in (12, 36, 96, 100):
        show(qtbot, w, AttentionConfig(d_model=d_model, n_heads=4 if d_model % 4 == 0 else 2))
        heads = [c.heads.itemData(i) for i in range(c.heads.count())]
        assert heads and all(d_model % h == 0 for h in heads)
        kv = [c.kv_heads.itemData(i) for i in range(c.kv_heads.count())]
        assert all(w.config.n_heads % g == 0 for g in kv)
    # d_model=12, 4 heads → head_dim 3: RoPE cannot be chosen, and says why
    show(qtbot, w, AttentionConfig(d_model=12, n_heads=4))
    rope = c.positional.model().item(c.positional.findData("rope"))
    assert not rope.isEnabled() and "even head_dim" in rope.toolTip()
    # the d_model slider only reaches multiples of the head count
    assert c.d_model._step == 4 and c.d_model._lo == 4
    # fewer heads than KV heads: the KV heads follow
    show(qtbot, w, AttentionConfig(n_heads=8, n_kv_heads=4))
    _pick(c.heads, 2)
    cfg = wait_for(qtbot, w, lambda x: x.n_heads == 2)
    assert cfg.kv_heads in (1, 2) and cfg.n_heads % cfg.kv_heads == 0
    # padding can never exceed the key length
    _slide(c.seq_len, 3)
    cfg = wait_for(qtbot, w, lambda x: x.seq_len == 3)
    assert c.pad.slider.maximum() == 3


def test_unavailable_backend_is_disabled_with_reason(qtbot, w, monkeypatch):
    import engine

    real = engine.available_backends

    def fake(device="cpu", dtype="float16"):
        out = dict(real(device, dtype))
        out["flash"] = "flash-attn is not installed (test)"
        return out

    monkeypatch.setattr("explorer.controls.engine.available_backends", fake)
    w.controls.refresh()
    item = w.controls.backend.model().item(w.controls.backend.findData("flash"))
    assert not item.isEnabled()
    assert item.toolTip() == "flash-attn is not installed (test)"
    monkeypatch.undo()
    w.controls.refresh()
    assert item.isEnabled()


# ---- one selection, clicks, hover, linked zoom -------------------------------------------------------


def _click_cell(qtbot, panel, heatmap, row: int, col: int) -> None:
    view = panel.graphics
    scene_pt = heatmap.vb.mapViewToScene(heatmap.cell_center(row, col))
    pt = view.mapFromScene(scene_pt)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))


def test_click_on_a_cell_selects_everywhere(qtbot, w):
    show(qtbot, w, AttentionConfig(seq_len=10, n_heads=4, n_kv_heads=2))
    heads = w.panel("heads")
    scene_pt = heads.thumbs.vb.mapViewToScene(heads.thumbs.cell_center(3, 6, 2))
    pt = heads.graphics.mapFromScene(scene_pt)
    qtbot.mouseClick(heads.graphics.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))
    assert (w.selection.head, w.selection.query, w.selection.key) == (3, 6, 2)
    assert heads.thumbs.current.rect().topLeft() == QPointF(*heads.thumbs.tile_origin(3))  # outlined
    f = w.frame
    assert np.array_equal(heads.big.data, f.weights_shown[3], equal_nan=True)
    assert heads.big._marker_spec == ("cell", 6, 2)
    qkv = w.panel("qkv")
    assert np.array_equal(qkv.q.data, f.q[3]) and np.array_equal(qkv.k.data, f.k[1])
    assert qkv.q._marker_spec == ("row", 6, 0) and qkv.k._marker_spec == ("row", 2, 0)
    scores = w.panel("scores")
    assert scores.raw.selected.value() == pytest.approx(float(f.scores_raw[3, 6, 2]))
    sg = w.panel("softmax_grad")
    assert "row 6" in plot_title(sg.row_plot)
    heights = sg.row_bars.heights
    assert np.allclose(heights, np.nan_to_num(f.weights[3, 6]))
    assert "head 3" in plot_title(w.panel("diagnostics").metric_plots[0][2])
    # a click on the large map moves query and key, a click on K moves the key
    _click_cell(qtbot, heads, heads.big, 1, 8)
    assert (w.selection.head, w.selection.query, w.selection.key) == (3, 1, 8)
    _click_cell(qtbot, qkv, qkv.k, 4, 0)
    assert w.selection.key == 4


def test_the_sweep_legend_covers_no_point_of_its_curves(qtbot, w):
    """The √d_k sweep's legend (top right) hid the ÷√d_k curve in the default layout: the
    plot's range now leaves it room above every point, in English and in Chinese."""
    from PySide6.QtCore import QPointF

    sg = w.panel("softmax_grad")
    for lang in ("en", "zh_CN"):
        assert w.set_language(lang)
        qtbot.wait(50)
        box = sg.sweep_legend.sceneBoundingRect()
        vb = sg.sweep_plot.vb
        for curve in (sg.sweep_scaled, sg.sweep_unscaled):
            x, y = curve.getData()  # (x in log10 d_k: the plot's log mode)
            assert len(x) > 3
            inside = [(a, b) for a, b in zip(x, y, strict=True) if box.contains(vb.mapViewToScene(QPointF(a, b)))]
            assert not inside, (lang, curve.name(), inside)
    assert w.set_language("en")


def test_a_long_hover_readout_is_shown_whole_in_the_status_bar(qtbot, w):
    """The readout of a cell was cut after ~300 px: the config, timing and backend labels on
    the right took the rest. A readout wider than the room they leave has the bar to itself
    until the hover ends; a short one keeps them."""
    bar = w.statusBar()
    labels = [w.status.status_config, w.status.status_compute, w.status.status_render, w.status.status_backend]
    long_text = ("head 3 (kv 3) · query 4000 ‘4000’ → key 4095 ‘4095’ · weight 0 · score -3.403e+38 · "
                 "masked: this query sees no key, min gives every key the same weight")
    w.hover.described.emit(long_text)
    assert bar.currentMessage() == long_text
    shown = [lb for lb in labels if lb.isVisible()]
    assert bar.fontMetrics().horizontalAdvance(long_text) + sum(lb.width() for lb in shown) < bar.width()
    w.hover.described.emit("")
    assert all(lb.isVisible() for lb in labels) and bar.currentMessage() == ""
    w.hover.described.emit("query 2 · key 5")
    assert all(lb.isVisible() for lb in labels)
    w.hover.described.emit("")


def test_the_hover_s_end_leaves_a_control_s_tip_in_the_status_bar(qtbot, w):
    """Moving off a heatmap onto a control: the control's tip (or a notice) that came after the
    readout stays when the heatmap's hover ends; the readout itself goes."""
    bar = w.statusBar()
    w.hover.described.emit("query 2 · key 5")
    tip = w.controls.heads.statusTip()
    bar.showMessage(tip)  # what entering the control does
    w.hover.described.emit("")
    assert bar.currentMessage() == tip
    w.hover.described.emit("query 1 · key 1")
    w.hover.described.emit("")
    assert bar.currentMessage() == ""


def test_hover_draws_crosshair_on_same_shape_heatmaps(qtbot, w):
    heads, qkv = w.panel("heads"), w.panel("qkv")
    heads.big._hover(2, 5)
    assert heads.thumbs.hovered() == (2, 5)
    lines = heads.thumbs.crosshair.path()  # a vertical and a horizontal line through the cell, per tile
    assert lines.elementCount() == 4 * heads.thumbs.n_heads
    centre = heads.thumbs.cell_center(3, 2, 5)
    assert any(abs(lines.elementAt(i).x - centre.x()) < 1e-9 for i in range(lines.elementCount()))
    assert any(abs(lines.elementAt(i).y - centre.y()) < 1e-9 for i in range(lines.elementCount()))
    assert qkv.queries.crosshair_tiles() == []  # no query-row matrix has the weights' shape
    assert "query 2" in w.statusBar().currentMessage() and "key 5" in w.statusBar().currentMessage()
    heads.big._hover(-1, -1)
    assert heads.thumbs.hovered() is None
    qkv.q._hover((3, 1))  # Q and weights·V are both S × d_head: both show the cell
    assert qkv.queries.crosshair_tiles() == ["Q", "context"]
    assert "Q[3, 1]" in w.statusBar().currentMessage()
    qkv.q._hover(None)
    assert qkv.queries.crosshair_tiles() == []


def test_thumbnails_show_every_cell_and_follow_the_zoom(qtbot, w):
    heads = w.panel("heads")
    rows, cols = w.config.seq_len, w.config.key_len
    assert heads.thumbs.window == (0, rows, 0, cols)
    vb = heads.thumbs.vb  # every tile is inside the thumbnails' view
    (x0, x1), (y0, y1) = vb.viewRange()
    for h in range(heads.thumbs.n_heads):
        x, y = heads.thumbs.tile_origin(h)
        assert x0 <= x and x + cols <= x1 + 1e-9 and y0 <= y and y + rows <= y1 + 1e-9
    heads.big.vb.setRange(xRange=(1.5, 4.5), yRange=(0.5, 3.5), padding=0)
    qtbot.wait(10)
    assert heads.thumbs.window == (1, 4, 2, 5)  # rows 1–3, keys 2–4 of every head
    expected, _ = colorize(heads.frame.weights_shown[2][1:4, 2:5], heads.thumbs.lut, heads.thumbs.levels)
    assert np.array_equal(heads.thumbs.tile_rgba(2), expected)
    # a click on a zoomed tile selects that cell of the head
    scene_pt = vb.mapViewToScene(heads.thumbs.cell_center(2, 3, 4))
    pt = heads.graphics.mapFromScene(scene_pt)
    qtbot.mouseClick(heads.graphics.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))
    assert (w.selection.head, w.selection.query, w.selection.key) == (2, 3, 4)


@pytest.mark.parametrize("heads", [4, 32])
def test_thumbnail_labels_never_cover_a_tile(qtbot, w, heads):
    size, state = w.size(), w.saveState()
    if heads == 32:
        w.resize(1000, 620)  # a small window: no room above 6 rows of tiles for their labels
    try:
        show(qtbot, w, AttentionConfig(n_heads=heads, d_model=256, seq_len=6))
        qtbot.wait(50)
        thumbs = w.panel("heads").thumbs
        tiles = [thumbs.vb.mapViewToScene(QRectF(*thumbs.tile_origin(h), 6, 6)).boundingRect()
                 for h in range(heads)]
        shown = [label for label in thumbs.labels if label.isVisible()]
        if heads == 4:
            assert len(shown) == 4  # room for them: every head is named
        for label in shown:
            box = label.sceneBoundingRect().adjusted(2, 2, -2, -2)
            assert not any(box.intersects(t) for t in tiles)
    finally:
        w.resize(size)
        w.restoreState(state)  # the dock sizes too: the small window squeezed them
        qtbot.wait(20)


def test_status_says_computing_only_while_a_slow_frame_is_awaited(qtbot, w, monkeypatch):
    real = w.worker._compute

    def slow(cfg, rid):
        time.sleep(0.5)
        return real(cfg, rid)

    monkeypatch.setattr(w.worker, "_compute", slow)
    cfg = w.config.replace(seed=5)
    with qtbot.waitSignal(w.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c: c == cfg):
        w.set_config(cfg)
        qtbot.waitUntil(lambda: "computing" in w.status.status_config.text(), timeout=2000)
    assert "computing" not in w.status.status_config.text()  # the summary is back
    assert "S=8" in w.status.status_config.text()


def test_keyboard_shortcuts_move_the_selection(qtbot, w):
    w.menus_feature.act_next_head.trigger()
    w.menus_feature.act_query_down.trigger()
    w.menus_feature.act_key_right.trigger()
    w.menus_feature.act_key_right.trigger()
    assert (w.selection.head, w.selection.query, w.selection.key) == (1, 1, 2)
    assert w.menus_feature.act_next_head.shortcut().toString() == "]"
    assert w.sessions.act_open.shortcut().toString() == "Ctrl+O"


def test_selection_is_clamped_to_a_smaller_config(qtbot, w):
    show(qtbot, w, AttentionConfig(seq_len=16, n_heads=8))
    w.selection.set(7, 15, 15)
    show(qtbot, w, AttentionConfig(seq_len=4, n_heads=2))
    assert (w.selection.head, w.selection.query, w.selection.key) == (1, 3, 3)


# ---- the worker: latest wins ------------------------------------------------------------------------


def test_100_rapid_slider_changes_end_in_the_last_state(qtbot, w, qapp):
    values = [int(v) for v in np.random.default_rng(0).integers(2, 64, size=100)]
    values[-1] = 37
    for i, v in enumerate(values):
        _slide(w.controls.seq_len, v)
        if i % 10 == 0:
            qapp.processEvents()  # some drags let the loop run, some do not
    cfg = wait_for(qtbot, w, lambda c: c.seq_len == 37)
    qtbot.wait(100)  # nothing stale may arrive after the last value
    assert w.config.seq_len == 37 and cfg.seq_len == 37
    assert w.frame.config.seq_len == 37
    assert w.panel("heads").big.shape == (37, 37)
    assert w.controls.seq_len.value() == 37


def test_latest_request_wins_and_stale_results_are_dropped(qtbot, w):
    seen = []
    w.frame_rendered.connect(seen.append)
    computed0 = w.worker.computed
    try:
        for s in range(2, 102):
            w.set_config(AttentionConfig(seq_len=s))
        last = AttentionConfig(seq_len=101)
        wait_for(qtbot, w, lambda c: c == last)
        qtbot.wait(150)
    finally:
        w.frame_rendered.disconnect(seen.append)
    assert seen == [last]  # nothing but the last config was ever drawn
    assert w.worker.computed - computed0 < 100  # queued requests were replaced, not run


def test_ui_stays_responsive_while_the_engine_runs(qtbot, w):
    big = AttentionConfig(seq_len=256, n_heads=16, d_model=1024)
    w.set_config(big)
    ticks = []
    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    wait_for(qtbot, w, lambda c: c == big)
    timer.stop()
    assert ticks, "the event loop did not run while the frame was computed"


# ---- errors are shown in place ------------------------------------------------------------------------


def test_engine_refusal_is_shown_in_the_banner(qtbot, w, monkeypatch):
    monkeypatch.setenv("ATTN_EXPLORER_MEMORY_BUDGET", "1000")
    with qtbot.waitSignal(w.compute_failed, timeout=TIMEOUT) as blocker:
        w.set_config(AttentionConfig(seq_len=30))
    assert "budget" in blocker.args[1]
    assert w.banner.kind == "error" and "budget" in w.banner.message()
    assert w.banner.bar.isVisible()
    assert w.frame.config == AttentionConfig()  # the panels keep the last good frame
    monkeypatch.delenv("ATTN_EXPLORER_MEMORY_BUDGET")
    show(qtbot, w, AttentionConfig(seq_len=30))
    assert w.banner.kind is None and not w.banner.bar.isVisible()


def test_a_refused_file_stays_in_the_banner_while_frames_arrive(qtbot, w, tmp_path):
    """'Could not open X' stays until the user closes it: a frame arriving is no answer to it
    (it vanished within 1.5 s when a frame was in flight); only the frame's own refusal goes."""
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    w.open_session(bad)
    assert w.banner.bar.isVisible() and "broken.json" in w.banner.message()
    show(qtbot, w, AttentionConfig(seq_len=7))
    show(qtbot, w, AttentionConfig(seq_len=9))
    assert w.banner.bar.isVisible() and "broken.json" in w.banner.message()
    w.reset_layout()  # a restored dock layout sets every toolbar as saved: the message stays
    qtbot.waitUntil(lambda: w.banner.bar.isVisible(), timeout=2000)
    w.banner.close_button.click()
    assert not w.banner.bar.isVisible()
    w.reset_layout()
    qtbot.waitUntil(lambda: not w.banner.bar.isVisible(), timeout=2000)


def test_unavailable_device_is_shown_in_the_banner(qtbot, w):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with qtbot.waitSignal(w.compute_failed, timeout=TIMEOUT) as blocker:
        w.set_config(AttentionConfig(device="cuda"))
    assert "CUDA" in blocker.args[1] and "CUDA" in w.banner.message()


# ---- sessions through the window, settings, theme -----------------------------------------------------


def test_save_and_open_session_through_the_window(qtbot, w, tmp_path):
    cfg = AttentionConfig(n_heads=2, seq_len=6, causal=True, tokens=tuple("a b c d e f".split()))
    show(qtbot, w, cfg)
    w.selection.set(1, 4, 2)
    path = tmp_path / "s.json"
    assert w.save_session(path)
    assert str(path.resolve()) == w.recent_files()[0]
    assert any(path.name in a.text() for a in w.sessions.recent_menu.actions())
    w.reset()
    wait_for(qtbot, w, lambda c: c == AttentionConfig())
    assert w.open_session(path)
    wait_for(qtbot, w, lambda c: c == cfg)
    assert (w.selection.head, w.selection.query, w.selection.key) == (1, 4, 2)
    assert w.windowTitle().replace("[*]", "").endswith("s.json")  # ("[*]": Qt shows "*" there once modified)


def test_a_malformed_session_is_refused_in_place(qtbot, w, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "attention-explorer.session", "version": 99, "config": {}}')
    before = w.config
    assert not w.open_session(bad)
    assert "newer" in w.banner.message()
    assert w.config == before


def test_settings_hold_geometry_and_recent_files_only(qtbot, w):
    w._save_settings()
    assert set(w.settings.allKeys()) <= {"geometry", "window_state", "recent_files", "language"}


def test_theme_switch_restyles_the_panels(qtbot, w):
    assert w.theme.dark
    w.menus_feature.act_dark.trigger()  # unchecks: light theme
    assert not w.theme.dark
    bg = w.panel("heads").graphics.backgroundBrush().color()
    assert bg == QColor("#ffffff")
    w.menus_feature.act_dark.trigger()
    assert w.theme.dark
    assert w.panel("heads").graphics.backgroundBrush().color() == QColor("#15181d")


def test_pixels_masked_cells_look_distinct(qtbot, w, qapp):
    """Pixel probe: masked cells show the background and its hatch, visible cells a viridis colour."""
    show(qtbot, w, AttentionConfig(seq_len=8, causal=True))
    qapp.processEvents()
    heads = w.panel("heads")
    img = heads.graphics.grab().toImage()
    holes = [QColor(w.theme.background), QColor(w.theme.hatch)]

    def distance_to_holes(row, col):
        p = heads.graphics.mapFromScene(heads.big.vb.mapViewToScene(QPointF(col, row)))
        c = QColor(img.pixel(p.x(), p.y()))
        return min(abs(c.red() - h.red()) + abs(c.green() - h.green()) + abs(c.blue() - h.blue())
                   for h in holes)

    masked = [distance_to_holes(0, 7), distance_to_holes(1, 6), distance_to_holes(2, 5)]
    visible = [distance_to_holes(7, 0), distance_to_holes(5, 3), distance_to_holes(6, 6)]
    assert max(masked) < 30, masked
    assert min(visible) > 60, visible


def test_diagnostics_show_kv_cache_and_backends(qtbot, w):
    show(qtbot, w, AttentionConfig(n_heads=8, n_kv_heads=2))
    diag = w.panel("diagnostics")
    assert "GQA 4:1" in diag.cache_axis._tickLevels[0][0][1]
    assert "Llama-3-8B" in diag.cost_card.text()  # the real model's figure, a note under the costs
    if w.frame.backends is None:  # measured once the worker has been idle a moment
        with qtbot.waitSignal(w.backends_measured, timeout=TIMEOUT):
            pass
    assert set(w.frame.backends) == {"eager", "sdpa", "flash"}
    text = diag.backend_card.text()
    for name in ("eager", "sdpa", "flash"):
        assert name in text
    assert "measuring" not in text
    assert math.isclose(diag.cache_bars.opts["height"][0] * 4, diag.cache_bars.opts["height"][1])


def test_diagnostics_card_copies_its_table(qtbot, w):
    """The cards' numbers are not selectable labels; their context menu copies the table as
    tab-separated text (what pastes into a spreadsheet), the same text the card shows."""
    from PySide6.QtWidgets import QApplication, QMenu

    show(qtbot, w, AttentionConfig(seq_len=12))
    card = w.panel("diagnostics").cost_card
    QApplication.clipboard().clear()
    menus = []

    def pick_copy():
        menu = next(m for m in QApplication.topLevelWidgets() if isinstance(m, QMenu) and m.isVisible())
        menus.append([a.text() for a in menu.actions()])
        menu.actions()[0].trigger()
        menu.close()

    QTimer.singleShot(50, pick_copy)
    card.customContextMenuRequested.emit(QPoint(10, 10))
    assert menus == [["Copy table"]]
    copied = QApplication.clipboard().text()
    assert copied == card.text()
    rows = [line.split("\t") for line in copied.splitlines()[1:]]
    assert any(r[0] == "QKV projection" and len(r) == 3 for r in rows)
    assert all(not lab.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
               for row in card._cells for lab in row)


def test_hidden_panels_catch_up_when_shown(qtbot, w):
    dock = w.dock("qkv")
    dock.hide()
    cfg = AttentionConfig(seq_len=13)
    show(qtbot, w, cfg)
    assert w.panel("heads").frame.config == cfg
    assert w.panel("qkv").frame.config != cfg  # hidden: not drawn
    dock.show()
    qtbot.waitUntil(lambda: w.panel("qkv").frame is not None and w.panel("qkv").frame.config == cfg)
    assert w.panel("qkv").x.shape == (13, 64)


def test_a_registered_panel_can_be_added_later(qtbot, w):
    from explorer.panels import PANELS, Panel, register_panel

    @register_panel
    class EchoPanel(Panel):
        name = "echo_test"
        title = "Echo"

        def draw_frame(self, frame):
            self.seen = frame.config

        def draw_selection(self):
            self.head = self.selection.head

    try:
        panel = w.add_panel("echo_test")
        assert w.panel("echo_test") is panel and panel.seen == w.config
        qtbot.waitUntil(panel.isVisible)
        w.selection.set(head=2)
        assert panel.head == 2
    finally:
        PANELS.pop("echo_test", None)
        w.removeDockWidget(w.dock("echo_test"))
        w._panels.pop("echo_test")
        w._docks.pop("echo_test")


def test_lean_axes_keep_pyqtgraphs_bounds(qtbot, w):
    """LeanAxis keeps its bounding rectangle between changes; after resizes, shape and range
    changes, a zoom and a theme switch it is still exactly pyqtgraph's."""
    from explorer.figures.plots import LeanAxis

    def axes():
        return [it for name in w.panel_names() for it in w.panel(name).scene().items()
                if isinstance(it, LeanAxis)]

    def check(when):
        for axis in axes():
            axis.boundingRect()  # the kept rectangle, if any
            assert axis.boundingRect() == pg.AxisItem.boundingRect(axis), (when, type(axis).__name__,
                                                                           axis.orientation)

    show(qtbot, w, AttentionConfig(seq_len=6))
    check("first frame")
    w.resize(1300, 900)
    qtbot.wait(20)
    show(qtbot, w, AttentionConfig(seq_len=13, n_heads=8, n_kv_heads=2, d_model=64))
    check("resize, more heads")
    w.panel("heads").big.vb.setRange(xRange=(2, 6), yRange=(3, 9), padding=0)
    w.menus_feature.act_dark.trigger()
    show(qtbot, w, AttentionConfig(seq_len=5, tokens=tuple("a much longer sentence here".split())))
    check("zoom, theme, tokens")
    assert len(axes()) > 8  # the numeric axes (token axes are TokenAxis, on pyqtgraph's own drawing)



def test_a_long_title_wraps_and_its_row_holds_the_height(qtbot):
    """A title wider than its plot breaks between words onto a second line and the title row
    grows to show it (not cut off mid-word); a shorter title afterwards keeps that height (no
    jumping plot while a readout changes), a wider plot gives it back."""
    from explorer.figures.plots import add_plot, set_plot_title
    from explorer.figures.text import unbroken
    from explorer.figures.themes import DARK

    glw = pg.GraphicsLayoutWidget()
    qtbot.addWidget(glw)
    plot = add_plot(glw.ci, 0, 0)
    glw.resize(260, 300)
    glw.show()
    qtbot.wait(20)
    long = "<b>why √d_k</b> · here (scaled): 0.357 " + unbroken("(theory √d_k = 4)")
    set_plot_title(plot, long, DARK)
    qtbot.wait(20)
    label = use_runs_title(plot)
    lines = [label.item._layouts[0].lineAt(i) for i in range(label.item._layouts[0].lineCount())]
    assert len(lines) == 2
    assert max(line.naturalTextWidth() for line in lines) <= label.rect().width()
    text = label.item._layouts[0].text()
    note = (text.index("(theory"), len(text) - 1)  # the unbroken note: on one line, whole
    assert [any(ln.textStart() <= c < ln.textStart() + ln.textLength() for c in note) for ln in lines] \
        == [False, True], [text[ln.textStart():ln.textStart() + ln.textLength()] for ln in lines]
    two_lines = label.size().height()  # the title row: the label's height above the plot
    assert two_lines > 30 and label.rect().height() >= label.item.boundingRect().height() - 0.5
    set_plot_title(plot, "<b>why √d_k</b> · here: 0.3", DARK)
    qtbot.wait(20)
    assert label.size().height() == two_lines
    # a second line still too wide (an unbroken note) is drawn smaller, whole
    set_plot_title(plot, "<b>row 6</b> · H = " + unbroken("1.46 nats (uniform log 7 = 1.95 nats)"), DARK)
    qtbot.wait(20)
    assert 0.75 <= label.item.scale() < 1 and label.itemRect().width() <= label.rect().width() + 0.5
    glw.resize(900, 300)
    qtbot.wait(50)
    set_plot_title(plot, "<b>why √d_k</b> · here: 0.4", DARK)
    qtbot.wait(20)
    # back to one line: the row as tall as that line (not the two lines' height), drawn full size
    assert label.size().height() < two_lines and label.item.scale() == 1
    assert label.rect().height() >= label.item.boundingRect().height() - 0.5


def test_titles_keep_their_markup_as_runs():
    """The panels' title markup (bold, coloured spans, line breaks, entities) becomes styled
    runs: what RunsLabel draws instead of a rich-text document."""
    from explorer.figures.text import parse_runs

    lines = parse_runs("<b>head 1</b> · kv 0 <span style='color:#8b949e'>8×8 &lt;x&gt;</span><br>"
                       "<span style='font-weight:600'>total</span>")
    assert lines == [[("head 1", True, None), (" · kv 0 ", False, None), ("8×8 <x>", False, "#8b949e")],
                     [("total", True, None)]]


def test_title_label_draws_its_text(qtbot, w):
    """A panel title is a RunsLabel that lays out its whole text (not clipped to nothing)."""
    from explorer.figures.text import RunsLabel

    show(qtbot, w, AttentionConfig(seq_len=7))
    label = use_runs_title(w.panel("heads").big.item)
    assert isinstance(label, RunsLabel)
    assert "7×7" in label.text
    assert label.item.boundingRect().width() > 30 and label.item.boundingRect().height() > 10


def test_tile_title_is_shortened_to_its_tile(qtbot):
    """A tile's title longer than the tile drops its details (after " · ") first, whole; still
    too long, it ends in "…" and fits; one that fits is left whole; with no room at all
    nothing is drawn."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QGraphicsRectItem

    from explorer.figures.text import TileLabel, parse_runs, truncated_runs

    def drawn(label):
        return "".join(t for layout in label._layouts for t in [layout.text()])

    parent = QGraphicsRectItem()  # keeps the labels alive
    label = TileLabel(parent)
    runs = parse_runs("<b>weights·V</b> head 1 · 10×16")
    label.set_runs(runs, QFont(), QColor("white"))
    full = label.boundingRect().width() - 2 * label.MARGIN
    assert drawn(label) == "weights·V head 1 · 10×16"
    name = TileLabel(parent)
    name.set_runs(parse_runs("<b>weights·V</b> head 1"), QFont(), QColor("white"))
    name_w = name.boundingRect().width() - 2 * name.MARGIN
    assert name_w < full - 10
    label.set_max_width(name_w + 3)  # ("W_Q[:, h0] · 64…" in a narrow tile: "W_Q[:, h0]")
    assert drawn(label) == "weights·V head 1"
    for room in (name_w * 0.8, full * 0.4, 30.0):
        label.set_max_width(room)
        text = drawn(label)
        assert text.endswith("…") and len(text) < len("weights·V head 1 · 10×16")
        assert label.boundingRect().width() - 2 * label.MARGIN <= room
        fitting = []  # every shortening that fits: the label shows the longest
        for n in range(1, len("weights·V head 1 · 10×16")):
            probe = TileLabel(parent)
            probe.set_runs([truncated_runs(runs[0], n)], QFont(), QColor("white"))
            if probe.boundingRect().width() - 2 * probe.MARGIN <= room - 2:  # (2 px for the ink)
                fitting.append(drawn(probe))
        assert text == fitting[-1]
    label.set_max_width(full + 3)
    assert drawn(label) == "weights·V head 1 · 10×16"
    label.set_max_width(2.0)
    assert drawn(label) == ""


def test_token_axes_put_ticks_where_pyqtgraph_would(qtbot, w):
    """TokenAxis computes its one level of ticks itself: at every visible token axis the
    ticks sit where pyqtgraph's general algorithm puts them (within half a pixel), with the
    same labels, for a shape, a zoom and rotated key labels."""
    from PySide6.QtGui import QImage, QPainter

    from explorer.figures.token_axis import TokenAxis

    def check(when):
        img = QImage(8, 8, QImage.Format.Format_ARGB32_Premultiplied)
        p = QPainter(img)
        try:
            shown = [w.panel(n) for n in w.panel_names(made=True) if w.panel(n).isVisible()]
            axes = [it for panel in shown for it in panel.scene().items()
                    if isinstance(it, TokenAxis) and it.isVisible()  # (not one squeezed to a few px)
                    and (it.geometry().width() if it.horizontal else it.geometry().height()) > 40]
            assert len(axes) >= 4
            for axis in axes:
                mine, stock = axis.generateDrawSpecs(p), pg.AxisItem.generateDrawSpecs(axis, p)
                assert len(mine[1]) == len(stock[1]), (when, axis.orientation, axis.range, axis.geometry(), axis.step)
                for (_a, m0, m1), (_b, s0, s1) in zip(mine[1], stock[1]):
                    for a, b in ((m0, s0), (m1, s1)):
                        assert abs(a.x() - b.x()) <= 0.6 and abs(a.y() - b.y()) <= 0.6, (when, axis.orientation)
                if not axis.rotated:
                    assert [t for _r, _f, t in mine[2]] == [t for _r, _f, t in stock[2]], (when, axis.orientation, axis.range, axis.geometry(), [r for r, _f, _t in stock[2]], [r for r, _f, _t in mine[2]])
        finally:
            p.end()

    show(qtbot, w, AttentionConfig(seq_len=6))
    check("first frame")
    w.panel("heads").big.vb.setRange(xRange=(1, 4), yRange=(2, 5), padding=0)
    qtbot.wait(20)
    check("zoomed")
    show(qtbot, w, AttentionConfig(tokens=tuple("je suis un étudiant depuis longtemps".split())))
    check("tokens")


def test_density_axes_hold_still_while_stepping_seeds(qtbot, w):
    """Stepping through seeds, the histograms' density axes keep their ticks on most seeds
    (a bound that had to grow leaves room, and a narrower tick label does not shift the
    plot): each change would redraw the axis and move the bars. Yet every histogram still
    fits under its axis."""
    scores = w.panel("scores")
    plots = (scores.raw, scores.scaled)
    ranges, changes = [tuple(p.plot.viewRange()[1]) for p in plots], 0
    for seed in range(1, 41):
        show(qtbot, w, AttentionConfig(seed=seed))
        for i, p in enumerate(plots):
            y = tuple(p.plot.viewRange()[1])
            changes += y != ranges[i]
            ranges[i] = y
            heights = p.hist.getData()[1]
            assert float(np.nanmax(heights)) <= y[1]  # nothing cut off at the top
    assert changes <= 16, f"the density axes changed {changes} times in 80 plot updates"


def test_a_relaid_title_reads_its_new_text(qtbot):
    """A title whose second line changes keeps its first line and shows the new second one;
    the same text in a larger font or another wrap is laid out afresh (wider, taller)."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QGraphicsRectItem

    from explorer.figures.text import RunsItem, parse_runs

    def lines(item):
        return [item.layouts[i].text() for i in range(len(item.layouts))]

    parent = QGraphicsRectItem()
    item = RunsItem(parent)
    font, white = QFont(), QColor("white")
    item.set_runs(parse_runs("<b>head 0</b> · kv 0<br>41.6 % on future keys"), font, white)
    first = item.layouts[0]
    item.set_runs(parse_runs("<b>head 0</b> · kv 0<br>7.5 % on future keys"), font, white)
    assert lines(item) == ["head 0 · kv 0", "7.5 % on future keys"]
    assert item.layouts[0] is first  # (the unchanged line was not shaped again)
    small = item.boundingRect()
    bigger = QFont(font)
    bigger.setPointSizeF(font.pointSizeF() * 2)
    item.set_runs(parse_runs("<b>head 0</b> · kv 0<br>7.5 % on future keys"), bigger, white)
    big = item.boundingRect()
    assert big.width() > 1.5 * small.width() and big.height() > 1.5 * small.height()
    item.set_runs(parse_runs("same line<br>same line"), font, white)
    assert lines(item) == ["same line", "same line"]
    assert item.layouts[0] is not item.layouts[1]  # (each line placed on its own)
    assert item.layouts[1].lineAt(0).y() > item.layouts[0].lineAt(0).y()
    item.set_wrap(40)
    assert item.layouts[0].lineCount() == 2  # broken between its words at the new width


def test_a_title_repainted_from_its_picture_reads_as_drawn(qtbot):
    """A view repaints an unchanged title from a pixmap (a step-through repaints every title
    each frame): the pixels are those of the text drawn afresh, and a new text or size shows
    at once."""
    from explorer.figures.text import RunsLabel

    view = pg.GraphicsView()
    qtbot.addWidget(view)  # (closed after the test: a window left open lies over later tests' widgets)
    view.resize(420, 90)
    label = RunsLabel("<b>head 0</b> · 1.23 <span style='color: #ff5050'>√d_k</span>")
    view.setCentralItem(label)
    view.show()
    qtbot.waitExposed(view)

    def grab():
        return view.grab().toImage()

    first = grab()  # (drawn directly: its first paint)
    assert grab() == first and grab() == first  # then from its picture: the same pixels
    label.setText("<b>head 1</b> · 45.6 on future keys")
    changed = grab()
    assert changed != first and grab() == changed and grab() == changed
    label.setText("<b>head 0</b> · 1.23 <span style='color: #ff5050'>√d_k</span>")
    assert grab() == first and grab() == first
    label.setScale(1.5)  # another device scale: drawn afresh at it
    bigger = grab()
    assert bigger != first and grab() == bigger


def test_a_new_number_repaints_its_label_not_the_dock_beneath(qtbot, qapp):
    """Stepping through seeds changes numbers in the diagnostics cards and the status bar
    every frame; each such label paints its own background, so the dock, the status bar and
    the window under them are not repainted for it (a repaint of the whole widget stack
    under a label cost a fifth of a frame). In the window as it first opens, once its first
    two new seeds have settled the cards' held sizes (a wrapped note is measured then, and the
    dock is laid out again: in a loaded clean-clone run that settling spread over four seeds)."""
    from conftest import drawn_window
    from PySide6.QtCore import QEvent, QObject

    class Paints(QObject):
        def __init__(self):
            super().__init__()
            self.seen = set()

        def eventFilter(self, obj, ev):
            if ev.type() == QEvent.Type.Paint:
                self.seen.add(obj.objectName() or type(obj).__name__)
            return False

    with drawn_window(qapp) as w:
        for seed in (1, 2):
            show(qtbot, w, AttentionConfig(seed=seed))
        qapp.processEvents()
        watched = [w, w.statusBar(), w.dock("diagnostics")]
        spy = Paints()
        for widget in watched:
            widget.installEventFilter(spy)
        repainted = {}
        try:
            for seed in range(3, 13):
                spy.seen.clear()
                show(qtbot, w, AttentionConfig(seed=seed))
                for name in spy.seen:
                    repainted[name] = repainted.get(name, 0) + 1
        finally:
            for widget in watched:
                widget.removeEventFilter(spy)
        assert w.panel("diagnostics").isVisible()
        assert all(n <= 2 for n in repainted.values()), repainted  # of 10 seeds
