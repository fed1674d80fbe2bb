"""Seeded random generators: one per (seed, purpose), so the same config gives the same numbers.

Each kind of random tensor (the inputs, each weight matrix, each token's embedding, a learned
position table) draws from its own generator, so dragging seq_len does not reshuffle the
weights and a token keeps its embedding wherever it appears.
"""

from __future__ import annotations

import zlib

import torch


def generator(seed: int, purpose: str) -> torch.Generator:
    """A CPU generator for one purpose ("x", "w_q", "token:cat", ...)."""
    g = torch.Generator()
    g.manual_seed((seed * 1_000_003 + zlib.crc32(purpose.encode())) % (2**63))
    return g
