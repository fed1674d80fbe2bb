"""Redraw by what changed, beyond the live panels (issue 44, item 1): the model panels and the
step-throughs repaint a map when what it is drawn from is another object — a new model
trace or analysis result, a new frame's steps, another step — of the same shape or not, and
keep it, untouched, while it is the same one (a move of the selected cell, the same step
again). No content is compared: two texts of the same length give maps of the same shape.

A repaint is counted where pyqtgraph gets the pixels (`ImageItem.setImage`, wrapped by the
test); what a user sees is read from the image it holds. One window for the module, a tiny
random GPT-2 (tests/models_fixtures.py) on texts of six one-token words.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("transformers")

from engine import AttentionConfig
from explorer.figures.text import plot_title

try:
    from conftest import model_window
    from models_fixtures import gpt2_path, settle_analyses
except ImportError:  # tests/ imported as a package
    from tests.conftest import model_window
    from tests.models_fixtures import gpt2_path, settle_analyses

__all__ = ["gpt2_path"]  # a fixture

TIMEOUT_S = 120
#: six words of the tiny tokenizer each: traces of the same shape, other numbers
TEXT_A = "the cat sat on the mat"
TEXT_B = "a dog ran in the park"


@pytest.fixture(scope="module")
def window(qapp, gpt2_path):
    with model_window(qapp, gpt2_path, TEXT_A, TIMEOUT_S) as w:
        yield w


class Repaints:
    """Counts the images handed to a heatmap's ImageItem (each one a repaint of its pixels)."""

    def __init__(self, monkeypatch, *heatmaps) -> None:
        self.count = 0
        for hm in heatmaps:
            original = hm.image.setImage

            def counted(*args, _original=original, **kwargs):
                self.count += 1
                return _original(*args, **kwargs)

            monkeypatch.setattr(hm.image, "setImage", counted)


def pixels(hm) -> bytes:
    """The RGBA pixels a heatmap shows."""
    return np.ascontiguousarray(hm.image.image).tobytes()


def use_text(qapp, window, text: str) -> None:
    c = window.model_controller
    c.set_text(text)
    assert c.wait_ready(TIMEOUT_S) is None
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)


def front(qapp, window, name: str):
    window.show_panel(name)
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)
    return window.panel(name)


def test_the_model_head_repaints_a_new_trace_and_keeps_its_map_on_a_cell_move(qapp, window, monkeypatch):
    use_text(qapp, window, TEXT_A)
    head = front(qapp, window, "model_head")
    sel = window.model_controller.selection
    sel.set(head=1, layer=1, query=0, key=0)
    qapp.processEvents()
    shape_a, before = head.big.image.image.shape, pixels(head.big)
    n_tokens = window.model_controller.trace.seq_len
    repaints = Repaints(monkeypatch, head.big)
    sel.set(query=n_tokens - 1, key=2)  # the selected cell moves: the same trace, layer and head
    qapp.processEvents()
    assert repaints.count == 0 and pixels(head.big) == before
    assert f"{n_tokens}×{n_tokens}" in plot_title(head.big.item)  # (drawn again: its title says so)
    use_text(qapp, window, TEXT_B)  # another text of as many tokens: the same shape
    assert window.model_controller.trace.seq_len == n_tokens
    assert repaints.count >= 1
    assert head.big.image.image.shape == shape_a and pixels(head.big) != before
    after_b = pixels(head.big)
    sel.set(head=2)  # another head of the same trace
    qapp.processEvents()
    assert pixels(head.big) != after_b


def test_the_model_grid_recomposes_for_a_new_trace_or_metric_only(qapp, window, monkeypatch):
    use_text(qapp, window, TEXT_A)
    grid = front(qapp, window, "model_grid")
    before = np.ascontiguousarray(grid.mosaic.image.image).tobytes()
    repaints = Repaints(monkeypatch, grid.mosaic)
    grid.select_head(1, 2)  # a click on a head: its outline moves, the thumbnails stay
    qapp.processEvents()
    assert repaints.count == 0
    use_text(qapp, window, TEXT_B)  # the same number of tokens, layers and heads
    assert repaints.count == 1
    assert np.ascontiguousarray(grid.mosaic.image.image).tobytes() != before
    grid.metric_combo.setCurrentIndex(grid.metric_combo.findData("sink"))  # the frames' colours
    assert repaints.count == 2


def test_the_logit_lens_repaints_a_new_result_and_keeps_it_on_a_cell_move(qapp, window, monkeypatch):
    use_text(qapp, window, TEXT_A)
    lens = front(qapp, window, "logit_lens")
    assert "cat" in "".join(lens.lens.tokens)
    shape, before = lens.map.image.image.shape, pixels(lens.map)
    repaints = Repaints(monkeypatch, lens.map)
    sel = window.model_controller.selection
    sel.set(query=3)  # the panel draws again (its marker moves), from the same result
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)
    assert repaints.count == 0 and pixels(lens.map) == before
    use_text(qapp, window, TEXT_B)
    assert repaints.count >= 1
    assert "dog" in "".join(lens.lens.tokens)
    assert lens.map.image.image.shape == shape and pixels(lens.map) != before


