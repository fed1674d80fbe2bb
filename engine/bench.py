"""Engine benchmarks: the full eager trace and the sdpa backend vs a bare SDPA call, and
the long-context run (issue 16): flash and sdpa at S=8192 against a bare SDPA layer, and
their peak RSS measured in a subprocess; the efficient variants at S=65,536 (issue 45:
linear, local + global, hierarchical) against bare torch doing the same arithmetic.

Timings interleave the contenders in one loop and quote medians, so a noisy
shared machine slows both alike and the ratios stay meaningful.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from .backends import AttentionCall, attend
from .config import AttentionConfig, ConfigError
from .memory import format_bytes, memory_estimate
from .trace import run

#: The long-context target of issue 16: B=1, H=16, S=8192, Dh=64, float32.
LONG_CONTEXT = {"d_model": 1024, "n_heads": 16, "seq_len": 8192}
#: Its goals: peak RSS of a fused run (bytes), and its time over a bare SDPA layer.
LONG_CONTEXT_GOALS = {"peak_rss_bytes": 1.5e9, "time_over_bare_layer": 1.3}


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 2) -> dict[str, float]:
    """Median milliseconds of each callable, measured round-robin."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - t) * 1e3)
    return {k: statistics.median(v) for k, v in samples.items()}


def bench_trace_vs_sdpa(repeats: int = 15) -> dict:
    """B=1, H=16, S=512, Dh=64, float32: full trace and sdpa backend vs bare SDPA."""
    cfg = AttentionConfig(d_model=1024, n_heads=16, seq_len=512)
    tr = run(cfg)
    q, k, v = tr.q, tr.k, tr.v
    call = AttentionCall(cfg, q, k, v, tr.mask, None, cfg.effective_scale)
    w = tr.weights_used
    x = tr.x

    def layer_with_sdpa():  # the same projections + bare SDPA: a whole attention layer
        with torch.inference_mode():
            qq = (x @ w.w_q).view(1, 512, 16, 64).transpose(1, 2)
            kk = (x @ w.w_k).view(1, 512, 16, 64).transpose(1, 2)
            vv = (x @ w.w_v).view(1, 512, 16, 64).transpose(1, 2)
            o = F.scaled_dot_product_attention(qq, kk, vv)
            return o.transpose(1, 2).reshape(1, 512, 1024) @ w.w_o

    def bare():
        with torch.inference_mode():
            return F.scaled_dot_product_attention(q, k, v)

    def backend():
        with torch.inference_mode():
            return attend("sdpa", call)

    med = interleaved_medians(
        {"bare_sdpa": bare, "sdpa_backend": backend, "full_trace": lambda: run(cfg),
         "layer_sdpa": layer_with_sdpa}, repeats)
    return {
        "config": "B=1 H=16 S=512 Dh=64 float32",
        "median_ms": med,
        "trace_over_bare_sdpa": med["full_trace"] / med["bare_sdpa"],
        "trace_over_layer_sdpa": med["full_trace"] / med["layer_sdpa"],
        "sdpa_backend_overhead": med["sdpa_backend"] / med["bare_sdpa"] - 1.0,
    }


def bench_scale(repeats: int = 3) -> dict:
    """Trace time and tensor memory as S grows (H=8, d_model=512): the O(n²) lesson."""
    rows = []
    for S in (256, 1024, 2048):
        cfg = AttentionConfig(d_model=512, n_heads=8, seq_len=S)
        med = interleaved_medians({"eager": lambda c=cfg: run(c),
                                   "flash": lambda c=cfg: run(c.replace(backend="flash"))},
                                  repeats, warmup=1)
        rows.append({"S": S, "eager_trace_ms": med["eager"], "flash_trace_ms": med["flash"],
                     "grid_MiB": 8 * S * S * 4 / 2**20})
    return {"config": "H=8 d_model=512 float32", "rows": rows}


_PEAK_CHILD = textwrap.dedent("""
    import json, sys, time
    import engine
    from engine import AttentionConfig, run

    def status(key):  # this process's VmHWM (peak RSS) or VmRSS, in bytes
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    cfg = AttentionConfig(backend=sys.argv[1], **json.loads(sys.argv[2]))
    out = {"baseline_rss": status("VmRSS")}
    t0 = time.perf_counter()
    trace = run(cfg)
    out.update(run_s=time.perf_counter() - t0, impl=trace.backend_impl, peak_run=status("VmHWM"))
    if sys.argv[3] == "1":  # what the window needs of every head, computed head by head
        t0 = time.perf_counter()
        engine.trace_head_summary(trace, only=("mean_entropy", "sink_mass", "mean_distance"))
        trace.softmax_jacobian_norm, engine.overflow_report(trace)
        out.update(summaries_s=time.perf_counter() - t0, peak_with_summaries=status("VmHWM"),
                   max_abs_diff=trace.backend_max_abs_diff)
    print(json.dumps(out))
""")


