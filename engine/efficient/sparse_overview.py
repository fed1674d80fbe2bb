"""A local ∪ global or hierarchical long frame's row statistics and overview from the few keys
each row really weighs: O(S·(w + g)) or O(S·(b + S/b)) a head, not O(S·Skv).

Softmax rows whose weights are exactly (DESIGN.md, "AttentionConfig", "Efficient attention"):

    local ∪ global   w_ij = exp(s_ij) / Z_i on the visible keys [0, ends_i) ∪ [lo_i, hi_i)
                     (engine.masks.KeyRanges: at most window + g keys a row), 0 elsewhere
    hierarchical     w_ij = exp(s_ij) / Z_i on the keys of the row's own block (those it may see),
                     w_ij = exp(s̄_ic) / n_c / Z_i on every key of another visible block c
                     (s̄_ic the summary's score: scale·q_i·k̄_c (+ its mean ALiBi bias); n_c keys)

with s_ij = scale·q_i·k_j (+ ALiBi) and Z_i summing every visible weight. A row is then a few
explicit weights (:class:`Rows`: ``w`` (r, L) on keys ``key``) and, hierarchical, one weight per
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
SUB_ROWS = 512


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
    return [*out, (lo, hi)]


def _range_products(q: torch.Tensor, k: torch.Tensor, start: torch.Tensor, width: int
                    ) -> tuple[torch.Tensor, list[tuple[int, int, int, torch.Tensor | None]]]:
    """(r, width) q_i·k_{start_i + t}, t < width (keys past the end repeat the last), from q (r, Dh)
    and k (Skv, Dh) float32, and how it was taken: [(first row, first key, stop key, cols)].
    Rows that all start at one key (the global keys): one product, cols None; otherwise a dense
    product of SUB_ROWS rows against the keys they span, then each row's columns cols (n, width)."""
    r, Skv = q.shape[0], k.shape[0]
    first = int(start.min())
    if first == int(start.max()) and first + width <= Skv:
        return q @ k[first : first + width].T, [(0, first, first + width, None)]
    out = torch.empty(r, width)
    t = torch.arange(width)
    how = []
    for s0 in range(0, r, SUB_ROWS):
        st = start[s0 : s0 + SUB_ROWS]
        base = int(st.min())
        stop = min(Skv, int(st.max()) + width)
        cols = (st[:, None] - base + t[None, :]).clamp_(max=stop - base - 1)
        torch.gather(q[s0 : s0 + SUB_ROWS] @ k[base:stop].T, 1, cols, out=out[s0 : s0 + SUB_ROWS])
        how.append((s0, base, stop, cols))
    return out, how


