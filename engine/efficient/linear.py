"""Linear kernels by associativity: O(S·F·Dh), no (S, Skv) grid and no (S, F, Dh) tensor.

With φ̃ the features (engine.efficient.features) and z_j = [v_j, 1] (Dh + 1 values: the 1
sums the normaliser), each query needs, for each end t of its key ranges,

    f_i(t) = φ̃(q_i) · Σ_{j<t} φ̃(k_j) z_jᵀ          (1, Dh + 1)

and the row's ranges [lo, hi) ∪ [0, ends) give  Σ_{visible j} = f(hi) − f(lo) + f(ends)
(prefix-sum differences: exact for causal, windows, padding and global tokens alike). Then
context_i = num_i / den_i, the first Dh columns over the last.

f is computed chunkwise: keys in chunks of C, the states P[c] = Σ_{j<c·C} φ̃(k_j) z_jᵀ
(B, Hkv, ⌈Skv/C⌉ + 1, F, Dh + 1), one per chunk boundary; then for a block of R query rows
whose ends start in chunk u,

    f_i(t) = φ̃(q_i) · P[u]  +  Σ_{u·C ≤ j < t_i} (φ̃(q_i)·φ̃(k_j)) z_j      (a masked local product)

A block's states of several terms are combined before the product (in float64 when a term is
subtracted: the window's sum is not lost to the cancellation of two long prefix sums).
"""

from __future__ import annotations

import torch

from ..masks import KeyRanges
from .features import features, performer_matrix
from .views import windows

#: Keys per chunk, and query rows per block of the chunked product.
CHUNK = 64
#: Elements one group of blocks' local scores may hold (B·H·blocks·R·L).
GROUP_ELEMENTS = 1 << 22
#: A block's keys past its chunk (its ends' spread) above which its rows go by chunk instead.
MAX_SPAN = 4 * CHUNK


