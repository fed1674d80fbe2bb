"""What the two step-through panels animate, computed once, without Qt.

`tiling_view(frame, head, block_q, block_k)`: the selected head through
`engine.tiled_attention`, every tile's running max m, running sum ℓ, rescale
factor e^(m_old − m_new) and partial output O/ℓ, and the final match with the
frame's exact (eager) context. `decode_view(config, head)`: the sequence
through `engine.decode_steps`, the cache filling, each new row's weights, the
cost with and without the cache, and the final match with full causal
attention. Both run in a worker thread (explorer.work.steps); an animation
frame then only indexes these arrays.

A request the step-through cannot show (blocks giving too many tiles, a
sequence too long to step through, cross-attention for decoding) raises
`StepThroughError` with the message the panel shows; a request it can show
but should explain (a block larger than S, rows that see no key) carries
`notes`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

import engine
from engine import AttentionConfig

from .frame import LOD_CELLS

#: block sizes offered; "auto" picks the one giving about AUTO_BLOCKS blocks per axis
BLOCK_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
AUTO_BLOCKS = 4
#: at most this many tiles are stepped through (a tile is one animation frame)
MAX_TILES = 4096
#: the decode step-through keeps every step's weights row: (H, S, S) floats
MAX_DECODE_TOKENS = 512
#: steps timed with and without the cache: every step up to this many, else this many spread out
TIMED_STEPS = 64
#: seconds of timing at most (a float16 recompute on a CPU is slow): later steps go untimed
TIMING_BUDGET_S = 1.5
#: agreement within this many ε at the output's scale is rounding (as the backends card says)
ROUNDING_ULPS = 8
#: bits of precision: ε = 2^(1 − bits)
SIGNIFICAND_BITS = {"float32": 24, "float16": 11, "bfloat16": 8}


class StepThroughError(ValueError):
    """A request the step-through cannot show; str() is the panel's message."""


