"""AttentionConfig: the single source of truth for one attention computation.

Every control of the explorer, every session file and every CLI call ends up
as one of these frozen dataclasses. Construction validates, so an instance
that exists is always computable (short of the memory budget, checked by
``engine.run``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any


class ConfigError(ValueError):
    """A config field holds a value the engine cannot compute; the message names it."""


DTYPES = ("float32", "float16", "bfloat16")
MASK_VALUES = ("-inf", "min", "-1e9")
POSITIONALS = ("none", "sinusoidal", "learned", "rope", "alibi")
BACKENDS = ("eager", "sdpa", "flash")
DEVICES = ("cpu", "cuda")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class AttentionConfig:
    """One attention layer and its input; see DESIGN.md for the full contract.

    Shapes: B=batch, H=n_heads, Hkv=kv_heads, S=seq_len, Skv=key_len,
    Dh=head_dim=d_model/H.
    """

    d_model: int = 64  # model width; split evenly over the heads
    n_heads: int = 4  # query heads
    n_kv_heads: int | None = None  # None = MHA, 1 = MQA, between = GQA
    seq_len: int = 8  # S, query length
    kv_len: int | None = None  # Skv; None = self-attention (Skv = S)
    batch: int = 1
    causal: bool = False  # bottom-right aligned, like flash-attn and a KV cache
    window: int | None = None  # sliding window width; None = unlimited
    pad: int = 0  # last `pad` keys are padding, hidden from every query
    mask_value: str = "-inf"  # what masked scores become: "-inf", "min", "-1e9"
    scale: float | None = None  # multiplier of QKᵀ; None = 1/√Dh
    prescale_q: bool = False  # scale Q before the matmul: the fp16 overflow fix
    dtype: str = "float32"  # the computation really runs in this dtype
    positional: str = "none"
    backend: str = "eager"
    device: str = "cpu"
    seed: int = 0  # same config → same numbers
    init_std: float | None = None  # None = Xavier, √(2/(fan_in+fan_out))
    tokens: tuple[str, ...] | None = field(default=None)  # labels; S = len(tokens)

    def __post_init__(self) -> None:
        if self.tokens is not None and not isinstance(self.tokens, tuple):
            if isinstance(self.tokens, str) or not hasattr(self.tokens, "__iter__"):
                raise ConfigError(f"tokens must be a sequence of strings or None, got {self.tokens!r}")
            object.__setattr__(self, "tokens", tuple(self.tokens))
        if self.tokens is not None and len(self.tokens) == 0:
            raise ConfigError("tokens must hold at least one token (or be None)")
        if self.tokens is not None and len(self.tokens) != self.seq_len:
            # the tokens define S (DESIGN.md): keep the two consistent
            object.__setattr__(self, "seq_len", len(self.tokens))
        if _is_int(self.scale):
            object.__setattr__(self, "scale", float(self.scale))
        if _is_int(self.init_std):
            object.__setattr__(self, "init_std", float(self.init_std))
        self.validate()

    # ---- derived sizes -------------------------------------------------
    @property
    def head_dim(self) -> int:
        """Dh = d_model / n_heads."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Hkv, with None resolved to n_heads."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def group_size(self) -> int:
        """Query heads per KV head (1 for MHA, n_heads for MQA)."""
        return self.n_heads // self.kv_heads

    @property
    def key_len(self) -> int:
        """Skv, with None resolved to seq_len."""
        return self.seq_len if self.kv_len is None else self.kv_len

    @property
    def effective_scale(self) -> float:
        """The multiplier of QKᵀ actually used."""
        return 1.0 / math.sqrt(self.head_dim) if self.scale is None else float(self.scale)

    @property
    def attention_kind(self) -> str:
        """MHA, GQA n:1 or MQA: how the query heads share KV heads."""
        if self.kv_heads == self.n_heads:
            return "MHA"
        if self.kv_heads == 1:
            return "MQA"
        return f"GQA {self.group_size}:1"

    def kv_head_of(self, head: int) -> int:
        """The KV head that query head `head` reads."""
        return head // self.group_size

    # ---- validation ------------------------------------------------------
    def validate(self) -> None:
        """Raise ConfigError naming the first invalid field and what is allowed."""

        def need_int(name: str, lo: int, hi: int | None = None, value: Any = None) -> None:
            v = getattr(self, name) if value is None else value
            if not _is_int(v):
                raise ConfigError(f"{name} must be an integer, got {v!r}")
            if v < lo or (hi is not None and v > hi):
                rng = f">= {lo}" if hi is None else f"between {lo} and {hi}"
                raise ConfigError(f"{name} must be {rng}, got {v}")

        need_int("d_model", 1, 65536)
        need_int("n_heads", 1, 1024)
        if self.d_model % self.n_heads:
            divs = [h for h in range(1, min(self.d_model, 64) + 1) if self.d_model % h == 0]
            raise ConfigError(
                f"n_heads must divide d_model={self.d_model}; got n_heads={self.n_heads} "
                f"(allowed: {', '.join(map(str, divs))})"
            )
        if self.n_kv_heads is not None:
            need_int("n_kv_heads", 1, self.n_heads)
            if self.n_heads % self.n_kv_heads:
                divs = [g for g in range(1, self.n_heads + 1) if self.n_heads % g == 0]
                raise ConfigError(
                    f"n_kv_heads must divide n_heads={self.n_heads}; got {self.n_kv_heads} "
                    f"(allowed: None, {', '.join(map(str, divs))})"
                )
        need_int("seq_len", 1, 1 << 20)
        if self.kv_len is not None:
            need_int("kv_len", 1, 1 << 20)
        need_int("batch", 1, 4096)
        if not isinstance(self.causal, bool):
            raise ConfigError(f"causal must be true or false, got {self.causal!r}")
        if not isinstance(self.prescale_q, bool):
            raise ConfigError(f"prescale_q must be true or false, got {self.prescale_q!r}")
        if self.window is not None:
            need_int("window", 1)
        need_int("pad", 0, self.key_len)
        for name, allowed in (
            ("mask_value", MASK_VALUES),
            ("dtype", DTYPES),
            ("positional", POSITIONALS),
            ("backend", BACKENDS),
            ("device", DEVICES),
        ):
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"{name} must be one of {', '.join(repr(a) for a in allowed)}; "
                    f"got {getattr(self, name)!r}"
                )
        if self.scale is not None:
            if not isinstance(self.scale, float) or not math.isfinite(self.scale):
                raise ConfigError(f"scale must be a finite number or None (1/√d_k), got {self.scale!r}")
        if self.init_std is not None:
            if not isinstance(self.init_std, float) or not (self.init_std > 0) or not math.isfinite(
                self.init_std
            ):
                raise ConfigError(f"init_std must be a positive number or None (Xavier), got {self.init_std!r}")
        need_int("seed", 0, 2**63 - 1)
        if self.positional == "rope" and self.head_dim % 2:
            raise ConfigError(
                f"positional='rope' needs an even head_dim (d_model/n_heads); "
                f"got {self.d_model}/{self.n_heads} = {self.head_dim}"
            )
        if self.tokens is not None:
            if len(self.tokens) == 0:
                raise ConfigError("tokens must hold at least one token (or be None)")
            bad = [t for t in self.tokens if not isinstance(t, str)]
            if bad:
                raise ConfigError(f"tokens must all be strings, got {bad[0]!r}")

    # ---- (de)serialisation ---------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict (tokens as a list)."""
        d = dataclasses.asdict(self)
        if d["tokens"] is not None:
            d["tokens"] = list(d["tokens"])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AttentionConfig:
        """Inverse of to_dict; missing keys take defaults, unknown keys are refused."""
        if not isinstance(d, dict):
            raise ConfigError(f"config must be a JSON object, got {type(d).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ConfigError(
                f"unknown config field(s): {', '.join(unknown)} (known: {', '.join(sorted(names))})"
            )
        kw = dict(d)
        if kw.get("tokens") is not None:
            if not isinstance(kw["tokens"], list | tuple):
                raise ConfigError(f"tokens must be a list of strings, got {kw['tokens']!r}")
            kw["tokens"] = tuple(kw["tokens"])
        return cls(**kw)

    def replace(self, **changes: Any) -> AttentionConfig:
        """dataclasses.replace that drops tokens when seq_len changes away from them."""
        if "seq_len" in changes and "tokens" not in changes and self.tokens is not None:
            if changes["seq_len"] != len(self.tokens):
                changes["tokens"] = None
        return dataclasses.replace(self, **changes)

    def summary(self) -> str:
        """One line for captions and status bars."""
        parts = [
            f"d_model={self.d_model}",
            f"heads={self.n_heads}",
            f"kv={self.kv_heads} ({self.attention_kind})",
            f"S={self.seq_len}" + (f" Skv={self.key_len}" if self.kv_len is not None else ""),
        ]
        masks = []
        if self.causal:
            masks.append("causal")
        if self.window is not None:
            masks.append(f"window={self.window}")
        if self.pad:
            masks.append(f"pad={self.pad}")
        parts.append("mask=" + ("+".join(masks) if masks else "none"))
        parts.append("scale=1/√d_k" if self.scale is None else f"scale={self.scale:g}")
        if self.prescale_q:
            parts.append("prescale Q")
        parts.append(self.dtype)
        if self.positional != "none":
            parts.append(f"pos={self.positional}")
        return "  ".join(parts)
