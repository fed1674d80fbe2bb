"""FlashAttention: the flash-attn package on CUDA, else torch's own flash kernel.

torch's kernel (`sdpa_kernel(SDPBackend.FLASH_ATTENTION)`) runs on CPU too,
with float masks and GQA; it goes through ``fused_attention`` (one shared mask
plane, ALiBi in chunks of heads), so no (B, H, S, Skv) grid is ever held. flash-attn takes (B, S, H, Dh), fp16/bf16 only,
head_dim ≤ 256, and masks only through causal / window_size / alibi_slopes.
"""

from __future__ import annotations

import importlib.util

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from .common import BackendUnavailable, fused_attention
from .eager import unavailable_reason as _device_reason


def flash_attn_installed() -> bool:
    return importlib.util.find_spec("flash_attn") is not None


def unavailable_reason(device: str, dtype: str) -> str | None:
    return _device_reason(device, dtype)


def _flash_attn_refusal(call) -> str | None:
    """Why the flash-attn package cannot honour this call (None = it can)."""
    cfg = call.config
    if cfg.dtype not in ("float16", "bfloat16"):
        return f"flash-attn computes only in float16/bfloat16, not {cfg.dtype}"
    if cfg.head_dim > 256:
        return f"flash-attn supports head_dim ≤ 256, this config has {cfg.head_dim}"
    if cfg.pad:
        return "flash-attn's dense kernel has no key-padding mask (use the sdpa backend)"
    return None


def _flash_attn(call) -> torch.Tensor:
    from flash_attn import flash_attn_func

    cfg = call.config
    q, scale = call.q, call.scale
    if cfg.prescale_q:
        q, scale = q * scale, 1.0
    w = cfg.window
    # -1 means an unlimited side of the window; bottom-right aligned like ours
    window = (-1, -1) if w is None else ((w - 1, 0) if cfg.causal else (w - 1, w - 1))
    slopes = None
    if cfg.positional == "alibi":
        from ..positional import alibi_slopes

        slopes = alibi_slopes(cfg.n_heads).to(q.device)
    out = flash_attn_func(
        q.transpose(1, 2), call.k.transpose(1, 2), call.v.transpose(1, 2),  # (B, S, H, Dh)
        softmax_scale=scale, causal=cfg.causal, window_size=window, alibi_slopes=slopes,
    )
    return out.transpose(1, 2)  # (B, H, S, Dh)


def attend(call, pace=None) -> tuple[torch.Tensor, str]:
    if call.q.is_cuda and flash_attn_installed():
        why = _flash_attn_refusal(call)
        if why is None:
            return _flash_attn(call), "flash:flash-attn"
    where = "cuda" if call.q.is_cuda else "cpu"

    def kernel(*args, **kwargs) -> torch.Tensor:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(*args, **kwargs)

    try:
        out = fused_attention(call, kernel, pace=pace)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendUnavailable(
            f"torch's FlashAttention kernel cannot run this config on {where}: {first}"
        ) from exc
    return out, f"flash:torch-{where}"
