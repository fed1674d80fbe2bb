"""Issue 16: the tiling and decode step-throughs show the engine's steps and end at the exact result.

The engine half (tiles recorded, decode steps) runs without Qt; the panels are read
through what a user sees: titles, readouts, tick labels, the cells an image shows.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pyqtgraph as pg
import pytest
import torch

import engine
from engine import AttentionConfig
from explorer.stepthrough import MAX_DECODE_TOKENS, StepThroughError, decode_view, resolve_blocks

# ---- the engine ------------------------------------------------------------------------------


def test_tiles_record_rescale_partial_output_and_skip_masked_tiles():
    cfg = AttentionConfig(seq_len=12, causal=True, n_kv_heads=2, positional="alibi")
    tr = engine.run(cfg)
    bias = engine.positional.alibi_bias(cfg.n_heads, 12, 12)
    out, steps = engine.tiled_attention(tr.q, tr.k, tr.v, scale=cfg.effective_scale, mask=tr.mask, block_q=4,
                                        block_k=4, bias=bias, partial=True)
    assert torch.allclose(out, tr.context, atol=1e-5)
    assert len(steps) == 9
    skipped = [(s.q_block, s.k_block) for s in steps if s.skipped]
    assert skipped == [(0, 1), (0, 2), (1, 2)], "the tiles above the diagonal are skipped"
    for s in steps:
        assert bool(((s.rescale > 0) & (s.rescale <= 1)).all())
    last = {s.q_block: s for s in steps}  # the last step of each query block
    for qi, s in last.items():
        assert torch.allclose(s.partial, tr.context[:, :, 4 * qi: 4 * qi + 4], atol=1e-5)
    # a grown max is a rescale below 1, and the factor is e^(m_old − m_new)
    first, second = steps[3], steps[4]  # block 1: key blocks 0 and 1
    grew = second.row_max > first.row_max
    assert torch.allclose(second.rescale[grew], torch.exp(first.row_max - second.row_max)[grew])
    assert bool((second.rescale[~grew] == 1).all())


def test_decode_steps_fill_the_cache_and_count_both_costs():
    cfg = AttentionConfig(seq_len=6, n_kv_heads=2, positional="rope")
    steps = list(engine.decode_steps(cfg, measure=True, repeats=1))
    assert [s.offset for s in steps] == list(range(1, 7))
    assert [s.weights.shape[-1] for s in steps] == list(range(1, 7))
    for s in steps:
        assert torch.allclose(s.weights.sum(-1), torch.ones(1, cfg.n_heads))
        assert s.ms_cached is not None and s.ms_cached > 0 and s.ms_recompute > 0
    full = engine.run(cfg.replace(causal=True)).output
    assert torch.allclose(torch.stack([s.output for s in steps], 1), full, atol=1e-5)
    # FLOPs: the cached step grows linearly, the recompute quadratically
    fc = np.array([s.flops_cached for s in steps], float)
    fr = np.array([s.flops_recompute for s in steps], float)
    assert np.allclose(np.diff(fc, 2), 0) and np.all(np.diff(fr, 2) > 0)
    d, H, Hkv, Dh = 64, 4, 2, 16
    assert fc[0] == 2 * d * (H + 2 * Hkv) * Dh + 2 * d * d + 4 * H * Dh
    assert fr[-1] == 6 * (2 * d * (H + 2 * Hkv) * Dh + 2 * d * d) + 4 * H * Dh * 36


def test_bad_requests_are_refused_with_a_reason():
    with pytest.raises(StepThroughError, match="too many to step through"):
        resolve_blocks(AttentionConfig(seq_len=1024), 1, 1)
    bq, _bk, notes = resolve_blocks(AttentionConfig(seq_len=8), 16, None)
    assert bq == 8 and "query block 16 > S = 8" in notes[0][0].format(**notes[0][1])
    with pytest.raises(StepThroughError, match="self-attention"):
        decode_view(AttentionConfig(kv_len=12))
    with pytest.raises(StepThroughError, match=f"at most {MAX_DECODE_TOKENS}"):
        decode_view(AttentionConfig(seq_len=MAX_DECODE_TOKENS + 1, d_model=16, n_heads=1))


# ---- the panels ----------------------------------------------------------------------------------

pytest.importorskip("pytestqt")

from conftest import shown_window  # noqa: E402

from explorer.figures.layout import text_boxes  # noqa: E402
from explorer.figures.plots import fmt_number  # noqa: E402


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        yield w


def plain(text: str) -> str:
    return re.sub(r"</?(b|span|br|div)\b[^>]*>", "", text).replace("\u00a0", " ")


def texts(panel) -> str:
    return "\n".join(plain(t) for _view, boxes in text_boxes(panel) for t, _b, _a in boxes)


def shown(win, qapp, qtbot, name: str, cfg: AttentionConfig, head: int = 0):
    """The step-through `name` open on `cfg`, its steps computed (in its worker) and drawn."""
    win.render_sync(cfg)
    win.show_panel(name)
    win.selection.set(head=head, query=0, key=0)
    panel = win.panel(name)
    for box in (getattr(panel, "block_q", None), getattr(panel, "block_k", None)):
        if box is not None:
            box.setCurrentIndex(0)  # auto, whatever an earlier test chose
    drawn(qtbot, panel)
    assert panel.message or panel.view.config == cfg
    qapp.processEvents()
    return panel


def drawn(qtbot, panel) -> None:
    """Wait until the panel shows the steps it asked its worker for (or why it cannot)."""
    qtbot.waitUntil(lambda: "computing…" not in texts(panel) and (panel.view is not None or bool(panel.message)),
                    timeout=30000)


def eager_tiled_gap(cfg: AttentionConfig, head: int, block: int) -> float:
    tr = engine.run(cfg)
    h = head
    out, _ = engine.tiled_attention(tr.q[:, h:h + 1].float(), tr.k[:, cfg.kv_head_of(h):cfg.kv_head_of(h) + 1].float(),
                                    tr.v[:, cfg.kv_head_of(h):cfg.kv_head_of(h) + 1].float(),
                                    scale=cfg.effective_scale, mask=tr.mask, block_q=block, block_k=block)
    return float((out[0, 0] - tr.context[0, h].float()).abs().max())


@pytest.mark.slow
@pytest.mark.parametrize("cfg", [AttentionConfig(seq_len=16, causal=True),
                                 AttentionConfig(seq_len=10, n_kv_heads=2, positional="rope", window=4, causal=True)])
def test_tiling_ends_at_the_eager_output(win, qapp, qtbot, cfg):
    panel = shown(win, qapp, qtbot, "tiling", cfg, head=1)
    panel.player.set_position(panel.player.count - 1)
    text = texts(panel)
    block = panel.view.block_q
    gap = eager_tiled_gap(cfg, 1, block)
    eps = torch.finfo(torch.float32).eps
    scale = float(engine.run(cfg).context[0, 1].abs().max())
    assert f"max |Δ| vs eager = {fmt_number(gap, 2)} = {fmt_number(gap / (eps * scale), 2)} ε ✓" in text
    assert gap / (eps * scale) <= 8


@pytest.mark.slow
def test_stepping_and_scrubbing_move_the_tile(win, qapp, qtbot):
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=16))
    assert panel.player.position == panel.player.count - 1 == 15  # a new config: its whole result
    panel.player.set_position(0)
    assert "tile (0, 0) of 4×4 · queries 0–3 × keys 0–3" in texts(panel)
    rect0 = panel.current.rect()
    panel.player.step(1)
    assert "tile (0, 1) of 4×4 · queries 0–3 × keys 4–7 · computed · step 2 of 16" in texts(panel)
    assert panel.current.rect().left() == rect0.left() + 4 and panel.current.rect().top() == rect0.top()
    panel.player.slider.setValue(9)  # as a drag of the slider does
    assert "tile (2, 1) of 4×4 · queries 8–11 × keys 4–7" in texts(panel)
    assert panel.player.spin.value() == 10 and panel.player.position == 9  # the spin box counts from 1


def test_masked_tiles_are_skipped_and_shown_grey(win, qapp, qtbot):
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=16, causal=True))
    panel.player.set_position(15)
    assert "tiles: 16 of 16 visited, 6 skipped (masked)" in texts(panel)
    panel.player.set_position(1)
    assert "skipped: every cell masked" in texts(panel)
    from PySide6.QtGui import QColor

    fog = panel.fog.image  # one pixel per tile: what the grid is covered with
    grey = QColor(win.theme.hatch)
    assert tuple(fog[0, 1, :3]) == (grey.red(), grey.green(), grey.blue()) and fog[0, 1, 3] > 200
    assert fog[0, 0, 3] == 0, "a computed tile is left clear"
    assert fog[1, 0, 3] > 0 and tuple(fog[1, 0, :3]) != tuple(fog[0, 1, :3]), "a pending tile is fogged"
    # the grid's colour bar: its scores' levels, labelled
    assert panel.cbar.isVisible() and tuple(panel.cbar.levels()) == pytest.approx(panel.grid.levels)
    assert panel.cbar.getAxis("left").labelText == "score"


def test_block_size_change_retiles(win, qapp, qtbot):
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=16))
    panel.block_q.setCurrentIndex(panel.block_q.findData(8))
    panel.block_k.setCurrentIndex(panel.block_k.findData(2))
    drawn(qtbot, panel)
    assert panel.player.count == 2 * 8
    assert "of 2×8" in texts(panel) and "block 8 × 2" in texts(panel)


def test_tiling_bad_inputs_say_why(win, qapp, qtbot):
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=8))
    panel.block_q.setCurrentIndex(panel.block_q.findData(64))
    drawn(qtbot, panel)
    assert "query block 64 > S = 8: one block holds every query" in texts(panel)
    panel.block_q.setCurrentIndex(0)
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=8, pad=8))
    assert "8 rows see no key: m stays −∞, ℓ = 0 and O/ℓ is NaN" in texts(panel)
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=1))
    assert "one query (S = 1)" in texts(panel)
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=1024, d_model=16, n_heads=1))
    panel.block_q.setCurrentIndex(panel.block_q.findData(1))
    panel.block_k.setCurrentIndex(panel.block_k.findData(1))
    drawn(qtbot, panel)
    assert "tiles is too many to step through" in texts(panel) and panel.player.count == 0
    assert not panel.cbar.isVisible()  # nothing drawn, no scale


def test_a_step_with_no_row_that_sees_a_key_warns_nothing(win, qapp, qtbot):
    """Issue 46 item 15: a step whose rows all had m = −∞ gave the m curve's symbols all-NaN
    data, and pyqtgraph printed "RuntimeWarning: All-NaN slice encountered" at every paint."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=8, pad=8))
        for i in range(panel.player.count):
            panel.player.set_position(i)
            panel.grab()  # painted: the curves' bounds are taken
        qapp.processEvents()
    assert panel.player.count > 0
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], \
        [str(w.message) for w in caught]