@dataclass
class Rows:
    """The weights of a piece of query rows: w (r, L) on keys key (r, L) float32 (clamped to
    the last key; w is 0 where the row does not see it), and hierarchical's per-key weight of
    each other block wg (r, nB) (0 where not seen) or None; ``spans``: each explicit range's
    (a, e) (r,) each; ``how``: each explicit range's (width, _range_products' sub-blocks)."""

    key: torch.Tensor
    spans: list
    w: torch.Tensor
    wg: torch.Tensor | None
    how: list


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
        idx, seen, s, how, spans = [], [], [], [], []
        for a, e in _spans(cfg, m, rows, self.sm):
            width = max(1, int((e - a).max()))  # (a range no row has: one column none sees)
            t = torch.arange(width)
            j = a[:, None] + t[None, :]  # (r, width)
            idx.append(j.clamp_(max=Skv - 1).float())  # (exact integers in float32: Skv < 2²⁴)
            spans.append((a, e))
            seen.append(t[None, :] < (e - a)[:, None])
            prod, subs = _range_products(q, self.k, a, width)
            s.append(prod)
            how.append((width, subs))
        idx, seen, s = torch.cat(idx, 1), torch.cat(seen, 1), torch.cat(s, 1)
        if self.slope is not None:
            s -= self.slope * (pos[:, None].float() - idx).abs_()
        s.masked_fill_(~seen, float("-inf"))
        sg = None
        vis = None if self.sm is None else self.sm.visible(cfg, rows)  # (r, nB)
        seen_blocks = None if vis is None else vis.any(0).nonzero()
        if seen_blocks is not None and len(seen_blocks):  # each other block's score per key: s̄ − log n_c
            nb = int(seen_blocks.max()) + 1  # blocks 0 … nb − 1 (causal: those before the rows)
            sm = self.sm
            sg = q @ self.kbar[:nb].T  # (r, nb)
            if self.slope is not None:
                sg -= self.slope * (pos[:, None].float() - sm.centre[None, :nb]).abs()
            sg -= sm.count[:nb].clamp(min=1).float().log()
            sg.masked_fill_(~vis[:, :nb], float("-inf"))
        top = s.amax(1) if sg is None else torch.maximum(s.amax(1), sg.amax(1))  # (r,)
        w = (s - top[:, None]).exp_()
        z = w.sum(1)
        wg = None
        if sg is not None:
            wg = (sg - top[:, None]).exp_()
            z += wg @ self.sm.count[: wg.shape[1]].float()
            wg /= z[:, None]
        w /= z[:, None]
        return Rows(idx, spans, w, wg, how)

    def stats(self, positions: torch.Tensor, rows: slice, r_: Rows) -> dict[str, torch.Tensor]:
        """Row statistics of ``rows`` (each (r,): valid bool, the others float32), named as
        engine.rows.weight_row_stats, and ``future``; from their :class:`Rows`."""
        pos = positions[rows]
        w, key = r_.w, r_.key
        p = pos[:, None].float()
        tiny = torch.finfo(torch.float32).tiny
        causal = self.call.config.causal  # (every key a row sees is at or before it)
        ent = -(w * w.clamp_min(tiny).log_()).sum(1)
        w2 = w * w
        s2 = w2.sum(1)
        s3 = w2.mul_(w).sum(1)
        del w2
        top = w.amax(1)
        if causal:  # Σ w·(p − j), no key after the query
            dist = pos.float() * w.sum(1) - (w * key).sum(1)
            future = torch.zeros(len(pos))
        else:
            dist = (w * (p - key).abs_()).sum(1)
            future = (w * (key > p)).sum(1)

        def weight_on(j: torch.Tensor) -> torch.Tensor:  # (r,) the weight on key j (r,) (0 if unseen)
            out = torch.zeros(len(j))
            hit = torch.zeros(len(j), dtype=torch.bool)
            col = 0
            for (a, e), (width, _subs) in zip(r_.spans, r_.how):
                inside = (j >= a) & (j < e)
                at = (j - a).clamp(0, width - 1) + col
                out += torch.where(inside, w.gather(1, at[:, None])[:, 0], 0.0)
                hit |= inside
                col += width
            if r_.wg is not None:
                blk = torch.div(j, self.call.config.summary_block, rounding_mode="floor")
                ok = (j >= 0) & (j < self.call.config.key_len) & ~hit & (blk < r_.wg.shape[1])
                g = r_.wg.gather(1, blk.clamp(0, r_.wg.shape[1] - 1)[:, None])[:, 0]
                out = torch.where(ok, out + g, out)
            return out

        if r_.wg is not None:  # a block's n_c keys each weigh wg_c
            wg = r_.wg
            nb = wg.shape[1]  # (the blocks these rows may see are among the first nb)
            n = self.sm.count[:nb].float()  # (nb,)
            nwg = wg * n
            ent -= (nwg * wg.clamp_min(tiny).log_()).sum(1)
            w2 = wg * wg
            s2 += w2 @ n
            s3 += w2.mul_(wg) @ n
            del w2
            top = torch.maximum(top, wg.amax(1))
            # every key of another block lies on one side of the query: Σ_j |p − j| = n_c·|p − centre_c|
            centre = self.sm.centre[:nb]
            if causal:  # (only blocks wholly before the query's)
                dist += pos.float() * nwg.sum(1) - nwg @ centre
            else:
                dist += (nwg * (p - centre[None, :]).abs_()).sum(1)
                future += (nwg * (self.block_start[None, :nb] > p)).sum(1)
        jac = (s2 - 2 * s3 + s2 * s2).clamp(min=0).sqrt()
        return {"valid": torch.isfinite(ent), "entropy": ent, "jacobian_norm": jac, "row_max": top,
                "sink": weight_on(torch.zeros_like(pos)), "distance": dist, "diagonal": weight_on(pos),
                "previous_token": weight_on(pos - 1), "future": future}

    def context(self, r_: Rows) -> torch.Tensor:
        """(r, Dh) float32 Σ_j w_ij·v_j (+ Σ_c n_c·wg_c·v̄_c): the rows' eager reference context,
        each explicit range's weights spread back onto the keys its products spanned."""
        r = r_.w.shape[0]
        out = torch.zeros(r, self.v.shape[1])
        col = 0
        for width, subs in r_.how:
            w = r_.w[:, col : col + width]
            for s0, base, stop, cols in subs:
                if cols is None:
                    out += w @ self.v[base:stop]
                    continue
                n = cols.shape[0]
                dense = torch.zeros(n, stop - base).scatter_add_(1, cols, w[s0 : s0 + n])
                out[s0 : s0 + n] += dense @ self.v[base:stop]
            col += width
        if r_.wg is not None:
            nb = r_.wg.shape[1]
            out += (r_.wg * self.sm.count[:nb].float()) @ self.vbar[:nb]
        return out

    def tile_max(self, r_: Rows, tile: tuple[int, int]) -> torch.Tensor:
        """(⌈r/tr⌉, ⌈Skv/tc⌉) float32: pool_tiles(weights of these rows, tile, "max") (masked
        weights are 0), the rows starting on a tile boundary."""
        tr, tc = tile
        Skv = self.call.config.key_len
        r = r_.w.shape[0]
        R, C = -(-r // tr), -(-Skv // tc)
        # each explicit weight straight into its (row tile, key tile) cell
        cell = r_.key.div(tc).floor_().long() + (torch.arange(r) // tr * C)[:, None]  # (r, L)
        out = torch.zeros(R * C).scatter_reduce_(0, cell.view(-1), r_.w.reshape(-1), "amax").view(R, C)
        if r_.wg is not None:  # a block's per-key weight: its rows' max, on every key tile it covers
            nB = r_.wg.shape[1]
            wg = r_.wg if R * tr == r else torch.cat([r_.wg, r_.wg.new_zeros(R * tr - r, nB)])
            by_tile = wg.view(R, tr, nB).amax(1)  # (R, nB)
            start, count = self.block_start[:nB], self.sm.count[:nB]
            first = torch.div(start, tc, rounding_mode="floor")
            last = torch.div(start + count.clamp(min=1) - 1, tc, rounding_mode="floor")
            for d in range(int((last - first).max()) + 1):
                t = first + d
                ok = (t <= last) & (count > 0)
                out.scatter_reduce_(1, t[ok][None, :].expand(R, -1), by_tile[:, ok], "amax")
        return out

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
