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


def key_ranges(config: AttentionConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """(lo, hi), each (S,) int64: query i may attend the keys lo[i] ≤ j < hi[i] (none when
    lo[i] = hi[i]). Every mask here is one such range per row: causal caps the end at the
    query's position, a sliding window raises the start (and, without causal, caps the end
    at pos + window), padding caps the end at Skv − pad. O(S), where the grid is O(S·Skv)."""
    S, Skv = config.seq_len, config.key_len
    pos = query_positions(S, Skv)  # (S,)
    lo = torch.zeros(S, dtype=torch.int64)
    hi = torch.full((S,), Skv, dtype=torch.int64)
    if config.causal:
        hi = torch.minimum(hi, pos + 1)
    if config.window is not None:
        lo = torch.maximum(lo, pos - config.window + 1)
        if not config.causal:  # |pos − j| < window
            hi = torch.minimum(hi, pos + config.window)
    if config.pad:
        hi = torch.minimum(hi, torch.tensor(Skv - config.pad))  # padding acts on the key axis
    lo = lo.clamp(0, Skv)
    return lo, torch.maximum(hi.clamp(0, Skv), lo)


def build_mask(config: AttentionConfig) -> torch.Tensor:
    """(S, Skv) bool: causal, sliding window and key padding combined (the rows of
    :func:`key_ranges`)."""
    lo, hi = key_ranges(config)
    j = torch.arange(config.key_len)[None, :]  # (1, Skv)
    return (j >= lo[:, None]) & (j < hi[:, None])


def visible_tiles(config: AttentionConfig, tile: tuple[int, int]) -> torch.Tensor:
    """(⌈S/tr⌉, ⌈Skv/tc⌉) bool: whether any query of a tr × tc tile may attend any of its keys
    (what ``pool_tiles(build_mask(config).float(), tile) > 0`` gives), from the rows' key
    ranges: O(S + tiles), no (S, Skv) grid (1 GiB of float32 at S = 16384)."""
    S, Skv = config.seq_len, config.key_len
    tr, tc = tile
    R, C = -(-S // tr), -(-Skv // tc)
    lo, hi = key_ranges(config)
    seen = hi > lo
    rows = torch.arange(S)[seen] // tr
    first, stop = lo[seen] // tc, (hi[seen] - 1) // tc + 1  # the tile columns each row touches
    cover = torch.zeros(R, C + 1, dtype=torch.int32)  # +1 where a row's tiles start, −1 after
    ones = torch.ones(len(rows), dtype=torch.int32)
    cover.index_put_((rows, first), ones, accumulate=True)
    cover.index_put_((rows, stop), -ones, accumulate=True)
    return cover.cumsum(1)[:, :C] > 0


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
