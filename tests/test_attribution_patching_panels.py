"""The attribution and patching panels in a window (issue 29, window half), and the engine's
corrupt_text that the patching panel's "Corrupt" button calls.

One window per module: first a tiny random pre-norm GPT-2 (models_fixtures.build_gpt2, with
MLPs), where the logit splits into heads, MLPs, embeddings and biases; then a training-lab
run trained until its induction milestone (post-norm: attribution refused; patching names the
induction heads of layer 1); last the MiniLM encoder, refused by both. What is checked is what
a user reads: titles, legends, the cells and bars, against the engine's own numbers.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("transformers")

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage

from engine.models import InspectError, load_model
from engine.models.patching import corrupt_text
from explorer.export.fresh import fresh_panel
from explorer.figures.text import plot_title as html_title
from explorer.panels.attribution import logit_text

try:
    from conftest import model_window
    from models_fixtures import (
        build_qwen2,
        gpt2_path,
        induction_run_path,
        minilm_folder,
        run_folder,
    )
except ImportError:  # tests/ imported as a package
    from tests.conftest import model_window
    from tests.models_fixtures import (
        build_qwen2,
        gpt2_path,
        induction_run_path,
        minilm_folder,
        run_folder,
    )

__all__ = ["gpt2_path", "induction_run_path", "run_folder"]  # fixtures

TIMEOUT_MS = 120_000
GPT2_TEXT = "the cat sat on the mat . the cat sat on"
RUN_TEXT = "ABCDEFGHIJ ABCDEFGHI"  # <bos> + 10 symbols + the first 9 again: induction predicts J


@pytest.fixture(scope="module")
def gpt2(gpt2_path):
    return load_model(gpt2_path)


@pytest.fixture(scope="module")
def window(qapp, gpt2_path):
    with model_window(qapp, gpt2_path, GPT2_TEXT, TIMEOUT_MS / 1000) as w:
        yield w


def idle(window) -> bool:
    from explorer.models.analyses import ANALYSIS_KINDS

    c = window.model_controller
    return not c.busy and all(c.analyses.pending(k) is None for k in ANALYSIS_KINDS)


def front(qtbot, window, name: str):
    """Bring panel `name`'s tab to the front and wait until nothing is computing."""
    window.dock(name).raise_()
    qtbot.waitUntil(lambda: idle(window), timeout=TIMEOUT_MS)
    return window.panel(name)


def load(qtbot, window, folder, text: str) -> None:
    c = window.model_controller
    c.text = text
    c.load(str(folder))
    assert c.wait_ready(TIMEOUT_MS / 1000) is None
    qtbot.waitUntil(lambda: idle(window), timeout=TIMEOUT_MS)


def read(plot) -> str:
    """A plot's title as read (markup dropped)."""
    return re.sub(r"<[^>]+>", "", html_title(plot))


def label(item) -> str:
    return re.sub(r"<[^>]+>", "", item.text).replace("&nbsp;", " ")


def non_blank(path) -> bool:
    img = QImage(str(path))
    assert not img.isNull(), path
    small = img.scaled(160, 100)  # (a bar chart on white has few colours: sampled finely)
    return len({small.pixel(x, y) for x in range(160) for y in range(100)}) > 40


def click_view(qtbot, panel, vb, x: float, y: float) -> None:
    """A left click where view point (x, y) of `vb` is on screen."""
    scene = vb.mapViewToScene(QPointF(x, y))
    pos = panel.graphics.mapFromScene(scene)
    qtbot.mouseClick(panel.graphics.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos.x(), pos.y()))


# ---- the engine: corrupt_text ----------------------------------------------------------------


