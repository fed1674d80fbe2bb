"""An independent attention reference for the engine tests.

Written from the formulas, not from engine code: positions, masks and RoPE by
explicit loops, the matmuls in the requested dtype (float64 for the "truth").
Shares only the seeded inputs and weights with the engine (taken from a trace).
"""

from __future__ import annotations

import math

import torch


def ref_positions(S: int, Skv: int) -> list[int]:
    return [i + Skv - S for i in range(S)]


def ref_mask(cfg) -> torch.Tensor:
    S, Skv = cfg.seq_len, cfg.key_len
    m = torch.ones(S, Skv, dtype=torch.bool)
    for i, p in enumerate(ref_positions(S, Skv)):
        for j in range(Skv):
            ok = True
            if cfg.causal and j > p:
                ok = False
            if cfg.window is not None:
                if cfg.causal and j <= p - cfg.window:
                    ok = False
                if not cfg.causal and abs(p - j) >= cfg.window:
                    ok = False
            if j >= Skv - cfg.pad:
                ok = False
            m[i, j] = ok
    return m


def ref_sinusoidal(positions: list[int], d: int) -> torch.Tensor:
    t = torch.zeros(len(positions), d, dtype=torch.float64)
    for r, p in enumerate(positions):
        for c in range(d):
            freq = 10000.0 ** (-(c - c % 2) / d)
            t[r, c] = math.sin(p * freq) if c % 2 == 0 else math.cos(p * freq)
    return t


def ref_rope(x: torch.Tensor, positions: list[int]) -> torch.Tensor:
    """x (..., N, Dh), half-split pairs (i, i + Dh/2) rotated by pos·10000^(−2i/Dh)."""
    out = x.clone()
    dh = x.shape[-1]
    half = dh // 2
    for n, p in enumerate(positions):
        for i in range(half):
            a = p * 10000.0 ** (-2 * i / dh)
            c, s = math.cos(a), math.sin(a)
            x1, x2 = x[..., n, i], x[..., n, i + half]
            out[..., n, i] = x1 * c - x2 * s
            out[..., n, i + half] = x2 * c + x1 * s
    return out


def ref_alibi_slopes(H: int) -> list[float]:
    def pw(n):
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]

    if math.log2(H).is_integer():
        return pw(H)
    c = 2 ** math.floor(math.log2(H))
    return pw(c) + pw(2 * c)[0::2][: H - c]


def reference_attention(trace, dtype: torch.dtype = torch.float64, x_in: torch.Tensor | None = None):
    """(weights (B,H,S,Skv), output (B,S,d)) recomputed from scratch in `dtype`.

    x_in: the input embeddings before positional encoding (default: the trace's
    x minus nothing, i.e. recomputed from the engine's seeded inputs).
    """
    from engine.inputs import memory_embeddings, token_embeddings
    from engine.positional import learned

    cfg = trace.config
    B, S, Skv, d, H, Hkv = cfg.batch, cfg.seq_len, cfg.key_len, cfg.d_model, cfg.n_heads, cfg.kv_heads
    Dh = d // H
    x = (token_embeddings(cfg) if x_in is None else x_in).double()
    mem = memory_embeddings(cfg).double() if cfg.kv_len is not None else None
    qpos, kpos = ref_positions(S, Skv), list(range(Skv))
    if cfg.positional == "sinusoidal":
        x = x + ref_sinusoidal(qpos, d)
        if mem is not None:
            mem = mem + ref_sinusoidal(kpos, d)
    if cfg.positional == "learned":
        x = x + learned(torch.tensor(qpos), d, cfg.seed).double()
        if mem is not None:
            mem = mem + learned(torch.tensor(kpos), d, cfg.seed).double()
    src = x if mem is None else mem
    w = trace.weights_used
    x, src = x.to(dtype), src.to(dtype)
    q = (x @ w.w_q.to(dtype)).reshape(B, S, H, Dh).permute(0, 2, 1, 3)
    k = (src @ w.w_k.to(dtype)).reshape(B, Skv, Hkv, Dh).permute(0, 2, 1, 3)
    v = (src @ w.w_v.to(dtype)).reshape(B, Skv, Hkv, Dh).permute(0, 2, 1, 3)
    if cfg.positional == "rope":
        q = ref_rope(q.double(), qpos).to(dtype)
        k = ref_rope(k.double(), kpos).to(dtype)
    scale = cfg.scale if cfg.scale is not None else 1 / math.sqrt(Dh)
    mask = ref_mask(cfg)
    slopes = ref_alibi_slopes(H)
    weights = torch.empty(B, H, S, Skv, dtype=dtype)
    ctx = torch.empty(B, H, S, Dh, dtype=dtype)
    g = H // Hkv
    for h in range(H):
        kh, vh = k[:, h // g], v[:, h // g]  # (B, Skv, Dh)
        qh = q[:, h] * scale if cfg.prescale_q else q[:, h]
        s = qh @ kh.transpose(-1, -2)
        if not cfg.prescale_q:
            s = s * scale
        if cfg.positional == "alibi":
            dist = torch.tensor([[abs(p - j) for j in range(Skv)] for p in qpos], dtype=torch.float64)
            s = s + (-slopes[h] * dist).to(dtype)
        if cfg.mask_value == "-inf":
            fill = float("-inf")
        elif cfg.mask_value == "min":
            fill = torch.finfo(dtype).min
        else:
            fill = float(torch.tensor(-1e9).to(dtype))
        s = torch.where(mask, s, torch.tensor(fill, dtype=dtype))
        p = torch.softmax(s, dim=-1)
        weights[:, h] = p
        ctx[:, h] = p @ vh
    out = ctx.permute(0, 2, 1, 3).reshape(B, S, d) @ w.w_o.to(dtype)
    return weights, out
