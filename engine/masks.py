"""Attention masks on the (query, key) grid; True = may attend.

Causal is bottom-right aligned (the flash-attn convention, what a KV cache
needs). With S=2 queries and Skv=5 keys, query i sits at position i + 3:

    keys  0 1 2 3 4
    q0    1 1 1 1 0      pos 3
    q1    1 1 1 1 1      pos 4
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .config import AttentionConfig
from .positional import query_positions


def key_ranges(config: AttentionConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """(lo, hi), each (S,) int64: query i may attend the keys lo[i] ≤ j < hi[i] (none when
    lo[i] = hi[i]). Every mask is one such range per row (local ∪ global adds a second:
    :func:`global_prefix`): causal caps the end at the query's position, a sliding window
    raises the start (and, without causal, caps the end at pos + window), padding caps the
    end at Skv − pad. O(S), where the grid is O(S·Skv)."""
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


def global_prefix(config: AttentionConfig, lo: torch.Tensor, hi: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Local ∪ global (Longformer, ``global_tokens`` = g): the local rows ``lo``, ``hi`` of
    :func:`key_ranges` joined with the global keys. Every query also sees keys j < g, and a
    query at a position < g sees every key; causal and padding still cap both. Returns
    (lo, hi, ends), each (S,) int64: query i sees [0, ends[i]) ∪ [lo[i], hi[i]) with
    ends[i] < lo[i] (two ranges that neither touch nor overlap: where they would, they are
    one range [lo, hi) and ends[i] = 0); ends is None when no row has a second range."""
    g = config.global_tokens
    if not g:
        return lo, hi, None
    S, Skv = config.seq_len, config.key_len
    pos = query_positions(S, Skv)
    cap = torch.full((S,), Skv - config.pad, dtype=torch.int64)  # what causal and padding leave
    if config.causal:
        cap = torch.minimum(cap, pos + 1)
    cap = cap.clamp(0, Skv)
    ends = torch.minimum(cap, torch.tensor(g))  # the global keys this row may see
    glob = pos < g  # global queries: every key (that causal and padding leave)
    lo, hi = torch.where(glob, 0, lo), torch.where(glob, cap, hi)
    empty = hi <= lo
    lo, hi = torch.where(empty, 0, lo), torch.where(empty, ends, hi)  # only the global keys
    join = ends >= lo  # overlapping or touching: one range
    lo, hi = torch.where(join, 0, lo), torch.where(join, torch.maximum(hi, ends), hi)
    ends = torch.where(join, 0, ends)
    return lo, hi, (ends if bool((ends > 0).any()) else None)


def build_mask(config: AttentionConfig) -> torch.Tensor:
    """(S, Skv) bool: causal, sliding window and key padding combined (the rows of
    :func:`key_ranges`)."""
    return KeyRanges.of(config).dense()


