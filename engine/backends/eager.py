"""The textbook formula, step by step, in the config dtype.

The formula is written once: :func:`block_scores_raw` (Q·Kᵀ of a block of batch rows,
query heads and query rows, one head at a time), :func:`attention_scores` (scale, ALiBi
bias, mask) and :func:`attention_weights` (softmax). :func:`eager_steps` applies them to
the whole (B, H, S, Skv) grid at once (the materialising path); :func:`head_rows` to some
query rows of one head, so long sequences can be inspected a head or a block at a time
with the same numbers (each step is the same operation on a slice).
"""

from __future__ import annotations

import torch

from ..efficient.formula import kernel_scores, summary_scores
from ..masks import mask_fill_value

GRID_STEPS = ("scores_raw", "scores", "weights")


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """(B, Hkv, N, Dh) → (B, Hkv·group, N, Dh): query heads g·r … g·r+r−1 share KV head g."""
    if group == 1:
        return x
    B, Hkv, N, Dh = x.shape
    return x[:, :, None].expand(B, Hkv, group, N, Dh).reshape(B, Hkv * group, N, Dh)


def per_head_qk(q: torch.Tensor, k: torch.Tensor, group: int, first_head: int = 0) -> torch.Tensor:
    """Q·Kᵀ (B, h, r, Skv) from q (B, h, r, Dh), query heads ``first_head`` … ``first_head+h−1``,
    and k (B, Hkv, Skv, Dh), every KV head; one (1, 1, r, Dh) × (1, 1, Dh, Skv) product per head
    (query head j reads KV head j // group). torch's CPU kernel for a batch of matrices can round
    differently from that for one (it picks by shape), so every path (the whole grid, one head,
    a block of rows) multiplies one head at a time and gets the same numbers."""
    B, H, S, _ = q.shape
    out = torch.empty(B, H, S, k.shape[2], dtype=q.dtype, device=q.device)
    for b in range(B):
        for h in range(H):
            kv = (first_head + h) // group
            torch.matmul(q[b : b + 1, h : h + 1], k[b : b + 1, kv : kv + 1].transpose(-2, -1),
                         out=out[b : b + 1, h : h + 1])
    return out


def _as_slice(i: int | slice) -> slice:
    return slice(i, i + 1) if isinstance(i, int) else i


def block_scores_raw(call, batch: int | slice = slice(None), heads: int | slice = slice(None),
                     rows: slice = slice(None), *, scale: float | None = None) -> torch.Tensor:
    """(b, h, r, Skv) Q·Kᵀ of a block: batch rows ``batch``, query heads ``heads``, query rows
    ``rows`` (an int is a slice of one), against every key, in q's dtype. ``scale`` multiplies
    Q first (prescale_q). Equal to that block of the whole grid's product (:func:`per_head_qk`)."""
    batch, heads = _as_slice(batch), _as_slice(heads)
    q = call.q[batch, heads, rows]  # (b, h, r, Dh)
    if scale is not None:
        q = q * scale
    first = heads.indices(call.config.n_heads)[0]
    return per_head_qk(q, call.k[batch], call.config.group_size, first)


def attention_scores(call, raw: torch.Tensor | None, batch: int | slice = slice(None),
                     heads: int | slice = slice(None), rows: slice = slice(None), *,
                     inplace: bool = False) -> torch.Tensor:
    """The softmax input of a block, (b, h, r, Skv), from its raw Q·Kᵀ ``raw`` (b, h, r, Skv):
    the one formula every path uses (the whole grid, one head, a block of rows).

        scores = raw · scale            (prescale_q: (scale·Q)·Kᵀ instead; ``raw`` may be None)
               + ALiBi bias of heads ``heads``, query rows ``rows``   (h, r, Skv) float32 → dtype
        masked: where mask[rows] (r, Skv) is False, mask_value

    The efficient variants (engine.efficient.formula) change the first two lines: a linear
    kernel's scores are log φ(q)·φ(k) (``raw`` unused), hierarchical attention's other blocks
    take their summaries' scores; softmax of the result is each variant's attention matrix.
    ``batch``, ``heads``, ``rows`` place the block (absolute indices; an int is a block of one);
    its keys are all Skv keys, as a softmax row needs. ``inplace`` reuses ``raw``'s memory when
    the caller does not need it any more (the same numbers). In q's dtype on q's device."""
    cfg = call.config
    heads = _as_slice(heads)
    if cfg.kernel != "softmax":  # φ(q)·φ(k) in the log domain (no scale, no bias)
        scores = kernel_scores(call, batch, heads, rows)
    elif cfg.prescale_q:  # the product that stays in range: its own matmul
        scores = block_scores_raw(call, batch, heads, rows, scale=call.scale)
    else:
        scores = raw.mul_(call.scale) if inplace else raw * call.scale
    # from here on ``scores`` is a tensor of this call's own (or ``raw`` given up): in place
    bias = call.alibi(heads, rows) if cfg.kernel == "softmax" else None  # (h, r, Skv) float32, or None
    if bias is not None:
        scores = scores.add_(bias.to(scores.dtype).to(scores.device))
    if cfg.summary_block is not None:  # hierarchical: other blocks → their summaries
        scores = summary_scores(call, scores, batch, heads, rows)
    mask = call.mask[rows]  # (r, Skv)
    if not bool(mask.all()):  # masked_fill, as on the slide (where() is the fast form)
        fill = mask_fill_value(cfg.mask_value, scores.dtype)
        keep = mask.to(scores.device)
        scores = scores.masked_fill_(~keep, fill) if inplace else torch.where(keep, scores, fill)
    return scores


