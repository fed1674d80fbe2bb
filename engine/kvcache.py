"""The KV cache: a preallocated buffer written at an offset, never concatenated.

Decoding token t needs the keys and values of tokens 0…t. Recomputing them is
O(t) work per step; keeping them in a buffer sized for the longest sequence
makes each step O(1) projections plus one row of attention. Its size is what
GQA and MQA shrink: 2 · layers · batch · Hkv · tokens · Dh · bytes.
"""

from __future__ import annotations

import torch

from . import positional as pe
from .backends.eager import repeat_kv
from .config import AttentionConfig, ConfigError
from .inputs import init_weights, token_embeddings, torch_dtype
from .masks import build_mask, mask_fill_value
from .memory import check_decode_memory


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


def decode(config: AttentionConfig, x: torch.Tensor | None = None) -> torch.Tensor:
    """Run the sequence one token at a time through a KVCache; (B, S, d_model).

    Equals ``run(replace(config, causal=True), x).output``: the cache changes the
    cost, not the result.
    """
    if config.kv_len is not None:
        raise ConfigError("decode needs self-attention: kv_len must be None")
    check_decode_memory(config)  # before anything is allocated
    B, S, d, H = config.batch, config.seq_len, config.d_model, config.n_heads
    dtype = torch_dtype(config.dtype)
    causal = config.replace(causal=True)
    with torch.inference_mode():
        x0 = token_embeddings(config) if x is None else torch.as_tensor(x).float().clone()
        pos = torch.arange(S)
        if config.positional == "sinusoidal":
            x0 += pe.sinusoidal(pos, d)
        elif config.positional == "learned":
            x0 += pe.learned(pos, d, config.seed)
        w = init_weights(config)
        w_q, w_k, w_v, w_o = (t.to(dtype) for t in (w.w_q, w.w_k, w.w_v, w.w_o))
        mask = build_mask(causal)  # row t: which of keys 0…t token t may see
        bias = pe.alibi_bias(H, S, S) if config.positional == "alibi" else None
        fill = mask_fill_value(config.mask_value, dtype)
        scale = config.effective_scale
        cache = KVCache(B, config.kv_heads, S, config.head_dim, dtype)
        outputs = []
        for t in range(S):
            xt = x0[:, t : t + 1].to(dtype)  # (B, 1, d)
            q = xt @ w_q
            q = q.view(B, 1, H, -1).transpose(1, 2)  # (B, H, 1, Dh)
            k = (xt @ w_k).view(B, 1, config.kv_heads, -1).transpose(1, 2)  # (B, Hkv, 1, Dh)
            v = (xt @ w_v).view(B, 1, config.kv_heads, -1).transpose(1, 2)
            if config.positional == "rope":
                q, k = pe.rope(q, pos[t : t + 1]), pe.rope(k, pos[t : t + 1])
            keys, values = cache.append(k, v)  # (B, Hkv, t+1, Dh)
            keys, values = repeat_kv(keys, config.group_size), repeat_kv(values, config.group_size)
            qs = q * scale if config.prescale_q else q
            s = qs @ keys.transpose(-2, -1)  # (B, H, 1, t+1)
            if not config.prescale_q:
                s = s * scale
            if bias is not None:
                s = s + bias[:, t : t + 1, : t + 1].to(dtype)
            s = s.masked_fill(~mask[t, : t + 1], fill)
            ctx = torch.softmax(s, dim=-1) @ values  # (B, H, 1, Dh)
            outputs.append(ctx.transpose(1, 2).reshape(B, 1, d) @ w_o)
        return torch.cat(outputs, dim=1)
