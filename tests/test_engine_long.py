"""Long sequences (issue 16, the engine): eager materialises and is refused with its
estimate; the fused backends (sdpa, flash) hold no grid; a fused trace's grid fields come
on first access, one head at a time through ``head_grid``, and its per-row diagnostics and
eager reference block by block, with the numbers of the whole grids.

The target, B=1, H=16, S=8192, Dh=64 in float32 for flash and sdpa with the per-head
summaries the window needs, runs in a subprocess whose peak RSS is measured (and whose
address space is capped, so a regression fails as a refusal or MemoryError, not as the
kernel's OOM killer).
"""

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
import engine.backends
import engine.backends.common
import engine.memory
import engine.trace
from engine import AttentionConfig, ConfigError, run
from engine.backends import head_chunks

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024**3
BUDGET_ENV = "ATTN_EXPLORER_MEMORY_BUDGET"
TARGET = {"d_model": 1024, "n_heads": 16, "seq_len": 8192}


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shape, dtype and every value (NaN where the other has NaN)."""
    return a.shape == b.shape and a.dtype == b.dtype and bool(((a == b) | (a.isnan() & b.isnan())).all())


@pytest.fixture
def blocked(monkeypatch):
    """Every fused trace takes the long path (head by head, block by block) at small sizes:
    no grids count as small, and blocks are 16 rows (64 keys and more) or whole heads."""
    monkeypatch.setattr(engine.trace, "SMALL_GRIDS", -1)
    monkeypatch.setattr(engine.memory, "ROW_BLOCK_ELEMENTS", 64)
    monkeypatch.setattr(engine.memory, "MIN_BLOCK_ROWS", 16)


CASES = [
    AttentionConfig(),
    AttentionConfig(d_model=64, n_heads=8, n_kv_heads=2, seq_len=37, kv_len=51, causal=True, window=9),
    AttentionConfig(n_kv_heads=1, causal=True, pad=3, positional="alibi", mask_value="min", seq_len=70),
    AttentionConfig(dtype="float16", prescale_q=True, positional="rope", scale=0.3, seq_len=40),
    AttentionConfig(dtype="bfloat16", seq_len=133, window=5, n_kv_heads=2, batch=2),
    AttentionConfig(seq_len=50, kv_len=1),
    AttentionConfig(seq_len=1, kv_len=90, positional="alibi", pad=7),
    AttentionConfig(seq_len=48, pad=48),  # every row fully masked: NaN weights
    AttentionConfig(d_model=256, n_heads=2, seq_len=48, init_std=3.0, dtype="float16"),  # Q·Kᵀ overflows
]


def test_a_fused_run_holds_no_grid_until_asked():
    cfg = AttentionConfig(seq_len=24, causal=True, positional="alibi")
    eager = run(cfg)
    assert eager.holds_grids and eager.backend_max_abs_diff is None and eager.eager_output is None
    for backend in ("sdpa", "flash"):
        tr = run(cfg.replace(backend=backend))
        assert not tr.holds_grids
        assert tr.output.shape == (1, 24, 64) and tr.context.shape == (1, 4, 24, 16)
        assert torch.allclose(tr.output, eager.output, atol=1e-5)
        assert same(tr.weights, eager.weights) and tr.holds_grids  # first access: eager's numbers
        assert same(tr.scores_raw, eager.scores_raw) and same(tr.scores, eager.scores)
        assert same(tr.entropy, eager.entropy)
        assert 0 <= tr.backend_max_abs_diff < 1e-5
        assert same(tr.eager_output, eager.output)


@pytest.mark.parametrize("backend", ["sdpa", "flash"])
@pytest.mark.parametrize("cfg", CASES, ids=lambda c: c.summary().replace(" ", ""))
def test_the_long_path_gives_the_numbers_of_the_whole_grids(blocked, cfg, backend):
    """head_grid, entropy, Jacobian norm, head summaries and overflow counts, computed head by
    head and block by block, equal those of the whole grids; max |Δ| agrees with eager."""
    cfg = cfg.replace(backend=backend)
    tr = run(cfg)
    assert tr.blocked
    heads = {n: [[tr.head_grid(n, h, batch=b) for h in range(cfg.n_heads)] for b in range(cfg.batch)]
             for n in engine.trace.GRID_NAMES}
    entropy, jac = tr.entropy, tr.softmax_jacobian_norm
    summary = [engine.trace_head_summary(tr, batch=b) for b in range(cfg.batch)]
    report = engine.overflow_report(tr)
    diff = tr.backend_max_abs_diff
    assert not tr.holds_grids, "the long path materialised the grids"

    whole = run(cfg.replace(backend="eager"))
    for name, per_head in heads.items():
        for b in range(cfg.batch):
            for h in range(cfg.n_heads):
                assert same(per_head[b][h], getattr(whole, name)[b, h]), (name, b, h)
    assert same(entropy, whole.entropy) and same(jac, whole.softmax_jacobian_norm)
    for b in range(cfg.batch):
        want = engine.trace_head_summary(whole, batch=b)
        assert all(same(summary[b][k], want[k]) for k in want), b
    assert report == engine.overflow_report(whole)
    scale = max(1.0, float(whole.output.float().abs().nan_to_num().max()))  # Q·Kᵀ overflow: ~1e4
    tol = {"float32": 1e-5, "float16": 5e-3, "bfloat16": 5e-2}[cfg.dtype] * scale
    assert diff is not None and 0 <= diff <= tol
    assert torch.allclose(tr.eager_output.float(), whole.output.float(), atol=1e-6, equal_nan=True)


def test_the_row_pass_reports_progress_and_a_cancel_keeps_nothing(blocked):
    """compute_rows(progress): progress(done, total) after each block of each head (here 2
    blocks × 4 heads); an exception from it cancels, and the next pass starts over."""
    cfg = AttentionConfig(seq_len=40, backend="flash")
    tr = run(cfg)
    seen = []

    class Cancelled(Exception):
        pass

    def cancel_at_3(done, total):
        seen.append((done, total))
        if done == 3:
            raise Cancelled

    with pytest.raises(Cancelled):
        tr.compute_rows(cancel_at_3)
    assert seen == [(1, 8), (2, 8), (3, 8)]
    seen.clear()
    tr.compute_rows(lambda done, total: seen.append((done, total)))
    assert seen == [(i, 8) for i in range(1, 9)]
    whole = run(cfg.replace(backend="eager"))
    assert same(tr.entropy, whole.entropy) and tr.backend_max_abs_diff < 1e-5
    assert not tr.holds_grids


@pytest.mark.parametrize("reduce", ["max", "mean"])
def test_pooled_grid_is_the_head_grid_in_tiles(blocked, reduce):
    """pooled_grid: one head at a level of detail (tiles of ⌈S/rows⌉ × ⌈Skv/cols⌉), computed
    block by block, equal to tiling head_grid; the same for an eager trace."""
    cfg = AttentionConfig(seq_len=70, kv_len=45, causal=True, pad=2, positional="alibi", backend="flash")
    tr = run(cfg)
    eager = run(cfg.replace(backend="eager"))
    for name in engine.trace.GRID_NAMES:
        got = tr.pooled_grid(name, 2, (8, 10), reduce)  # tiles of 9 × 5: (8, 9) cells
        full = tr.head_grid(name, 2).float()
        want = torch.tensor([[getattr(full[i * 9:(i + 1) * 9, j * 5:(j + 1) * 5], "amax" if reduce == "max" else "mean")()
                              for j in range(9)] for i in range(8)])
        assert got.shape == (8, 9)
        if reduce == "max":
            assert same(got, want), name
        else:
            assert torch.allclose(got, want, equal_nan=True, atol=1e-6), name
        from_whole = eager.pooled_grid(name, 2, (8, 10), reduce)
        assert same(from_whole, got) if reduce == "max" else torch.allclose(from_whole, got, equal_nan=True), name
    assert not tr.holds_grids
    with pytest.raises(ValueError, match="reduce"):
        tr.pooled_grid("weights", 0, (4, 4), "median")


def test_head_grid_is_a_view_of_held_grids_and_checks_its_arguments():
    tr = run(AttentionConfig(batch=2, seq_len=6))
    assert tr.head_grid("weights", 3, batch=1).data_ptr() == tr.weights[1, 3].data_ptr()
    with pytest.raises(ValueError, match="scores_raw, scores, weights"):
        tr.head_grid("context", 0)
    with pytest.raises(IndexError, match="head must be in 0…3"):
        tr.pooled_grid("weights", -1, (2, 2))
    with pytest.raises(IndexError, match="head must be in 0…3"):
        tr.head_grid("weights", 4)
    with pytest.raises(IndexError, match="batch must be in 0…1"):
        tr.head_grid("weights", 0, batch=2)


def test_over_the_budget_eager_is_refused_and_a_fused_trace_goes_head_by_head(monkeypatch):
    """grids of 196 MiB under a 256 MiB budget: eager is refused stating its estimate, flash
    runs, its grid fields are refused stating theirs, one head and the diagnostics work."""
    cfg = AttentionConfig(d_model=256, n_heads=4, seq_len=2048)
    est = engine.memory_estimate(cfg)
    assert est["grids"] >= 3 * 4 * 2048**2 * 4
    monkeypatch.setenv(BUDGET_ENV, str(256 * 2**20))
    with pytest.raises(ConfigError, match=r"needs about \d+\.\d MiB: .*attention grids 196\.0 MiB \(B·H·S·Skv\).*over the 256\.0 MiB"):
        run(cfg)
    tr = run(cfg.replace(backend="flash"))
    assert tr.blocked and not tr.holds_grids
    for name in ("weights", "scores_raw", "scores"):
        with pytest.raises(ConfigError, match=r"attention grids.*196\.0 MiB.*over the 256\.0 MiB memory budget.*head_grid"):
            getattr(tr, name)
    head = tr.head_grid("weights", 2)
    summary = engine.trace_head_summary(tr, only=("mean_entropy", "sink_mass", "mean_distance"))
    entropy = tr.entropy
    diff = tr.backend_max_abs_diff
    assert not tr.holds_grids

    monkeypatch.delenv(BUDGET_ENV)
    whole = run(cfg)
    assert same(head, whole.weights[0, 2])
    want = engine.trace_head_summary(whole, only=("mean_entropy", "sink_mass", "mean_distance"))
    assert all(torch.allclose(summary[k], want[k], rtol=1e-5) for k in want)
    assert torch.allclose(entropy, whole.entropy, atol=1e-5)
    assert diff is not None and diff < 1e-5


def test_the_refusal_of_entropy_says_it_is_the_rows_that_do_not_fit(monkeypatch):
    cfg = AttentionConfig(d_model=256, n_heads=4, seq_len=2048, backend="sdpa")
    est = engine.memory_estimate(cfg)
    monkeypatch.setenv(BUDGET_ENV, str(est["fused"] + est["rows"] // 2))
    tr = run(cfg)
    with pytest.raises(ConfigError, match=r"blocked per-row diagnostics of this trace \(blocks of rows × Skv, B·H·S row statistics\) need about"):
        _ = tr.entropy
    assert tr.backend_max_abs_diff is None  # the reference does not fit either: not measured
    assert tr.output.shape == (1, 2048, 256)


def test_memory_estimate_parts():
    target = AttentionConfig(**TARGET)
    est = engine.memory_estimate(target)
    assert {"grids", "head", "fused", "eager", "rows", "weights", "activations", "temporaries", "total"} <= set(est)
    assert est["grids"] >= 3 * 16 * 8192**2 * 4 and est["eager"] > 20 * GIB  # "eager would need over 20 GiB"
    assert est["total"] == est["eager"]
    assert 3 * 8192**2 * 4 <= est["head"] < est["grids"] / 8
    for backend in ("sdpa", "flash"):
        fused = engine.memory_estimate(target.replace(backend=backend))
        assert fused["total"] == fused["fused"] < GIB and fused["grids"] == est["grids"]
        assert fused["rows"] < GIB
    # a plain causal mask needs no mask tensor; a padded one its plane; ALiBi a chunk of heads
    base = engine.memory_estimate(target.replace(backend="flash", causal=True))["fused"]
    assert engine.memory_estimate(target.replace(backend="flash", pad=1))["fused"] > base + 8192**2 * 4
    alibi = engine.memory_estimate(target.replace(backend="flash", positional="alibi"))["fused"]
    assert base + 8192**2 * 4 < alibi < base + engine.backends.FUSED_WORKSPACE + 8192**2 * 12


@pytest.mark.parametrize(("n_heads", "group", "per_head", "want"), [
    (16, 1, 0, [16]), (16, 1, 100, [2] * 8), (16, 4, 100, [2] * 8), (16, 4, 40, [4] * 4),
    (16, 4, 20, [8, 8]), (16, 8, 60, [2] * 8), (16, 16, 100, [2] * 8), (12, 4, 10**9, [1] * 12),
    (6, 6, 60, [3, 3]), (6, 3, 40, [3, 3]), (6, 3, 30, [6]),
])
def test_head_chunks_are_whole_kv_groups_or_inside_one(n_heads, group, per_head, want):
    chunks = head_chunks(n_heads, group, per_head, workspace=200)
    assert [c.stop - c.start for c in chunks] == want
    assert chunks[0].start == 0 and chunks[-1].stop == n_heads
    for c in chunks:
        size = c.stop - c.start
        assert size % group == 0 or (group % size == 0 and c.start // group == (c.stop - 1) // group)


@pytest.mark.parametrize("backend", ["sdpa", "flash"])
@pytest.mark.parametrize("scale", [0.0, -0.5, 0.5])
@pytest.mark.parametrize("prescale_q", [False, True])
def test_plain_causal_matches_eager_for_any_scale(backend, scale, prescale_q):
    """Plain causal self-attention goes to the kernel as is_causal (no mask tensor) only
    where torch's CPU kernel gets it right: a positive scale (it turns the masked −inf into
    NaN for 0 and +inf below); elsewhere the mask plane."""
    cfg = AttentionConfig(seq_len=6, causal=True, scale=scale, prescale_q=prescale_q, backend=backend)
    tr = run(cfg)
    assert bool(torch.isfinite(tr.output).all())
    assert tr.backend_max_abs_diff < 1e-5


@pytest.mark.parametrize("backend", ["sdpa", "flash"])
@pytest.mark.parametrize("kv", [None, 2, 1])
def test_alibi_in_chunks_of_heads_matches_eager(monkeypatch, backend, kv):
    """With a workspace of one head's bias, the fused kernel runs head by head (GQA groups
    split or whole): still eager's output."""
    cfg = AttentionConfig(d_model=64, n_heads=8, n_kv_heads=kv, seq_len=33, kv_len=40, positional="alibi",
                          causal=True, backend=backend)
    monkeypatch.setattr(engine.backends.common, "FUSED_WORKSPACE", 33 * 40 * 8)
    tr = run(cfg)
    assert tr.backend_max_abs_diff < 1e-5


