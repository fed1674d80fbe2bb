"""Capturing Q, K, V and attention weights through transformers' attention interface.

transformers (4.48+, 5.x) routes every attention computation of the modern
architectures through ``ALL_ATTENTION_FUNCTIONS[config._attn_implementation]``.
We register one more implementation, :data:`IMPLEMENTATION`, that calls the
model's *own* eager function (the ``eager_attention_forward`` of its modeling
module, so scaling, soft-capping, sinks etc. stay exactly as transformers
computes them) and, while a :func:`capturing` block is active, keeps references
to what it was given and what it returned:

* ``query`` (B, H, S, Dh), already rotated by RoPE where the model uses it,
* ``key`` / ``value`` (B, Hkv, S, Dh), after RoPE, before ``repeat_kv``,
* the softmax weights (B, H, S, S).

A custom implementation name also needs a mask function: without one,
``masking_utils`` builds no mask at all and causal models would silently
attend to the future. We register transformers' ``eager_mask`` for it.

Nothing is copied; outside a :func:`capturing` block the function is a plain
pass-through to eager attention (inside a :func:`.cancel.checkpoints` block, the same
function called a piece of query rows at a time, a cancel check before each).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

import torch

from ..backends.eager import repeat_kv
from .cancel import attention_pieces, cancellable

IMPLEMENTATION = "attention_explorer"


class StopForward(Exception):
    """Raised from inside the model once the last wanted layer is captured."""


@dataclass
class Capture:
    """Collects one forward pass. ``wanted`` = layer indices to keep (None: all);
    ``stop_after`` = raise :class:`StopForward` after this layer."""

    wanted: set[int] | None = None
    stop_after: int | None = None
    calls: int = 0
    modules: list = field(default_factory=list)
    records: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = field(
        default_factory=dict)

    def record(self, module, query, key, value, weights) -> None:
        layer = self.calls
        self.calls += 1
        self.modules.append(module)
        if weights is None:
            raise RuntimeError(
                f"layer {layer}: the eager attention function returned no weights")
        if self.wanted is None or layer in self.wanted:
            self.records[layer] = (query, key, value, weights)
        if self.stop_after is not None and layer >= self.stop_after:
            raise StopForward


_ACTIVE: ContextVar[Capture | None] = ContextVar("attention_explorer_capture", default=None)
_EAGER_CACHE: dict[type, Callable] = {}


def generic_eager_attention(module, query, key, value, attention_mask, scaling=None,
                            dropout=0.0, **kwargs):
    """Textbook eager attention, used only when a model's modeling module has no
    ``eager_attention_forward`` of its own (transformers' Llama formula: the same numbers;
    the KV heads repeated by the engine's one :func:`engine.backends.eager.repeat_kv`)."""
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    n_rep = query.shape[1] // key.shape[1]
    key = repeat_kv(key, n_rep)
    value = repeat_kv(value, n_rep)
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask[..., : key.shape[-2]]
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    out = torch.matmul(weights, value).transpose(1, 2).contiguous()
    return out, weights


def eager_for(module) -> Callable:
    """The eager attention function transformers itself uses for ``module``."""
    cls = type(module)
    fn = _EAGER_CACHE.get(cls)
    if fn is None:
        mod = sys.modules.get(cls.__module__)
        fn = getattr(mod, "eager_attention_forward", None) or generic_eager_attention
        _EAGER_CACHE[cls] = fn
    return fn


def explorer_attention(module, query, key, value, attention_mask, *args, **kwargs):
    cap = _ACTIVE.get()
    if cancellable():  # a job that takes a cancel: the call in pieces, a check before each
        out, weights = attention_pieces(eager_for(module), module, query, key, value,
                                               attention_mask, *args, keep_weights=cap is not None, **kwargs)
    else:
        out, weights = eager_for(module)(module, query, key, value, attention_mask, *args, **kwargs)
    if cap is not None:
        cap.record(module, query, key, value, weights)
    return out, weights


_registered = False


def register() -> str:
    """Register :data:`IMPLEMENTATION` (attention + mask) once; return its name."""
    global _registered
    if not _registered:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, eager_mask

        AttentionInterface.register(IMPLEMENTATION, explorer_attention)
        AttentionMaskInterface.register(IMPLEMENTATION, eager_mask)
        _registered = True
    return IMPLEMENTATION


@contextlib.contextmanager
def capturing(wanted: set[int] | None = None, stop_after: int | None = None) -> Iterator[Capture]:
    cap = Capture(wanted=wanted, stop_after=stop_after)
    token = _ACTIVE.set(cap)
    try:
        yield cap
    finally:
        _ACTIVE.reset(token)
