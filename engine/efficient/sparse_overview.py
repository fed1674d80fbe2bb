"""A local ∪ global or hierarchical long frame's row statistics and overview from the few keys
each row really weighs: O(S·(w + g)) or O(S·(b + S/b)) a head, not O(S·Skv).

Softmax rows whose weights are exactly (DESIGN.md, "AttentionConfig", "Efficient attention"):

    local ∪ global   w_ij = exp(s_ij) / Z_i on the visible keys [0, ends_i) ∪ [lo_i, hi_i)
                     (engine.masks.KeyRanges: at most window + g keys a row), 0 elsewhere
    hierarchical     w_ij = exp(s_ij) / Z_i on the keys of the row's own block (those it may see),
                     w_ij = exp(s̄_ic) / n_c / Z_i on every key of another visible block c
                     (s̄_ic the summary's score: scale·q_i·k̄_c (+ its mean ALiBi bias); n_c keys)

with s_ij = scale·q_i·k_j (+ ALiBi) and Z_i summing every visible weight. A row is then a few
explicit weights (:class:`Rows`: ``w`` (r, L) on keys ``idx``) and, hierarchical, one weight per
key for each other block (``wg`` (r, nB)); every statistic of the exact pass follows exactly on
every row:

    entropy      −Σ w log w − Σ_c n_c·wg_c log wg_c
    Jacobian     ‖diag(p) − p pᵀ‖_F from Σp² and Σp³ (Σ over a block: n_c·wg_c², n_c·wg_c³)
    row max, sink, diagonal, previous token   the explicit weight on that key, else its block's
    distance     Σ w_ij·|p_i − j| + Σ_c n_c·wg_c·|p_i − centre_c| (another block lies on one side of p_i)
    future       the share on keys after the query
    tile maxima  pool_tiles(weights, tile, "max"): the explicit weights' max per key tile and each
                 block's weight on the tiles it covers, then the max over a tile's rows

and the eager reference context Σ w_ij·v_j + Σ_c n_c·wg_c·v̄_c (backend_max_abs_diff).
What needs every key of Q·Kᵀ (the largest |q·k|, unmasked) is taken on a sample of rows
(engine.efficient.overview.sample_rows); its ±inf count is ruled out by bounds
(|q_i·k_j| ≤ ‖q_i‖·max‖k_j‖), else the exact pass runs. float32 configs only (another dtype's
rounding is the exact pass's to show).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..masks import KeyRanges
from ..positional import alibi_slopes
from .formula import summaries

#: (rows × explicit keys) of one piece of rows: its few (r, L) float32 temporaries.
PIECE_ELEMENTS = 1 << 21
#: Query rows of one dense product against the keys their range spans.
SUB_ROWS = 256


def applies(config, ranges: KeyRanges) -> bool:
    """Whether a blocked trace's rows may come from this module: softmax, float32, local ∪
    global or hierarchical, every row seeing a key, and the explicit keys far fewer than the
    grid's (≤ 1/8 of S·Skv)."""
    if config.kernel != "softmax" or config.dtype != "float32":
        return False
    if not (config.global_tokens or config.summary_block is not None):
        return False
    if not bool(ranges.any(-1).all()):
        return False
    S, Skv = config.seq_len, config.key_len
    if config.summary_block is not None:
        b = config.summary_block
        return 8 * S * (b + -(-Skv // b)) <= S * Skv
    return 8 * int(ranges.counts().sum()) <= S * Skv


def _spans(config, ranges: KeyRanges, rows: slice, sm) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The explicit key ranges [a, e) of query rows ``rows``: local ∪ global's two (global keys
    first), hierarchical's own block (what the row sees of it)."""
    lo, hi = ranges.lo[rows], ranges.hi[rows]
    if sm is not None:
        b = config.summary_block
        own = sm.own[rows].clamp(min=0)
        a = torch.maximum(lo, own * b)
        return [(a, torch.maximum(a, torch.minimum(hi, (own + 1) * b)))]
    out = []
    if ranges.ends is not None:
        ends = ranges.ends[rows]
        out.append((torch.zeros_like(ends), ends))
    return out + [(lo, hi)]


def _range_products(q: torch.Tensor, k: torch.Tensor, start: torch.Tensor, width: int) -> torch.Tensor:
    """(r, width) q_i·k_{start_i + t}, t < width (keys past the end repeat the last), from q (r, Dh)
    and k (Skv, Dh) float32: a dense product of SUB_ROWS rows against the keys they span, then
    each row's own columns."""
    r, Skv = q.shape[0], k.shape[0]
    out = torch.empty(r, width)
    t = torch.arange(width)
    for s0 in range(0, r, SUB_ROWS):
        st = start[s0 : s0 + SUB_ROWS]
        base = int(st.min())
        stop = min(Skv, int(st.max()) + width)
        dense = q[s0 : s0 + SUB_ROWS] @ k[base:stop].T  # (n, span)
        cols = (st[:, None] - base + t[None, :]).clamp_(max=stop - base - 1)
        out[s0 : s0 + SUB_ROWS] = dense.gather(1, cols)
    return out


@dataclass
class Rows:
    """The weights of a piece of query rows: w (r, L) on keys idx (r, L) (0 where not seen:
    ``seen``), and hierarchical's per-key weight of each other block wg (r, nB) (0 where not
    seen) or None; z is not kept (the weights are normalised)."""

    idx: torch.Tensor
    seen: torch.Tensor
    w: torch.Tensor
    wg: torch.Tensor | None


class SparseHead:
    """One (batch, head) of a local ∪ global or hierarchical call: its scaled queries, keys,
    values (float32) and, hierarchical, the block summaries."""

    def __init__(self, call, batch: int, head: int) -> None:
        cfg = call.config
        self.call, self.batch, self.head = call, batch, head
        kv = head // cfg.group_size
        self.q = call.q[batch, head].float() * call.scale  # (S, Dh) (prescale_q: the same product)
        self.k = call.k[batch, kv].float()  # (Skv, Dh)
        self.v = call.v[batch, kv].float()
        self.slope = float(alibi_slopes(cfg.n_heads)[head]) if cfg.positional == "alibi" else None
        self.sm = summaries(call) if cfg.summary_block is not None else None
        if self.sm is not None:
            b = cfg.summary_block
            nB = len(self.sm.count)
            self.block_start = torch.arange(nB) * b
            self.kbar = self.sm.k[batch, kv]  # (nB, Dh)
            self.vbar = self.sm.v[batch, kv]

    def weights(self, positions: torch.Tensor, rows: slice) -> Rows:
        """The exact weights of query rows ``rows`` (positions (S,) int64 absolute)."""
        cfg, m = self.call.config, self.call.mask
        Skv = cfg.key_len
        pos = positions[rows]
        q = self.q[rows]
        idx, seen, s = [], [], []
        for a, e in _spans(cfg, m, rows, self.sm):
            width = int((e - a).max()) if len(a) else 0
            if width == 0:
                continue
            t = torch.arange(width)
            j = a[:, None] + t[None, :]  # (r, width)
            idx.append(j.clamp(max=Skv - 1))
            seen.append(t[None, :] < (e - a)[:, None])
            s.append(_range_products(q, self.k, a, width))
        idx, seen, s = torch.cat(idx, 1), torch.cat(seen, 1), torch.cat(s, 1)
        if self.slope is not None:
            s -= self.slope * (pos[:, None] - idx).abs().float()
        s.masked_fill_(~seen, float("-inf"))
        sg = None
        if self.sm is not None:  # each other block's score per key: s̄ − log n_c
            sm = self.sm
            sg = q @ self.kbar.T  # (r, nB)
            if self.slope is not None:
                sg -= self.slope * (pos[:, None].float() - sm.centre[None, :]).abs()
            sg -= sm.count.clamp(min=1).float().log()
            sg.masked_fill_(~sm.visible(cfg, rows), float("-inf"))
        top = s.amax(1) if sg is None else torch.maximum(s.amax(1), sg.amax(1))  # (r,)
        w = (s - top[:, None]).exp_()
        z = w.sum(1)
        wg = None
        if sg is not None:
            wg = (sg - top[:, None]).exp_()
            z += (wg * self.sm.count.float()).sum(1)
            wg /= z[:, None]
        w /= z[:, None]
        return Rows(idx, seen, w, wg)

    def stats(self, positions: torch.Tensor, rows: slice, r_: Rows) -> dict[str, torch.Tensor]:
        """Row statistics of ``rows`` (each (r,): valid bool, the others float32), named as
        engine.rows.weight_row_stats, and ``future``; from their :class:`Rows`."""
        pos = positions[rows]
        w, idx = r_.w, r_.idx
        tiny = torch.finfo(torch.float32).tiny
        ent = -(w * w.clamp_min(tiny).log()).sum(1)
        s2, s3 = (w * w).sum(1), (w * w * w).sum(1)
        top = w.amax(1)
        dist = (w * (pos[:, None] - idx).abs().float()).sum(1)
        future = (w * (idx > pos[:, None])).sum(1)

        def weight_on(j: torch.Tensor) -> torch.Tensor:  # (r,) the weight on key j (r,) (0 if unseen)
            hit = (idx == j[:, None]) & r_.seen
            out = (w * hit).sum(1)
            if r_.wg is not None:
                blk = torch.div(j, self.call.config.summary_block, rounding_mode="floor")
                ok = (j >= 0) & (j < self.call.config.key_len) & ~hit.any(1)
                g = r_.wg.gather(1, blk.clamp(0, r_.wg.shape[1] - 1)[:, None])[:, 0]
                out = torch.where(ok, out + g, out)
            return out

        if r_.wg is not None:
            n = self.sm.count.float()[None, :]
            wg = r_.wg
            ent -= (n * wg * wg.clamp_min(tiny).log()).sum(1)
            s2 += (n * wg * wg).sum(1)
            s3 += (n * wg * wg * wg).sum(1)
            top = torch.maximum(top, wg.amax(1))
            dist += (n * wg * (pos[:, None].float() - self.sm.centre[None, :]).abs()).sum(1)
            future += (n * wg * (self.block_start[None, :] > pos[:, None])).sum(1)
        jac = (s2 - 2 * s3 + s2 * s2).clamp(min=0).sqrt()
        return {"valid": torch.isfinite(ent), "entropy": ent, "jacobian_norm": jac, "row_max": top,
                "sink": weight_on(torch.zeros_like(pos)), "distance": dist, "diagonal": weight_on(pos),
                "previous_token": weight_on(pos - 1), "future": future}

    def context(self, r_: Rows) -> torch.Tensor:
        """(r, Dh) float32 Σ_j w_ij·v_j (+ Σ_c n_c·wg_c·v̄_c): the rows' eager reference context."""
        r, L = r_.w.shape
        out = torch.bmm(r_.w[:, None, :], self.v[r_.idx.reshape(-1)].view(r, L, -1))[:, 0]
        if r_.wg is not None:
            out += (r_.wg * self.sm.count.float()[None, :]) @ self.vbar
        return out

    def tile_max(self, r_: Rows, tile: tuple[int, int]) -> torch.Tensor:
        """(⌈r/tr⌉, ⌈Skv/tc⌉) float32: pool_tiles(weights of these rows, tile, "max") (masked
        weights are 0), the rows starting on a tile boundary."""
        tr, tc = tile
        Skv = self.call.config.key_len
        r = r_.w.shape[0]
        C = -(-Skv // tc)
        cols = torch.zeros(r, C)
        cols.scatter_reduce_(1, torch.div(r_.idx, tc, rounding_mode="floor"), r_.w * r_.seen, "amax")
        if r_.wg is not None:  # each block's per-key weight on every key tile it covers
            first = torch.div(self.block_start, tc, rounding_mode="floor")
            last = torch.div(self.block_start + self.sm.count.clamp(min=1) - 1, tc, rounding_mode="floor")
            reach = int((last - first).max()) + 1
            for d in range(reach):
                t = first + d
                ok = (t <= last) & (self.sm.count > 0)
                src = r_.wg[:, ok]
                cols.scatter_reduce_(1, t[ok][None, :].expand(r, -1), src, "amax")
        R = -(-r // tr)
        pad = R * tr - r
        if pad:
            cols = torch.cat([cols, cols.new_zeros(pad, C)])
        return cols.view(R, tr, C).amax(1)

    def overflow_free(self) -> bool:
        """Whether no Q·Kᵀ entry can be ±inf: |q_i·k_j| ≤ ‖q_i‖·max‖k_j‖ far below float32's max."""
        q = self.call.q[self.batch, self.head].float()
        bound = float(q.norm(dim=-1).max()) * float(self.k.norm(dim=-1).max())
        return bound < torch.finfo(torch.float32).max / 4 and bool(torch.isfinite(self.q).all())


def pieces(ranges: KeyRanges, config, rows_n: int, multiple: int) -> list[slice]:
    """Query rows 0 … rows_n − 1 in pieces on ``multiple`` boundaries, each holding about
    PIECE_ELEMENTS (rows × explicit keys) at most (a global query sees every key: a short piece)."""
    width = ranges.counts() if config.summary_block is None else torch.full((rows_n,), config.summary_block)
    n = -(-rows_n // multiple)
    per = torch.zeros(n * multiple, dtype=torch.int64)
    per[:rows_n] = width
    per = per.view(n, multiple).amax(1)  # each group of rows' widest
    out, start, wide = [], 0, 0
    for g, wg in enumerate(per.tolist()):
        wide = max(wide, wg)
        rows_here = (g + 1) * multiple - start
        if rows_here * wide > PIECE_ELEMENTS and g * multiple > start:
            out.append(slice(start, g * multiple))
            start, wide = g * multiple, wg
    out.append(slice(start, rows_n))
    return out
