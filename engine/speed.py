"""How fast this machine multiplies matrices, per dtype: what a run's time is estimated from.

float16 matmuls on some CPUs run ~100× slower than float32 (no native half arithmetic), so
the same config can take 20 ms or 20 s. `estimate_seconds(config)` = the run's FLOPs
(engine.stage_costs) / the measured rate, measured once per process and dtype with a
small product (~20 ms in float32; about 0.1 s in float16 on the slowest CPU seen).
"""

from __future__ import annotations

import threading
import time

import torch

from .config import AttentionConfig
from .costs import stage_costs
from .inputs import torch_dtype

_RATES: dict[tuple[str, str], float] = {}
_LOCK = threading.Lock()


def matmul_flops_per_s(dtype: str, device: str = "cpu") -> float:
    """Measured FLOP/s of a (256 × 256) · (256 × 256) product in `dtype` (cached)."""
    key = (dtype, device)
    with _LOCK:
        if key in _RATES:
            return _RATES[key]
    dt = torch_dtype(dtype)
    n = 256  # (smaller products flatter the slow dtypes: 96² ran 4× faster per FLOP in float16)
    a = torch.randn(n, n).to(device, dt)
    b = torch.randn(n, n).to(device, dt)
    with torch.inference_mode():
        a @ b  # warm up
        reps, t0 = 0, time.perf_counter()
        while True:
            a @ b
            reps += 1
            elapsed = time.perf_counter() - t0
            if elapsed > 0.02 or reps >= 200:  # (one product is enough where it is slow)
                break
    rate = 2 * n**3 * reps / max(elapsed, 1e-9)
    with _LOCK:
        _RATES[key] = rate
    return rate


def estimate_seconds(config: AttentionConfig) -> float:
    """Seconds a run of `config` should take here: its FLOPs at the measured matmul rate."""
    flops = sum(s["flops"] for s in stage_costs(config))
    return flops / matmul_flops_per_s(config.dtype, config.device)


def projection_seconds(config: AttentionConfig) -> float:
    """The estimated seconds of the Q, K, V and output projections alone (the d_model² work)."""
    costs = {s["stage"]: s["flops"] for s in stage_costs(config)}
    flops = costs["QKV projection"] + costs["output projection"]
    return flops / matmul_flops_per_s(config.dtype, config.device)