def test_decode_ends_at_full_causal_attention(win, qapp, qtbot):
    cfg = AttentionConfig(seq_len=12, n_kv_heads=2)
    panel = shown(win, qapp, qtbot, "decode", cfg)
    panel.player.set_position(11)
    full = engine.run(cfg.replace(causal=True)).output[0]
    got = engine.decode(cfg)[0]
    diff = float((got - full).abs().max())
    ulps = diff / (torch.finfo(torch.float32).eps * float(full.abs().max()))
    assert f"decode vs full causal attention: max |Δ| = {fmt_number(diff, 2)} = {fmt_number(ulps, 2)} ε ✓" \
        in texts(panel)
    # the K/V strip and the weights beside their colour scales, 0 to 1, saying what the colours are
    shown_texts = [t.strip() for t in texts(panel).split("\n")]  # (an axis title ends in a space)
    assert "‖k‖, ‖v‖" in shown_texts and "weight" in shown_texts
    for bar in (panel.cache_bar, panel.weights_bar):
        assert bar.isVisible() and tuple(bar.levels()) == (0.0, 1.0)


@pytest.mark.parametrize("t", [0, 4, 11])
def test_the_cache_strip_fills_exactly_offset_slots(win, qapp, qtbot, t):
    cfg = AttentionConfig(seq_len=12, n_kv_heads=2)
    panel = shown(win, qapp, qtbot, "decode", cfg)
    panel.player.set_position(t)
    strip = panel.cache  # K rows over V rows, a column per cache slot
    assert strip.data.shape == (2 * cfg.kv_heads, 12)
    filled = np.isfinite(strip.data).all(axis=0)  # (max_len,) the columns the strip colours
    assert filled.sum() == t + 1 and filled[: t + 1].all()
    alpha = strip.image.image[..., 3]  # the image's own pixels: the empty slots are transparent
    assert (alpha[:, : t + 1] > 0).all() and (alpha[:, t + 1:] == 0).all()
    weights = panel.weights.data
    assert np.isfinite(weights[:, : t + 1]).all() and np.isnan(weights[:, t + 1:]).all()
    assert f"offset {t + 1}: {t + 1} filled, {11 - t} empty" in texts(panel)


