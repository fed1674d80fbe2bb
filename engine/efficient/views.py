"""Reading blocks of rows of a (B, heads, N, ·) tensor without copying them where the blocks are
regular: the blockwise paths' windows of keys and their blocks of query rows."""

from __future__ import annotations

import torch


def windows(t: torch.Tensor, first: torch.Tensor, width: int) -> torch.Tensor:
    """(B, heads, n, width, ·): rows first[b] … first[b] + width − 1 of t (B, heads, N, ·) for
    each block b (t long enough: callers pad it with zero rows). A strided view where the
    blocks' first rows are evenly spaced (blocks of rows a fixed step apart), else gathered."""
    n = len(first)
    f0 = int(first[0])
    step = int(first[1] - first[0]) if n > 1 else 0
    if step >= 0 and bool((first == f0 + step * torch.arange(n)).all()):
        sB, sH, sN, sD = t.stride()
        return t.as_strided((t.shape[0], t.shape[1], n, width, t.shape[3]), (sB, sH, step * sN, sN, sD),
                            t.storage_offset() + f0 * sN)
    return t[:, :, first[:, None] + torch.arange(width)[None, :]]


def block_rows(t: torch.Tensor, ridx: torch.Tensor) -> torch.Tensor:
    """(B, heads, n, R, ·): rows ridx (n, R) of t (B, heads, N, ·); a view when they are one
    run of consecutive rows (whole blocks one after another), else gathered."""
    n, R = ridx.shape
    a = int(ridx[0, 0])
    if bool((ridx.flatten() == a + torch.arange(n * R)).all()):
        return t[:, :, a : a + n * R].unflatten(2, (n, R))
    return t[:, :, ridx]
