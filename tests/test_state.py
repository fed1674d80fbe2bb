"""The application state (issue 26): one AppState per window that panels and features are
built from, with one change signal per field that fires only on a real change."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from conftest import shown_window

from engine import AttentionConfig
from explorer.figures.text import plot_title
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
    assert {"export", "models", "training", "profile", "animation", "snapshots", "compare"} <= set(win.features)


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


def test_a_panel_sets_a_config_on_the_state_and_the_window_shows_it(win, qtbot):
    target = AttentionConfig(seed=11)
    with qtbot.waitSignal(win.frame_rendered, timeout=30_000, check_params_cb=lambda c: c == target):
        win.panel("qkv").app_state.set_config(target)
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


# ---- the state owns (issue 44) ------------------------------------------------------------------

QT_BLOCKED = r"""
import sys, importlib.abc

class RefuseQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph", "superqt"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, RefuseQt())
from engine import AttentionConfig
from explorer.state import AppState, LessonProgress

state = AppState()
got = []
state.config_changed.connect(lambda new, old: got.append((new.seed, old.seed)))
state.selection.changed.connect(lambda: got.append("selection"))
state.set_config(AttentionConfig(seed=3))
state.set_config(AttentionConfig(seed=3))  # no change: no event

class Frame:  # what set_frame reads of a frame
    config = AttentionConfig(n_heads=2, d_model=16, seq_len=3)