def test_gqa_groups_are_labelled(win, qapp, qtbot):
    from explorer.export import fresh_panel

    shown(win, qapp, qtbot, "decode", AttentionConfig(seq_len=8, n_heads=8, n_kv_heads=2, d_model=64))
    with fresh_panel(win, "decode", "slides") as figure:  # the figure, at its size: every row labelled
        text = texts(figure)
        assert "K0←q0–3" in text and "K1←q4–7" in text and "V1←q4–7" in text
        assert "q5 → kv1" in text and "4 query heads share each KV head" in text
    panel = shown(win, qapp, qtbot, "decode", AttentionConfig(seq_len=8, n_heads=4, n_kv_heads=1))
    assert "K0←q0–3" in texts(panel) and "K1" not in texts(panel) and "q3 → kv0" in texts(panel)


def test_decode_bad_inputs_say_why(win, qapp, qtbot):
    panel = shown(win, qapp, qtbot, "decode", AttentionConfig(seq_len=8, kv_len=12))
    assert "set the key length to the query length" in texts(panel) and panel.player.count == 0
    assert "‖k‖, ‖v‖" not in texts(panel)  # nothing drawn, no scale
    panel = shown(win, qapp, qtbot, "decode", AttentionConfig(seq_len=1))
    assert "one token (S = 1)" in texts(panel)
    panel = shown(win, qapp, qtbot, "decode", AttentionConfig(seq_len=8, pad=8, causal=True))
    assert "decode vs full causal attention: nothing finite to compare" in texts(panel)


