"""FlashAttention's algorithm in plain torch: tiles and the online softmax.

The (S, Skv) score matrix is never held whole. For each block of queries the
key blocks stream past; a running row max m and running sum l let each new
tile be folded in:

    m' = max(m, rowmax(S_tile))
    l' = l · e^(m − m') + Σ e^(S_tile − m')
    O' = O · e^(m − m') + e^(S_tile − m') · V_tile

and O / l at the end equals softmax(QKᵀ)·V exactly (up to rounding). A tile whose
every cell is masked (causal: above the diagonal) is skipped, as the kernels do;
it is still listed in `steps` (``skipped=True``) so a step-through can show it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .backends.eager import repeat_kv


@dataclass(frozen=True)
class TileStep:
    """One (query block, key block) tile: the running statistics after folding it in.

    row_max, row_sum: (B, H, rows of the query block), float32.
    rescale: (B, H, rows) e^(m_old − m_new), what the accumulated sum and output were
      multiplied by: 1 where the max did not grow (and where no key was seen yet).
    partial: (B, H, rows, Dh) float32 O / l after this tile (NaN where l = 0), recorded
      only with ``tiled_attention(..., partial=True)``; None otherwise.
    skipped: every cell of the tile is masked, so it was not computed (m, l unchanged).
    """

    q_block: int
    k_block: int
    q_range: tuple[int, int]
    k_range: tuple[int, int]
    row_max: torch.Tensor
    row_sum: torch.Tensor
    rescale: torch.Tensor | None = None
    partial: torch.Tensor | None = None
    skipped: bool = False


def tiled_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    scale: float | None = None,
    mask: torch.Tensor | None = None,
    block_q: int = 64,
    block_k: int = 64,
    bias: torch.Tensor | None = None,
    partial: bool = False,
) -> tuple[torch.Tensor, list[TileStep]]:
    """Exact attention by tiles. q (B,H,S,Dh); k, v (B,Hkv,Skv,Dh), Hkv dividing H;
    mask (S, Skv) bool, True = may attend; bias: added to the scaled scores (ALiBi),
    broadcastable to (B, H, S, Skv). Accumulates in float32, returns (B,H,S,Dh) in q's
    dtype. A fully masked row gives NaN, as softmax over −inf does. partial=True also
    records each step's O / l (memory: one (B, H, block_q, Dh) tensor per tile)."""
    if block_q < 1 or block_k < 1:
        raise ValueError(f"block_q and block_k must be ≥ 1, got {block_q}, {block_k}")
    B, H, S, Dh = q.shape
    Skv = k.shape[2]
    if H % k.shape[1]:
        raise ValueError(f"KV heads ({k.shape[1]}) must divide query heads ({H})")
    k, v = repeat_kv(k, H // k.shape[1]).float(), repeat_kv(v, H // v.shape[1]).float()
    scale = 1.0 / math.sqrt(Dh) if scale is None else scale
    out = torch.empty(B, H, S, Dh, dtype=torch.float32, device=q.device)
    steps: list[TileStep] = []
    for qi, q0 in enumerate(range(0, S, block_q)):
        q1 = min(q0 + block_q, S)
        qb = q[:, :, q0:q1].float() * scale  # (B, H, bq, Dh)
        m = torch.full((B, H, q1 - q0), float("-inf"), device=q.device)
        l = torch.zeros(B, H, q1 - q0, device=q.device)  # noqa: E741 (the paper's name)
        acc = torch.zeros(B, H, q1 - q0, Dh, device=q.device)
        for ki, k0 in enumerate(range(0, Skv, block_k)):
            k1 = min(k0 + block_k, Skv)
            if mask is not None and not bool(mask[q0:q1, k0:k1].any()):
                # nothing visible in this tile: the kernels skip it; m, l and O stay as they are
                steps.append(TileStep(qi, ki, (q0, q1), (k0, k1), m.clone(), l.clone(),
                                      torch.ones_like(m), _ratio(acc, l) if partial else None, True))
                continue
            s = qb @ k[:, :, k0:k1].transpose(-2, -1)  # (B, H, bq, bk)
            if bias is not None:
                s = s + bias[..., q0:q1, k0:k1].to(s.device, torch.float32)
            if mask is not None:
                s = s.masked_fill(~mask[q0:q1, k0:k1].to(s.device), float("-inf"))
            m_new = torch.maximum(m, s.amax(-1))
            # rows with nothing visible yet keep m = −inf; shift by 0 there to avoid inf − inf
            safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = torch.exp(s - safe[..., None])
            correction = torch.exp(m - safe)
            l = l * correction + p.sum(-1)  # noqa: E741
            acc = acc * correction[..., None] + p @ v[:, :, k0:k1]
            rescale = torch.where(torch.isinf(m), torch.ones_like(m), correction)  # nothing held yet: 1
            m = m_new
            steps.append(TileStep(qi, ki, (q0, q1), (k0, k1), m.clone(), l.clone(), rescale,
                                  _ratio(acc, l) if partial else None))
        out[:, :, q0:q1] = acc / l[..., None]  # l = 0 (all masked) → NaN, like eager
    return out.to(q.dtype), steps


def _ratio(acc: torch.Tensor, l: torch.Tensor) -> torch.Tensor:  # noqa: E741
    """O / l of the rows so far, (B, H, rows, Dh); NaN where no key was seen (l = 0)."""
    return acc / l[..., None]
