"""Each variant's softmax input over the original keys, for the eager formula
(engine.backends.eager.attention_scores calls these for a block of batch rows, heads, rows).

The trace's ``weights`` is softmax(``scores``) for every kernel and pattern, so the variants'
``scores`` are the logarithms that make it exactly their attention matrix:

    linear, performer   scores_ij = log φ(q_i)·φ(k_j)       softmax → φ(q_i)·φ(k_j) / Σ_j' (visible j')
    hierarchical        scores_ij = scale·q_i·k_j (+ ALiBi)  for j in i's own block
                        scores_ij = scale·q_i·k̄_c − log n_c  for j in another block c (mean key k̄_c,
                                                            n_c keys): softmax gives the summary's
                                                            weight spread evenly over its keys
    local ∪ global      a softmax with its mask (engine.masks): nothing here

The mask is applied afterwards, as for softmax. ``call`` is an engine.backends AttentionCall
(q (B, H, S, Dh), k, v (B, Hkv, Skv, Dh), its ``memo`` keeps the keys' features and the
block summaries for the next block of rows).
"""

from __future__ import annotations

import torch

from ..positional import alibi_slopes, query_positions
from .features import features, performer_matrix
from .summaries import Summaries, block_summaries


def _as_slice(i: int | slice) -> slice:
    return slice(i, i + 1) if isinstance(i, int) else i


def key_features(call) -> tuple[torch.Tensor, torch.Tensor | None]:
    """φ̃(k) (B, Hkv, Skv, F) float32 and its shift (kept in ``call.memo``)."""
    if "phi_k" not in call.memo:
        w = performer_matrix(call.config) if call.config.kernel == "performer" else None
        call.memo["phi_k"] = features(call.config, call.k, "k", w)
    return call.memo["phi_k"]


def summaries(call) -> Summaries:
    """The block summaries of the call's keys and values (kept in ``call.memo``)."""
    if "summaries" not in call.memo:
        call.memo["summaries"] = block_summaries(call.config, call.k, call.v)
    return call.memo["summaries"]


def _per_head(a: torch.Tensor, b: torch.Tensor, group: int, first: int) -> torch.Tensor:
    """a (n, h, r, F) @ b (n, Hkv, N, F)ᵀ → (n, h, r, N), query head j reading KV head
    (first + j) // group; one product per head (as engine.backends.eager.per_head_qk)."""
    n, h, r, _ = a.shape
    out = torch.empty(n, h, r, b.shape[2], dtype=a.dtype)
    for j in range(h):
        kv = (first + j) // group
        torch.matmul(a[:, j : j + 1], b[:, kv : kv + 1].transpose(-2, -1), out=out[:, j : j + 1])
    return out


def kernel_scores(call, batch: int | slice, heads: int | slice, rows: slice) -> torch.Tensor:
    """(b, h, r, Skv) log φ(q_i)·φ(k_j) of a block (linear or performer kernel), in q's dtype
    (the products in float32)."""
    cfg = call.config
    batch, heads = _as_slice(batch), _as_slice(heads)
    first = heads.indices(cfg.n_heads)[0]
    phi_k, shift_k = key_features(call)
    w = performer_matrix(cfg) if cfg.kernel == "performer" else None
    phi_q, shift_q = features(cfg, call.q[batch, heads, rows], "q", w)  # (b, h, r, F)
    out = _per_head(phi_q, phi_k[batch], cfg.group_size, first).log_()  # (b, h, r, Skv)
    if shift_q is not None:  # the exponents' shifts, back in: the true log φ(q)·φ(k)
        kv = torch.arange(first, first + out.shape[1]) // cfg.group_size
        out += shift_q + shift_k[batch][:, kv]
    return out.to(call.q.dtype)


def summary_scores(call, scores: torch.Tensor, batch: int | slice, heads: int | slice,
                   rows: slice) -> torch.Tensor:
    """Hierarchical attention's softmax input of a block: ``scores`` (b, h, r, Skv), the scaled
    (and biased) Q·Kᵀ of those rows, kept on each row's own block; every other block's keys
    take that block's summary score less log n_c. A new tensor in scores' dtype."""
    cfg = call.config
    batch, heads = _as_slice(batch), _as_slice(heads)
    first = heads.indices(cfg.n_heads)[0]
    sm = summaries(call)
    q = call.q[batch, heads, rows].float()
    if cfg.prescale_q:
        q = q * call.scale
    s_bar = _per_head(q, sm.k[batch], cfg.group_size, first)  # (b, h, r, nB): q·k̄_c
    if not cfg.prescale_q:
        s_bar *= call.scale
    if cfg.positional == "alibi":  # the mean of the block's biases
        pos = query_positions(cfg.seq_len, cfg.key_len)[rows].float()
        dist = (pos[:, None] - sm.centre[None, :]).abs()  # (r, nB)
        s_bar += -alibi_slopes(cfg.n_heads)[heads][:, None, None] * dist[None]
    s_bar -= sm.count.clamp(min=1).float().log()  # spread over the block's n_c keys
    spread = s_bar[..., sm.block_of].to(scores.dtype)  # (b, h, r, Skv)
    other = sm.block_of[None, :] != sm.own[rows][:, None]  # (r, Skv): keys outside the own block
    return torch.where(other, spread, scores)
