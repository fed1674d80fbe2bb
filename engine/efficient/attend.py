"""What engine.run calls for an efficient config: the variant's context (B, H, S, Dh), computed
without any (S, Skv) grid, a piece of query rows at a time (a pacer's parts, with progress
between them).

    kernel "linear" / "performer"   engine.efficient.linear (prefix sums), any mask
    global_tokens (softmax)         engine.efficient.blocks: each row's window, the global keys
    summary_block (softmax)         engine.efficient.blocks: each row's own block, the summaries

Rows that see no key are what the formula gives them: NaN with mask_value "-inf", the mean of
every value (a softmax of equal scores) with a finite one.
"""

from __future__ import annotations

import torch

from ..masks import mask_fill_value
from .blocks import Shared, ranged_softmax
from .linear import linear_context
from .summaries import block_summaries


def implementation(config) -> str:
    """The trace's ``backend_impl`` for an efficient config: what computed ``output``."""
    if config.kernel != "softmax":
        return f"{config.kernel}:prefix-sums"
    if config.summary_block is not None:
        return "hierarchical:blocks"
    return "local+global:blocks"


def attend(call, pace=None) -> tuple[torch.Tensor, str]:
    """(context (B, H, S, Dh) in q's dtype, implementation) of ``call`` (an AttentionCall whose
    mask is a KeyRanges). ``pace`` = (engine.pacing.Pacer, a plan of the S query rows)."""
    cfg = call.config
    pacer, plan = pace if pace is not None else (None, None)
    pieces = [slice(0, cfg.seq_len)] if pacer is None or pacer.whole(plan) else None
    rows = pieces if pieces is not None else pacer.each(plan)
    out = torch.empty(call.q.shape, dtype=call.q.dtype)
    m = call.mask
    with torch.inference_mode():
        if cfg.kernel != "softmax":
            linear_context(call, rows, out)
            seen = m.any(-1)
        elif cfg.summary_block is not None:
            sm = block_summaries(cfg, call.k, call.v)
            b = cfg.summary_block
            own_lo, own_hi = sm.own * b, (sm.own + 1) * b  # the own block's keys, within the mask
            lo, hi = torch.maximum(m.lo, own_lo), torch.minimum(m.hi, own_hi)
            hi = torch.maximum(hi, lo)
            shared = Shared(sm.k, sm.v, sm.centre, lambda r: sm.visible(cfg, r))
            starts = (torch.nonzero(sm.own[1:] != sm.own[:-1]).flatten() + 1).tolist()
            ranged_softmax(call, lo, hi, shared, rows, out, starts, rows=min(b, 512))
            seen = (hi > lo) | sm.visible(cfg).any(-1)
        else:  # local ∪ global: the window's range and the global keys [0, ends)
            shared = None
            if m.ends is not None:
                g = int(m.ends.max())
                keys = torch.arange(g)
                shared = Shared(call.k[:, :, :g].float(), call.v[:, :, :g].float(), keys.float(),
                                lambda r: keys[None, :] < m.ends[r][:, None])
            ranged_softmax(call, m.lo, m.hi, shared, rows, out)
            seen = m.any(-1)
        if pieces is not None and pacer is not None:
            pacer.passed(plan)
        if not bool(seen.all()):
            _fill_unseen(call, out, ~seen)
    return out, implementation(cfg)


def _fill_unseen(call, out: torch.Tensor, unseen: torch.Tensor) -> None:
    """Rows ``unseen`` (S,) bool see no key: NaN for mask_value "-inf" (as softmax of −inf
    everywhere), else the mean of every value (softmax of equal scores is uniform)."""
    cfg = call.config
    fill = mask_fill_value(cfg.mask_value, call.q.dtype)
    if fill == float("-inf"):
        out[:, :, unseen] = float("nan")
        return
    mean = call.v.float().mean(2, keepdim=True)  # (B, Hkv, 1, Dh)
    mean = mean.repeat_interleave(cfg.group_size, 1)  # (B, H, 1, Dh)
    out[:, :, unseen] = mean.to(out.dtype).expand(-1, -1, int(unseen.sum()), -1)
