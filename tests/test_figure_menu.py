"""A right click on any plot opens the app's menu (Copy as image, Export…, Reset view), never
pyqtgraph's own (its scene "Export…" raised AttributeError 'contextMenuItem'; its ViewBox menu
set log scales and ranges behind the panel's back; its colour-bar menu recoloured figures)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg
from conftest import drawn_window
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QDialog, QMenu

APP_MENU = ["Copy as image", "Export…", "Reset view"]


@pytest.fixture(scope="module")
def win(qapp):
    with drawn_window(qapp) as w:
        from explorer.training import show_training

        show_training(w)
        w.add_panel("lesson")
        qapp.processEvents()
        yield w


def _targets(panel) -> list:
    """Every view box, plot and colour bar of the panel's scene with a visible area."""
    kinds = (pg.ViewBox, pg.PlotItem, pg.ColorBarItem, pg.AxisItem)
    return [it for it in panel.graphics.scene().items()
            if isinstance(it, kinds) and it.isVisible() and it.sceneBoundingRect().width() > 4
            and it.sceneBoundingRect().height() > 4]


def _right_click(qtbot, panel, item) -> None:
    view = panel.graphics
    pt = view.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.RightButton, pos=QPoint(pt.x(), pt.y()))


def _texts(menu: QMenu) -> list[str]:
    return [a.text() for a in menu.actions() if not a.isSeparator()]


def test_no_pyqtgraph_action_is_left_in_the_window(win):
    """pyqtgraph's scene action ("Export...") is gone: nothing in the window can trigger it."""
    texts = {a.text() for a in win.findChildren(QAction)}
    assert "Export..." not in texts


def test_right_click_on_every_plot_opens_the_apps_menu(win, qtbot, qapp, capfd):
    checked = 0
    for name in win.panel_names():
        win.show_panel(name)
        qapp.processEvents()
        panel = win.panel(name)
        for item in _targets(panel):
            menu = panel.figure_menu.last_menu
            if menu is not None:
                menu.hide()
            _right_click(qtbot, panel, item)
            menu = panel.figure_menu.last_menu
            assert menu is not None and menu.isVisible(), f"{name}: no menu for {type(item).__name__}"
            assert _texts(menu) == APP_MENU, f"{name}: {_texts(menu)}"
            # no other (pyqtgraph) menu opened beside it
            popups = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible()]
            assert popups == [menu], [p.title() for p in popups]
            menu.hide()
            checked += 1
    assert checked >= 20, checked
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error sending click event" not in err, err


def test_menu_entries_do_what_they_say(win, qtbot, qapp, capfd):
    win.show_panel("heads")
    qapp.processEvents()
    panel = win.panel("heads")
    hm = panel.heatmaps()[0]
    rows, cols = hm.shape
    hm.vb.setRange(xRange=(0, cols / 3), yRange=(0, rows / 3), padding=0)
    assert hm.zoomed()
    menu = panel.figure_menu.popup(QPoint(10, 10))
    by_text = {a.text(): a for a in menu.actions()}
    by_text["Reset view"].trigger()
    assert not hm.zoomed()

    QApplication.clipboard().clear()
    menu = panel.figure_menu.popup(QPoint(10, 10))
    {a.text(): a for a in menu.actions()}["Copy as image"].trigger()
    assert not QApplication.clipboard().image().isNull()

    menu = panel.figure_menu.popup(QPoint(10, 10))
    {a.text(): a for a in menu.actions()}["Export…"].trigger()
    qapp.processEvents()
    dialogs = [d for d in win.findChildren(QDialog) if d.isVisible()]
    assert len(dialogs) == 1 and dialogs[0].windowTitle() == "Export figure"
    assert dialogs[0].panel_combo.currentData() == "heads"
    dialogs[0].reject()
    menu.hide()
    err = capfd.readouterr().err
    assert "Traceback" not in err, err


def test_a_selection_change_after_a_reset_forgot_the_scale_draws(win, qapp, capfd):
    """File ▸ Reset forgets every panel's colour scale before the new frame arrives; a selection
    change in between drew the heads panel with no scale (TypeError, found by the monkey)."""
    win.show_panel("heads")
    qapp.processEvents()
    panel = win.panel("heads")
    sel = panel.selection
    panel.reset_view()
    sel.set(query=(sel.query + 1) % max(2, panel.frame.config.seq_len))
    qapp.processEvents()
    lo, hi = panel.big.levels
    assert hi > lo
    err = capfd.readouterr().err
    assert "Traceback" not in err, err
