"""Trainer: optimiser steps of the tiny transformer on a task, with per-head scores each step.

``Trainer(config)`` builds the model from the seed, ``step(n)`` runs n AdamW
steps (linear warmup, then constant or cosine; gradient clipping) and
returns one :class:`TrainStep` each, ``probe()`` shows the attention of a
fixed probe batch, ``check_circuit()`` says whether the loss fell through an
induction head or another circuit, ``save`` / ``load`` keep a run.

Deterministic for a seed: the weights, the data and the dropout masks come
from the trainer's own generators (never torch's global one), and training
runs on a fixed number of torch threads (1 by default: the prototype of
issue 17 measured two threads 1.4× faster on an idle 2-core machine but
4–20× slower beside a GUI that needs a core). ``torch.set_num_threads`` is
process-wide: it is set for each ``step`` call and restored afterwards.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..numbers import fixed
from .config import TrainConfig
from .model import TinyTransformer, init_generator
from .optim import AdamW
from .run_folder import read_run_header, recover_run, restore_run, save_run
from .scores import head_scores
from .symbols import symbols
from .tasks import IGNORE, Batch, make_batch, probe_prefixes

#: AdamW's betas and epsilon (nanoGPT's)
BETAS = (0.9, 0.95)
EPS = 1e-8
#: the cosine schedule ends at lr × this
MIN_LR_RATIO = 0.1
#: the "induction head formed" thresholds of issue 17 (best layer ≥ 1 head, best layer-0 head)
INDUCTION_THRESHOLD = 0.5
PREVIOUS_TOKEN_THRESHOLD = 0.3
#: loss_predictable (nats) below which the task counts as solved by check_circuit
SOLVED_LOSS = 0.5


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block on ``n`` torch intra-op threads (None: leave as is), then restore."""
    old = torch.get_num_threads()
    change = n is not None and n != old
    if change:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if change:
            torch.set_num_threads(old)


def _floats(a: np.ndarray) -> list:
    return np.asarray(a, dtype=np.float64).round(7).tolist()


@dataclass(eq=False)
class TrainStep:
    """One optimiser step. ``step`` counts from 1; ``loss`` is the mean next-token cross-entropy
    (nats) over every real target of the batch, ``loss_predictable`` over the targets a
    perfect model knows (the repeated half); ``lr`` the rate used; ``grad_norm`` the global
    gradient norm before clipping. Per head, (L, H) float32, measured on this step's batch:
    ``entropy`` (nats) and ``entropy_norm`` (÷ ln of the visible keys), ``max_weight`` (mean of
    each row's largest weight), ``max_logit`` (largest |scaled score|), and ``scores``
    "induction" and "previous_token" in [0, 1] (formulas: :mod:`engine.training.scores`).
    ``elapsed_s``: training seconds of the run so far (not part of the run's identity)."""

    step: int
    loss: float
    loss_predictable: float
    lr: float
    grad_norm: float
    entropy: np.ndarray
    entropy_norm: np.ndarray
    max_weight: np.ndarray
    max_logit: np.ndarray
    scores: dict[str, np.ndarray]
    elapsed_s: float = field(default=0.0)

    def best(self, score: str, layer: int | None = None) -> float:
        """The largest ``score`` ("induction", "previous_token", or a per-head field such as
        "max_weight") over the heads of ``layer`` (None: of every layer)."""
        a = self.scores[score] if score in self.scores else getattr(self, score)
        a = a if layer is None else a[layer]
        return float(np.nanmax(a)) if np.isfinite(a).any() else float("nan")

    def to_dict(self) -> dict:
        """JSON-safe (arrays as nested lists)."""
        return {
            "step": self.step, "loss": self.loss, "loss_predictable": self.loss_predictable,
            "lr": self.lr, "grad_norm": self.grad_norm,
            "entropy": _floats(self.entropy), "entropy_norm": _floats(self.entropy_norm),
            "max_weight": _floats(self.max_weight), "max_logit": _floats(self.max_logit),
            "scores": {k: _floats(v) for k, v in self.scores.items()},
            "elapsed_s": round(self.elapsed_s, 6),
        }

    @classmethod
    def from_dict(cls, d: dict) -> TrainStep:
        arr = lambda v: np.asarray(v, dtype=np.float32)  # noqa: E731
        return cls(step=int(d["step"]), loss=float(d["loss"]),
                   loss_predictable=float(d["loss_predictable"]), lr=float(d["lr"]),
                   grad_norm=float(d["grad_norm"]), entropy=arr(d["entropy"]),
                   entropy_norm=arr(d["entropy_norm"]), max_weight=arr(d["max_weight"]),
                   max_logit=arr(d["max_logit"]),
                   scores={k: arr(v) for k, v in d["scores"].items()},
                   elapsed_s=float(d.get("elapsed_s", 0.0)))


