"""Hierarchical attention's block summaries (DESIGN.md, ``AttentionConfig.summary_block``).

Keys are cut into consecutive blocks of b (the last may be shorter). Query i, at position p,
sees the keys of its own block ⌊p / b⌋ exactly (with causal: those ≤ p) and one summary of
every other block c — the mean of c's keys and the mean of its values — (with causal: only
blocks wholly before p's block), all in one softmax. Padding keys belong to no summary
(a block of padding only has none). With ALiBi a summary's bias is the mean of its keys'
biases: −slope·|p − centre of c| (every key of another block lies on one side of p).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..config import AttentionConfig
from ..positional import query_positions


@dataclass(frozen=True)
class Summaries:
    """k, v: (B, Hkv, nB, Dh) float32, each block's mean key and mean value (over its keys
    that are not padding); count: (nB,) int64 those keys; centre: (nB,) float32 their mean
    position; block_of: (Skv,) int64 each key's block; own: (S,) int64 each query's block
    ⌊pos / b⌋ (negative for a query before the first key)."""

    k: torch.Tensor
    v: torch.Tensor
    count: torch.Tensor
    centre: torch.Tensor
    block_of: torch.Tensor
    own: torch.Tensor

    def visible(self, config: AttentionConfig, rows: slice | torch.Tensor = slice(None)) -> torch.Tensor:
        """(r, nB) bool: the summaries query rows ``rows`` see: every other block with keys,
        with causal only those wholly before the query's own block."""
        own = self.own[rows][:, None]
        c = torch.arange(len(self.count))[None, :]
        vis = (c != own) & (self.count > 0)[None, :]
        return vis & (c < own) if config.causal else vis


def block_summaries(config: AttentionConfig, k: torch.Tensor, v: torch.Tensor) -> Summaries:
    """The :class:`Summaries` of keys k and values v (B, Hkv, Skv, Dh)."""
    b, Skv = config.summary_block, config.key_len
    n_blocks = -(-Skv // b)
    valid = Skv - config.pad  # keys [valid, Skv) are padding
    block_of = torch.arange(Skv) // b
    count = torch.bincount(block_of[:valid], minlength=n_blocks)  # (nB,)

    def means(t: torch.Tensor) -> torch.Tensor:  # (B, Hkv, Skv, Dh) → (B, Hkv, nB, Dh)
        B, H, _, D = t.shape
        total = torch.zeros(B, H, n_blocks, D, dtype=torch.float32)
        total.index_add_(2, block_of[:valid], t[:, :, :valid].float())
        return total / count.clamp(min=1)[:, None].float()

    pos = torch.arange(Skv, dtype=torch.float64)
    centre = torch.zeros(n_blocks, dtype=torch.float64).index_add_(0, block_of[:valid], pos[:valid])
    centre = (centre / count.clamp(min=1)).float()
    own = torch.div(query_positions(config.seq_len, Skv), b, rounding_mode="floor")
    return Summaries(means(k), means(v), count, centre, block_of, own)
