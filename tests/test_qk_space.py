"""The Q/K space (issue 29): one PCA over a head's queries and keys, and its two panels.

The projection is checked against a PCA written here (numpy's SVD of the centred vectors),
the sliders' layer against the engine's own scores, a real model's queries and keys against
those computed from transformers' own modules and weights (a tiny random GPT-2, and a GQA
Llama through its own rotary embedding). The panels: qk_space (the sliders' layer) and
model_qk_space (a loaded model) in one window; PNGs in both themes and in Chinese are
written to $AE_QK_SPACE_PNG (when set) to be looked at.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import plain

from engine import AttentionConfig, run
from engine.qk_space import head_qk_space, project_qk, qk_space

try:
    from models_fixtures import gpt2_path, llama_path, settle_analyses
except ImportError:  # tests/ imported as a package
    from tests.models_fixtures import gpt2_path, llama_path, settle_analyses

__all__ = ["gpt2_path", "llama_path"]

TOKENS = tuple("the cat sat on the mat because it was tired .".split())
MODEL_TEXT = "the cat sat on the mat . the cat"
TIMEOUT_S = 120


def pca(x: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """An independent PCA: (points (n, dims), explained ratios (dims,)) of the rows of x."""
    xc = x - x.mean(0)
    u, s, _vt = np.linalg.svd(xc, full_matrices=False)
    return u[:, :dims] * s[:dims], s[:dims] ** 2 / (s**2).sum()


def same_up_to_sign(a: np.ndarray, b: np.ndarray, tol: float = 1e-6) -> bool:
    """Each column of a equals that of b or its negative (a PCA component's sign is free)."""
    scale = max(1.0, float(np.abs(b).max()))
    return all(min(np.abs(a[:, i] - b[:, i]).max(), np.abs(a[:, i] + b[:, i]).max()) <= tol * scale
               for i in range(b.shape[1]))


# ---- the engine ------------------------------------------------------------------------------


def test_project_qk_is_numpys_pca_of_queries_and_keys_together():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(7, 6)), rng.normal(size=(5, 6)) + 2.0
    points, explained, comps, mean = project_qk(q, k, dims=3)
    want, want_ex = pca(np.vstack([q, k]), 3)
    assert points.shape == (12, 3) and comps.shape == (3, 6) and mean.shape == (6,)
    np.testing.assert_allclose(explained, want_ex, rtol=1e-10)
    assert same_up_to_sign(points, want)
    np.testing.assert_allclose(mean, np.vstack([q, k]).mean(0))
    # all the components: the plane keeps every distance
    full, ex_full, _c, _m = project_qk(q, k, dims=6)
    assert ex_full.sum() == pytest.approx(1.0)
    x = np.vstack([q, k])
    d = lambda a: np.linalg.norm(a[:, None] - a[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(d(full), d(x), atol=1e-9)
    # torch in, the same numbers
    tp, _ex, _c, _m = project_qk(torch.tensor(q), torch.tensor(k), dims=3)
    np.testing.assert_allclose(tp, points, atol=1e-12)


def test_refusals_are_one_line():
    q = np.ones((3, 4))
    for args, kw, says in (((q, np.ones((3, 5))), {}, "same Dh"), ((q, q), {"dims": 5}, "dims must be"),
                           ((q * np.inf, q), {}, "NaN or ±inf"), ((q, q), {"scale": float("nan")}, "scale")):
        fn = qk_space if "scale" in kw else project_qk
        with pytest.raises(ValueError, match=says) as info:
            fn(*args, **kw)
        assert len(str(info.value).splitlines()) == 1
    # a real model's refusal stays an InspectError (what the panels' status line shows)
    from engine.models import InspectError
    from engine.models.circuits import project_qk as model_project

    with pytest.raises(InspectError, match="dims"):
        model_project(q, q, dims=9)


def test_the_sliders_layer_scales_the_queries_so_their_products_are_the_scores():
    cfg = AttentionConfig(tokens=TOKENS, n_heads=4, n_kv_heads=2, positional="rope")
    trace = run(cfg)
    h, g = 3, cfg.kv_head_of(3)
    assert g == 1
    q, k = trace.q[0].numpy(), trace.k[0].numpy()
    S, dh = cfg.seq_len, cfg.head_dim
    space = head_qk_space(cfg, q, k, h)
    assert (space.head, space.kv_head, space.scale) == (3, 1, pytest.approx(cfg.effective_scale))
    assert space.points.shape == (2 * S, 2) and space.n_queries == space.n_keys == S
    want, want_ex = pca(np.vstack([q[h] * cfg.effective_scale, k[g]]).astype(np.float64), 2)
    np.testing.assert_allclose(space.explained, want_ex, rtol=1e-6)
    assert same_up_to_sign(space.points, want, 1e-6)
    # in all Dh components, measured from the zero vector, the products are the engine's scores
    full = head_qk_space(cfg, q, k, h, dims=dh)
    scores = trace.scores[0, h].numpy()
    got = np.array([[full.plane_score(i, j) for j in range(S)] for i in range(S)])
    np.testing.assert_allclose(got, scores, rtol=1e-4, atol=1e-5)
    # in the plane: the score restricted to it
    c = space.components
    i, j = 4, 2
    assert space.plane_score(i, j) == pytest.approx(float((q[h, i] * space.scale @ c.T) @ (k[g, j] @ c.T)))
    # another scale: the queries (only) shrink towards the zero vector
    half = head_qk_space(replace(cfg, scale=cfg.effective_scale / 4), q, k, h)
    spread = lambda s: np.linalg.norm(s.points[:S] - s.origin, axis=1).mean()  # noqa: E731
    assert spread(half) < 0.5 * spread(space)


def test_long_sequences_keep_every_step_th_position():
    rng = np.random.default_rng(0)
    space = qk_space(rng.normal(size=(10, 4)), rng.normal(size=(7, 4)), max_points=4)
    assert space.step == 3
    assert space.query_positions.tolist() == [0, 3, 6, 9] and space.key_positions.tolist() == [0, 3, 6]
    assert space.points.shape == (7, 2)


# ---- a real model: transformers' own modules -------------------------------------------------


def test_gpt2_queries_and_keys_are_those_of_transformers_modules(gpt2_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from engine.models import load_model

    loaded = load_model(gpt2_path)
    texts = [MODEL_TEXT, "a big red dog ran in the park"]
    layer, head = 1, 2
    emb = loaded.qk_embedding(texts, layer, head)
    model = AutoModelForCausalLM.from_pretrained(gpt2_path, attn_implementation="eager",
                                                 dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(gpt2_path)
    block, H = model.transformer.h[layer], model.config.n_head
    qs, ks, tokens = [], [], []
    with torch.no_grad():
        for text in texts:
            ids = tok(text, return_tensors="pt")["input_ids"]
            hidden = model(ids, output_hidden_states=True).hidden_states[layer]  # block `layer`'s input
            q, k, _v = block.attn.c_attn(block.ln_1(hidden))[0].split(model.config.n_embd, dim=-1)
            S = ids.shape[1]
            qs.append(q.view(S, H, -1)[:, head].double().numpy())
            ks.append(k.view(S, H, -1)[:, head].double().numpy())
            tokens += tok.convert_ids_to_tokens(ids[0])
    n = sum(len(q) for q in qs)
    want, want_ex = pca(np.vstack(qs + ks), 2)
    assert emb.points.shape == (2 * n, 2) and emb.kinds == ["query"] * n + ["key"] * n
    assert emb.tokens == tokens * 2
    np.testing.assert_allclose(emb.explained, want_ex, rtol=1e-4)
    assert same_up_to_sign(emb.points.astype(np.float64), want, 1e-4)


def test_a_gqa_head_reads_its_shared_kv_head(llama_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    from engine.models import load_model

    loaded = load_model(llama_path)
    layer, head = 1, 5  # 8 query heads over 2 KV heads: head 5 reads KV head 1
    emb = loaded.qk_embedding(MODEL_TEXT, layer, head)
    assert emb.kv_head == 1
    model = AutoModelForCausalLM.from_pretrained(llama_path, attn_implementation="eager",
                                                 dtype=torch.float32).eval()
    ids = AutoTokenizer.from_pretrained(llama_path)(MODEL_TEXT, return_tensors="pt")["input_ids"]
    cfg, S = model.config, ids.shape[1]
    dh = cfg.hidden_size // cfg.num_attention_heads
    with torch.no_grad():
        hidden = model(ids, output_hidden_states=True).hidden_states[layer]
        block = model.model.layers[layer]
        x = block.input_layernorm(hidden)
        q = block.self_attn.q_proj(x).view(1, S, -1, dh).transpose(1, 2)
        k = block.self_attn.k_proj(x).view(1, S, -1, dh).transpose(1, 2)
        cos, sin = model.model.rotary_emb(x, torch.arange(S)[None])
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
    want, want_ex = pca(np.vstack([q[0, head].double().numpy(), k[0, 1].double().numpy()]), 2)
    np.testing.assert_allclose(emb.explained, want_ex, rtol=1e-4)
    assert same_up_to_sign(emb.points.astype(np.float64), want, 1e-4)


# ---- the panels --------------------------------------------------------------------------------

pytest.importorskip("pytestqt")


@pytest.fixture(scope="module")
def win(qapp):
    try:
        from conftest import shown_window
    except ImportError:
        from tests.conftest import shown_window
    with shown_window(qapp) as w:
        w.render_sync(AttentionConfig(tokens=TOKENS))
        w.dock("qk_space").show()
        w.dock("qk_space").raise_()
        qapp.processEvents()
        yield w


def png_dir() -> Path | None:
    d = os.environ.get("AE_QK_SPACE_PNG")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
    return Path(d) if d else None


def check_layout(panel) -> None:
    """Every text inside its view, no two overlapping; the token labels inside the plot and
    apart from each other."""
    from PySide6.QtCore import QRectF

    from explorer.figures.layout import text_boxes

    for _view, boxes in text_boxes(panel):
        for text, box, area in boxes:
            assert area.adjusted(-1, -1, 1, 1).contains(box), f"{text!r} at {box} is cut by {area}"
        for i, (a, box_a, _) in enumerate(boxes):
            for b, box_b, _ in boxes[i + 1:]:
                common = box_a.intersected(box_b)
                assert common.width() * common.height() <= 4, f"{a!r} overlaps {b!r}"
    labels = panel.fig.labels
    placed = labels.arrange()
    assert placed, "no token label was placed"
    area = panel.fig.vb.sceneBoundingRect()
    for n, (_i, box) in enumerate(placed):
        assert QRectF(area).contains(box)
        assert not any(box.intersects(other) for _j, other in placed[n + 1:])


@pytest.mark.slow
def test_the_sliders_panel_is_a_closed_tab_beside_qkv(win):
    from explorer.export.options import CLOSED_PANEL_NAMES

    assert "qk_space" in CLOSED_PANEL_NAMES
    assert win.dock("qk_space") in win.tabifiedDockWidgets(win.dock("qkv"))
    assert "act_view_qk_space" in {a.objectName() for a in win.menus["view"].actions()}
    assert not win.panel("qk_space").requires_model


def test_the_sliders_panel_shows_2S_labelled_points_and_the_explained_variance(win, qapp):
    panel = win.panel("qk_space")
    f = win.frame
    S = f.config.seq_len
    fig = panel.fig
    assert fig.xy.shape == (2 * S, 2)
    assert fig.is_key.tolist() == [False] * S + [True] * S
    assert fig.texts == list(f.query_labels) + list(f.key_labels)
    want = head_qk_space(f.config, f.q, f.k, win.selection.head)
    np.testing.assert_allclose(fig.xy, want.points)
    from explorer.figures.text import plot_title

    title = plain(plot_title(fig.plot))
    total = float(want.explained.sum())
    assert title.startswith(f"Q/K space of head {win.selection.head}")
    assert f"PC1 + PC2 explain {100 * total:.3g} % of the variance" in title
    assert f"PC1 ({100 * want.explained[0]:.3g} % of the variance)" == fig.plot.getAxis("bottom").labelText
    legend = plain(fig.legend.text)
    assert "queries × 1/√d_k = 0.25 (so q·k is the score softmax gets)" in legend
    assert fig.origin_xy == pytest.approx(tuple(want.origin))


def test_scaling_rope_and_masks_change_the_picture(win, qapp):
    panel = win.panel("qk_space")
    base = AttentionConfig(tokens=TOKENS)
    S = base.seq_len
    before = panel.fig.xy.copy()
    spread = lambda: np.linalg.norm(panel.fig.xy[:S] - panel.fig.origin_xy, axis=1).mean()  # noqa: E731
    q_spread = spread()
    win.render_sync(replace(base, scale=1.0))  # 4× the default 1/√16: the queries grow
    qapp.processEvents()
    assert not np.allclose(panel.fig.xy, before)
    assert spread() > 2 * q_spread
    assert "queries × the scale 1" in plain(panel.fig.legend.text)
    win.render_sync(replace(base, positional="rope"))
    qapp.processEvents()
    assert not np.allclose(panel.fig.xy, before)
    assert "RoPE has turned every query and key by its position" in plain(panel.fig.legend.text)
    # causal: the keys after the selected query are pale
    win.render_sync(replace(base, causal=True))
    win.selection.set(query=3, key=1)
    qapp.processEvents()
    assert panel.fig.faded.tolist() == [False] * S + [j > 3 for j in range(S)]
    assert "pale keys: masked for the selected query" in plain(panel.fig.legend.text)
    win.render_sync(base)
    qapp.processEvents()
    np.testing.assert_allclose(panel.fig.xy, before)


def test_hover_and_click_follow_the_selection(win, qapp):
    panel = win.panel("qk_space")
    S = win.config.seq_len
    win.selection.set(head=2, query=5, key=3)
    qapp.processEvents()
    fig = panel.fig
    assert fig.selected == [5, S + 3]  # query 5 and key 3 ringed
    seen, said = [], []
    win.state.hover.hovered.connect(lambda shape, r, c: seen.append((shape, r, c)))
    win.state.hover.described.connect(said.append)
    fig.on_hover(S + 7)  # key 7: the cell (selected query, 7) of every (S, S) matrix
    assert seen[-1] == ((S, S), 5, 7)
    assert said[-1].startswith("key at position 7 “it”")
    assert fig.hovered == [5, S + 7]  # the crosshair came back: its two points ringed
    win.state.hover.publish((S, S), 2, 9)  # hovering a heatmap cell rings its query and key
    assert fig.hovered == [2, S + 9]
    fig.on_click(S + 7)
    fig.on_click(1)
    assert (win.selection.query, win.selection.key) == (1, 7)
    assert fig.selected == [1, S + 7]
    win.state.hover.clear((S, S))
    assert fig.hovered == []


@pytest.mark.slow
def test_the_sliders_panel_renders_in_both_themes_and_in_chinese(win, qapp):
    from explorer.export import fresh_panel
    from explorer.export.render import figure_parts

    win.render_sync(AttentionConfig(tokens=TOKENS, causal=True, positional="rope", n_kv_heads=2))
    win.selection.set(head=1, query=7, key=4)
    qapp.processEvents()
    out = png_dir()
    for lang in ("en", "zh_CN"):
        assert win.set_language(lang)
        try:
            for theme in ("slides", "screen") if lang == "en" else ("slides",):
                with fresh_panel(win, "qk_space", theme) as panel:
                    assert panel.fig.xy.shape == (2 * len(TOKENS), 2)
                    check_layout(panel)
                    if lang == "zh_CN":
                        assert "方差" in panel.fig.plot.getAxis("bottom").labelText
                    assert figure_parts(panel)
                if out:
                    for f in win.export_figures(out, ["qk_space"], theme=theme):
                        f.replace(f.with_name(f"qk_space_{lang}_{theme}.png"))
        finally:
            win.set_language("en")
    win.render_sync(AttentionConfig(tokens=TOKENS))


# ---- with a model --------------------------------------------------------------------------------


def settle(qapp, window, timeout_s: float = TIMEOUT_S) -> None:
    settle_analyses(qapp, window, timeout_s)


@pytest.fixture(scope="module")
def with_model(win, qapp, gpt2_path):
    c = win.model_controller
    c.text = MODEL_TEXT
    c.load(str(gpt2_path))
    assert c.wait_ready(TIMEOUT_S) is None
    qapp.processEvents()
    win.dock("model_qk_space").raise_()
    qapp.processEvents()
    settle(qapp, win)
    return win


def test_the_model_panel_is_a_tab_beside_the_circuits_panels(with_model):
    w = with_model
    from explorer.export.options import MODEL_PANEL_NAMES

    assert "model_qk_space" in MODEL_PANEL_NAMES
    assert w.panel("model_qk_space").requires_model
    assert w.dock("model_qk_space") in w.tabifiedDockWidgets(w.dock("circuits"))
    assert "act_view_model_qk_space" in {a.objectName() for a in w.menus["view"].actions()}
    # beside a model, the sliders' panel says which layer it draws
    assert "the sliders' layer" in w.dock("qk_space").windowTitle()


def test_the_model_panel_shows_the_engines_embedding_and_follows_the_selection(with_model, qapp):
    w = with_model
    panel = w.panel("model_qk_space")
    c = w.model_controller
    w.model_selection.set(layer=1, head=2, query=4, key=2)
    settle(qapp, w)
    emb = c.loaded.qk_embedding([MODEL_TEXT], 1, 2)
    n = len(c.trace.tokens)
    np.testing.assert_allclose(panel.fig.xy, emb.points, atol=1e-5)
    assert panel.fig.texts == [t.replace("Ġ", "␣") for t in emb.tokens]
    assert panel.fig.selected == [4, n + 2]
    assert panel.fig.faded.tolist() == [False] * n + [j > 4 for j in range(n)]  # causal
    from explorer.figures.text import plot_title

    title = plain(plot_title(panel.fig.plot))
    assert title.startswith("Q/K space · layer 1 · head 2 · ")
    assert f"explain {100 * float(emb.explained.sum()):.3g} % of the variance" in title
    # another head: asked again, drawn when it comes
    assert c.analyses.get("qk_space", ((MODEL_TEXT,), 1, 3)) is None
    w.model_selection.set(head=3)
    assert c.analyses.pending("qk_space") == ((MODEL_TEXT,), 1, 3)
    settle(qapp, w)
    assert c.analyses.get("qk_space", ((MODEL_TEXT,), 1, 3)).ok
    np.testing.assert_allclose(panel.fig.xy, c.loaded.qk_embedding([MODEL_TEXT], 1, 3).points, atol=1e-5)
    # sample sentences too: one PCA, a shape per text
    panel.more.setCurrentIndex(2)
    settle(qapp, w)
    texts = panel.texts()
    assert len(texts) == 3 and texts[0] == MODEL_TEXT
    assert set(panel.fig.groups.tolist()) == {0, 1, 2}
    assert "texts: ● “the cat sat on the mat …”" in plain(panel.fig.legend.text)
    panel.more.setCurrentIndex(0)
    settle(qapp, w)


@pytest.mark.slow
def test_the_model_panel_renders_in_both_themes_and_in_chinese(with_model, qapp):
    from explorer.export import fresh_panel

    w = with_model
    w.model_selection.set(layer=1, head=1, query=7, key=1)
    settle(qapp, w)
    out = png_dir()
    for lang in ("en", "zh_CN"):
        assert w.set_language(lang)
        try:
            for theme in ("slides", "screen") if lang == "en" else ("slides",):
                with fresh_panel(w, "model_qk_space", theme) as panel:
                    assert len(panel.fig.xy) == 2 * len(w.model_controller.trace.tokens)
                    check_layout(panel)
                    if lang == "zh_CN":
                        assert "方差" in panel.fig.plot.getAxis("bottom").labelText
                if out:
                    for f in w.export_figures(out, ["model_qk_space"], theme=theme):
                        f.replace(f.with_name(f"model_qk_space_{lang}_{theme}.png"))
        finally:
            w.set_language("en")


def test_points_with_no_place_are_left_out_without_a_warning(qapp):
    """Issue 46 item 15: Q/K points that are not finite went to pyqtgraph's scatter, which
    took their bounds with nanmin ("RuntimeWarning: All-NaN slice encountered" at every
    paint), and framing them raised "Cannot set range [nan, nan]". Now they are not drawn;
    the finite ones are, and hovering still names them by their own index."""
    import warnings

    import pyqtgraph as pg

    from explorer.figures.qk_scatter import QKScatter
    from explorer.figures.themes import SLIDES

    view = pg.GraphicsLayoutWidget()
    view.resize(400, 300)
    fig = QKScatter()
    fig.theme = SLIDES
    view.addItem(fig.cell, 0, 0)
    view.show()
    qapp.processEvents()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.set_points(np.array([[np.nan, np.nan], [np.nan, 1.0], [1.0, 2.0]]), [False, True, False], [0, 0, 0],
                       ["a", "b", "c"])
        fig.set_origin((0.0, 0.0))
        fig.set_marks([0, 2])
        fig.set_rays([0, 2])
        view.grab()
        assert [int(p.data()) for p in fig.scatter.points()] == [2]  # the finite point, its own index
        fig.set_points(np.full((2, 2), np.nan), [False, True], [0, 0], ["a", "b"])  # none has a place
        fig.vb.autoRange()
        view.grab()
        assert len(fig.scatter.points()) == 0
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    view.close()