def test_corrupt_text_swaps_the_first_half_and_keeps_the_token_length(gpt2, tmp_path):
    ids = gpt2.tokenize(GPT2_TEXT)[0]
    bad = corrupt_text(gpt2, GPT2_TEXT, seed=0)
    got = gpt2.tokenize(bad)[0]
    half = (len(ids) + 1) // 2
    assert len(got) == len(ids)
    assert got[half:] == ids[half:]  # the second half untouched
    assert all(a != b for a, b in zip(got[:half], ids[:half], strict=True))
    assert not set(got[:half]) & set(ids)  # no token of the clean text comes back
    assert corrupt_text(gpt2, GPT2_TEXT, seed=0) == bad  # a seed is one draw
    assert corrupt_text(gpt2, GPT2_TEXT, seed=1) != bad
    # a byte-level BPE (Qwen2's) keeps its words and spaces too
    qwen = load_model(build_qwen2(tmp_path / "qwen2"))
    text = "the cat sat on the mat"
    q_ids = qwen.tokenize(text)[0]
    q_bad = corrupt_text(qwen, text, seed=3)
    assert len(qwen.tokenize(q_bad)[0]) == len(q_ids) and q_bad.endswith(" the mat")
    with pytest.raises(InspectError, match=r"no tokens|type some text"):
        corrupt_text(gpt2, "")
    # a WordPiece tokenizer: a draw that retokenizes the kept half ("##meter" → "meter") is drawn again
    mini = load_model(minilm_folder())
    for text, seed in (("so the hyperparameterization works", 3), ("The tokenization of unbelievably long words", 4)):
        m_ids = mini.tokenize(text)[0]
        m_got = mini.tokenize(corrupt_text(mini, text, seed=seed))[0]
        keep = 1 + (len(m_ids) - 2 + 1) // 2  # [CLS], then the swapped half
        assert len(m_got) == len(m_ids) and m_got[keep:] == m_ids[keep:], text


@pytest.mark.slow
def test_corrupt_text_of_a_training_run_keeps_bos_and_words(run_folder):
    run = load_model(run_folder)
    bad = corrupt_text(run, RUN_TEXT, seed=0)
    tokens, clean = run.tokens_of(run.tokenize(bad)[0]), run.tokens_of(run.tokenize(RUN_TEXT)[0])
    assert len(tokens) == len(clean) == 20 and tokens[0] == "<bos>"
    assert tokens[11:] == clean[11:] and not set(tokens[1:11]) & set(clean)
    assert bad.endswith(" ABCDEFGHI") and len(bad.split()) == 2  # the words stay words
    long = " ".join("ABCDEFGHIJ"[i % 10] for i in range(43))  # longer than the run's seq_len
    n = len(run.tokenize(long)[0])
    assert len(run.tokenize(corrupt_text(run, long, seed=1))[0]) == n


# ---- docks -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_model_docks_both_panels_in_tabs_beside_the_circuits_panels(window):
    names = window.panel_names()
    for name, beside in (("attribution", "logit_lens"), ("patching", "circuits")):
        assert name in names and window.panel(name).requires_model
        assert f"act_view_{name}" in {a.objectName() for a in window.menus["view"].actions()}
        assert window.dock(name) in window.tabifiedDockWidgets(window.dock(beside))
    assert window.panel("model_grid").isVisible() and window.panel("model_head").isVisible()


# ---- attribution -----------------------------------------------------------------------------


@pytest.mark.slow
def test_attribution_bars_add_up_to_the_logit_of_the_next_token(qtbot, window, gpt2):
    sel = window.model_selection
    sel.set(query=3, layer=0, head=0)
    panel = front(qtbot, window, "attribution")
    want = gpt2.logit_attribution(GPT2_TEXT, "the", position=3)  # "on" → the real next token "the"
    title = read(panel.plot)
    assert title.startswith("Direct logit attribution of “the” at position 3 “on”")
    m = re.search(r"the bars sum to (-?[\d.]+), the model's logit is (-?[\d.]+)", title)
    assert m and m.group(1) == m.group(2), title  # the same to every printed digit
    assert float(m.group(2)) == pytest.approx(want.logit, rel=1e-3) and len(m.group(2)) >= 5
    assert want.total == pytest.approx(want.logit, abs=1e-4)
    L, H = want.heads.shape
    heads = [p for p in panel.parts if p.kind == "head"]
    assert len(panel.parts) == 1 + L * H + L + 1  # embeddings, the heads and MLP of each layer, biases
    assert np.allclose([p.value for p in heads], want.heads.reshape(-1))
    assert [p.value for p in panel.parts if p.kind == "mlp"] == pytest.approx(
        [want.parts[f"mlp {i}"] for i in range(L)])
    assert "Target: the text's real next token." in label(panel.legend)
    assert not panel.status.isVisible()
    # a head's bar: a click selects it in every model panel, its hover names it
    bar = next(i for i, p in enumerate(panel.parts) if (p.kind, p.layer, p.head) == ("head", 1, 2))
    q = panel.parts[bar]
    click_view(qtbot, panel, panel.plot.vb, q.x, q.value / 2)
    assert (sel.layer, sel.head) == (1, 2)
    qtbot.waitUntil(lambda: idle(window), timeout=TIMEOUT_MS)
    assert window.panel("circuits").selection is sel
    assert panel.describe_bar(bar).startswith(f"layer 1 · head 2: {q.value:+.4f} of the logit")
    # hovering a bar names it in the status bar
    emb = panel.parts[0]
    scene = panel.plot.vb.mapViewToScene(QPointF(emb.x, emb.value / 2))
    at = panel.graphics.mapFromScene(scene)
    qtbot.mouseMove(panel.graphics.viewport(), QPoint(at.x(), at.y()))
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("embeddings: "), timeout=5000)


