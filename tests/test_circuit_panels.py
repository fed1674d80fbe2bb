"""The circuits panels in a window (issue 29, window half): circuits and logit_lens.

One window per module opens a training-lab run trained until its induction milestone (the
lab's default config: a previous-token head in layer 0, induction heads in layer 1), so what
the panels show can be checked against the engine's numbers and against the circuit the lab
knows. The last test opens the MiniLM encoder in the same window: no logit lens there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("transformers")

from PySide6.QtGui import QImage

import main
from explorer.export.cli import export_command
from explorer.figures.text import plot_title as html_title

try:
    from conftest import model_window
    from models_fixtures import induction_run_path, minilm_folder, run_folder, settle_analyses
except ImportError:  # tests/ imported as a package
    from tests.conftest import model_window
    from tests.models_fixtures import induction_run_path, minilm_folder, run_folder, settle_analyses

__all__ = ["induction_run_path", "run_folder"]  # fixtures

TIMEOUT_S = 120
TEXT = "ABCDEFGHIJ ABCDEFGHI"  # <bos> + 10 symbols + the first 9 again: induction predicts J


@pytest.fixture(scope="module")
def window(qapp, run_folder):
    with model_window(qapp, run_folder, TEXT, TIMEOUT_S) as w:
        yield w


def settle(qapp, window, timeout_s: float = TIMEOUT_S) -> None:
    settle_analyses(qapp, window, timeout_s)


def front(qapp, window, name: str):
    """Bring panel `name`'s tab to the front and wait for what it computes."""
    window.dock(name).raise_()
    qapp.processEvents()
    settle(qapp, window)
    return window.panel(name)


def plot_title(plot) -> str:
    """A plot's title as read (markup dropped)."""
    return re.sub(r"<[^>]+>", "", html_title(plot))


def non_blank(path: Path) -> bool:
    img = QImage(str(path))
    assert not img.isNull(), path
    small = img.scaled(64, 40)
    colours = {small.pixel(x, y) for x in range(64) for y in range(40)}
    return len(colours) > 20


# ---- docks -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_model_docks_the_circuits_panels_behind_the_grid_and_head(window):
    names = window.panel_names()
    for name in ("circuits", "logit_lens"):
        assert name in names
        assert window.panel(name).requires_model
        assert f"act_view_{name}" in {a.objectName() for a in window.menus["view"].actions()}
    # model_grid and model_head stay in front; the circuits panels wait in tabs beside them
    assert window.panel("model_grid").isVisible() and window.panel("model_head").isVisible()
    assert window.tabifiedDockWidgets(window.dock("model_grid")).count(window.dock("circuits")) == 1
    assert window.tabifiedDockWidgets(window.dock("model_head")).count(window.dock("logit_lens")) == 1


# ---- circuits --------------------------------------------------------------------------------


@pytest.mark.slow
def test_circuits_grid_shows_the_engine_scores_and_names_the_induction_heads(qapp, window):
    panel = front(qapp, window, "circuits")
    model = window.model_controller.loaded
    scores = model.all_head_scores()
    assert panel.detector.currentData() == "induction"
    assert np.allclose(panel.grid.data, scores["induction"])
    assert plot_title(panel.grid.item).startswith("induction score of every head")
    assert panel.texts.texts()[1][0] == f"{scores['induction'][1, 0]:.2f}"
    # the lab's circuit: the induction heads are in layer 1, a previous-token head in layer 0
    assert scores["induction"][1].max() > 0.5 > scores["induction"][0].max()
    panel.detector.setCurrentIndex(panel.detector.findData("previous_token"))
    qapp.processEvents()
    assert np.allclose(panel.grid.data, scores["previous_token"])
    assert plot_title(panel.grid.item).startswith("previous token score")
    assert scores["previous_token"][0].max() > scores["previous_token"][1].max()
    # ranked: each layer's heads by the score, each cell naming its head
    panel.order.setCurrentIndex(1)
    qapp.processEvents()
    want = -np.sort(-scores["previous_token"], axis=1)
    assert np.allclose(panel.grid.data, want)
    best = int(np.argmax(scores["previous_token"][0]))
    assert panel.texts.texts()[0][0].startswith(f"h{best}\n")
    panel.order.setCurrentIndex(0)
    panel.detector.setCurrentIndex(panel.detector.findData("induction"))
    qapp.processEvents()


