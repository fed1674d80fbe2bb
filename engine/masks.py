"""Attention masks on the (query, key) grid; True = may attend.

Causal is bottom-right aligned (the flash-attn convention, what a KV cache
needs). With S=2 queries and Skv=5 keys, query i sits at position i + 3:

    keys  0 1 2 3 4
    q0    1 1 1 1 0      pos 3
    q1    1 1 1 1 1      pos 4
"""

from __future__ import annotations

import torch

from .config import AttentionConfig
from .positional import query_positions


def build_mask(config: AttentionConfig) -> torch.Tensor:
    """(S, Skv) bool: causal, sliding window and key padding combined."""
    S, Skv = config.seq_len, config.key_len
    pos = query_positions(S, Skv)[:, None]  # (S, 1)
    j = torch.arange(Skv)[None, :]  # (1, Skv)
    mask = torch.ones(S, Skv, dtype=torch.bool)
    if config.causal:
        mask &= j <= pos
    if config.window is not None:
        if config.causal:
            mask &= j > pos - config.window
        else:  # |pos − j| < window, in bool planes only (no int64 (S, Skv) distances)
            mask &= j > pos - config.window
            mask &= j < pos + config.window
    if config.pad:
        mask &= j < Skv - config.pad  # padding acts on the key axis
    return mask


def mask_fill_value(mask_value: str, dtype: torch.dtype) -> float:
    """The number masked scores become in `dtype`.

    "-1e9" does not fit float16 (max 65504): it becomes −inf there, exactly as
    `torch.tensor(-1e9, dtype=torch.float16)` does, so fully masked rows turn
    NaN just as with "-inf". The diagnostics say so.
    """
    if mask_value == "-inf":
        return float("-inf")
    if mask_value == "min":
        return float(torch.finfo(dtype).min)
    return float(torch.tensor(-1e9, dtype=torch.float32).to(dtype).item())
