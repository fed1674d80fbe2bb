"""A linear kernel's long-frame overview without its (S, Skv) weights: O(S·F) per head.

For kernel "linear" or "performer" the weights are w_ij = u_i·φ(k_j) over the visible keys, with
u_i = φ(q_i) / z_i and z_i = Σ_visible φ(q_i)·φ(k_j) (DESIGN.md, "Efficient attention"; φ up to
a shift that cancels). With the keys' prefix sums P[t] = Σ_{j<t} φ(k_j) and P1[t] = Σ_{j<t} j·φ(k_j)
(float64, (Skv + 1, F)), every sum of a row's weights over a key range [a, b) is u_i·(P[b] − P[a]),
so these are exact for every row, from the rows' key ranges (engine.masks.KeyRanges: up to two):

    valid, sink, diagonal, previous_token     one key each
    distance   Σ_j w_ij·|pos_i − j|            the ranges split at pos_i + 1, with P and P1
    future     Σ_{j > pos_i} w_ij              (the share on keys after the query)
    tile means (1/|I||J|) Σ_{i∈I, j∈J} w_ij    the overview a long frame draws (below)

A tile (rows I, keys J = [a_c, a_{c+1})) sums, for each range end t_i of its rows,
u_i·P[clamp(t_i, a_c, a_{c+1})]: P[a_{c+1}] for the rows whose end lies past the tile, P[a_c] for
those before it, P[t_i] for the rows whose end falls inside it (the diagonal tiles of a causal
mask, a window's edges): the rows grouped by (row tile, tile of t_i), each group's Σ u_i times P
at every tile boundary. Exact, O(S·F + groups·C·F): a row tile's ends fall in one or two tiles
(a causal diagonal, a window's edges), so the groups number about R.

What needs a whole row and has no such formula (entropy −Σ w log w, the softmax Jacobian norm's
Σ w³, the row's largest weight, the largest |q·k|) is computed exactly on a sample of rows,
:func:`sample_rows` (NaN elsewhere): callers say so where they show it.
"""

from __future__ import annotations

import torch

from ..masks import KeyRanges, mask_fill_value
from ..rows import weight_row_stats
from .features import features, performer_matrix
from .formula import kernel_scores, key_features

#: Rows the sampled statistics are computed on (evenly spaced, the first and last included).
SAMPLE_ROWS = 128
#: Query rows per step of the exact per-row sums (float64 (rows, F) temporaries, a few of them).
ROW_CHUNK = 8192
#: Sampled rows per (rows, Skv) plane of the sampled statistics.
SAMPLE_CHUNK = 32
#: Statistics computed exactly on every row by this module; the rest are on the sample only.
EXACT_STATS = ("valid", "sink", "distance", "diagonal", "previous_token", "inf_scores_raw", "inf_scores")
SAMPLED_STATS = ("entropy", "jacobian_norm", "row_max", "max_abs_score_raw")


def sample_rows(seq_len: int, n: int = SAMPLE_ROWS) -> torch.Tensor:
    """(≤ n,) int64 evenly spaced query rows 0 … seq_len − 1 (all of them when seq_len ≤ n)."""
    if seq_len <= n:
        return torch.arange(seq_len)
    return torch.unique(torch.linspace(0, seq_len - 1, n).round().to(torch.int64))


def applies(config, ranges: KeyRanges) -> bool:
    """Whether a trace's long-frame statistics may come from this module: a linear kernel,
    every row seeing a key (a row that sees none is the formula's NaN or uniform row, left to
    the exact pass)."""
    return config.kernel in ("linear", "performer") and bool(ranges.any(-1).all())