@dataclass(eq=False)
class ProbeSnapshot:
    """The attention of the fixed probe batch at ``step``.

    ``tokens`` (S symbols) and ``attentions`` (L, H, S, S) float32 are those of the first
    probe sequence (the longest prefix: S = its real length); ``scores``, ``entropy``,
    ``entropy_norm`` and ``max_weight`` ((L, H)) and ``loss_predictable`` are over the whole
    probe batch (4 sequences, prefix lengths :func:`engine.training.tasks.probe_prefixes`)."""

    step: int
    tokens: list[str]
    attentions: np.ndarray
    scores: dict[str, np.ndarray]
    entropy: np.ndarray
    entropy_norm: np.ndarray
    max_weight: np.ndarray
    loss_predictable: float


@dataclass(frozen=True)
class CircuitCheck:
    """Which circuit solved the task, measured on fresh sequences.

    ``verdict``: "induction" (low loss on the predictable part and a high induction score),
    "other" (the loss fell but the induction score stayed low: another circuit, e.g. layer-0
    heads attending a band of positions back), "learning" (not solved yet), "solved" (reverse
    and sort, which no induction head solves). ``loss_predictable_unseen`` is the loss at
    ``unseen_prefix``, a prefix length never trained on (induction only): a circuit that
    matches tokens handles it, one tied to the trained lengths does not. ``message`` says it
    all in one sentence for the window and the CLI."""

    verdict: str
    message: str
    loss_predictable: float
    loss_predictable_unseen: float | None
    unseen_prefix: int | None
    induction: float
    previous_token: float


