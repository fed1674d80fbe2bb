"""Results of inspecting a real model: :class:`ModelTrace` and :class:`DeletionResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch

from .metrics import METRIC_NAMES, head_metrics


def token_label(token: str) -> str:
    """A tokenizer's raw token as a person reads it: the byte-level BPE space
    marker ``Ġ`` and SentencePiece's ``▁`` become ``␣``, newline markers ``Ċ``
    become ``↵``; WordPiece's ``##`` continuation stays (it means "glued to the
    previous token")."""
    return token.replace("Ġ", "␣").replace("▁", "␣").replace("Ċ", "↵").replace("ĉ", "⇥")


@dataclass(eq=False)
class ModelTrace:
    """One forward pass of a real model over one text.

    ``attentions[i]`` belongs to layer ``layers[i]``; likewise ``queries[i]``
    (H, S, Dh), ``keys[i]`` and ``values[i]`` (Hkv, S, Dh). Queries and keys
    are exactly what the model multiplied: after RoPE where the model uses it,
    before the KV heads are repeated for the query heads. Query head ``h``
    reads KV head ``kv_head_of[h]``. ``hidden`` is the final hidden state
    (S, d_model), or None when the pass stopped after the last wanted layer.
    """

    model_name: str
    text: str
    tokens: list[str]
    token_ids: list[int]
    attentions: torch.Tensor
    layers: list[int]
    n_heads: int
    n_kv_heads: int
    head_dim: int
    queries: list[torch.Tensor]
    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    causal: bool
    hidden: torch.Tensor | None = None
    notice: str | None = None
    n_tokens_in_text: int | None = None
    kv_head_of: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.kv_head_of:
            group = self.n_heads // self.n_kv_heads
            self.kv_head_of = [h // group for h in range(self.n_heads)]

    @property
    def seq_len(self) -> int:
        return len(self.tokens)

    @property
    def labels(self) -> list[str]:
        """``tokens`` made readable for axis labels (see :func:`token_label`)."""
        return [token_label(t) for t in self.tokens]

    @property
    def truncated(self) -> bool:
        return self.notice is not None

    def attention(self, layer: int, head: int) -> torch.Tensor:
        """The (S, S) weights of one head; ``layer`` is the model's layer index."""
        return self.attentions[self.layers.index(layer), head]

    @cached_property
    def metrics(self) -> dict[str, np.ndarray]:
        """:func:`engine.models.metrics.head_metrics` of every captured head: each
        value has shape (len(layers), n_heads). Computed on first access."""
        return head_metrics(self.attentions, causal=self.causal)

    def head_table(self) -> list[dict]:
        """One plain dict per (layer, head): layer, head, kv_head, pattern and every metric."""
        m = self.metrics
        rows = []
        for li, layer in enumerate(self.layers):
            for h in range(self.n_heads):
                row: dict = {"layer": layer, "head": h, "kv_head": self.kv_head_of[h],
                             "pattern": str(m["pattern"][li, h])}
                for name in METRIC_NAMES:
                    row[name] = float(m[name][li, h])
                row["vertical_key"] = int(m["vertical_key"][li, h])
                rows.append(row)
        return rows


@dataclass(eq=False)
class DeletionResult:
    """The token-deletion test: how much does each head, and the model's output,
    depend on one token?

    ``mode="remove"`` deletes the token from the input (later tokens move one
    position left); ``mode="mask"`` keeps it in place but hides it from every
    query through the attention mask. Only the *remaining* tokens are compared
    (``kept`` = their indices in ``before``):

    * ``attention_change[l, h]``: mean over the remaining queries of the total
      variation distance ½·Σ_j |p_j − q_j| between the query's attention
      before (restricted to the remaining keys and renormalised, i.e. as if
      the deleted token's share were spread proportionally over the others)
      and after the deletion. 0 = the head attends exactly as before; 1 = it
      attends to entirely different tokens. A query whose whole attention was
      on the deleted token counts as 1. ``attention_change_max`` is the
      largest row value.
    * ``hidden_change``: ‖h_after − h_before‖ / ‖h_before‖ over the remaining
      tokens' final hidden states (Frobenius norm); ``hidden_change_per_token``
      the same per token.

    In a causal model, queries before the deleted token cannot see it and are
    unchanged, which lowers the means; ``attention_change_max`` does not have
    that dilution.
    """

    mode: str
    removed_index: int
    removed_token: str
    kept: list[int]
    layers: list[int]
    attention_change: np.ndarray
    attention_change_max: np.ndarray
    hidden_change: float
    hidden_change_per_token: np.ndarray
    before: ModelTrace
    after: ModelTrace

    def head_table(self) -> list[dict]:
        return [
            {"layer": layer, "head": h,
             "attention_change": float(self.attention_change[li, h]),
             "attention_change_max": float(self.attention_change_max[li, h])}
            for li, layer in enumerate(self.layers)
            for h in range(self.attention_change.shape[1])
        ]


def deletion_change(before: ModelTrace, after: ModelTrace, removed: int, mode: str
                    ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(mean TV, max TV, kept indices) between the two traces, see :class:`DeletionResult`."""
    s = before.seq_len
    kept = [i for i in range(s) if i != removed]
    idx = torch.tensor(kept, dtype=torch.long)
    p = before.attentions[:, :, idx][:, :, :, idx].double()  # (L, H, S-1, S-1)
    total = p.sum(-1, keepdim=True)
    gone = total.squeeze(-1) <= 1e-12
    p = p / total.clamp_min(1e-300)
    q = after.attentions.double()
    if mode == "mask":
        q = q[:, :, idx][:, :, :, idx]
        q = q / q.sum(-1, keepdim=True).clamp_min(1e-300)
    tv = 0.5 * (p - q).abs().sum(-1)
    tv = torch.where(gone, torch.ones((), dtype=tv.dtype), tv).clamp(0.0, 1.0)
    if tv.shape[-1] == 0:
        zeros = np.zeros(tv.shape[:2])
        return zeros, zeros.copy(), kept
    return tv.mean(-1).numpy(), tv.amax(-1).numpy(), kept
