"""The textbook formula, step by step, in the config dtype."""

from __future__ import annotations

import torch

from ..masks import mask_fill_value


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """(B, Hkv, N, Dh) → (B, Hkv·group, N, Dh): query heads g·r … g·r+r−1 share KV head g."""
    if group == 1:
        return x
    B, Hkv, N, Dh = x.shape
    return x[:, :, None].expand(B, Hkv, group, N, Dh).reshape(B, Hkv * group, N, Dh)


def eager_steps(call) -> dict[str, torch.Tensor]:
    """scores_raw, scores, weights, context for an AttentionCall, all in q's dtype.

    scores_raw = Q·Kᵀ (the product that overflows float16); with prescale_q the
    softmax input is instead (scale·Q)·Kᵀ, which stays in range.
    """
    cfg = call.config
    k = repeat_kv(call.k, cfg.group_size)  # (B, H, Skv, Dh)
    v = repeat_kv(call.v, cfg.group_size)
    scores_raw = call.q @ k.transpose(-2, -1)  # (B, H, S, Skv)
    if cfg.prescale_q:
        scores = (call.q * call.scale) @ k.transpose(-2, -1)
    else:
        scores = scores_raw * call.scale
    if call.bias is not None:
        scores = scores + call.bias.to(scores.dtype).to(scores.device)
    if not bool(call.mask.all()):  # masked_fill, as on the slide (where() is the fast form)
        fill = mask_fill_value(cfg.mask_value, scores.dtype)
        scores = torch.where(call.mask.to(scores.device), scores, fill)
    weights = torch.softmax(scores, dim=-1)
    context = weights @ v  # (B, H, S, Dh)
    return {"scores_raw": scores_raw, "scores": scores, "weights": weights, "context": context}


def attend(call) -> tuple[torch.Tensor, str]:
    return eager_steps(call)["context"], "eager"


def unavailable_reason(device: str, dtype: str) -> str | None:
    if device == "cuda" and not torch.cuda.is_available():
        return "no CUDA device is available (torch.cuda.is_available() is False)"
    return None
