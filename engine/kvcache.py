"""The KV cache: a preallocated buffer written at an offset, never concatenated.

Decoding token t needs the keys and values of tokens 0…t. Recomputing them is
O(t) work per step; keeping them in a buffer sized for the longest sequence
makes each step O(1) projections plus one row of attention. Its size is what
GQA and MQA shrink: 2 · layers · batch · Hkv · tokens · Dh · bytes.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from .backends.common import AttentionCall
from .backends.eager import attention_scores, attention_weights, block_scores_raw, repeat_kv
from .config import AttentionConfig, ConfigError
from .inputs import init_weights, token_embeddings, torch_dtype
from .masks import build_mask
from .memory import check_decode_memory
from .positional import learned, rope, sinusoidal


def kv_cache_bytes(config: AttentionConfig, n_layers: int = 1, tokens: int | None = None) -> int:
    """2 · n_layers · batch · n_kv_heads · tokens · Dh · itemsize (tokens defaults to Skv)."""
    tokens = config.key_len if tokens is None else tokens
    item = torch.finfo(torch_dtype(config.dtype)).bits // 8
    return 2 * n_layers * config.batch * config.kv_heads * tokens * config.head_dim * item


class KVCache:
    """Preallocated keys and values, (B, Hkv, max_len, Dh) each, filled up to `offset`."""

    def __init__(self, batch: int, kv_heads: int, max_len: int, head_dim: int,
                 dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu") -> None:
        self.k = torch.zeros(batch, kv_heads, max_len, head_dim, dtype=dtype, device=device)
        self.v = torch.zeros_like(self.k)
        self.offset = 0

    @property
    def max_len(self) -> int:
        return self.k.shape[2]

    @property
    def nbytes(self) -> int:
        return self.k.numel() * self.k.element_size() * 2

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write (B, Hkv, n, Dh) at the offset; return views of all keys/values so far."""
        n = k.shape[2]
        if self.offset + n > self.max_len:
            raise ValueError(f"KV cache full: {self.offset} + {n} tokens > max_len {self.max_len}")
        self.k[:, :, self.offset : self.offset + n] = k
        self.v[:, :, self.offset : self.offset + n] = v
        self.offset += n
        return self.k[:, :, : self.offset], self.v[:, :, : self.offset]


def block_call(config: AttentionConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               mask: torch.Tensor) -> AttentionCall:
    """The AttentionCall of a decoding block of the causal self-attention ``config``: the last
    r = q.shape[2] queries of the first n = k.shape[2] tokens (positions n − r … n − 1) over
    keys 0 … n − 1, with ``mask`` (r, n) those rows and keys of the sequence's mask. Its
    config is that block's own (S = r, Skv = n: bottom-right causal puts the queries there;
    only the sequence's padding that has been reached), so the eager backend's formula
    (``block_scores_raw`` → ``attention_scores``: scale, ALiBi of these positions, mask →
    ``attention_weights``) gives the same cells as the whole grid's rows n − r … n − 1."""
    r, n = q.shape[2], k.shape[2]
    block = config.replace(seq_len=r, kv_len=n, pad=max(0, n - (config.seq_len - config.pad)),
                           global_tokens=min(config.global_tokens, n), tokens=None)
    return AttentionCall(block, q, k, v, mask, None, config.effective_scale)


@dataclass(frozen=True)
class DecodeStep:
    """One decoded token: what the cache held and what the step cost.

    q: (B, H, Dh) the new query row · k, v: (B, Hkv, Dh) what was written at offset − 1 ·
    weights: (B, H, offset) the new row's softmax over every key in the cache ·
    output: (B, d_model) this token's output (after W_O). FLOPs count 2 per
    multiply-add of the matmuls (projections, Q·Kᵀ, weights·V, W_O): `flops_cached` with
    the cache (one token's projections, one row of attention over `offset` keys),
    `flops_recompute` without it (every token so far projected again and the full
    offset × offset grid, as an eager forward over the prefix does). ms_*: measured wall
    time of the two (median of a few runs), None unless measured.
    """

    t: int
    offset: int
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor
    flops_cached: int
    flops_recompute: int
    ms_cached: float | None = None
    ms_recompute: float | None = None


def decode_step_flops(config: AttentionConfig, n: int) -> tuple[int, int]:
    """(with the cache, recomputing everything) FLOPs of the step that makes the cache hold
    `n` tokens: per token 2·d·(H + 2·Hkv)·Dh for Q, K, V and 2·d·d for W_O; per query row
    4·H·keys·Dh for Q·Kᵀ and weights·V. With the cache: 1 token, 1 row over n keys (O(n));
    without: n tokens, n rows over n keys (O(n²))."""
    d, H, Hkv, Dh = config.d_model, config.n_heads, config.kv_heads, config.head_dim
    per_token = 2 * d * (H + 2 * Hkv) * Dh + 2 * d * d
    per_row_key = 4 * H * Dh
    b = config.batch
    return b * (per_token + per_row_key * n), b * (n * per_token + per_row_key * n * n)


