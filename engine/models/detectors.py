"""Head detectors: previous-token, duplicate-token and induction scores of every head.

The definitions are those of TransformerLens' ``head_detector``
(``transformer_lens/head_detector.py``: ``get_previous_token_head_detection_pattern``,
``get_duplicate_token_head_detection_pattern``, ``get_induction_head_detection_pattern`` and
``compute_head_attention_similarity_score`` with ``error_measure="mul"``). A detection pattern
P (S, S) of 0/1 marks, for each query i, the keys j ≤ i the pattern names:

* **previous_token**: P[i, i−1] = 1 for i ≥ 1;
* **duplicate_token**: P[i, j] = 1 for j < i whose token equals token i;
* **induction**: the duplicate pattern shifted one key to the right, P[i, j+1] = 1 for j < i
  whose token equals token i (Olsson et al. 2022: [A][B] … [A] → attend to [B]).

TransformerLens' "mul" score is Σ A·P / Σ A over the whole (S, S) pattern A, i.e. the weight
on the named keys averaged over *every* query. Here the average is taken over the queries
where the pattern names at least one key (docs/contract.md's contract), so a perfect head scores 1
and the score does not depend on how many queries the pattern leaves out; on the sequences
used (below) the two differ by the constant factor (queries with a key) / (all queries).

The sequences: BOS (where the tokenizer has one) + n random tokens, the n tokens repeated
once more, ``batch`` such sequences (Olsson et al.'s repeated random tokens). Tokens are
drawn without repeats within the n when the vocabulary allows, special tokens excluded, from
a seeded NumPy generator: the same seed gives the same scores.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..memory import format_bytes
from .anatomy import bos_id, cache_of, special_ids, vocab_size
from .cancel import checked
from .capture import capturing
from .errors import InspectError
from .files import available_memory, job_room

DETECTOR_NAMES = ("previous_token", "duplicate_token", "induction")
DEFAULT_TOKENS = 32
DEFAULT_BATCH = 4


def detection_pattern(kind: str, tokens) -> torch.Tensor:
    """TransformerLens' 0/1 detection pattern (S, S) of ``kind`` for one token sequence."""
    t = torch.as_tensor(tokens).reshape(-1)
    s = t.shape[0]
    if kind == "previous_token":
        p = torch.zeros(s, s)
        if s > 1:
            p[1:, :-1] = torch.eye(s - 1)
        return p
    dup = (t[:, None] == t[None, :]).float()
    dup.fill_diagonal_(0.0)
    dup = torch.tril(dup)
    if kind == "duplicate_token":
        return dup
    if kind == "induction":
        shifted = torch.zeros_like(dup)
        shifted[:, 1:] = dup[:, :-1]
        return torch.tril(shifted)
    raise _unknown(kind)


def _unknown(kind) -> InspectError:
    return InspectError(f"unknown detector {kind!r}: use {', '.join(DETECTOR_NAMES)}")


def repeated_random_tokens(loaded, n_tokens: int, batch: int, seed: int) -> torch.Tensor:
    """(batch, [1 +] 2·n_tokens) ids: BOS (if any), n random tokens, the same n again."""
    n_vocab = vocab_size(loaded)
    specials = special_ids(loaded.tokenizer)
    candidates = np.array([i for i in range(n_vocab) if i not in specials], dtype=np.int64)
    if len(candidates) < 2:
        raise InspectError("the vocabulary has too few ordinary tokens for the detectors")
    rng = np.random.default_rng(seed)
    replace = n_tokens > len(candidates)
    rows = [rng.choice(candidates, size=n_tokens, replace=replace) for _ in range(batch)]
    half = torch.as_tensor(np.stack(rows))
    seq = torch.cat([half, half], dim=1)
    bos = bos_id(loaded.tokenizer)
    if bos is not None:
        seq = torch.cat([torch.full((batch, 1), bos, dtype=seq.dtype), seq], dim=1)
    return seq


