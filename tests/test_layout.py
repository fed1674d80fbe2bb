"""The layout holds (issue 44, item 3): every panel a lesson names and every panel View brings
is in front at no less than its readable size at 1280×800, 1600×1000 and 1920×1080 and after
a resize cycle; View ▸ a panel never hides a visible one nor grows the window; View ▸ Reset layout brings the
default back; tab titles are never elided; the user's layout is remembered across runs and a
layout of another version is dropped, not forced. With a model open (lesson 11, a tiny saved
GPT-2), the training lab open, in English and Chinese at 1600×1000: no dock title, tab or
plot title of a panel in front is cut. Opening a model at 1280×800, in English and Chinese,
keeps the window's size, and the model grid is readable there (no text of its plot cut)."""

from __future__ import annotations

import pyqtgraph as pg
import pytest

pytest.importorskip("pytestqt")

from conftest import shown_window
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QAction, QFontMetrics, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QLabel,
    QStyle,
    QTabBar,
    QWidget,
)

from explorer.figures.layout import text_boxes
from explorer.figures.text import plot_title
from explorer.lessons import load_chapters
from explorer.panels.base import PANELS
from explorer.work.base import run_events_until

try:
    from models_fixtures import gpt2_path
except ImportError:  # tests/ imported as a package
    from tests.models_fixtures import gpt2_path

__all__ = ["gpt2_path"]  # (a fixture)

SIZES = [(1280, 800), (1600, 1000), (1920, 1080)]
#: the window resized as a user does: the left column must come back as it was
CYCLE = [(1600, 1000), (1280, 800), (1920, 1080), (1600, 1000)]


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        w.render_sync()
        yield w


def settle(seconds: float = 0.15) -> None:
    run_events_until(lambda: False, seconds)


def view_action(win, name: str) -> QAction:
    """View ▸ the panel's entry (found by the dock's title, as a user finds it)."""
    title = win.dock(name).windowTitle()
    menu = win.menuBar().findChild(type(win.menuBar().actions()[0].menu()), "menu_view")
    for a in menu.actions():
        if a.text().replace("&", "") == title:
            return a
    raise AssertionError(f"View has no entry {title!r}")


def too_small(win, name: str) -> str:
    panel, need = win.panel(name), win.readable_size(name)
    if not win.dock(name).isVisible() or panel.visibleRegion().isEmpty():
        return f"{name} not in front"
    if panel.width() < need.width() or panel.height() < need.height():
        return f"{name} {panel.width()}×{panel.height()} < {need.width()}×{need.height()}"
    return ""


def left_width(win) -> int:
    return win.controls_dock.width()


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_panel_view_brings_is_readable_and_hides_none(win, size):
    win.resize(*size)
    settle()
    problems = []
    for name in [n for n in win.panel_names() if not PANELS[n].requires_model]:
        visible_before = [n for n in win.panel_names() if win.dock(n).isVisible() and n != name]
        view_action(win, name).trigger()
        settle(0.05)
        if msg := too_small(win, name):
            problems.append(msg)
        if (win.width(), win.height()) != size:  # (past a laptop's screen: its status bar cut)
            problems.append(f"View ▸ {name} made the window {win.width()}×{win.height()}")
        hidden = [n for n in visible_before if not win.dock(n).isVisible()]
        if hidden:
            problems.append(f"View ▸ {name} hid {hidden}")
        # again, while it is in front: it stays (the toggle used to close it)
        view_action(win, name).trigger()
        settle(0.05)
        if not win.dock(name).isVisible():
            problems.append(f"View ▸ {name} a second time closed it")
    assert not problems, problems


