"""A sweep of one config field: `FIELD=START:STOP:STEP` → one AttentionConfig per value.

    spec = parse_sweep("d_model=32:128:32")       # SweepSpec(field="d_model", values=(32, 64, 96, 128))
    spec = fit_to(base_config, spec)              # n_kv_heads / n_heads: the counts that divide
    configs = sweep_configs(base_config, spec)    # [AttentionConfig, ...], every one validated
    caption = spec.label(spec.values[0])          # "d_model = 32"

Qt-free (the CLI validates a sweep before it builds a window). STOP is included when
the steps land on it; STEP may be negative (START > STOP) or a factor `x2` (a geometric
sweep: 8, 16, 32, …). Every problem raises `SweepError` with one line naming the field
and the value: an unknown field, STEP 0, a step that walks away from STOP, more than
MAX_FRAMES values, a value the controls' range or the engine refuses (all values are
checked before any frame is drawn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import explorer.constraints as C
from engine import AttentionConfig, ConfigError

#: A sweep's frames are held until the GIF is written: keep them bounded.
MAX_FRAMES = 120


class SweepError(ValueError):
    """A sweep that cannot be done; str() is one line for the user."""


@dataclass(frozen=True)
class SweepField:
    """A config field a sweep can move: its type and the range the window offers."""

    name: str
    kind: type  # int or float
    low: float
    high: float
    what: str  # a few words for the dialog

    def apply(self, config: AttentionConfig, value) -> AttentionConfig:
        """`config` with this field at `value` (head_dim sets d_model = value · heads)."""
        if self.name == "head_dim":
            return config.replace(d_model=int(value) * config.n_heads)
        return config.replace(**{self.name: value})


#: The numeric fields a sweep may move, in the order the dialog lists them.
FIELDS: dict[str, SweepField] = {f.name: f for f in (
    SweepField("d_model", int, 1, C.D_MODEL_MAX, "model width"),
    SweepField("head_dim", int, 1, C.D_MODEL_MAX, "d_k = d_model / heads (d_model follows)"),
    SweepField("n_heads", int, 1, C.HEADS_MAX, "query heads"),
    SweepField("n_kv_heads", int, 1, C.HEADS_MAX, "KV heads (GQA)"),
    SweepField("seq_len", int, 1, C.SEQ_MAX, "query length S"),
    SweepField("kv_len", int, 1, C.KV_LEN_MAX, "key length Skv"),
    SweepField("window", int, 1, C.KV_LEN_MAX, "sliding window"),
    SweepField("pad", int, 0, C.KV_LEN_MAX, "padded keys"),
    SweepField("scale", float, C.SCALE_RANGE[0], C.SCALE_RANGE[1], "multiplier of QKᵀ"),
    SweepField("init_std", float, C.INIT_STD_RANGE[0], C.INIT_STD_RANGE[1], "std of W_Q, W_K, W_V"),
    SweepField("seed", int, 0, 2**31 - 1, "random seed"),
)}


def format_value(value) -> str:
    """A value as a caption shows it: 64, 0.25, 1e-03."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


@dataclass(frozen=True)
class SweepSpec:
    """field: a key of FIELDS; values: every value in order (ints or floats)."""

    field: str
    values: tuple

    def label(self, value) -> str:
        """The caption of one frame: "d_model = 64"."""
        return f"{self.field} = {format_value(value)}"

    def text(self) -> str:
        return f"{self.field}={format_value(self.values[0])}:{format_value(self.values[-1])}"