def test_attribution_of_a_typed_target_and_of_the_models_prediction(qtbot, window, gpt2):
    panel = front(qtbot, window, "attribution")
    window.model_selection.set(query=2)
    panel.target.setText("dog")
    panel.target.editingFinished.emit()
    qtbot.waitUntil(lambda: idle(window) and read(panel.plot).startswith(
        "Direct logit attribution of “dog” at position 2"), timeout=TIMEOUT_MS)
    want = gpt2.logit_attribution(GPT2_TEXT, "dog", position=2)
    assert f"the model's logit is {logit_text(want.logit, want.logit)}" in read(panel.plot)
    assert "Target: the typed target." in label(panel.legend)
    # a word that is no token: the engine's one line, and nothing drawn
    panel.target.setText("zebra")
    panel.target.editingFinished.emit()
    qtbot.waitUntil(lambda: idle(window) and panel.status.isVisible(), timeout=TIMEOUT_MS)
    assert "not in this model's vocabulary" in panel.status.text() and "\n" not in panel.status.text()
    assert window.banner.kind != "error" and panel.parts == []
    # the last position has no next token: the model's own top prediction
    panel.target.clear()
    panel.target.editingFinished.emit()
    last = len(gpt2.tokenize(GPT2_TEXT)[0]) - 1
    window.model_selection.set(query=last)
    qtbot.waitUntil(lambda: idle(window) and f"at position {last} " in read(panel.plot), timeout=TIMEOUT_MS)
    top = gpt2.logit_lens(GPT2_TEXT, k=1).top_tokens[-1][last][0]
    assert read(panel.plot).startswith(f"Direct logit attribution of “{top}”")
    assert "the model's own top prediction" in label(panel.legend)


# ---- patching (the GPT-2: the estimate, corrupt, the length check) ---------------------------


def test_patching_corrupts_the_text_and_draws_the_estimate(qtbot, window, gpt2):
    panel = front(qtbot, window, "patching")
    assert panel.clean.text() == GPT2_TEXT  # the model's text
    bad = panel.corrupted.text()
    assert bad == corrupt_text(gpt2, GPT2_TEXT, seed=0)  # made at first sight
    assert panel.method.currentData() == "attribution"
    L, H = gpt2.n_layers, gpt2.n_heads
    S = len(gpt2.tokenize(GPT2_TEXT)[0])
    assert panel.heads.data.shape == (L, H) and panel.positions.data.shape == (L, S)
    answer = gpt2.logit_lens(GPT2_TEXT, k=1).top_tokens[-1][-1][0]
    est = gpt2.attribution_patching(GPT2_TEXT, bad, answer)
    assert np.allclose(panel.heads.data, est.effect, atol=1e-5)
    assert len(panel.head_texts.texts()) == L and len(panel.head_texts.texts()[0]) == H
    assert read(panel.heads.item).startswith("Each head patched · estimate")
    legend = label(panel.legend)
    assert f"logit({answer}) (the model's prediction)" in legend
    assert f"clean {est.clean_metric:.3f}, corrupted {est.corrupted_metric:.3f}" in legend
    assert "1 = the patch alone restores the clean metric" in legend
    assert "clean the cat sat" in label(panel.texts_label)
    # "Corrupt" again: another draw of the same length
    qtbot.mouseClick(panel.corrupt_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle(window) and panel.corrupted.text() not in ("", bad), timeout=TIMEOUT_MS)
    assert len(gpt2.tokenize(panel.corrupted.text())[0]) == S
    # a head's cell: a click selects it
    click_view(qtbot, panel, panel.heads.vb, 3, 1)
    assert (window.model_selection.layer, window.model_selection.head) == (1, 3)
    assert panel.heads._marker_spec == ("cell", 1, 3)