def _check_sizes(loaded, n_tokens, batch, seed) -> tuple[int, int, int]:
    limit = (loaded.max_length - 1) // 2
    if n_tokens is None:
        n_tokens = min(DEFAULT_TOKENS, limit)
    for name, value, lo in (("n_tokens", n_tokens, 2), ("batch", batch, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < lo:
            raise InspectError(f"{name} must be an integer >= {lo}, not {value!r}")
    if n_tokens > limit:
        raise InspectError(f"n_tokens {n_tokens} is too long: 1 + 2 x n_tokens must fit the "
                           f"model's {loaded.max_length} positions (n_tokens <= {limit})")
    if batch > 256:
        raise InspectError(f"batch {batch} is too large (at most 256)")
    return int(n_tokens), int(batch), int(seed)


def all_head_scores(loaded, *, n_tokens: int | None = None, batch: int = DEFAULT_BATCH,
                    seed: int = 0, progress: Callable[[int, int], object] | None = None
                    ) -> dict[str, np.ndarray]:
    """Every detector's (L, H) float32 scores from one forward pass (cached per model).
    ``progress(done, total)`` is called after each forward pass of a piece of the batch and
    with the same count inside it (:func:`.cancel.checked`); raising from it cancels."""
    n_tokens, batch, seed = _check_sizes(loaded, n_tokens, batch, seed)
    cache = cache_of(loaded).setdefault("head_scores", {})
    key = (n_tokens, batch, seed)
    if key in cache:
        return {k: v.copy() for k, v in cache[key].items()}
    ids = repeated_random_tokens(loaded, n_tokens, batch, seed)
    patterns = {k: torch.stack([detection_pattern(k, row) for row in ids]) for k in DETECTOR_NAMES}
    rows = {k: p.sum(-1) > 0 for k, p in patterns.items()}  # (B, S): queries the pattern covers
    L, H = loaded.n_layers, loaded.n_heads
    weight = {k: torch.zeros(L, H, dtype=torch.float64) for k in DETECTOR_NAMES}  # Σ over queries
    piece = sequences_that_fit(loaded, ids.shape[1], batch)
    with checked(loaded, progress) as report:
        total = -(-batch // piece)
        report(0, total)
        for start in range(0, batch, piece):
            part = slice(start, start + piece)
            for layer, a in enumerate(_attention(loaded, ids[part])):  # (b, H, S, S)
                for k in DETECTOR_NAMES:
                    on_key = (a * patterns[k][part, None]).sum(-1)  # (b, H, S)
                    weight[k][layer] += (on_key * rows[k][part, None]).sum((0, 2)).double()
            report(start // piece + 1, total)
    out = {}
    for k in DETECTOR_NAMES:
        n_rows = float(rows[k].sum().clamp_min(1))  # queries the pattern covers, in every sequence
        out[k] = (weight[k] / n_rows).clamp(0.0, 1.0).numpy().astype(np.float32)
    if len(cache) > 8:
        cache.clear()
    cache[key] = out
    return {k: v.copy() for k, v in out.items()}


def _attention(loaded, ids: torch.Tensor) -> list[torch.Tensor]:
    """Every layer's attention weights (b, H, S, S) float32 on the CPU for ids (b, S)."""
    dev = loaded.input_device
    with torch.inference_mode(), capturing() as cap:
        loaded.model(input_ids=ids.to(dev), attention_mask=torch.ones_like(ids).to(dev),
                     **getattr(loaded, "_forward_kwargs", {}))
    if cap.calls != loaded.n_layers:
        raise InspectError(f"expected attention from {loaded.n_layers} layers, got {cap.calls}")
    return [cap.records[layer][3].detach().to("cpu", torch.float32) for layer in range(loaded.n_layers)]


def sequences_that_fit(loaded, s: int, batch: int, free: int | None = None) -> int:
    """How many of the ``batch`` sequences of ``s`` tokens one forward pass may hold in the room
    :func:`.files.job_room` gives (80 % of the free memory, at most the engine's memory budget): each keeps every layer's (H, S, S) weights (in the model's dtype and
    as float32) plus one layer's scores and their softmax. InspectError (one line, with the
    estimate) when not even one fits."""
    free = available_memory(str(loaded.input_device)) if free is None else free
    room, said = job_room(free, str(loaded.input_device))
    if room is None:
        return batch
    item = next(loaded.model.parameters()).element_size()
    plane = loaded.n_heads * s * s
    per_seq = loaded.n_layers * plane * (item + 4) + 3 * plane * 4
    fit = int(room // per_seq)
    if fit < 1:
        raise InspectError(f"The head detectors on {s} tokens need about {format_bytes(per_seq)} "
                           f"for one sequence but {said}: use fewer tokens")
    return min(batch, fit)


def head_scores(loaded, kind: str, *, n_tokens: int | None = None, batch: int = DEFAULT_BATCH,
                seed: int = 0, progress: Callable[[int, int], object] | None = None) -> np.ndarray:
    """(L, H) float32 in [0, 1]: the mean attention, over the queries the pattern applies to,
    on the key(s) ``kind`` names (see the module docstring for the definitions, after
    TransformerLens' ``head_detector``), on ``batch`` sequences of BOS + ``n_tokens`` random
    tokens repeated twice (default n_tokens: 32, or what fits the model's positions)."""
    if not isinstance(kind, str) or kind not in DETECTOR_NAMES:
        raise _unknown(kind)
    return all_head_scores(loaded, n_tokens=n_tokens, batch=batch, seed=seed, progress=progress)[kind]
