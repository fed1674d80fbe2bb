"""Per-query-row statistics of attention weights, and their per-head reductions.

Every diagnostic that needs every weight (entropy, the softmax Jacobian norm, the
per-head summaries, the overflow counts) is a reduction over rows: computed here
on any block of rows, (…, r, Skv) → (…, r), and reduced to per-head numbers by
:func:`head_metrics`. A whole (H, S, Skv) tensor and a stream of (r, Skv) blocks of
one head give the same numbers, so a long sequence never needs all its grids.
"""

from __future__ import annotations

import math

import torch

#: Per-head metrics :func:`head_metrics` knows (see engine.diagnostics.head_summary).
HEAD_METRICS = ("mean_entropy", "max_weight", "sink_mass", "mean_distance", "diagonal", "previous_token")
#: The row statistic each head metric is reduced from.
_ROW_OF = {"mean_entropy": "entropy", "max_weight": "row_max", "sink_mass": "sink",
           "mean_distance": "distance", "diagonal": "diagonal", "previous_token": "previous_token"}
#: Every weight-row statistic :func:`weight_row_stats` computes.
WEIGHT_ROW_STATS = ("valid", "entropy", "jacobian_norm", "row_max", "sink", "distance", "diagonal",
                    "previous_token")
#: The overflow statistics :func:`score_row_stats` computes.
SCORE_ROW_STATS = ("inf_scores_raw", "max_abs_score_raw", "inf_scores")


def softmax_jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """‖∂softmax/∂s‖_F per row, (…, N) → (…), in float32.

    J = diag(p) − p pᵀ, so ‖J‖²_F = Σp² − 2Σp³ + (Σp²)²: O(N) per row. It is
    largest for a flat row and → 0 as softmax saturates to one-hot, which is why
    unscaled scores stop learning.
    """
    p = weights.float()
    p2 = p * p
    s2 = p2.sum(-1)  # what vecdot(p, p) computes (its product, then the sum), once
    s3 = p2.mul_(p).sum(-1)  # vecdot(p², p), its product in place
    del p2
    return (s2 - 2 * s3 + s2 * s2).clamp(min=0).sqrt()


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy −Σ p log p of each row, in nats (0·log 0 = 0), float32."""
    p = weights.float()
    # log of p clamped to the smallest normal float: 0·log(tiny) = 0 exactly, and this
    # is ~2.5× faster than torch.special.xlogy on CPU (NaN rows stay NaN)
    logp = p.clamp_min(torch.finfo(torch.float32).tiny).log_()
    return -logp.mul_(p).sum(-1)  # vecdot(p, log p), its product in place


def key_distances(positions: torch.Tensor, key_len: int) -> torch.Tensor:
    """(r, Skv) float32 |pos(i) − j| for query positions (r,) and keys 0…Skv−1: exact
    integers in float32 (positions < 2²⁴)."""
    j = torch.arange(key_len, dtype=torch.float32)
    return (positions.to(torch.float32)[:, None] - j[None, :]).abs_()


def weight_row_stats(weights: torch.Tensor, positions: torch.Tensor, stats=WEIGHT_ROW_STATS,
                     entropy: torch.Tensor | None = None,
                     distances: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Statistics of each weight row; weights (…, r, Skv), positions (r,) int64 absolute
    query positions (key j sits at j). Each value is (…, r): float32, "valid" bool.
    ``distances`` may pass key_distances(positions, Skv), shared by every head of a block.

      valid           the row has no NaN (a fully masked "-inf" row is all NaN)
      entropy         −Σ p log p, nats (NaN for an invalid row); ``entropy`` may pass it
      jacobian_norm   ‖∂softmax/∂s‖_F of the row
      row_max         largest weight (NaN counted as 0)
      sink            weight on key 0
      distance        Σ_j p_j·|pos(i) − j|, tokens
      diagonal        weight on key pos(i) (0 when outside the keys)
      previous_token  weight on key pos(i) − 1
    The last five count NaN weights as 0; :func:`head_metrics` leaves invalid rows out.
    """
    w = weights.float()
    Skv = w.shape[-1]
    out: dict[str, torch.Tensor] = {}
    # a softmax row is all NaN or has none, and amax propagates NaN: one cheap reduction
    top = w.amax(-1)
    valid = ~torch.isnan(top)
    all_valid = bool(valid.all())
    if "valid" in stats:
        out["valid"] = valid
    if "entropy" in stats:
        out["entropy"] = row_entropy(w) if entropy is None else entropy.float()
    if "jacobian_norm" in stats:
        out["jacobian_norm"] = softmax_jacobian_norm(w)
    if not all_valid:
        w = torch.nan_to_num(w, nan=0.0)
    if "row_max" in stats:
        out["row_max"] = top if all_valid else torch.where(valid, top, 0.0)
    if "sink" in stats:
        out["sink"] = w[..., 0].clone()  # not a view: it would keep the whole block alive
    if "distance" in stats:
        out["distance"] = (w * (key_distances(positions, Skv) if distances is None else distances)).sum(-1)

    def at(offset: int) -> torch.Tensor:
        idx = positions - offset
        ok = (idx >= 0) & (idx < Skv)
        vals = torch.zeros(w.shape[:-1])
        vals[..., ok] = w[..., ok.nonzero().squeeze(-1), idx[ok]]
        return vals

    if "diagonal" in stats:
        out["diagonal"] = at(0)
    if "previous_token" in stats:
        out["previous_token"] = at(1)
    return out


