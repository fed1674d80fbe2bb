"""What the panels draw, derived from one engine trace, without Qt.

`build_frame(config)` runs in the worker thread: it calls `engine.run` and turns
the trace of batch row 0 into float32 numpy arrays plus the per-head numbers,
so the UI thread only copies arrays into plot items. Nothing here computes
attention; it reshapes and summarises what the engine computed.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import torch

import engine
from engine import AttentionConfig, AttentionTrace
from engine.masks import KeyRanges, visible_tiles
from engine.pacing import in_stages
from engine.rows import finite_abs_max


def _np(t: torch.Tensor) -> np.ndarray:
    """float32 numpy view/copy of a CPU tensor (bfloat16 has no numpy dtype)."""
    if t.dtype != torch.float32:
        t = t.float()
    return t.detach().numpy()


@dataclass
class Frame:
    """One computed config, ready to draw. Arrays are batch row 0, float32.

    x (S, d) · q, context (H, S, Dh) · k, v (Hkv, Skv, Dh) · w_q (d, H·Dh) · w_k, w_v (d, Hkv·Dh)
    scores_raw, scores, weights (H, S, Skv) · mask (S, Skv) bool
    jac_norm, entropy (H, S) · per-head metrics (H,)

    ``mask`` of a long frame is an engine.masks.KeyRanges (numpy): each row's key range,
    O(S), indexed like the (S, Skv) grid (``mask[i]``, ``mask[i, j]``, ``mask[r0:r1, c0:c1]``,
    ``mask.any(-1)``, ``mask.all()``), so the frame's own arrays stay O(H·S) (plus its
    LOD_CELLS² maps) and no S·Skv grid is built (256 MiB at S = 16384).

    A long sequence (S or Skv > LOD_CELLS) is drawn at a level of detail: ``lod`` is then the
    (rows, cols) tile each drawn cell stands for, ``weights`` / ``weights_shown`` are
    (H, ⌈S/rows⌉, ⌈Skv/cols⌉) block maxima, and ``scores_raw`` / ``scores`` hold the exact
    rows ``sample_rows`` (H, n, Skv) the score histograms read. Every other field is exact,
    and `cell` / `row` give any exact value (computed on demand for a long frame). A long
    linear-kernel frame (``stat_rows`` set) draws each tile's exact mean instead of its max
    (``lod_reduce``) and has ``entropy`` / ``jac_norm`` on the rows ``stat_rows`` only (NaN
    elsewhere; ``valid_rows`` then marks the valid sampled rows): O(S) a head, not O(S·Skv).
    """

    request_id: int
    config: AttentionConfig
    trace: AttentionTrace
    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    context: np.ndarray  # (H, S, Dh) weights · V
    memory: np.ndarray | None  # (Skv, d) cross-attention's key/value source; None for self-attention
    scores_raw: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    weights_shown: np.ndarray  # weights with masked zero cells as NaN (drawn hatched)
    mask: np.ndarray | KeyRanges  # (S, Skv) bool; a long frame: its rows' key ranges, indexed alike
    jac_norm: np.ndarray
    entropy: np.ndarray
    valid_rows: np.ndarray  # (H, S) rows without NaN
    head_rows: np.ndarray  # (H,) int: rows the per-head metrics average (NaN rows left out)
    head_entropy: np.ndarray  # (H,) nats; NaN for a head whose every row is NaN (as sink_mass, mean_distance)
    sink_mass: np.ndarray
    mean_distance: np.ndarray
    weight_max: float
    future_share: float  # mean share of a row's weight on keys after the query (0 when causal)
    identical_pairs: int  # pairs of queries with identical weight rows in every head
    output_scale: float  # max |output| over its finite entries (NaN when none): what a backend Δ is relative to
    overflow: Any  # engine.diagnostics.OverflowReport
    stage_costs: list[dict]
    query_labels: list[str]
    key_labels: list[str]
    sweep_counts: tuple[tuple[int, int], ...]  # (keys seen, rows) the √d_k sweep's curves are for
    compute_ms: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    backends: dict[str, dict] | None = None  # filled later by measure_backends
    lod: tuple[int, int] | None = None  # (rows, cols) per drawn cell of a long frame; None: every cell
    thumbs: np.ndarray | None = None  # (H, ≤THUMB_CELLS, ≤THUMB_CELLS) a long frame's thumbnails (block max)
    thumb_lod: tuple[int, int] | None = None  # (rows, cols) of weights_shown per thumbnail cell
    sample_rows: np.ndarray | None = None  # (n,) the query rows of scores_raw / scores in a long frame
    #: (H,) "max" or "mean": what each head's drawn cell of a long frame is, of its tile (a linear
    #: kernel's long frame: the exact tile mean, from the factorised weights); None: every cell
    lod_reduce: tuple[str, ...] | None = None
    #: (n,) the only query rows whose entropy and jac_norm a long linear-kernel frame computed
    #: (engine AttentionTrace.stat_sample; NaN on the others, left out of valid_rows); None: all
    stat_rows: np.ndarray | None = None
    _rows_cache: dict = field(default_factory=dict, repr=False)  # (name, head, block start) → (r, Skv)

    @property
    def backend_impl(self) -> str:
        return self.trace.backend_impl

    @property
    def score_mask(self) -> np.ndarray:
        """The mask of the rows ``scores`` holds: (S, Skv), or (n, Skv) for a long frame."""
        return self.mask if self.sample_rows is None else self.mask[self.sample_rows]

    def row(self, name: str, head: int, i: int) -> np.ndarray:
        """(Skv,) float32 exact row i of head ``head``'s ``scores_raw``, ``scores`` or ``weights``.

        A long frame computes the block of rows holding it (the same blocks, so the same
        numbers, as its passes) and keeps the last few."""
        if self.lod is None:
            return getattr(self, name)[head, i]
        start = i // ROW_BLOCK * ROW_BLOCK
        key = (name, head, start)
        block = self._rows_cache.get(key)
        if block is None:
            rows = slice(start, min(start + ROW_BLOCK, self.config.seq_len))
            block = _np(self.trace.head_rows(name, head, rows))
            if len(self._rows_cache) >= 8:
                self._rows_cache.pop(next(iter(self._rows_cache)))
            self._rows_cache[key] = block
        return block[i - start]

    def cell(self, name: str, head: int, i: int, j: int) -> float:
        """The exact value of one cell (query i, key j) of head ``head``'s grid ``name``."""
        return float(self.row(name, head, i)[j])


