"""AttentionConfig: the single source of truth for one attention computation.

Every control of the explorer, every session file and every CLI call ends up
as one of these frozen dataclasses. Construction validates, so an instance
that exists is always computable (short of the memory budget, checked by
``engine.run``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any


class ConfigError(ValueError):
    """A config field holds a value the engine cannot compute; the message names it."""


DTYPES = ("float32", "float16", "bfloat16")
MASK_VALUES = ("-inf", "min", "-1e9")
POSITIONALS = ("none", "sinusoidal", "learned", "rope", "alibi")
BACKENDS = ("eager", "sdpa", "flash")
DEVICES = ("cpu", "cuda")
KERNELS = ("softmax", "linear", "performer")

#: Largest seed: the explorer's seed spin box is a C int, and every seed must be shown there.
MAX_SEED = 2**31 - 1
#: Largest sequence (and key) length.
MAX_SEQ = 1 << 20
#: Largest value of a field without a tighter cap (window): anything wider is unlimited anyway.
MAX_INT = 2**31 - 1


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def short_repr(value: Any, limit: int = 60) -> str:
    """repr(value) cut to one short line; never raises (a 5,000-digit int cannot be printed
    with the default str-digits limit, a deep list would recurse)."""
    if _is_int(value) and value.bit_length() > 64:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError
    except (RecursionError, ValueError):
        return f"a {type(value).__name__}"
    except Exception:  # a __repr__ that raises (or returns no string) is the value's own fault
        return f"a {type(value).__name__} that cannot be printed"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_float(name: str, value: Any) -> Any:
    """An int given for a float field becomes a float; one too large for a float is refused."""
    if not _is_int(value):
        return value
    try:
        return float(value)
    except OverflowError:
        raise ConfigError(f"{name} must be a finite number, got {short_repr(value)}") from None


def _need_int(name: str, value: Any, lo: int, hi: int) -> None:
    """ConfigError naming `name` unless value is an int (not a bool) in [lo, hi]."""
    if not _is_int(value):
        raise ConfigError(f"{name} must be an integer, got {short_repr(value)}")
    if not lo <= value <= hi:
        raise ConfigError(f"{name} must be between {lo} and {hi}, got {short_repr(value, 30)}")


@dataclass(frozen=True)
class AttentionConfig:
    """One attention layer and its input; see docs/contract.md for the full contract.

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
    # efficient attention (docs/contract.md, "Efficient attention"; engine.efficient computes them)
    kernel: str = "softmax"  # "softmax", "linear" (φ = elu + 1) or "performer" (FAVOR+)
    n_features: int = 64  # m, performer's random features
    global_tokens: int = 0  # the first g positions are global (local ∪ global with window)
    summary_block: int | None = None  # hierarchical: exact own block, one mean summary per other block

    def __post_init__(self) -> None:
        if self.tokens is not None and not isinstance(self.tokens, tuple):
            if isinstance(self.tokens, str | bytes) or not hasattr(self.tokens, "__iter__"):
                raise ConfigError(f"tokens must be a sequence of strings or None, got {short_repr(self.tokens)}")
            try:
                tokens = tuple(self.tokens)
            except Exception as exc:  # an iterable that fails while read
                raise ConfigError(f"tokens must be a sequence of strings or None, got {short_repr(self.tokens)} "
                                  f"({type(exc).__name__} while reading it)") from None
            object.__setattr__(self, "tokens", tokens)
        if self.tokens is not None and len(self.tokens) == 0:
            raise ConfigError("tokens must hold at least one token (or be None)")
        if self.tokens is not None and len(self.tokens) > MAX_SEQ:
            raise ConfigError(f"tokens must hold at most {MAX_SEQ} tokens, got {len(self.tokens)}")
        if self.tokens is not None and len(self.tokens) != self.seq_len:
            # the tokens define S (docs/contract.md): keep the two consistent, but a seq_len given
            # alongside them must still be a valid one (not silently dropped)
            _need_int("seq_len", self.seq_len, 1, MAX_SEQ)
            object.__setattr__(self, "seq_len", len(self.tokens))
        object.__setattr__(self, "scale", _as_float("scale", self.scale))
        object.__setattr__(self, "init_std", _as_float("init_std", self.init_std))
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

    @property
    def efficient(self) -> bool:
        """True for a way out of O(n²): a kernel other than softmax, global tokens or block
        summaries. engine.run computes those by engine.efficient, holding no (S, Skv) grid."""
        return self.kernel != "softmax" or self.global_tokens > 0 or self.summary_block is not None

    def kv_head_of(self, head: int) -> int:
        """The KV head that query head `head` reads."""
        return head // self.group_size

    # ---- validation ------------------------------------------------------
    def validate(self) -> None:
        """Raise ConfigError naming the first invalid field and what is allowed."""

        def need_int(name: str, lo: int, hi: int) -> None:
            _need_int(name, getattr(self, name), lo, hi)

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
        need_int("seq_len", 1, MAX_SEQ)
        if self.kv_len is not None:
            need_int("kv_len", 1, MAX_SEQ)
        need_int("batch", 1, 4096)
        if not isinstance(self.causal, bool):
            raise ConfigError(f"causal must be true or false, got {short_repr(self.causal)}")
        if not isinstance(self.prescale_q, bool):
            raise ConfigError(f"prescale_q must be true or false, got {short_repr(self.prescale_q)}")
        if self.window is not None:
            need_int("window", 1, MAX_INT)
        need_int("pad", 0, self.key_len)
        for name, allowed in (
            ("mask_value", MASK_VALUES),
            ("dtype", DTYPES),
            ("positional", POSITIONALS),
            ("backend", BACKENDS),
            ("device", DEVICES),
            ("kernel", KERNELS),
        ):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise ConfigError(
                    f"{name} must be one of {', '.join(repr(a) for a in allowed)}; "
                    f"got {short_repr(value)}"
                )
        if self.scale is not None:
            if not isinstance(self.scale, float) or not math.isfinite(self.scale):
                raise ConfigError(f"scale must be a finite number or None (1/√d_k), got {short_repr(self.scale)}")
        if self.init_std is not None:
            if not isinstance(self.init_std, float) or not (self.init_std > 0) or not math.isfinite(
                self.init_std
            ):
                raise ConfigError(
                    f"init_std must be a positive number or None (Xavier), got {short_repr(self.init_std)}"
                )
        need_int("seed", 0, MAX_SEED)
        need_int("n_features", 1, 65536)
        need_int("global_tokens", 0, self.key_len)
        if self.summary_block is not None:
            need_int("summary_block", 1, MAX_SEQ)
        self._validate_efficient()
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
                raise ConfigError(f"tokens must all be strings, got {short_repr(bad[0])}")
            for i, t in enumerate(self.tokens):
                try:
                    t.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise ConfigError(
                        f"tokens must be valid Unicode text: token {i} holds "
                        f"{t[exc.start:exc.end]!r}, a lone surrogate"
                    ) from None

    def _validate_efficient(self) -> None:
        """Refuse, by name, the combinations docs/contract.md gives no definition."""
        if self.kernel != "softmax" and self.positional == "alibi":
            raise ConfigError(
                f"kernel={self.kernel!r} cannot take positional='alibi': ALiBi is a bias inside the "
                f"softmax (use kernel='softmax', or another positional encoding)")
        if self.summary_block is None:
            return
        if self.window is not None:
            raise ConfigError("summary_block cannot take a window: hierarchical attention sees its own "
                              "block exactly and a summary of every other (set window=None)")
        if self.global_tokens:
            raise ConfigError("summary_block cannot take global_tokens: hierarchical attention has its own "
                              "global view, the block summaries (set global_tokens=0)")
        if self.kernel != "softmax":
            raise ConfigError(f"summary_block needs kernel='softmax', got kernel={self.kernel!r}: its "
                              f"summaries share one softmax with the block's own keys")

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
        unknown = sorted(
            k if isinstance(k, str) and len(k) <= 40 and k.isprintable() else short_repr(k, 40) for k in set(d) - names
        )
        if unknown:
            raise ConfigError(
                f"unknown config field(s): {', '.join(unknown)} (known: {', '.join(sorted(names))})"
            )
        kw = dict(d)
        if kw.get("tokens") is not None:
            if not isinstance(kw["tokens"], list | tuple):
                raise ConfigError(f"tokens must be a list of strings, got {short_repr(kw['tokens'])}")
            kw["tokens"] = tuple(kw["tokens"])
        return cls(**kw)

    def replace(self, **changes: Any) -> AttentionConfig:
        """dataclasses.replace that drops tokens when seq_len changes away from them."""
        if "seq_len" in changes and "tokens" not in changes and self.tokens is not None:
            if changes["seq_len"] != len(self.tokens):
                changes["tokens"] = None
        return dataclasses.replace(self, **changes)

    def summary_parts(self, words: Callable[[str], str] = str) -> list[str]:
        """The summary's fields in order. `words(template)` may translate each worded
        template before its values are filled in (the status bar passes Qt's translator;
        the default keeps the English, the words of captions, files and the CLI)."""
        parts = [
            f"d_model={self.d_model}",
            words("heads={n}").format(n=self.n_heads),
            words("kv={n} ({kind})").format(n=self.kv_heads, kind=self.attention_kind),
            f"S={self.seq_len}" + (f" Skv={self.key_len}" if self.kv_len is not None else ""),
        ]
        masks = []
        if self.causal:
            masks.append(words("causal"))
        if self.window is not None:
            masks.append(words("window={w}").format(w=self.window))
        if self.pad:
            masks.append(words("pad={p}").format(p=self.pad))
        if self.global_tokens:
            masks.append(words("global={n}").format(n=self.global_tokens))
        parts.append(words("mask={masks}").format(masks="+".join(masks) if masks else words("none")))
        parts.append(words("scale=1/√d_k") if self.scale is None else words("scale={s}").format(s=f"{self.scale:g}"))
        if self.prescale_q:
            parts.append(words("prescale Q"))
        parts.append(self.dtype)
        if self.positional != "none":
            parts.append(words("pos={p}").format(p=words(self.positional)))
        # the efficient variants (the kernel's name is a config value, kept as written)
        if self.kernel == "performer":
            parts.append(words("kernel={kernel} m={m}").format(kernel=self.kernel, m=self.n_features))
        elif self.kernel != "softmax":
            parts.append(words("kernel={kernel}").format(kernel=self.kernel))
        if self.summary_block is not None:
            parts.append(words("summary_block={b}").format(b=self.summary_block))
        return parts

    def summary(self) -> str:
        """One line for captions and status bars (fields two spaces apart)."""
        return "  ".join(self.summary_parts())
