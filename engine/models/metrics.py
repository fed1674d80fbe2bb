"""Per-head attention metrics and pattern labels (Qt-free, model-free).

Everything works on a weight tensor of shape ``(..., S, S)`` whose rows are
softmax distributions (query ``i`` over keys ``j``): a real model's
``(L, H, S, S)`` attentions, one synthetic ``(B, H, S, S)`` trace, or a
single ``(S, S)`` matrix. Torch tensors and numpy arrays are both accepted;
results are numpy arrays with the leading ``...`` shape (plain floats for a
single matrix via :func:`matrix_metrics`).

Metrics (each averaged over the query rows):

``entropy``       −Σ_j w_ij ln w_ij, in nats (0 = all weight on one key).
``entropy_norm``  entropy divided by ln(number of keys the row may see), in
                  [0, 1]; 1 = uniform. Rows that see a single key are skipped.
``sink``          weight on the first key (j = 0): the "attention sink".
``distance``      Σ_j w_ij |i − j|: how far away, in tokens, the head looks.
``distance_ratio`` ``distance`` divided by that of uniform attention over the
                  same visible keys: < 1 local, 1 like uniform, > 1 far-reaching.
``prev_token``    weight on key i − 1 (rows i ≥ 1).
``diagonal``      weight on key i (the token itself).
``max_weight``    the row's largest weight (how peaked the head is).
``vertical``      the largest column mass: max_j of mean_i w_ij, i.e. the
                  share of attention that one key collects from every query.
``vertical_key``  that key's index.
``vertical_lift`` ``vertical`` divided by the share uniform attention would give
                  that key (1/S, or less for late keys of a causal matrix).
``block``         mean over adjacent queries of 1 − TV(w_i, w_i+1) (TV = total
                  variation distance): 1 when neighbouring tokens attend to
                  exactly the same keys, as inside the blocks of a
                  block-diagonal pattern.

Pattern label: the first rule that holds, in this order (thresholds are the
module constants below):

1. ``vertical/sink``   ``vertical`` ≥ 0.4 and ``vertical_lift`` ≥ 2 — one key
                       (often the first token, [CLS] or [SEP]) takes at least
                       40% of all attention, and at least twice its uniform
                       share (so short texts are not labelled by chance).
2. ``diagonal``        ``diagonal`` ≥ 0.5 and ≥ twice what uniform attention
                       would give — tokens mostly attend to themselves.
3. ``previous-token``  ``prev_token`` ≥ 0.5 and ≥ twice uniform — tokens mostly
                       attend to the one before.
4. ``broad``           ``entropy_norm`` ≥ 0.75 — attention spread nearly uniformly.
5. ``block``           ``block`` ≥ 0.6 and ``distance_ratio`` ≤ 0.6 — neighbouring
                       tokens share the keys they attend to and those keys are
                       near them: contiguous groups attend within themselves
                       (heads that look everywhere also have alike rows; the
                       distance condition keeps them out).
6. ``long-range``      ``distance_ratio`` ≥ 1.25 — the head looks, on average, at
                       least a quarter further away than attention spread evenly
                       over the same visible keys would: most of its weight sits
                       on distant keys. Uniform attention gives 1 (and is
                       ``broad`` first), the local patterns stay well under 1
                       (a ``block`` at most 0.6), and a sink (every row on key
                       0, far from the last rows) is ``vertical/sink`` first;
                       the ceiling is about 2.25 (each row on its farthest key;
                       2 when causal). 1.25 sits
                       between, where "mostly distant" starts to hold: on the
                       bundled MiniLM and the sample sentences the heads it
                       labels put 54–79 % of their weight on keys at least S/3
                       tokens away (uniform attention: about 44 %).
7. ``mixed``           none of the above.

"Uniform" shares are 1/S per key, or 1/(i+1) for row i of a causal matrix
(so the forced first rows of a causal matrix do not fake a pattern). A 1×1
matrix is labelled ``diagonal``. The returned ``causal`` array says how each
matrix was treated. "Visible keys" (for ``entropy_norm``)
are all S keys, or j ≤ i when the matrix is causal; ``causal=None`` infers it
from an upper triangle that is exactly zero.
"""