def chunk_states(phi_k: torch.Tensor, z: torch.Tensor, n_keys: int, chunk: int, dtype: torch.dtype) -> torch.Tensor:
    """(B, Hkv, n + 1, F, Dh + 1) in ``dtype``: P[c] = Σ_{j < c·chunk} φ̃(k_j) z_jᵀ, n = ⌈n_keys/chunk⌉
    (P[0] = 0), from phi_k (B, Hkv, N, F) and z (B, Hkv, N, Dh + 1) whose rows past the n_keys
    keys are zero (N ≥ n·chunk): each chunk's product a view of its rows."""
    B, Hkv, _, F = phi_k.shape
    n = -(-n_keys // chunk)
    states = torch.zeros(B, Hkv, n + 1, F, z.shape[-1], dtype=dtype)
    pk = phi_k[:, :, : n * chunk].unflatten(2, (n, chunk))  # (B, Hkv, n, chunk, F)
    pz = z[:, :, : n * chunk].unflatten(2, (n, chunk))
    for c0 in range(0, n, 256):  # 256 chunks' products at a time
        c1 = min(n, c0 + 256)
        states[:, :, c0 + 1 : c1 + 1] = pk[:, :, c0:c1].transpose(-2, -1) @ pz[:, :, c0:c1]
    return states.cumsum_(2)


def _by_chunk(phi_q: torch.Tensor, phi_k: torch.Tensor, z: torch.Tensor, states: torch.Tensor,
              t: torch.Tensor, sign: float, chunk: int, out: torch.Tensor) -> None:
    """out (B, Hkv, G, r, Dh+1) += sign · f(t) for rows whose ends spread widely: the rows
    grouped by the chunk their end starts in (each group's local keys < chunk)."""
    u_of = torch.div(t, chunk, rounding_mode="floor")
    for u in torch.unique(u_of).tolist():
        idx = (u_of == u).nonzero().flatten()
        pq = phi_q[:, :, :, idx]  # (B, Hkv, G, n, F)
        acc = pq @ states[:, :, None, u].to(pq.dtype)
        a, b = u * chunk, int(t[idx].max())
        if b > a:
            s = pq @ phi_k[:, :, None, a:b].transpose(-2, -1)  # (B, Hkv, G, n, b − a)
            s *= (torch.arange(a, b)[None, :] < t[idx][:, None])
            acc += s @ z[:, :, None, a:b]
        out[:, :, :, idx] += sign * acc


def prefix_rows(phi_q: torch.Tensor, phi_k: torch.Tensor, z: torch.Tensor, states: torch.Tensor,
                terms: list[tuple[torch.Tensor, float]], chunk: int = CHUNK) -> torch.Tensor:
    """(B, Hkv, G, r, Dh + 1) float32: Σ_terms sign · f(t) for query rows with features
    phi_q (B, Hkv, G, r, F) and ends t (r,) each; phi_k, z with zero rows past the keys (a
    window's reach: MAX_SPAN + chunk). Rows go in blocks of ``chunk``; a group of blocks at once
    (their states gathered, their local keys read as (blocks, L) windows)."""
    B, Hkv, G, r, F = phi_q.shape
    D1 = z.shape[-1]
    nb = -(-r // chunk)
    pad = nb * chunk - r
    if pad:  # whole blocks: the last row repeated (its results dropped)
        phi_q = torch.cat([phi_q, phi_q[:, :, :, -1:].expand(B, Hkv, G, pad, F)], 3)
        terms = [(torch.cat([t, t[-1:].expand(pad)]), s) for t, s in terms]
    out = torch.empty(B, Hkv, G, nb * chunk, D1)  # every block written below (a wide one summed: zeroed)
    pq = phi_q.view(B, Hkv, G, nb, chunk, F)
    blocks = []  # per term: (t (nb, R), base (nb,), span (nb,))
    for t, sign in terms:
        tb = t.view(nb, chunk)
        base = torch.div(tb.min(1).values, chunk, rounding_mode="floor")
        blocks.append((tb, base, tb.max(1).values - base * chunk, sign))
    wide = torch.zeros(nb, dtype=torch.bool)
    for _tb, _base, span, _s in blocks:
        wide |= span > MAX_SPAN
    regular = (~wide).nonzero().flatten()
    L = max([int(span[regular].max()) if len(regular) else 0 for _tb, _base, span, _s in blocks] + [1])
    per = max(1, GROUP_ELEMENTS // (B * Hkv * G * chunk * max(L, F)))
    out6 = out.view(B, Hkv, G, nb, chunk, D1)
    for g0 in range(0, len(regular), per):
        sel = regular[g0 : g0 + per]  # (n,) blocks
        a, n = int(sel[0]), len(sel)
        if int(sel[-1]) - a + 1 == n:  # consecutive blocks (no wide one between): views, no copies
            sel = slice(a, a + n)
        state = None
        for _tb, base, _span, sign in blocks:  # the blocks' combined states, then one product
            st = states[:, :, base[sel]]  # (B, Hkv, n, F, D1)
            state = st * sign if state is None else state.add_(st, alpha=sign)
        q_sel = pq[:, :, :, sel]  # (B, Hkv, G, n, R, F)
        acc = q_sel @ state.to(torch.float32)[:, :, None]  # (B, Hkv, G, n, R, D1)
        for tb, base, _span, sign in blocks:
            first = base[sel] * chunk  # (n,) each block's first local key
            j = first[:, None] + torch.arange(L)[None, :]  # (n, L) each block's local keys
            seen = j[:, None, :] < tb[sel][:, :, None]  # (n, R, L): j < t_i
            kw, zw = windows(phi_k, first, L), windows(z, first, L)  # (B, Hkv, n, L, ·)
            s = q_sel @ kw[:, :, None].transpose(-2, -1)  # (B, Hkv, G, n, R, L)
            s *= seen
            acc = acc.add_(s @ zw[:, :, None], alpha=sign)  # (B, Hkv, G, n, R, D1)
        out6[:, :, :, sel] = acc
    for b in wide.nonzero().flatten().tolist():  # blocks whose ends spread widely
        rows = slice(b * chunk, (b + 1) * chunk)
        out[:, :, :, rows] = 0.0
        for t, sign in terms:
            _by_chunk(phi_q[:, :, :, rows], phi_k, z, states, t[rows], sign, chunk, out[:, :, :, rows])
    return out[:, :, :, :r]


def linear_context(call, rows_pieces, out: torch.Tensor) -> None:
    """Write into ``out`` (B, H, S, Dh) the linear (or performer) kernel's context of the query
    rows of ``rows_pieces``: weights φ(q_i)·φ(k_j) / Σ_visible φ(q_i)·φ(k_j'), applied to v by
    associativity. Rows that see no key come out NaN (0/0), filled by the caller."""
    cfg = call.config
    B, H, _, Dh = call.q.shape
    Hkv, G = cfg.kv_heads, cfg.group_size
    w = performer_matrix(cfg) if cfg.kernel == "performer" else None
    phi_k, _shift = features(cfg, call.k, "k", w)  # (B, Hkv, Skv, F): the shift cancels
    z = torch.cat([call.v.float(), torch.ones(*call.v.shape[:3], 1)], -1)  # (B, Hkv, Skv, Dh + 1)
    # zero rows past the last key: a block's local window may reach past it (they add nothing)
    Skv = phi_k.shape[2]
    tail = -(-Skv // CHUNK) * CHUNK + MAX_SPAN + CHUNK - Skv
    phi_k = torch.cat([phi_k, phi_k.new_zeros(B, Hkv, tail, phi_k.shape[3])], 2)
    z = torch.cat([z, z.new_zeros(B, Hkv, tail, Dh + 1)], 2)
    m: KeyRanges = call.mask
    terms = [(m.hi, 1.0)]
    if bool((m.lo > 0).any()):
        terms.append((m.lo, -1.0))
    if m.ends is not None:
        terms.append((m.ends, 1.0))
    states = chunk_states(phi_k, z, Skv, CHUNK, torch.float64 if len(terms) > 1 else torch.float32)
    for piece in rows_pieces:
        for r0 in range(piece.start, piece.stop, 8192):  # the query features 8,192 rows at a time
            rows = slice(r0, min(piece.stop, r0 + 8192))
            q = call.q[:, :, rows]
            phi_q, _ = features(cfg, q.reshape(B, Hkv, G, q.shape[2], Dh), "q", w)
            f = prefix_rows(phi_q, phi_k, z, states, [(t[rows], s) for t, s in terms])
            ctx = f[..., :Dh] / f[..., Dh:]  # (B, Hkv, G, r, Dh)
            out[:, :, rows] = ctx.reshape(B, H, -1, Dh).to(out.dtype)
