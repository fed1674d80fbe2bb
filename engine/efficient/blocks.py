"""Softmax attention a block of query rows at a time, over each row's key range and a few
keys every row may see: local ∪ global (Longformer) and hierarchical attention, exact, with
no (S, Skv) grid (a group of blocks holds (B, H, rows, their keys) at most :data:`GROUP_ELEMENTS`).

    row i sees   keys [lo_i, hi_i)            a contiguous range (its window; hierarchical: its
                                              own block), read as a slice of k and v
               + shared keys n with visible(i, n)   the global keys [0, g) (local ∪ global) or the
                                              block summaries (hierarchical), (B, Hkv, N, Dh)

    context_i = Σ softmax(scale·q_i·[shared; window]ᵀ + ALiBi, masked) · [shared; window values]

Rows that see no key come out NaN here; engine.efficient.attend fills them as the mask_value
would (NaN for "-inf", the mean value for a finite one).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..positional import alibi_slopes, query_positions
from .views import block_rows, windows

#: Query rows of a block of local ∪ global attention (hierarchical: its own blocks' rows).
BLOCK_ROWS = 128


@dataclass(frozen=True)
class Shared:
    """Keys every block may see: k, v (B, Hkv, N, Dh) float32; pos (N,) float32 their
    positions (ALiBi's distance); visible(rows) → (r, N) bool."""

    k: torch.Tensor
    v: torch.Tensor
    pos: torch.Tensor
    visible: Callable[[slice], torch.Tensor]


def row_blocks(starts: list[int], first: int, stop: int, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Query rows first…stop−1 in blocks of at most ``rows``, each beginning at one of
    ``starts`` or ``rows`` after a block's start: (block starts (n,), lengths (n,)) int64."""
    bounds = sorted({first, stop, *[s for s in starts if first < s < stop]})
    out = [(i, min(b, i + rows) - i) for a, b in itertools.pairwise(bounds) for i in range(a, b, rows)]
    t = torch.tensor(out, dtype=torch.int64).view(-1, 2)
    return t[:, 0], t[:, 1]


def ranged_softmax(call, lo: torch.Tensor, hi: torch.Tensor, shared: Shared | None,
                   rows_pieces, out: torch.Tensor, starts: list[int] = (), rows: int = BLOCK_ROWS) -> None:
    """Write into ``out`` (B, H, S, Dh) the context of every query row of ``rows_pieces``
    (slices of the S rows, e.g. a pacer's parts): softmax over [lo_i, hi_i) and the shared keys
    it may see. Rows go in blocks of ``rows`` (a block begins at each of ``starts``:
    hierarchical attention's own blocks), a group of blocks in each product: the blocks' keys
    gathered as windows of one width, L (the widest block's span). A block whose span is
    over :data:`WIDE` (the global queries, which see every key) goes alone, in rows that fit."""
    B, H = call.q.shape[:2]
    # zero rows past the last key: a group's windows (as wide as its widest block) may reach past it
    k, v = (torch.cat([t.float(), t.new_zeros(*t.shape[:2], WIDE + rows, t.shape[3], dtype=torch.float32)], 2)
            for t in (call.k, call.v))
    n_shared = 0 if shared is None else shared.k.shape[2]
    for piece in rows_pieces:
        first, length = row_blocks(list(starts), piece.start, piece.stop, rows)
        ridx = first[:, None] + torch.arange(rows)[None, :]  # (n, R) each block's rows
        valid = torch.arange(rows)[None, :] < length[:, None]
        ridx = torch.minimum(ridx, (first + length - 1)[:, None])  # a short block repeats its last row
        base = lo[ridx].amin(1)
        span = (hi[ridx].amax(1) - base).clamp(min=0)  # (n,) keys of each block's window
        wide = span > WIDE
        narrow = (~wide).nonzero().flatten()
        if len(narrow):
            width = int(span[narrow].max())
            per = max(1, GROUP_ELEMENTS // (B * H * rows * max(1, width + n_shared)))
            for g0 in range(0, len(narrow), per):
                sel = narrow[g0 : g0 + per]
                ctx = _window_blocks(call, k, v, lo, hi, shared, ridx[sel], base[sel], width)
                if bool(valid[sel].all()) and int(sel[-1] - sel[0]) + 1 == len(sel):  # one run of rows
                    a = int(ridx[sel[0], 0])
                    out[:, :, a : a + ctx.shape[2] * rows] = ctx.flatten(2, 3).to(out.dtype)
                else:
                    out[:, :, ridx[sel][valid[sel]]] = ctx[:, :, valid[sel]].to(out.dtype)
        for b in wide.nonzero().flatten().tolist():  # alone, in rows that fit a block
            a, n = int(first[b]), int(length[b])
            for sub in _fitting(lo, hi, a, a + n, n_shared, B * H):
                out[:, :, sub] = _slice_block(call, k, v, lo, hi, shared, sub).to(out.dtype)


#: A block whose keys span more than this goes alone (a group would gather that many keys for each).
WIDE = 4096
#: Scores a group of blocks may hold: B·H·blocks·rows·(width + shared).
GROUP_ELEMENTS = 1 << 23


def _window_blocks(call, k, v, lo, hi, shared, ridx, base, width) -> torch.Tensor:
    """(B, H, n, R, Dh) float32: the context of n blocks of R query rows ``ridx`` (n, R), each
    over its window of keys base…base+width−1 (n,) and the shared keys some row of the group
    sees (their scores joined to the windows'); k, v: (B, Hkv, Skv + zero rows, Dh)."""
    cfg = call.config
    B, H, _, Dh = call.q.shape
    Hkv, G = cfg.kv_heads, cfg.group_size
    n, R = ridx.shape
    q = block_rows(call.q, ridx).float().view(B, Hkv, G, n, R, Dh) * call.scale  # (B, Hkv, G, n, R, Dh)
    j = base[:, None] + torch.arange(width)[None, :]  # (n, L) the window's keys
    seen = (j[:, None, :] >= lo[ridx][..., None]) & (j[:, None, :] < hi[ridx][..., None])  # (n, R, L)
    key_pos = j.float()
    m = 0
    if shared is not None:
        vis = shared.visible(ridx.flatten()).view(n, R, -1)
        used = vis.flatten(0, 1).any(0).nonzero()
        m = int(used.max()) + 1 if len(used) else 0  # the shared keys some row of the group sees
        seen = torch.cat([vis[..., :m], seen], -1)
        key_pos = torch.cat([shared.pos[:m].expand(n, m), key_pos], 1)
    if m + width == 0:  # nothing to see: NaN, filled by the caller
        return torch.full((B, H, n, R, Dh), float("nan"))
    kw, vw = windows(k, base, width), windows(v, base, width)  # (B, Hkv, n, L, Dh), views
    s = q @ kw[:, :, None].transpose(-2, -1)  # (B, Hkv, G, n, R, L)
    if m:
        s = torch.cat([q @ shared.k[:, :, None, None, :m].transpose(-2, -1), s], -1)  # (…, m + L)
    if cfg.positional == "alibi":  # −slope·|pos_i − pos_j| (a summary: its keys' mean position)
        pos = query_positions(cfg.seq_len, cfg.key_len)[ridx].float()[..., None]  # (n, R, 1)
        slopes = -alibi_slopes(cfg.n_heads).view(Hkv, G, 1, 1, 1)
        s += slopes * (pos - key_pos[:, None, :]).abs()
    w = torch.softmax(s.masked_fill_(~seen, float("-inf")), dim=-1)
    ctx = w[..., m:] @ vw[:, :, None]
    if m:
        ctx.add_(w[..., :m] @ shared.v[:, :, None, None, :m])
    return ctx.view(B, H, n, R, Dh)


def _fitting(lo, hi, a: int, b: int, n_shared: int, heads: int) -> list[slice]:
    """Rows a…b−1 of a wide block, cut so that each part's scores fit GROUP_ELEMENTS."""
    out, i = [], a
    while i < b:
        r = b - i
        while r > 1 and heads * r * (max(0, int(hi[i : i + r].max()) - int(lo[i : i + r].min())) + n_shared) \
                > GROUP_ELEMENTS:
            r //= 2
        out.append(slice(i, i + r))
        i += r
    return out


def _slice_block(call, k, v, lo, hi, shared, rows: slice) -> torch.Tensor:
    """(B, H, r, Dh) float32: the context of query rows ``rows``, one block over keys
    [min lo, max hi) and the shared keys."""
    B, H, _, Dh = call.q.shape
    r = rows.stop - rows.start
    a = int(lo[rows].min())
    width = max(0, int(hi[rows].max()) - a)
    ridx = torch.arange(rows.start, rows.stop)[None, :]  # (1, r)
    return _window_blocks(call, k, v, lo, hi, shared, ridx, torch.tensor([a]), width).view(B, H, r, Dh)