#: a token's label (axes, titles, readouts) is at most this many characters: a session may
#: name tokens of thousands of characters (the session fuzz: 5,000), and every label is
#: measured, laid out and elided again at each draw (cut once here, where labels are made)
LABEL_CHARS = 32


def token_label(token: str) -> str:
    """`token` as a label shows it: at most LABEL_CHARS characters ("…" ends a cut one)."""
    token = str(token)
    return token if len(token) <= LABEL_CHARS else token[:LABEL_CHARS - 1] + "…"


def token_labels(config: AttentionConfig) -> tuple[list[str], list[str]]:
    """Axis labels for queries and keys: the tokens when set (cut to LABEL_CHARS), else
    positions.

    Cross-attention keys come from a separate memory, labelled m0, m1, ...
    """
    S, Skv = config.seq_len, config.key_len
    if config.tokens is not None:
        q = [token_label(t) for t in config.tokens]
    else:
        q = [str(i) for i in range(S)]
    if config.kv_len is None:
        k = list(q)
    else:
        k = [f"m{j}" for j in range(Skv)]
    return q, k


@lru_cache(maxsize=8)
def _future_keys(S: int, Skv: int, q_offset: int, dtype: str) -> np.ndarray:
    """(S, Skv) 1 where key j lies after query i's position i + q_offset, else 0; read-only, shared."""
    future = (np.arange(Skv)[None, :] > (np.arange(S) + q_offset)[:, None]).astype(dtype)
    future.flags.writeable = False
    return future


