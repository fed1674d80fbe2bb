"""torch.nn.functional.scaled_dot_product_attention with an explicit mask.

SDPA's `is_causal` is top-left aligned when S ≠ Skv; ours is bottom-right, so a
mask goes in as one float plane (1, 1, S, Skv) shared by every head, except for
plain causal self-attention (S = Skv), where `is_causal` is the same mask and
needs no tensor. ALiBi runs over chunks of heads (see ``fused_attention``).
Torch picks the kernel; on CPU that is its FlashAttention kernel. Should it pick
the math kernel, which materialises each call's (B, h, S, Skv) scores, the heads
are chunked so those stay within ``FUSED_WORKSPACE``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .common import fused_attention
from .eager import unavailable_reason as _device_reason

_KERNEL_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}


def _kernel_name(call) -> str:
    """The kernel torch's dispatcher picks for this call (asked on a one-head slice with the
    same dtype, device, head_dim and mask kind; nothing is computed)."""
    cfg = call.config
    q, k, v = call.q[:, :1], call.k[:, :1], call.v[:, :1]
    mask = None
    if call.has_alibi or not (call.plain_causal() or bool(call.mask.all())):
        mask = torch.zeros(1, 1, 1, 1, dtype=q.dtype, device=q.device).expand(1, 1, cfg.seq_len, cfg.key_len)
    try:
        choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, call.plain_causal(), scale=call.scale)
        return _KERNEL_NAMES.get(int(choice), str(int(choice)))
    except Exception:  # private helper: the name is informative only
        return "auto"


def attend(call, pace=None) -> tuple[torch.Tensor, str]:
    cfg = call.config
    kernel = _kernel_name(call)
    # the math kernel holds a (B, h, S, Skv) score and weight grid per call: chunk the heads
    per_head = 2 * cfg.batch * cfg.seq_len * cfg.key_len * max(4, call.q.element_size()) if kernel == "math" else 0
    out = fused_attention(call, F.scaled_dot_product_attention, per_head, pace)
    return out, f"sdpa:{kernel}"


def unavailable_reason(device: str, dtype: str) -> str | None:
    return _device_reason(device, dtype)