state.selection.set_limits(4, 8, 8)
state.selection.set(head=3, query=5)
state.set_frame(Frame())  # a frame of another shape: the selection is clamped to it
state.set_lesson_progress(LessonProgress("scaling", started=True))
assert got == [(3, 0), "selection", "selection"], got
assert state.selection.as_dict() == {"head": 1, "query": 2, "key": 0}, state.selection.as_dict()
assert not any(m.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph") for m in sys.modules)
print("ok")
"""


def test_the_state_imports_and_emits_with_qt_blocked(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", QT_BLOCKED], capture_output=True, text=True, timeout=120,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_the_main_window_has_no_base_class_of_the_project():
    from explorer.window import MainWindow

    ours = [c.__name__ for c in MainWindow.__mro__[1:] if c.__module__.split(".")[0] == "explorer"]
    assert ours == []


def test_a_config_set_on_the_state_alone_is_followed_everywhere(win, qtbot):
    """The panels (titles, readouts), the controls (widget values), the status bar and the
    undo history follow a config set through `window.state` alone; Undo restores it."""
    base = AttentionConfig()
    win.render_sync(base)
    win.undo_stack.clear()  # (a step made less than MERGE_SECONDS ago would take this one in)
    before = win.undo_stack.count()
    target = base.replace(d_model=48, n_heads=3, causal=True, seq_len=6, scale=0.5)
    with qtbot.waitSignal(win.frame_rendered, timeout=30_000, check_params_cb=lambda c: c == target):
        win.state.set_config(target)
    # the controls show it
    assert win.controls.heads.currentData() == 3 and win.controls.d_model.value() == 48
    assert win.controls.causal.isChecked() and win.controls.seq_len.value() == 6
    # the status bar says it
    assert "heads=3" in win.status.status_config.text() and "causal" in win.status.status_config.text()
    # the panels draw it: the scores panel's title names the multiplier
    assert "×0.5" in plot_title(win.panel("scores").scaled.plot)
    # the undo history has the step, named after what changed, and Undo puts the config back
    assert win.undo_stack.count() == before + 1
    assert win.menus_feature.act_undo.text() == "&Undo 5 settings"
    with qtbot.waitSignal(win.frame_rendered, timeout=30_000, check_params_cb=lambda c: c == base):
        win.undo()
    assert win.state.config == base and win.controls.heads.currentData() == base.n_heads
    assert not win.controls.causal.isChecked()
    assert "causal" not in win.status.status_config.text() and f"heads={base.n_heads}" in win.status.status_config.text()
    assert "×0.5" not in plot_title(win.panel("scores").scaled.plot)


def test_a_hidden_panel_with_a_frame_of_fewer_heads_survives_a_theme_and_a_reference(win, qtbot):
    """The monkey's IndexError: a panel behind a closed dock keeps a frame of 1 head while
    the selection moves to head 2 of a new frame; a new theme or pinned A redrew the old
    frame with the new selection (softmax_grad.draw_selection, heads._draw_compared)."""
    one = AttentionConfig(n_heads=1, d_model=16)
    win.render_sync(one)
    dock = win.dock("softmax_grad")
    dock.close()
    four = AttentionConfig(n_heads=4, d_model=32)
    win.render_sync(four, all_panels=False)
    assert win.panel("softmax_grad").frame.config == one  # the closed panel kept the old frame
    win.selection.set(head=2, query=3)
    win.apply_theme(LIGHT)  # every panel redraws in the new theme
    win.pin_reference()
    win.apply_theme(DARK)
    win.clear_reference()
    win.show_panel("softmax_grad")  # opened again: drawn from the new frame, head 2 selected
    panel = win.panel("softmax_grad")
    assert panel.frame.config == four and win.selection.head == 2
    win.render_sync(AttentionConfig(n_heads=2, d_model=16))  # fewer heads: clamped before any panel draws
    assert win.selection.head == 1
    win.render_sync(AttentionConfig())


def test_a_panel_the_window_opened_closed_comes_drawn_from_the_state(qapp, qtbot):
    """Positions opens closed (made only when first shown): brought by View ▸ after a config,
    a theme and a selection changed while it was closed, it draws them all at once."""
    from conftest import panel_text
    from PySide6.QtGui import QColor

    cfg = AttentionConfig(positional="alibi", n_heads=4, d_model=32, seq_len=6)
    with shown_window(qapp) as w:  # (a window of its own: no earlier test has made the panel)
        w.render_sync(cfg)
        w.selection.set(head=3)
        w.apply_theme(LIGHT)
        view = {a.objectName(): a for a in w.menus["view"].actions()}
        view["act_view_positions"].trigger()
        panel = w.panel("positions")
        assert panel.isVisible() and not panel.visibleRegion().isEmpty()
        assert panel.frame.config == cfg
        assert "ALiBi bias of head 3 · 6×6" in panel_text(panel)
        assert panel.graphics.backgroundBrush().color() == QColor(LIGHT.background)
        ticks = panel.curve_plot.getAxis("bottom").textPen().color()  # the tick labels' ink
        assert ticks == QColor(LIGHT.foreground) != QColor(DARK.foreground)


def test_undo_never_leaves_a_false_check(win, qtbot):
    """Lesson 2 → Do it for me (✓) → Next → lesson 3 Apply preset → Edit ▸ Undo: lesson 3
    showed ✓ "2.38 at the preset → 1.79 now" though scaling was never turned off; a lesson's
    progress is state that undo restores with the config."""
    from PySide6.QtCore import Qt

    def shows(cfg) -> None:
        qtbot.waitUntil(lambda: win.frame is not None and win.frame.config == cfg == win.config, timeout=30_000)

    lesson = win.show_lessons(1)
    ch2 = lesson.chapter()
    qtbot.mouseClick(lesson.do_button, Qt.MouseButton.LeftButton)
    shows(ch2.try_config)
    qtbot.waitUntil(lambda: lesson.try_holds is True, timeout=30_000)
    qtbot.mouseClick(lesson.next_button, Qt.MouseButton.LeftButton)
    ch3 = lesson.chapter()
    assert ch3 is not ch2 and not lesson.check_label.isVisible()
    qtbot.mouseClick(lesson.apply_button, Qt.MouseButton.LeftButton)
    shows(ch3.config)
    assert not lesson.check_label.isVisible()
    win.undo()  # back to lesson 2's changed config: lesson 3's task never started there
    shows(ch2.try_config)
    qtbot.waitUntil(lambda: "…" not in lesson.metric_label.text(), timeout=30_000)  # the metric computed
    assert lesson.try_holds is not True and not lesson.check_label.isVisible()
    assert "at the preset →" not in lesson.metric_label.text()
    win.redo()  # the preset again: started, nothing changed yet
    shows(ch3.config)
    assert not lesson.check_label.isVisible()
    win.undo()
    win.undo()  # before lesson 2's change too
    assert not lesson.check_label.isVisible()
    win.redo()
    win.redo()
    shows(ch3.config)
    assert not lesson.check_label.isVisible()
    # the task done for real still earns its ✓
    qtbot.mouseClick(lesson.do_button, Qt.MouseButton.LeftButton)
    shows(ch3.try_config)
    qtbot.waitUntil(lambda: lesson.try_holds is True, timeout=30_000)
    assert lesson.check_label.isVisible()
    win.dock("lesson").close()
    win.render_sync(AttentionConfig())


def test_the_theme_reaches_the_panels_through_the_state_shown_ones_at_once(win, qtbot):
    """issue 44: the window pushed a theme to every panel (hidden ones too: ~6 s for Dark
    theme); a panel follows `state.theme_changed` itself, and one behind a closed dock takes
    the theme when it is shown again."""
    from PySide6.QtGui import QColor

    win.render_sync(AttentionConfig())
    win.dock("softmax_grad").close()
    try:
        win.state.set_theme(LIGHT)  # the state alone: no window method
        assert win.panel("heads").graphics.backgroundBrush().color() == QColor(LIGHT.background)
        win.show_panel("softmax_grad")
        qtbot.waitUntil(lambda: win.panel("softmax_grad").isVisible(), timeout=5000)
        assert win.panel("softmax_grad").graphics.backgroundBrush().color() == QColor(LIGHT.background)
        win.dock("softmax_grad").close()
        win.state.set_theme(DARK)
        win.show_panel("softmax_grad")
        qtbot.waitUntil(lambda: win.panel("softmax_grad").isVisible(), timeout=5000)
        assert win.panel("softmax_grad").graphics.backgroundBrush().color() == QColor(DARK.background)
        assert win.panel("heads").graphics.backgroundBrush().color() == QColor(DARK.background)
    finally:
        win.state.set_theme(DARK)
        win.show_panel("softmax_grad")
