"""Redraw by what changed (issue 44): a panel keeps what it painted only while it is drawn
from the same frame, head and reference A — never because two arrays happen to compare
equal — and repaints whenever its data changes, shape or not.

One window for the module; each test starts from the default config.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from engine import AttentionConfig
from explorer.figures.plots import Drawn, same_sources
from explorer.figures.text import plot_title

TIMEOUT = 20_000


def show(qtbot, window, cfg: AttentionConfig) -> None:
    if window.frame is not None and window.frame.config == cfg and window.config == cfg:
        return
    with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c: c == cfg):
        window.set_config(cfg)


@pytest.fixture
def w(qtbot, window):
    window.state.set_reference(None)
    show(qtbot, window, AttentionConfig())
    window.selection.set(0, 0, 0)
    yield window
    window.state.set_reference(None)
    window.panel("scores").scope.setCurrentIndex(0)


def _std(readout_text: str) -> str:
    """The measured std a histogram's readout prints ("std 4.02")."""
    m = re.search(r"std\W*(?:<b>)?([-0-9.e]+)", readout_text.replace("\u00a0", " "))
    assert m, readout_text
    return m.group(1)


def test_sources_are_compared_by_identity_never_by_content():
    a = np.arange(4.0)
    assert same_sources((a, 1, "all"), (a, 1, "all"))
    assert not same_sources((a,), (a.copy(),))  # equal numbers, another array: drawn again
    assert not same_sources((1,), (1.0,)) and not same_sources(None, ())
    drawn = Drawn()
    assert drawn.changed("hist", a, 0) and not drawn.changed("hist", a, 0)
    assert drawn.changed("hist", a, 1)
    drawn.forget()
    assert drawn.changed("hist", a, 1)


def test_a_new_seed_of_the_same_shape_repaints_every_histogram_and_bar(qtbot, w, qapp):
    """The seed slider: same shapes, new numbers; the histograms, their readouts, the
    Jacobian bars and the row's bars follow each frame."""
    scores, grad = w.panel("scores"), w.panel("softmax_grad")
    seen_std, seen_pixels = set(), set()
    for seed in (11, 12, 13):
        show(qtbot, w, AttentionConfig(seed=seed))
        f = w.frame
        raw = f.scores_raw[0]
        edges = scores.raw.hist.getData()[0]
        # the drawn histogram is this frame's: its bins hold every finite value
        assert edges[0] <= float(raw.min()) and float(raw.max()) <= edges[-1] + 1e-9
        assert float(_std(scores.raw.readout.text)) == pytest.approx(float(np.std(raw)), rel=6e-3)
        seen_std.add((_std(scores.raw.readout.text), _std(scores.scaled.readout.text)))
        assert np.allclose(grad.jac_bars.heights, np.nan_to_num(f.jac_norm[0]))
        assert np.allclose(grad.row_bars.heights, np.nan_to_num(f.row("weights", 0, 0)))
        qkv, heads = w.panel("qkv"), w.panel("heads")
        assert qkv.q.data is not None and np.array_equal(qkv.q.data, f.q[0])
        assert np.array_equal(qkv.ctx.data, f.context[0])
        assert np.array_equal(heads.big.data, f.weights_shown[0], equal_nan=True)
        qapp.processEvents()
        seen_pixels.add(tuple(p.graphics.grab().toImage().bits().tobytes() for p in (scores, qkv, heads)))
    assert len(seen_std) == 3
    for i in range(3):  # each panel looks different on each seed
        assert len({pixels[i] for pixels in seen_pixels}) == 3


def test_a_cell_move_keeps_the_histogram_and_a_head_change_redraws_it(qtbot, w):
    scores = w.panel("scores")
    show(qtbot, w, AttentionConfig(seed=5))
    before = scores.raw.hist.getData()[1].copy()
    w.selection.set(query=3, key=2)
    assert np.array_equal(scores.raw.hist.getData()[1], before)
    assert "q3·k2" in scores.raw.selected.label.format
    w.selection.set(head=2)
    assert not np.array_equal(scores.raw.hist.getData()[1], before)
    assert np.array_equal(w.panel("qkv").q.data, w.frame.q[2])
    assert np.array_equal(w.panel("heads").big.data, w.frame.weights_shown[2], equal_nan=True)
    assert "head 2" in plot_title(scores.raw.plot)
    scores.scope.setCurrentIndex(1)  # all heads
    assert float(np.std(w.frame.scores_raw)) == pytest.approx(float(_std(scores.raw.readout.text)), rel=6e-3)


def test_another_reference_of_the_same_shape_redraws_its_lines(qtbot, w):
    """Pinning A, then another A of the same shape: the A lines and histograms are the new A's."""
    grad, scores = w.panel("softmax_grad"), w.panel("scores")
    show(qtbot, w, AttentionConfig(seed=21))
    a1 = w.frame
    show(qtbot, w, AttentionConfig(seed=22))
    a2 = w.frame
    show(qtbot, w, AttentionConfig(seed=23))
    for a in (a1, a2, a1):
        w.state.set_reference(a)
        assert np.allclose(grad.jac_ref.getData()[1], np.nan_to_num(a.jac_norm[0]))
        assert np.allclose(grad.row_ref.getData()[1], np.nan_to_num(a.row("weights", 0, 0)))
        edges = scores.raw.ref_hist.getData()[0]
        assert edges[0] <= float(a.scores_raw[0].min()) and float(a.scores_raw[0].max()) <= edges[-1] + 1e-9
        a_std = re.search(r"A: std ([-0-9.e]+)", scores.raw.readout.text.replace("\u00a0", " ")).group(1)
        assert float(a_std) == pytest.approx(float(np.std(a.scores_raw[0])), rel=6e-3)


def test_the_weights_colour_scale_holds_while_stepping_seeds(qtbot, w):
    """Dragging the seed slider, the heads map's colour bar keeps its ticks on most seeds
    (it grows at once for a larger weight, shrinks only under half of it), and no weight
    is ever above the top of the scale."""
    heads = w.panel("heads")
    tops, changes = [], 0
    for seed in range(200, 230):
        show(qtbot, w, AttentionConfig(seed=seed))
        top = float(heads.cbar.levels()[1])
        assert w.frame.weight_max <= top + 1e-6
        changes += bool(tops) and top != tops[-1]
        tops.append(top)
    assert changes <= 4, f"the colour scale changed {changes} times in 29 seed steps: {tops}"
