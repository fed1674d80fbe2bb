"""A training-lab run (engine.training) opened like a Hugging Face model, for ``load_model``.

The run is read with :mod:`engine.training.run_folder`; its tiny transformer's attention goes
through :mod:`.capture` like any model's. This side imports engine.training, never the reverse.
"""

from __future__ import annotations

import os
import types

import torch

from ..training.model import TinyTransformer
from ..training.run_folder import load_weights, read_run_header, recover_run
from ..training.symbols import SymbolTokenizer
from .capture import explorer_attention


class TrainedTinyTransformer(torch.nn.Module):
    """A saved run shaped like the part of a Hugging Face model that
    :class:`engine.models.LoadedModel` uses: ``config`` (``model_type``,
    ``num_hidden_layers``, ``hidden_size``, ``max_position_embeddings``, ...),
    ``get_input_embeddings()``, and ``forward(input_ids, attention_mask)`` returning
    ``last_hidden_state`` (B, T, D), with every layer's attention going through
    :func:`.capture.explorer_attention` so the panels capture Q, K, V and the
    weights like any model's."""

    def __init__(self, core: TinyTransformer) -> None:
        super().__init__()
        self.core = core
        c = core.config
        self.config = types.SimpleNamespace(
            model_type="tiny-transformer", num_hidden_layers=c.n_layers, hidden_size=c.d_model,
            num_attention_heads=c.n_heads, num_key_value_heads=c.kv_heads,
            max_position_embeddings=c.seq_len, vocab_size=c.vocab, training_config=c.to_dict())

    def get_input_embeddings(self) -> torch.nn.Embedding:
        return self.core.tok_emb

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
        res = self.core(input_ids, key_mask=attention_mask, attend=explorer_attention)
        return types.SimpleNamespace(last_hidden_state=res.hidden, logits=res.logits)


def open_for_inspection(folder: str | os.PathLike) -> tuple[TrainedTinyTransformer, SymbolTokenizer, list[str]]:
    """(model in eval mode, tokenizer, notices) of a saved run, for ``engine.models.load_model``
    (a save of ``folder`` killed midway is recovered first)."""
    recover_run(folder)
    folder, head, config = read_run_header(folder)
    core = TinyTransformer(config)
    load_weights(core, folder)
    model = TrainedTinyTransformer(core).eval()
    tokenizer = SymbolTokenizer(config)
    steps = head.get("steps_done")
    example = "".join(tokenizer.vocab[len(config.specials):][:6])
    notices = [
        *non_finite_notice(core),
        f"A training-lab run: {config.summary()}, {steps} steps.",
        f"Its tokens are the task's symbols: type e.g. '{example} {example}' (spaces are ignored, "
        "characters outside the vocabulary skipped); <bos> comes first as in training.",
    ]
    return model, tokenizer, notices


def non_finite_notice(model: torch.nn.Module) -> list[str]:
    """One warning when weights of ``model`` are NaN or infinite (a run whose training
    diverged): its attention and every metric are then NaN, and the pattern labels mean
    nothing. Empty otherwise."""
    bad = total = 0
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                bad += int((~torch.isfinite(t)).sum())
                total += t.numel()
    if not bad:
        return []
    return [f"Warning: {bad} of the run's {total} weights are NaN or infinite (its training diverged), "
            "so its attention weights and every metric are NaN and the pattern labels mean nothing."]
