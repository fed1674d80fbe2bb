"""What the `efficient` panel draws, Qt-free: an efficient variant against full softmax.

    view = efficient_view(config, head)      # runs two forwards: call it off the UI thread

    view.weights, view.full     (r, c) float32: the variant's implicit attention and full
                                softmax's, head `head`, batch row 0, the first r ≤ MAX_CELLS
                                queries and c ≤ MAX_CELLS keys
    view.report                 engine.ApproximationReport (None when nothing is approximated)
    view.sizes                  (n,) the sequence lengths S of the cost curves
    view.curves                 {"full", "sparse", "linear", "hierarchical"}: (flops (n,), bytes (n,))
                                from the formulas (engine.efficient.costs, engine.memory_estimate)
    view.kind                   which curve this config is on; view.point = (S, flops, bytes)

The curves are this config's layer (d_model, heads, KV heads, causal, dtype) at batch 1 with
one key per query (self-attention); each variant keeps this config's own window, global
tokens, summary block and kernel where it has them, else a typical one (window 256 and 16
global tokens, blocks of 256, the linear kernel).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import torch

import engine
from engine import AttentionConfig
from engine.efficient import costs
from engine.efficient.report import full_attention

#: the weights drawn: at most this many queries and keys (the top-left corner of longer runs)
MAX_CELLS = 256
#: the cost curves' sequence lengths: 2^3 … 2^16 (65,536 tokens)
SIZES = tuple(1 << k for k in range(3, 17))
#: the typical variant a curve shows where this config has none
TYPICAL_WINDOW, TYPICAL_GLOBAL, TYPICAL_BLOCK = 256, 16, 256
KINDS = ("full", "sparse", "linear", "hierarchical")


@dataclass(frozen=True)
class EfficientView:
    config: AttentionConfig
    head: int
    weights: np.ndarray  # (r, c)
    full: np.ndarray  # (r, c)
    rows: int  # the S and Skv the corner is cut from
    cols: int
    report: engine.ApproximationReport | None
    sizes: np.ndarray  # (n,)
    curves: dict[str, tuple[np.ndarray, np.ndarray]]
    kind: str
    point: tuple[int, float, float]


def variant_kind(config: AttentionConfig) -> str:
    """Which way out of O(n²) config takes: "hierarchical", "linear", "sparse" or "full"."""
    if config.summary_block is not None:
        return "hierarchical"
    if config.kernel != "softmax":
        return "linear"
    if config.window is not None or config.global_tokens:
        return "sparse"
    return "full"


def curve_config(config: AttentionConfig, kind: str, S: int) -> AttentionConfig:
    """The layer of `config` at sequence length S (batch 1, self-attention) with variant `kind`."""
    base = full_attention(config).replace(seq_len=S, kv_len=None, tokens=None, pad=0, batch=1)
    if kind == "sparse":
        w = config.window if config.window is not None else TYPICAL_WINDOW
        g = config.global_tokens or TYPICAL_GLOBAL
        return base.replace(window=min(w, S), global_tokens=min(g, S))
    if kind == "linear":
        kernel = config.kernel if config.kernel != "softmax" else "linear"
        return base.replace(kernel=kernel, n_features=config.n_features,
                            positional="none" if base.positional == "alibi" else base.positional)
    if kind == "hierarchical":
        return base.replace(summary_block=min(config.summary_block or TYPICAL_BLOCK, S))
    return base


def cost_curves(config: AttentionConfig) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(sizes, {kind: (flops, bytes)}) of every variant from the formulas (no run; about a
    second, so kept per layer: the curves do not depend on S, the tokens or the seed)."""
    key = tuple(getattr(config, f) for f in ("d_model", "n_heads", "n_kv_heads", "causal", "dtype", "positional",
                                              "window", "global_tokens", "summary_block", "kernel", "n_features"))
    with _CURVES_LOCK:
        hit = _CURVES.get(key)
    if hit is None:
        hit = _cost_curves(config)
        with _CURVES_LOCK:
            _CURVES[key] = hit
            while len(_CURVES) > 16:
                _CURVES.pop(next(iter(_CURVES)))
    return hit


_CURVES: dict[tuple, tuple] = {}
_CURVES_LOCK = threading.Lock()


def _cost_curves(config: AttentionConfig):
    sizes = np.array(SIZES, dtype=np.float64)
    curves = {}
    for kind in KINDS:
        cfgs = [curve_config(config, kind, S) for S in SIZES]
        curves[kind] = (np.array([costs.flops(c) for c in cfgs], dtype=np.float64),
                        np.array([engine.memory_estimate(c)["total"] for c in cfgs], dtype=np.float64))
    return sizes, curves


def _corner(config: AttentionConfig, head: int, x: torch.Tensor | None,
            progress=None) -> tuple[np.ndarray, int, int]:
    """The first MAX_CELLS queries and keys of head `head`'s weights (batch row 0);
    `progress` goes to engine.run (an exception it raises stops the run)."""
    tr = engine.run(config, x, progress)
    r, c = min(config.seq_len, MAX_CELLS), min(config.key_len, MAX_CELLS)
    with torch.inference_mode():
        rows = tr.head_rows("weights", head, slice(0, r), 0)[:, :c]
    return rows.float().numpy().copy(), config.seq_len, config.key_len


def efficient_view(config: AttentionConfig, head: int, progress=None) -> EfficientView:
    """The panel's data for `config` and `head` (two forwards and the report: seconds at
    long S; the report is None when config approximates nothing, and then the one forward is
    both). `progress(done, total)` is handed to the forwards: an exception it raises (the
    panel's worker: a newer request) stops them within ~0.1 s."""
    head = max(0, min(head, config.n_heads - 1))
    full_cfg = full_attention(config)
    if full_cfg.backend != "eager" and engine.memory_estimate(full_cfg.replace(backend="eager"))["head"] < (1 << 28):
        full_cfg = full_cfg.replace(backend="eager")  # the weights drawn come from eager anyway
    x = None  # both runs draw the same input from the seed
    weights, rows, cols = _corner(config, head, x, progress)
    full = weights if full_cfg == config else _corner(full_cfg, head, x, progress)[0]
    if progress is not None:
        progress(0, 1)  # a cancel taken before the report's two forwards
    report = engine.approximation_report(config, x) if config != full_attention(config) else None
    sizes, curves = cost_curves(config)
    kind = variant_kind(config)
    point = (config.seq_len, float(costs.flops(config)), float(engine.memory_estimate(config)["total"]))
    return EfficientView(config=config, head=head, weights=weights, full=full, rows=rows, cols=cols,
                         report=report, sizes=sizes, curves=curves, kind=kind, point=point)
