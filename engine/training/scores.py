"""Per-head scores of a batch's attention, each (L, H), for the training lab's curves.

With A[l, b, h, i, j] the attention weight of query i on key j (softmax over
the visible keys j ≤ i) and "valid" the real, non-padding positions:

- **previous_token** = mean over valid queries i ≥ 2 of A[i, i−1]: a head that
  always looks one back scores 1; a uniform head scores 1/(i+1) on average.
  (i = 1 is left out: with two visible keys, half the weight is on i−1 by
  chance.)
- **induction** = mean over queries i whose token occurred before, latest at
  p < i, of A[i, p+1]: the weight on the token that followed the earlier
  occurrence ([A][B] … [A] → [B]), Olsson et al. 2022's prefix-matching
  score; on the induction task these are the repeated half's queries.
- **entropy** = mean over valid queries i ≥ 1 of −Σ_j A[i, j] ln A[i, j], in
  nats; **entropy_norm** divides each row's entropy by its maximum ln(i+1)
  first (1 = uniform, 0 = one key): the collapse detector.
- **max_weight** = mean over valid queries i ≥ 1 of max_j A[i, j]: near 1
  when the softmax saturates (every query on one key).

Query 0 sees only itself, so it is left out of every mean. All values lie
in [0, 1] except entropy (0..ln T); a score with no eligible query is NaN.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .tasks import Batch

SCORE_NAMES = ("induction", "previous_token")


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """x (L, B, H, N), mask (B, N) bool → (L, H) mean over the masked (B, N) cells (NaN if none)."""
    m = mask.to(x.dtype)[None, :, None, :]  # (1, B, 1, N)
    return (x * m).sum(dim=(1, 3)) / m.sum(dim=(1, 3))


@torch.no_grad()
def head_scores(attentions: list[torch.Tensor], batch: Batch) -> dict[str, np.ndarray]:
    """attentions: one (B, H, T, T) weight tensor per layer, for ``batch``.

    Returns float32 (L, H) arrays: "induction", "previous_token", "entropy",
    "entropy_norm", "max_weight" (formulas in the module docstring).
    """
    a = torch.stack([w.detach().float() for w in attentions])  # (L, B, H, T, T)
    t = a.shape[-1]
    valid = batch.valid[:, :t]  # (B, T)
    pos = torch.arange(t)
    rows = valid & (pos >= 1)[None]  # queries that have a choice

    prev = torch.diagonal(a, offset=-1, dim1=-2, dim2=-1)  # (L, B, H, T-1): A[i+1, i]
    prev_mask = valid[:, 1:] & (pos[1:] >= 2)[None]  # query i+1 ≥ 2

    key = batch.induction_key[:, :t]  # (B, T)
    ind_mask = key >= 0
    idx = key.clamp(min=0)[None, :, None, :, None].expand(a.shape[0], -1, a.shape[2], -1, 1)
    ind = torch.gather(a, -1, idx).squeeze(-1)  # (L, B, H, T)

    ent = torch.special.entr(a).sum(-1)  # (L, B, H, T) nats: −Σ a ln a
    max_ent = torch.log(pos.to(a.dtype) + 1.0).clamp_min(1e-30)  # (T,) ln(i+1)
    out = {
        "induction": _masked_mean(ind, ind_mask),
        "previous_token": _masked_mean(prev, prev_mask),
        "entropy": _masked_mean(ent, rows),
        "entropy_norm": _masked_mean(ent / max_ent, rows),
        "max_weight": _masked_mean(a.amax(-1), rows),
    }
    return {k: v.numpy().astype(np.float32) for k, v in out.items()}


def uniform_entropy(t: int) -> float:
    """Mean entropy (nats) of uniform causal rows 1..t−1: the start of an untrained head."""
    return float(np.mean([math.log(i + 1) for i in range(1, t)])) if t > 1 else 0.0