@dataclass(frozen=True, eq=False)
class KeyRanges:
    """A mask held as its rows' key ranges: query i may attend keys lo[i] ≤ j < hi[i], and
    with global tokens (local ∪ global) also keys j < ends[i] (``ends`` None: no row has a
    second range; where it has, ends[i] < lo[i]: up to two disjoint ranges a row).

    lo, hi (, ends): (S,) int64, torch tensors or (:meth:`numpy`) numpy arrays; key_len: Skv. O(S)
    where the (S, Skv) bool grid is O(S·Skv) (256 MiB at S = 16384). Indexed like that grid
    (``m[i]``, ``m[i, j]``, ``m[rows]``, ``m[r0:r1, c0:c1]``, ``m[index_array]``), it
    computes only the cells asked for, as a bool tensor (numpy array for a numpy one)
    equal to ``build_mask(config)[...]``; ``any(-1)``, ``all()``, ``counts()`` answer from
    the ranges alone, ``dense()`` builds the whole grid."""

    lo: Any
    hi: Any
    key_len: int
    ends: Any = None

    @classmethod
    def of(cls, config: AttentionConfig) -> KeyRanges:
        """The ranges of ``config``'s mask (:func:`key_ranges`, joined with the global keys by
        :func:`global_prefix`), torch tensors."""
        lo, hi, ends = global_prefix(config, *key_ranges(config))
        return cls(lo, hi, config.key_len, ends)

    def numpy(self) -> KeyRanges:
        """The same ranges as numpy int64 arrays (indexing then gives numpy bool arrays)."""
        if isinstance(self.lo, np.ndarray):
            return self
        return KeyRanges(self.lo.numpy(), self.hi.numpy(), self.key_len,
                         None if self.ends is None else self.ends.numpy())

    @property
    def shape(self) -> tuple[int, int]:
        """(S, Skv): the grid's shape."""
        return (len(self.lo), self.key_len)

    @property
    def ndim(self) -> int:
        return 2

    def __len__(self) -> int:
        return len(self.lo)

    def __getitem__(self, index):
        """The cells ``index`` selects, as ``build_mask(config)[index]`` (rows, or rows and keys:
        an int, a slice or an index array each), computed from those rows' ranges only."""
        rows, keys = index if isinstance(index, tuple) else (index, slice(None))
        if isinstance(index, tuple) and len(index) != 2:
            raise IndexError(f"a mask has 2 axes, got an index of {len(index)}")
        torch_side = isinstance(self.lo, torch.Tensor)
        if torch_side and isinstance(keys, np.ndarray):
            keys = torch.from_numpy(keys)
        j = (torch.arange(self.key_len) if torch_side else np.arange(self.key_len))[keys]  # () or (c,)
        lo, hi = self.lo[rows], self.hi[rows]  # () or (r,)
        shape = tuple(lo.shape) + tuple(j.shape)
        if self.all(rows):
            # nothing masked in these rows: one True seen as the block (no plane allocated: a
            # long unmasked run's passes asked for one (rows, Skv) plane a block, and the
            # allocator kept up to 1.4 GiB of them at S = 8192); read-only, as a mask is
            one = torch.ones((), dtype=torch.bool) if torch_side else np.ones((), dtype=bool)
            return one.expand(shape) if torch_side else np.broadcast_to(one, shape)
        ends = None if self.ends is None else self.ends[rows]
        if j.ndim:  # a row's keys along the last axis
            lo, hi = lo[..., None], hi[..., None]  # (…, 1)
            ends = None if ends is None else ends[..., None]
        out = j >= lo
        out &= j < hi
        if ends is not None:  # the global keys, a second range
            out |= j < ends
        return out

    def dense(self) -> torch.Tensor | np.ndarray:
        """(S, Skv) bool: the whole grid, its own memory (two bool planes at its peak)."""
        out = self[:, :]
        return out.contiguous() if isinstance(out, torch.Tensor) else np.ascontiguousarray(out)

    def counts(self) -> torch.Tensor | np.ndarray:
        """(S,) int64: how many keys each query row may attend."""
        return self.hi - self.lo if self.ends is None else self.hi - self.lo + self.ends

    def any(self, axis: int = -1) -> torch.Tensor | np.ndarray:
        """(S,) bool: whether each query row sees a key (only the key axis, -1 or 1)."""
        if axis not in (-1, 1):
            raise ValueError(f"KeyRanges.any reduces the key axis (-1 or 1), got {axis}")
        return self.hi > self.lo if self.ends is None else (self.hi > self.lo) | (self.ends > 0)

    def all(self, rows=slice(None)) -> bool:
        """Whether every query row (of ``rows``: an int, a slice or an index array) may attend
        every key (nothing is masked there); from the ranges alone."""
        return bool((self.lo[rows] == 0).all()) and bool((self.hi[rows] == self.key_len).all())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeyRanges):
            return NotImplemented
        def ends(m: KeyRanges) -> np.ndarray:
            return np.zeros(len(m), dtype=np.int64) if m.ends is None else np.asarray(m.ends)

        return (self.key_len == other.key_len and len(self) == len(other)
                and bool((np.asarray(self.lo) == np.asarray(other.lo)).all())
                and bool((np.asarray(self.hi) == np.asarray(other.hi)).all())
                and bool((ends(self) == ends(other)).all()))

    __hash__ = None


def visible_tiles(config: AttentionConfig, tile: tuple[int, int]) -> torch.Tensor:
    """(⌈S/tr⌉, ⌈Skv/tc⌉) bool: whether any query of a tr × tc tile may attend any of its keys
    (what ``pool_tiles(build_mask(config).float(), tile) > 0`` gives), from the rows' key
    ranges: O(S + tiles), no (S, Skv) grid (1 GiB of float32 at S = 16384)."""
    S, Skv = config.seq_len, config.key_len
    tr, tc = tile
    R, C = -(-S // tr), -(-Skv // tc)
    m = KeyRanges.of(config)
    cover = torch.zeros(R, C + 1, dtype=torch.int32)  # +1 where a row's tiles start, −1 after
    segments = [(m.lo, m.hi)] + ([] if m.ends is None else [(torch.zeros_like(m.ends), m.ends)])
    for lo, hi in segments:  # a row's local range, and its global keys (local ∪ global)
        seen = hi > lo
        rows = torch.arange(S)[seen] // tr
        first, stop = lo[seen] // tc, (hi[seen] - 1) // tc + 1  # the tile columns each row touches
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