def future_share(weights: np.ndarray, q_offset: int) -> float:
    """Mean share of a row's weight on keys after the query's position (query i at i + q_offset):
    0 under a causal mask. weights (H, S, Skv); NaN rows left out (NaN when all are)."""
    _H, S, Skv = weights.shape
    share = np.einsum("hsk,sk->hs", weights, _future_keys(S, Skv, q_offset, weights.dtype.str))  # (H, S); a NaN row stays NaN
    if share.size and not np.isnan(share).any():
        return float(share.mean())
    ok = ~np.isnan(share)
    return float(share[ok].mean()) if ok.any() else math.nan


@lru_cache(maxsize=8)
def _projection(H: int, Skv: int, dtype: str) -> np.ndarray:
    """(H, Skv) fixed random directions (identical_row_pairs' buckets); read-only, shared."""
    v = np.random.default_rng(0).standard_normal((H, Skv)).astype(dtype)
    v.flags.writeable = False
    return v


def identical_row_pairs(weights: np.ndarray, tol: float = 1e-6) -> int:
    """Pairs of queries whose weight rows are identical (within `tol`) in every head: what
    attention without positions gives two copies of a token. weights (H, S, Skv); NaN rows
    match nothing. Rows are bucketed by a random projection, then compared cell by cell."""
    H, _S, Skv = weights.shape
    p = np.einsum("hsk,hk->s", weights, _projection(H, Skv, weights.dtype.str)).astype(np.float64)  # (S,): equal rows, equal p
    by_p = np.argsort(p)
    order = by_p[np.isfinite(p[by_p])].tolist()
    pairs, run = 0, order[:1]
    for i in [*order[1:], None]:
        if i is not None and abs(p[i] - p[run[-1]]) <= 1e-4 * (1.0 + abs(p[i])):
            run.append(i)
            continue
        while len(run) > 1:  # split the run into groups of identical rows
            first = weights[:, run[0]]
            same = {r for r in run[1:] if np.abs(weights[:, r] - first).max() < tol}
            pairs += len(same) * (len(same) + 1) // 2
            run = [r for r in run[1:] if r not in same]
        run = [i] if i is not None else []
    return pairs


#: A sequence with more query or key positions than this is drawn at a level of detail.
LOD_CELLS = 512
#: A long frame's thumbnails (every head in one view) draw at most this many cells a side.
THUMB_CELLS = 128
#: Exact query rows a long frame keeps for the score histograms.
SAMPLE_ROWS = 64
#: Rows `Frame.row` computes at a time for a long frame (an exact hover costs one block).
ROW_BLOCK = 64


def is_long(config: AttentionConfig) -> bool:
    """Whether `config`'s frame is drawn at a level of detail (see Frame.lod)."""
    return max(config.seq_len, config.key_len) > LOD_CELLS