def _ranges(m: KeyRanges, rows: slice) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The visible key ranges [l, h) of query rows ``rows``: one or two (the global keys)."""
    out = [(m.lo[rows], m.hi[rows])]
    if m.ends is not None:
        ends = m.ends[rows]
        out.append((torch.zeros_like(ends), ends))
    return out


class KernelHead:
    """One (batch, head) of a linear-kernel call: φ of its queries and keys, the keys' prefix sums.

    phi_q (S, F), phi_k (Skv, F) float64 (shifted features: the shift cancels in every ratio);
    PP (Skv + 1, 2F) float64: P[t] = Σ_{j<t} φ(k_j) beside P1[t] = Σ_{j<t} j·φ(k_j); z (S,) each
    row's normaliser, filled by :func:`exact_rows` for the rows it is given."""

    def __init__(self, call, batch: int, head: int) -> None:
        cfg = call.config
        self.call, self.batch, self.head = call, batch, head
        kv = head // cfg.group_size
        phi_k, _ = key_features(call)  # (B, Hkv, Skv, F), kept in call.memo
        self.phi_k32 = phi_k[batch, kv]  # (Skv, F) float32: the sampled rows' products
        w = performer_matrix(cfg) if cfg.kernel == "performer" else None
        self.phi_q32, _ = features(cfg, call.q[batch, head], "q", w)  # (S, F) float32
        self.phi_q = self.phi_q32.double()
        k64 = self.phi_k32.double()
        Skv, F = k64.shape
        self.F = F
        self.PP = torch.zeros(Skv + 1, 2 * F, dtype=torch.float64)
        torch.cumsum(torch.cat([k64, k64 * torch.arange(Skv, dtype=torch.float64)[:, None]], 1), 0,
                     out=self.PP[1:])
        self.P = self.PP[:, :F]  # (a view)
        self.phi_k = k64
        self.z = torch.full((cfg.seq_len,), float("nan"), dtype=torch.float64)

    def u(self, rows: slice) -> torch.Tensor:
        """(r, F) float64 φ(q_i) / z_i: row i's weights are u_i·φ(k_j) on its visible keys."""
        return self.phi_q[rows] / self.z[rows, None]


def exact_rows(kh: KernelHead, positions: torch.Tensor, rows: slice) -> dict[str, torch.Tensor]:
    """The exact statistics of query rows ``rows`` (r,) each, as engine.rows.weight_row_stats
    names them: valid, sink, diagonal, previous_token, distance (float32; valid bool), and
    ``future``, the weight on keys after the query's position. Sets ``kh.z`` of those rows."""
    m: KeyRanges = kh.call.mask
    Skv, F = kh.phi_k.shape
    v = kh.phi_q[rows]  # (r, F) φ(q_i), not yet normalised
    r = v.shape[0]
    pos = positions[rows]  # (r,) int64
    ranges = _ranges(m, rows)
    # per range [lo, mid) (keys at or before the query) and [mid, hi) (after): Σ φ(q_i)·φ(k_j), Σ j·(…)
    low, high = torch.zeros(r, 2, dtype=torch.float64), torch.zeros(r, 2, dtype=torch.float64)
    for lo, hi in ranges:
        mid = torch.clamp(pos + 1, lo, hi)
        g_mid = kh.PP[mid]  # (r, 2F)
        low += ((g_mid - kh.PP[lo]).view(r, 2, F) * v[:, None]).sum(-1)
        if bool((mid < hi).any()):  # (a causal row sees nothing after its query)
            high += ((kh.PP[hi] - g_mid).view(r, 2, F) * v[:, None]).sum(-1)
    z = low[:, 0] + high[:, 0]
    kh.z[rows] = z
    valid = z > 0
    p = pos.to(torch.float64)
    dist = (p * low[:, 0] - low[:, 1] + high[:, 1] - p * high[:, 0]) / z
    future = high[:, 0] / z

    def weight_on(j: torch.Tensor) -> torch.Tensor:  # (r,) the weight on key j (r,) (0 if unseen)
        jj = j.clamp(0, Skv - 1)
        seen = (j >= 0) & (j < Skv)
        vis = torch.zeros_like(seen)
        for lo, hi in ranges:
            vis |= (lo <= jj) & (jj < hi)
        return torch.where(seen & vis, (kh.phi_q32[rows] * kh.phi_k32[jj]).sum(-1) / z, 0.0)

    out = {"valid": valid, "sink": weight_on(torch.zeros_like(pos)), "diagonal": weight_on(pos),
           "previous_token": weight_on(pos - 1), "distance": dist, "future": future}
    return {k: (t if t.dtype == torch.bool else torch.where(valid, t, 0.0).float()) for k, t in out.items()}