_ESTIMATE_CHILD = textwrap.dedent("""
    import json, sys
    import engine
    from engine import AttentionConfig, run

    def status(key):  # VmHWM: this process's peak RSS; VmRSS: now
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    cfg = AttentionConfig(**json.loads(sys.argv[1]))
    run(cfg.replace(seq_len=8, kv_len=None if cfg.kv_len is None else 8))  # kernels and caches warm
    base = status("VmRSS")
    trace = run(cfg)
    peaks = {"run": status("VmHWM") - base}
    trace.compute_rows()
    peaks["rows"] = status("VmHWM") - base
    trace.head_grid("weights", cfg.n_heads - 1)
    peaks["head"] = status("VmHWM") - base
    print(json.dumps(peaks))
""")


@pytest.mark.slow
@pytest.mark.parametrize("kw", [
    {"seq_len": 2048, "kv_len": 8192, "n_heads": 4, "d_model": 256, "causal": True, "positional": "alibi"},
    {"seq_len": 1536, "kv_len": 8192, "n_heads": 8, "n_kv_heads": 2, "d_model": 512, "window": 300, "pad": 7},
    {"seq_len": 2048, "kv_len": 8192, "n_heads": 2, "d_model": 128, "mask_value": "min", "causal": True,
     "prescale_q": True},
], ids=["alibi-causal", "gqa-window-pad", "prescale-min"])
def test_the_estimate_covers_a_fused_run_its_rows_and_one_head(kw):
    """Measured in a subprocess: a fused run's peak RSS is within estimate["total"] (=
    "fused"); the row pass adds at most "rows", one head's grid at most "head". At long
    key lengths (8192 here, as at the target), as there a block's planes are 48–64 MiB:
    above glibc's largest mmap threshold, so freed blocks go back to the system at once
    (smaller ones may linger in the heap, which the estimate's slack only partly covers)."""
    cfg = AttentionConfig(backend="flash", **kw)
    est = engine.memory_estimate(cfg)
    r = subprocess.run([sys.executable, "-c", _ESTIMATE_CHILD, json.dumps(cfg.to_dict())], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-1500:]
    peaks = json.loads(r.stdout.splitlines()[-1])
    assert est["total"] == est["fused"] and est["fused"] < est["eager"] / 2
    assert peaks["run"] <= est["fused"], (peaks, est)
    assert peaks["rows"] <= est["fused"] + est["rows"], (peaks, est)
    assert peaks["head"] <= est["fused"] + max(est["rows"], est["head"]), (peaks, est)


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import engine
    from engine import AttentionConfig, run

    def status(key):  # this process's VmHWM (peak RSS) or VmRSS, bytes
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    cfg = AttentionConfig(backend=sys.argv[1], **json.loads(sys.argv[2]))
    t0 = time.perf_counter()
    trace = run(cfg)
    t1 = time.perf_counter()
    after_run = status("VmHWM")
    # what the window shows of every head: the frame's head summaries, entropy and Jacobian
    # rows, the overflow report, the backend check; and one head's weights for the heatmap
    summary = engine.trace_head_summary(trace, only=("mean_entropy", "sink_mass", "mean_distance"))
    entropy, jac = trace.entropy, trace.softmax_jacobian_norm
    report = engine.overflow_report(trace)
    diff = trace.backend_max_abs_diff
    head = trace.head_grid("weights", 0)
    print(json.dumps({{
        "run_s": t1 - t0, "all_s": time.perf_counter() - t0, "impl": trace.backend_impl,
        "peak_after_run": after_run, "peak": status("VmHWM"), "holds_grids": trace.holds_grids,
        "entropy_shape": list(entropy.shape), "jac_finite": bool(jac.isfinite().all()),
        "mean_entropy": summary["mean_entropy"].tolist(), "sink_mass": summary["sink_mass"].tolist(),
        "overflow_ok": report.ok, "diff": diff, "head_row_sums": float(head.sum(-1).mean()),
    }}))
