"""Compare with a pinned reference A (issue 18): every panel shows A beside B, or B − A where it
means something; side by side only when the shapes differ or a frame is long; the status bar
says what is shown; exports show what the window shows; lessons pin their "before"; snapshot
edits mark the session modified."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from conftest import plain, shown_window
from PySide6.QtCore import Qt

import engine
from engine import AttentionConfig
from explorer.export import fresh_panel
from explorer.figures.layout import text_boxes
from explorer.lessons import load_chapters

A_CFG = AttentionConfig(d_model=256, n_heads=4)
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        yield w


@pytest.fixture(autouse=True)
def unpinned(win):
    yield
    win.clear_reference()


def show(win, qapp, cfg: AttentionConfig):
    win.render_sync(cfg)
    qapp.processEvents()
    return win.frame


def pinned(win, qapp, a: AttentionConfig, b: AttentionConfig):
    """A pinned at `a`, then B = `b` shown; returns (frame A, frame B)."""
    fa = show(win, qapp, a)
    win.menus_feature.act_pin.trigger()
    fb = show(win, qapp, b)
    return fa, fb


def texts(panel) -> str:
    return "\n".join(plain(t) for _view, boxes in text_boxes(panel) for t, _b, _a in boxes)


def engine_grid(cfg: AttentionConfig, name: str) -> np.ndarray:
    """Batch row 0 of the engine's `name` for `cfg`, as float32 numpy (what a frame holds)."""
    return getattr(engine.run(cfg), name)[0].float().numpy()


# ---- B − A equals the engine's B − A ------------------------------------------------------------


@pytest.mark.slow
def test_qkv_difference_of_q_is_the_engines(win, qapp):
    b_cfg = A_CFG.replace(positional="rope")  # RoPE turns Q and K; X, W and V stay the same
    pinned(win, qapp, A_CFG, b_cfg)
    win.selection.set(head=1)
    qkv = win.panel("qkv")
    assert qkv.view.isVisible()
    qkv.view.setCurrentIndex(2)
    qapp.processEvents()
    assert qkv.comparison() == "B-A"
    dq = engine_grid(b_cfg, "q")[1] - engine_grid(A_CFG, "q")[1]  # (S, Dh)
    np.testing.assert_array_equal(qkv.q.data, dq)
    assert np.abs(dq).max() > 0  # RoPE really changed Q
    np.testing.assert_array_equal(qkv.v.data, np.zeros_like(qkv.v.data))  # V has no positions
    assert "ΔQ head 1" in texts(qkv) and "ΔX = B − A" in texts(qkv)
    qkv.view.setCurrentIndex(1)  # A itself
    qapp.processEvents()
    np.testing.assert_array_equal(qkv.q.data, engine_grid(A_CFG, "q")[1])
    qkv.view.setCurrentIndex(0)


def test_scores_overlay_a_histogram_with_its_own_counts(win, qapp):
    b_cfg = A_CFG.replace(scale=1.0)
    fa, _fb = pinned(win, qapp, A_CFG, b_cfg)
    win.selection.set(head=2)
    qapp.processEvents()
    scores = win.panel("scores")
    for hist, values in ((scores.raw, engine_grid(A_CFG, "scores_raw")[2]),
                         (scores.scaled, engine_grid(A_CFG, "scores")[2][fa.mask])):
        assert hist.ref_hist.isVisible()
        edges, density = hist.ref_hist.getData()
        counts, np_edges = np.histogram(values, bins=len(density), range=(values.min(), values.max()))
        np.testing.assert_allclose(edges, np_edges, atol=1e-6 * np.ptp(values))  # (float32 in the item)
        # density × (n · bin width) gives back the counts of A's values
        np.testing.assert_allclose(density * values.size * (np_edges[1] - np_edges[0]), counts, atol=1e-3)
    assert "A (reference)" in texts(scores) and "B (current)" in texts(scores)
    win.clear_reference()
    qapp.processEvents()
    assert not scores.raw.ref_hist.isVisible() and "A (reference)" not in texts(scores)


def test_softmax_grad_and_diagnostics_pair_a_with_b(win, qapp):
    b_cfg = A_CFG.replace(scale=1.0)
    fa, fb = pinned(win, qapp, A_CFG, b_cfg)
    win.selection.set(head=1, query=3)
    qapp.processEvents()
    sg = win.panel("softmax_grad")
    np.testing.assert_array_equal(sg.jac_ref.getData()[1], np.nan_to_num(fa.jac_norm[1]))
    np.testing.assert_array_equal(sg.row_ref.getData()[1], fa.weights[1, 3])
    assert "A, mean" in texts(sg) and "A: H =" in texts(sg)
    diag = win.panel("diagnostics")
    for (key, _label, _plot, bars), ref_bars in zip(diag.metric_plots, diag.ref_bars):
        np.testing.assert_array_equal(ref_bars.heights, np.nan_to_num(getattr(fa, key)))
        np.testing.assert_array_equal(bars.heights, np.nan_to_num(getattr(fb, key)))
    a, b = (f"{fr.head_entropy[1]:.3g}" for fr in (fa, fb))
    assert f"entropy (nats) · head 1: A {a} | B {b}" in texts(diag).replace("\n", " ")