def finite_abs_max(t: torch.Tensor) -> float:
    """The largest finite |value| of t, as a float (NaN when none is finite): one reduction
    when every value is finite (amax propagates NaN and inf, so a finite result means all are)."""
    if not t.numel():
        return float("nan")
    top = float(t.abs().amax().float())
    if math.isfinite(top):
        return top
    t = t.float()
    finite = t[torch.isfinite(t)]
    return float(finite.abs().max()) if finite.numel() else float("nan")


def raw_row_stats(scores_raw: torch.Tensor) -> dict[str, torch.Tensor]:
    """Overflow statistics of each row of Q·Kᵀ, (…, r, Skv) → (…, r):

      inf_scores_raw     entries that are ±inf (int64)
      max_abs_score_raw  largest finite |Q·Kᵀ| (float32; −inf when none is finite)
    The common case (everything finite) takes one reduction (aminmax).
    """
    lo, hi = torch.aminmax(scores_raw, dim=-1)  # a NaN or ±inf anywhere shows in lo or hi
    top = torch.maximum(-lo.float(), hi.float())
    if bool(torch.isfinite(top).all()):
        return {"inf_scores_raw": torch.zeros(top.shape, dtype=torch.int64), "max_abs_score_raw": top}
    top = torch.where(torch.isfinite(scores_raw), scores_raw.float().abs(), float("-inf")).amax(-1)
    return {"inf_scores_raw": torch.isinf(scores_raw).sum(-1), "max_abs_score_raw": top}


def visible_inf_rows(scores: torch.Tensor, mask: torch.Tensor, bound: float | None = None) -> torch.Tensor:
    """(…, r) int64: visible (unmasked) softmax inputs that are ±inf; scores (…, r, Skv), mask
    (r, Skv). ``bound``, an upper bound of every visible |score| (max |Q·Kᵀ|·|scale| + the
    largest |ALiBi bias|), skips the scan when it is far below the dtype's max (the factor 2
    kept covers rounding)."""
    none = torch.zeros(scores.shape[:-1], dtype=torch.int64)
    if bound is not None and bound < torch.finfo(scores.dtype).max / 2:
        return none
    inf = torch.isinf(scores)
    return (inf & mask).sum(-1) if bool(inf.any()) else none