def auto_block(n: int) -> int:
    """The power of two giving about AUTO_BLOCKS blocks over n positions (at least 1)."""
    target = max(1, n // AUTO_BLOCKS)
    return 1 << (target.bit_length() - 1)


def eps_of(dtype: str) -> float:
    return float(torch.finfo(getattr(torch, dtype)).eps)


def ulps(diff: float, scale: float, dtype: str) -> float:
    """max |Δ| in units of ε·scale (NaN without finite numbers), like the backends card."""
    if not (math.isfinite(diff) and math.isfinite(scale)):
        return float("nan")
    eps = eps_of(dtype)
    return diff / (eps * scale) if scale > 0 else (0.0 if diff == 0 else float("inf"))


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a − b| over cells where both are finite; NaN where none are (NaN rows match NaN)."""
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.abs(a[ok] - b[ok]).max()) if ok.any() else float("nan")


def finite_scale(a: np.ndarray) -> float:
    f = a[np.isfinite(a)]
    return float(np.abs(f).max()) if f.size else float("nan")


# ---- tiles ---------------------------------------------------------------------------------


@dataclass
class TilingView:
    """One head through the tiled algorithm; arrays float32, step-major.

    scores (S, Skv): the softmax input, NaN where masked · n_q, n_k: blocks per axis ·
    per step i: tile (qi[i], ki[i]), rows q0[i]:q1[i], keys k0[i]:k1[i], skipped[i] ·
    m, m_old, l, rescale (steps, block_q): the rows of the tile's query block, NaN past
    the block's end · partial (steps, block_q, Dh): O/ℓ after the step · step_of
    (n_q, n_k): the step that computes each tile · output, eager (S, Dh).
    """

    config: AttentionConfig
    head: int
    block_q: int
    block_k: int
    scores: np.ndarray
    n_q: int
    n_k: int
    qi: np.ndarray
    ki: np.ndarray
    q0: np.ndarray
    q1: np.ndarray
    k0: np.ndarray
    k1: np.ndarray
    skipped: np.ndarray
    m: np.ndarray
    m_old: np.ndarray
    l: np.ndarray  # noqa: E741 (the paper's ℓ)
    rescale: np.ndarray
    partial: np.ndarray
    step_of: np.ndarray
    output: np.ndarray
    eager: np.ndarray
    max_abs_diff: float
    ulps: float
    output_scale: float
    empty_rows: int  # query rows that see no key at all
    notes: list[tuple[str, dict]] = field(default_factory=list)  # (English message, its values)

    @property
    def n_steps(self) -> int:
        return int(self.qi.shape[0])

    @property
    def n_skipped(self) -> int:
        return int(self.skipped.sum())

    @property
    def matches(self) -> bool:
        return math.isfinite(self.ulps) and self.ulps <= ROUNDING_ULPS


def resolve_blocks(config: AttentionConfig, block_q: int | None, block_k: int | None
                   ) -> tuple[int, int, list[tuple[str, dict]]]:
    """(block_q, block_k, notes): None → auto; a block larger than its axis is cut to it
    (one block then holds every row or key, which the notes say)."""
    S, Skv = config.seq_len, config.key_len
    notes: list[tuple[str, dict]] = []
    bq = auto_block(S) if block_q is None else int(block_q)
    bk = auto_block(Skv) if block_k is None else int(block_k)
    if bq < 1 or bk < 1:
        raise StepThroughError(f"block sizes must be at least 1, got {bq} × {bk}")
    if bq > S:
        notes.append(("query block {b} > S = {n}: one block holds every query", {"b": bq, "n": S}))
        bq = S
    if bk > Skv:
        notes.append(("key block {b} > Skv = {n}: one block holds every key", {"b": bk, "n": Skv}))
        bk = Skv
    tiles = math.ceil(S / bq) * math.ceil(Skv / bk)
    if tiles > MAX_TILES:
        raise StepThroughError(
            f"{math.ceil(S / bq)} × {math.ceil(Skv / bk)} = {tiles} tiles is too many to step through "
            f"(at most {MAX_TILES}): choose larger blocks")
    return bq, bk, notes


def tiling_view(frame, head: int, block_q: int | None = None, block_k: int | None = None) -> TilingView:
    """Head `head` of `frame` (batch row 0) through engine.tiled_attention with every step
    recorded; compared with the frame's eager context of that head (weights · V)."""
    cfg = frame.config
    h = min(max(head, 0), cfg.n_heads - 1)
    bq, bk, notes = resolve_blocks(cfg, block_q, block_k)
    S, Skv = cfg.seq_len, cfg.key_len
    if frame.lod is not None:  # a long frame holds sample rows of its scores, its mask as key ranges
        raise StepThroughError(f"S = {S}, Skv = {Skv}: the tiling step-through shows every score, "
                               f"so at most {LOD_CELLS} positions")
    if S == 1:
        notes.append(("one query (S = 1): a single row of tiles", {}))
    q = torch.from_numpy(frame.q[h])[None, None]  # (1, 1, S, Dh), float32 of the config dtype's values
    kvh = cfg.kv_head_of(h)
    k = torch.from_numpy(frame.k[kvh])[None, None]  # (1, 1, Skv, Dh)
    v = torch.from_numpy(frame.v[kvh])[None, None]
    mask = torch.from_numpy(frame.mask)
    bias = None
    if cfg.positional == "alibi":
        from engine import positional as pe

        bias = pe.alibi_bias(cfg.n_heads, S, Skv)[h]  # (S, Skv)
    out, steps = engine.tiled_attention(q, k, v, scale=cfg.effective_scale, mask=mask, block_q=bq,
                                        block_k=bk, bias=bias, partial=True)
    n = len(steps)
    n_q, n_k = math.ceil(S / bq), math.ceil(Skv / bk)
    Dh = cfg.head_dim
    m = np.full((n, bq), np.nan, np.float32)
    m_old = np.full((n, bq), np.nan, np.float32)
    l_ = np.full((n, bq), np.nan, np.float32)
    rescale = np.full((n, bq), np.nan, np.float32)
    partial = np.full((n, bq, Dh), np.nan, np.float32)
    cols = {name: np.zeros(n, np.int32) for name in ("qi", "ki", "q0", "q1", "k0", "k1")}
    skipped = np.zeros(n, bool)
    step_of = np.zeros((n_q, n_k), np.int32)
    prev: dict[int, np.ndarray] = {}
    for i, st in enumerate(steps):
        r = st.q_range[1] - st.q_range[0]
        for name, value in (("qi", st.q_block), ("ki", st.k_block), ("q0", st.q_range[0]), ("q1", st.q_range[1]),
                            ("k0", st.k_range[0]), ("k1", st.k_range[1])):
            cols[name][i] = value
        skipped[i] = st.skipped
        step_of[st.q_block, st.k_block] = i
        mi = st.row_max[0, 0].numpy()
        m[i, :r] = mi
        m_old[i, :r] = prev.get(st.q_block, np.full(r, -np.inf, np.float32))
        prev[st.q_block] = mi
        l_[i, :r] = st.row_sum[0, 0].numpy()
        rescale[i, :r] = st.rescale[0, 0].numpy()
        partial[i, :r] = st.partial[0, 0].numpy()
    output = out[0, 0].numpy()
    eager = frame.context[h]
    diff = max_abs_diff(output, eager)
    scale = finite_scale(eager)
    empty = int((~frame.mask).all(-1).sum())
    if empty:
        if cfg.mask_value == "-inf":
            notes.append(("{n} rows see no key: m stays −∞, ℓ = 0 and O/ℓ is NaN, as eager gives with −inf",
                          {"n": empty}))
        else:
            notes.append(("{n} rows see no key: the tiles give NaN there; eager with {value} gives a uniform "
                          "row (left out of max |Δ|)", {"n": empty, "value": cfg.mask_value}))
    scores = np.where(frame.mask, frame.scores[h], np.float32(np.nan)).astype(np.float32)
    return TilingView(cfg, h, bq, bk, scores, n_q, n_k, skipped=skipped, m=m, m_old=m_old, l=l_,
                      rescale=rescale, partial=partial, step_of=step_of, output=output, eager=eager,
                      max_abs_diff=diff, ulps=ulps(diff, scale, cfg.dtype), output_scale=scale,
                      empty_rows=empty, notes=notes, **cols)


def tile_states(view: TilingView, step: int) -> np.ndarray:
    """(n_q, n_k) int8 state of every tile when step `step` is being computed:
    0 pending, 1 done, 2 skipped (masked: passed over, or being passed over now), 3 current."""
    done = view.step_of < step
    skipped = view.skipped[view.step_of]
    state = np.where(done, np.where(skipped, 2, 1), 0).astype(np.int8)
    state[view.qi[step], view.ki[step]] = 2 if view.skipped[step] else 3
    return state


# ---- decoding ------------------------------------------------------------------------------


@dataclass
class DecodeView:
    """The sequence decoded token by token (batch row 0); float32 arrays.

    k_norm, v_norm (Hkv, S): ‖k‖, ‖v‖ of each KV head's cached row (what the cache strips
    colour) · weights (S, H, S): step t's new row per query head, NaN past t · offset (S,):
    the cache offset after step t (t + 1) · flops_cached, flops_recompute (S,) ·
    ms_cached, ms_recompute (S,): measured, NaN where not timed · output (S, d_model) ·
    full (S, d_model): run(causal=True).output.
    """

    config: AttentionConfig
    head: int
    k_norm: np.ndarray
    v_norm: np.ndarray
    weights: np.ndarray
    offset: np.ndarray
    flops_cached: np.ndarray
    flops_recompute: np.ndarray
    ms_cached: np.ndarray
    ms_recompute: np.ndarray
    output: np.ndarray
    full: np.ndarray
    max_abs_diff: float
    ulps: float
    output_scale: float
    cache_bytes: int
    notes: list[tuple[str, dict]] = field(default_factory=list)

    @property
    def n_steps(self) -> int:
        return int(self.offset.shape[0])

    @property
    def matches(self) -> bool:
        return math.isfinite(self.ulps) and self.ulps <= ROUNDING_ULPS

    def groups(self) -> list[list[int]]:
        """The query heads reading each KV head: [[0, 1, 2, 3], [4, …], …]."""
        g = self.config.group_size
        return [list(range(j * g, (j + 1) * g)) for j in range(self.config.kv_heads)]


def timed_steps(n: int) -> set[int]:
    """The steps whose time is measured: all of them up to TIMED_STEPS, else TIMED_STEPS spread
    evenly (the first and the last among them)."""
    if n <= TIMED_STEPS:
        return set(range(n))
    return {round(i * (n - 1) / (TIMED_STEPS - 1)) for i in range(TIMED_STEPS)}


def decode_view(config: AttentionConfig, head: int = 0, *, measure: bool = True) -> DecodeView:
    """`config` decoded through engine.decode_steps (the KV cache), compared with
    engine.run(config with causal=True).output."""
    if config.kv_len is not None:
        raise StepThroughError("decoding reads its own keys: set the key length to the query length "
                               "(self-attention) to step through the KV cache")
    S = config.seq_len
    if S > MAX_DECODE_TOKENS:
        raise StepThroughError(f"S = {S} tokens is too long to step through (at most {MAX_DECODE_TOKENS})")
    h = min(max(head, 0), config.n_heads - 1)
    timed = timed_steps(S) if measure else set()
    started = time.perf_counter()

    def timing(t: int) -> bool:
        return t in timed and time.perf_counter() - started < TIMING_BUDGET_S

    # one run each where a run is slow (a float16 matmul on a CPU), the median of three otherwise
    repeats = 3 if config.dtype == "float32" else 1
    steps = list(engine.decode_steps(config, measure=timing, repeats=repeats))
    H = config.n_heads
    k_norm = np.stack([s.k[0].float().norm(dim=-1).numpy() for s in steps], axis=1)  # (Hkv, S)
    v_norm = np.stack([s.v[0].float().norm(dim=-1).numpy() for s in steps], axis=1)
    weights = np.full((S, H, S), np.nan, np.float32)
    for s in steps:
        weights[s.t, :, : s.offset] = s.weights[0].float().numpy()
    output = torch.stack([s.output[0] for s in steps]).float().numpy()  # (S, d)
    full = engine.run(config.replace(causal=True)).output[0].float().numpy()
    diff = max_abs_diff(output, full)
    scale = finite_scale(full)
    ms = [(s.ms_cached, s.ms_recompute) for s in steps]
    notes: list[tuple[str, dict]] = []
    n_timed = sum(1 for a, _b in ms if a is not None)
    if measure and n_timed < len(timed):
        notes.append(("timed {n} of {total} steps (the rest would take over {s} s)",
                      {"n": n_timed, "total": len(timed), "s": TIMING_BUDGET_S}))
    if S == 1:
        notes.append(("one token (S = 1): the cache holds one key, with or without it the same work", {}))
    if not config.causal:
        notes.append(("decoding is causal: each token sees the cache so far, so this equals the causal "
                      "version of this config", {}))
    return DecodeView(
        config, h, k_norm.astype(np.float32), v_norm.astype(np.float32), weights,
        offset=np.array([s.offset for s in steps], np.int32),
        flops_cached=np.array([s.flops_cached for s in steps], np.float64),
        flops_recompute=np.array([s.flops_recompute for s in steps], np.float64),
        ms_cached=np.array([np.nan if a is None else a for a, _b in ms], np.float64),
        ms_recompute=np.array([np.nan if b is None else b for _a, b in ms], np.float64),
        output=output, full=full, max_abs_diff=diff, ulps=ulps(diff, scale, config.dtype), output_scale=scale,
        cache_bytes=engine.kv_cache_bytes(config), notes=notes)