def _number(text: str, what: str, field: SweepField) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SweepError(f"{what} of the {field.name} sweep must be a number, got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise SweepError(f"{what} of the {field.name} sweep must be finite, got {text[:40]!r}")
    if field.kind is int and value != int(value):
        raise SweepError(f"{field.name} takes whole numbers; {what} is {text[:40]!r}")
    return value


def sweep_values(field: SweepField, start: float, stop: float, step: str) -> tuple:
    """The values from start to stop (included when a step lands on it); `step` is a
    number or a factor "x2"."""
    geometric = step[:1] in ("x", "*", "×")
    if geometric:
        factor = _number(step[1:], "the factor", SweepField(field.name, float, 0, 0, ""))
        if factor <= 0 or factor == 1:
            raise SweepError(f"the factor of the {field.name} sweep must be positive and not 1, got {step!r}")
        if start <= 0:
            raise SweepError(f"a geometric {field.name} sweep (x{factor:g}) needs START > 0, got {start:g}")
        if (stop - start) * (factor - 1) < 0:
            raise SweepError(f"factor {factor:g} walks away from STOP {stop:g} (START {start:g})")
        n = math.floor(math.log(stop / start) / math.log(factor) + 1e-9) + 1 if stop != start else 1
    else:
        inc = _number(step, "STEP", field)
        if inc == 0:
            raise SweepError(f"STEP of the {field.name} sweep must not be 0")
        if (stop - start) * inc < 0:
            raise SweepError(f"STEP {step} walks away from STOP {stop:g} (START {start:g}): "
                             f"use STEP {-inc:g}")
        n = math.floor((stop - start) / inc + 1e-9) + 1
    if n > MAX_FRAMES:
        raise SweepError(f"{field.name}={start:g}:{stop:g}:{step} gives {n} frames; at most {MAX_FRAMES}: "
                         "use a larger STEP")
    if n < 2:
        raise SweepError(f"{field.name}={start:g}:{stop:g}:{step} gives one value; a sweep needs two or more")
    out = []
    for i in range(n):
        v = start * factor**i if geometric else start + i * inc
        if field.kind is int:
            v = round(v)
            if geometric and out and v == out[-1]:
                continue
        else:
            v = float(f"{v:.12g}")  # 0.1 + 2·0.1 is 0.3, not 0.30000000000000004
        out.append(v)
    return tuple(out)


def parse_sweep(text: str) -> SweepSpec:
    """`FIELD=START:STOP:STEP` (STEP a number or a factor `x2`) → SweepSpec."""
    name, eq, rng = str(text).partition("=")
    name = name.strip()
    if not eq:
        raise SweepError(f"a sweep is FIELD=START:STOP:STEP (e.g. d_model=32:128:32), got {text[:60]!r}")
    field = FIELDS.get(name)
    if field is None:
        raise SweepError(f"cannot sweep {name[:40]!r}: choose from {', '.join(FIELDS)}")
    parts = [p.strip() for p in rng.split(":")]
    if len(parts) != 3 or not all(parts):
        raise SweepError(f"a sweep is {name}=START:STOP:STEP (three numbers), got {text[:60]!r}")
    start = _number(parts[0], "START", field)
    stop = _number(parts[1], "STOP", field)
    values = sweep_values(field, start, stop, parts[2])
    return SweepSpec(name, values)


def fit_to(base: AttentionConfig, spec: SweepSpec) -> SweepSpec:
    """``spec`` without the head counts ``base`` cannot take: KV heads must divide the query
    heads, so a sweep of n_kv_heads keeps the divisors of base's n_heads (8:1:-1 with 8 heads:
    8, 4, 2, 1) and a sweep of n_heads the multiples of its KV heads. SweepError when fewer
    than two values are left; any other spec comes back as it is."""
    if spec.field == "n_kv_heads":
        keep = tuple(v for v in spec.values if base.n_heads % v == 0)
        why = f"divide n_heads = {base.n_heads}"
    elif spec.field == "n_heads" and base.n_kv_heads is not None:
        keep = tuple(v for v in spec.values if v % base.n_kv_heads == 0)
        why = f"are multiples of n_kv_heads = {base.n_kv_heads}"
    else:
        return spec
    if len(keep) == len(spec.values):
        return spec
    if len(keep) < 2:
        raise SweepError(f"{spec.text()}: {len(keep)} of its values {why}; a sweep needs two or more")
    return SweepSpec(spec.field, keep)


def sweep_configs(base: AttentionConfig, spec: SweepSpec) -> list[AttentionConfig]:
    """One validated config per value: `base` with the field moved. SweepError names the
    first value outside the window's range or refused by the engine (with its reason)."""
    from engine.memory import check_memory

    field = FIELDS[spec.field]
    configs = []
    for v in spec.values:
        if not field.low <= v <= field.high:
            raise SweepError(f"{spec.label(v)} is outside the range {format_value(field.kind(field.low))}–"
                             f"{format_value(field.kind(field.high))}")
        try:
            cfg = field.apply(base, v)
            if cfg.d_model > C.D_MODEL_MAX:
                raise ConfigError(f"d_model = {cfg.d_model} is over {C.D_MODEL_MAX}")
            check_memory(cfg)
        except ConfigError as exc:
            raise SweepError(f"{spec.label(v)}: {exc}".splitlines()[0]) from None
        configs.append(cfg)
    return configs
