"""A long linear-kernel frame without its S×Skv weights (issue 45): the overview's tiles, the
per-row statistics and the sampled ones against the attention matrix written here from its
definition (docs/contract.md, "Efficient attention"; DESIGN.md's mask: window, global tokens):

    w_ij = φ(q_i)·φ(k_j) / Σ_{visible j'} φ(q_i)·φ(k_j')  on the visible keys, 0 elsewhere,
    φ(x) = elu(x) + 1,

in float64 at S = 3001 (long enough for the trace to take its long path: grids over 64 MiB),
and S = 65,536 in a subprocess under RLIMIT_AS, where no (S, S) plane could be allocated."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from engine import AttentionConfig, run
from explorer.frame import build_frame

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
S = 3001
SHAPE = (512, 512)  # what a long frame draws: tiles of ⌈3001/512⌉ = 6 rows × 6 keys (the last ragged)


def phi(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x + 1.0, torch.exp(x))


def visible(cfg: AttentionConfig) -> torch.Tensor:
    """(S, S) bool from DESIGN.md: causal j ≤ i; window |i − j| < w (causal: i − w < j ≤ i);
    global tokens g: every query sees j < g, queries i < g see every key (causal still applies)."""
    i, j = torch.arange(cfg.seq_len)[:, None], torch.arange(cfg.key_len)[None, :]
    seen = torch.ones(cfg.seq_len, cfg.key_len, dtype=torch.bool)
    if cfg.window is not None:
        seen &= (i - j).abs() < cfg.window
    if cfg.global_tokens:
        seen |= (j < cfg.global_tokens) | (i < cfg.global_tokens)
    if cfg.causal:
        seen &= j <= i
    return seen


def dense_weights(tr, h: int) -> torch.Tensor:
    cfg = tr.config
    q, k = tr.q[0, h].double(), tr.k[0, h // cfg.group_size].double()
    a = (phi(q) @ phi(k).T) * visible(cfg)
    return a / a.sum(-1, keepdim=True)


def tile_means(w: torch.Tensor, tile: tuple[int, int]) -> torch.Tensor:
    """(R, C) float64: each tile's mean over the cells it has (the last row and column of tiles
    ragged), as a sum over the zero-padded grid divided by the tile's own cell count."""
    (n, m), (a, b) = w.shape, tile
    R, C = -(-n // a), -(-m // b)
    padded = torch.zeros(R * a, C * b, dtype=torch.float64)
    padded[:n, :m] = w
    sums = padded.view(R, a, C, b).sum(dim=(1, 3))
    rows = torch.tensor([min(a, n - r * a) for r in range(R)], dtype=torch.float64)
    cols = torch.tensor([min(b, m - c * b) for c in range(C)], dtype=torch.float64)
    return sums / (rows[:, None] * cols[None, :])


CONFIGS = {"causal": dict(causal=True),
           "window+global": dict(causal=True, window=300, global_tokens=16),
           "bidirectional": dict(causal=False)}


@pytest.fixture(scope="module", params=list(CONFIGS), ids=list(CONFIGS))
def case(request):
    cfg = AttentionConfig(seq_len=S, n_heads=2, d_model=64, kernel="linear", backend="flash", seed=5,
                          **CONFIGS[request.param])
    tr = run(cfg)
    sample = torch.tensor([0, 1, 1234, S - 1])
    ov = tr.head_overview(1, SHAPE, sample)
    return tr, ov, sample, dense_weights(tr, 1)


def test_the_long_path_is_taken_and_says_what_it_computed(case):
    tr, ov, _sample, _w = case
    assert tr.blocked and not tr.holds_grids
    assert ov["reduce"] == "mean"
    sample = tr.stat_sample
    assert sample is not None and len(sample) == 128 and int(sample[0]) == 0 and int(sample[-1]) == S - 1


def test_overview_cells_are_the_exact_tile_means(case):
    _tr, ov, _sample, w = case
    want = tile_means(w, (6, 6))
    assert tuple(ov["weights"].shape) == tuple(want.shape) == (501, 501)
    torch.testing.assert_close(ov["weights"].double(), want, atol=1e-9, rtol=1e-5)
    assert bool((ov["weights"][want == 0] == 0).all())  # a tile no query of it may see: exactly 0


def test_every_rows_sink_diagonal_previous_token_and_distance_are_exact(case):
    tr, ov, _sample, w = case
    rows = tr.row_stats(0, 1)
    i = torch.arange(S)
    assert bool(rows["valid"].all())
    torch.testing.assert_close(rows["sink"].double(), w[:, 0], atol=1e-7, rtol=1e-5)
    torch.testing.assert_close(rows["diagonal"].double(), w[i, i], atol=1e-7, rtol=1e-5)
    prev = torch.cat([torch.zeros(1, dtype=torch.float64), w[i[1:], i[1:] - 1]])
    torch.testing.assert_close(rows["previous_token"].double(), prev, atol=1e-7, rtol=1e-5)
    dist = (w * (i[:, None] - i[None, :]).abs()).sum(-1)
    torch.testing.assert_close(rows["distance"].double(), dist, atol=1e-4, rtol=1e-5)
    future = float((w * (i[None, :] > i[:, None])).sum(-1).mean())
    assert ov["future_share"] == pytest.approx(future, abs=1e-6)


def test_entropy_jacobian_and_row_max_are_exact_on_the_sample_and_nowhere_else(case):
    tr, _ov, _sample, w = case
    rows, sample = tr.row_stats(0, 1), tr.stat_sample
    ws = w[sample]
    ent = -(ws * ws.clamp_min(1e-300).log()).sum(-1)
    p2, p3 = (ws**2).sum(-1), (ws**3).sum(-1)
    jac = (p2 - 2 * p3 + p2 * p2).sqrt()
    torch.testing.assert_close(rows["entropy"][sample].double(), ent, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rows["jacobian_norm"][sample].double(), jac, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(rows["row_max"][sample].double(), ws.amax(-1), atol=1e-7, rtol=1e-5)
    others = torch.ones(S, dtype=torch.bool)
    others[sample] = False
    assert bool(torch.isnan(tr.entropy[0, 1][others]).all())  # never a number that was not computed
    assert bool(torch.isnan(tr.softmax_jacobian_norm[0, 1][others]).all())
    summary = engine.trace_head_summary(tr, only=("mean_entropy", "sink_mass", "mean_distance"))
    assert float(summary["mean_entropy"][1]) == pytest.approx(float(ent.mean()), rel=1e-5)
    assert float(summary["sink_mass"][1]) == pytest.approx(float(w[:, 0].mean()), rel=1e-5)


def test_histogram_rows_and_the_sampled_overflow_report(case):
    tr, ov, sample, _w = case
    cfg = tr.config
    q, k = tr.q[0, 1].double(), tr.k[0, 1].double()
    raw = q[sample] @ k.T
    torch.testing.assert_close(ov["scores_raw"].double(), raw, atol=1e-4, rtol=1e-5)
    seen = visible(cfg)[sample]
    logs = (phi(q[sample]) @ phi(k).T).log()
    torch.testing.assert_close(ov["scores"].double()[seen], logs[seen], atol=1e-5, rtol=1e-5)
    assert bool((ov["scores"][~seen] == -math.inf).all())
    rep = engine.overflow_report(tr)
    assert rep.ok and rep.sampled_rows == 128 and rep.inf_scores_raw == 0
    top = max(float((tr.q[0, h].double()[tr.stat_sample] @ tr.k[0, h].double().T).abs().max()) for h in range(2))
    assert rep.max_abs_score_raw == pytest.approx(top, rel=1e-5)


def test_the_long_frame_draws_means_and_marks_its_sampled_statistics():
    cfg = AttentionConfig(seq_len=S, n_heads=1, d_model=64, kernel="linear", backend="flash", causal=True, seed=6)
    fr = build_frame(cfg)
    assert fr.lod == (6, 6) and fr.lod_reduce == ("mean",)
    sample = fr.stat_rows
    assert sample is not None and len(sample) == 128
    w = dense_weights(fr.trace, 0)
    ws = w[torch.from_numpy(sample)]
    ent = -(ws * ws.clamp_min(1e-300).log()).sum(-1)
    assert np.isnan(fr.entropy[0]).sum() == S - 128
    assert int(fr.head_rows[0]) == 128
    assert float(fr.head_entropy[0]) == pytest.approx(float(ent.mean()), rel=1e-5)
    assert float(fr.sink_mass[0]) == pytest.approx(float(w[:, 0].mean()), rel=1e-5)
    assert fr.trace.backend_max_abs_diff is None  # its eager reference is the O(S²) pass: not claimed


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import torch
    torch.set_num_threads(1)
    import engine
    from engine import AttentionConfig, run

    cfg = AttentionConfig(n_heads=1, d_model=64, seq_len=65536, causal=True, kernel="linear", backend="flash")
    tr = run(cfg)
    t0 = time.perf_counter()
    steps = []
    ov = tr.head_overview(0, (512, 512), torch.tensor([0, 40000, 65535]), progress=lambda d, t: steps.append((d, t)))
    w = ov["weights"]
    summary = engine.trace_head_summary(tr, only=("mean_entropy", "sink_mass", "mean_distance"))
    print(json.dumps({{"s": time.perf_counter() - t0, "shape": list(w.shape), "reduce": ov["reduce"],
                      "row_sum": float(w.double().sum() * 128 * 128 / 65536),
                      "upper": float(torch.triu(w, 1).abs().max()), "steps": steps[-1], "n_steps": len(steps),
                      "entropy": float(summary["mean_entropy"][0]), "sampled": len(tr.stat_sample)}}))
""")


def test_s65536_overview_without_a_grid_under_an_address_space_limit():
    """One head at S = 65,536: a (S, S) float32 plane is 16 GiB, the limit 3 GiB. Each row's
    weights sum to 1, so the tile means (128 × 128 tiles) times their area sum to S."""
    r = subprocess.run([sys.executable, "-c", _CHILD.format(limit=3 * GIB)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["shape"] == [512, 512] and out["reduce"] == "mean"
    assert out["row_sum"] == pytest.approx(1.0, rel=1e-6)  # Σ tiles mean·area / S
    assert out["upper"] == 0.0  # causal: no weight above the diagonal tiles
    assert out["steps"][0] == out["steps"][1] and out["n_steps"] > 5  # progress to its end, in steps
    assert 0 < out["entropy"] <= math.log(65536) and out["sampled"] == 128


def test_the_window_says_which_numbers_are_tile_means_and_which_a_sample(qtbot, window):
    """What the user reads: the heads map's cells are means (not maxima), the entropy, the
    Jacobian norms and the largest |Q·Kᵀ| are of 128 sampled rows."""
    pytest.importorskip("pytestqt")
    from explorer.figures.text import plot_title

    cfg = AttentionConfig(seq_len=S, n_heads=1, d_model=64, kernel="linear", backend="flash", causal=True, seed=6)
    window.banner.hide_message()
    with qtbot.waitSignal(window.frame_rendered, timeout=120_000, check_params_cb=lambda c: c == cfg):
        window.set_config(cfg)
    heads = window.panel("heads")
    title = plot_title(heads.big.item).replace("\u00a0", " ")
    assert "each cell: mean of 6×6" in title and "max of" not in title, title
    from explorer.panels.heads import describe_tile

    hover = describe_tile(window.frame, 0, 0, 0)  # what the status bar says over a thumbnail cell
    assert "mean weight" in hover and "largest" not in hover, hover
    diag = window.panel("diagnostics")
    diag.draw_selection()
    entropy = next(plot for key, _label, plot, _bars in diag.metric_plots if key == "head_entropy")
    assert f"128 sampled rows of {S}" in plot_title(entropy).replace("\u00a0", " ")
    assert "in 128 sampled rows" in diag.warn_card.text()
    grad = window.panel("softmax_grad")
    grad.draw_selection()
    assert f"128 sampled rows of {S}" in plot_title(grad.jac_plot).replace("\u00a0", " ")


def test_performer_tiles_and_rows_equal_the_exact_pass_over_every_row():
    """FAVOR+ features (with their shifts) through the same factorisation: the tile means equal
    the exact eager formula's weights pooled (pooled_grid reads every row), the sink its column."""
    cfg = AttentionConfig(seq_len=S, n_heads=1, d_model=64, kernel="performer", n_features=32, backend="flash",
                          causal=True, window=500, global_tokens=4, seed=7)
    tr = run(cfg)
    ov = tr.head_overview(0, SHAPE)
    assert ov["reduce"] == "mean"
    exact = tr.pooled_grid("weights", 0, SHAPE, "mean")
    torch.testing.assert_close(ov["weights"], exact, atol=1e-7, rtol=1e-4)
    col0 = tr.head_rows("weights", 0, slice(0, S))[:, 0]
    torch.testing.assert_close(tr.row_stats(0, 0)["sink"], col0.float(), atol=1e-6, rtol=1e-4)
