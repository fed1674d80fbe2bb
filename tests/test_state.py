"""The application state (issue 26): one AppState per window that panels and features are
built from, with one change signal per field that fires only on a real change."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from conftest import shown_window

from engine import AttentionConfig
from explorer.figures.themes import DARK, LIGHT


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        w.render_sync()
        yield w


def _recorder(signal) -> list:
    got: list = []
    signal.connect(lambda *args: got.append(args[0] if args else None))
    return got


@pytest.mark.slow
def test_every_panel_and_feature_reads_the_one_state(win):
    state = win.state
    for name in win.panel_names():
        assert win.panel(name).app_state is state, name
    assert win.selection is state.selection and win.model_controller is state.models
    assert win.snapshots is state.snapshots and win.training_lab is state.training_lab
    assert set(win.features) == {"export", "models", "training", "profile", "animation", "snapshots", "compare"}


@pytest.mark.slow
def test_each_field_signals_once_per_real_change(win, qapp):
    state = win.state
    configs, refs, themes, lessons = (_recorder(state.config_changed), _recorder(state.reference_changed),
                                      _recorder(state.theme_changed), _recorder(state.lesson_changed))
    cfg = AttentionConfig(seed=7)
    win.render_sync(cfg)
    win.render_sync(cfg)  # the same config again: no signal
    assert configs == [cfg] and state.config == cfg
    frame = win.pin_reference()
    assert refs == [frame] and state.reference is frame
    win.clear_reference()
    assert refs == [frame, None]
    win.apply_theme(LIGHT)
    win.apply_theme(LIGHT)
    win.apply_theme(DARK)
    assert themes == [LIGHT, DARK]
    panel = win.show_lessons(2)
    assert state.lesson == panel.chapter().key and lessons == [state.lesson]
    win.dock("lesson").close()
    qapp.processEvents()
    assert state.lesson is None and lessons[-1] is None
    win.render_sync(AttentionConfig())


def test_a_panel_asks_the_state_for_a_config_and_the_window_shows_it(win, qtbot):
    target = AttentionConfig(seed=11)
    with qtbot.waitSignal(win.frame_rendered, timeout=30_000, check_params_cb=lambda c: c == target):
        win.panel("qkv").app_state.request_config(target)
    assert win.config == target
    win.undo()  # an undoable step like a slider's
    assert win.config != target
    win.render_sync(AttentionConfig())


def test_a_figure_gets_the_window_data_and_a_hover_link_of_its_own(win):
    state = win.state
    fig = state.for_figure()
    assert fig is not state and fig.selection is state.selection and fig.hover is not state.hover
    assert (fig.config, fig.reference, fig.theme, fig.training_lab, fig.models) == \
        (state.config, state.reference, state.theme, state.training_lab, state.models)
