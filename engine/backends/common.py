"""What every backend shares: the call (``AttentionCall``), the refusal
(``BackendUnavailable``) and the fused kernels' driver (``fused_attention``, chunking heads
with ``head_chunks`` within ``FUSED_WORKSPACE``). The backends (eager, sdpa, flash) import
this, never their package, whose registry imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from ..config import AttentionConfig
from ..masks import KeyRanges, mask_fill_value
from ..pacing import fused_head_chunks
from ..positional import alibi_slopes, query_positions

#: Bytes of per-head temporaries (ALiBi bias chunks, a math kernel's scores) one fused
#: kernel call may hold; more heads than that run in several calls.
FUSED_WORKSPACE = 256 * 2**20


class BackendUnavailable(RuntimeError):
    """The chosen backend cannot run this config here; the message says why."""


@dataclass(frozen=True)
class AttentionCall:
    """Everything a backend needs, already positioned and projected.

    q: (B, H, S, Dh) queries (after RoPE, before any scaling)
    k, v: (B, Hkv, Skv, Dh), not repeated per query head
    mask: (S, Skv) bool, True = may attend; or its engine.masks.KeyRanges, indexed the same way
        (``mask[rows]``, ``mask.all()``): what engine.run passes, so no (S, Skv) grid is built
    bias: (H, S, Skv) float32 ALiBi bias when held (the eager path), or None; with
        ``positional == "alibi"`` and no held bias, :meth:`alibi` computes the part asked for
    scale: multiplier of QKᵀ
    memo: what the efficient variants derive from k and v once for every block of rows (the
        linear kernels' key features, hierarchical attention's block summaries)
    """

    config: AttentionConfig
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    mask: torch.Tensor | KeyRanges
    bias: torch.Tensor | None
    scale: float
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def has_alibi(self) -> bool:
        return self.bias is not None or self.config.positional == "alibi"

    def alibi(self, heads: slice = slice(None), rows: slice = slice(None)) -> torch.Tensor | None:
        """(h, r, Skv) float32 ALiBi bias −slope·|pos(i) − j| of those heads and query rows.

        None without ALiBi. A view of ``bias`` when held; otherwise computed for just those
        heads and rows, bit-identical to ``positional.alibi_bias`` (|pos(i) − j| is an exact
        integer in float32 below 2²⁴), so no (H, S, Skv) tensor is ever needed.
        """
        if self.bias is not None:
            return self.bias[heads, rows]
        if self.config.positional != "alibi":
            return None
        cfg = self.config
        pos = query_positions(cfg.seq_len, cfg.key_len)[rows].to(torch.float32)  # (r,)
        j = torch.arange(cfg.key_len, dtype=torch.float32)  # (Skv,)
        dist = (pos[:, None] - j[None, :]).abs_()  # (r, Skv)
        neg = -alibi_slopes(cfg.n_heads)[heads]  # (h,)
        if len(neg) == 1:  # one head: scale the distances in place (one plane, same numbers)
            return dist.mul_(neg[0])[None]
        return neg[:, None, None] * dist[None]

    def plain_causal(self) -> bool:
        """True when the mask goes to torch's fused kernels as ``is_causal`` instead of a
        tensor: it is exactly that mask (self-attention, S = Skv, causal, no window, padding
        or ALiBi: top-left and bottom-right alignment agree there), and the kernel's scale is
        positive (torch's CPU kernel multiplies its masked −inf by the scale: NaN for 0,
        +inf below)."""
        cfg = self.config
        scale = 1.0 if cfg.prescale_q else self.scale
        return (cfg.causal and cfg.seq_len == cfg.key_len and cfg.window is None and not cfg.pad
                and not self.has_alibi and scale > 0)

    def _unmasked(self, rows: slice) -> bool:
        """Whether query rows ``rows`` may attend every key; a KeyRanges answers from its ranges
        (its unmasked rows index as a broadcast True, and reducing that is a slow (r, Skv) pass)."""
        m = self.mask
        return m.all(rows) if isinstance(m, KeyRanges) else bool(m[rows].all())

    def additive_mask(self, heads: slice = slice(None), rows: slice = slice(None)) -> torch.Tensor | None:
        """Float mask in q's dtype for torch's fused kernels: the masked value where the mask
        is False, plus the ALiBi bias of ``heads``, for query rows ``rows``.

        (1, 1, r, Skv) (one plane for every head) without ALiBi; (1, h, r, Skv) with it.
        None when nothing is masked or biased.
        """
        fill = mask_fill_value(self.config.mask_value, self.q.dtype)
        unmasked = self._unmasked(rows)
        if not self.has_alibi:
            if unmasked:
                return None
            mask = self.mask[rows]
            add = torch.zeros(mask.shape, dtype=self.q.dtype, device=self.q.device)
            add.masked_fill_(~mask.to(add.device), fill)
            return add[None, None]
        add = self.alibi(heads, rows)  # (h, r, Skv) float32
        if not unmasked:  # in place only on a freshly computed bias, never a held one
            hidden = ~self.mask[rows].to(add.device)
            add = add.masked_fill(hidden, fill) if self.bias is not None else add.masked_fill_(hidden, fill)
        return add.to(self.q.dtype).unsqueeze(0).to(self.q.device)


def head_chunks(n_heads: int, group: int, bytes_per_head: int, workspace: int | None = None) -> list[slice]:
    """Query-head ranges for fused calls, each holding at most ``workspace`` bytes
    (FUSED_WORKSPACE by default) of per-head temporaries, at least one head. A chunk is whole
    KV groups or lies inside one group, so each chunk sees a contiguous range of KV heads
    that divides it (what ``enable_gqa`` needs)."""
    workspace = FUSED_WORKSPACE if workspace is None else workspace
    c = n_heads if bytes_per_head <= 0 else max(1, min(n_heads, workspace // bytes_per_head))
    return fused_head_chunks(n_heads, group, c)


Kernel = Callable[..., torch.Tensor]


def fused_attention(call: AttentionCall, kernel: Kernel, bytes_per_head: int = 0, pace=None) -> torch.Tensor:
    """Run ``kernel(q, k, v, attn_mask=, is_causal=, scale=, enable_gqa=)`` (torch's SDPA
    signature) for ``call``, honouring prescale_q; (B, H, S, Dh) in q's dtype.

    Without ALiBi: one call with a shared (1, 1, S, Skv) mask, or ``is_causal`` for plain
    causal self-attention (no mask tensor at all). With ALiBi (or ``bytes_per_head`` of
    other per-head temporaries): one call per chunk of heads (:func:`head_chunks`).

    ``pace`` = (engine.pacing.Pacer, a plan of the S query rows): a piece of query rows at a
    time (each with its slice of the mask, the causal one too), every chunk of heads for each,
    progress between pieces; for plain causal self-attention a piece reads only the keys up
    to its last row (the rest are masked for all of its rows: half the work of the whole).
    A plan of ``heads`` per call (engine.pacing.fused_heads: a part of every head would hold
    too few rows for the kernel's fast blocks) runs its pieces once per chunk of those heads."""
    cfg = call.config
    q, scale = call.q, call.scale
    if cfg.prescale_q:
        q, scale = q * scale, 1.0
    g = cfg.group_size
    per_head = bytes_per_head
    if call.has_alibi:
        per_head += cfg.seq_len * cfg.key_len * (4 + q.element_size())
    pacer, plan = pace if pace is not None else (None, None)
    # a plan of fewer heads per call (engine.pacing.fused_heads) runs once per chunk of them,
    # paced even when one part holds every row: all heads at once would be several parts' work
    by_heads = pacer is not None and 0 < plan.heads < cfg.n_heads  # (heads > 0: planned paced)
    paced = pacer is not None and (by_heads or not pacer.whole(plan))
    plain = call.plain_causal()
    causal = plain and not paced
    trim = plain and paced  # a piece of rows sees keys [0, its last row] only
    shared = None if (causal or call.has_alibi or paced) else call.additive_mask()
    chunks = head_chunks(cfg.n_heads, g, per_head)
    if by_heads:  # fewer heads still where memory asks it (the count it was planned with grows)
        planned = len(fused_head_chunks(cfg.n_heads, g, plan.heads))
        chunks = fused_head_chunks(cfg.n_heads, g, min(plan.heads, chunks[0].stop))
        pacer.expect(plan, times=len(chunks) - planned)

    def one(heads: slice, rows: slice = slice(None)) -> torch.Tensor:
        kv = slice(heads.start // g, (heads.stop - 1) // g + 1)
        keys = slice(None)
        if paced:
            mask = call.additive_mask(heads, rows)
            if trim:
                keys = slice(0, rows.stop)
                mask = None if mask is None else mask[..., keys]
        else:
            mask = call.additive_mask(heads) if call.has_alibi else shared
        return kernel(q[:, heads, rows], call.k[:, kv, keys], call.v[:, kv, keys], attn_mask=mask,
                      is_causal=causal, scale=scale,
                      enable_gqa=(heads.stop - heads.start) != (kv.stop - kv.start))

    if not paced and len(chunks) == 1:
        out = one(chunks[0])
    else:
        out = torch.empty(q.shape, dtype=q.dtype, device=q.device)  # (B, H, S, Dh)
        if by_heads:  # each chunk of heads over its parts of rows: calls of many rows
            for heads in chunks:
                for rows in pacer.each(plan):
                    out[:, heads, rows] = one(heads, rows)
        else:
            for rows in pacer.each(plan) if paced else [slice(None)]:
                for heads in chunks:
                    out[:, heads, rows] = one(heads, rows)
    if pacer is not None and not paced:
        pacer.passed(plan)
    return out
