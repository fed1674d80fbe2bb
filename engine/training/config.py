"""TrainConfig: everything that defines one training run of the training lab.

A frozen dataclass like :class:`engine.AttentionConfig`: construction
validates, so a config that exists can be trained (within the memory budget
checked here too); ``to_dict`` / ``from_dict`` are a JSON round trip in which
missing keys take defaults and unknown keys are refused.

The defaults are the preset "An induction head forms": a 2-layer,
attention-only, post-LN transformer with 2 heads of width 32 on sequences
BOS, x1..xL, x1..xL with L drawn per sequence from 8..16 (``seq_len`` 33).
Seeds 0–7 were measured (``python main.py bench --train``): each reaches the
induction milestone at steps 360–432 of the default 600, 6–8 s on one CPU
thread of the 2-core machine (numbers in docs/architecture.md). The init std
is 0.1, not GPT-2's 0.02: at 0.02 seeds 1–3 had not formed the head by
step 1000 (seed 0 at 593).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from typing import Any

from ..config import MAX_SEED, ConfigError, _as_float, _is_int, short_repr

TASKS = ("induction", "copy", "reverse", "sort")
NORMS = ("pre", "post", "none")
SCALES = ("sqrt", "none")
SCHEDULES = ("constant", "cosine")

#: special tokens before the content symbols: induction needs only BOS, the others a separator
SPECIALS = {"induction": ("<bos>",), "copy": ("<bos>", "<sep>"), "reverse": ("<bos>", "<sep>"),
            "sort": ("<bos>", "<sep>")}
#: the largest scale multiplier accepted (×1000 of QKᵀ saturates any softmax already)
MAX_SCALE = 1000.0
#: bytes a training step may hold in activations and gradients (a laptop beside the GUI)
MEMORY_BUDGET = 2 * 2**30


@dataclass(frozen=True)
class TrainConfig:
    """One training run: task, architecture, optimiser, schedule and seed.

    Sizes: L = n_layers, H = n_heads, Hkv = n_kv_heads (None = H),
    Dh = d_model / H, T = seq_len (the model's context, learned positions).
    """

    task: str = "induction"  # "induction", "copy", "reverse" or "sort" (see engine.training.tasks)
    n_layers: int = 2
    n_heads: int = 2
    n_kv_heads: int | None = None  # None = one KV head per query head; fewer = GQA
    d_model: int = 64
    vocab: int = 48  # output classes, the special tokens included
    seq_len: int = 33  # T; the prefix length L is drawn per sequence from ceil(Lmax/2)..Lmax
    attn_only: bool = True  # no MLP blocks
    norm: str = "post"  # LayerNorm "pre" (GPT-2), "post" (the 2017 original) or "none"
    dropout: float = 0.0  # on attention weights, residual branches and embeddings
    scale: str | float = "sqrt"  # "sqrt" = 1/√Dh, "none" = 1, or a multiplier of QKᵀ
    init_std: float = 0.1  # std of every weight matrix and embedding
    lr: float = 3e-3  # peak learning rate of AdamW
    warmup_steps: int = 0  # linear warmup from lr/warmup_steps to lr
    schedule: str = "constant"  # after warmup: "constant", or "cosine" down to lr/10 at `steps`
    weight_decay: float = 0.0  # AdamW's decoupled decay, on weight matrices only
    grad_clip: float = 1.0  # clip the global gradient norm to this; 0 = no clipping
    steps: int = 600  # planned length of the run (the cosine schedule's end; the CLI's default)
    batch: int = 32
    seed: int = 0  # weights, data, dropout: the same config trains the same way

    def __post_init__(self) -> None:
        for name in ("dropout", "init_std", "lr", "weight_decay", "grad_clip", "scale"):
            object.__setattr__(self, name, _as_float(name, getattr(self, name)))  # JSON writes 1 for 1.0
        self.validate()

    # ---- derived -----------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        """Dh = d_model / n_heads."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Hkv with None resolved."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def scaling(self) -> float:
        """The multiplier of QKᵀ actually used."""
        if self.scale == "sqrt":
            return 1.0 / math.sqrt(self.head_dim)
        if self.scale == "none":
            return 1.0
        return float(self.scale)

    @property
    def specials(self) -> tuple[str, ...]:
        """The special tokens of the task (ids 0..len-1)."""
        return SPECIALS[self.task]

    @property
    def n_content(self) -> int:
        """Content symbols (the random tokens): vocab minus the special tokens."""
        return self.vocab - len(self.specials)

    @property
    def prefix_range(self) -> tuple[int, int]:
        """(Lmin, Lmax): the prefix length is drawn uniformly from Lmin..Lmax per sequence, so
        a head that attends a fixed distance back cannot fake the induction score."""
        overhead = 1 if self.task == "induction" else 2  # BOS (+ SEP)
        lmax = (self.seq_len - overhead) // 2
        return max(2, math.ceil(lmax / 2)), lmax

    @property
    def unseen_prefix(self) -> int | None:
        """A prefix length never trained on (half of Lmin), for the circuit check; None when
        the range leaves none (Lmin ≤ 3) or the task is not induction."""
        lmin, _ = self.prefix_range
        return lmin // 2 if lmin >= 4 and self.task == "induction" else None

    def memory_bytes(self) -> int:
        """Rough bytes of one training step's activations, gradients and weights (float32)."""
        b, t, d, h, n = self.batch, self.seq_len, self.d_model, self.n_heads, self.n_layers
        grids = 4 * b * h * t * t  # scores, weights, dropout mask, grad
        per_layer = grids + b * t * d * (12 if self.attn_only else 28)
        params = n * d * d * (4 if self.attn_only else 12) + 2 * self.vocab * d + t * d
        return 4 * (n * per_layer + 3 * b * t * self.vocab + 4 * params)

    # ---- validation --------------------------------------------------------------
    def validate(self) -> None:
        """Raise ConfigError naming the first invalid field and its allowed values."""

        def need_int(name: str, lo: int, hi: int) -> None:
            value = getattr(self, name)
            if not _is_int(value):
                raise ConfigError(f"{name} must be an integer, got {short_repr(value)}")
            if not lo <= value <= hi:
                raise ConfigError(f"{name} must be between {lo} and {hi}, got {short_repr(value, 30)}")

        def need_float(name: str, lo: float, hi: float, *, lo_open: bool = False, note: str = "") -> None:
            value = getattr(self, name)
            ok = isinstance(value, float) and math.isfinite(value) and (
                (lo < value if lo_open else lo <= value) and value <= hi)
            if not ok:
                bracket = "(" if lo_open else "["
                raise ConfigError(f"{name} must be a number in {bracket}{lo:g}, {hi:g}]{note}, "
                                  f"got {short_repr(value, 30)}")

        def need_choice(name: str, allowed: tuple[str, ...]) -> None:
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise ConfigError(f"{name} must be one of {', '.join(repr(a) for a in allowed)}; "
                                  f"got {short_repr(value)}")

        need_choice("task", TASKS)
        need_int("n_layers", 1, 12)
        need_int("n_heads", 1, 32)
        need_int("d_model", 4, 1024)
        if self.d_model % self.n_heads:
            divs = [h for h in range(1, 33) if self.d_model % h == 0]
            raise ConfigError(f"n_heads must divide d_model={self.d_model}; got n_heads={self.n_heads} "
                              f"(allowed: {', '.join(map(str, divs))})")
        if self.n_kv_heads is not None:
            need_int("n_kv_heads", 1, self.n_heads)
            if self.n_heads % self.n_kv_heads:
                divs = [g for g in range(1, self.n_heads + 1) if self.n_heads % g == 0]
                raise ConfigError(f"n_kv_heads must divide n_heads={self.n_heads}; got {self.n_kv_heads} "
                                  f"(allowed: None, {', '.join(map(str, divs))})")
        need_int("seq_len", 5 if self.task == "induction" else 6, 512)
        lmax = self.prefix_range[1]
        need_int("vocab", len(self.specials) + lmax, 4096)
        if not isinstance(self.attn_only, bool):
            raise ConfigError(f"attn_only must be true or false, got {short_repr(self.attn_only)}")
        need_choice("norm", NORMS)
        need_float("dropout", 0.0, 0.9)
        if isinstance(self.scale, str):
            need_choice("scale", SCALES)
        elif not (isinstance(self.scale, float) and math.isfinite(self.scale)
                  and 0 < self.scale <= MAX_SCALE):
            raise ConfigError(f"scale must be 'sqrt' (1/√d_head), 'none' or a multiplier in "
                              f"(0, {MAX_SCALE:g}], got {short_repr(self.scale, 30)}")
        need_float("init_std", 0.0, 1.0, lo_open=True)
        need_float("lr", 0.0, 1.0, lo_open=True)
        need_int("warmup_steps", 0, 10**6)
        need_choice("schedule", SCHEDULES)
        need_float("weight_decay", 0.0, 1.0)
        need_float("grad_clip", 0.0, 1e6, note=" (0 = no clipping)")
        need_int("steps", 1, 10**7)
        need_int("batch", 1, 4096)
        need_int("seed", 0, MAX_SEED)
        need = self.memory_bytes()
        if need > MEMORY_BUDGET:
            raise ConfigError(
                f"batch, seq_len and the model's size need about {need / 2**30:.1f} GiB a step, more "
                f"than the {MEMORY_BUDGET / 2**30:.0f} GiB allowed: lower batch (now {self.batch}) "
                f"or seq_len (now {self.seq_len})")

    # ---- (de)serialisation ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of every field."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> TrainConfig:
        """Inverse of to_dict; missing keys take defaults, unknown keys are refused by name."""
        if not isinstance(d, dict):
            raise ConfigError(f"training config must be a JSON object, got {type(d).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(k if isinstance(k, str) and len(k) <= 40 and k.isprintable() else short_repr(k, 40)
                         for k in set(d) - names)
        if unknown:
            raise ConfigError(f"unknown training config field(s): {', '.join(unknown)} "
                              f"(known: {', '.join(sorted(names))})")
        return cls(**d)

    def replace(self, **changes: Any) -> TrainConfig:
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def summary(self) -> str:
        """One line for legends and logs, e.g. 'induction · 2L×2H d64 attn-only post-LN · lr 3e-3'."""
        arch = f"{self.n_layers}L×{self.n_heads}H d{self.d_model}"
        if self.kv_heads != self.n_heads:
            arch += f" kv{self.kv_heads}"
        arch += " attn-only" if self.attn_only else " +MLP"
        arch += {"pre": " pre-LN", "post": " post-LN", "none": " no-norm"}[self.norm]
        scale = {"sqrt": "", "none": " · no 1/√d"}.get(self.scale, "") if isinstance(self.scale, str) \
            else f" · scale {self.scale:g}"
        opt = f"lr {self.lr:g}" + (f" warmup {self.warmup_steps}" if self.warmup_steps else "")
        if self.schedule == "cosine":
            opt += " cosine"
        if self.dropout:
            opt += f" · dropout {self.dropout:g}"
        return f"{self.task} · {arch}{scale} · {opt} · seed {self.seed}"
