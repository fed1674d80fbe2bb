"""engine.approximation_report: what an efficient variant costs in accuracy, and saves in
FLOPs and bytes, against full attention on the same layer (DESIGN.md, "Efficient attention").

Full attention is the same config with kernel="softmax", window=None, global_tokens=0 and
summary_block=None: the same input, weights and positions, so the two outputs differ only by
the attention pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..config import AttentionConfig, ConfigError
from ..memory import check_lazy_memory, memory_estimate, row_slices
from ..trace import run
from . import costs


@dataclass(frozen=True)
class ApproximationReport:
    """output_rel_error: ‖output − output_full‖ / ‖output_full‖ (Frobenius, the whole
    (B, S, d_model) output); weights_tv: the mean over query rows (every batch row and head)
    of ½·Σ_j |A_ij − A_full_ij|, None where one head's grids do not fit the memory budget;
    flops, flops_full: one layer's FLOPs (engine.efficient.costs); bytes, bytes_full: what
    each run holds at its peak (engine.memory_estimate's total). Rows that see no key (NaN
    with mask_value "-inf") count in neither number."""

    config: AttentionConfig
    full_config: AttentionConfig
    output_rel_error: float
    weights_tv: float | None
    flops: float
    flops_full: float
    bytes: int
    bytes_full: int


def full_attention(config: AttentionConfig) -> AttentionConfig:
    """The same layer with full softmax attention (causal and padding kept)."""
    return config.replace(kernel="softmax", window=None, global_tokens=0, summary_block=None)


def _run_full(full: AttentionConfig, x):
    """The full trace: its own backend, or, where eager's grids are over the budget, a fused
    backend (the same output without the grids)."""
    try:
        return run(full, x)
    except ConfigError:
        if full.backend != "eager":
            raise
        return run(full.replace(backend="flash"), x)


def _weights_tv(tr, tr_full) -> float | None:
    """Mean over valid query rows of ½·Σ|A − A_full|, a block of rows of one head at a time
    (None where a head's grids do not fit)."""
    cfg = tr.config
    try:
        for t in (tr, tr_full):
            if t.blocked:
                check_lazy_memory(t.config, "head", t.memory_estimate)
    except ConfigError:
        return None
    total, rows_n = 0.0, 0
    with torch.inference_mode():
        for b in range(cfg.batch):
            for h in range(cfg.n_heads):
                for rows in row_slices(cfg):
                    a = tr.head_rows("weights", h, rows, b).double()
                    f = tr_full.head_rows("weights", h, rows, b).double()
                    tv = 0.5 * (a - f).abs().sum(-1)  # (r,)
                    ok = torch.isfinite(tv)
                    total += float(tv[ok].sum())
                    rows_n += int(ok.sum())
    return total / rows_n if rows_n else None


def approximation_report(config: AttentionConfig, x: torch.Tensor | None = None) -> ApproximationReport:
    """Run ``config`` and its full attention (:func:`full_attention`) on the same input ``x``
    (drawn from the seed when None) and compare them (:class:`ApproximationReport`)."""
    if not isinstance(config, AttentionConfig):
        raise ConfigError(f"approximation_report() needs an AttentionConfig, got {type(config).__name__}")
    full = full_attention(config)
    tr = run(config, x)
    tr_full = _run_full(full, x)
    out, ref = tr.output.double(), tr_full.output.double()
    ok = torch.isfinite(ref) & torch.isfinite(out)
    denom = float(ref[ok].norm())
    rel = float((out - ref)[ok].norm()) / denom if denom > 0 else 0.0
    return ApproximationReport(
        config=config, full_config=full, output_rel_error=rel, weights_tv=_weights_tv(tr, tr_full),
        flops=costs.flops(config), flops_full=costs.flops(full),
        bytes=memory_estimate(config)["total"], bytes_full=memory_estimate(full)["total"])