def test_heads_thumbnails_follow_b_minus_a(win, qapp):
    b_cfg = A_CFG.replace(causal=True)
    fa, fb = pinned(win, qapp, A_CFG, b_cfg)
    heads = win.panel("heads")
    assert heads.comparison() == "B-A"
    np.testing.assert_array_equal(heads.thumbs.data, fb.weights - fa.weights)
    lo, hi = heads.thumbs.levels
    assert lo == -hi and hi == pytest.approx(np.abs(fb.weights - fa.weights).max())
    heads.view.setCurrentIndex(0)  # B: the thumbnails are B's weights again
    qapp.processEvents()
    np.testing.assert_array_equal(heads.thumbs.data, fb.weights_shown)
    heads.view.setCurrentIndex(2)


def test_b_minus_a_counts_nan_rows_as_differences(win, qapp):
    """B all NaN (every key padded under -inf) is not "max |Δ| 0": the title says there is no
    comparable row and counts the NaN rows, on either side (issue 27, item 6)."""
    nan_cfg = A_CFG.replace(pad=A_CFG.seq_len)
    fa, fb = pinned(win, qapp, A_CFG, nan_cfg)
    assert np.isnan(fb.weights).all() and not np.isnan(fa.weights).any()
    heads = win.panel("heads")
    assert heads.comparison() == "B-A"
    title = texts(heads)
    S = A_CFG.seq_len
    assert f"max |Δ| – · {S} rows NaN in B only" in title, title
    assert "max |Δ| 0" not in title
    win.clear_reference()
    pinned(win, qapp, nan_cfg, A_CFG)  # the other way round
    assert f"{S} rows NaN in A only" in texts(heads)
    pinned(win, qapp, A_CFG, A_CFG.replace(seed=1))  # both finite: no NaN note
    assert "max |Δ| " in texts(heads) and "rows NaN" not in texts(heads)


# ---- shapes differ, long frames ------------------------------------------------------------------


def test_shapes_differ_side_by_side_only_with_a_note(win, qapp):
    fa, fb = pinned(win, qapp, A_CFG, A_CFG.replace(seq_len=12))
    win.selection.set(head=3, query=10, key=11)
    qapp.processEvents()
    heads = win.panel("heads")
    assert heads.comparison() == "A|B" and heads.view.currentText() == "A | B: side by side"
    assert not heads.view.model().item(2).isEnabled()  # no B − A offered
    np.testing.assert_array_equal(heads.big_a.data, fa.weights_shown[3])
    np.testing.assert_array_equal(heads.big.data, fb.weights_shown[3])
    drawn = heads.scene().items()  # A's map in the thumbnails' place
    assert heads.big_a.item in drawn and heads.thumbs.vb not in drawn
    assert "shapes differ (A 8×8, B 12×12): side by side only" in texts(heads)
    # the selection applies to both: A's marker at the same cell, clamped to A's shape
    assert heads.big_a.marker.isVisible() and heads.big_a.marker.rect().center().toTuple() == (7.0, 7.0)
    assert "showing A and B side by side" in win.compare_status.label.text()
    qkv = win.panel("qkv")
    assert not qkv.view.model().item(2).isEnabled() and qkv.comparison() != "B-A"
    # back to A's shape: B − A again, the thumbnails back in their place
    show(win, qapp, A_CFG.replace(scale=1.0))
    assert heads.comparison() == "B-A" and heads.view.currentIndex() == 2
    drawn = heads.scene().items()
    assert heads.thumbs.vb in drawn and heads.big_a.item not in drawn
    assert heads.thumbs.vb.width() > 0.25 * heads.width()  # their share of the width again


@pytest.mark.slow
def test_long_frames_compare_side_by_side_without_crashing(win, qapp):
    long_a = AttentionConfig(seq_len=520, n_heads=2, d_model=32, backend="flash")
    fa, fb = pinned(win, qapp, long_a, long_a.replace(causal=True))
    assert fa.lod is not None and fb.lod is not None
    heads = win.panel("heads")
    assert heads.comparison() == "A|B"
    assert "no difference at this length: side by side only" in texts(heads)
    win.selection.set(head=1, query=515, key=3)
    qapp.processEvents()
    for name in ("qkv", "scores", "softmax_grad", "diagnostics"):
        assert texts(win.panel(name))  # drawn, no exception
    # a short A against a long B, and the exports of it
    win.clear_reference()
    show(win, qapp, A_CFG)
    win.menus_feature.act_pin.trigger()
    show(win, qapp, long_a)
    assert heads.comparison() == "A|B"
    with fresh_panel(win, "heads") as fig:
        assert fig.comparison() == "A|B" and fig.big_a.data.shape == (8, 8)
    with fresh_panel(win, "scores") as fig:
        assert fig.raw.ref_hist.isVisible()


