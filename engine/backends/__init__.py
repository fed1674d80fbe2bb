"""A small registry of attention backends with one call shape.

Every backend is ``attend(call) -> (context, impl)`` where ``call`` is an
``AttentionCall`` and ``context`` is (B, H, S, Dh). The eager backend is the
source of truth for every picture; fused backends only supply the output and
are checked against it. A backend that cannot honour some config field raises
``BackendUnavailable`` saying why, instead of computing something else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..config import AttentionConfig


class BackendUnavailable(RuntimeError):
    """The chosen backend cannot run this config here; the message says why."""


@dataclass(frozen=True)
class AttentionCall:
    """Everything a backend needs, already positioned and projected.

    q: (B, H, S, Dh) queries (after RoPE, before any scaling)
    k, v: (B, Hkv, Skv, Dh), not repeated per query head
    mask: (S, Skv) bool, True = may attend
    bias: (H, S, Skv) float32 ALiBi bias, or None
    scale: multiplier of QKᵀ
    """

    config: AttentionConfig
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    mask: torch.Tensor
    bias: torch.Tensor | None
    scale: float

    def additive_mask(self) -> torch.Tensor | None:
        """(1, H, S, Skv) float mask in q's dtype: ALiBi bias plus the masked value.

        torch's fused kernels take this shape; None when nothing is masked or biased.
        """
        from ..masks import mask_fill_value

        cfg = self.config
        H, S, Skv = cfg.n_heads, cfg.seq_len, cfg.key_len
        if self.bias is None and bool(self.mask.all()):
            return None
        add = torch.zeros(H, S, Skv, dtype=torch.float32)
        if self.bias is not None:
            add += self.bias
        fill = mask_fill_value(cfg.mask_value, self.q.dtype)
        add = add.masked_fill(~self.mask, fill)
        return add.to(self.q.dtype).unsqueeze(0).to(self.q.device)


Attend = Callable[[AttentionCall], tuple[torch.Tensor, str]]


def _registry() -> dict[str, tuple[Attend, Callable[[str, str], str | None]]]:
    from . import eager, flash, sdpa

    return {
        "eager": (eager.attend, eager.unavailable_reason),
        "sdpa": (sdpa.attend, sdpa.unavailable_reason),
        "flash": (flash.attend, flash.unavailable_reason),
    }


def available_backends(device: str = "cpu", dtype: str = "float16") -> dict[str, str | None]:
    """Each backend name → None when usable on `device`, else the reason it is not."""
    return {name: reason(device, dtype) for name, (_, reason) in _registry().items()}


def attend(name: str, call: AttentionCall) -> tuple[torch.Tensor, str]:
    """Run backend `name`; raises BackendUnavailable with the reason if it cannot."""
    fn, reason = _registry()[name]
    why = reason(call.config.device, call.config.dtype)
    if why is not None:
        raise BackendUnavailable(f"backend {name!r} is unavailable: {why}")
    return fn(call)
