"""The training lab's tasks: random sequences with a part a perfect model can predict.

Every sequence starts with BOS (id 0), then a prefix x1..xL of L *distinct*
random content symbols (ids ≥ len(specials)), L drawn per sequence from the
config's ``prefix_range`` (a fixed L would let a head that looks a fixed
distance back fake the induction score). Then, by task:

=========== ========================== =========================================
task        sequence                   predictable targets
=========== ========================== =========================================
induction   BOS x1..xL x1..xL          x2..xL of the repeat (x1 cannot be known:
                                       L is random)
copy        BOS x1..xL SEP x1..xL      the L tokens after SEP
reverse     BOS x1..xL SEP xL..x1      the L tokens after SEP
sort        BOS x1..xL SEP sorted(x)   the L tokens after SEP (ascending ids)
=========== ========================== =========================================

The rest of the row up to ``seq_len`` is padding (BOS as input, no target):
the model is causal, so padding never changes a real position.

Batches are numpy-built and vectorised: 32 sequences cost ~0.1 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .config import TrainConfig

IGNORE = -100  # target of positions without a loss (torch's cross_entropy default)
BOS = 0
SEP = 1


@dataclass(frozen=True)
class Batch:
    """One batch of task sequences and what the scores need to know about them.

    ``inputs`` (B, T) long; ``targets`` (B, T) long, the next token or IGNORE;
    ``predictable`` (B, T) bool, targets a perfect model gets right;
    ``valid`` (B, T) bool, real (non-padding) positions; ``lengths`` (B,) the
    real length of each row; ``prefix`` (B,) each row's L;
    ``induction_key`` (B, T) long: for query i holding a content token seen
    before, the position right after its latest earlier occurrence (where an
    induction head looks), else -1.
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    predictable: torch.Tensor
    valid: torch.Tensor
    lengths: np.ndarray
    prefix: np.ndarray
    induction_key: torch.Tensor

    @property
    def size(self) -> int:
        return int(self.inputs.shape[0])


def make_batch(config: TrainConfig, rng: np.random.Generator, batch: int | None = None,
               prefix: np.ndarray | list[int] | None = None) -> Batch:
    """Draw ``batch`` sequences of ``config.task``. ``prefix`` (B,) fixes each row's L
    (for probes and the unseen-length check); otherwise L is drawn from ``prefix_range``."""
    b = config.batch if batch is None else int(batch)
    t = config.seq_len
    n_special = len(config.specials)
    lmin, lmax = config.prefix_range
    if prefix is None:
        lengths_l = rng.integers(lmin, lmax + 1, size=b)
    else:
        lengths_l = np.asarray(prefix, dtype=np.int64)
        b = len(lengths_l)
        if lengths_l.min() < 1 or lengths_l.max() > lmax:
            raise ValueError(f"prefix lengths must be in 1..{lmax}, got {lengths_l.tolist()}")
    # distinct symbols per row: the first lmax of a random permutation of the content ids
    perm = np.argsort(rng.random((b, config.n_content)), axis=1)[:, :lmax] + n_special  # (B, Lmax)
    j = np.arange(lmax)[None, :]  # (1, Lmax)
    inside = j < lengths_l[:, None]  # (B, Lmax): the row's first L symbols are its prefix
    second = _second_half(config.task, perm, lengths_l)  # (B, Lmax)

    inputs = np.full((b, t), BOS, dtype=np.int64)
    rows = np.broadcast_to(np.arange(b)[:, None], (b, lmax))
    gap = 0 if config.task == "induction" else 1  # the SEP between the halves
    first_pos = 1 + j  # (1, Lmax)
    second_pos = 1 + lengths_l[:, None] + gap + j  # (B, Lmax)
    inputs[rows[inside], np.broadcast_to(first_pos, (b, lmax))[inside]] = perm[inside]
    inputs[rows[inside], second_pos[inside]] = second[inside]
    if gap:
        inputs[np.arange(b), 1 + lengths_l] = SEP
    lengths = 1 + 2 * lengths_l + gap  # real tokens per row
    # predictable: from the query at 1 + L on (induction: x1 of the repeat, whose successor x2
    # the first half shows; the others: SEP, followed by the first answer)
    start = 1 + lengths_l
    return _finish(inputs, lengths, start, lengths_l, n_special)


def _finish(inputs: np.ndarray, lengths: np.ndarray, start: np.ndarray, prefix: np.ndarray,
            n_special: int) -> Batch:
    """The Batch of ``inputs`` (B, T) with ``lengths`` real tokens per row, the predictable
    targets from query ``start`` (B,) to the row's last target."""
    b, t = inputs.shape
    pos = np.arange(t)[None, :]  # (1, T)
    valid = pos < lengths[:, None]  # (B, T)
    targets = np.full((b, t), IGNORE, dtype=np.int64)
    has_next = pos < lengths[:, None] - 1
    targets[:, :-1] = np.where(has_next[:, :-1], inputs[:, 1:], IGNORE)
    predictable = (pos >= start[:, None]) & has_next
    return Batch(
        inputs=torch.from_numpy(inputs),
        targets=torch.from_numpy(targets),
        predictable=torch.from_numpy(predictable),
        valid=torch.from_numpy(valid),
        lengths=lengths,
        prefix=prefix,
        induction_key=torch.from_numpy(induction_keys(inputs, valid, n_special)),
    )


def _second_half(task: str, perm: np.ndarray, lengths_l: np.ndarray) -> np.ndarray:
    """(B, Lmax): what follows the prefix, aligned so column j is the j-th token after it."""
    if task in ("induction", "copy"):
        return perm
    lmax = perm.shape[1]
    j = np.arange(lmax)[None, :]
    if task == "reverse":  # column j holds x_{L-1-j}
        idx = np.clip(lengths_l[:, None] - 1 - j, 0, lmax - 1)
        return np.take_along_axis(perm, idx, axis=1)
    # sort: the row's first L symbols ascending, the unused columns pushed to the end
    big = np.iinfo(np.int64).max
    return np.sort(np.where(j < lengths_l[:, None], perm, big), axis=1)


def induction_keys(inputs: np.ndarray, valid: np.ndarray, n_special: int) -> np.ndarray:
    """(B, T) long: for each query i whose token is a content symbol that occurred earlier,
    at latest at p < i, the key p + 1 (the token that followed it then); -1 elsewhere.

    This is the target of an induction head ([A][B] ... [A] → attend to [B]),
    Olsson et al. 2022, defined for any sequence, not just the induction task.
    """
    t = inputs.shape[1]
    same = inputs[:, :, None] == inputs[:, None, :]  # (B, T, T): query i, key j
    earlier = np.tril(np.ones((t, t), dtype=bool), -1)[None]  # j < i
    content = (inputs >= n_special) & valid  # (B, T)
    hit = same & earlier & content[:, :, None] & content[:, None, :]
    # latest earlier occurrence: the largest j with a hit
    last = np.where(hit.any(axis=2), t - 1 - np.argmax(hit[:, :, ::-1], axis=2), -2)
    return (last + 1).astype(np.int64)  # -2 + 1 = -1 where none


def probe_prefixes(config: TrainConfig) -> list[int]:
    """The probe batch's prefix lengths: the longest first (it is the one shown), then the
    shortest, the middle and the longest again."""
    lmin, lmax = config.prefix_range
    return [lmax, lmin, (lmin + lmax) // 2, lmax]