# ---- the status bar, exports ----------------------------------------------------------------------


def test_status_bar_says_what_is_compared_and_shown(win, qapp):
    show(win, qapp, AttentionConfig())
    assert not win.compare_status.label.isVisible()
    pinned(win, qapp, AttentionConfig(), AttentionConfig(scale=1.0))
    label = win.compare_status.label
    assert label.isVisible()
    assert label.text() == "comparing with A: scale=1/√d_k · showing B − A"
    assert "d_model=64" in label.toolTip()  # the whole of A's config
    win.panel("heads").view.setCurrentIndex(1)
    qapp.processEvents()
    assert label.text() == "comparing with A: scale=1/√d_k · showing A (reference)"
    win.panel("heads").view.setCurrentIndex(2)
    win.clear_reference()
    qapp.processEvents()
    assert not label.isVisible()
    # issue 27: A and B differing only where the summary is silent were "the same config"
    pinned(win, qapp, AttentionConfig(), AttentionConfig(positional="rope", prescale_q=True, seed=4))
    assert label.text() == "comparing with A: no prescale Q · pos=none · seed=0 · showing B − A", label.text()
    win.clear_reference()
    pinned(win, qapp, AttentionConfig(seed=2), AttentionConfig(seed=2))
    assert label.text().startswith("comparing with A: the same config"), label.text()
    win.clear_reference()
    qapp.processEvents()


def test_export_draws_the_comparison_the_window_shows(win, qapp):
    b_cfg = A_CFG.replace(scale=1.0)
    fa, fb = pinned(win, qapp, A_CFG, b_cfg)
    win.selection.set(head=2)
    win.panel("qkv").view.setCurrentIndex(2)
    qapp.processEvents()
    with fresh_panel(win, "heads") as fig:
        assert fig.reference is win.reference and fig.comparison() == "B-A"
        np.testing.assert_array_equal(fig.big.data, fb.weights[2] - fa.weights[2])
    with fresh_panel(win, "qkv") as fig:
        assert fig.comparison() == "B-A"
        np.testing.assert_array_equal(fig.ctx.data, fb.context[2] - fa.context[2])
    win.panel("heads").view.setCurrentIndex(3)
    qapp.processEvents()
    with fresh_panel(win, "heads") as fig:
        assert fig.comparison() == "A|B"
        np.testing.assert_array_equal(fig.big_a.data, fa.weights_shown[2])
    win.panel("heads").view.setCurrentIndex(2)
    win.panel("qkv").view.setCurrentIndex(0)


# ---- lessons pin their "before" ---------------------------------------------------------------------


CHAPTERS = load_chapters()
COMPARING = [i for i, c in enumerate(CHAPTERS) if c.compare]


def test_the_comparison_chapters_are_marked():
    assert [CHAPTERS[i].key for i in COMPARING] == ["03-scaling", "04-masks", "06-positions", "08-half-precision"]


@pytest.mark.slow
@pytest.mark.parametrize("index", COMPARING, ids=[CHAPTERS[i].key for i in COMPARING])
def test_a_lesson_preset_pins_its_before_state(qtbot, win, qapp, index):
    ch = CHAPTERS[index]
    lesson = win.show_lessons(index)
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.reference is not None and win.reference.config == ch.config, timeout=TIMEOUT)
    assert f"Before: chapter {index + 1}" in win.snapshots.names()
    qtbot.mouseClick(lesson.do_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == ch.try_config, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: lesson.try_holds is True, timeout=TIMEOUT)
    heads = win.panel("heads")
    assert heads.comparison() == "B-A"
    diff = engine_grid(ch.try_config, "weights")[win.selection.head] - engine_grid(ch.config, "weights")[
        win.selection.head]
    np.testing.assert_array_equal(heads.big.data, diff)
    assert "B − A" in lesson.check_label.toolTip()
    assert "showing B − A" in win.compare_status.label.text()
    # applying the preset again reuses the chapter's snapshot
    n = len(win.snapshots)
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == ch.config, timeout=TIMEOUT)
    qapp.processEvents()
    assert len(win.snapshots) == n


def test_do_it_for_me_alone_pins_the_preset(qtbot, win, qapp):
    index = COMPARING[0]
    ch = CHAPTERS[index]
    show(win, qapp, AttentionConfig(seq_len=5))
    lesson = win.show_lessons(index)
    qtbot.mouseClick(lesson.do_button, Qt.MouseButton.LeftButton)  # no "Apply preset" first
    qtbot.waitUntil(lambda: win.reference is not None and win.reference.config == ch.config, timeout=TIMEOUT)
    assert win.panel("heads").comparison() == "B-A"


