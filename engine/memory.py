"""How much memory a run needs, and how much it may take: checked before anything is allocated.

:func:`memory_estimate` counts everything :func:`engine.run` holds at its peak:
the projection weights (float32 masters plus their copies in the config
dtype), the (B, S, d_model) activations, the (B, H, S, Skv) grids, and the
temporaries (dtype conversions, the ALiBi bias, the mask a fused backend is
handed, the float32 copies the diagnostics take). :func:`memory_budget` is what
a run may take: ``ATTN_EXPLORER_MEMORY_BUDGET`` (bytes) when set, else
:data:`MEMORY_FRACTION` of the machine's memory (physical RAM, or a smaller
cgroup limit), at most :data:`DEFAULT_MEMORY_BUDGET`, and never more than
what an address-space limit (``ulimit -v``) leaves.
"""

from __future__ import annotations

import os
from functools import lru_cache

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no address-space limit to read
    resource = None

from .config import AttentionConfig, ConfigError

#: The most a run may take by default, in bytes (a fraction of the machine's memory when
#: that is less). Override: ATTN_EXPLORER_MEMORY_BUDGET.
DEFAULT_MEMORY_BUDGET = 4 * 1024**3
#: Share of the machine's memory a run may take by default.
MEMORY_FRACTION = 0.5
#: Share of the address space left under RLIMIT_AS (``ulimit -v``) a run may take.
ADDRESS_SPACE_FRACTION = 0.75
BUDGET_ENV = "ATTN_EXPLORER_MEMORY_BUDGET"

_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
_F32 = 4