def peak_rss(backend: str, config: dict, summaries: bool, timeout_s: float = 900) -> dict:
    """Run ``config`` with ``backend`` in a fresh subprocess; its peak RSS (VmHWM) after the
    run and, with ``summaries``, after the per-head summaries, Jacobian rows and overflow
    report the window shows (computed head by head), plus the seconds each took."""
    env = {k: v for k, v in os.environ.items() if k != "ATTN_EXPLORER_MEMORY_BUDGET"}
    r = subprocess.run([sys.executable, "-c", _PEAK_CHILD, backend, json.dumps(config), "1" if summaries else "0"],
                       cwd=Path(__file__).resolve().parents[1], env=env, capture_output=True, text=True,
                       timeout=timeout_s)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit status {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench_long_context(repeats: int = 3, summaries: bool = True) -> dict:
    """flash and sdpa at B=1, H=16, S=8192, Dh=64, float32 (issue 16).

    Time: ``engine.run`` of each, interleaved with a bare layer on the same input and
    weights: the three projections, one F.scaled_dot_product_attention call on contiguous
    (B, H, S, Dh) tensors (its fast layout) and W_O; medians, and their ratio in one run.
    Memory: each backend's peak RSS in a fresh subprocess (run, then the per-head summaries
    the window needs); eager's estimate, which the budget refuses.
    """
    cfg = AttentionConfig(**LONG_CONTEXT, backend="flash")
    B, S, d, H = cfg.batch, cfg.seq_len, cfg.d_model, cfg.n_heads
    probe = run(cfg)
    x, w = probe.x, probe.weights_used
    del probe

    def bare_layer():
        with torch.inference_mode():
            q, k, v = ((x @ m).view(B, S, H, -1).transpose(1, 2).contiguous() for m in (w.w_q, w.w_k, w.w_v))
            o = F.scaled_dot_product_attention(q, k, v)
            return o.transpose(1, 2).reshape(B, S, d) @ w.w_o

    med = interleaved_medians({"bare_sdpa_layer": bare_layer,
                               "flash_run": lambda: run(cfg),
                               "sdpa_run": lambda: run(cfg.replace(backend="sdpa"))},
                              repeats, warmup=1 if repeats > 1 else 0)
    rss = {b: peak_rss(b, LONG_CONTEXT, summaries) for b in ("flash", "sdpa")}
    eager = memory_estimate(cfg.replace(backend="eager"))
    out = {
        "config": "B=1 H=16 S=8192 Dh=64 float32",
        "median_ms": med,
        "flash_over_bare_layer": med["flash_run"] / med["bare_sdpa_layer"],
        "sdpa_over_bare_layer": med["sdpa_run"] / med["bare_sdpa_layer"],
        "peak_rss": rss,
        "eager_estimate": format_bytes(eager["total"]),
        "fused_estimate": format_bytes(memory_estimate(cfg)["total"]),
        "goals": {"peak_rss": "< 1.5 GB", "time_over_bare_layer": "≤ 1.3"},
    }
    peaks = [r.get("peak_with_summaries", r.get("peak_run")) for r in rss.values()]
    out["verdict"] = "ok" if (
        all(p is not None and p < LONG_CONTEXT_GOALS["peak_rss_bytes"] for p in peaks)
        and max(out["flash_over_bare_layer"], out["sdpa_over_bare_layer"]) <= LONG_CONTEXT_GOALS["time_over_bare_layer"]
    ) else "MISSED"
    return out


def engine_benchmarks(quick: bool = False) -> dict:
    return {
        "trace_vs_sdpa": bench_trace_vs_sdpa(5 if quick else 21),
        "scale": bench_scale(1 if quick else 3),
        "long_context": bench_long_context(1 if quick else 5, summaries=not quick),
    }


# ---- issue 45: the ways out of O(n²) at S = 65,536 ----------------------------------------------
#: B=1, H=4, d_model=256 (Dh=64), S=65,536, causal, float32: the shape of issue 45's goals.
EFFICIENT = {"d_model": 256, "n_heads": 4, "seq_len": 65536, "causal": True}
#: Each variant's extra fields and its goals: median seconds of engine.run, peak RSS bytes.
EFFICIENT_VARIANTS = {
    "linear": ({"kernel": "linear"}, 2.0, 1.0e9),
    "local+global": ({"window": 256, "global_tokens": 16}, 4.0, 1.5e9),
    "hierarchical": ({"summary_block": 256}, 4.0, 1.5e9),
}


def _bare_linear(q, k, v, chunk: int = 64):
    """Causal linear attention (φ = elu + 1) in plain torch: per chunk of 64, the exclusive
    prefix state φ(K)ᵀ[V, 1] of the chunks before and the masked product inside the chunk."""
    B, H, S, D = q.shape
    n = S // chunk
    pq, pk = F.elu(q) + 1, F.elu(k) + 1
    vz = torch.cat([v, torch.ones(B, H, S, 1)], -1)
    pq, pk, vz = (t.view(B, H, n, chunk, -1) for t in (pq, pk, vz))
    states = pk.transpose(-2, -1) @ vz  # (B, H, n, D, D + 1)
    states = states.cumsum(2) - states  # exclusive: the chunks before
    out = pq @ states + ((pq @ pk.transpose(-2, -1)).tril_() @ vz)
    out = out.view(B, H, S, D + 1)
    return out[..., :D] / out[..., D:]


def _bare_local_global(q, k, v, window: int, g: int, rows: int = 256):
    """Causal local (window) ∪ global (g first positions) softmax attention in plain torch: a
    block of query rows at a time, one SDPA call over its keys (the global ones and its window)
    with a boolean mask; the global queries (rows < g) over every key before them."""
    S = q.shape[2]
    out = torch.empty_like(q)
    i = torch.arange(S)
    out[:, :, :g] = F.scaled_dot_product_attention(q[:, :, :g], k[:, :, :g], v[:, :, :g], is_causal=True)
    for a in range(g, S, rows):
        b = min(S, a + rows)
        lo = max(g, a - window + 1)
        keys = torch.cat([i[:g], i[lo:b]])
        m = (keys[None, :] <= i[a:b, None]) & ((keys[None, :] < g) | (keys[None, :] > i[a:b, None] - window))
        out[:, :, a:b] = F.scaled_dot_product_attention(q[:, :, a:b], k[:, :, keys], v[:, :, keys], attn_mask=m)
    return out


def _bare_hierarchical(q, k, v, block: int, group: int = 16):
    """Causal hierarchical attention in plain torch (S a multiple of the block): each block's
    own keys (causal) and the mean key/value of every block before it, one softmax; a group of
    blocks at a time."""
    B, H, S, D = q.shape
    n = S // block
    scale = D ** -0.5
    kb, vb = k.view(B, H, n, block, D), v.view(B, H, n, block, D)
    ks, vs = kb.mean(3), vb.mean(3)  # (B, H, n, D)
    own = torch.ones(block, block, dtype=torch.bool).tril()
    out = torch.empty_like(q).view(B, H, n, block, D)
    for c0 in range(0, n, group):
        c1 = min(n, c0 + group)
        qb = q.view(B, H, n, block, D)[:, :, c0:c1] * scale  # (B, H, c, b, D)
        s_own = (qb @ kb[:, :, c0:c1].transpose(-2, -1)).masked_fill_(~own, float("-inf"))
        s_sum = qb @ ks[:, :, None, :c1].transpose(-2, -1)  # (B, H, c, b, c1)
        before = torch.arange(c1)[None, :] < torch.arange(c0, c1)[:, None]  # (c, c1)
        s_sum.masked_fill_(~before[:, None, :], float("-inf"))
        w = torch.softmax(torch.cat([s_own, s_sum], -1), -1)
        out[:, :, c0:c1] = w[..., :block] @ vb[:, :, c0:c1] + w[..., block:] @ vs[:, :, None, :c1]
    return out.view(B, H, S, D)


def _bare_layer(x, w, attention):
    """The projections, ``attention(q, k, v)`` on (B, H, S, Dh) and W_O: one bare layer."""
    B, S, d = x.shape
    H = EFFICIENT["n_heads"]
    with torch.inference_mode():
        q, k, v = ((x @ m).view(B, S, H, -1).transpose(1, 2).contiguous() for m in (w.w_q, w.w_k, w.w_v))
        o = attention(q, k, v)
        return o.transpose(1, 2).reshape(B, S, d) @ w.w_o


def _cpu_seconds(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def bench_efficient(repeats: int = 3) -> dict:
    """Linear, local + global (window 256, 16 global) and hierarchical (blocks of 256) at
    B=1, H=4, d_model=256, S=65,536, causal, float32 (issue 45).

    Time: the median of ``engine.run`` of each, interleaved with a bare torch layer doing the
    same arithmetic on the same input and weights (the projections, the variant's attention
    written plainly, W_O), and the CPU seconds of one more run of each (what the work costs
    where other processes take the cores: wall time on a shared machine is not the work).
    Memory: each variant's peak RSS in a fresh subprocess. Full softmax: its eager run refused,
    with the estimate it states.
    """
    base = AttentionConfig(**EFFICIENT)
    probe = run(base.replace(kernel="linear"))
    x, w = probe.x, probe.weights_used
    del probe
    cfgs = {name: base.replace(**kw) for name, (kw, _t, _m) in EFFICIENT_VARIANTS.items()}
    bare = {
        "linear": lambda q, k, v: _bare_linear(q, k, v),
        "local+global": lambda q, k, v: _bare_local_global(q, k, v, 256, 16),
        "hierarchical": lambda q, k, v: _bare_hierarchical(q, k, v, 256),
    }
    fns = {}
    for name, cfg in cfgs.items():
        fns[name] = lambda c=cfg: run(c)
        fns[f"bare {name}"] = lambda a=bare[name]: _bare_layer(x, w, a)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    med = interleaved_medians(fns, repeats, warmup=1 if repeats > 1 else 0)
    cpu = {name: _cpu_seconds(fn) for name, fn in fns.items()}
    rows = {}
    for name, (kw, goal_s, goal_rss) in EFFICIENT_VARIANTS.items():
        rss = peak_rss("eager", {**EFFICIENT, **kw}, summaries=False)
        s = med[name] / 1e3
        peak = rss.get("peak_run")
        rows[name] = {
            "median_s": s, "cpu_s": cpu[name], "bare_median_s": med[f"bare {name}"] / 1e3,
            "bare_cpu_s": cpu[f"bare {name}"], "over_bare": med[name] / med[f"bare {name}"],
            "peak_rss_bytes": peak, "impl": rss.get("impl", rss.get("error")),
            "goal": f"≤ {goal_s:g} s, ≤ {goal_rss / 1e9:g} GB",
            "verdict": "ok" if (peak is not None and s <= goal_s and peak <= goal_rss) else "MISSED",
        }
    try:
        run(base)
        full = "ran (it should have been refused)"
    except ConfigError as exc:
        full = str(exc)
    return {
        "config": "B=1 H=4 d_model=256 (Dh=64) S=65536 causal float32",
        "variants": rows,
        "full_softmax_eager": full,
        "full_softmax_estimate": format_bytes(memory_estimate(base)["total"]),
        "load_average_1min": [load_before, os.getloadavg()[0] if hasattr(os, "getloadavg") else None],
        "torch_threads": torch.get_num_threads(),
    }


def efficient_table(res: dict) -> str:
    """The efficient part as a few lines for the bench's text output."""
    lines = [f"efficient attention ({res['config']}; load average {res['load_average_1min']}, "
             f"torch {res['torch_threads']} threads)",
             f"{'variant':<14} {'median':>8} {'cpu':>7} {'bare torch':>10} {'bare cpu':>8} {'×bare':>6} "
             f"{'peak RSS':>9}  goal"]
    for name, r in res["variants"].items():
        peak = "?" if r["peak_rss_bytes"] is None else f"{r['peak_rss_bytes'] / 1e9:.2f} GB"
        lines.append(f"{name:<14} {r['median_s']:>7.2f}s {r['cpu_s']:>6.2f}s {r['bare_median_s']:>9.2f}s "
                     f"{r['bare_cpu_s']:>7.2f}s {r['over_bare']:>6.2f} {peak:>9}  {r['goal']} {r['verdict']}")
    lines.append(f"full softmax (eager): refused: {res['full_softmax_eager']}")
    return "\n".join(lines)


def efficient_benchmarks(quick: bool = False) -> dict:
    return bench_efficient(1 if quick else 3)


if __name__ == "__main__":  # python -m engine.bench efficient [--quick] [--json]: this part alone
    if len(sys.argv) > 1 and sys.argv[1] == "efficient":
        result = efficient_benchmarks(quick="--quick" in sys.argv)
        print(json.dumps(result, indent=2) if "--json" in sys.argv else efficient_table(result))