""")


# The target's S and d_model with 2 of its 16 heads. The peak is one head's (or one head
# chunk's), not the heads': flash is torch's flash kernel (forced: blocks, no plane); sdpa
# asks torch which kernel, and should it be the math one (a score and weight plane per head)
# fused_attention runs head_chunks of at most FUSED_WORKSPACE, which at S=8192 is one head
# (2 × S² float32 = 512 MiB per head), at 2 heads as at 16; the
# per-head summaries, entropy and Jacobian rows (AttentionTrace.row_stats) are one head after
# another, a row block (engine.memory.row_block: from S and Skv alone) at a time, and the
# eager reference context is (S, d_model) whatever the split. What each further head adds is its
# (S,) row statistics: 14 more heads, ~1 MB. Two heads, not one: the pass must free a head's
# block before the next (a peak that grew per head would show at 2). 16 heads cost 8 × the
# exact per-head passes for nothing more.
TARGET_RUN = {**TARGET, "n_heads": 2}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["flash", "sdpa"])
def test_target_s8192_runs_with_its_per_head_summaries_under_1_5_gb(backend):
    r = subprocess.run([sys.executable, "-c", _CHILD.format(limit=4 * GIB), backend, json.dumps(TARGET_RUN)],
                       cwd=ROOT, capture_output=True, text=True, timeout=900,
                       env={k: v for k, v in __import__("os").environ.items() if k != BUDGET_ENV})
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.splitlines()[-1])
    assert res["impl"].startswith(backend + ":")
    assert res["peak"] < 1.5e9, f"peak RSS {res['peak'] / 1e9:.2f} GB"
    assert not res["holds_grids"] and res["entropy_shape"] == [1, 2, 8192] and res["jac_finite"]
    assert all(0 < e <= math.log(8192) for e in res["mean_entropy"]) and res["overflow_ok"]
    assert all(0 <= s <= 1 for s in res["sink_mass"])
    assert res["diff"] is not None and res["diff"] < 1e-5
    assert abs(res["head_row_sums"] - 1) < 1e-4