def decode_steps(config: AttentionConfig, x: torch.Tensor | None = None, *,
                 measure: bool | Callable[[int], bool] = False, repeats: int = 3) -> Iterator[DecodeStep]:
    """The sequence decoded one token at a time through a preallocated KVCache, a
    `DecodeStep` per token (t = 0 … S−1). Stacking the outputs gives `decode`.

    measure: time each step (or the steps t for which measure(t) is true) with the cache
    and recomputing the whole prefix without one (`repeats` runs each, the median).
    """
    if config.kv_len is not None:
        raise ConfigError("decode needs self-attention: kv_len must be None")
    check_decode_memory(config)  # before anything is allocated
    B, S, d, H = config.batch, config.seq_len, config.d_model, config.n_heads
    Hkv, Dh = config.kv_heads, config.head_dim
    dtype = torch_dtype(config.dtype)
    causal = config.replace(causal=True)
    # inference mode around each piece of work, never across a yield: it is thread-wide
    # state and the caller's code runs between the steps
    with torch.inference_mode():
        x0 = token_embeddings(config) if x is None else torch.as_tensor(x).float().clone()
        pos = torch.arange(S)
        if config.positional == "sinusoidal":
            x0 += sinusoidal(pos, d)
        elif config.positional == "learned":
            x0 += learned(pos, d, config.seed)
        x0 = x0.to(dtype)  # (B, S, d)
        w = init_weights(config)
        w_q, w_k, w_v, w_o = (t.to(dtype) for t in (w.w_q, w.w_k, w.w_v, w.w_o))
        mask = build_mask(causal)  # row t: which of keys 0…t token t may see
        cache = KVCache(B, Hkv, S, Dh, dtype)

    def project(xs: torch.Tensor, p0: int):
        """xs (B, n, d) at positions p0…: q (B, H, n, Dh), k, v (B, Hkv, n, Dh)."""
        n = xs.shape[1]
        q = (xs @ w_q).view(B, n, H, Dh).transpose(1, 2)
        k = (xs @ w_k).view(B, n, Hkv, Dh).transpose(1, 2)
        v = (xs @ w_v).view(B, n, Hkv, Dh).transpose(1, 2)
        if config.positional == "rope":
            q, k = rope(q, pos[p0 : p0 + n]), rope(k, pos[p0 : p0 + n])
        return q, k, v

    def attend(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, rows: slice, n: int):
        """q (B, H, r, Dh) of query rows ``rows`` over the first n keys, values (B, Hkv, n, Dh):
        weights (B, H, r, n), context (B, H, r, Dh), by the eager backend's formula."""
        call = block_call(causal, q, keys, values, mask[rows, :n])
        raw = None if config.prescale_q else block_scores_raw(call)  # prescale_q: its own product
        wts = attention_weights(attention_scores(call, raw, inplace=True))
        return wts, wts @ repeat_kv(values, config.group_size)

    def cached_step(t: int):
        q, k, v = project(x0[:, t : t + 1], t)  # (B, H, 1, Dh), (B, Hkv, 1, Dh)
        keys, values = cache.append(k, v)  # (B, Hkv, t+1, Dh): views of the buffer
        wts, ctx = attend(q, keys, values, slice(t, t + 1), t + 1)
        return q, k, v, wts, ctx.transpose(1, 2).reshape(B, 1, d) @ w_o

    def recompute(t: int) -> torch.Tensor:
        q, k, v = project(x0[:, : t + 1], 0)  # every token so far, again
        _w, ctx = attend(q, k, v, slice(0, t + 1), t + 1)
        return ctx.transpose(1, 2).reshape(B, t + 1, d) @ w_o

    warm = False
    for t in range(S):
        ms_cached = ms_full = None
        with torch.inference_mode():
            if measure(t) if callable(measure) else measure:
                if not warm:  # the first call of a kernel pays for its set-up: not a step's cost
                    cached_step(t)
                    recompute(t)
                    cache.offset = t
                    warm = True
                runs_c, runs_f = [], []
                for _ in range(max(1, repeats)):
                    t0 = time.perf_counter()
                    cached_step(t)
                    t1 = time.perf_counter()
                    recompute(t)
                    t2 = time.perf_counter()
                    cache.offset = t  # the timed run wrote this token: rewind, write it again below
                    runs_c.append((t1 - t0) * 1e3)
                    runs_f.append((t2 - t1) * 1e3)
                ms_cached, ms_full = statistics.median(runs_c), statistics.median(runs_f)
            q, k, v, wts, out = cached_step(t)
            q, k, v, wts, out = (a.clone() for a in (q[:, :, 0], k[:, :, 0], v[:, :, 0], wts[:, :, 0], out[:, 0]))
        fc, fr = decode_step_flops(config, t + 1)
        yield DecodeStep(t, cache.offset, q, k, v, wts, out, fc, fr, ms_cached, ms_full)


def decode(config: AttentionConfig, x: torch.Tensor | None = None) -> torch.Tensor:
    """Run the sequence one token at a time through a KVCache; (B, S, d_model).

    Equals ``run(replace(config, causal=True), x).output``: the cache changes the
    cost, not the result.
    """
    return torch.stack([step.output for step in decode_steps(config, x)], dim=1)
