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
import sys
from functools import lru_cache

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no address-space limit to read
    resource = None

from .config import AttentionConfig, ConfigError
from .efficient.costs import memo_bytes
from .efficient.costs import temporaries as efficient_temporaries

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


#: Elements of one (rows, Skv) block on the blocked paths (head grids, per-row diagnostics,
#: the blocked eager reference): 64 MiB per float32 plane of a block; large enough that the
#: per-operation overhead of a threaded kernel stays small against the work.
ROW_BLOCK_ELEMENTS = 1 << 24


#: Query rows a block has at least (fewer only when S is smaller): a matrix product of a few
#: rows takes another kernel than the whole grid's, with other rounding, so blocks this tall
#: keep a head's grid bit-identical to the same head of the whole grid.
MIN_BLOCK_ROWS = 64


def row_block(config: AttentionConfig) -> int:
    """Query rows per block of the blocked paths: ROW_BLOCK_ELEMENTS / Skv, at least
    MIN_BLOCK_ROWS (or S)."""
    S = config.seq_len
    return min(S, max(MIN_BLOCK_ROWS, ROW_BLOCK_ELEMENTS // max(1, config.key_len)))


def row_slices(config: AttentionConfig, multiple: int = 1) -> list[slice]:
    """The query-row blocks of the blocked paths, each :func:`row_block` rows (rounded to a
    multiple of ``multiple``, at least one); a last block shorter than MIN_BLOCK_ROWS joins
    the one before (so no block is a few rows, and every block but the last starts and ends
    on a multiple)."""
    S = config.seq_len
    step = max(multiple, row_block(config) // multiple * multiple)
    starts = list(range(0, S, step))
    if len(starts) > 1 and S - starts[-1] < MIN_BLOCK_ROWS:
        starts.pop()
    return [slice(a, b) for a, b in zip(starts, [*starts[1:], S], strict=True)]


def _weight_bytes(c: AttentionConfig) -> int:
    """W_Q, W_O (d×d) and W_K, W_V (d×kvd) in float32, their copies in a lower dtype, and
    the unscaled normals drawing one holds."""
    item, low = _ITEMSIZE[c.dtype], c.dtype != "float32"
    d, kvd = c.d_model, c.kv_heads * c.head_dim
    n_w = 2 * d * d + 2 * d * kvd
    return n_w * _F32 + (n_w * item if low else 0) + d * d * _F32


def _activation_bytes(c: AttentionConfig) -> int:
    """x (+ its drawn copy and dtype copy), the cross-attention source, positional tables,
    q, k, v (+ RoPE's float32 arithmetic, GQA's repeated k and v, a prescaled q), and the
    context, its merged copy and the output: what either path holds of size (·, S or Skv, ·)."""
    item, low = _ITEMSIZE[c.dtype], c.dtype != "float32"
    B, S, Skv, d, H = c.batch, c.seq_len, c.key_len, c.d_model, c.n_heads
    kvd = c.kv_heads * c.head_dim
    cross = c.kv_len is not None
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
    act += 3 * a * item  # context, its merged copy, the output
    if c.prescale_q:
        act += a * item
    return act


def _mask_build_bytes(c: AttentionConfig) -> int:
    """The bool planes build_mask steps through."""
    return c.seq_len * c.key_len * (3 if c.window is not None else 2)


def _slack(n: int) -> int:
    """Allocator slack (freed blocks are not always reusable at once) and the small tensors
    not counted: 15 % on top."""
    return n * 15 // 100


def _fused_parts(c: AttentionConfig) -> tuple[int, int]:
    """(activations, temporaries) of a fused run: it holds no (B, H, S, Skv) grid and no
    (S, Skv) bool mask (the mask's key ranges, O(S)), only one shared mask plane for the
    kernel with the bool rows it is made from (none for plain causal self-attention), ALiBi's
    bias one chunk of heads at a time, and the kernel's float32 accumulators."""
    from .backends.common import FUSED_WORKSPACE, head_chunks

    item = _ITEMSIZE[c.dtype]
    B, S, Skv, H = c.batch, c.seq_len, c.key_len, c.n_heads
    plane = S * Skv
    act = _activation_bytes(c)
    masked = c.causal or c.window is not None or c.pad > 0
    # what AttentionCall.plain_causal sends as is_causal (no mask tensor)
    plain_causal = (c.causal and S == Skv and c.window is None and not c.pad
                    and (c.prescale_q or c.effective_scale > 0))
    tmp = 0
    if c.positional == "alibi":
        per_head = plane * (_F32 + item)
        heads = max(ch.stop - ch.start for ch in head_chunks(H, c.group_size, per_head))
        # the chunk's bias and its dtype copy; |pos − j| (scaled in place for a one-head chunk)
        tmp += heads * per_head + (plane * _F32 if heads > 1 else 0)
        tmp += 2 * plane if masked else 0  # the mask's bool rows and their negation
    elif masked and not plain_causal:
        tmp += plane * (item + 2) + plane * _F32  # the additive plane, the bool rows, ~, the kernel's copy
    tmp += 2 * B * H * S * c.head_dim * _F32  # the kernel's float32 accumulators
    if c.device == "cuda":  # a math kernel on the GPU: chunks bounded by the workspace
        tmp += min(FUSED_WORKSPACE, 2 * B * H * plane * _F32)
    return act, tmp


def memory_estimate(config: AttentionConfig) -> dict[str, int]:
    """Bytes a run of ``config`` needs at its peak, by part (all ints):

    ``grids``: every (B, H, S, Skv) grid an eager trace holds (scores_raw, scores,
    weights) and the (S, Skv) mask; ``head``: one head's grids (what
    :meth:`AttentionTrace.head_grid` holds); ``eager``: what the materialising path needs
    (an eager run, or a fused trace's grid fields on first access): weights, activations,
    grids and temporaries; ``fused``: what a fused backend's run needs (weights,
    activations, its mask plane and kernel temporaries, no grid); ``rows``: what the
    blocked per-row diagnostics and eager reference of a fused trace add on top of it;
    ``weights``, ``activations``, ``temporaries``: the parts of this config's own run
    (eager or fused); ``total``: what :func:`engine.run` needs: ``eager`` for the eager
    backend, ``fused`` for sdpa and flash. An efficient variant (``config.efficient``: a linear
    kernel, global tokens, block summaries) runs without grids whatever the backend: its
    ``fused`` and ``total`` are what engine.efficient holds; ``grids``/``eager``, ``head`` and
    ``rows`` what reading its (implicit) attention matrix adds, as for a fused trace.
    """
    c = config
    item = _ITEMSIZE[c.dtype]
    low = c.dtype != "float32"
    B, S, Skv, H = c.batch, c.seq_len, c.key_len, c.n_heads
    weights = _weight_bytes(c)
    act = _activation_bytes(c)

    grid = B * H * S * Skv
    plane = S * Skv  # one (S, Skv) grid
    grids = 3 * grid * item + plane  # scores_raw, scores, weights; the bool mask
    bias = 0
    if c.positional == "alibi":
        bias = H * plane * (_F32 + item) + 2 * plane * _F32  # held bias, its copy, |pos − j|
    eager_tmp = grid * item + (grid * _F32 if low else 0)  # one step's new grid; softmax upcast
    # float32 copy of the weights (when not float32), p·p or log p, and the product vecdot makes
    diag_tmp = (3 if low else 2) * grid * _F32
    temporaries = bias + max(_mask_build_bytes(c), eager_tmp, diag_tmp)
    temporaries += _slack(weights + act + grids + temporaries)
    eager = weights + act + grids + temporaries

    if c.efficient:  # a way out of O(n²) (engine.efficient): no grid, no mask plane
        f_act, f_tmp = act, efficient_temporaries(c)
        memo = memo_bytes(c)  # what the formula of its grids keeps (features, summaries)
        grids += memo
        eager += memo
    else:
        f_act, f_tmp = _fused_parts(c)
    f_tmp += _slack(weights + f_act + f_tmp)
    fused = weights + f_act + f_tmp

    block = (row_block(c) + MIN_BLOCK_ROWS) * Skv  # the last block may take a short tail
    # a block's Q·Kᵀ (which becomes the scores in place) and weights, the weights' float32
    # copy, the statistics' temporaries (log p or p·p, and a product), |pos − j| and the
    # bool tests; with prescale_q a second product; the reference context, the row
    # statistics, the reference output and its difference
    rows = block * (2 * item + (_F32 if low else 0) + 3 * _F32 + 3)
    if c.prescale_q:
        rows += block * item
    rows += B * H * S * (c.head_dim * item + 16 * _F32) + 3 * B * S * c.d_model * _F32
    if c.positional == "alibi":
        rows += block * (2 * _F32 + item)  # |pos − j|, the bias and its dtype copy
    # freed blocks of this size can stay in the heap (glibc's mmap threshold grows): 40 %
    rows += rows * 40 // 100

    head = 3 * plane * item + plane + 2 * plane * _F32
    if c.efficient:  # the variant's formula: its keys' features or summaries, a plane for the spread
        rows += memo_bytes(c) + block * _F32
        head += memo_bytes(c) + plane * _F32
    is_eager = c.backend == "eager" and not c.efficient
    return {
        "grids": int(grids),
        "head": int(head),
        "eager": int(eager),
        "fused": int(fused),
        "rows": int(rows),
        "weights": int(weights),
        "activations": int(act if is_eager else f_act),
        "temporaries": int(temporaries if is_eager else f_tmp),
        "total": int(eager if is_eager else fused),
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


#: (estimate key, label, what it grows with): the memory model a refusal states
_PARTS = (("weights", "weights", "d_model²"), ("activations", "activations", "B·S·d_model"),
          ("grids", "attention grids", "B·H·S·Skv"), ("temporaries", "temporaries", "B·H·S·Skv"))
_FUSED_PARTS = (("weights", "weights", "d_model²"), ("activations", "activations", "B·S·d_model"),
                ("temporaries", "mask and kernel temporaries", "S·Skv, B·H·S·d_k"))
_ADVICE = {
    "weights": "lower d_model",
    "activations": "lower seq_len, kv_len, batch or d_model",
    "grids": "lower seq_len, kv_len, heads or batch",
    "temporaries": "lower seq_len, kv_len, heads or batch",
}


def _parts(est: dict[str, int], parts) -> str:
    """'label size (what it grows with)' for each part: the estimate and its memory model."""
    return ", ".join(f"{label} {format_bytes(est[key])} ({grows})" for key, label, grows in parts)


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
    returns the estimate otherwise. Allocates nothing. The eager backend is counted with
    its grids; a fused one (sdpa, flash) without: it holds none."""
    est = memory_estimate(config) if estimate is None else estimate
    budget = memory_budget()
    if est["total"] <= budget:
        return est
    shape = (f"B·H·S·Skv = {config.batch}·{config.n_heads}·{config.seq_len}·{config.key_len}, "
             f"d_model {config.d_model}")
    if config.backend == "eager" and not config.efficient:
        top = max((key for key, _l, _g in _PARTS), key=lambda k: est[k])
        raise ConfigError(
            f"this config needs about {format_bytes(est['total'])}: {_parts(est, _PARTS)} at {shape}; over the "
            f"{format_bytes(budget)} memory budget: {_ADVICE[top]}"
            + ("; a fused backend (sdpa, flash) holds no grid" if top == "grids" else "")
        )
    top = max((key for key, _l, _g in _FUSED_PARTS), key=lambda k: est[k])
    what = f"{config.backend} run" if not config.efficient else "efficient run (" + ", ".join(
        p for p in (config.kernel if config.kernel != "softmax" else "",
                    "global tokens" if config.global_tokens else "",
                    "block summaries" if config.summary_block else "") if p) + ")"
    raise ConfigError(
        f"this {what} needs about {format_bytes(est['total'])}, no attention grid: "
        f"{_parts(est, _FUSED_PARTS)} at {shape}; over the {format_bytes(budget)} memory budget: {_ADVICE[top]}"
    )


def check_lazy_memory(config: AttentionConfig, part: str, estimate: dict[str, int] | None = None,
                      budget: int | None = None) -> None:
    """ConfigError stating the estimate when what a fused trace computes on first access does
    not fit the budget. ``part``: "grids" (every (B, H, S, Skv) grid at once, the eager
    materialisation), "head" (one head's grids) or "rows" (the blocked per-row diagnostics
    and eager reference). ``budget``: the one its run was checked against (the trace keeps
    it: under an address-space limit, the budget measured later would count the trace's
    own memory twice); memory_budget() when None. Allocates nothing."""
    est = memory_estimate(config) if estimate is None else estimate
    budget = memory_budget() if budget is None else budget
    if part == "grids":
        need = est["eager"]
        if need > budget:
            raise ConfigError(
                f"the attention grids of this trace (scores_raw, scores, weights: "
                f"{format_bytes(est['grids'])} for batch·heads·S·Skv = {config.batch}·{config.n_heads}·"
                f"{config.seq_len}·{config.key_len}) need about {format_bytes(need)} with the run, over the "
                f"{format_bytes(budget)} memory budget: use head_grid(name, head) for one head "
                f"({format_bytes(est['head'])}) or lower seq_len, kv_len, heads or batch")
        return
    extra, grows, advice = {
        "head": ("one head's grids", "S·Skv", "lower seq_len or kv_len"),
        "rows": ("the blocked per-row diagnostics", "blocks of rows × Skv, B·H·S row statistics",
                 "lower seq_len, kv_len, batch or heads"),
    }[part]
    need = est["fused"] + est[part]
    if need > budget:
        raise ConfigError(
            f"{extra} of this trace ({grows}) need about {format_bytes(est[part])} on top of the run's "
            f"{format_bytes(est['fused'])} ({format_bytes(need)} in all), over the "
            f"{format_bytes(budget)} memory budget: {advice}")


_LIBC = None


def release_free_memory() -> bool:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim(0)``). After a
    large run the allocator keeps what was freed (in each thread's arena), so a long session's
    resident memory would only grow; a worker calls this when it goes idle. Returns False where
    there is no glibc (nothing to do there)."""
    global _LIBC
    if not sys.platform.startswith("linux"):
        return False
    try:
        if _LIBC is None:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            _LIBC = ctypes.CDLL(name) if name else False
        if not _LIBC:
            return False
        _LIBC.malloc_trim(0)
        return True
    except (OSError, AttributeError, TypeError):
        _LIBC = False
        return False

