"""Softmax attention a block of query rows at a time, over each row's key range and a few
keys every row may see: local ∪ global (Longformer) and hierarchical attention, exact, with
no (S, Skv) grid (a block holds (B, H, rows, its keys) at most :data:`BLOCK_ELEMENTS`).

    row i sees   keys [lo_i, hi_i)            a contiguous range (its window; hierarchical: its
                                              own block), read as a slice of k and v
               + shared keys n with visible(i, n)   the global keys [0, g) (local ∪ global) or the
                                              block summaries (hierarchical), (B, Hkv, N, Dh)

    context_i = Σ softmax(scale·q_i·[shared; window]ᵀ + ALiBi, masked) · [shared; window values]

Rows that see no key come out NaN here; engine.efficient.attend fills them as the mask_value
would (NaN for "-inf", the mean value for a finite one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..positional import alibi_slopes, query_positions

#: Scores one block may hold: B·H·rows·keys (16 MiB of float32 per plane).
BLOCK_ELEMENTS = 1 << 22
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


def _grouped(q: torch.Tensor, kv_heads: int) -> torch.Tensor:
    """(B, H, r, D) → (B, Hkv, G, r, D): query heads grouped by the KV head they read."""
    B, H, r, D = q.shape
    return q.view(B, kv_heads, H // kv_heads, r, D)


def block_rows(lo: torch.Tensor, hi: torch.Tensor, starts: list[int], n_shared: int, heads: int,
               stop: int, first: int = 0) -> list[slice]:
    """Blocks of query rows from ``first`` to ``stop``: each begins at ``starts`` (or every
    BLOCK_ROWS rows after one), halved until its scores (heads·rows·(keys of its range +
    n_shared)) fit BLOCK_ELEMENTS, down to one row."""
    out = []
    bounds = sorted({first, stop, *[s for s in starts if first < s < stop]})
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        i = a
        while i < b:
            r = min(BLOCK_ROWS, b - i)
            while r > 1:
                span = int(hi[i : i + r].max()) - int(lo[i : i + r].min())
                if heads * r * (max(span, 0) + n_shared) <= BLOCK_ELEMENTS:
                    break
                r //= 2
            out.append(slice(i, i + r))
            i += r
    return out


def ranged_softmax(call, lo: torch.Tensor, hi: torch.Tensor, shared: Shared | None,
                   rows_pieces, out: torch.Tensor, starts: list[int] = ()) -> None:
    """Write into ``out`` (B, H, S, Dh) the context of every query row of ``rows_pieces``
    (slices of the S rows, e.g. a pacer's parts): softmax over [lo_i, hi_i) and the shared keys
    it may see. ``starts``: rows where a block must begin (hierarchical: a new own block)."""
    cfg = call.config
    B, H, S, Dh = call.q.shape
    Hkv, G = cfg.kv_heads, cfg.group_size
    k, v = call.k.float(), call.v.float()
    scale = call.scale
    alibi = cfg.positional == "alibi"
    slopes = -alibi_slopes(H).view(1, Hkv, G, 1, 1) if alibi else None
    pos = query_positions(S, cfg.key_len).float()
    n_shared = 0 if shared is None else shared.k.shape[2]
    for piece in rows_pieces:
        for rows in block_rows(lo, hi, list(starts), n_shared, B * H, piece.stop, piece.start):
            a = int(lo[rows].min())
            b = max(a, int(hi[rows].max()))
            q = _grouped(call.q[:, :, rows].float(), Hkv) * scale  # (B, Hkv, G, r, Dh)
            j = torch.arange(a, b)
            parts_s, parts_v, parts_m = [], [], []
            if shared is not None:
                vis = shared.visible(rows)  # (r, N)
                used = vis.any(0).nonzero()
                n = int(used.max()) + 1 if len(used) else 0  # the shared keys some row sees
                if n:
                    s = q @ shared.k[:, :, None, :n].transpose(-2, -1)  # (B, Hkv, G, r, n)
                    if alibi:
                        s += slopes * (pos[rows][:, None] - shared.pos[None, :n]).abs()
                    parts_s.append(s)
                    parts_v.append(shared.v[:, :, :n])
                    parts_m.append(vis[:, :n])
            if b > a:
                s = q @ k[:, :, None, a:b].transpose(-2, -1)  # (B, Hkv, G, r, b − a)
                if alibi:
                    s += slopes * (pos[rows][:, None] - j[None, :].float()).abs()
                parts_s.append(s)
                parts_v.append(v[:, :, a:b])
                parts_m.append((j[None, :] >= lo[rows][:, None]) & (j[None, :] < hi[rows][:, None]))
            if not parts_s:  # nothing to see: NaN, filled by the caller
                out[:, :, rows] = float("nan")
                continue
            s = parts_s[0] if len(parts_s) == 1 else torch.cat(parts_s, -1)
            seen = parts_m[0] if len(parts_m) == 1 else torch.cat(parts_m, -1)
            w = torch.softmax(s.masked_fill_(~seen, float("-inf")), dim=-1)
            ctx = None
            at = 0
            for vals in parts_v:  # weights · values, part by part (no concatenated values)
                n = vals.shape[2]
                c = w[..., at : at + n] @ vals[:, :, None]
                ctx = c if ctx is None else ctx.add_(c)
                at += n
            out[:, :, rows] = ctx.view(B, H, -1, Dh).to(out.dtype)