def format_bytes(n: float) -> str:
    """``1536`` → ``"1.5 KiB"``; GiB from 1 GiB up, so small estimates never read "0.0 GiB"."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def memory_estimate(config: AttentionConfig) -> dict[str, int]:
    """Bytes a run of ``config`` needs at its peak, by part (all ints):

    ``grids``: every (B, H, S, Skv) grid an eager trace holds (scores_raw, scores,
    weights) and the (S, Skv) mask; ``head``: one head's grids (what
    ``head_grid``-style views need); ``weights``: W_Q, W_K, W_V, W_O in float32 plus
    their copies in the config dtype; ``activations``: x, q, k, v, context and
    output (with the copies the dtype, RoPE and the backend make); ``temporaries``:
    the transient peak on top (dtype conversions, ALiBi, the fused backend's mask,
    the diagnostics' float32 copies); ``fused``: what a fused backend's own run
    holds (weights, activations and its mask, no grid); ``total``: what
    :func:`engine.run` needs, the sum of weights, activations, grids and temporaries.
    """
    c = config
    item = _ITEMSIZE[c.dtype]
    low = c.dtype != "float32"  # a second copy in the config dtype exists
    B, S, Skv, d, H = c.batch, c.seq_len, c.key_len, c.d_model, c.n_heads
    kvd = c.kv_heads * c.head_dim
    cross = c.kv_len is not None

    # W_Q, W_O (d×d) and W_K, W_V (d×kvd); drawing one also holds its unscaled normals
    n_w = 2 * d * d + 2 * d * kvd
    weights = n_w * _F32 + (n_w * item if low else 0) + d * d * _F32

    a = B * S * d  # one (B, S, d_model) tensor, in elements
    akv = B * Skv * kvd  # k or v
    act = 2 * a * _F32 + (a * item if low else 0)  # x0 (+ the drawn copy), x in the dtype
    if cross:
        src = B * Skv * d
        act += src * _F32 + (src * item if low else 0)
    if c.positional in ("sinusoidal", "learned"):
        act += 3 * (S + (Skv if cross else 0)) * d * _F32  # the tables and their arithmetic
    act += a * item + 2 * akv * item  # q, k, v
    if c.positional == "rope":
        act += 6 * max(a, akv) * _F32  # float32 copy, rotated half, two products, the sum
    if c.group_size > 1:
        act += 2 * B * H * Skv * c.head_dim * item  # k, v repeated per query head
    act += 3 * a * item  # context, its merged copy, the eager output
    if c.backend != "eager":
        act += 3 * a * item  # the backend's context, merged copy and output
    if c.prescale_q:
        act += a * item

    grid = B * H * S * Skv
    plane = S * Skv  # one (S, Skv) grid
    grids = 3 * grid * item + plane  # scores_raw, scores, weights; the bool mask
    masked = c.causal or c.window is not None or c.pad > 0
    mask_build = plane * (16 if c.window is not None else 2)  # int64 distances, bool steps
    bias = 0
    if c.positional == "alibi":
        bias = H * plane * (_F32 + item) + plane * (2 * 8 + _F32)  # held bias, its copy, distances
    eager_tmp = grid * item + (grid * _F32 if low else 0)  # one step's new grid; softmax upcast
    # float32 copy of the weights (when not float32), p·p or log p, and the product vecdot makes
    diag_tmp = (3 if low else 2) * grid * _F32
    fused_tmp = 0
    if c.backend != "eager":
        if masked or c.positional == "alibi":
            fused_tmp += H * plane * (2 * _F32 + item)  # the additive (1, H, S, Skv) mask
        if c.backend == "sdpa":
            fused_tmp += 2 * grid * max(item, _F32)  # the math kernel materialises its scores
    temporaries = bias + max(mask_build, eager_tmp, diag_tmp, fused_tmp)
    # allocator slack (freed blocks are not always reusable at once) and the small tensors
    # not counted above: 15 % of everything
    temporaries += (weights + act + grids + temporaries) * 15 // 100

    head = 3 * plane * item + plane + 2 * plane * _F32
    fused = weights + act + fused_tmp
    return {
        "grids": int(grids),
        "head": int(head),
        "fused": int(fused),
        "weights": int(weights),
        "activations": int(act),
        "temporaries": int(temporaries),
        "total": int(weights + act + grids + temporaries),
    }


def decode_estimate(config: AttentionConfig) -> int:
    """Bytes :func:`engine.decode` needs: the weights, the input, the KV cache, the outputs,
    the (S, S) causal mask and, with ALiBi, the (H, S, S) bias."""
    c = config
    item = _ITEMSIZE[c.dtype]
    est = memory_estimate(c)
    S, d = c.seq_len, c.d_model
    a = c.batch * S * d
    cache = 2 * c.batch * c.kv_heads * S * c.head_dim * item
    need = est["weights"] + 3 * a * _F32 + cache + 2 * a * item + 2 * S * S
    if c.positional == "alibi":
        need += c.n_heads * S * S * _F32 + S * S * (2 * 8 + _F32)
    return int(need * 1.1)


@lru_cache(maxsize=1)
def machine_memory() -> int | None:
    """Bytes of memory this process's machine has: physical RAM, or a smaller cgroup
    limit (a container); None when unknown."""
    sizes = []
    try:
        sizes.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        try:
            with open("/proc/meminfo", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("MemTotal:"):
                        sizes.append(int(line.split()[1]) * 1024)
                        break
        except (OSError, ValueError, IndexError):
            pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as fh:
                text = fh.read(64).strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:
            sizes.append(int(text))
    sizes = [s for s in sizes if s > 0]
    return min(sizes) if sizes else None


def address_space_left() -> int | None:
    """Bytes of address space left under RLIMIT_AS (``ulimit -v``); None when unlimited."""
    if resource is None:  # pragma: no cover
        return None
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError):  # pragma: no cover
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = 0
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - used)


def memory_budget() -> int:
    """Bytes one run may take: ATTN_EXPLORER_MEMORY_BUDGET when set, else
    MEMORY_FRACTION of :func:`machine_memory` capped at DEFAULT_MEMORY_BUDGET, and at
    most ADDRESS_SPACE_FRACTION of what an address-space limit leaves."""
    env = os.environ.get(BUDGET_ENV, "").strip()
    if env:
        try:
            value = float(env)
        except ValueError:
            value = float("nan")
        if not value >= 0 or value == float("inf"):
            raise ConfigError(f"{BUDGET_ENV} must be a number of bytes, got {env[:40]!r}")
        return int(value)
    budget = DEFAULT_MEMORY_BUDGET
    machine = machine_memory()
    if machine is not None:
        budget = min(budget, int(MEMORY_FRACTION * machine))
    left = address_space_left()
    if left is not None:
        budget = min(budget, int(ADDRESS_SPACE_FRACTION * left))
    return budget


_PARTS = (("weights", "weights"), ("activations", "activations"), ("grids", "attention grids"),
          ("temporaries", "temporaries"))
_ADVICE = {
    "weights": "lower d_model",
    "activations": "lower seq_len, kv_len, batch or d_model",
    "grids": "lower seq_len, kv_len, heads or batch",
    "temporaries": "lower seq_len, kv_len, heads or batch",
}


def check_decode_memory(config: AttentionConfig) -> int:
    """ConfigError stating the estimate when :func:`engine.decode` of ``config`` does not
    fit the budget; returns the estimate otherwise."""
    need, budget = decode_estimate(config), memory_budget()
    if need > budget:
        raise ConfigError(
            f"decoding this config needs about {format_bytes(need)} (KV cache, weights, the "
            f"causal mask; S = {config.seq_len}, d_model = {config.d_model}), over the "
            f"{format_bytes(budget)} memory budget: lower seq_len, d_model or batch")
    return need


def check_memory(config: AttentionConfig, estimate: dict[str, int] | None = None) -> dict[str, int]:
    """ConfigError stating the estimate when a run of ``config`` does not fit the budget;
    returns the estimate otherwise. Allocates nothing."""
    est = memory_estimate(config) if estimate is None else estimate
    budget = memory_budget()
    if est["total"] <= budget:
        return est
    parts = ", ".join(f"{label} {format_bytes(est[key])}" for key, label in _PARTS)
    top = max((key for key, _ in _PARTS), key=lambda k: est[k])
    raise ConfigError(
        f"this config needs about {format_bytes(est['total'])} ({parts}; "
        f"batch·heads·S·Skv = {config.batch}·{config.n_heads}·{config.seq_len}·{config.key_len}, "
        f"d_model = {config.d_model}), over the {format_bytes(budget)} memory budget: "
        f"{_ADVICE[top]}"
    )
