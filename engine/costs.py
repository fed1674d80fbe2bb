"""What each stage of one attention layer costs: FLOPs and bytes moved, from the config alone.

The lesson's table (the diagnostics panel) and the run-time estimate (engine.speed) both read it.
"""

from __future__ import annotations

import torch

from .config import AttentionConfig
from .inputs import torch_dtype


def stage_costs(config: AttentionConfig) -> list[dict]:
    """FLOPs and bytes moved by each stage (multiply-add = 2 FLOPs).

    Bytes count reading inputs and writing outputs once in the config dtype:
    what a non-fused implementation moves. The (S, Skv) stages are the O(n²)
    memory FlashAttention avoids.
    """
    B, S, Skv, d = config.batch, config.seq_len, config.key_len, config.d_model
    H, Hkv, Dh = config.n_heads, config.kv_heads, config.head_dim
    item = torch.finfo(torch_dtype(config.dtype)).bits // 8
    grid = B * H * S * Skv
    return [
        {"stage": "QKV projection", "flops": 2 * B * (S * d * H * Dh + 2 * Skv * d * Hkv * Dh),
         "bytes": item * (B * S * d + B * Skv * d + d * (H + 2 * Hkv) * Dh + B * (S * H + 2 * Skv * Hkv) * Dh)},
        {"stage": "scores QKᵀ", "flops": 2 * grid * Dh,
         "bytes": item * (B * H * S * Dh + B * Hkv * Skv * Dh + grid)},
        {"stage": "softmax", "flops": 5 * grid, "bytes": item * 2 * grid},
        {"stage": "weights·V", "flops": 2 * grid * Dh,
         "bytes": item * (grid + B * Hkv * Skv * Dh + B * H * S * Dh)},
        {"stage": "output projection", "flops": 2 * B * S * d * d,
         "bytes": item * (2 * B * S * d + d * d)},
    ]
