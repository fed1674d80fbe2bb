"""Which config values the controls may offer, so invalid combinations cannot be chosen.

Qt-free. The controls list only values from these functions, and every edit
goes through `coerce`, which adjusts the fields that depend on the one edited
(e.g. KV heads when the head count changes) instead of producing a config the
engine would refuse.
"""

from __future__ import annotations

from typing import Any

from engine import AttentionConfig

#: Ranges the controls offer (the engine accepts more). Past explorer.frame.LOD_CELLS
#: positions a frame is drawn at a level of detail and computed with progress and Cancel;
#: eager beyond the memory budget is refused with its estimate (flash and sdpa hold no grid).
D_MODEL_MAX = 2048
HEADS_MAX = 64
SEQ_MAX = 8192
KV_LEN_MAX = 8192
BATCH_MAX = 8
SCALE_RANGE = (0.0, 2.0)
INIT_STD_RANGE = (0.001, 10.0)  # lesson 8 overflows float16 with 3.0

#: The KV-cache example of the diagnostics panel: a Llama-3-8B-sized layer stack.
LLAMA3_8B = {"d_model": 4096, "n_heads": 32, "n_kv_heads": 8, "n_layers": 32, "dtype": "bfloat16"}


def needs_even_head_dim(positional: str) -> bool:
    """RoPE rotates pairs of dimensions, so head_dim must be even."""
    return positional == "rope"


def allowed_heads(d_model: int, positional: str = "none") -> list[int]:
    """Head counts that divide d_model (and leave an even head_dim for RoPE)."""
    even = needs_even_head_dim(positional)
    return [
        h for h in range(1, min(d_model, HEADS_MAX) + 1)
        if d_model % h == 0 and not (even and (d_model // h) % 2)
    ]


def allowed_d_models(n_heads: int, positional: str = "none") -> list[int]:
    """d_model values that n_heads divides (head_dim even for RoPE), up to D_MODEL_MAX."""
    step = n_heads * (2 if needs_even_head_dim(positional) else 1)
    return list(range(step, max(D_MODEL_MAX, step) + 1, step))


def allowed_kv_heads(n_heads: int) -> list[int]:
    """KV head counts that divide n_heads, largest (MHA) first."""
    return [g for g in range(n_heads, 0, -1) if n_heads % g == 0]


def kv_label(n_heads: int, kv_heads: int) -> str:
    """'4 · MHA', '2 · GQA 2:1', '1 · MQA'."""
    if kv_heads == n_heads:
        kind = "MHA"
    elif kv_heads == 1:
        kind = "MQA"
    else:
        kind = f"GQA {n_heads // kv_heads}:1"
    return f"{kv_heads} · {kind}"


def group_map(config: AttentionConfig) -> list[tuple[int, list[int]]]:
    """[(kv_head, [query heads that read it]), ...] in KV-head order."""
    groups: dict[int, list[int]] = {g: [] for g in range(config.kv_heads)}
    for h in range(config.n_heads):
        groups[config.kv_head_of(h)].append(h)
    return list(groups.items())


def positional_refusal(config: AttentionConfig, positional: str) -> str | None:
    """Why `positional` cannot be chosen for config as it stands, or None."""
    if needs_even_head_dim(positional) and config.head_dim % 2:
        return f"RoPE needs an even head_dim; d_model/heads = {config.d_model}/{config.n_heads} = {config.head_dim}"
    return None


def kernel_refusal(config: AttentionConfig, kernel: str) -> str | None:
    """Why `kernel` cannot be chosen for config as it stands: "alibi" (ALiBi is a bias inside
    the softmax), "summary_block" (hierarchical attention is softmax's), or None."""
    if kernel == "softmax":
        return None
    if config.positional == "alibi":
        return "alibi"
    if config.summary_block is not None:
        return "summary_block"
    return None


def _nearest(values: list[int], target: int) -> int:
    return min(values, key=lambda v: (abs(v - target), v))


def coerce(config: AttentionConfig, **changes: Any) -> AttentionConfig:
    """config.replace(**changes), with dependent fields moved to the nearest valid value.

    - n_heads not dividing d_model → d_model moves to the nearest multiple;
    - n_kv_heads not dividing n_heads → the largest divisor not above it (None stays MHA);
    - n_kv_heads equal to n_heads is stored as None (MHA);
    - pad, window, global_tokens, summary_block clamp to the key length; tokens reset seq_len;
    - RoPE with an odd head_dim → the nearest head count that keeps head_dim even.
    Raises ConfigError only when a changed value itself is out of range.
    """
    d = config.to_dict()
    d.update(changes)
    if "tokens" in changes and changes["tokens"] is not None:
        d["tokens"] = list(changes["tokens"])
        d["seq_len"] = len(changes["tokens"])
    elif "seq_len" in changes and config.tokens is not None and changes["seq_len"] != len(config.tokens):
        d["tokens"] = None
    pos = d["positional"]
    heads = d["n_heads"]
    if "d_model" in changes and "n_heads" not in changes:
        ok = allowed_heads(d["d_model"], pos)
        if heads not in ok and ok:
            heads = _nearest(ok, heads)
    elif "n_heads" in changes and "d_model" not in changes:
        ok = allowed_d_models(heads, pos)
        if d["d_model"] not in ok:
            d["d_model"] = _nearest(ok, d["d_model"])
    elif "positional" in changes:
        ok = allowed_heads(d["d_model"], pos)
        if heads not in ok and ok:
            heads = _nearest(ok, heads)
    d["n_heads"] = heads
    kv = d.get("n_kv_heads")
    if kv is not None:
        kv = max(g for g in allowed_kv_heads(heads) if g <= max(1, kv)) if kv <= heads else heads
        d["n_kv_heads"] = None if kv == heads else kv
    key_len = d["kv_len"] if d["kv_len"] is not None else d["seq_len"]
    d["pad"] = min(d["pad"], key_len)
    if d["window"] is not None:
        d["window"] = max(1, min(d["window"], max(key_len, d["seq_len"])))
    d["global_tokens"] = min(d.get("global_tokens", 0), key_len)
    if d.get("summary_block") is not None:
        d["summary_block"] = max(1, min(d["summary_block"], key_len))
    return AttentionConfig.from_dict(d)
