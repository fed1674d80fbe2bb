"""A cancel seen inside a model's forward pass, not only between passes (issue 46, item 8:
a batched forward of exact patching on a 2,800-token text ran 10–20 s before its job saw the
cancel).

    with checkpoints(model, progress) as report:   # progress(done, total) raises to cancel
        ...                                       # forward passes of `model`
        report(done, total)                       # the count moves: reported at once

Inside the block, `progress` is called again with the last count (the same numbers: a cancel
check, no news) at most every CHECK_EVERY_S, at the start of every submodule of ``model``
(a forward pre-hook on each, in this thread only) and between the pieces of each attention
call: :func:`check` is what capture.explorer_attention calls, and while a block is active it
computes a large attention a piece of query rows at a time (:func:`attention_pieces`), so
even one layer of a long batch is not one uninterruptible operation. What ``progress``
raises (the explorer's ``Cancelled``) leaves the forward pass and the block unchanged.
Without ``progress`` the block does nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar

import torch

from .anatomy import hooked

#: the longest a check waits for the next report of the same count (seconds)
CHECK_EVERY_S = 0.05
#: score elements (batch · heads · query rows · keys) of one piece of a checked attention
#: call: ~50 ms of products and softmax here, 4 MB of float32 scores
PIECE_ELEMENTS = 2**20

_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("attention_explorer_check", default=None)


def check() -> None:
    """The active block's check (raises what its progress raises); nothing outside one."""
    fn = _CHECK.get()
    if fn is not None:
        fn()


def cancellable() -> bool:
    """Whether this thread runs inside a :func:`checkpoints` block (a job that takes a cancel)."""
    return _CHECK.get() is not None


@contextlib.contextmanager
def checkpoints(model: torch.nn.Module | None,
                progress: Callable[[int, int], object] | None) -> Iterator[Callable[[int, int], None]]:
    """See the module docstring; yields ``report(done, total)``, which passes a new count on
    (a no-op without ``progress``)."""
    if progress is None:
        yield lambda done, total: None
        return
    last = [0, 1, time.monotonic()]  # done, total, when last reported

    def report(done: int, total: int) -> None:
        last[:] = done, total, time.monotonic()
        progress(done, total)

    def again() -> None:
        if time.monotonic() - last[2] >= CHECK_EVERY_S:
            report(last[0], last[1])

    def hook(_module, _args, _kwargs):
        again()

    token = _CHECK.set(again)
    try:
        pre = [] if model is None else [(m, hook) for m in model.modules()]
        with hooked(pre=pre):
            yield report
    finally:
        _CHECK.reset(token)


def checked(loaded, progress: Callable[[int, int], object] | None):
    """:func:`checkpoints` over the whole of a loaded model (its causal LM where it has one,
    so the LM head's forward is checked too): what every circuits job (lens, detectors,
    attribution, patching) runs its forward passes in."""
    whole = loaded.lm if getattr(loaded, "lm", None) is not None else loaded.model
    return checkpoints(whole, progress)


def attention_pieces(fn: Callable, module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     attention_mask, *args, keep_weights: bool = True, **kwargs):
    """``fn(module, query, key, value, attention_mask, …)`` (a model's eager attention:
    query (B, H, S, Dh) → out (B, S, H, Dh), weights (B, H, S, Skv)) a sequence and a piece
    of query rows at a time, :func:`check` before each: the same numbers within float32
    rounding (each row's softmax sees all its keys; the mask is cut the same way), the whole call when it is small.
    ``keep_weights`` False: the weights are returned as None, not put together (a copy of
    B·H·S·Skv floats: 0.7 s for 8 × 2,048² × 4 heads; the jobs that take a cancel read no
    attentions from the model's output, only capturing does)."""
    B, H, S, _ = query.shape
    skv = key.shape[-2]
    rows = max(1, PIECE_ELEMENTS // max(1, H * skv))
    if B * H * S * skv <= 2 * PIECE_ELEMENTS:
        check()
        return fn(module, query, key, value, attention_mask, *args, **kwargs)
    outs, weights = [], []
    for b in range(B):
        row_outs, row_weights = [], []
        for r in range(0, S, rows):
            check()
            mask = attention_mask
            if isinstance(mask, torch.Tensor):
                mask = mask[b:b + 1] if mask.shape[0] > 1 else mask
                mask = mask[..., r:r + rows, :] if mask.shape[-2] > 1 else mask
            out, w = fn(module, query[b:b + 1, :, r:r + rows], key[b:b + 1], value[b:b + 1], mask,
                        *args, **kwargs)
            row_outs.append(out)  # (1, rows, H, Dh)
            if keep_weights:
                row_weights.append(w)  # (1, H, rows, Skv)
        outs.append(torch.cat(row_outs, dim=1))
        weights.append(None if not row_weights or row_weights[0] is None else torch.cat(row_weights, dim=2))
    return torch.cat(outs), (None if weights[0] is None else torch.cat(weights))
