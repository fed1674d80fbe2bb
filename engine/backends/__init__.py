"""A small registry of attention backends with one call shape.

Every backend is ``attend(call, pace=None) -> (context, impl)`` where ``call`` is an
``AttentionCall`` and ``context`` is (B, H, S, Dh). The eager backend is the
source of truth for every picture; fused backends only supply the output and
are checked against it. A backend that cannot honour some config field raises
``BackendUnavailable`` saying why, instead of computing something else.

Fused calls hold no (B, H, S, Skv) grid: the mask goes in as one (S, Skv)
plane shared by every head (or not at all for plain causal self-attention),
and ALiBi, whose bias differs per head, runs the kernel over chunks of heads
so that at most :data:`FUSED_WORKSPACE` bytes of bias exist at once.

The shared pieces live in :mod:`.common` (re-exported here), which the backends import:
this package imports them for its registry, never the other way round.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import eager, flash, sdpa
from .common import (
    FUSED_WORKSPACE,
    AttentionCall,
    BackendUnavailable,
    Kernel,
    fused_attention,
    head_chunks,
)

__all__ = ["FUSED_WORKSPACE", "AttentionCall", "BackendUnavailable", "Kernel", "attend", "available_backends",
           "fused_attention", "head_chunks"]

Attend = Callable[[AttentionCall], tuple[torch.Tensor, str]]


def _registry() -> dict[str, tuple[Attend, Callable[[str, str], str | None]]]:
    return {
        "eager": (eager.attend, eager.unavailable_reason),
        "sdpa": (sdpa.attend, sdpa.unavailable_reason),
        "flash": (flash.attend, flash.unavailable_reason),
    }


def available_backends(device: str = "cpu", dtype: str = "float16") -> dict[str, str | None]:
    """Each backend name → None when usable on `device`, else the reason it is not."""
    return {name: reason(device, dtype) for name, (_, reason) in _registry().items()}


def attend(name: str, call: AttentionCall, pace=None) -> tuple[torch.Tensor, str]:
    """Run backend `name`; raises BackendUnavailable with the reason if it cannot. ``pace`` =
    (engine.pacing.Pacer, a plan of the query rows): the kernel runs a piece of rows at a
    time, with progress between pieces."""
    fn, reason = _registry()[name]
    why = reason(call.config.device, call.config.dtype)
    if why is not None:
        raise BackendUnavailable(f"backend {name!r} is unavailable: {why}")
    return fn(call, pace)
