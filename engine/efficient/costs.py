"""FLOPs and bytes of the efficient variants and of full attention (the report's and the
memory budget's numbers; the length profile's formulas).

FLOPs count one layer: the four projections (2·d_in·d_out a row each) and the attention over
the (query, key) pairs each variant computes: 4·Dh + 5 a pair for softmax attention (Q·Kᵀ,
weights·V, the softmax), the linear kernels' features, chunk states and chunked products.
Bytes are engine.memory_estimate's: what a run holds at its peak.
"""

from __future__ import annotations

import torch

from ..config import AttentionConfig
from ..masks import KeyRanges
from ..positional import query_positions
from .blocks import BLOCK_ROWS, WIDE
from .blocks import GROUP_ELEMENTS as BLOCK_ELEMENTS
from .linear import CHUNK, GROUP_ELEMENTS

_F32 = 4
_ITEM = {"float32": 4, "float16": 2, "bfloat16": 2}


def projection_flops(c: AttentionConfig) -> float:
    """W_Q, W_K, W_V and W_O: 2·d_in·d_out multiply-adds per row."""
    kvd = c.kv_heads * c.head_dim
    return 2.0 * c.batch * (2 * c.seq_len * c.d_model * c.d_model + 2 * c.key_len * c.d_model * kvd)


def _terms(c: AttentionConfig) -> int:
    """Prefix-sum terms a linear row needs: its end, its start (when some row's is > 0), the
    global keys' end."""
    m = KeyRanges.of(c)
    return 1 + int(bool((m.lo > 0).any())) + int(m.ends is not None)


def feature_width(c: AttentionConfig) -> int:
    return c.n_features if c.kernel == "performer" else c.head_dim


def attention_flops(c: AttentionConfig) -> float:
    """FLOPs of the attention alone (no projections), by the variant's own algorithm."""
    B, H, Hkv, S, Skv, Dh = c.batch, c.n_heads, c.kv_heads, c.seq_len, c.key_len, c.head_dim
    if c.kernel != "softmax":
        F = feature_width(c)
        per_vec = 2.0 * Dh * F + 3 * F if c.kernel == "performer" else 3.0 * F  # W·x', exp / elu + 1
        feats = per_vec * B * (H * S + Hkv * Skv)
        states = 2.0 * B * Hkv * Skv * F * (Dh + 1)
        rows = _terms(c) * 2.0 * B * H * S * (F * (Dh + 1) + CHUNK * (F + Dh + 1))
        return feats + states + rows + B * H * S * Dh
    pairs = float(KeyRanges.of(c).counts().sum())  # visible (query, key) pairs
    if c.summary_block is not None:
        pairs = _hierarchical_pairs(c)
        return B * H * (4.0 * Dh + 5) * pairs + 2.0 * B * Hkv * Skv * Dh
    return B * H * (4.0 * Dh + 5) * pairs


def _hierarchical_pairs(c: AttentionConfig) -> float:
    """Σ over query rows of (own-block keys it sees + summaries it sees), from the positions."""
    b, Skv = c.summary_block, c.key_len
    m = KeyRanges.of(c)
    own = torch.div(query_positions(c.seq_len, Skv), b, rounding_mode="floor")
    lo, hi = torch.maximum(m.lo, own * b), torch.minimum(m.hi, (own + 1) * b)
    own_keys = (hi - lo).clamp(min=0)
    n_blocks = -(-(Skv - c.pad) // b)  # blocks with a key that is not padding
    if c.causal:
        others = own.clamp(0, n_blocks)
    else:
        others = n_blocks - ((own >= 0) & (own < n_blocks)).long()
    return float((own_keys + others).sum())


def flops(c: AttentionConfig) -> float:
    """One layer's FLOPs: projections and the variant's attention."""
    return projection_flops(c) + attention_flops(c)


def _row_keys(c: AttentionConfig) -> int:
    """Keys a query row's block holds on the blockwise paths (its window or own block with
    the block's spread, and the shared keys)."""
    Skv = c.key_len
    if c.summary_block is not None:
        b = c.summary_block
        return min(Skv, 2 * b) + -(-Skv // b)
    w = Skv if c.window is None else min(Skv, 2 * c.window + BLOCK_ROWS)
    return w + c.global_tokens


def temporaries(c: AttentionConfig) -> int:
    """Bytes the efficient path holds beyond the run's weights and activations (engine.memory
    adds those): the linear kernels' features, values with their ones column, the chunk states
    and a group of blocks' products; the blockwise paths' float32 keys and values, the
    summaries, and a group of blocks' scores, mask and weights with its gathered keys."""
    B, H, Hkv, S, Skv, Dh = c.batch, c.n_heads, c.kv_heads, c.seq_len, c.key_len, c.head_dim
    low = c.dtype != "float32"
    kv32 = 2 * B * Hkv * Skv * Dh * _F32 if low else 0
    if c.kernel != "softmax":
        F = feature_width(c)
        terms = _terms(c)
        n_chunks = -(-Skv // CHUNK) + 1
        keys = B * Hkv * Skv * (F + Dh + 1) * _F32  # φ̃(k), [v, 1]
        if c.kernel == "performer":
            keys += 2 * B * Hkv * Skv * c.n_features * _F32  # W·x' and its exponent
        states = B * Hkv * n_chunks * F * (Dh + 1) * (8 if terms > 1 else _F32)
        r = min(S, 8192) + CHUNK
        rows = B * H * r * (2 * F + 2 * (Dh + 1)) * _F32 * (2 if c.kernel == "performer" else 1)
        group = 6 * min(GROUP_ELEMENTS, B * H * r * (CHUNK + max(F, Dh + 1))) * _F32 + states // 4
        return int(keys + states + rows + group + kv32)
    keys = _row_keys(c)
    # q scaled (float32); k and v in float32 when they are not; the last group's windows with zero
    # rows after the last key (a window's reach)
    q32 = B * H * S * Dh * _F32
    tail = 2 * B * Hkv * (WIDE + 2 * BLOCK_ROWS) * Dh * _F32
    group = min(BLOCK_ELEMENTS, B * H * S * keys)
    # scores (the softmax in place), ALiBi's distances, the masks and their −inf biases, the
    # context; [shared; window] keys and values of each block
    block = group * (3 * _F32 + 2) + 2 * group // max(1, BLOCK_ROWS) * Dh * _F32
    kv32 = kv32 + q32 + tail
    if c.summary_block is not None:
        n_blocks = -(-Skv // c.summary_block)
        shared = 2 * B * Hkv * n_blocks * Dh * _F32 + 2 * S * n_blocks + 8 * Skv
    else:
        shared = 2 * B * Hkv * c.global_tokens * Dh * _F32
    return int(kv32 + block + shared + 5 * S * 8)


def memo_bytes(c: AttentionConfig) -> int:
    """What the eager formula of a variant keeps for its blocks of rows (the keys' features,
    the summaries): on top of a trace's lazily computed grids."""
    if c.kernel != "softmax":
        return c.batch * c.kv_heads * c.key_len * feature_width(c) * _F32 * 2
    if c.summary_block is not None:
        n_blocks = -(-c.key_len // c.summary_block)
        return 2 * c.batch * c.kv_heads * n_blocks * c.head_dim * _F32 + 2 * c.seq_len * n_blocks
    return 0
