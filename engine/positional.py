"""Positional encodings: additive (sinusoidal, learned), rotary (RoPE) and ALiBi.

Positions follow the mask convention: key j sits at position j, query i at
i + (Skv − S) (bottom-right aligned; equal to i for self-attention).
"""

from __future__ import annotations

import math

import torch

from .seeding import generator


def query_positions(seq_len: int, key_len: int) -> torch.Tensor:
    """(S,) int64 absolute positions of the queries."""
    return torch.arange(seq_len) + (key_len - seq_len)


def sinusoidal(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """(N, d_model) float32 table of Vaswani et al.: sin on even, cos on odd dims."""
    pos = positions.to(torch.float64)[:, None]
    i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = pos / (10000.0 ** (i / d_model))  # (N, ceil(d/2))
    table = torch.zeros(len(positions), d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


def learned(positions: torch.Tensor, d_model: int, seed: int) -> torch.Tensor:
    """(N, d_model) rows of a seeded "learned" table (std √½, like sinusoidal's spread).

    Row p depends only on (seed, p), so positions keep their vectors as S changes.
    Negative positions (a query before the first key) use row 0.
    """
    n = int(positions.clamp(min=0).max().item()) + 1
    table = torch.randn(n, d_model, generator=generator(seed, f"learned:{d_model}")) * math.sqrt(0.5)
    return table[positions.clamp(min=0)]


def rope_angles(positions: torch.Tensor, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """(N, Dh/2) float32 rotation angles in radians: position p turns pair i by p·base^(−2i/Dh)."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)  # (Dh/2,)
    return positions.to(torch.float32)[:, None] * inv_freq[None, :]


def rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate pairs (x[..., i], x[..., i + Dh/2]) by angle pos·base^(−2i/Dh).

    x: (B, H, N, Dh) in any dtype; positions: (N,). The half-split layout of
    Llama / Hugging Face. Computed in float32, returned in x's dtype.
    """
    dh = x.shape[-1]
    angle = rope_angles(positions, dh, base)  # (N, Dh/2)
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1)  # (N, Dh)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1)
    xf = x.float()
    x1, x2 = xf[..., : dh // 2], xf[..., dh // 2 :]
    rotated = torch.cat([-x2, x1], dim=-1)
    return (xf * cos + rotated * sin).to(x.dtype)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """(H,) float32 ALiBi slopes (Press et al.): 2^(−8h/H) for a power-of-two H,
    interleaving the next power's slopes otherwise (as in the reference code)."""

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    if math.log2(n_heads).is_integer():
        slopes = power_of_two(n_heads)
    else:
        closest = 2 ** math.floor(math.log2(n_heads))
        slopes = power_of_two(closest) + power_of_two(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads: int, seq_len: int, key_len: int) -> torch.Tensor:
    """(H, S, Skv) float32 bias −slope_h · |pos(i) − j| added to the scaled scores."""
    dist = (query_positions(seq_len, key_len)[:, None] - torch.arange(key_len)[None, :]).abs()
    return -alibi_slopes(n_heads)[:, None, None] * dist.to(torch.float32)[None]
