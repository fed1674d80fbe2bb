"""The textbook formula, step by step, in the config dtype.

:func:`eager_steps` computes every (B, H, S, Skv) grid at once (the materialising
path); :func:`head_rows` computes the same steps for some query rows of one head,
so long sequences can be inspected a head or a block at a time with the same
numbers (each step is the same operation on a slice).
"""

from __future__ import annotations

import torch

from ..masks import mask_fill_value

GRID_STEPS = ("scores_raw", "scores", "weights")


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """(B, Hkv, N, Dh) → (B, Hkv·group, N, Dh): query heads g·r … g·r+r−1 share KV head g."""
    if group == 1:
        return x
    B, Hkv, N, Dh = x.shape
    return x[:, :, None].expand(B, Hkv, group, N, Dh).reshape(B, Hkv * group, N, Dh)


def per_head_qk(q: torch.Tensor, k: torch.Tensor, group: int) -> torch.Tensor:
    """Q·Kᵀ (B, H, S, Skv) from q (B, H, S, Dh) and k (B, Hkv, Skv, Dh), one (1, 1, S, Dh) ×
    (1, 1, Dh, Skv) product per head. torch's CPU kernel for a batch of matrices can round
    differently from that for one (it picks by shape), so every path (the whole grid, one
    head, a block of rows) multiplies one head at a time and gets the same numbers."""
    B, H, S, _ = q.shape
    out = torch.empty(B, H, S, k.shape[2], dtype=q.dtype, device=q.device)
    for b in range(B):
        for h in range(H):
            kv = h // group
            torch.matmul(q[b : b + 1, h : h + 1], k[b : b + 1, kv : kv + 1].transpose(-2, -1),
                         out=out[b : b + 1, h : h + 1])
    return out


def eager_steps(call) -> dict[str, torch.Tensor]:
    """scores_raw, scores, weights, context for an AttentionCall, all in q's dtype.

    scores_raw = Q·Kᵀ (the product that overflows float16); with prescale_q the
    softmax input is instead (scale·Q)·Kᵀ, which stays in range.
    """
    cfg = call.config
    v = repeat_kv(call.v, cfg.group_size)  # (B, H, Skv, Dh)
    scores_raw = per_head_qk(call.q, call.k, cfg.group_size)  # (B, H, S, Skv)
    if cfg.prescale_q:
        scores = per_head_qk(call.q * call.scale, call.k, cfg.group_size)
    else:
        scores = scores_raw * call.scale
    bias = call.alibi()
    if bias is not None:
        scores = scores + bias.to(scores.dtype).to(scores.device)
    if not bool(call.mask.all()):  # masked_fill, as on the slide (where() is the fast form)
        fill = mask_fill_value(cfg.mask_value, scores.dtype)
        scores = torch.where(call.mask.to(scores.device), scores, fill)
    weights = torch.softmax(scores, dim=-1)
    context = weights @ v  # (B, H, S, Dh)
    return {"scores_raw": scores_raw, "scores": scores, "weights": weights, "context": context}


def head_scores_raw(call, batch: int, head: int, rows: slice) -> torch.Tensor:
    """(r, Skv) Q·Kᵀ of query rows ``rows`` of one (batch, head), in q's dtype; equal to
    ``eager_steps(call)["scores_raw"][batch, head, rows]``."""
    kv = head // call.config.group_size
    # kept 4-D, (1, 1, r, ·), so the product takes the same batched-matmul path as the whole grid
    q = call.q[batch : batch + 1, head : head + 1, rows]  # (1, 1, r, Dh)
    k = call.k[batch : batch + 1, kv : kv + 1]  # (1, 1, Skv, Dh)
    return (q @ k.transpose(-2, -1))[0, 0]


def head_scores(call, batch: int, head: int, rows: slice, raw: torch.Tensor | None, *,
                inplace: bool = False) -> torch.Tensor:
    """(r, Skv) softmax input of those rows from their ``raw`` Q·Kᵀ: scaled (or, with
    prescale_q, recomputed from the prescaled Q: ``raw`` may then be None), ALiBi added,
    masked; the same operations as :func:`eager_steps`. ``inplace`` reuses ``raw``'s memory
    when it is not needed any more (same numbers)."""
    cfg = call.config
    if cfg.prescale_q:
        kv = head // cfg.group_size
        q = call.q[batch : batch + 1, head : head + 1, rows]
        k = call.k[batch : batch + 1, kv : kv + 1]
        scores = ((q * call.scale) @ k.transpose(-2, -1))[0, 0]
    else:
        scores = raw.mul_(call.scale) if inplace else raw * call.scale
    bias = call.alibi(slice(head, head + 1), rows)
    if bias is not None:
        bias = bias[0].to(scores.dtype).to(scores.device)
        scores = scores.add_(bias) if inplace or cfg.prescale_q else scores + bias
    mask = call.mask[rows]
    if not bool(mask.all()):
        fill = mask_fill_value(cfg.mask_value, scores.dtype)
        keep = mask.to(scores.device)
        scores = scores.masked_fill_(~keep, fill) if inplace or cfg.prescale_q else torch.where(keep, scores, fill)
    return scores


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
    out["weights"] = torch.softmax(out["scores"], dim=-1)
    return out


def head_grid(call, batch: int, head: int, name: str, blocks: list[slice]) -> torch.Tensor:
    """One head's ``name`` grid (S, Skv) in q's dtype, computed a block of query rows at a
    time (``blocks``) into the result, so the peak is one plane plus a block's temporaries."""
    S, Skv = call.config.seq_len, call.config.key_len
    out = torch.empty(S, Skv, dtype=call.q.dtype, device=call.q.device)
    for rows in blocks:
        out[rows] = head_rows(call, batch, head, rows, upto=name)[name]
    return out


def attend(call) -> tuple[torch.Tensor, str]:
    return eager_steps(call)["context"], "eager"


def unavailable_reason(device: str, dtype: str) -> str | None:
    if device == "cuda" and not torch.cuda.is_available():
        return "no CUDA device is available (torch.cuda.is_available() is False)"
    return None