from __future__ import annotations

import math

import numpy as np
import torch

VERTICAL_MIN = 0.4
VERTICAL_LIFT_MIN = 2.0
LIFT_MIN = 2.0
DIAGONAL_MIN = 0.5
PREVIOUS_MIN = 0.5
BROAD_MIN = 0.75
BLOCK_MIN = 0.6
BLOCK_DISTANCE_MAX = 0.6
LONG_RANGE_MIN = 1.25

#: numeric metrics, in display order
METRIC_NAMES = ("entropy", "entropy_norm", "sink", "distance", "distance_ratio", "prev_token",
                "diagonal", "max_weight", "vertical", "vertical_lift", "block")
#: every label :func:`head_metrics` can give, in rule order
PATTERN_LABELS = ("vertical/sink", "diagonal", "previous-token", "broad", "block", "long-range",
                  "mixed")

_CHUNK_ELEMENTS = 1 << 24


def _as_tensor(weights) -> torch.Tensor:
    w = torch.as_tensor(weights)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"expected a (..., S, S) weight tensor, got shape {tuple(w.shape)}")
    if not torch.is_floating_point(w):
        w = w.float()
    return w.detach().to("cpu", torch.float64 if w.dtype == torch.float64 else torch.float32)


def _metrics_flat(w: torch.Tensor, causal: bool | None) -> dict[str, torch.Tensor]:
    """w: (N, S, S) → dict of (N,) tensors."""
    n, s, _ = w.shape
    idx = torch.arange(s)
    if causal is None:
        # weights are ≥ 0, so the upper triangle is all zero iff its sum is zero
        is_causal = (w.triu(1).sum((-1, -2)) == 0) if s > 1 else torch.zeros(n, dtype=torch.bool)
    else:
        is_causal = torch.full((n,), bool(causal))

    row_entropy = -torch.special.xlogy(w, w).sum(-1)  # (N, S); 0·ln 0 = 0
    entropy = row_entropy.mean(-1)

    visible = torch.where(is_causal[:, None], (idx + 1).to(w.dtype)[None, :],
                          torch.full((1, s), float(s), dtype=w.dtype))  # (N, S)
    usable = visible > 1
    norm_rows = row_entropy / torch.log(visible.clamp_min(2))
    counts = usable.sum(-1)
    entropy_norm = torch.where(counts > 0, (norm_rows * usable).sum(-1) / counts.clamp_min(1),
                               torch.zeros((), dtype=w.dtype))

    dist = (idx[:, None] - idx[None, :]).abs().to(w.dtype)  # (S, S)
    distance = (w * dist).sum((-1, -2)) / s
    # uniform attention's mean distance: row i sees i+1 keys (causal) or all S
    uni_bidir = dist.mean(-1).mean()
    uni_causal = (idx.to(w.dtype) / 2).mean()
    uniform = torch.where(is_causal, uni_causal, uni_bidir)
    distance_ratio = torch.where(uniform > 0, distance / uniform.clamp_min(1e-30),
                                 torch.zeros((), dtype=w.dtype))
    diagonal = torch.diagonal(w, dim1=-2, dim2=-1).mean(-1)
    if s > 1:
        prev_token = torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean(-1)
        tv = 0.5 * (w[:, 1:, :] - w[:, :-1, :]).abs().sum(-1)  # (N, S-1)
        block = 1 - tv.mean(-1)
    else:
        prev_token = torch.zeros(n, dtype=w.dtype)
        block = torch.zeros(n, dtype=w.dtype)
    columns = (torch.ones(1, s, dtype=w.dtype) @ w).squeeze(-2) / s  # (N, S): mean over rows
    vertical, vertical_key = columns.max(-1)
    # uniform column shares: 1/S each, or (1/S)·Σ_{i≥j} 1/(i+1) when causal
    inv = 1.0 / (idx + 1).to(w.dtype)
    u_causal = torch.flip(torch.cumsum(torch.flip(inv, [0]), 0), [0]) / s
    u_key = torch.where(is_causal, u_causal[vertical_key], torch.full_like(vertical, 1.0 / s))
    vertical_lift = vertical / u_key
    return {
        "entropy": entropy,
        "entropy_norm": entropy_norm,
        "sink": w[:, :, 0].mean(-1),
        "distance": distance,
        "distance_ratio": distance_ratio,
        "prev_token": prev_token,
        "diagonal": diagonal,
        "max_weight": w.amax(-1).mean(-1),
        "vertical": vertical,
        "vertical_key": vertical_key,
        "vertical_lift": vertical_lift,
        "block": block,
        "causal": is_causal,
    }


