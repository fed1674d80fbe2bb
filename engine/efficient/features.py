"""The feature maps φ of the linear kernels (DESIGN.md, ``AttentionConfig.kernel``).

    linear     φ(x) = elu(x) + 1, on q and k as they are (no scale)       (Katharopoulos 2020)
    performer  φ(x) = exp(W·x' − ‖x'‖²/2) / √m,  x' = x·√scale           (Choromanski 2021)
               W: (m, Dh) standard Gaussian rows, :func:`performer_matrix`, shared by every
               head, so that E[φ(q)·φ(k)] = exp(scale·q·k)

Both are positive, so a weight row φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j') is a distribution.
FAVOR+'s exponentials are kept in range by a shift: :func:`features` returns φ / exp(shift)
with the shift (per query row; per head over all keys), which cancels in every weight row.
A negative scale goes to the keys' side: q' = q·√|scale|, k' = −k·√|scale| (q'·k' = scale·q·k).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..config import AttentionConfig
from ..seeding import generator


def performer_matrix(config: AttentionConfig) -> torch.Tensor:
    """(m, Dh) float32: FAVOR+'s random matrix W, i.i.d. N(0, 1) entries, drawn as

        torch.randn(m, Dh, generator=engine.seeding.generator(seed, f"performer:{m}x{Dh}"))

    (m = n_features, Dh = head_dim): the same config always draws the same W."""
    m, dh = config.n_features, config.head_dim
    return torch.randn(m, dh, generator=generator(config.seed, f"performer:{m}x{dh}"))


def n_features(config: AttentionConfig) -> int:
    """F, the width of φ: Dh for "linear", m for "performer"."""
    return config.n_features if config.kernel == "performer" else config.head_dim


def features(config: AttentionConfig, x: torch.Tensor, side: str,
             w: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(φ(x)·exp(−shift), shift) for queries (``side="q"``) or keys (``"k"``) x (…, N, Dh):
    φ float32 (…, N, F); shift None for "linear" (φ itself), else float32 (…, N, 1) for
    queries (each row's largest exponent, less log √m) and (…, 1, 1) for keys (the largest
    over all of that head's keys): log φ(q)·φ(k) = log(φ̃q·φ̃k) + shift_q + shift_k.
    ``w``: the performer matrix when already drawn."""
    x = x.float()
    if config.kernel == "linear":
        return F.elu(x) + 1.0, None
    if w is None:
        w = performer_matrix(config)
    s = config.effective_scale
    root = math.sqrt(abs(s))
    xs = x * (root if (side == "q" or s >= 0) else -root)  # x' (…, N, Dh)
    a = xs @ w.T - 0.5 * (xs * xs).sum(-1, keepdim=True)  # W·x' − ‖x'‖²/2  (…, N, m)
    top = a.amax(-1, keepdim=True) if side == "q" else a.amax((-2, -1), keepdim=True)
    shift = top - 0.5 * math.log(config.n_features)  # the 1/√m folded in
    return torch.exp(a - top), shift