def attention_weights(scores: torch.Tensor) -> torch.Tensor:
    """softmax over the keys (the last axis) of :func:`attention_scores`, in its dtype."""
    return torch.softmax(scores, dim=-1)


def eager_steps(call, pace=None) -> dict[str, torch.Tensor]:
    """scores_raw, scores, weights (B, H, S, Skv) and context (B, H, S, Dh) for an AttentionCall,
    all in q's dtype: :func:`attention_scores` of the whole grid.

    scores_raw = Q·Kᵀ (the product that overflows float16); with prescale_q the
    softmax input is instead (scale·Q)·Kᵀ, which stays in range.

    ``pace`` = (engine.pacing.Pacer, a plan of the S query rows): the products go a piece of
    rows at a time, Q·Kᵀ (and the scores) in one pass, weights·V in another, with progress
    between pieces (each row's numbers are its block's: :func:`block_scores_raw`).
    """
    cfg = call.config
    v = repeat_kv(call.v, cfg.group_size)  # (B, H, Skv, Dh)
    pacer, plan = pace if pace is not None else (None, None)
    if pacer is None or pacer.whole(plan):
        scores_raw = block_scores_raw(call)  # (B, H, S, Skv)
        scores = attention_scores(call, scores_raw)
        weights = attention_weights(scores)
        context = weights @ v  # (B, H, S, Dh)
        if pacer is not None:
            pacer.passed(plan)
            pacer.passed(plan)
        return {"scores_raw": scores_raw, "scores": scores, "weights": weights, "context": context}
    q = call.q
    B, H, S, Dh = q.shape
    scores_raw = torch.empty(B, H, S, cfg.key_len, dtype=q.dtype, device=q.device)
    scores = torch.empty_like(scores_raw)
    for rows in pacer.each(plan):
        scores_raw[:, :, rows] = block_scores_raw(call, rows=rows)
        scores[:, :, rows] = attention_scores(call, scores_raw[:, :, rows], rows=rows)
    weights = attention_weights(scores)
    context = torch.empty(B, H, S, Dh, dtype=q.dtype, device=q.device)
    for rows in pacer.each(plan):
        context[:, :, rows] = weights[:, :, rows] @ v
    return {"scores_raw": scores_raw, "scores": scores, "weights": weights, "context": context}


def head_scores_raw(call, batch: int, head: int, rows: slice) -> torch.Tensor:
    """(r, Skv) Q·Kᵀ of query rows ``rows`` of one (batch, head), in q's dtype; equal to
    ``eager_steps(call)["scores_raw"][batch, head, rows]``."""
    return block_scores_raw(call, batch, head, rows)[0, 0]


def head_scores(call, batch: int, head: int, rows: slice, raw: torch.Tensor | None, *,
                inplace: bool = False) -> torch.Tensor:
    """(r, Skv) softmax input of those rows from their ``raw`` Q·Kᵀ (r, Skv) (None will do with
    prescale_q): :func:`attention_scores` of the block (batch, head, rows). ``inplace`` reuses
    ``raw``'s memory when it is not needed any more (same numbers)."""
    block = None if raw is None else raw[None, None]  # (1, 1, r, Skv), a view
    return attention_scores(call, block, batch, head, rows, inplace=inplace)[0, 0]


def head_rows(call, batch: int, head: int, rows: slice, upto: str = "weights") -> dict[str, torch.Tensor]:
    """The steps of :func:`eager_steps` for query rows ``rows`` of one (batch, head):
    ``scores_raw``, then ``scores`` and ``weights`` unless ``upto`` stops earlier; each
    (r, Skv) in q's dtype. No other head is touched; the ALiBi bias is computed for these
    rows only. Equal to ``eager_steps(call)[name][batch, head, rows]``."""
    raw = head_scores_raw(call, batch, head, rows)
    out = {"scores_raw": raw}
    if upto == "scores_raw":
        return out
    out["scores"] = head_scores(call, batch, head, rows, raw)
    if upto == "scores":
        return out
    out["weights"] = attention_weights(out["scores"])
    return out


def head_grid(call, batch: int, head: int, name: str, blocks: list[slice]) -> torch.Tensor:
    """One head's ``name`` grid (S, Skv) in q's dtype, computed a block of query rows at a
    time (``blocks``) into the result, so the peak is one plane plus a block's temporaries."""
    S, Skv = call.config.seq_len, call.config.key_len
    out = torch.empty(S, Skv, dtype=call.q.dtype, device=call.q.device)
    for rows in blocks:
        out[rows] = head_rows(call, batch, head, rows, upto=name)[name]
    return out


def attend(call, pace=None) -> tuple[torch.Tensor, str]:
    return eager_steps(call, pace)["context"], "eager"


def unavailable_reason(device: str, dtype: str) -> str | None:
    if device == "cuda" and not torch.cuda.is_available():
        return "no CUDA device is available (torch.cuda.is_available() is False)"
    return None
