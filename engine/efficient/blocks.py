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
import math
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
    hierarchical attention's own blocks); blocks whose keys span about as many go together
    (:func:`_groups`), their windows gathered at one width L, the group's widest span: one
    batched product for the scores of every head, one masked softmax, one for the context. A
    block whose span is over :data:`WIDE` (the global queries, which see every key) goes alone,
    in rows that fit."""
    B, H = call.q.shape[:2]
    q = call.q.float() * call.scale  # (B, H, S, Dh), scaled once
    k, v = call.k.float(), call.v.float()  # (B, Hkv, Skv, Dh), no copy in float32
    n_shared = 0 if shared is None else shared.k.shape[2]
    for piece in rows_pieces:
        first, length = row_blocks(list(starts), piece.start, piece.stop, rows)
        ridx = first[:, None] + torch.arange(rows)[None, :]  # (n, R) each block's rows
        valid = torch.arange(rows)[None, :] < length[:, None]
        ridx = torch.minimum(ridx, (first + length - 1)[:, None])  # a short block repeats its last row
        base = lo[ridx].amin(1)
        span = (hi[ridx].amax(1) - base).clamp(min=0)  # (n,) keys of each block's window
        wide = span > WIDE
        for sel, width in _groups(span, ~wide, B * H * rows, n_shared):
            _window_blocks(call, q, k, v, lo, hi, shared, ridx[sel], valid[sel], base[sel], width, out)
        for b in wide.nonzero().flatten().tolist():  # alone, in rows that fit a block
            a, n = int(first[b]), int(length[b])
            for sub in _fitting(lo, hi, a, a + n, n_shared, B * H):
                r = torch.arange(sub.start, sub.stop)[None, :]  # (1, r)
                base_b = lo[sub].min()
                width = max(0, int(hi[sub].max() - base_b))
                _window_blocks(call, q, k, v, lo, hi, shared, r, torch.ones_like(r, dtype=torch.bool),
                               base_b[None], width, out)


#: A block whose keys span more than this goes alone (a group would gather that many keys for each).
WIDE = 4096
#: Scores a group of blocks holds: B·H·blocks·rows·(width + shared).
GROUP_ELEMENTS = 1 << 22


def _groups(span: torch.Tensor, narrow: torch.Tensor, rows: int, n_shared: int) -> list[tuple[torch.Tensor, int]]:
    """The ``narrow`` blocks (n,) bool in groups: (their indices, the group's window width L);
    ``rows``: a block's query rows times the heads.
    Blocks go in order of span, a group taking the next while the widest wastes at most an
    eighth of its width on the narrowest and the scores fit :data:`GROUP_ELEMENTS`, so the
    blocks of a regular pattern (every block of a sliding window; the k-th block of rows of
    every summary block) share one width, one band of keys relative to their start and
    evenly spaced windows (strided views, no copy)."""
    idx = narrow.nonzero().flatten()
    order = idx[torch.argsort(span[idx], stable=True)]
    spans = span[order].tolist()
    out, i = [], 0
    while i < len(order):
        j = i + 1
        while (j < len(order) and spans[j] - spans[i] <= spans[j] // 8
               and (j + 1 - i) * rows * (spans[j] + n_shared) <= GROUP_ELEMENTS):
            j += 1
        out.append((order[i:j], int(spans[j - 1])))
        i = j
    return out


def _window_blocks(call, q, k, v, lo, hi, shared, ridx, valid, base, width: int, out: torch.Tensor) -> None:
    """Write into ``out`` (B, H, S, Dh) the context of n blocks of R query rows ``ridx`` (n, R)
    (``valid`` (n, R): the rows that are the block's, not a short block's repeats), each over
    its window of keys base…base+width−1 (n,) and the shared keys some row of the group sees:
    the keys [shared; window] of each block gathered (B, Hkv, n, m + L, Dh), one product for
    the scores of every head, −inf where a row may not look, one softmax, one product for the
    context. q (B, H, S, Dh) scaled; k, v (B, Hkv, Skv, Dh) float32."""
    cfg = call.config
    B, H, _, Dh = q.shape
    Hkv, G = cfg.kv_heads, cfg.group_size
    n, R = ridx.shape
    rel = torch.arange(width)
    lo_r, hi_r = lo[ridx] - base[:, None], hi[ridx] - base[:, None]  # (n, R) the window's part each row sees
    if bool((lo_r == lo_r[:1]).all()) and bool((hi_r == hi_r[:1]).all()):
        lo_r, hi_r = lo_r[:1], hi_r[:1]  # one band for every block (a sliding window's blocks)
    hide_w = (rel < lo_r[..., None]) | (rel >= hi_r[..., None])  # (n or 1, R, L)
    hide_w = hide_w if bool(hide_w.any()) else None
    m, hide_s = 0, None
    if shared is not None:
        vis = shared.visible(ridx.flatten()).view(n, R, -1)
        used = vis.any(0).any(0).nonzero()
        m = int(used.max()) + 1 if len(used) else 0  # the shared keys some row of the group sees
        vis = vis[..., :m]
        if m and not bool(vis.all()):
            hide_s = ~(vis[:, :1] if bool((vis == vis[:, :1]).all()) else vis)  # (n, 1 or R, m)
    flat = ridx.flatten()
    a = int(flat[0])
    one_run = bool(valid.all()) and bool((flat == a + torch.arange(n * R)).all())
    if m + width == 0:  # nothing to see: NaN, filled by the caller
        _put(out, torch.full((B, H, n, R, Dh), float("nan")), ridx, valid, a if one_run else None)
        return
    dist = None
    if cfg.positional == "alibi":  # −slope·|pos_i − pos_j| (a summary: its keys' mean position)
        pos = query_positions(cfg.seq_len, cfg.key_len)[ridx].float()[..., None]  # (n, R, 1)
        key_pos = (base[:, None] + rel[None, :]).float()
        if m:
            key_pos = torch.cat([shared.pos[:m].expand(n, m), key_pos], 1)
        dist = -alibi_slopes(cfg.n_heads).view(Hkv, G, 1, 1, 1) * (pos - key_pos[:, None, :]).abs()
    # the masks as additive biases (0 or −inf): an add is several times faster than masked_fill_
    bias_s, bias_w = (None if t is None else torch.zeros(t.shape).masked_fill_(t, float("-inf"))
                      for t in (hide_s, hide_w))
    qb = block_rows(q, ridx).view(B, Hkv, G, n, R, Dh)
    kk, vv = _windows(k, base, width), _windows(v, base, width)  # (B, Hkv, n, L, Dh)
    if m:  # the shared keys before each window's: (B, Hkv, n, m + L, Dh)
        kk = torch.cat([shared.k[:, :, None, :m].expand(B, Hkv, n, m, Dh), kk], 3)
        vv = torch.cat([shared.v[:, :, None, :m].expand(B, Hkv, n, m, Dh), vv], 3)
    kt, vv = kk[:, :, None].transpose(-2, -1), vv[:, :, None]

    def context(exact: bool) -> torch.Tensor:
        """(B, H, n, R, Dh); ``exact``: the masks by masked_fill_, not added as biases."""
        s = qb @ kt  # (B, Hkv, G, n, R, m + L)
        if dist is not None:
            s += dist
        for part, bias, hide in ((s[..., :m], bias_s, hide_s), (s[..., m:], bias_w, hide_w)):
            if hide is None:
                continue
            if exact:
                part.masked_fill_(hide, float("-inf"))
            else:
                part.add_(bias)
        return (torch.softmax(s, -1, out=s) @ vv).view(B, H, n, R, Dh)

    ctx = context(exact=False)
    # a NaN or inf: a row that sees no key (NaN either way), or a masked score of ±inf or NaN,
    # which adding −inf would not hide: computed again with masked_fill_, exactly
    if (bias_s is not None or bias_w is not None) and not math.isfinite(float(ctx.sum())):
        ctx = context(exact=True)
    _put(out, ctx, ridx, valid, a if one_run else None)


def _windows(t: torch.Tensor, base: torch.Tensor, width: int) -> torch.Tensor:
    """(B, Hkv, n, L, Dh): keys (or values) base…base+width−1 of t (B, Hkv, Skv, Dh) for each of n
    blocks, zero past the last key (a group's windows, as wide as its widest block, may reach past
    it): views of t where they are evenly spaced and stay inside it, else gathered from a copy of
    the keys they read with zero rows after it."""
    Skv = t.shape[2]
    if int(base.max()) + width <= Skv:
        return windows(t, base, width)
    start = int(base.min())
    tail = torch.cat([t[:, :, start:], t.new_zeros(*t.shape[:2], width, t.shape[3])], 2)
    return windows(tail, base - start, width)


def _put(out: torch.Tensor, ctx: torch.Tensor, ridx: torch.Tensor, valid: torch.Tensor, a: int | None) -> None:
    """Write ctx (B, H, n, R, Dh) into out (B, H, S, Dh): rows a… (one run of rows), else the
    valid rows of ridx (n, R)."""
    if a is not None:
        out[:, :, a : a + ridx.numel()] = ctx.flatten(2, 3)
    else:
        out[:, :, ridx[valid]] = ctx[:, :, valid].to(out.dtype)


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
