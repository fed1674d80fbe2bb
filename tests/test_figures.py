"""The figure layer: a figure is a fresh panel drawn from the window's state.

What a user sees: a panel exported from behind a dock tab shows the current
config (not an older one), an export leaves the window exactly as it was, the
window's File ▸ Export and the CLI give the same picture, and a figure's
texts lie inside it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from conftest import drawn_window
from PySide6.QtGui import QImage

from engine import AttentionConfig
from explorer.export import ExportOptions, export_panels, render_panel
from explorer.export.cli import export_command


def image_array(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    ptr = img.constBits()
    return np.frombuffer(ptr, np.uint8, img.sizeInBytes()).reshape(img.height(), img.bytesPerLine())[
        :, : img.width() * 4].reshape(img.height(), img.width(), 4)[..., :3].astype(np.int16)


def png(data: bytes) -> np.ndarray:
    return image_array(QImage.fromData(data))


def settled_picture(window, qapp, timeout_s: float = 10.0) -> np.ndarray:
    """The window's pixels once two grabs 0.2 s apart agree."""
    import time

    last = image_array(window.grab().toImage())
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for _ in range(4):
            qapp.processEvents()
            time.sleep(0.05)
        now = image_array(window.grab().toImage())
        if np.array_equal(now, last):
            return now
        last = now
    return last


@pytest.fixture()
def win(qapp):
    with drawn_window(qapp) as w:
        yield w


@pytest.fixture(scope="module")
def shared_win(qapp):
    """One window for the tests that put back the theme and language they change."""
    with drawn_window(qapp) as w:
        yield w


@pytest.mark.slow
def test_a_panel_behind_a_tab_exports_the_current_config(win, qapp):
    opts = ExportOptions(width=900)
    win.render_sync(AttentionConfig(seq_len=8))
    old = png(render_panel(win, "heads", "png", opts))
    # heads goes behind the qkv tab; the config changes while it is hidden
    win.tabifyDockWidget(win.dock("qkv"), win.dock("heads"))
    win.dock("qkv").raise_()
    qapp.processEvents()
    assert win.panel("heads").visibleRegion().isEmpty()
    win.render_sync(AttentionConfig(seq_len=11), all_panels=False)
    hidden = png(render_panel(win, "heads", "png", opts))
    # the same state, with the panel in front
    win.dock("heads").raise_()
    qapp.processEvents()
    shown = png(render_panel(win, "heads", "png", opts))
    assert hidden.shape == shown.shape and np.abs(hidden - shown).max() == 0
    assert hidden.shape != old.shape or np.abs(hidden - old).mean() > 1, "the hidden panel exported a stale frame"


@pytest.mark.slow
def test_all_panels_export_hidden_ones_too(win, qapp, tmp_path):
    win.dock("softmax_grad").close()
    qapp.processEvents()
    written = export_panels(win, tmp_path, None, ["png"], ExportOptions(width=640))
    assert sorted(p.name for p in written) == sorted(f"{n}.png" for n in
                                                     ("heads", "qkv", "scores", "softmax_grad", "diagnostics",
                                                      "positions", "tiling", "efficient", "decode", "qk_space"))
    assert not win.dock("softmax_grad").isVisible(), "the export must not reopen a closed panel"


@pytest.mark.slow
def test_exporting_leaves_the_window_as_it_was(win, qapp, tmp_path):
    win.render_sync(AttentionConfig(seq_len=9, causal=True))
    before = settled_picture(win, qapp)  # (the backend comparison arrives from the worker)
    sweep = win.panel("softmax_grad").sweep_legend
    legend_before = [label.text for _sample, label in sweep.items]
    sizes = {n: win.panel(n).size() for n in win.panel_names()}
    export_panels(win, tmp_path, None, ["png", "svg"], ExportOptions(width=1920, theme="slides"))
    qapp.processEvents()
    after = image_array(win.grab().toImage())
    assert [label.text for _sample, label in sweep.items] == legend_before
    assert legend_before and all(legend_before), "the √d_k sweep legend lost its text"
    assert {n: win.panel(n).size() for n in win.panel_names()} == sizes
    assert np.abs(after - before).max() == 0, "the export changed what the window shows"