def build_frame(config: AttentionConfig, request_id: int = 0, progress=None) -> Frame:
    """Run the engine for `config` and derive everything the panels show.

    ``progress(done, total)`` is called while a slow run's projections or a long frame's
    heads are computed (an exception it raises cancels). Raises engine.ConfigError / engine.BackendUnavailable as
    the engine does.
    """
    t0 = time.perf_counter()
    long = is_long(config)
    # a long frame: the run, then every head's pass over its rows, as one count going forward
    run_p, heads_p = in_stages(progress, _stage_flops(config)) if long else (progress, None)
    trace = engine.run(config, progress=run_p)  # (reports only when its projections are slow)
    t1 = time.perf_counter()
    if long:
        return _build_long_frame(config, request_id, trace, heads_p, t0, t1)
    wts = trace.weights_used
    weights = _np(trace.weights[0])
    mask = trace.mask.numpy()
    # masked keys that got exactly zero weight are drawn as holes (hatched);
    # masked keys with weight (a fully masked row with -1e9 / min) keep their colour
    if mask.all():
        weights_shown = weights
    else:
        weights_shown = weights.copy()
        np.copyto(weights_shown, np.float32(np.nan), where=(~mask)[None, :, :] & (weights == 0))
    entropy = _np(trace.entropy[0])
    m = engine.trace_head_summary(trace, only=("mean_entropy", "sink_mass", "mean_distance"))  # (H,) tensors
    valid_rows = ~np.isnan(weights).any(-1)  # (H, S); fully masked "-inf" rows are NaN
    head_rows = valid_rows.sum(-1)  # (H,)
    if valid_rows.all() and weights.size:  # the common case: every row has weights
        metric = {k: _np(v).astype(np.float32) for k, v in m.items()}
        finite_max = weights.max()
    else:
        # a head with no row left has no mean: NaN (the engine's mean over no rows reads 0)
        metric = {k: np.where(head_rows > 0, _np(v), np.float32(np.nan)).astype(np.float32) for k, v in m.items()}
        finite_max = np.nanmax(weights) if weights.size and not np.isnan(weights).all() else 1.0
    q_labels, k_labels = token_labels(config)
    memory = trace.memory  # (B, Skv, d) cross-attention source, or None
    output_scale = finite_abs_max(trace.output)
    frame = Frame(
        request_id=request_id,
        config=config,
        trace=trace,
        x=_np(trace.x[0]),
        q=_np(trace.q[0]),
        k=_np(trace.k[0]),
        v=_np(trace.v[0]),
        w_q=_np(wts.w_q),
        w_k=_np(wts.w_k),
        w_v=_np(wts.w_v),
        context=_np(trace.context[0]),
        memory=None if memory is None else _np(memory[0]),
        scores_raw=_np(trace.scores_raw[0]),
        scores=_np(trace.scores[0]),
        weights=weights,
        weights_shown=weights_shown,
        mask=mask,
        jac_norm=_np(trace.softmax_jacobian_norm[0]),
        entropy=entropy,
        valid_rows=valid_rows,
        head_rows=head_rows,
        head_entropy=metric["mean_entropy"],
        sink_mass=metric["sink_mass"],
        mean_distance=metric["mean_distance"],
        output_scale=output_scale,
        future_share=future_share(weights, config.key_len - config.seq_len),
        identical_pairs=identical_row_pairs(weights),
        weight_max=float(finite_max) if math.isfinite(finite_max) and finite_max > 0 else 1.0,
        overflow=engine.overflow_report(trace),
        stage_costs=engine.stage_costs(config),
        query_labels=q_labels,
        key_labels=k_labels,
        sweep_counts=sweep_key_counts(config, mask),
        compute_ms=0.0,
        timings_ms=dict(trace.timings_ms),
    )
    scaling_sweep(frame.sweep_counts)  # computed here, in the worker; the panel reads the cache
    t2 = time.perf_counter()
    frame.timings_ms["engine"] = (t1 - t0) * 1e3
    frame.timings_ms["derive"] = (t2 - t1) * 1e3
    frame.compute_ms = (t2 - t0) * 1e3
    return frame


def _stage_flops(config: AttentionConfig) -> list[float]:
    """A long frame's two stages by their FLOPs: the run (projections, attention, W_O) and
    the heads' passes over their rows (the scores and weights again, with their statistics:
    about 1.5 × the attention's products)."""
    B, S, Skv, d = config.batch, config.seq_len, config.key_len, config.d_model
    attention = 4.0 * B * config.n_heads * S * Skv * config.head_dim
    projections = 2.0 * B * d * (2 * S * d + 2 * Skv * config.kv_heads * config.head_dim)
    return [projections + attention, 1.5 * attention]


