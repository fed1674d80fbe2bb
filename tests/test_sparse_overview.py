"""Long local ∪ global and hierarchical frames from each row's few keys (issue 45): the overview's
tile maxima, every row's statistics, the sampled largest |Q·Kᵀ| and the eager reference against
the attention matrix written here from its definition (DESIGN.md, "AttentionConfig"):

    local ∪ global   softmax(scale·q_i·k_j) over the visible keys: causal j ≤ i, window
                     i − w < j ≤ i (|i − j| < w without causal), every query sees j < g and a
                     query i < g sees every key (causal still applies)
    hierarchical     one softmax over the keys of i's own block (causal: j ≤ i) and one summary
                     (mean key, mean value) per other block (causal: blocks wholly before i's);
                     a summary's weight spread evenly over its block's keys

in float64 at S = 3001 (long enough for the trace's long path: grids over 64 MiB), and
S = 65,536 in a subprocess under RLIMIT_AS, where no (S, S) plane could be allocated."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import engine
from engine import AttentionConfig, run
from tests.test_linear_overview import visible as local_global

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
S = 3001
SHAPE = (512, 512)  # what a long frame draws: tiles of ⌈3001/512⌉ = 6 rows × 6 keys (the last ragged)
B = 64  # summary block


def dense_weights(tr, h: int) -> torch.Tensor:
    """(S, S) float64 the variant's attention matrix, from its definition."""
    cfg = tr.config
    q, k = tr.q[0, h].double(), tr.k[0, h // cfg.group_size].double()
    scale = 1 / math.sqrt(cfg.head_dim)
    if cfg.summary_block is None:
        s = (q @ k.T * scale).masked_fill(~local_global(cfg), -math.inf)
        return torch.softmax(s, -1)
    n = cfg.key_len
    i, j = torch.arange(cfg.seq_len), torch.arange(n)
    block = j // B  # (n,) each key's block
    nb = int(block[-1]) + 1
    count = torch.bincount(block, minlength=nb)  # (nB,)
    kbar = torch.zeros(nb, k.shape[1], dtype=torch.float64).index_add_(0, block, k) / count[:, None]
    own = (i // B)[:, None]  # (S, 1) each query's block
    mine = block[None, :] == own  # (S, n) the own block's keys
    if cfg.causal:
        mine &= j[None, :] <= i[:, None]
    c = torch.arange(nb)[None, :]
    others = (c != own) & ((c < own) if cfg.causal else True)  # (S, nB) the summaries seen
    logits = torch.cat([(q @ k.T * scale).masked_fill(~mine, -math.inf),
                        (q @ kbar.T * scale).masked_fill(~others, -math.inf)], 1)
    p = torch.softmax(logits, -1)  # one softmax over the own keys and the summaries
    spread = p[:, n:] / count  # (S, nB) a summary's weight on each of its keys
    return torch.where(mine, p[:, :n], torch.where(others[:, block], spread[:, block], 0.0))


def tile_max(w: torch.Tensor, tile: tuple[int, int]) -> torch.Tensor:
    R, C = -(-w.shape[0] // tile[0]), -(-w.shape[1] // tile[1])
    padded = torch.zeros(R * tile[0], C * tile[1], dtype=w.dtype)
    padded[: w.shape[0], : w.shape[1]] = w
    return padded.view(R, tile[0], C, tile[1]).amax((1, 3))


CONFIGS = {"local+global causal": dict(causal=True, window=300, global_tokens=16),
           "local+global bidirectional": dict(window=150, global_tokens=5),
           "hierarchical causal": dict(causal=True, summary_block=B),
           "hierarchical bidirectional": dict(summary_block=B)}


@pytest.fixture(scope="module", params=list(CONFIGS), ids=list(CONFIGS))
def case(request):
    cfg = AttentionConfig(seq_len=S, n_heads=2, d_model=64, backend="flash", seed=5, **CONFIGS[request.param])
    tr = run(cfg)
    sample = torch.tensor([0, 1, 1234, S - 1])
    ov = tr.head_overview(1, SHAPE, sample)
    return tr, ov, sample, dense_weights(tr, 1)


@pytest.fixture(scope="module")
def other_head(case):
    return dense_weights(case[0], 0)


def test_the_long_path_is_taken_and_every_row_is_exact(case):
    tr, ov, _sample, _w = case
    assert tr.blocked and not tr.holds_grids
    assert ov["reduce"] == "max"  # the tiles' maxima, as the exact pass draws them
    assert tr.stat_sample is None  # no statistic left to a sample but the largest |Q·Kᵀ|
    assert tr.raw_sample is not None and len(tr.raw_sample) == 128


def test_overview_cells_are_the_exact_tile_maxima(case):
    _tr, ov, _sample, w = case
    want = tile_max(w, (6, 6))
    assert tuple(ov["weights"].shape) == tuple(want.shape) == (501, 501)
    torch.testing.assert_close(ov["weights"].double(), want, atol=1e-7, rtol=1e-5)
    assert bool((ov["weights"][want == 0] == 0).all())  # a tile no query of it may see: exactly 0


def test_every_rows_statistics_are_exact(case):
    tr, ov, _sample, w = case
    rows = tr.row_stats(0, 1)
    i = torch.arange(S)
    assert bool(rows["valid"].all())
    ent = -(w * w.clamp_min(1e-300).log()).sum(-1)
    p2, p3 = (w**2).sum(-1), (w**3).sum(-1)
    torch.testing.assert_close(rows["entropy"].double(), ent, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rows["jacobian_norm"].double(), (p2 - 2 * p3 + p2 * p2).sqrt(), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(rows["row_max"].double(), w.amax(-1), atol=1e-7, rtol=1e-5)
    torch.testing.assert_close(rows["sink"].double(), w[:, 0], atol=1e-7, rtol=1e-5)
    torch.testing.assert_close(rows["diagonal"].double(), w[i, i], atol=1e-7, rtol=1e-5)
    prev = torch.cat([torch.zeros(1, dtype=torch.float64), w[i[1:], i[1:] - 1]])
    torch.testing.assert_close(rows["previous_token"].double(), prev, atol=1e-7, rtol=1e-5)
    dist = (w * (i[:, None] - i[None, :]).abs()).sum(-1)
    torch.testing.assert_close(rows["distance"].double(), dist, atol=1e-3, rtol=1e-5)
    future = float((w * (i[None, :] > i[:, None])).sum(-1).mean())
    assert ov["future_share"] == pytest.approx(future, abs=1e-6)
    summary = engine.trace_head_summary(tr, only=("mean_entropy", "sink_mass", "mean_distance"))
    assert float(summary["mean_entropy"][1]) == pytest.approx(float(ent.mean()), rel=1e-5)
    assert float(summary["sink_mass"][1]) == pytest.approx(float(w[:, 0].mean()), rel=1e-5)


def test_histogram_rows_the_sampled_overflow_report_and_the_eager_reference(case, other_head):
    tr, ov, sample, w = case
    q, k = tr.q[0, 1].double(), tr.k[0, 1].double()
    torch.testing.assert_close(ov["scores_raw"].double(), q[sample] @ k.T, atol=1e-4, rtol=1e-5)
    seen = w[sample] > 0
    assert bool((ov["scores"][~seen] == -math.inf).all())
    rep = engine.overflow_report(tr)
    assert rep.ok and rep.sampled_rows == 128 and rep.inf_scores_raw == 0
    top = max(float((tr.q[0, h].double()[tr.raw_sample] @ tr.k[0, h].double().T).abs().max()) for h in range(2))
    assert rep.max_abs_score_raw == pytest.approx(top, rel=1e-5)
    # the eager reference: the definition's weights times V, through W_O (the other head too)
    cfg = tr.config
    ctx = torch.stack([wh @ tr.v[0, h // cfg.group_size].double() for h, wh in enumerate((other_head, w))])
    ref = ctx.transpose(0, 1).reshape(S, cfg.d_model) @ tr.weights_used.w_o.double()
    torch.testing.assert_close(tr.eager_output[0].double(), ref, atol=1e-4, rtol=1e-4)
    assert tr.backend_max_abs_diff is not None and tr.backend_max_abs_diff < 1e-4


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import torch
    import engine
    from engine import AttentionConfig, run

    out = {{}}
    for name, extra in (("l+g", dict(window=256, global_tokens=16)), ("hier", dict(summary_block=256))):
        cfg = AttentionConfig(n_heads=1, d_model=64, seq_len=65536, causal=True, backend="flash", **extra)
        tr = run(cfg)
        t0 = time.perf_counter()
        steps = []
        ov = tr.head_overview(0, (512, 512), torch.tensor([0, 40000, 65535]),
                              progress=lambda d, t: steps.append((d, t)))
        w = ov["weights"]
        rows = tr.row_stats(0, 0)
        out[name] = {{"s": time.perf_counter() - t0, "shape": list(w.shape), "reduce": ov["reduce"],
                     "upper": float(torch.triu(w, 1).abs().max()), "diag": float(w.diagonal().min()),
                     "steps": steps[-1], "n_steps": len(steps),
                     "entropy_nan": int(torch.isnan(rows["entropy"]).sum()),
                     "entropy_max": float(rows["entropy"].max()), "diff": tr.backend_max_abs_diff}}
    print(json.dumps(out))
""")


def test_s65536_local_global_and_hierarchical_overviews_without_a_grid_under_an_address_space_limit():
    """One head at S = 65,536 each: a (S, S) float32 plane is 16 GiB, the limit 3 GiB."""
    r = subprocess.run([sys.executable, "-c", _CHILD.format(limit=3 * GIB)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for name, got in out.items():
        assert got["shape"] == [512, 512] and got["reduce"] == "max", name
        assert got["upper"] == 0.0 and got["diag"] > 0, name  # causal: nothing above the diagonal tiles
        assert got["steps"][0] == got["steps"][1] and got["n_steps"] > 5, name  # progress to its end
        assert got["entropy_nan"] == 0 and 0 < got["entropy_max"] <= math.log(65536), name  # every row
        assert got["diff"] is not None and got["diff"] < 1e-3, name
