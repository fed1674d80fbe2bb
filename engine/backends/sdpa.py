"""torch.nn.functional.scaled_dot_product_attention with an explicit mask.

SDPA's `is_causal` is top-left aligned when S ≠ Skv; ours is bottom-right, so
every mask (and the ALiBi bias) goes in as one float mask (1, H, S, Skv).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .eager import unavailable_reason as _device_reason

_KERNEL_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}


def _sdpa_args(call):
    """(q, k, v, attn_mask, scale) honouring prescale_q."""
    q, scale = call.q, call.scale
    if call.config.prescale_q:
        q, scale = q * scale, 1.0
    return q, call.k, call.v, call.additive_mask(), scale


def attend(call) -> tuple[torch.Tensor, str]:
    q, k, v, mask, scale = _sdpa_args(call)
    gqa = call.config.group_size > 1
    try:
        choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, False, scale=scale, enable_gqa=gqa)
        kernel = _KERNEL_NAMES.get(int(choice), str(int(choice)))
    except Exception:  # private helper: the name is informative only
        kernel = "auto"
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=gqa)
    return out, f"sdpa:{kernel}"


def unavailable_reason(device: str, dtype: str) -> str | None:
    return _device_reason(device, dtype)