@pytest.mark.slow
def test_the_window_and_the_cli_export_the_same_picture(win, qapp, tmp_path):
    from explorer.export.dialog import WHAT_PANEL, ExportRequest, run_export
    from explorer.session import save_session

    cfg = AttentionConfig(seq_len=10, n_heads=2, d_model=32, causal=True)
    win.render_sync(cfg)
    win.selection.set(head=1, query=3, key=2)
    qapp.processEvents()
    opts = ExportOptions(width=1280, theme="slides")
    gui = tmp_path / "gui.png"
    run_export(win, ExportRequest(WHAT_PANEL, "scores", "png", opts, gui))
    session = tmp_path / "s.json"
    save_session(session, cfg, win.selection.as_dict())
    out = tmp_path / "cli"
    import main

    args = main.build_parser().parse_args(["export", "--out", str(out), "--panel", "scores",
                                           "--width", "1280", "--format", "png", "--session", str(session)])
    assert export_command(args) == 0
    a, b = png(gui.read_bytes()), png((out / "scores.png").read_bytes())
    assert a.shape == b.shape
    assert np.abs(a - b).max() <= 8, "File ▸ Export and the CLI drew different pictures"


@pytest.mark.slow
@pytest.mark.parametrize(("theme", "lang", "dark"), [("slides", "en", True), ("screen", "en", True),
                                                    ("screen", "en", False), ("slides", "zh_CN", True),
                                                    ("screen", "zh_CN", False)])
def test_figure_texts_lie_inside_the_figure(shared_win, qapp, theme, lang, dark):
    """Every title, readout and line label of every panel figure is inside its view and
    overlaps no other text."""
    from explorer.export import fresh_panel
    from explorer.figures.layout import text_boxes
    from explorer.figures.themes import DARK, LIGHT

    win = shared_win

    win.apply_theme(DARK if dark else LIGHT)
    assert win.set_language(lang)
    try:
        win.render_sync(replace(AttentionConfig(), tokens=tuple("the cat sat on the mat because it was tired .".split())))
        for name in win.panel_names():
            if not getattr(win.panel(name), "exportable", True):
                continue
            with fresh_panel(win, name, theme) as panel:
                for _view, boxes in text_boxes(panel):
                    for text, box, area in boxes:
                        inside = area.adjusted(-1, -1, 1, 1)
                        assert inside.contains(box), f"{name}: {text!r} at {box} is cut by {area}"
                    for i, (a, box_a, _) in enumerate(boxes):
                        for b, box_b, _ in boxes[i + 1:]:
                            common = box_a.intersected(box_b)
                            assert common.width() * common.height() <= 4, f"{name}: {a!r} overlaps {b!r}"
    finally:
        win.set_language("en")
        win.apply_theme(DARK)


@pytest.mark.slow
def test_cards_stay_readable_in_a_highlighted_dock_after_a_theme_switch(shared_win, qapp):
    """Lessons ▸ a chapter starring diagnostics, then the light theme: the Numerics, Cost
    and Backends cards keep a light background and dark text (they turned into black bars)."""
    win = shared_win
    from PySide6.QtWidgets import QFrame

    from explorer.figures.themes import DARK, LIGHT

    win.highlight_panels(["diagnostics"])
    win.apply_theme(LIGHT)
    try:
        win.render_sync()
        qapp.processEvents()
        cards = win.panel("diagnostics").findChildren(QFrame, "card")
        assert cards
        for card in cards:
            if not card.isVisible():
                continue
            pixels = image_array(card.grab().toImage())
            assert pixels.mean() > 200, "a card turned dark in the light theme"
            assert (pixels.sum(-1) < 300).mean() > 0.005, "a card's text vanished"
    finally:
        win.highlight_panels([])
        win.apply_theme(DARK)


