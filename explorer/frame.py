"""What the panels draw, derived from one engine trace, without Qt.

`build_frame(config)` runs in the worker thread: it calls `engine.run` and turns
the trace of batch row 0 into float32 numpy arrays plus the per-head numbers,
so the UI thread only copies arrays into plot items. Nothing here computes
attention; it reshapes and summarises what the engine computed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import torch

import engine
from engine import AttentionConfig, AttentionTrace


def _np(t: torch.Tensor) -> np.ndarray:
    """float32 numpy view/copy of a CPU tensor (bfloat16 has no numpy dtype)."""
    if t.dtype != torch.float32:
        t = t.float()
    return t.detach().numpy()


@dataclass
class Frame:
    """One computed config, ready to draw. Arrays are batch row 0, float32.

    x (S, d) · q, context (H, S, Dh) · k, v (Hkv, Skv, Dh) · w_q (d, H·Dh) · w_k, w_v (d, Hkv·Dh)
    scores_raw, scores, weights (H, S, Skv) · mask (S, Skv) bool
    jac_norm, entropy (H, S) · per-head metrics (H,)
    """

    request_id: int
    config: AttentionConfig
    trace: AttentionTrace
    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    context: np.ndarray  # (H, S, Dh) weights · V
    scores_raw: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    weights_shown: np.ndarray  # weights with masked zero cells as NaN (drawn hatched)
    mask: np.ndarray
    jac_norm: np.ndarray
    entropy: np.ndarray
    valid_rows: np.ndarray  # (H, S) rows without NaN
    head_entropy: np.ndarray
    sink_mass: np.ndarray
    mean_distance: np.ndarray
    weight_max: float
    overflow: Any  # engine.diagnostics.OverflowReport
    stage_costs: list[dict]
    query_labels: list[str]
    key_labels: list[str]
    compute_ms: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    backends: dict[str, dict] | None = None  # filled later by measure_backends

    @property
    def backend_impl(self) -> str:
        return self.trace.backend_impl


def token_labels(config: AttentionConfig) -> tuple[list[str], list[str]]:
    """Axis labels for queries and keys: the tokens when set, else positions.

    Cross-attention keys come from a separate memory, labelled m0, m1, ...
    """
    S, Skv = config.seq_len, config.key_len
    if config.tokens is not None:
        q = [f"{t}" for t in config.tokens]
    else:
        q = [str(i) for i in range(S)]
    if config.kv_len is None:
        k = list(q)
    else:
        k = [f"m{j}" for j in range(Skv)]
    return q, k


def build_frame(config: AttentionConfig, request_id: int = 0) -> Frame:
    """Run the engine for `config` and derive everything the panels show.

    Raises engine.ConfigError / engine.BackendUnavailable as the engine does.
    """
    t0 = time.perf_counter()
    trace = engine.run(config)
    t1 = time.perf_counter()
    wts = trace.weights_used
    weights = _np(trace.weights[0])
    mask = trace.mask.numpy()
    # masked keys that got exactly zero weight are drawn as holes (hatched);
    # masked keys with weight (a fully masked row with -1e9 / min) keep their colour
    if mask.all():
        weights_shown = weights
    else:
        weights_shown = weights.copy()
        np.copyto(weights_shown, np.float32(np.nan), where=(~mask)[None, :, :] & (weights == 0))
    entropy = _np(trace.entropy[0])
    m = engine.trace_head_summary(trace, only=("mean_entropy", "sink_mass", "mean_distance"))  # (H,) tensors
    valid_rows = ~np.isnan(weights).any(-1)  # (H, S); fully masked "-inf" rows are NaN
    finite_max = np.nanmax(weights) if weights.size and not np.isnan(weights).all() else 1.0
    q_labels, k_labels = token_labels(config)
    frame = Frame(
        request_id=request_id,
        config=config,
        trace=trace,
        x=_np(trace.x[0]),
        q=_np(trace.q[0]),
        k=_np(trace.k[0]),
        v=_np(trace.v[0]),
        w_q=_np(wts.w_q),
        w_k=_np(wts.w_k),
        w_v=_np(wts.w_v),
        context=_np(trace.context[0]),
        scores_raw=_np(trace.scores_raw[0]),
        scores=_np(trace.scores[0]),
        weights=weights,
        weights_shown=weights_shown,
        mask=mask,
        jac_norm=_np(trace.softmax_jacobian_norm[0]),
        entropy=entropy,
        valid_rows=valid_rows,
        head_entropy=_np(m["mean_entropy"]),
        sink_mass=_np(m["sink_mass"]),
        mean_distance=_np(m["mean_distance"]),
        weight_max=float(finite_max) if math.isfinite(finite_max) and finite_max > 0 else 1.0,
        overflow=engine.overflow_report(trace),
        stage_costs=engine.stage_costs(config),
        query_labels=q_labels,
        key_labels=k_labels,
        compute_ms=0.0,
        timings_ms=dict(trace.timings_ms),
    )
    t2 = time.perf_counter()
    frame.timings_ms["engine"] = (t1 - t0) * 1e3
    frame.timings_ms["derive"] = (t2 - t1) * 1e3
    frame.compute_ms = (t2 - t0) * 1e3
    return frame


def measure_backends(config: AttentionConfig) -> dict[str, dict]:
    """engine.run_backend_comparison: each backend's impl, max |Δ| vs eager and time."""
    return engine.run_backend_comparison(config)


@lru_cache(maxsize=1)
def scaling_sweep() -> dict[str, np.ndarray]:
    """engine.scaling_sweep as numpy; it does not depend on the config, so computed once."""
    return {k: v.numpy().astype(np.float64) for k, v in engine.scaling_sweep().items()}


def gaussian_pdf(x: np.ndarray, std: float) -> np.ndarray:
    """N(0, std²) density at x."""
    std = max(std, 1e-12)
    return np.exp(-0.5 * (x / std) ** 2) / (std * math.sqrt(2 * math.pi))


def histogram(values: np.ndarray, bins: int = 60) -> tuple[np.ndarray, np.ndarray, int]:
    """(edges, density, n_nonfinite) of the finite values; density integrates to 1."""
    flat = values.ravel()
    finite = np.isfinite(flat)
    n_bad = int(flat.size - finite.sum())
    v = flat[finite] if n_bad else flat
    if v.size == 0:
        return np.array([-1.0, 1.0]), np.zeros(1), n_bad
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    density = counts / (v.size * (edges[1] - edges[0]))
    return edges, density, n_bad


def finite_std(values: np.ndarray) -> float:
    v = values[np.isfinite(values)]
    return float(v.std()) if v.size else float("nan")