@pytest.mark.slow
@pytest.mark.parametrize("size", [*SIZES, "cycle"], ids=lambda s: "after-cycle" if s == "cycle" else f"{s[0]}x{s[1]}")
def test_every_lesson_shows_its_panels_readable(win, size):
    if size == "cycle":
        for s in CYCLE:
            win.resize(*s)
            settle(0.05)
    else:
        win.resize(*size)
    settle()
    want = (win.width(), win.height())
    problems = []
    for i, ch in enumerate(load_chapters()):
        # (a chapter that needs a model or a trained run: test_lesson_layout opens those)
        names = [n for n in ch.panels if n in PANELS and not PANELS[n].requires_model and n != "training"]
        if not names or ch.needs is not None:
            continue
        win.show_lessons(i)
        settle()
        if (win.width(), win.height()) != want:  # (the panels it names fit the window as it is)
            problems.append(f"lesson {i + 1} made the window {win.width()}×{win.height()}")
        for n in names:
            if n not in win.panel_names():
                problems.append(f"lesson {i + 1}: no {n}")
                continue
            win.dock(n).raise_()  # two named panels may share a tab group: each in turn
            settle(0.05)
            if msg := too_small(win, n):
                problems.append(f"lesson {i + 1} at {win.width()}×{win.height()}: {msg}")
    win.dock("lesson").close()
    assert not problems, problems


@pytest.mark.slow
def test_lesson_10_leaves_tiling_s_small_plots_their_height_at_1280x800(win):
    """Lesson 10 on a 1280×800 laptop: tiling (over diagnostics) at its readable height, and its
    running max m, running sum ℓ, rescale and partial output each with a plot under its title
    (with four stacked plots under 30 px title rows they had 0–10 px)."""
    win.resize(1280, 800)
    settle()
    index = next(i for i, ch in enumerate(load_chapters()) if ch.key.startswith("10"))
    win.show_lessons(index)
    win.render_sync()
    settle(0.3)
    panel = win.panel("tiling")
    assert not too_small(win, "tiling") and not too_small(win, "diagnostics")
    heights = [round(p.vb.height()) for p in (panel.m_plot, panel.l_plot, panel.r_plot, panel.partial.item)]
    win.dock("lesson").close()
    assert min(heights) >= 13, heights


def test_a_resize_cycle_leaves_the_left_column_as_it_was(win):
    win.resize(1600, 1000)
    settle()
    reset = [a for a in win.findChildren(QAction) if a.objectName() == "act_reset_layout"]
    assert reset, "View ▸ Reset layout"
    reset[0].trigger()
    settle(0.3)
    before = left_width(win)
    for s in CYCLE:
        win.resize(*s)
        settle(0.1)
    assert abs(left_width(win) - before) <= 4, (before, left_width(win))
    assert before < 480


def test_reset_layout_brings_the_default_back(win):
    win.resize(1600, 1000)
    settle()
    reset = next(a for a in win.findChildren(QAction) if a.objectName() == "act_reset_layout")
    reset.trigger()
    settle(0.3)
    default = {n for n in win.panel_names() if win.dock(n).isVisible()}
    win.dock("heads").setFloating(True)
    win.dock("scores").close()
    win.show_panel("tiling")
    win.resizeDocks([win.dock("qkv")], [1100], Qt.Orientation.Horizontal)
    settle()
    reset.trigger()
    settle(0.3)
    assert {n for n in win.panel_names() if win.dock(n).isVisible()} == default
    assert not win.dock("heads").isFloating()
    assert not [m for n in default if (m := too_small(win, n))]


def test_tab_titles_are_whole_with_their_tooltip(win):
    win.show_panel("tiling")
    win.show_panel("decode")
    win.show_panel("positions")
    settle(0.2)
    bars = [b for b in win.findChildren(QTabBar) if b.parent() is win and b.count() > 1 and b.isVisible()]
    assert bars
    titles = {win.dock(n).windowTitle() for n in win.panel_names()}
    for bar in bars:
        assert bar.elideMode() == Qt.TextElideMode.ElideNone
        assert bar.usesScrollButtons()
        for i in range(bar.count()):
            assert bar.tabText(i) in titles and "…" not in bar.tabText(i)
            assert bar.tabToolTip(i) == bar.tabText(i)