def test_patching_refuses_a_corrupted_text_of_another_length_in_one_line(qtbot, window):
    panel = front(qtbot, window, "patching")
    panel.corrupted.setText("the dog sat")
    panel.corrupted.editingFinished.emit()
    qtbot.waitUntil(lambda: idle(window) and panel.status.isVisible(), timeout=TIMEOUT_MS)
    line = panel.status.text()
    assert "\n" not in line and "patching needs texts of the same token length" in line
    assert "the corrupted one 3" in line and window.banner.kind != "error"
    assert not panel.cbar.isVisible() and label(panel.legend) == ""  # said once, by the status line
    with fresh_panel(window, "patching", "slides") as figure:  # an export says it below its plots
        assert "same token length" in label(figure.legend) and not figure.status.isVisible()
    qtbot.mouseClick(panel.corrupt_button, Qt.MouseButton.LeftButton)  # a corruption mends it
    qtbot.waitUntil(lambda: idle(window) and not panel.status.isVisible(), timeout=TIMEOUT_MS)
    assert panel.cbar.isVisible()


def test_patching_within_noise_says_so_instead_of_ranking_heads(qtbot, window, gpt2_path):
    """The fixture's GPT-2 is untrained: clean and corrupted logit(answer) differ by a few
    hundredths of the spread of its logits, and every effect divides noise by noise. The legend
    says so with both numbers (checked on transformers' own forward pass) and ranks no head
    (issue 47, item 6)."""
    import torch
    from transformers import AutoModelForCausalLM

    panel = front(qtbot, window, "patching")
    model = window.model_controller.loaded
    bad = corrupt_text(model, GPT2_TEXT, seed=0)
    panel.corrupted.setText(bad)
    panel.corrupted.editingFinished.emit()
    qtbot.waitUntil(lambda: idle(window) and panel.pair is not None
                    and panel.pair.heads.corrupted_tokens == model.tokens_of(model.tokenize(bad)[0]),
                    timeout=TIMEOUT_MS)
    lm = AutoModelForCausalLM.from_pretrained(gpt2_path, attn_implementation="eager").eval()
    with torch.no_grad():
        clean_l, bad_l = (lm(torch.tensor([model.tokenize(t)[0]])).logits[0, -1].double()
                          for t in (GPT2_TEXT, bad))
    answer = int(clean_l.argmax())
    gap, scale = abs(float(clean_l[answer] - bad_l[answer])), float(clean_l.std())
    assert 0 < gap < 0.1 * scale  # the premise: within noise
    legend = label(panel.legend)
    assert "Not ranked" in legend and "Largest head effects" not in legend
    said = re.search(r"differ by ([-0-9.e]+), under 10% of the metric's scale \(([-0-9.e]+),", legend)
    assert said, legend
    assert float(said.group(1)) == pytest.approx(gap, rel=0.01, abs=1e-4)
    assert float(said.group(2)) == pytest.approx(scale, rel=0.01)


def test_a_model_panels_caption_names_the_model_it_draws_not_the_sliders(qtbot, window, gpt2):
    """An exported model panel's caption (and its PNG description) gives the model, the
    selected layer and head and the text, never the sliders' "d_model=… heads=…" (issue 47,
    item 9); a panel of the sliders' layer keeps the config."""
    from PySide6.QtGui import QImage

    from explorer.export import ExportOptions
    from explorer.export.fresh import render_panel

    front(qtbot, window, "patching")
    window.model_selection.set(layer=1, head=2)
    c = window.model_controller
    want = f"{c.loaded.name} · layer 1 · head 2 · “{GPT2_TEXT}”"
    config_line = window.config.summary().split("  ")[0]  # "d_model=… heads=…"
    for name in ("model_head", "patching"):
        svg = render_panel(window, name, "svg", ExportOptions(caption=True)).decode()
        assert f"Attention Explorer · {want}" in svg.replace("&#8220;", "“").replace("&#8221;", "”"), name
        assert config_line not in svg, name
        png = QImage.fromData(render_panel(window, name, "png", ExportOptions(width=800, caption=True)))
        assert png.text("Description") == want
    svg = render_panel(window, "heads", "svg", ExportOptions(caption=True)).decode()
    assert config_line in svg and want not in svg


