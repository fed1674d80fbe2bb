"""The numbers that explain *why*: per-head summaries, overflow, costs, the √d_k sweep."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import torch

from .config import AttentionConfig
from .inputs import torch_dtype
from .kvcache import kv_cache_bytes
from .masks import KeyRanges
from .rows import (
    HEAD_METRICS,
    finite_abs_max,
    head_metrics,
    key_distances,
    softmax_jacobian_norm,
    stats_for,
    weight_row_stats,
)
from .seeding import generator
from .trace import AttentionTrace

FLOAT16_MAX = 65504.0


def head_summary(weights: torch.Tensor, q_offset: int = 0,
                 entropy: torch.Tensor | None = None,
                 only: tuple[str, ...] = HEAD_METRICS) -> dict[str, torch.Tensor]:
    """Per-head metrics of weights (H, S, Skv); each value is an (H,) float32 tensor.

    Query i sits at position i + q_offset (Skv − S under our convention), key j
    at j. Fully masked (NaN) rows are left out of every mean. `entropy` (H, S)
    may pass the row entropies already computed (the trace holds them).
      mean_entropy   mean row entropy, nats (log Skv = uniform, 0 = one-hot)
      max_weight     largest single weight
      sink_mass      mean weight on key 0 (the "attention sink")
      mean_distance  mean Σ_j p_ij·|pos(i) − j|, in tokens
      diagonal       mean weight on key pos(i) (attend to yourself)
      previous_token mean weight on key pos(i) − 1
    `only` names the metrics wanted (the explorer's frame needs three of the six).
    The same reductions of per-row statistics (engine.rows) serve a long trace head by head.
    """
    stats = stats_for(only)
    S, Skv = weights.shape[-2], weights.shape[-1]
    rows = weight_row_stats(weights, torch.arange(S) + q_offset, stats,
                            entropy=entropy if "mean_entropy" in only else None,
                            distances=_kept_distances(S, q_offset, Skv) if "distance" in stats else None)
    return head_metrics(rows, only)


_KEPT_CELLS = 512 * 512  # the largest distance grid kept (1 MiB; 16 kept at most)


def _kept_distances(S: int, q_offset: int, Skv: int) -> torch.Tensor | None:
    """key_distances of queries at q_offset … q_offset + S − 1, (S, Skv), kept for the next
    call of the same shape; None past _KEPT_CELLS (weight_row_stats then makes its own)."""
    return _distances(S, q_offset, Skv) if S * Skv <= _KEPT_CELLS else None


@lru_cache(maxsize=16)
def _distances(S: int, q_offset: int, Skv: int) -> torch.Tensor:
    """Shared, never written (a plain tensor even when first made under inference mode: a
    caller with gradients reads it)."""
    with torch.inference_mode(False):
        return key_distances(torch.arange(S) + q_offset, Skv)


def trace_head_summary(trace: AttentionTrace, batch: int = 0,
                       only: tuple[str, ...] = HEAD_METRICS) -> dict[str, torch.Tensor]:
    """head_summary of one batch row of a trace: from its whole weights when they are held
    (or small), else head by head from :meth:`AttentionTrace.row_stats`, which never holds
    more than a block of one head's grids."""
    cfg = trace.config
    if not trace.blocked:
        entropy = trace.entropy[batch] if "mean_entropy" in only else None
        return head_summary(trace.weights[batch], cfg.key_len - cfg.seq_len, entropy, only)
    stats = stats_for(only)
    per_head = trace.row_stats(batch)  # every head in one pass
    rows = {name: torch.stack([r[name] for r in per_head]) for name in stats}  # (H, S)
    return head_metrics(rows, only)


@dataclass(frozen=True)
class OverflowReport:
    """What went numerically wrong in a trace, with one-line explanations."""

    inf_scores_raw: int  # entries of Q·Kᵀ that overflowed to ±inf
    inf_scores: int  # non-masked softmax inputs that are ±inf
    nan_rows: int  # weight rows containing NaN
    fully_masked_rows: int  # query rows that may see no key at all
    max_abs_score_raw: float  # largest finite |Q·Kᵀ| (of the sampled rows when sampled_rows is set)
    messages: tuple[str, ...]
    #: the query rows max_abs_score_raw was taken over when not every row (a long linear-kernel,
    #: local ∪ global or hierarchical trace: AttentionTrace.raw_sample); None when it is over
    #: every row. The counts are exact.
    sampled_rows: int | None = None

    @property
    def ok(self) -> bool:
        return not self.messages


def overflow_report(trace: AttentionTrace) -> OverflowReport:
    """Count overflows, NaN rows and fully masked rows; explain each in one line.

    The common case (nothing wrong) is decided by cheap reductions, without
    the per-entry scans: this runs on every slider move. A blocked (long, fused)
    trace, or one whose every head's rows are kept (a long frame), is counted head by head
    from its per-row statistics.
    """
    cfg = trace.config
    if trace.blocked or trace.rows_kept:  # (kept rows: no scan of the whole grids)
        rep = _report(cfg, *_blocked_counts(trace))
        sample = trace.raw_sample
        return rep if sample is None else replace(rep, sampled_rows=len(sample))
    # max |Q·Kᵀ| is finite exactly when every entry is (amax propagates NaN)
    top = float(trace.scores_raw.abs().amax().float()) if trace.scores_raw.numel() else float("nan")
    if (
        trace.key_ranges.any(-1).all()
        and (math.isfinite(top) or not trace.scores_raw.numel())
        and not torch.isnan(trace.weights).any()
        and not (torch.isinf(trace.scores) & trace.mask).any()
    ):
        return OverflowReport(0, 0, 0, 0, top, ())
    raw = trace.scores_raw.float()
    inf_raw = int(torch.isinf(raw).sum())
    visible = trace.mask.expand_as(trace.scores)
    inf_scores = int((torch.isinf(trace.scores.float()) & visible).sum())
    nan_rows = int(torch.isnan(trace.weights.float()).any(-1).sum())
    max_abs = finite_abs_max(raw)
    return _report(cfg, inf_raw, inf_scores, nan_rows, max_abs, trace.mask)


def _blocked_counts(trace: AttentionTrace) -> tuple[int, int, int, float, KeyRanges]:
    """(inf_raw, inf_scores, nan_rows, max finite |Q·Kᵀ|, the mask's key ranges) summed over
    every head's rows (the ranges: no (S, Skv) grid)."""
    cfg = trace.config
    inf_raw = inf_scores = nan_rows = 0
    top = float("-inf")
    for b in range(cfg.batch):
        for r in trace.row_stats(b):  # every head of batch row b in one pass
            inf_raw += int(r["inf_scores_raw"].sum())
            inf_scores += int(r["inf_scores"].sum())
            nan_rows += int((~r["valid"]).sum())
            top = max(top, float(torch.nan_to_num(r["max_abs_score_raw"], nan=-math.inf).max()))  # (NaN: not sampled)
    return inf_raw, inf_scores, nan_rows, (top if top > float("-inf") else float("nan")), trace.key_ranges


def _report(cfg: AttentionConfig, inf_raw: int, inf_scores: int, nan_rows: int, max_abs: float,
            mask: torch.Tensor | KeyRanges) -> OverflowReport:
    """The report and its one-line messages from the counts; ``mask`` (S, Skv) bool or its
    key ranges (only which rows see a key is read)."""
    fully = int((~mask.any(-1)).sum()) * cfg.batch * cfg.n_heads
    if not (inf_raw or inf_scores or nan_rows or fully):
        return OverflowReport(0, 0, 0, 0, max_abs, ())
    msgs = []
    limit = torch.finfo(torch_dtype(cfg.dtype)).max
    if inf_raw:
        msgs.append(
            f"Q·Kᵀ overflowed {cfg.dtype} (max {limit:.6g}) in {inf_raw} entries: "
            + ("pre-scaling Q kept the softmax input finite." if cfg.prescale_q and not inf_scores
               else "pre-scale Q (or use bfloat16) to stay in range.")
        )
    if inf_scores:
        msgs.append(f"{inf_scores} visible scores are ±inf: softmax turns those rows into NaN.")
    if fully:
        what = {"-inf": "softmax of all −inf is 0/0 = NaN",
                "min": "finfo.min gives a uniform row over masked keys (silent garbage, not NaN)",
                "-1e9": "−1e9 gives a uniform row over masked keys (silent garbage, not NaN)"}[cfg.mask_value]
        if cfg.mask_value == "-1e9" and cfg.dtype == "float16":
            what = "−1e9 does not fit float16 and became −inf: those rows are NaN"
        msgs.append(f"{fully // (cfg.batch * cfg.n_heads)} query rows see no key at all: {what}.")
    if nan_rows and not fully:
        msgs.append(f"{nan_rows} weight rows are NaN.")
    return OverflowReport(inf_raw, inf_scores, nan_rows, fully, max_abs, tuple(msgs))


def kv_cache_comparison(config: AttentionConfig, n_layers: int = 32, tokens: int = 8192) -> dict[str, int]:
    """KV-cache bytes of this config vs MHA vs MQA at the same width and context."""
    this = kv_cache_bytes(config, n_layers, tokens)
    per_kv_head = this // config.kv_heads  # (the head width is the same: d_model / n_heads)
    return {"this": this, "MHA": per_kv_head * config.n_heads, "MQA": per_kv_head}


#: Above this many key entries a d_k's keys are drawn one sample at a time, never all at once
#: (8 samples × 16384 keys × 512 dims held 256 MiB, for each of a long frame's 24 key counts).
#: torch draws normals by filling uniforms in order and transforming blocks of 16, so drawing
#: (n_keys, d_k) n_samples times gives the very numbers of one (n_samples, n_keys, d_k) draw
#: when n_keys·d_k is a multiple of 16 (tests/test_engine_diagnostics.py checks it).
_SWEEP_WHOLE = 1 << 20
#: Past this many keys a sample's scores are drawn directly: given q, the scores q·k_j of keys
#: with N(0, 1) entries are independent N(0, ‖q‖²), so s_j = ‖q‖·z_j with z_j ~ N(0, 1) has
#: exactly their distribution from n_keys normals instead of n_keys·d_k (a causal 65,536-token
#: frame's sweep drew 0.7 G normals, seconds of one core, for the same curves). At most 64 keys
#: (the default frames' counts) the sweep draws q·k as it always did.
_SWEEP_DIRECT = 64


def scaling_sweep(d_ks=None, n_keys: int = 64, n_samples: int = 64, seed: int = 0,
                  check=None) -> dict[str, torch.Tensor]:
    """Why √d_k: for each d_k, q and k with N(0, 1) entries give q·k of variance d_k.

    Past _SWEEP_DIRECT keys each sample's scores are drawn as ‖q‖·z (z ~ N(0, 1)), their exact
    distribution given q, not as q·k from n_keys·d_k normals.

    Returns (len(d_ks),) float32 tensors: score std and mean softmax-Jacobian norm,
    unscaled and scaled by 1/√d_k. Unscaled, std grows like √d_k and the gradient
    collapses toward 0 (saturated softmax); scaled, both stay flat. ``check()`` is called
    after each d_k (a cancel raises from it: up to a second at a thousand keys).
    """
    d_ks = [2, 4, 8, 16, 32, 64, 128, 256, 512] if d_ks is None else list(d_ks)
    out = {k: [] for k in ("std_unscaled", "std_scaled", "grad_unscaled", "grad_scaled")}
    for dk in d_ks:
        g = generator(seed, f"sweep:{dk}")
        q = torch.randn(n_samples, 1, dk, generator=g)
        if n_keys > _SWEEP_DIRECT:  # (n_samples, n_keys): ‖q‖·z, distributed as q·k (see _SWEEP_DIRECT)
            s = q.norm(dim=-1) * torch.randn(n_samples, n_keys, generator=g)
        elif n_samples * n_keys * dk <= _SWEEP_WHOLE or (n_keys * dk) % 16:
            k = torch.randn(n_samples, n_keys, dk, generator=g)
            s = (q @ k.transpose(-2, -1)).squeeze(1)  # (n_samples, n_keys)
        else:  # one sample's keys at a time (the same numbers: see _SWEEP_WHOLE)
            s = torch.stack([(q[i] @ torch.randn(n_keys, dk, generator=g).T).squeeze(0)
                             for i in range(n_samples)])  # (n_samples, n_keys)
        for tag, t in (("unscaled", s), ("scaled", s / math.sqrt(dk))):
            out[f"std_{tag}"].append(float(t.std()))
            out[f"grad_{tag}"].append(float(softmax_jacobian_norm(torch.softmax(t, -1)).mean()))
        if check is not None:
            check()
    res = {k: torch.tensor(v) for k, v in out.items()}
    res["d_k"] = torch.tensor(d_ks)
    return res