@pytest.mark.slow
def test_both_step_throughs_export(win, qapp, qtbot, tmp_path):
    shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=16, causal=True))
    win.panel("tiling").player.set_position(5)
    written = win.export_figures(tmp_path, panels=["tiling", "decode"], width=800)
    assert [p.name for p in written] == ["tiling.png", "decode.png"]
    from PySide6.QtGui import QImage

    for p in written:
        img = QImage(str(p))
        assert img.width() == 800 and img.height() > 300
    # the figure shows the window's step (the player's position is copied)
    assert win.panel("tiling").player.position == 5


@pytest.mark.slow
def test_the_cli_exports_the_step_throughs(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTN_EXPLORER_SETTINGS=str(tmp_path / "s.ini"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "main.py", "export", "--out", str(tmp_path), "--panel", "tiling",
                        "--panel", "decode", "--width", "640"], cwd=root, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "tiling.png").stat().st_size > 1000 and (tmp_path / "decode.png").stat().st_size > 1000


def test_an_animation_frame_is_cheap(win, qapp, qtbot):
    """Not a timing test (the bench measures it): an animation frame sets data on existing items,
    it never creates or removes any."""
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=16, causal=True))
    before = len(panel.scene().items())
    for i in range(panel.player.count):
        panel.player.set_position(i)
    assert len(panel.scene().items()) == before
    assert not math.isnan(panel.view.max_abs_diff)


def test_stepping_moves_no_plot(win, qapp, qtbot):
    """Stepping the tiles from rows 0–3 to rows 12–15 changes the partial output's row labels
    from one digit to two: the plots keep their place (an axis that narrowed and widened again
    re-laid out, and repainted, the whole panel at every step). Once every step has been seen."""
    panel = shown(win, qapp, qtbot, "tiling", AttentionConfig(seq_len=16, causal=True))
    plots = [item for item in panel.scene().items() if isinstance(item, pg.ViewBox)]

    def places(step: int) -> tuple:
        panel.player.set_position(step)
        qapp.processEvents()
        return tuple(vb.sceneBoundingRect().getRect() for vb in plots)

    for step in range(panel.player.count):  # the first pass: the widest labels are seen
        places(step)
    seen = {places(step) for step in range(panel.player.count)}
    assert len(seen) == 1, f"the plots moved while stepping: {len(seen)} layouts"