def test_other_chapters_pin_nothing(qtbot, win, qapp):
    index = next(i for i, c in enumerate(CHAPTERS) if not c.compare and c.needs != "model")
    lesson = win.show_lessons(index)
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == CHAPTERS[index].config, timeout=TIMEOUT)
    qapp.processEvents()
    assert win.reference is None


# ---- snapshot edits are changes to save --------------------------------------------------------------


def test_snapshot_edits_mark_the_session_modified(win, qapp, tmp_path):
    show(win, qapp, AttentionConfig())
    path = tmp_path / "s.json"
    assert win.save_session(path)
    assert not win.isWindowModified() and "*" not in win.windowTitle().replace("[*]", "")
    win.menus_feature.act_pin.trigger()  # adds a snapshot
    assert win.isWindowModified()
    assert win.save_session(path) and not win.isWindowModified()
    win.snapshots.rename(len(win.snapshots) - 1, "with √d_k")
    assert win.isWindowModified()
    assert win.save_session(path) and not win.isWindowModified()
    win.snapshots.rename(len(win.snapshots) - 1, "with √d_k")  # the same name: no change
    assert not win.isWindowModified()
    win.snapshots.remove(len(win.snapshots) - 1)
    assert win.isWindowModified()
    # undoing a config change back to the saved one keeps the "*" of the snapshot edit
    win.set_config(AttentionConfig(seq_len=9))
    win.undo()
    qapp.processEvents()
    assert win.undo_stack.isClean() and win.isWindowModified()
    assert win.open_session(path) and not win.isWindowModified()


# ---- the comparison figures: nothing cut, nothing overlapping -----------------------------------------


def layout_problems(panel, name: str) -> list[str]:
    problems = []
    for _view, boxes in text_boxes(panel):
        for text, box, area in boxes:
            if not area.adjusted(-1, -1, 1, 1).contains(box):
                problems.append(f"{name}: {text!r} is cut")
        for i, (a, box_a, _) in enumerate(boxes):
            for b, box_b, _ in boxes[i + 1:]:
                common = box_a.intersected(box_b)
                if common.width() * common.height() > 4:
                    problems.append(f"{name}: {a!r} overlaps {b!r}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize(("theme", "lang"), [("slides", "en"), ("screen", "zh_CN")])
@pytest.mark.parametrize("b_changes", [{"scale": 1.0}, {"seq_len": 12}], ids=["B-A", "side-by-side"])
def test_comparison_figures_keep_their_texts_inside(win, qapp, theme, lang, b_changes):
    assert win.set_language(lang)
    try:
        pinned(win, qapp, A_CFG, A_CFG.replace(**b_changes))
        win.selection.set(head=1, query=5, key=4)
        win.panel("qkv").view.setCurrentIndex(2)
        qapp.processEvents()
        problems = []
        for name in ("heads", "qkv", "scores", "softmax_grad", "diagnostics"):
            with fresh_panel(win, name, theme) as fig:
                problems += layout_problems(fig, name)
        assert not problems, "\n".join(problems)
    finally:
        win.panel("qkv").view.setCurrentIndex(0)
        win.set_language("en")


@pytest.mark.slow
@pytest.mark.parametrize("b_changes", [{"scale": 1.0}, {"seq_len": 12}], ids=["B-A", "side-by-side"])
def test_the_window_comparing_keeps_its_texts_inside(as_opened, qapp, b_changes):
    try:
        window_layout_check(as_opened, qapp, b_changes)
    finally:
        as_opened.clear_reference()


@pytest.fixture(scope="module")
def as_opened(qapp):
    """A window as it opens (the lesson tests above moved the module window's docks), for the
    window layout checks alone: they pin, show and unpin, and move no dock."""
    with shown_window(qapp) as w:
        yield w


def window_layout_check(win, qapp, b_changes) -> None:
    pinned(win, qapp, A_CFG, A_CFG.replace(**b_changes))
    win.selection.set(head=1, query=5, key=4)
    try:
        problems = []
        for view in (2, 1):  # B − A (or side by side), then A
            win.panel("qkv").view.setCurrentIndex(view)
            win.panel("heads").view.setCurrentIndex(view)
            for _ in range(5):
                qapp.processEvents()
            for name in ("heads", "qkv", "scores", "softmax_grad", "diagnostics"):
                problems += layout_problems(win.panel(name), name)
        assert not problems, "\n".join(problems)
    finally:
        win.panel("qkv").view.setCurrentIndex(0)
        win.panel("heads").view.setCurrentIndex(2)