@pytest.mark.slow
def test_tables_follow_the_theme_in_a_highlighted_dock(win, qapp):
    """The length profile's table, in a highlighted dock, after a switch to the light theme:
    its cells and headers are light with dark text (one table style for every table)."""
    from PySide6.QtWidgets import QTableView

    from explorer.figures.themes import DARK, LIGHT
    from explorer.profile import show_profile

    panel = show_profile(win)
    win.highlight_panels(["profile"])
    win.apply_theme(LIGHT)
    try:
        for _ in range(5):
            qapp.processEvents()
        table = panel.findChild(QTableView, "profile_table")
        assert table is not None and table.isVisible()
        pixels = image_array(table.grab().toImage())
        assert pixels.mean() > 200, "the table turned dark in the light theme"
        header = image_array(table.horizontalHeader().grab().toImage())
        assert header.mean() > 180 and (header.sum(-1) < 300).mean() > 0.005, "the header is dark or empty"
    finally:
        win.highlight_panels([])
        win.apply_theme(DARK)


@pytest.mark.slow
@pytest.mark.parametrize(("seq_len", "kv_len"), [(1, 16383), (16383, 1)])
def test_one_long_axis_exports_without_a_crash(tmp_path, seq_len, kv_len):
    """A 1 × 16383 attention (or 16383 × 1) used to kill `export` with SIGSEGV inside
    pyqtgraph's paint; now it draws, every axis labelled at a readable step."""
    import json
    import subprocess
    import sys

    session = tmp_path / "s.json"
    session.write_text(json.dumps({"format": "attention-explorer.session", "version": 1,
                                   "config": {"seq_len": seq_len, "kv_len": kv_len}}))
    out = tmp_path / "out"
    cmd = [sys.executable, "main.py", "export", "--out", str(out), "--panel", "heads", "--panel", "qkv",
           "--session", str(session), "--width", "800"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
                          cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 0, proc.stderr[-800:]
    assert (out / "heads.png").stat().st_size > 1000 and (out / "qkv.png").stat().st_size > 1000


@pytest.mark.slow
def test_export_figures_writes_every_panel_named_in_the_contract(win, qapp, tmp_path):
    """MainWindow.export_figures (docs/contract.md): every panel, in each format, at the width asked."""
    win.dock("qkv").close()
    qapp.processEvents()
    paths = win.export_figures(tmp_path / "figs", formats=("png", "svg"), width=1280)
    names = {p.name for p in paths}
    for n in ("heads", "qkv", "scores", "softmax_grad", "diagnostics"):
        assert {f"{n}.png", f"{n}.svg"} <= names
    assert QImage(str(tmp_path / "figs" / "qkv.png")).width() == 1280
    again = win.export_figures(tmp_path / "figs", panels=["heads"])  # a script re-runs: replaced
    assert [p.name for p in again] == ["heads.png"]


@pytest.mark.slow
def test_window_texts_lie_inside_their_plots(shared_win, qapp):
    """The same check on the window itself at 1600×1000: no title, readout or label cut by
    its plot or overlapping another (the KV-cache title squeezed its bars to nothing, the
    d_k line's label ran into the legend, the selected-cell label was cut at the top)."""
    win = shared_win
    from explorer.figures.layout import text_boxes

    for cfg in (AttentionConfig(tokens=tuple("the cat sat on the mat because it was tired".split()), causal=True),
                AttentionConfig(d_model=512, n_heads=2, seq_len=16, scale=1.0)):  # (d_k = 256: the right half)
        win.render_sync(cfg)
        win.selection.set(head=1, query=7, key=4)
        for _ in range(5):
            qapp.processEvents()
        for name in win.panel_names():
            for _view, boxes in text_boxes(win.panel(name)):
                for text, box, area in boxes:
                    assert area.adjusted(-1, -1, 1, 1).contains(box), f"{name}: {text!r} is cut"
                for i, (a, box_a, _) in enumerate(boxes):
                    for b, box_b, _ in boxes[i + 1:]:
                        common = box_a.intersected(box_b)
                        assert common.width() * common.height() <= 4, f"{name}: {a!r} overlaps {b!r}"


@pytest.mark.slow
def test_the_window_shows_every_text_a_fresh_paint_shows(win, qapp):
    """What the window shows of each text inside a plot (bar values, line labels) is what
    painting the same scene afresh shows: no text left blank by a stale cached picture (the
    KV-cache bar values stayed empty in the window, while exports showed them)."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPainter

    from explorer.figures.layout import text_boxes

    win.render_sync(AttentionConfig())
    settled_picture(win, qapp)
    for name in win.panel_names():
        for view, boxes in text_boxes(win.panel(name)):
            shown = image_array(view.grab().toImage())
            h, w = shown.shape[:2]
            img = QImage(w, h, QImage.Format.Format_RGB32)
            img.fill(view.backgroundBrush().color())
            painter = QPainter(img)
            view.scene().render(painter, QRectF(0, 0, w, h), view.mapToScene(view.viewport().rect()).boundingRect())
            painter.end()
            fresh = image_array(img)
            for text, box, area in boxes:
                if area == QRectF(view.rect()):
                    continue  # (a text outside the plots: axis titles, the plots' own titles)
                r = box.intersected(area).toAlignedRect()
                y0, y1, x0, x1 = max(r.top(), 0), min(r.bottom() + 1, h), max(r.left(), 0), min(r.right() + 1, w)
                if y1 - y0 < 3 or x1 - x0 < 3:
                    continue
                diff = np.abs(shown[y0:y1, x0:x1] - fresh[y0:y1, x0:x1]).mean()
                assert diff < 4, f"{name}: {text!r} differs from a fresh paint (mean |Δ| {diff:.1f})"


def test_a_card_note_keeps_its_place_until_it_needs_another_height(qtbot):
    """A wrapped note whose number changes every frame ("largest |Q·Kᵀ| = …") shows the new
    text without laying the card out again; a text that needs another line grows the card,
    and a narrower card wraps the note again."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QLabel

    from explorer.figures.cards import Card
    from explorer.figures.themes import DARK

    class Layouts(QObject):
        count = 0

        def eventFilter(self, obj, ev):
            if ev.type() == QEvent.Type.LayoutRequest:
                self.count += 1
            return False

    card = Card("Numerics")
    card.set_theme(DARK)
    qtbot.addWidget(card)
    card.resize(320, 120)
    card.set_rows([(["✓ no overflow"], "ok"), (["largest |Q·Kᵀ| = 11.41 (float32 max 3.4e+38)"], "note")])
    card.show()
    qtbot.waitExposed(card)

    def note() -> QLabel:
        return next(lb for lb in card.findChildren(QLabel) if lb.text().startswith("largest"))

    def show(text: str) -> None:
        card.set_rows([(["✓ no overflow"], "ok"), ([text], "note")])
        qtbot.wait(1)  # (the event loop: a posted relayout runs)

    show("largest |Q·Kᵀ| = 12.5 (float32 max 3.4e+38)")
    spy = Layouts()
    card.installEventFilter(spy)
    one_line = note().height()
    for k in range(5):
        show(f"largest |Q·Kᵀ| = {13.25 + k:.4g} (float32 max 3.4e+38)")
        assert note().text().startswith(f"largest |Q·Kᵀ| = {13.25 + k:.4g}")
    assert spy.count == 0 and note().height() == one_line
    long = "largest |Q·Kᵀ| = 14.1 (float32 max 3.4e+38): " + "a much longer explanation " * 4
    show(long)
    assert note().height() > one_line  # measured again: every line shows
    assert note().heightForWidth(note().width()) == note().height()
    grown = note().height()
    card.resize(200, card.height())
    qtbot.waitUntil(lambda: note().width() < 200)
    assert note().height() > grown and note().heightForWidth(note().width()) == note().height()