def _finite_max(a: np.ndarray) -> float:
    """The largest finite entry; NaN when there is none (a diverged run), without a warning."""
    a = np.asarray(a, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else float("nan")


def predictable_loss(per_token: torch.Tensor, batch: Batch) -> float:
    """Mean of the per-target losses (B, T) over ``batch.predictable``."""
    m = batch.predictable
    return float(per_token[m].mean()) if bool(m.any()) else float("nan")


class Trainer:
    """See the module docstring. ``threads``: torch threads while stepping (None: leave)."""

    def __init__(self, config: TrainConfig | None = None, *, threads: int | None = 1) -> None:
        self.config = TrainConfig() if config is None else config
        if not isinstance(self.config, TrainConfig):
            raise TypeError(f"config must be a TrainConfig, got {type(self.config).__name__}")
        self.threads = threads
        c = self.config
        with torch_threads(threads):
            self.model = TinyTransformer(c, generator=init_generator(c.seed, 0))
        self.model.train()
        self.dropout_generator = init_generator(c.seed, 1)
        self.data_rng = np.random.default_rng([c.seed, 1])
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        other = [p for p in self.model.parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": c.weight_decay}]
        if other:
            groups.append({"params": other, "weight_decay": 0.0})
        self.optimizer = AdamW(groups, lr=c.lr, betas=BETAS, eps=EPS)
        self.history: list[TrainStep] = []
        self.elapsed_s = 0.0
        self.vocab = symbols(c)
        self.probe_batch = make_batch(c, np.random.default_rng([c.seed, 2]), prefix=probe_prefixes(c))

    # ---- schedule ----------------------------------------------------------------
    @property
    def steps_done(self) -> int:
        return len(self.history)

    def lr_at(self, step: int) -> float:
        """The learning rate of optimiser step ``step`` (1-based): linear warmup over
        ``warmup_steps`` (lr·step/warmup), then constant, or a cosine from lr down to lr/10 at
        ``steps`` (and lr/10 after it)."""
        c = self.config
        if step <= c.warmup_steps:
            return c.lr * step / c.warmup_steps
        if c.schedule == "constant":
            return c.lr
        span = max(1, c.steps - c.warmup_steps)
        progress = min(1.0, (step - c.warmup_steps) / span)
        low = c.lr * MIN_LR_RATIO
        return low + 0.5 * (c.lr - low) * (1.0 + math.cos(math.pi * progress))

    # ---- training ----------------------------------------------------------------
    def step(self, n: int = 1) -> list[TrainStep]:
        """Run ``n`` optimiser steps; return their records (also appended to ``history``)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an integer ≥ 0, got {n!r}")
        out = []
        with torch_threads(self.threads):
            for _ in range(n):
                record = self._one_step()
                self.history.append(record)
                out.append(record)
        return out

    def _one_step(self) -> TrainStep:
        t0 = time.perf_counter()
        c = self.config
        number = len(self.history) + 1
        lr = self.lr_at(number)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        batch = make_batch(c, self.data_rng)
        res = self.model(batch.inputs, generator=self.dropout_generator)
        per_token = F.cross_entropy(res.logits.reshape(-1, c.vocab), batch.targets.reshape(-1),
                                    ignore_index=IGNORE, reduction="none").view(batch.targets.shape)
        real = batch.targets != IGNORE
        loss = per_token.sum() / real.sum()
        self.optimizer.zero_grad()
        loss.backward()
        max_norm = c.grad_clip if c.grad_clip > 0 else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm))
        self.optimizer.step()
        sc = head_scores([layer.weights for layer in res.layers], batch)
        logit_max = np.stack([layer.logit_max.numpy() for layer in res.layers]).astype(np.float32)
        self.elapsed_s += time.perf_counter() - t0
        return TrainStep(
            step=number, loss=float(loss.detach()), loss_predictable=predictable_loss(per_token.detach(), batch),
            lr=lr, grad_norm=grad_norm, entropy=sc["entropy"], entropy_norm=sc["entropy_norm"],
            max_weight=sc["max_weight"], max_logit=logit_max,
            scores={"induction": sc["induction"], "previous_token": sc["previous_token"]},
            elapsed_s=self.elapsed_s)

    # ---- looking at the model ------------------------------------------------------
    @torch.no_grad()
    def _evaluate(self, batch: Batch) -> tuple[dict[str, np.ndarray], float, list[torch.Tensor]]:
        """(scores, loss_predictable, per-layer weights) of ``batch`` in eval mode (no dropout,
        no generator drawn from)."""
        was_training = self.model.training
        self.model.eval()
        try:
            with torch_threads(self.threads):
                res = self.model(batch.inputs)
                per_token = F.cross_entropy(res.logits.reshape(-1, self.config.vocab),
                                            batch.targets.reshape(-1), ignore_index=IGNORE,
                                            reduction="none").view(batch.targets.shape)
                weights = [layer.weights for layer in res.layers]
                return head_scores(weights, batch), predictable_loss(per_token, batch), weights
        finally:
            self.model.train(was_training)

    def probe(self) -> ProbeSnapshot:
        """The attention of the fixed probe batch now (costs one small forward pass)."""
        sc, lp, weights = self._evaluate(self.probe_batch)
        s = int(self.probe_batch.lengths[0])
        att = torch.stack([w[0, :, :s, :s] for w in weights]).numpy().astype(np.float32)  # (L, H, S, S)
        ids = self.probe_batch.inputs[0, :s].tolist()
        return ProbeSnapshot(
            step=self.steps_done, tokens=[self.vocab[i] for i in ids], attentions=att,
            scores={"induction": sc["induction"], "previous_token": sc["previous_token"]},
            entropy=sc["entropy"], entropy_norm=sc["entropy_norm"], max_weight=sc["max_weight"],
            loss_predictable=lp)

    def check_circuit(self, n: int = 64) -> CircuitCheck:
        """Evaluate ``n`` fresh sequences (a fixed draw) at the trained prefix lengths and, for
        the induction task, at ``config.unseen_prefix``, and name the circuit (see
        :class:`CircuitCheck`). Costs two small forward passes."""
        c = self.config
        rng = np.random.default_rng([c.seed, 3])
        sc, lp, _ = self._evaluate(make_batch(c, rng, batch=n))
        unseen = c.unseen_prefix
        lp_unseen = None
        if unseen is not None:
            _, lp_unseen, _ = self._evaluate(make_batch(c, rng, prefix=[unseen] * n))
        later = sc["induction"][1:] if c.n_layers > 1 else sc["induction"]
        ind, prev = _finite_max(later), _finite_max(sc["previous_token"][0])
        at_unseen = ""
        if lp_unseen is not None and math.isfinite(lp_unseen):
            at_unseen = f"; at the unseen prefix length {unseen} the loss is {fixed(lp_unseen)}"
            if lp_unseen >= 2 * SOLVED_LOSS:
                at_unseen += " (it has not generalised beyond the trained lengths)"
        if not math.isfinite(lp):  # (never "nan nats")
            verdict, msg = "learning", "the loss is not a number: the run diverged"
        elif not lp < SOLVED_LOSS:
            verdict, msg = "learning", f"still learning: loss on the predictable part {fixed(lp)} nats"
        elif c.task not in ("induction", "copy"):
            verdict, msg = "solved", f"solved: loss on the predictable part {fixed(lp)} nats"
        elif ind >= INDUCTION_THRESHOLD:
            verdict = "induction"
            msg = f"an induction head formed: induction score {fixed(ind)}, loss {fixed(lp)} nats{at_unseen}"
        else:
            verdict = "other"
            msg = (f"another circuit formed: the loss fell to {fixed(lp)} nats but the best induction "
                   f"score is only {fixed(ind)}{at_unseen}")
        return CircuitCheck(verdict, msg, lp, lp_unseen, unseen, ind, prev)

    # ---- keeping a run -------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write the run to ``folder`` (see :mod:`engine.training.run_folder`); returns it."""
        return save_run(self, folder)

    @classmethod
    def load(cls, folder: str | Path, *, threads: int | None = 1) -> Trainer:
        """The run saved in ``folder``, ready to continue exactly where it stopped (same data,
        same dropout masks, same optimiser moments: N steps + save + load + M steps = N + M).
        A save of ``folder`` killed midway is recovered first (:func:`.run_folder.recover_run`)."""
        recover_run(folder)
        folder, head, config = read_run_header(folder)
        trainer = cls(config, threads=threads)
        restore_run(trainer, folder, head, TrainStep.from_dict)
        return trainer


def induction_reached(step: TrainStep) -> bool:
    """Issue 17's milestone: best layer ≥ 1 induction score > 0.5 and best layer-0
    previous-token score > 0.3 (a 1-layer model: its best induction score alone)."""
    ind = step.scores["induction"]
    if ind.shape[0] == 1:
        return _finite_max(ind) > INDUCTION_THRESHOLD
    return (_finite_max(ind[1:]) > INDUCTION_THRESHOLD
            and _finite_max(step.scores["previous_token"][0]) > PREVIOUS_TOKEN_THRESHOLD)


def first_reached(history: list[TrainStep]) -> TrainStep | None:
    """The first step of ``history`` at which :func:`induction_reached` holds."""
    return next((s for s in history if induction_reached(s)), None)