def _uniform_shares(s: int, causal: bool) -> tuple[float, float]:
    """What uniform attention puts on the diagonal and on the previous token (row means)."""
    if not causal:
        return 1.0 / s, 1.0 / s
    inv = [1.0 / (i + 1) for i in range(s)]
    return sum(inv) / s, (sum(inv[1:]) / (s - 1) if s > 1 else 0.0)


def label_pattern(m: dict, size: int, causal: bool = False) -> str:
    """The pattern label of one head from its metric values (see the module doc)."""
    if size == 1:
        return "diagonal"
    u_diag, u_prev = _uniform_shares(size, causal)
    if m["vertical"] >= VERTICAL_MIN and m["vertical_lift"] >= VERTICAL_LIFT_MIN:
        return "vertical/sink"
    if m["diagonal"] >= DIAGONAL_MIN and m["diagonal"] >= LIFT_MIN * u_diag:
        return "diagonal"
    if m["prev_token"] >= PREVIOUS_MIN and m["prev_token"] >= LIFT_MIN * u_prev:
        return "previous-token"
    if m["entropy_norm"] >= BROAD_MIN:
        return "broad"
    if m["block"] >= BLOCK_MIN and m["distance_ratio"] <= BLOCK_DISTANCE_MAX:
        return "block"
    if m["distance_ratio"] >= LONG_RANGE_MIN:
        return "long-range"
    return "mixed"


def head_metrics(weights, *, causal: bool | None = None) -> dict[str, np.ndarray]:
    """Metrics of every matrix in a ``(..., S, S)`` weight tensor.

    Returns a dict of numpy arrays shaped like the leading dims: float64 for
    the names in :data:`METRIC_NAMES`, int64 ``vertical_key``, bool
    ``causal`` and a str array ``pattern`` (one of :data:`PATTERN_LABELS`).
    """
    w = _as_tensor(weights)
    lead = tuple(w.shape[:-2])
    s = w.shape[-1]
    flat = w.reshape(-1, s, s)
    step = max(1, _CHUNK_ELEMENTS // max(1, s * s))
    parts = [_metrics_flat(flat[i:i + step], causal) for i in range(0, flat.shape[0], step)]
    out: dict[str, np.ndarray] = {}
    for key in parts[0] if parts else ():
        arr = torch.cat([p[key] for p in parts]).numpy()
        kind = {"vertical_key": np.int64, "causal": np.bool_}.get(key, np.float64)
        out[key] = arr.astype(kind).reshape(lead)
    if not parts:  # zero matrices
        for key in (*METRIC_NAMES, "vertical_key", "causal"):
            kind = {"vertical_key": np.int64, "causal": np.bool_}.get(key, np.float64)
            out[key] = np.zeros(lead, dtype=kind)
    labels = np.empty(int(math.prod(lead)), dtype=object)
    flat_vals = {k: v.reshape(-1) for k, v in out.items()}
    for i in range(labels.size):
        labels[i] = label_pattern({k: v[i] for k, v in flat_vals.items()}, s,
                                  bool(flat_vals["causal"][i]))
    out["pattern"] = labels.astype(str).reshape(lead) if labels.size else np.zeros(lead, str)
    return out


def matrix_metrics(weights, *, causal: bool | None = None) -> dict[str, float | int | str]:
    """:func:`head_metrics` of a single (S, S) matrix, as plain Python values."""
    w = _as_tensor(weights)
    if w.ndim != 2:
        raise ValueError(f"expected one (S, S) matrix, got shape {tuple(w.shape)}")
    m = head_metrics(w, causal=causal)
    conv = {"pattern": str, "vertical_key": int, "causal": bool}
    return {k: conv.get(k, float)(v) for k, v in m.items()}