def test_the_layout_is_remembered_and_an_old_one_dropped(qapp):
    import explorer
    from explorer.window import make_settings

    def window():
        w = explorer.create_window()
        w.resize(1600, 1000)
        w.show()
        settle(0.3)
        return w

    make_settings().clear()
    w = window()
    try:
        w.show_panel("tiling")
        w.dock("diagnostics").close()
        settle(0.2)
        old_version = w.saveState(12345)  # a layout another version of the app saved
    finally:
        w.close()  # saves the layout
        w.shutdown()
        w.deleteLater()
    w2 = window()
    try:
        assert w2.dock("tiling").isVisible() and not w2.dock("diagnostics").isVisible()
        assert not w2.dock_layout.restore(old_version)  # refused, nothing changed
        assert w2.dock("tiling").isVisible()
    finally:
        w2.close()
        w2.shutdown()
        w2.deleteLater()
    make_settings().setValue("window_state", old_version)
    w3 = window()
    try:  # an old layout in the settings: the default one, and the old one forgotten
        assert w3.dock("diagnostics").isVisible() and not w3.dock("tiling").isVisible()
    finally:
        w3.close()
        w3.shutdown()
        w3.deleteLater()
        make_settings().clear()


# ---- a model, the lab, Chinese: nothing cut ---------------------------------------------------

#: lesson 11 (index 10): a real model's heads, with the model panels beside
MODEL_LESSON = 10


@pytest.fixture(scope="module")
def model_win(qapp, gpt2_path):
    """A window at 1600×1000 with a tiny saved GPT-2 open, lesson 11 shown and the training
    lab open (one window for every language)."""
    with shown_window(qapp) as w:
        w.resize(1600, 1000)
        c = w.model_controller
        c.text = "the quick brown fox jumps over the lazy dog"
        c.load(str(gpt2_path))
        assert c.wait_ready(120) is None
        w.show_lessons(MODEL_LESSON)
        w.features["training"].action.trigger()
        settle(0.3)
        yield w
        w.set_language("en")


def cut_tabs(win) -> list[str]:
    """The window's dock tabs whose title is elided or wider than its tab."""
    out = []
    for bar in win.findChildren(QTabBar):
        if bar.parent() is not win or not bar.isVisible():
            continue
        fm = QFontMetrics(bar.font())
        for i in range(bar.count()):
            text = bar.tabText(i)
            if "…" in text or bar.tabRect(i).width() < fm.horizontalAdvance(text):
                out.append(f"tab {text!r} in {bar.tabRect(i).width()} px")
    return out


def cut_dock_titles(win) -> list[str]:
    """The visible docks whose title does not fit its title bar (Qt's elides it), beside the
    float and close buttons."""
    out = []
    for dock in win.findChildren(QDockWidget):
        if not dock.isVisible() or dock.visibleRegion().isEmpty():
            continue
        title = dock.windowTitle()
        buttons = [b for b in dock.findChildren(QAbstractButton) if b.parent() is dock and b.isVisible()]
        right = min((b.geometry().left() for b in buttons), default=dock.width())
        margin = dock.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetTitleMargin, None, dock)
        frame = dock.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetFrameWidth, None, dock) if dock.isFloating() else 0
        room = right - frame - 2 * margin
        if QFontMetrics(dock.font()).horizontalAdvance(title) > room:
            out.append(f"dock title {title!r} in {room} px")
    return out


def _plain(html: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html)
    return " ".join(doc.toPlainText().replace("\u00a0", " ").split())


