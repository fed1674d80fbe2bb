"""The window holds still and answers: banners one line high for one line, shortcuts that
work whatever field has the focus, controls that do not move under the mouse."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from conftest import drawn_window, shown_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QDockWidget, QLineEdit, QPlainTextEdit, QWidget

from engine import AttentionConfig


@pytest.fixture(scope="module")
def win(qapp):
    with drawn_window(qapp) as w:
        yield w


@pytest.mark.slow
def test_a_one_line_banner_is_one_line_high(win, qapp):
    win.banner.show_message("The engine refused this configuration: d_model must be divisible by n_heads")
    for _ in range(3):
        qapp.processEvents()
    line = win.banner.text.fontMetrics().lineSpacing()
    try:
        assert win.banner_bar.isVisible()
        assert win.banner.height() <= 2 * line + 16, f"{win.banner.height()} px for one line of {line} px"
        win.banner.show_message("a long explanation " * 60)
        for _ in range(3):
            qapp.processEvents()
        lines = win.banner.text.height() / line
        assert 2 <= lines <= 6, "a long message wraps to the lines it needs"
    finally:
        win.banner.hide_message()


def _fires(qapp, action: QAction, target: QWidget) -> bool:
    hits: list[int] = []
    slot = lambda *_: hits.append(1)  # noqa: E731
    action.triggered.connect(slot)
    try:
        target.setFocus()
        qapp.processEvents()
        combo = action.shortcut()[0]
        QTest.keyClick(qapp.focusWidget() or target, combo.key(), combo.keyboardModifiers())
        qapp.processEvents()
    finally:
        action.triggered.disconnect(slot)
    return bool(hits)


@pytest.mark.slow
def test_shortcuts_work_while_a_field_has_the_focus(win, qapp):
    spin = win.controls.findChildren(QAbstractSpinBox)[0]
    edit = next(e for e in win.controls.findChildren(QLineEdit) if not isinstance(e.parent(), QAbstractSpinBox))
    dock = QDockWidget("notes", win)
    text = QPlainTextEdit()
    dock.setWidget(text)
    win.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    dock.setFloating(True)
    dock.show()
    qapp.processEvents()
    actions = {a.shortcut().toString(): a for a in win.findChildren(QAction) if not a.shortcut().isEmpty()}
    try:
        for key in ("Ctrl+T", "Ctrl+L", "Ctrl+R", "Ctrl+1"):
            for target in (spin, edit, text):
                assert _fires(qapp, actions[key], target), f"{key} did nothing with {type(target).__name__} focused"
    finally:
        dock.close()
        dock.deleteLater()
        from explorer.figures.themes import DARK

        win.apply_theme(DARK)
        win.set_config(AttentionConfig())


def test_controls_hold_still_when_the_group_map_changes(win, qapp):
    """The rows under the KV-group map stay put whatever the map says (they jumped by a
    line under the mouse), and the map is never cut."""
    below = win.controls.head_dim
    where = []
    try:
        for cfg in (AttentionConfig(n_heads=1, d_model=64), AttentionConfig(n_heads=16, n_kv_heads=16, d_model=64),
                    AttentionConfig(n_heads=16, n_kv_heads=4, d_model=64), AttentionConfig(n_heads=8, n_kv_heads=1)):
            win.set_config(cfg)
            qapp.processEvents()
            where.append(below.mapTo(win, below.rect().topLeft()).y())
            label = win.controls.group_map
            assert label.heightForWidth(label.width()) <= label.height(), f"the group map of {cfg} is cut"
    finally:
        win.set_config(AttentionConfig())
    assert len(set(where)) == 1, f"the head_dim row moved: {where}"


def test_the_window_opens_to_fit_the_screen():
    from PySide6.QtCore import QRect

    from explorer.window import MainWindow

    assert MainWindow.opening_size(QRect(0, 0, 1366, 728)) == (1326, 668)
    assert MainWindow.opening_size(QRect(0, 0, 2560, 1400)) == (1600, 1000)


@pytest.mark.slow
def test_the_lessons_dock_leaves_the_panels_readable(qapp):
    """Opening the lessons puts them under the configuration: the scores and softmax
    gradient panels keep most of their width (beside it they were squeezed to ~60 %)."""
    with shown_window(qapp) as w:
        w.render_sync()
        qapp.processEvents()
        before = {n: w.panel(n).width() for n in ("scores", "softmax_grad", "heads")}
        w.show_lessons(0)
        for _ in range(5):
            qapp.processEvents()
        for n, width in before.items():
            assert w.panel(n).width() >= 0.9 * width, f"{n}: {w.panel(n).width()} px of {width}"
            assert w.panel(n).height() >= 200


@pytest.mark.slow
def test_dock_widths_do_not_follow_the_numerics_text(qapp):
    """A long Numerics explanation (NaN rows, float16 overflow) wraps inside its card; the
    diagnostics dock does not widen and squeeze its neighbours."""
    with shown_window(qapp) as w:
        w.resize(1150, 800)
        w.render_sync()
        for _ in range(3):
            qapp.processEvents()
        before = {n: w.panel(n).width() for n in w.panel_names()}
        w.render_sync(AttentionConfig(dtype="float16", init_std=2.0, d_model=256, pad=8))
        for _ in range(3):
            qapp.processEvents()
        assert "NaN" in w.panel("diagnostics").warn_card.text()
        assert {n: w.panel(n).width() for n in w.panel_names()} == before


@pytest.mark.slow
def test_chinese_dock_titles_are_tall_enough_for_their_glyphs(win, qapp):
    """In Chinese the dock titles are measured with the CJK font (its glyphs are taller):
    measured with the Latin one, "QKᵀ" lost the tail of its Q and "√d_k" its underscore."""
    from PySide6.QtGui import QFont, QFontMetrics

    from explorer import i18n

    families = i18n.install_fonts()
    if not families:
        pytest.skip("the bundled CJK font is missing")
    cjk = QFont(qapp.font())
    cjk.setFamilies(families[:1])
    need = QFontMetrics(cjk).height() + 8  # the style sheet's 4 px padding above and below
    assert win.set_language("zh_CN")
    try:
        qapp.processEvents()
        for name in ("heads", "scores", "softmax_grad"):
            dock = win.dock(name)
            assert dock.widget().y() >= need, f"{dock.windowTitle()!r}: title bar {dock.widget().y()} px < {need}"
        # the cards' cells too ("QKV 投影" read "OKV 投影": a height held from the Latin font)
        from PySide6.QtWidgets import QFrame, QLabel

        for card in win.panel("diagnostics").findChildren(QFrame, "card"):
            for label in card.findChildren(QLabel):
                if label.isVisible() and label.text():
                    assert label.height() >= label.fontMetrics().height(), f"{label.text()!r} is cut"
    finally:
        win.set_language("en")


def test_ctrl_n_brings_a_panel_behind_a_tab_forward_instead_of_closing_it(win, qapp):
    """issue 27: View ▸ <panel> (Ctrl+<n>) on a panel hidden behind another tab closed it; it
    comes to the front. Issue 44: on a panel in front it never closes it either (its dock's ×
    does)."""
    qkv = win.dock("qkv")
    positions = win.dock("positions")  # shares qkv's tab group, closed at first
    view = {a.objectName(): a for a in win.findChildren(QAction) if a.objectName().startswith("act_view_")}
    key = view["act_view_qkv"].shortcut().toString()
    try:
        view["act_view_positions"].trigger()  # View ▸ Positions: in front of qkv
        qapp.processEvents()
        assert not positions.isHidden() and qkv.widget().visibleRegion().isEmpty(), "qkv should be behind the tab"
        assert key.startswith("Ctrl+")
        view["act_view_qkv"].trigger()  # what Ctrl+<n> does
        qapp.processEvents()
        assert not qkv.isHidden(), "the panel behind the tab was closed"
        assert not qkv.widget().visibleRegion().isEmpty(), "the panel was not brought forward"
        view["act_view_qkv"].trigger()  # in front now: it stays
        qapp.processEvents()
        assert not qkv.isHidden() and view["act_view_qkv"].isChecked()
        qkv.close()  # the dock's ×: closed, and View's entry unticked
        qapp.processEvents()
        assert not view["act_view_qkv"].isChecked()
    finally:
        qkv.show()
        positions.close()
        qkv.raise_()
        qapp.processEvents()
