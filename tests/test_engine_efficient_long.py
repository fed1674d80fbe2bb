"""The efficient variants at length (issue 45): the last row of a 20,000-token causal linear run
against that row computed directly, the wide blocks (global queries see every key) against
direct softmax rows, and S = 65,536 (B=1, H=4, d_model=256, causal, float32) for linear,
local + global (window 256, 16 global) and hierarchical (blocks of 256) in a subprocess under
RLIMIT_AS, where no (S, S) grid (16 GiB of float32, 4 GiB of bool) could ever be built."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from engine import AttentionConfig, ConfigError, run

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30


def elu_plus_one(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x + 1.0, torch.exp(x))


def kv_of(cfg: AttentionConfig, h: int) -> int:
    return h // (cfg.n_heads // cfg.kv_heads)


@pytest.fixture(scope="module")
def long_linear():
    return run(AttentionConfig(d_model=64, n_heads=2, seq_len=20_000, causal=True, kernel="linear", seed=11))


def test_last_row_of_a_20000_token_causal_linear_run(long_linear):
    """Row S−1 sees every key: φ(q)·φ(k_j) / Σ_j φ(q)·φ(k_j), then · V, in float64 here."""
    tr, cfg = long_linear, long_linear.config
    assert not tr.holds_grids
    for h in range(cfg.n_heads):
        q = tr.q[0, h, -1].double()
        k, v = tr.k[0, kv_of(cfg, h)].double(), tr.v[0, kv_of(cfg, h)].double()
        a = elu_plus_one(k) @ elu_plus_one(q)  # (S,)
        w = a / a.sum()
        torch.testing.assert_close(tr.context[0, h, -1].double(), w @ v, atol=2e-5, rtol=1e-4)
        row = tr.head_rows("weights", h, slice(cfg.seq_len - 1, cfg.seq_len))[0]  # no grid for one row
        torch.testing.assert_close(row.double(), w, atol=1e-8, rtol=1e-3)
    with pytest.raises(ConfigError, match="memory budget"):  # the whole grids: refused with the estimate
        _ = tr.weights


def test_a_row_deep_in_a_20000_token_run_with_window_and_global_keys():
    """Prefix-sum differences: row i sees [0, 4) ∪ (i − 1000, i]; global queries see all keys."""
    cfg = AttentionConfig(d_model=64, n_heads=2, seq_len=20_000, kernel="linear", window=1000, global_tokens=4,
                          seed=12)
    tr = run(cfg)
    for i in (1, 3, 4, 7_000, 19_999):
        j = torch.arange(cfg.seq_len)
        seen = (j < 4) | ((i - j).abs() < 1000) | (i < 4)
        for h in range(cfg.n_heads):
            q = tr.q[0, h, i].double()
            k, v = tr.k[0, kv_of(cfg, h)].double(), tr.v[0, kv_of(cfg, h)].double()
            a = (elu_plus_one(k) @ elu_plus_one(q)) * seen
            torch.testing.assert_close(tr.context[0, h, i].double(), (a / a.sum()) @ v, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("kw", [dict(window=64, global_tokens=3), dict(summary_block=2048, causal=True)],
                         ids=["local+global", "hierarchical"])
def test_long_blockwise_rows_equal_direct_softmax_rows(kw):
    cfg = AttentionConfig(d_model=32, n_heads=2, seq_len=12_000, seed=13, **kw)
    tr = run(cfg)
    S = cfg.seq_len
    for i in (0, 2, 3, 5_000, S - 1):
        for h in range(cfg.n_heads):
            q = tr.q[0, h, i].double()
            k, v = tr.k[0, kv_of(cfg, h)].double(), tr.v[0, kv_of(cfg, h)].double()
            s = (k @ q) * cfg.effective_scale
            j = torch.arange(S)
            if cfg.summary_block is None:  # local ∪ global
                seen = (j < 3) | ((i - j).abs() < 64) | (i < 3)
                want = torch.softmax(s.masked_fill(~seen, -math.inf), 0) @ v
            else:  # own block exactly, a mean summary of each block wholly before
                b = cfg.summary_block
                own = (j // b == i // b) & (j <= i)
                before = range(i // b)
                logits = torch.cat([s[own], torch.stack([(k[c * b:(c + 1) * b].mean(0) @ q) * cfg.effective_scale
                                                         for c in before]) if before else s[:0]])
                vals = torch.cat([v[own], torch.stack([v[c * b:(c + 1) * b].mean(0) for c in before])
                                  if before else v[:0]])
                want = torch.softmax(logits, 0) @ vals
            torch.testing.assert_close(tr.context[0, h, i].double(), want, atol=2e-5, rtol=1e-4)


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import torch
    torch.set_num_threads(1)  # a memory test: one thread keeps it quick on a shared, busy CPU
    from engine import AttentionConfig, ConfigError, run

    def peak():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

    out = {{}}
    for name, kw in json.loads(sys.argv[1]).items():
        cfg = AttentionConfig(batch=1, n_heads=4, d_model=256, seq_len=65536, causal=True, **kw)
        t0 = time.perf_counter()
        tr = run(cfg)
        res = {{"s": time.perf_counter() - t0, "impl": tr.backend_impl, "peak": peak(),
                "finite": bool(torch.isfinite(tr.output).all()), "held": tr.holds_grids}}
        try:
            tr.weights
            res["refused"] = None
        except ConfigError as exc:
            res["refused"] = str(exc)
        if name == "linear":  # the last row, from q, k, v directly
            h, k, v = 3, tr.k[0, 3].double(), tr.v[0, 3].double()
            phi = lambda x: torch.where(x > 0, x + 1, torch.exp(x))
            a = phi(k) @ phi(tr.q[0, h, -1].double())
            res["last_row_err"] = float(((a / a.sum()) @ v - tr.context[0, h, -1].double()).abs().max())
        out[name] = res
        del tr
    print(json.dumps(out))
""")


def test_s65536_runs_without_a_grid_under_an_address_space_limit():
    variants = {"linear": {"kernel": "linear"}, "local+global": {"window": 256, "global_tokens": 16},
                "hierarchical": {"summary_block": 256}}
    env = {k: v for k, v in os.environ.items() if k != "ATTN_EXPLORER_MEMORY_BUDGET"}
    r = subprocess.run([sys.executable, "-c", _CHILD.format(limit=4 * GIB), json.dumps(variants)], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.splitlines()[-1])
    impls = {"linear": "linear:prefix-sums", "local+global": "local+global:blocks",
             "hierarchical": "hierarchical:blocks"}
    for name, got in res.items():
        assert got["impl"] == impls[name] and got["finite"] and not got["held"], (name, got)
        assert got["peak"] < 1.5e9, f"{name}: peak RSS {got['peak'] / 1e9:.2f} GB"
        assert got["refused"] and "GiB" in got["refused"], (name, got["refused"])  # its estimate, stated
    assert res["linear"]["last_row_err"] < 1e-4