# ---- export (the GPT-2), both themes, and Chinese once ---------------------------------------


@pytest.mark.slow
def test_export_draws_both_panels_afresh_in_both_themes_and_in_chinese(qtbot, window, tmp_path):
    window.model_selection.set(query=3)
    window.panel("attribution").target.setText("dog")
    for theme in ("slides", "screen"):
        files = window.export_figures(tmp_path / theme, panels=["attribution", "patching"], theme=theme)
        assert [f.name for f in files] == ["attribution.png", "patching.png"]
        assert all(non_blank(f) for f in files)
    assert window.set_language("zh_CN")
    try:
        panel = window.panel("attribution")
        qtbot.waitUntil(lambda: idle(window), timeout=TIMEOUT_MS)
        assert read(panel.plot).startswith("直接 logit 归因")
        files = window.export_figures(tmp_path / "zh", panels=["attribution", "patching"])
        assert all(non_blank(f) for f in files)
    finally:
        assert window.set_language("en")
    window.panel("attribution").target.clear()


@pytest.mark.slow
def test_export_command_draws_them_from_a_session(tmp_path, capsys, gpt2_path):
    """A window that never showed the panels: the figure corrupts the text itself, then patches."""
    import json

    import main
    from explorer.export.cli import export_command

    session = tmp_path / "s.json"
    session.write_text(json.dumps({
        "format": "attention-explorer.session", "version": 1, "config": {},
        "selection": {"head": 0, "query": 0, "key": 0},
        "model": {"source": str(gpt2_path), "text": GPT2_TEXT, "layer": 1, "head": 2, "query": 4}}))
    out = tmp_path / "figures"
    args = main.build_parser().parse_args(["export", "--out", str(out), "--session", str(session),
                                           "--panel", "attribution", "--panel", "patching"])
    assert export_command(args) == 0, capsys.readouterr().err
    assert non_blank(out / "attribution.png") and non_blank(out / "patching.png")


# ---- the training run: attribution refused, patching names the induction heads -----------------


def test_a_post_norm_run_refuses_attribution_in_one_line(qtbot, window, run_folder, monkeypatch):
    # another model: patching asks nothing of it with the last model's corrupted text
    patching = front(qtbot, window, "patching")
    old_bad, analyses = patching.corrupted.text(), window.model_controller.analyses
    asked, request = [], analyses.request
    monkeypatch.setattr(analyses, "request", lambda kind, key, fn: asked.append((kind, key)) or request(kind, key, fn))
    load(qtbot, window, run_folder, RUN_TEXT)
    patch_keys = [key for kind, key in asked if kind == "patching" and key[0] == "patch"]
    assert patch_keys and all(key[2] != old_bad for key in patch_keys)
    panel = front(qtbot, window, "attribution")
    line = panel.status.text()
    assert panel.status.isVisible() and "\n" not in line
    assert line.startswith("Logit attribution needs a pre-norm model") and "post-norm" in line
    assert panel.parts == [] and window.banner.kind != "error"


