"""Seeded inputs and weights: the same config always gives the same numbers.

Each kind of random tensor has its own generator (engine.seeding.generator), derived
from (seed, purpose), so that dragging seq_len does not reshuffle the weights and a
token keeps its embedding wherever it appears.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .config import AttentionConfig
from .positional import learned, sinusoidal
from .seeding import generator

__all__ = ["TORCH_DTYPES", "WEIGHT_CACHE", "Weights", "generator", "init_weights", "memory_embeddings",
           "memory_input", "token_embeddings", "torch_dtype"]

TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def torch_dtype(name: str) -> torch.dtype:
    return TORCH_DTYPES[name]


def token_embeddings(config: AttentionConfig) -> torch.Tensor:
    """Input embeddings X, (B, S, d_model) float32, N(0, 1) entries.

    With tokens set, each distinct token string gets its own seeded vector, so
    equal tokens have equal embeddings (and attention cannot tell them apart
    without positions: the permutation lesson).
    """
    B, S, d = config.batch, config.seq_len, config.d_model
    if config.tokens is None:
        return torch.randn(B, S, d, generator=generator(config.seed, "x"))
    table = {
        t: torch.randn(d, generator=generator(config.seed, "token:" + t))
        for t in dict.fromkeys(config.tokens)
    }
    rows = torch.stack([table[t] for t in config.tokens])  # (S, d)
    return rows.unsqueeze(0).expand(B, S, d).clone()


def memory_embeddings(config: AttentionConfig) -> torch.Tensor:
    """The key/value source of cross-attention, (B, Skv, d_model) float32."""
    return torch.randn(
        config.batch, config.key_len, config.d_model, generator=generator(config.seed, "memory")
    )


def memory_input(config: AttentionConfig) -> torch.Tensor | None:
    """What cross-attention's keys and values are computed from: the memory (B, Skv, d_model)
    float32 with its additive positions (key j at position j), as `run` uses it; None for
    self-attention (keys and values come from X)."""
    if config.kv_len is None:
        return None
    mem = memory_embeddings(config)
    k_pos = torch.arange(config.key_len)
    if config.positional == "sinusoidal":
        mem += sinusoidal(k_pos, config.d_model)
    elif config.positional == "learned":
        mem += learned(k_pos, config.d_model, config.seed)
    return mem


@dataclass(frozen=True)
class Weights:
    """Projection matrices, float32, applied as x @ W.

    w_q: (d_model, H·Dh), w_k / w_v: (d_model, Hkv·Dh), w_o: (H·Dh, d_model).
    Columns h·Dh … (h+1)·Dh−1 of w_q belong to query head h.
    """

    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    w_o: torch.Tensor

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.w_q, self.w_k, self.w_v, self.w_o))


#: Bytes of weights kept between runs (override: ATTN_EXPLORER_WEIGHT_CACHE, in bytes): the
#: latest weights up to this size are kept whatever their size (one d_model = 2048 layer of
#: the controls, so a toggle there does not redraw 4·d² normals, ~0.5 s).
WEIGHT_CACHE_BYTES = 64 * 1024**2
#: Bytes the weights other than the latest may keep (at most WEIGHT_CACHE_BYTES in all): a
#: few small layers to go back to. What a long session holds beyond its current config is
#: this, not the whole cache (issue 19: a 128 MiB cache filling up was the soak's RSS growth).
WEIGHT_CACHE_OLDER_BYTES = 16 * 1024**2


class _WeightCache:
    """Least-recently-used weights, bounded by their total bytes (not by entries): a few
    large d_model runs must not keep gigabytes alive. Weights larger than the whole
    bound are returned but never kept; the latest weights may fill the bound, the others
    share WEIGHT_CACHE_OLDER_BYTES. Thread-safe (the explorer runs off the UI thread)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple, Weights] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def limit() -> int:
        env = os.environ.get("ATTN_EXPLORER_WEIGHT_CACHE", "").strip()
        try:
            return max(0, int(env)) if env else WEIGHT_CACHE_BYTES
        except ValueError:
            return WEIGHT_CACHE_BYTES

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, key: tuple, make) -> Weights:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                self._evict(self.limit())  # the latest before may now be over the others' share
                return hit
        value = make()
        size, limit = value.nbytes, self.limit()
        with self._lock:
            if key in self._items:  # another thread drew the same weights meanwhile
                return self._items[key]
            if size > limit:
                return value
            self._items[key] = value
            self._bytes += size
            self._evict(limit)
        return value

    def _evict(self, limit: int) -> None:
        """Drop the least recently used weights (never the latest) until all fit in `limit`
        and those other than the latest in WEIGHT_CACHE_OLDER_BYTES. Under the lock."""
        older = min(limit, WEIGHT_CACHE_OLDER_BYTES)
        latest = next(reversed(self._items.values())).nbytes if self._items else 0
        while len(self._items) > 1 and (self._bytes > limit or self._bytes - latest > older):
            _, old = self._items.popitem(last=False)
            self._bytes -= old.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


WEIGHT_CACHE = _WeightCache()


def init_weights(config: AttentionConfig, check: Callable[[], None] | None = None) -> Weights:
    """Seeded projections; std = init_std, or Xavier √(2/(fan_in+fan_out)).

    Cached (read-only by convention) up to :data:`WEIGHT_CACHE_BYTES`: drawing 4·d²
    normals dominates a small run, and most slider moves leave the weights unchanged.
    ``check()`` after each matrix drawn (a cancel raises from it).
    """
    key = (config.seed, config.d_model, config.kv_heads * config.head_dim, config.init_std)
    return WEIGHT_CACHE.get(key, lambda: _init_weights(*key, check=check))


def _init_weights(seed: int, d: int, kv: int, init_std: float | None, check=None) -> Weights:
    def draw(name: str, fan_in: int, fan_out: int) -> torch.Tensor:
        std = init_std if init_std is not None else math.sqrt(2.0 / (fan_in + fan_out))
        out = torch.randn(fan_in, fan_out, generator=generator(seed, name)) * std
        if check is not None:
            check()
        return out

    return Weights(draw("w_q", d, d), draw("w_k", d, kv), draw("w_v", d, kv), draw("w_o", d, d))