def score_row_stats(scores_raw: torch.Tensor, scores: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """:func:`raw_row_stats` of scores_raw and ``inf_scores`` (:func:`visible_inf_rows`) of
    scores; (…, r, Skv) each, mask (r, Skv) bool."""
    return {**raw_row_stats(scores_raw), "inf_scores": visible_inf_rows(scores, mask)}


def head_metrics(rows: dict[str, torch.Tensor], only=HEAD_METRICS) -> dict[str, torch.Tensor]:
    """Reduce row statistics (…, S) (from :func:`weight_row_stats`) to per-head metrics (…,):
    means over the valid rows, max_weight the largest weight. Each value is float32. A statistic
    NaN on valid rows (computed on a sample of rows only) is reduced over the rows that have it."""
    _check_metrics(only)
    valid = rows["valid"]
    if valid.shape[-1] and bool(valid.all()):  # every row counts (the common case): plain means

        def mean_rows(t: torch.Tensor) -> torch.Tensor:
            return torch.nan_to_num(t).sum(-1) / valid.shape[-1]  # (what the masked mean computes)
    else:
        n = valid.sum(-1).clamp(min=1).float()

        def mean_rows(t: torch.Tensor) -> torch.Tensor:
            return (torch.nan_to_num(t) * valid).sum(-1) / n

    out = {}
    for name in only:
        t = rows[_ROW_OF[name]]
        if bool((torch.isnan(t) & valid).any()):  # a statistic computed on a sample of rows only (NaN
            ok = valid & ~torch.isnan(t)  # elsewhere, AttentionTrace.stat_sample): over those rows
            out[name] = (torch.where(ok, t, -torch.inf).amax(-1) if name == "max_weight"
                         else torch.where(ok, t, 0.0).sum(-1) / ok.sum(-1).clamp(min=1))
            continue
        out[name] = t.amax(-1) if name == "max_weight" else mean_rows(t)
    return out


def _check_metrics(only) -> None:
    unknown = set(only) - set(HEAD_METRICS)
    if unknown:
        raise ValueError(f"unknown head metric(s) {sorted(unknown)}; known: {', '.join(HEAD_METRICS)}")


def stats_for(only) -> tuple[str, ...]:
    """The row statistics :func:`head_metrics` needs for the metrics ``only``."""
    _check_metrics(only)
    return ("valid", *(_ROW_OF[m] for m in only))


def pool_tiles(grid: torch.Tensor, tile: tuple[int, int], reduce: str = "max") -> torch.Tensor:
    """(r, Skv) → (⌈r/tr⌉, ⌈Skv/tc⌉) float32: each cell the max (or mean) of one tr × tc
    tile (the last row and column of tiles may be smaller). NaN and ±inf propagate: a tile
    holding a NaN row shows NaN, a masked −inf score pulls a mean to −inf."""
    if reduce not in ("max", "mean"):
        raise ValueError(f"reduce must be 'max' or 'mean', got {reduce!r}")
    tr, tc = tile
    g = grid.float()
    r, n = g.shape
    if reduce == "max" and r >= tr and n >= tc:
        # torch's pooling kernel: the same maxima (NaN propagates), 2–7× faster than the strided view
        return torch.nn.functional.max_pool2d(g[None, None], kernel_size=(tr, tc), stride=(tr, tc),
                                              ceil_mode=True)[0, 0]
    R, C = -(-r // tr), -(-n // tc)
    if (R * tr, C * tc) != (r, n):
        pad = torch.full((R * tr, C * tc), float("-inf") if reduce == "max" else 0.0)
        pad[:r, :n] = g
        g = pad
    t = g.view(R, tr, C, tc)
    if reduce == "max":
        return t.amax(dim=(1, 3))
    rows = torch.full((R,), float(tr))
    rows[-1] = r - (R - 1) * tr
    cols = torch.full((C,), float(tc))
    cols[-1] = n - (C - 1) * tc
    return t.sum(dim=(1, 3)) / (rows[:, None] * cols[None, :])