def test_exact_patching_of_the_run_restores_the_answer_at_the_induction_heads(qtbot, window):
    panel = front(qtbot, window, "patching")
    model = window.model_controller.loaded
    assert panel.clean.text() == RUN_TEXT
    bad = panel.corrupted.text()
    assert bad == corrupt_text(model, RUN_TEXT, seed=panel.seed)
    panel.method.setCurrentIndex(panel.method.findData("exact"))
    qtbot.waitUntil(lambda: idle(window) and read(panel.heads.item).endswith("· exact"), timeout=TIMEOUT_MS)
    want = model.activation_patching(RUN_TEXT, bad, "J")
    assert np.allclose(panel.heads.data, want.effect, atol=1e-5)
    ind = model.all_head_scores()["induction"]
    top = np.unravel_index(int(np.argmax(want.effect)), want.effect.shape)
    assert top[0] == 1 and top == np.unravel_index(int(np.argmax(ind)), ind.shape)
    assert panel.head_texts.texts()[1][top[1]] == f"{want.effect[top]:.2f}"
    assert "logit(J) (the model's prediction)" in label(panel.legend)
    # a trained circuit is far outside noise: the heads are ranked, the induction head first
    assert f"Largest head effects: layer 1 · head {top[1]} " in label(panel.legend)
    assert "Not ranked" not in label(panel.legend)
    pos = model.activation_patching(RUN_TEXT, bad, "J", over="positions")
    assert np.allclose(panel.positions.data, pos.effect, atol=1e-5)
    assert not panel.run_button.isVisible() and not panel.progress_bar.isVisible()


def test_cancel_stops_an_exact_run_and_run_starts_it_again(qtbot, window, monkeypatch):
    panel = front(qtbot, window, "patching")
    model = window.model_controller.loaded
    real = model.activation_patching
    started = threading.Event()

    hold = threading.Event()  # set: the estimate waits for `release`
    release = threading.Event()

    def slow(*args, method="exact", progress=None, **kw):
        """The exact run, one progress report every 10 ms until cancelled (Cancelled raised)."""
        if method != "exact":
            if hold.is_set():  # halfway, then held
                progress(1, 2)
                release.wait(TIMEOUT_MS / 1000)
            return real(*args, method=method, progress=progress, **kw)
        for i in range(6000):
            progress(i, 6000)
            started.set()
            threading.Event().wait(0.01)
        return real(*args, method=method, progress=progress, **kw)

    monkeypatch.setattr(model, "activation_patching", slow)
    panel.wrong.setText("A")  # a new metric: not computed yet
    panel.wrong.editingFinished.emit()
    qtbot.waitUntil(lambda: started.is_set() and panel.run_button.isVisible(), timeout=TIMEOUT_MS)
    assert panel.run_button.text() == "Cancel" and panel.progress_bar.isVisible()
    key = window.model_controller.analyses.pending("patching")
    hold.set()
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    # the estimate runs meanwhile (the method box still says exact): the status says what runs,
    # and that the plots hold the earlier exact result until then (issue 47 item 7)
    qtbot.waitUntil(lambda: panel.status.text().startswith(
        "Exact patching cancelled. Until the estimate comes, the plots show the earlier exact result; "
        "estimating…"), timeout=TIMEOUT_MS)
    assert read(panel.heads.item).endswith("· exact") and "logit(J) − logit(A)" not in label(panel.legend)
    release.set()
    qtbot.waitUntil(lambda: idle(window), timeout=TIMEOUT_MS)
    assert window.model_controller.analyses.get("patching", key) is None  # stopped, nothing kept
    assert panel.status.isVisible() and panel.status.text().startswith("Exact patching cancelled")
    assert panel.run_button.isVisible() and panel.run_button.text() == "Run exact"
    assert read(panel.heads.item).endswith("· estimate") and "logit(J) − logit(A)" in label(panel.legend)
    with fresh_panel(window, "patching") as figure:  # an export after Cancel: the estimate, at once
        assert read(figure.heads.item).endswith("· estimate") and idle(window)
    monkeypatch.setattr(model, "activation_patching", real)
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle(window) and read(panel.heads.item).endswith("· exact"), timeout=TIMEOUT_MS)
    assert not panel.run_button.isVisible() and not panel.status.isVisible()
    panel.wrong.clear()
    panel.method.setCurrentIndex(panel.method.findData("attribution"))


# ---- an encoder (last: it replaces the module's model) ---------------------------------------


@pytest.mark.slow
def test_an_encoder_is_refused_by_both_panels_in_one_line(qtbot, window):
    load(qtbot, window, minilm_folder(), "the cat sat on the mat")
    for name, says in (("attribution", "No logit attribution for"), ("patching", "No patching for")):
        panel = front(qtbot, window, name)
        line = panel.status.text()
        assert panel.status.isVisible() and "\n" not in line
        assert line.startswith(says) and "encoder" in line
    assert window.banner.kind != "error"
