"""The training lab's tiny transformer, written here (nanoGPT-style, causal, learned positions).

``TinyTransformer(config)``: token + learned position embeddings, ``n_layers``
blocks of causal multi-head attention (GQA when ``n_kv_heads`` < ``n_heads``)
and, unless ``attn_only``, a 4×d_model GELU MLP; LayerNorm placed "pre"
(GPT-2: normalise each branch's input, a final norm before the unembedding),
"post" (the 2017 original: normalise after each residual sum) or "none";
dropout on embeddings, attention weights and residual branches; an untied
unembedding. Every weight is N(0, init_std²), LayerNorms start at (1, 0).

Attention is computed eagerly (the weights are what the lab shows), by one formula
(:func:`attention`, with the engine's ``repeat_kv`` and softmax). Masked
scores get the dtype's most negative value, as transformers' eager mask
does, so a row whose keys are all hidden (the deletion test's mask mode)
gives finite numbers, not NaN.

Dropout draws from the trainer's own ``torch.Generator``, never the global
one, so a run is deterministic even while other code uses torch's RNG.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..backends.eager import attention_weights, repeat_kv
from .config import TrainConfig


def apply_dropout(x: torch.Tensor, p: float, generator: torch.Generator | None, training: bool) -> torch.Tensor:
    """Inverted dropout drawing its mask from ``generator``."""
    if not training or p == 0.0:
        return x
    keep = torch.empty_like(x).bernoulli_(1.0 - p, generator=generator)
    return x * keep / (1.0 - p)


def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, bias: torch.Tensor | None,
              scaling: float, p: float = 0.0, generator: torch.Generator | None = None,
              training: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The model's one attention formula: softmax(Q Kᵀ · scaling + bias) · dropout · V.

    query (B, H, T, Dh); key, value (B, Hkv, T, Dh) (query head h reads KV head h // (H/Hkv):
    the engine's `repeat_kv`); bias additive, broadcastable to (B, H, T, T), masked cells
    very negative. Returns (output (B, T, H, Dh), weights (B, H, T, T), scores (B, H, T, T)).
    The softmax is the engine's (`engine.backends.eager.attention_weights`); Q Kᵀ is one
    batched product, not the engine's one-head-at-a-time `per_head_qk` (which makes the
    playground's paths agree to the bit, at B·H products a step: a training step wants one,
    and the trainer's numbers stay those its runs were saved with)."""
    group = query.shape[1] // key.shape[1]
    scores = torch.matmul(query, repeat_kv(key, group).transpose(-1, -2)) * scaling  # (B, H, T, T)
    if bias is not None:
        scores = scores + bias
    weights = attention_weights(scores)
    used = apply_dropout(weights, p, generator, training)
    out = torch.matmul(used, repeat_kv(value, weights.shape[1] // value.shape[1])).transpose(1, 2)
    return out, weights, scores


def eager_attention_forward(module: nn.Module, query: torch.Tensor, key: torch.Tensor,
                            value: torch.Tensor, attention_mask: torch.Tensor | None,
                            scaling: float, dropout: float = 0.0,
                            generator: torch.Generator | None = None, **_: object):
    """:func:`attention` with transformers' signature and return convention, so
    :mod:`engine.models.capture` finds it as this module's eager function.

    query (B, H, T, Dh); key, value (B, Hkv, T, Dh); attention_mask additive, broadcastable
    to (B, H, T, T). Returns (output (B, T, H, Dh), weights (B, H, T, T)).
    """
    out, weights, _scores = attention(query, key, value, attention_mask, scaling, dropout, generator,
                                      module.training)
    return out, weights


@dataclass
class LayerOutput:
    """What one attention layer hands back besides its output: ``weights`` (B, H, T, T) and
    ``logit_max`` (H,), the largest scaled score (softmax input) over the unmasked cells: about
    0.1 at init, hundreds when the softmax collapses onto one key."""

    weights: torch.Tensor
    logit_max: torch.Tensor | None


class CausalSelfAttention(nn.Module):
    is_causal = True  # read by LoadedModel's summary

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        d, h, hkv, dh = config.d_model, config.n_heads, config.kv_heads, config.head_dim
        self.n_heads, self.n_kv_heads, self.head_dim = h, hkv, dh
        self.scaling = config.scaling
        self.p = config.dropout
        # W_Q, W_K, W_V as one (H + 2·Hkv)·Dh × D matrix: one matmul instead of three
        self.qkv_proj = nn.Linear(d, (h + 2 * hkv) * dh, bias=False)
        self.o_proj = nn.Linear(h * dh, d, bias=False)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, generator: torch.Generator | None,
                attend: Callable | None = None):
        """x (B, T, D); bias additive (B or 1, 1, T, T). ``attend``: an attention function with
        transformers' interface (the model panels' capture) in place of
        :func:`eager_attention_forward`. Returns (B, T, D), LayerOutput."""
        b, t, _ = x.shape
        h, hkv, dh = self.n_heads, self.n_kv_heads, self.head_dim
        qkv = self.qkv_proj(x).view(b, t, h + 2 * hkv, dh).transpose(1, 2)  # (B, H+2Hkv, T, Dh)
        q, k, v = qkv.split((h, hkv, hkv), dim=1)  # (B, H, T, Dh), (B, Hkv, T, Dh) ×2
        if attend is not None:  # the model panels' capture: transformers' interface
            out, weights = attend(self, q, k, v, bias, scaling=self.scaling, dropout=0.0)
            logit_max = None
        else:
            out, weights, scores = attention(q, k, v, bias, self.scaling, self.p, generator, self.training)
            logit_max = scores.detach().amax(dim=(0, 2, 3))  # (H,) the largest unmasked logit
        return self.o_proj(out.reshape(b, t, -1)), LayerOutput(weights, logit_max)


class MLP(nn.Module):
    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        self.fc = nn.Linear(config.d_model, 4 * config.d_model)
        self.proj = nn.Linear(4 * config.d_model, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        self.norm = config.norm
        self.p = config.dropout
        self.attn = CausalSelfAttention(config)
        self.mlp = None if config.attn_only else MLP(config)
        if self.norm != "none":
            self.ln1 = nn.LayerNorm(config.d_model)
            self.ln2 = None if config.attn_only else nn.LayerNorm(config.d_model)

    def forward(self, x, bias, generator, attend=None):
        """x (B, T, D) → (B, T, D), LayerOutput."""
        drop = lambda y: apply_dropout(y, self.p, generator, self.training)  # noqa: E731
        if self.norm == "pre":
            a, info = self.attn(self.ln1(x), bias, generator, attend)
            x = x + drop(a)
            if self.mlp is not None:
                x = x + drop(self.mlp(self.ln2(x)))
        elif self.norm == "post":
            a, info = self.attn(x, bias, generator, attend)
            x = self.ln1(x + drop(a))
            if self.mlp is not None:
                x = self.ln2(x + drop(self.mlp(x)))
        else:
            a, info = self.attn(x, bias, generator, attend)
            x = x + drop(a)
            if self.mlp is not None:
                x = x + drop(self.mlp(x))
        return x, info


@dataclass
class ForwardResult:
    """logits (B, T, vocab); hidden (B, T, D), the final residual stream (after the final
    norm when pre-LN); layers: one LayerOutput per layer."""

    logits: torch.Tensor
    hidden: torch.Tensor
    layers: list[LayerOutput]


class TinyTransformer(nn.Module):
    """See the module docstring. ``forward(ids (B, T), key_mask (B, T) of 1/0 or None)``."""

    def __init__(self, config: TrainConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.config = config
        d = config.d_model
        self.tok_emb = nn.Embedding(config.vocab, d)
        self.pos_emb = nn.Embedding(config.seq_len, d)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(d) if config.norm == "pre" else None
        self.unembed = nn.Linear(d, config.vocab, bias=False)
        causal = torch.tril(torch.ones(config.seq_len, config.seq_len, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)
        self._bias_cache: dict[tuple[int, torch.dtype], torch.Tensor] = {}
        self.reset_parameters(generator)

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None) -> None:
        """N(0, init_std²) for every matrix and embedding, zero biases, LayerNorm (1, 0)."""
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, 0.0, self.config.init_std, generator=generator)
            elif ".ln" in "." + name:  # blocks.N.ln1/ln2, ln_f
                nn.init.ones_(p) if name.endswith("weight") else nn.init.zeros_(p)
            else:
                nn.init.zeros_(p)

    def mask_bias(self, t: int, key_mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor:
        """Additive mask (B|1, 1, T, T): 0 where query i may see key j (j ≤ i, and ``key_mask``
        (B, T) is 1 there), the dtype's most negative value elsewhere."""
        if key_mask is None and (t, dtype) in self._bias_cache:
            return self._bias_cache[(t, dtype)]
        allowed = self.causal[:t, :t][None, None]
        if key_mask is not None:
            allowed = allowed & key_mask.bool()[:, None, None, :]
        bias = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)
        if key_mask is None:
            self._bias_cache[(t, dtype)] = bias
        return bias

    def forward(self, ids: torch.Tensor, key_mask: torch.Tensor | None = None,
                generator: torch.Generator | None = None, attend: Callable | None = None) -> ForwardResult:
        t = ids.shape[1]
        if t > self.config.seq_len:
            raise ValueError(f"sequence of {t} tokens, the model has {self.config.seq_len} positions")
        pos = torch.arange(t, device=ids.device)
        x = apply_dropout(self.tok_emb(ids) + self.pos_emb(pos)[None], self.config.dropout, generator,
                    self.training)  # (B, T, D)
        bias = self.mask_bias(t, key_mask, x.dtype)
        layers = []
        for block in self.blocks:
            x, info = block(x, bias, generator, attend)
            layers.append(info)
        if self.ln_f is not None:
            x = self.ln_f(x)
        return ForwardResult(self.unembed(x), x, layers)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def init_generator(seed: int, stream: int) -> torch.Generator:
    """A torch generator for one purpose (0 = weights, 1 = dropout) of a run's seed."""
    g = torch.Generator()
    g.manual_seed((seed * 1_000_003 + stream) % (2**63 - 1))
    return g

