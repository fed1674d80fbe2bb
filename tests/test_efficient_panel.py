"""The efficient-attention controls (kernel, n_features, global tokens, block summaries) and
the `efficient` panel: each control sets the state's config and Undo takes it back; an
invalid combination is refused in one line; the panel reads engine.approximation_report's
numbers, says when there is nothing to compare, and exports."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage

import engine
from engine import AttentionConfig
from explorer.figures.text import plot_title
from tests.conftest import plain

TIMEOUT = 30_000


@pytest.fixture
def w(qtbot, window):
    window.banner.hide_message()
    show(qtbot, window, AttentionConfig())
    return window


def show(qtbot, window, cfg: AttentionConfig) -> None:
    if window.frame is not None and window.frame.config == cfg and window.config == cfg:
        return
    with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c: c == cfg):
        window.set_config(cfg)


def _pick(combo, data) -> None:
    i = combo.findData(data)
    assert i >= 0 and combo.model().item(i).isEnabled(), f"{data!r} not offered"
    combo.setCurrentIndex(i)
    combo.activated.emit(i)


def _slide(vs, value) -> None:
    vs.slider.setValue(vs._to_index(value))
    vs.flush()


def _messages(w):
    seen: list[str] = []
    w.controls.message.connect(seen.append)
    return seen


def test_each_control_sets_the_config_and_undo_restores(qtbot, w):
    c = w.controls
    _pick(c.kernel, "linear")
    assert w.config.kernel == "linear"
    assert not c.n_features.isVisibleTo(c)  # m is performer's alone
    w.undo()
    assert w.config.kernel == "softmax" and c.kernel.currentData() == "softmax"

    _pick(c.kernel, "performer")
    assert w.config.kernel == "performer" and c.n_features.isVisibleTo(c)
    c.n_features.setValue(16)
    assert w.config.n_features == 16
    w.undo()
    assert w.config.n_features == 64 and c.n_features.value() == 64
    show(qtbot, w, AttentionConfig())

    _slide(c.global_tokens, 2)
    assert w.config.global_tokens == 2
    w.undo()
    assert w.config.global_tokens == 0 and c.global_tokens.value() == 0

    c.summary_on.click()
    assert w.config.summary_block is not None
    _slide(c.summary_block, 3)
    assert w.config.summary_block == 3
    while w.config.summary_block is not None:
        w.undo()
    assert w.config == AttentionConfig() and not c.summary_on.isChecked()


def test_invalid_combinations_are_refused_in_one_line(qtbot, w):
    c = w.controls
    seen = _messages(w)
    show(qtbot, w, AttentionConfig(summary_block=2))
    c.window_on.click()  # hierarchical attention has no window
    assert w.config.window is None and not c.window_on.isChecked()
    assert seen and "sliding window" in seen[-1] and "\n" not in seen[-1]
    _slide(c.global_tokens, 2)
    assert w.config.global_tokens == 0 and "global tokens" in seen[-1]
    # the kernel combo offers only softmax while block summaries are on; a request says why
    assert not c.kernel.model().item(c.kernel.findData("linear")).isEnabled()
    c.kernel.setCurrentIndex(c.kernel.findData("linear"))
    c.kernel.activated.emit(c.kernel.currentIndex())
    assert w.config.kernel == "softmax" and "softmax kernel" in seen[-1]
    show(qtbot, w, AttentionConfig(kernel="linear"))
    assert not c.positional.model().item(c.positional.findData("alibi")).isEnabled()
    c.positional.setCurrentIndex(c.positional.findData("alibi"))
    c.positional.activated.emit(c.positional.currentIndex())
    assert w.config.positional == "none" and "ALiBi" in seen[-1]


def _shown(qtbot, w, cfg):
    show(qtbot, w, cfg)
    w.show_panel("efficient")
    panel = w.panel("efficient")
    qtbot.waitUntil(lambda: "computing" not in plot_title(panel.variant.item)
                    and panel.frame is not None and panel.frame.config == cfg
                    and plain(panel.readout.text) != "", timeout=TIMEOUT)
    return panel


def test_panel_reads_the_report_of_a_linear_config(qtbot, w, tmp_path):
    cfg = AttentionConfig(kernel="linear", seq_len=12, causal=True)
    cards: list[str] = []  # the backends card as the frame arrives (before the others are measured)
    record = lambda c: cards.append(w.panel("diagnostics").backend_card.text()) if c == cfg else None  # noqa: E731
    w.frame_rendered.connect(record)
    try:
        panel = _shown(qtbot, w, cfg)
    finally:
        w.frame_rendered.disconnect(record)
    rep = engine.approximation_report(cfg)
    text = plain(panel.readout.text)
    assert f"= {rep.output_rel_error:.4f}" in text
    assert f"= {rep.weights_tv:.4f}" in text
    assert "linear (elu + 1)" in plot_title(panel.variant.item)
    assert "full softmax" in plot_title(panel.full.item)
    # the variant's and full softmax's weights share one colour scale; the difference is theirs
    assert panel.variant.levels == panel.full.levels
    d = panel.diff.data
    largest = float(np.abs(d[np.isfinite(d)]).max())
    assert largest > 0 and abs(largest - float(plot_title(panel.diff.item).split()[-1])) < 1e-3 * largest + 1e-3
    assert "this config: S = 12, linear" in plain(panel.legend.text)
    # the backends card times the variant's pass like any backend's (it read "nan ms")
    for card in [*cards, w.panel("diagnostics").backend_card.text()]:
        row = next(line for line in card.splitlines() if line.startswith("eager ◀"))
        assert row.startswith("eager ◀\tlinear:") and row.endswith(" ms") and "nan" not in card, card
    paths = w.export_figures(tmp_path, panels=["efficient"], formats=("png",))
    assert [p.name for p in paths] == ["efficient.png"]
    img = QImage(str(paths[0]))
    assert not img.isNull() and img.width() > 500


def test_full_softmax_has_nothing_to_compare(qtbot, w):
    panel = _shown(qtbot, w, AttentionConfig(seq_len=6))
    text = plain(panel.readout.text)
    assert "Nothing to compare" in text and "output error 0" in text
    assert float(np.nanmax(np.abs(panel.diff.data))) == 0.0  # (holes: cells masked in both)