def _build_long_frame(config: AttentionConfig, request_id: int, trace: AttentionTrace, progress,
                      t0: float, t1: float) -> Frame:
    """A long sequence's frame: each head in one pass over its rows (engine
    AttentionTrace.head_overview): block maxima to draw, exact sample rows for the
    histograms, and the row statistics every per-head number comes from."""
    H, S, Skv = config.n_heads, config.seq_len, config.key_len
    sample = torch.from_numpy(np.unique(np.linspace(0, S - 1, min(S, SAMPLE_ROWS)).round().astype(np.int64)))
    pooled, raw, scores, shares, reduce = [], [], [], [], []
    at = [0, 1]  # the last (done, total) reported

    def report_head(h: int, d: int, t: int) -> None:
        at[:] = h * t + d, H * t
        progress(*at)

    for h in range(H):
        report = None if progress is None else (lambda d, t, h=h: report_head(h, d, t))
        ov = trace.head_overview(h, (LOD_CELLS, LOD_CELLS), sample, progress=report)
        pooled.append(ov["weights"].numpy())
        raw.append(ov["scores_raw"].numpy())
        scores.append(ov["scores"].numpy())
        shares.append(ov["future_share"])
        reduce.append(str(ov["reduce"]))
    weights = np.stack(pooled)  # (H, R, C) block maxima (or a linear kernel's block means)
    tile = (-(-S // LOD_CELLS), -(-Skv // LOD_CELLS))
    mask = trace.key_ranges.numpy()  # (S,) lo, hi: no (S, Skv) grid
    visible = visible_tiles(config, tile).numpy()  # (R, C) any key seen
    weights_shown = weights.copy()
    np.copyto(weights_shown, np.float32(np.nan), where=(~visible)[None] & (weights == 0))
    entropy = _np(trace.entropy[0])
    valid_rows = ~np.isnan(entropy)  # (a linear kernel's: the valid rows of its sample, stat_rows)
    head_rows = valid_rows.sum(-1)
    m = engine.trace_head_summary(trace, only=("mean_entropy", "sink_mass", "mean_distance"))
    metric = {k: np.where(head_rows > 0, _np(v), np.float32(np.nan)).astype(np.float32) for k, v in m.items()}
    finite_max = np.nanmax(weights) if weights.size and not np.isnan(weights).all() else 1.0
    share = np.array(shares, np.float64)
    ok = np.isfinite(share) & (head_rows > 0)
    q_labels, k_labels = token_labels(config)
    memory = trace.memory  # (B, Skv, d) cross-attention source, or None
    wts = trace.weights_used
    frame = Frame(
        request_id=request_id, config=config, trace=trace,
        x=_np(trace.x[0]), q=_np(trace.q[0]), k=_np(trace.k[0]), v=_np(trace.v[0]),
        w_q=_np(wts.w_q), w_k=_np(wts.w_k), w_v=_np(wts.w_v),
        context=_np(trace.context[0]), memory=None if memory is None else _np(memory[0]),
        scores_raw=np.stack(raw), scores=np.stack(scores), weights=weights, weights_shown=weights_shown,
        mask=mask, jac_norm=_np(trace.softmax_jacobian_norm[0]), entropy=entropy,
        valid_rows=valid_rows, head_rows=head_rows,
        head_entropy=metric["mean_entropy"], sink_mass=metric["sink_mass"], mean_distance=metric["mean_distance"],
        output_scale=finite_abs_max(trace.output),
        future_share=float(np.average(share[ok], weights=head_rows[ok])) if ok.any() else math.nan,
        identical_pairs=0,  # (not looked for at this length: it compares every pair of rows)
        weight_max=float(finite_max) if math.isfinite(finite_max) and finite_max > 0 else 1.0,
        overflow=engine.overflow_report(trace), stage_costs=engine.stage_costs(config),
        query_labels=q_labels, key_labels=k_labels, sweep_counts=sweep_key_counts(config, mask),
        compute_ms=0.0, timings_ms=dict(trace.timings_ms), lod=tile, sample_rows=sample.numpy(),
        lod_reduce=tuple(reduce), stat_rows=None if trace.stat_sample is None else trace.stat_sample.numpy(),
    )
    frame.thumbs, frame.thumb_lod = _thumbnails(weights_shown, weights if "mean" in reduce else None)
    # each grid count the rows need measured once, a report between its d_k
    measure_sweeps(frame.sweep_counts, None if progress is None else (lambda: progress(*at)))
    scaling_sweep(frame.sweep_counts)
    # the eager reference of the passes (its W_O product in pieces, each a report of the
    # count reached), compared here, not on the UI thread
    trace.compute_rows(None if progress is None else (lambda _d, _t: progress(*at)))
    t2 = time.perf_counter()
    frame.timings_ms["engine"] = (t1 - t0) * 1e3
    frame.timings_ms["derive"] = (t2 - t1) * 1e3
    frame.compute_ms = (t2 - t0) * 1e3
    return frame


def _thumbnails(maps: np.ndarray, means: np.ndarray | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    """(H, R, C) block maxima → (H, ≤THUMB_CELLS, ≤THUMB_CELLS) maxima of blocks of them, NaN
    (a hole) only where every cell is one; and the block (rows, cols). ``means`` (H, R, C), block
    means without holes (a linear kernel's long frame): the thumbnails are their means instead
    (holes where every cell of ``maps`` is one)."""
    H, R, C = maps.shape
    tr, tc = -(-R // THUMB_CELLS), -(-C // THUMB_CELLS)
    r, c = -(-R // tr), -(-C // tc)
    padded = np.full((H, r * tr, c * tc), np.nan, np.float32)
    padded[:, :R, :C] = maps
    with np.errstate(all="ignore"):
        blocks = padded.reshape(H, r, tr, c, tc)
        out = np.fmax.reduce(np.fmax.reduce(blocks, axis=4), axis=2)
        if means is not None:
            hole = np.isnan(out)
            m = np.full((H, r * tr, c * tc), np.nan, np.float32)
            m[:, :R, :C] = means
            out = np.nanmean(m.reshape(H, r, tr, c, tc), axis=(2, 4))
            out[hole] = np.nan
    return out.astype(np.float32), (tr, tc)


def measure_backends(config: AttentionConfig, progress=None) -> dict[str, dict]:
    """engine.run_backend_comparison: each backend's impl, max |Δ| vs eager and time. Nothing
    for a long config: each comparison would be another exact pass over every row (the
    frame's own backend already has its Δ from the frame's pass). ``progress`` reaches a slow
    run's chunks (an exception it raises stops the comparison)."""
    return {} if is_long(config) else engine.run_backend_comparison(config, progress=progress)


def sweep_key_counts(config: AttentionConfig, mask: np.ndarray | KeyRanges) -> tuple[tuple[int, int], ...]:
    """((keys seen, rows), ...): how many keys each query row's softmax spreads over.

    The √d_k sweep's curves are computed for these, so the star (this config's mean
    softmax gradient) and the curves answer the same question: a softmax over 8 keys has
    a larger gradient than one over 64 at the same score spread. A row that sees no key
    is left out under -inf (NaN) and counts all keys under min / -1e9 (a uniform row).
    """
    seen = np.asarray(mask.counts()) if isinstance(mask, KeyRanges) else mask.sum(-1)  # (S,)
    if config.mask_value != "-inf":
        seen = np.where(seen == 0, config.key_len, seen)
    rows = np.bincount(seen[seen > 0], minlength=1)  # (max seen + 1,): rows by keys seen
    values = np.flatnonzero(rows)
    return tuple(zip(values.tolist(), rows[values].tolist()))


#: key counts the sweep is measured at; others are interpolated in log(count) between them
SWEEP_GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
              2048, 4096, 8192, 16384, 32768, 65536)
#: past 1024 keys a sweep draws about this many keys in all (n_samples × n_keys, at least one
#: sample): each sample already averages over thousands of keys (and its statistics' passes
#: over (n_samples, n_keys) are what a causal 65,536-token frame's sweep costs: its scores are
#: drawn directly, engine.diagnostics._SWEEP_DIRECT)
_SWEEP_KEYS = 8 * 16384


#: key count → _sweep_measured's arrays (at most _SWEEPS_KEPT, the oldest dropped first)
_SWEEPS: dict[int, dict[str, np.ndarray]] = {}
_SWEEPS_KEPT = 64
_SWEEPS_LOCK = threading.Lock()  # the worker threads and the UI thread (a panel's first sweep)


def _sweep_measured(n_keys: int, check=None) -> dict[str, np.ndarray]:
    """engine.scaling_sweep at one key count, as float64 numpy (32 sampled queries past 64 keys,
    8 past 1024, fewer past 16384: _SWEEP_KEYS; each already averages over many keys); measured once. ``check()`` between
    its d_k (a long frame's cancel)."""
    got = _SWEEPS.get(n_keys)
    if got is None:
        samples = 64 if n_keys <= 64 else 32 if n_keys <= 1024 else max(1, min(8, _SWEEP_KEYS // n_keys))
        sw = engine.scaling_sweep(n_keys=n_keys, n_samples=samples, check=check)
        got = {k: v.numpy().astype(np.float64) for k, v in sw.items()}
        with _SWEEPS_LOCK:
            while len(_SWEEPS) >= _SWEEPS_KEPT:
                _SWEEPS.pop(next(iter(_SWEEPS)))
            _SWEEPS[n_keys] = got
    return got


def sweep_points(key_counts: tuple[tuple[int, int], ...]) -> dict[int, float]:
    """{measured key count: its weight} of the rows' key counts (sweep_key_counts): a count on
    SWEEP_GRID (or past it) weighs its rows' share, one between two grid counts lo < n < hi
    gives (1 − t) and t of its share to them (t linear in log n).
    The sweep averaged over the rows is then Σ weight · sweep(count): the same sum, in one
    pass over the counts (a causal 65,536-token frame has 65,536 of them)."""
    key_counts = key_counts or ((64, 1),)
    counts = np.array([n for n, _r in key_counts], np.int64)
    share = np.array([r for _n, r in key_counts], np.float64)
    share /= share.sum()
    grid = np.array(SWEEP_GRID, np.int64)
    i = np.searchsorted(grid, counts)  # grid[i - 1] < n ≤ grid[i]
    on = (counts > grid[-1]) | (grid[np.minimum(i, len(grid) - 1)] == counts)
    out: dict[int, float] = {}
    for n, w in zip(counts[on].tolist(), share[on].tolist()):
        out[n] = out.get(n, 0.0) + w
    between = ~on
    lo, hi = grid[i[between] - 1], grid[i[between]]
    t = (np.log(counts[between]) - np.log(lo)) / (np.log(hi) - np.log(lo))
    for ends, w in ((lo, share[between] * (1 - t)), (hi, share[between] * t)):
        sums = np.bincount(np.searchsorted(grid, ends), weights=w, minlength=len(grid))
        for g in np.flatnonzero(sums).tolist():
            out[int(grid[g])] = out.get(int(grid[g]), 0.0) + float(sums[g])
    return out


def measure_sweeps(key_counts: tuple[tuple[int, int], ...], check=None) -> None:
    """Measure (once: _SWEEPS) the sweep at every grid count these rows' counts need;
    ``check()`` between d_k's (a long frame's cancel)."""
    for n in sorted(sweep_points(key_counts)):
        _sweep_measured(n, check)


@lru_cache(maxsize=16)
def scaling_sweep(key_counts: tuple[tuple[int, int], ...] = ((64, 1),)) -> dict[str, np.ndarray]:
    """The √d_k sweep (engine.scaling_sweep) averaged over rows that see n keys, weighted by
    how many rows do (see sweep_key_counts), between SWEEP_GRID's counts interpolated in
    log n (sweep_points): (len(d_k),) float64 arrays. Cached: it depends on the mask only,
    and each key count is measured once."""
    out: dict[str, np.ndarray] = {}
    for n, w in sweep_points(key_counts).items():
        for k, v in _sweep_measured(n).items():
            out[k] = v if k == "d_k" else out.get(k, 0.0) + v * w
    return out


def gaussian_pdf(x: np.ndarray, std: float) -> np.ndarray:
    """N(0, std²) density at x."""
    std = max(std, 1e-12)
    return np.exp(-0.5 * (x / std) ** 2) / (std * math.sqrt(2 * math.pi))


def histogram(values: np.ndarray, bins: int = 60) -> tuple[np.ndarray, np.ndarray, int]:
    """(edges, density, n_nonfinite) of the finite values; density integrates to 1."""
    flat = values.ravel()
    finite = np.isfinite(flat)
    n_bad = int(flat.size - finite.sum())
    v = flat[finite] if n_bad else flat
    if v.size == 0:
        return np.array([-1.0, 1.0]), np.zeros(1), n_bad
    lo, hi = float(v.min()), float(v.max())
    # numpy bins in the values' dtype: a range of a few float32 steps (-5.3732309 to -5.3732304)
    # cannot hold `bins` distinct edges ("Too many bins for data range"): such values are one
    # value, drawn as one bar
    eps = float(np.finfo(v.dtype).eps) if np.issubdtype(v.dtype, np.floating) else 0.0
    if hi - lo < max(1e-12, 4 * bins * eps * max(abs(lo), abs(hi))):
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    density = counts / (v.size * (edges[1] - edges[0]))
    return edges, density, n_bad


def finite_std(values: np.ndarray) -> float:
    v = values[np.isfinite(values)]
    return float(v.std()) if v.size else float("nan")


@dataclass
class PositionalView:
    """What the positions panel draws for a config's encoding (float32 arrays).

    table (rows, cols) with its axis names and a symmetric colour range; a curve
    (x, ys: one line per entry) against the distance between two positions.
    """

    kind: str
    table: np.ndarray | None
    rows: str  # what a table row is ("position", "query")
    cols: str  # what a column is ("dim", "pair", "key")
    levels: tuple[float, float]
    distance: np.ndarray  # (n,) token distances of the curve
    curves: dict[str, np.ndarray]  # label → (n,) values


def positional_view(config: AttentionConfig, head: int = 0) -> PositionalView:
    """The positional encoding of `config`, as the positions panel shows it.

    sinusoidal / learned: the table added to X (one row per key position) and the mean
    cosine similarity of two positions' vectors against their distance; rope: cos of
    each pair's rotation angle, and the q·k score of one vector with itself moved Δ apart
    (mean of cos(Δ·θ_i): RoPE makes the score depend on the distance only); alibi: the
    bias of `head` and every head's −slope·distance; none: nothing (attention is blind to
    order): the cosine similarity of X's rows, which only equal tokens make 1.
    """
    from engine import positional as pe

    Skv, d, dh = config.key_len, config.d_model, config.head_dim
    pos = torch.arange(Skv)
    dist = np.arange(Skv, dtype=np.float32)
    kind = config.positional
    if kind in ("sinusoidal", "learned"):
        table = (pe.sinusoidal(pos, d) if kind == "sinusoidal" else pe.learned(pos, d, config.seed)).numpy()
        unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
        sim = unit @ unit.T  # (Skv, Skv)
        curve = np.array([np.diagonal(sim, k).mean() for k in range(Skv)], np.float32)
        m = float(np.abs(table).max()) or 1.0
        return PositionalView(kind, table.astype(np.float32), "position", "dim", (-m, m), dist,
                              {"cos(PE(p), PE(p+Δ))": curve})
    if kind == "rope":
        angles = pe.rope_angles(pos, dh).numpy()  # (Skv, Dh/2)
        theta = angles[1] if Skv > 1 else np.zeros(dh // 2, np.float32)  # per-pair frequency
        score = np.cos(dist[:, None] * theta[None, :]).mean(-1).astype(np.float32)
        return PositionalView(kind, np.cos(angles).astype(np.float32), "position", "pair", (-1.0, 1.0), dist,
                              {"q·k(Δ) / q·k(0)": score})
    if kind == "alibi":
        h = min(head, config.n_heads - 1)
        bias = pe.alibi_bias(config.n_heads, config.seq_len, Skv)  # (H, S, Skv)
        slopes = pe.alibi_slopes(config.n_heads).numpy()
        m = float(bias.abs().max()) or 1.0
        curves = {f"h{g}: −{slopes[g]:.3g}·Δ": (-slopes[g] * dist).astype(np.float32) for g in range(config.n_heads)}
        return PositionalView(kind, bias[h].numpy().astype(np.float32), "query", "key", (-m, m), dist, curves)
    # none: X carries the tokens' content only; how alike two rows are, against their distance
    from engine.inputs import token_embeddings

    x = token_embeddings(config)[0].numpy()  # (S, d)
    unit = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    sim = (unit @ unit.T).astype(np.float32)  # (S, S)
    S = config.seq_len
    curve = np.array([np.diagonal(sim, k).mean() for k in range(S)], np.float32)
    return PositionalView(kind, sim, "query", "query", (-1.0, 1.0), np.arange(S, dtype=np.float32),
                          {"cos(x_i, x_i+Δ)": curve})
