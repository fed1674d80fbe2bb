"""Engine benchmarks: the full eager trace and the sdpa backend vs a bare SDPA call.

Timings interleave the contenders in one loop and quote medians, so a noisy
shared machine slows both alike and the ratios stay meaningful.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from .backends import AttentionCall, attend
from .config import AttentionConfig
from .trace import run


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


def engine_benchmarks(quick: bool = False) -> dict:
    return {
        "trace_vs_sdpa": bench_trace_vs_sdpa(5 if quick else 21),
        "scale": bench_scale(1 if quick else 3),
    }