def _group_sums(x: torch.Tensor, inv: torch.Tensor, n: int) -> torch.Tensor:
    """(n, …) Σ of the rows of x (r, …) by group inv (r,) in 0 … n − 1: by prefix-sum differences
    when the groups come in order (a run each: the usual masks), else index_add_ (slower)."""
    if len(inv) and bool((inv[1:] >= inv[:-1]).all()):
        cs = torch.cat([x.new_zeros(1, *x.shape[1:]), x.cumsum(0)])
        last = torch.searchsorted(inv, torch.arange(n), right=True)  # each group's end
        first = torch.cat([last.new_zeros(1), last[:-1]])
        return cs[last] - cs[first]
    return x.new_zeros(n, *x.shape[1:]).index_add_(0, inv, x)


def tile_means(kh: KernelHead, tile: tuple[int, int], rows: slice) -> torch.Tensor:
    """(⌈r/tr⌉, ⌈Skv/tc⌉) float32: the mean weight of each tile of query rows ``rows`` (starting
    on a tile boundary) × keys, masked cells counted as 0 (pool_tiles(weights, tile, "mean"))."""
    tr, tc = tile
    Skv, F = kh.phi_k.shape
    m: KeyRanges = kh.call.mask
    r = rows.stop - rows.start  # (after exact_rows of these rows: their z)
    R, C = -(-r // tr), -(-Skv // tc)
    bounds = torch.clamp(torch.arange(C + 1) * tc, max=Skv)  # (C + 1,) the key tiles' edges a_c
    pa = kh.P[bounds]  # (C + 1, F)
    u = kh.u(rows)  # (r, F)
    tile_of_row = torch.arange(r) // tr  # (r,)
    cols = torch.arange(C)[None, :]
    sums = torch.zeros(R, C, dtype=torch.float64)
    for lo, hi in _ranges(m, rows):
        for t, sign in ((hi, 1.0), (lo, -1.0)):
            c = torch.div(t, tc, rounding_mode="floor")  # (r,) the key tile t falls in (C: past all)
            # rows grouped by (their row tile, the tile of t): a row tile's ends fall in a tile or two
            group, inv = torch.unique(tile_of_row * (C + 1) + c, return_inverse=True)
            both = torch.cat([u, (u * kh.P[t]).sum(-1, keepdim=True)], 1)  # (r, F + 1)
            sums_g = _group_sums(both, inv, len(group))
            U, at_t = sums_g[:, :F], sums_g[:, F]  # Σ u_i, Σ u_i·P[t_i]
            gi, gc = group // (C + 1), (group % (C + 1))[:, None]
            V = U @ pa.T  # (groups, C + 1): U·P[a_c]
            part = torch.where(cols < gc, V[:, 1:], torch.where(cols > gc, V[:, :C], at_t[:, None]))
            sums.index_add_(0, gi, part, alpha=sign)
    n_rows = torch.full((R,), float(tr), dtype=torch.float64)
    n_rows[-1] = r - (R - 1) * tr
    n_keys = (bounds[1:] - bounds[:-1]).to(torch.float64)
    return (sums / (n_rows[:, None] * n_keys[None, :])).float()


def _visible(m: KeyRanges, idx: torch.Tensor) -> torch.Tensor:
    """(n, Skv) bool: the mask's rows idx (n,), from their ranges."""
    j = torch.arange(m.key_len)[None, :]
    seen = (j >= m.lo[idx, None]) & (j < m.hi[idx, None])
    if m.ends is not None:
        seen |= j < m.ends[idx, None]
    return seen


def sampled_rows(kh: KernelHead, positions: torch.Tensor, sample: torch.Tensor,
                 check=None) -> dict[str, torch.Tensor]:
    """Statistics that need whole rows, computed exactly on the rows ``sample`` (n,): each (n,)
    float32, entropy, jacobian_norm, row_max (weight_row_stats of the exact weight rows
    φ(q_i)·φ(k_j) / z_i on the visible keys) and max_abs_score_raw (the largest |q_i·k_j|).
    ``check()`` after each SAMPLE_CHUNK rows (a cancel raises from it)."""
    cfg = kh.call.config
    m: KeyRanges = kh.call.mask
    q = kh.call.q[kh.batch, kh.head]  # (S, Dh)
    k = kh.call.k[kh.batch, kh.head // cfg.group_size]  # (Skv, Dh)
    parts: dict[str, list[torch.Tensor]] = {n: [] for n in SAMPLED_STATS}
    for s0 in range(0, len(sample), SAMPLE_CHUNK):
        idx = sample[s0 : s0 + SAMPLE_CHUNK]
        s = kh.phi_q32[idx] @ kh.phi_k32.T  # (n, Skv) φ(q_i)·φ(k_j)
        s *= _visible(m, idx)
        s /= kh.z[idx, None].float()
        st = weight_row_stats(s, positions[idx], stats=("entropy", "jacobian_norm", "row_max"))
        del s
        for n in ("entropy", "jacobian_norm", "row_max"):
            parts[n].append(st[n])
        raw = q[idx].float() @ k.float().T  # (n, Skv) Q·Kᵀ (float32: no overflow, overflow_free says)
        parts["max_abs_score_raw"].append(torch.where(torch.isfinite(raw), raw.abs(), float("-inf")).amax(-1))
        if check is not None:
            check()
    return {n: torch.cat(v) for n, v in parts.items()}


def overflow_free(kh: KernelHead) -> bool:
    """Whether no Q·Kᵀ entry and no visible softmax input of this head can be ±inf, from bounds:
    |q_i·k_j| ≤ ‖q_i‖·max‖k_j‖ (far below the dtype's max) and φ(q_i)·φ(k_j) ≥ max_f φ(q_i)_f·min_j
    φ(k_j)_f > 0 (its log finite). When not, the exact pass counts them."""
    cfg = kh.call.config
    q = kh.call.q[kh.batch, kh.head].float()
    k = kh.call.k[kh.batch, kh.head // cfg.group_size].float()
    bound = float(q.norm(dim=-1).max()) * float(k.norm(dim=-1).max())
    if not bound < torch.finfo(kh.call.q.dtype).max / 4:
        return False
    low = (kh.phi_q32 * kh.phi_k32.amin(0)[None, :]).amax(-1)  # (S,) lower bounds of φ(q_i)·φ(k_j)
    return bool((low > 1e-30).all())



def score_rows(call, batch: int, head: int, idx: torch.Tensor) -> dict[str, torch.Tensor]:
    """The trace's ``scores_raw`` and ``scores`` rows idx (n,) of one head, (n, Skv) float32 each:
    Q·Kᵀ (float32 products, rounded to the config dtype) and log φ(q_i)·φ(k_j) on the visible
    keys, the mask's fill value elsewhere (engine.efficient.formula.kernel_scores), all rows in
    one product (the eager path's rows one at a time cost 0.1 s each at S = 65,536)."""
    cfg = call.config
    q = call.q[batch, head, idx]  # (n, Dh)
    k = call.k[batch, head // cfg.group_size]
    raw = (q.float() @ k.float().T).to(call.q.dtype)
    scores = kernel_scores(call, batch, head, idx)[0, 0]  # (n, Skv) in q's dtype
    fill = mask_fill_value(cfg.mask_value, scores.dtype)
    scores = scores.masked_fill(~_visible(call.mask, idx), fill)
    return {"scores_raw": raw.float(), "scores": scores.float()}