def cut_plot_titles(win) -> list[str]:
    """The plot titles of the panels in front that do not fit inside their view."""
    out = []
    for name in win.panel_names():
        panel = win.panel(name)
        if not win.dock(name).isVisible() or panel.visibleRegion().isEmpty():
            continue
        for view, boxes in text_boxes(panel):
            titles = {_plain(plot_title(item)) for item in view.scene().items() if isinstance(item, pg.PlotItem)}
            titles.discard("")
            out += [f"{name}: title {text!r}" for text, box, area in boxes
                    if _plain(text) in titles and not area.adjusted(-1, -1, 1, 1).contains(box)]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_nothing_is_cut_with_a_model_and_the_lab_open(model_win, lang):
    win = model_win
    assert win.set_language(lang)
    settle(0.3)
    assert "lesson" in win.panel_names() and win.dock("lesson").isVisible()
    assert win.dock("training").isVisible(), "the training lab is open"
    model_tabs = [n for n in win.panel_names() if PANELS[n].requires_model]
    assert len(model_tabs) >= 4, model_tabs
    problems = cut_tabs(win) + cut_dock_titles(win)
    for name in model_tabs:  # each model panel in front in turn: its title bar and plot titles
        win.dock(name).raise_()
        # (drawn and laid out: a panel's first draw can hold the event loop past 50 ms, and a
        # title that wrapped onto a second line gets its row at the next layout pass)
        settle(0.3)
        problems += [p for p in cut_dock_titles(win) + cut_plot_titles(win) if p not in problems]
    assert not problems, f"at {win.width()}×{win.height()} in {lang}: {problems}"


def cut_texts(win, name: str) -> list[str]:
    """Every text drawn in panel `name`'s plots (titles, axis labels, ticks, legends) that is
    not whole inside the view or the plot that clips it."""
    return [f"{name}: {text!r} at {box.toRect().getRect()} outside {area.toRect().getRect()}"
            for _view, boxes in text_boxes(win.panel(name))
            for text, box, area in boxes if not area.adjusted(-1, -1, 1, 1).contains(box)]


def under_help(panel) -> str:
    """The panel's controls that its "?" (in its top-right corner) covers."""
    help_box = panel.help_button.geometry()
    covered = [w for w in panel.findChildren(QWidget)
               if isinstance(w, (QAbstractButton, QComboBox, QLabel, QAbstractSpinBox))
               and w is not panel.help_button and w.isVisible()
               and QRect(w.mapTo(panel, QPoint(0, 0)), w.size()).intersects(help_box)]
    return f"{panel.name}: '?' covers {[w.text() if hasattr(w, 'text') else type(w).__name__ for w in covered]}" \
        if covered else ""


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_opening_a_model_at_1280x800_keeps_the_window_s_size(qapp, gpt2_path, lang):
    """File ▸ Open model adds the model's docks: model_grid and model_head come forward at
    their readable size (the docks beside give way), the window stays at the user's 1280×800
    (it grew to 811 px in English, 835 in Chinese: past a laptop's screen), and the grid is
    readable: its header line not cut, every text of its plot whole, its thumbnails inside
    the plot; the panels' "?" covers none of their controls (it covered "model order" and
    "Clear")."""
    with shown_window(qapp) as w:
        try:
            assert w.set_language(lang)
            w.resize(1280, 800)
            settle()
            c = w.model_controller
            c.text = "the quick brown fox jumps over the lazy dog"
            c.load(str(gpt2_path))
            assert c.wait_ready(120) is None
            settle(0.3)
            problems = [f"the window is {w.width()}×{w.height()}"] if (w.width(), w.height()) != (1280, 800) else []
            problems += [msg for n in ("model_grid", "model_head") if (msg := too_small(w, n))]
            grid = w.panel("model_grid")
            problems += cut_texts(w, "model_grid")
            view = grid.graphics
            mosaic = view.mapFromScene(grid.image.sceneBoundingRect()).boundingRect()
            if not view.rect().contains(mosaic):
                problems.append(f"the thumbnails {mosaic.getRect()} outside the view {view.rect().getRect()}")
            problems += [msg for n in ("model_grid", "model_head") if (msg := under_help(w.panel(n)))]
            assert not problems, f"in {lang}: {problems}"
            # the grid's header line, wider than its room here: drawn with "…", whole in its tooltip
            info = grid.info
            assert info.toolTip() == info.text() and info.text().startswith("gpt2")
            assert QFontMetrics(info.font()).horizontalAdvance(info.text()) > info.width()
            image = info.grab().toImage()
            assert any(image.pixelColor(x, y) != image.pixelColor(0, 0)
                       for x in range(image.width()) for y in range(image.height())), "the header is drawn"
        finally:
            w.set_language("en")