def test_clicking_a_head_selects_it_and_shows_its_circuits(qapp, window):
    panel = front(qapp, window, "circuits")
    panel._click(1, 1)
    settle(qapp, window)
    sel = window.model_selection
    assert (sel.layer, sel.head) == (1, 1)
    assert window.panel("model_grid").table.currentIndex().isValid()  # selected everywhere
    assert panel.grid._marker_spec == ("cell", 1, 1)
    want = window.model_controller.loaded.circuits(1, 1)
    _x, y = panel.qk_curve.getData()
    assert np.allclose(y, want.qk_singular) and np.allclose(panel.ov_curve.getData()[1], want.ov_singular)
    assert plot_title(panel.spectra).startswith("layer 1 · head 1: singular values of W_QK and W_OV")
    assert f"OV copying score {want.copying_score:.3g}" in panel.pairs.text
    assert f"{want.ov_pairs[0].row} → {want.ov_pairs[0].col}" in panel.pairs.text
    assert "induction" in panel.describe_cell(1, 1)


# ---- logit lens ------------------------------------------------------------------------------


def test_logit_lens_cells_are_the_engines_top_tokens(qapp, window):
    panel = front(qapp, window, "logit_lens")
    model = window.model_controller.loaded
    lens = model.logit_lens(TEXT, k=5)
    rows, S = lens.top_probs.shape[:2]
    assert rows == model.n_layers + 1
    assert np.allclose(panel.map.data, lens.top_probs[:, :, 0])
    texts = panel.texts.texts()
    assert texts[-1][S - 1] == lens.top_tokens[-1][S - 1][0] == "J"  # induction completes the copy
    # outlined: where the top token is the text's real next token (the output row: the copy)
    hits = {(r, p) for r, p in panel.hits.cells}
    for p in range(S - 1):
        assert ((rows - 1, p) in hits) == (lens.top_ids[-1, p, 0] == lens.token_ids[p + 1])
    assert {(rows - 1, p) for p in range(12, S - 1)} <= hits
    assert plot_title(panel.map.item).startswith("Logit lens · ")
    line = panel.describe_cell(rows - 1, 12)
    assert "top 5:" in line and "the real next token “C”" in line
    assert not panel.status.isVisible()


# ---- export ----------------------------------------------------------------------------------


def test_export_draws_the_circuits_panels_afresh(qapp, window, tmp_path):
    files = window.export_figures(tmp_path, panels=["circuits", "logit_lens"])
    assert [f.name for f in files] == ["circuits.png", "logit_lens.png"]
    assert all(non_blank(f) for f in files)


@pytest.mark.slow
def test_export_command_draws_them_from_a_session(tmp_path, capsys, run_folder):
    session = tmp_path / "s.json"
    session.write_text(json.dumps({
        "format": "attention-explorer.session", "version": 1, "config": {},
        "selection": {"head": 0, "query": 0, "key": 0},
        "model": {"source": str(run_folder), "text": TEXT, "layer": 1, "head": 0}}))
    out = tmp_path / "figures"
    args = main.build_parser().parse_args(["export", "--out", str(out), "--session", str(session),
                                           "--panel", "circuits", "--panel", "logit_lens"])
    assert export_command(args) == 0, capsys.readouterr().err
    for name in ("circuits", "logit_lens"):
        assert non_blank(out / f"{name}.png")


# ---- an encoder (last: it replaces the module's model) ---------------------------------------


@pytest.mark.slow
def test_an_encoder_has_circuits_but_its_logit_lens_is_refused_in_one_line(qapp, window):
    try:
        folder = minilm_folder()
    except pytest.skip.Exception:
        raise
    c = window.model_controller
    c.load(str(folder))
    assert c.wait_ready(TIMEOUT_S) is None
    panel = front(qapp, window, "logit_lens")
    line = panel.status.text()
    assert panel.status.isVisible() and "\n" not in line
    assert line.startswith("No logit lens for") and "encoder" in line
    assert window.banner.kind != "error"
    circuits = front(qapp, window, "circuits")
    assert circuits.grid.data.shape == (6, 12)
    assert np.allclose(circuits.grid.data, c.loaded.all_head_scores()["induction"])