def tiling_shown(qapp, qtbot, window, cfg: AttentionConfig):
    window.render_sync(cfg)
    window.show_panel("tiling")
    panel = window.panel("tiling")
    qtbot.waitUntil(lambda: panel.view is not None and panel.view.config == cfg, timeout=30_000)
    qapp.processEvents()
    return panel


def test_the_tiling_step_through_repaints_a_new_frame_and_each_new_step_only(qapp, qtbot, window, monkeypatch):
    cfg = AttentionConfig(seq_len=16, seed=31)
    panel = tiling_shown(qapp, qtbot, window, cfg)
    panel.player.set_position(5)
    grid_shape, grid_before, partial_before = panel.grid.image.image.shape, pixels(panel.grid), pixels(panel.partial)
    scores, steps = Repaints(monkeypatch, panel.grid), Repaints(monkeypatch, panel.partial)
    panel.player.set_position(5)  # the same step again
    panel.draw_step(5)
    assert steps.count == 0 and scores.count == 0
    panel.player.set_position(6)  # the next tile: its partial output, the same scores
    assert steps.count == 1 and scores.count == 0
    panel.player.set_position(5)
    assert steps.count == 2 and pixels(panel.partial) == partial_before
    # another seed: the same shape, other scores and partial outputs, all repainted
    panel = tiling_shown(qapp, qtbot, window, cfg.replace(seed=32))
    assert scores.count >= 1
    assert panel.grid.image.image.shape == grid_shape and pixels(panel.grid) != grid_before
    panel.player.set_position(5)
    assert pixels(panel.partial) != partial_before


def test_the_decode_step_through_repaints_each_new_step_only(qapp, qtbot, window, monkeypatch):
    cfg = AttentionConfig(seq_len=8, seed=33, n_kv_heads=2)
    window.render_sync(cfg)
    window.show_panel("decode")
    panel = window.panel("decode")
    qtbot.waitUntil(lambda: panel.view is not None and panel.view.config.seq_len == 8, timeout=30_000)
    qapp.processEvents()
    panel.player.set_position(3)
    weights_3 = pixels(panel.weights)
    repaints = Repaints(monkeypatch, panel.cache, panel.weights)
    panel.draw_step(3)  # the same step drawn again (a theme, a language)
    assert repaints.count == 0
    panel.player.set_position(4)  # one more key cached and weighed
    assert repaints.count == 2 and pixels(panel.weights) != weights_3


def test_the_model_qk_space_fades_the_keys_a_new_query_cannot_see_and_keeps_them_on_a_key_move(
        qapp, window, monkeypatch):
    """GPT-2 is causal: the keys after the selected query are pale. A key move keeps the points
    as painted; a query move repaints them with the new pale set."""
    use_text(qapp, window, TEXT_A)
    panel = front(qapp, window, "model_qk_space")
    sel = window.model_controller.selection
    sel.set(query=1, key=0)
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)
    fig = panel.fig
    pale_1 = fig.faded.copy()
    assert pale_1.any()  # the later keys of the text
    drawn = []
    original = fig.scatter.setData
    monkeypatch.setattr(fig.scatter, "setData", lambda *a, **k: (drawn.append(1), original(*a, **k)))
    sel.set(key=1)
    qapp.processEvents()
    assert not drawn
    sel.set(query=4)
    qapp.processEvents()
    assert drawn and fig.faded.sum() < pale_1.sum()  # fewer keys out of its sight


def test_the_attribution_redraws_its_bars_for_a_new_result_or_head_only(qapp, window, monkeypatch):
    """The attribution's bars are drawn again from another result (another text: other
    heights) or recoloured for another selected head, and left as painted when the same result
    comes again (a key moved: the target and position are the same)."""
    use_text(qapp, window, TEXT_A)
    panel = front(qapp, window, "attribution")
    sel = window.model_controller.selection
    sel.set(query=2, key=0, head=0, layer=0)
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)
    bars_a, title_a = panel.bars.bars(), plot_title(panel.plot)
    assert bars_a and "sat" in title_a  # the text's next token after "the cat"
    drawn = []
    original = panel.bars.set_groups
    monkeypatch.setattr(panel.bars, "set_groups", lambda *a, **k: (drawn.append(1), original(*a, **k)))
    sel.set(key=1)  # the same position and target: the same result
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)
    assert not drawn and panel.bars.bars() == bars_a and plot_title(panel.plot) == title_a
    sel.set(head=1)  # another head selected: the same heights, the highlight moved
    qapp.processEvents()
    settle_analyses(qapp, window, TIMEOUT_S)
    assert len(drawn) == 1
    moved = panel.bars.bars()
    assert sorted(r.getRect() for _c, r in moved) == sorted(r.getRect() for _c, r in bars_a)
    assert moved != bars_a
    use_text(qapp, window, TEXT_B)  # as many tokens, other numbers: other heights
    assert len(drawn) >= 2
    bars_b = panel.bars.bars()
    assert len(bars_b) == len(bars_a)
    assert sorted(r.height() for _c, r in bars_b) != sorted(r.height() for _c, r in bars_a)
    assert "ran" in plot_title(panel.plot)
