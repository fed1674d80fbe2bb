"""engine.run: one attention layer computed exactly, every intermediate available.

    X ─(+pos)→ x ─W_Q,W_K,W_V→ Q, K, V ─(RoPE)→ QKᵀ → ·scale → +ALiBi → mask
      → softmax → ·V → merge heads → W_O → output

The eager backend materialises every (B, H, S, Skv) grid; a fused backend (sdpa,
flash) computes the output without any, and its trace computes the grids, one
head's grid or the per-row diagnostics only when asked (see AttentionTrace).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace

import torch

from .backends import AttentionCall, BackendUnavailable, attend, eager
from .backends.eager import GRID_STEPS, eager_steps
from .config import AttentionConfig, ConfigError
from .efficient import overview as kernel_overview
from .efficient import sparse_overview
from .efficient.attend import attend as efficient_attend
from .inputs import Weights, init_weights, memory_input, token_embeddings, torch_dtype
from .masks import KeyRanges, visible_tiles
from .memory import (
    DEFAULT_MEMORY_BUDGET,
    check_lazy_memory,
    check_memory,
    memory_budget,
    memory_estimate,
    row_slices,
)
from .pacing import Pacer, holding, paced_matmul, run_plans
from .positional import learned, query_positions, rope, sinusoidal
from .rows import (
    key_distances,
    pool_tiles,
    raw_row_stats,
    row_entropy,
    score_row_stats,
    softmax_jacobian_norm,
    visible_inf_rows,
    weight_row_stats,
)

__all__ = ["DEFAULT_MEMORY_BUDGET", "GRID_NAMES", "AttentionTrace", "memory_budget", "memory_estimate",
           "row_entropy", "run", "run_backend_comparison", "softmax_jacobian_norm"]

#: progress(done, total): called by the blocked paths after each block.
Progress = Callable[[int, int], None]
#: The (B, H, S, Skv) grid fields, each also available one head at a time (head_grid).
GRID_NAMES = GRID_STEPS
#: A fused trace whose grids total at most this many bytes (and fit the budget) materialises
#: them whole on first access of anything derived from them: one batched call is fastest,
#: and its numbers are exactly the eager backend's. Larger ones go head by head, block by block.
SMALL_GRIDS = 64 * 2**20


class AttentionTrace:
    """Every tensor of one attention computation, on the CPU (see docs/contract.md).

    x (B,S,d) · memory (B,Skv,d) or None · q (B,H,S,Dh) · k, v (B,Hkv,Skv,Dh) · scores_raw,
    scores, weights (B,H,S,Skv) · mask (S,Skv) · key_ranges (S,) each · context (B,H,S,Dh) ·
    output (B,S,d) · softmax_jacobian_norm, entropy (B,H,S).

    ``key_ranges`` (engine.masks.KeyRanges) is the mask as its rows' key ranges, O(S); what
    the trace itself reads. ``mask``, the (S, Skv) bool grid, is held by an eager trace and
    built on first access by a fused one (256 MiB at S = 16384: a long run never builds it).

    An efficient config (``config.efficient``: a linear kernel, global tokens, block summaries)
    computes ``context`` by engine.efficient without any grid and is lazy like a fused trace;
    its grids are the variant's implicit attention matrix (weights = softmax(scores) still).

    ``memory`` is cross-attention's key/value source after its additive positions (float32,
    what K and V were projected from); None for self-attention, whose source is ``x``.

    An eager trace holds its grids from the start. A fused one (sdpa, flash) holds none:
    ``scores_raw``, ``scores`` and ``weights`` are computed on first access (all three at
    once, exactly the eager backend's numbers; a ConfigError states the estimate when they
    do not fit the budget); :meth:`head_grid` gives one head's without the others; the
    entropy, the Jacobian norm, the per-head summaries, the overflow counts and
    ``backend_max_abs_diff`` (against the exact eager reference) are computed block by block
    (:meth:`row_stats`) unless the grids are held or small (:attr:`blocked`). Each lazy
    value is computed once; the trace may be read from several threads.
    """

    def __init__(self, *, config: AttentionConfig, x: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                 v: torch.Tensor, key_ranges: KeyRanges, context: torch.Tensor, output: torch.Tensor,
                 backend_impl: str, call: AttentionCall, w_o: torch.Tensor, weights_used: Weights | None = None,
                 grids: dict[str, torch.Tensor] | None = None,
                 timings_ms: dict[str, float] | None = None, budget: int | None = None,
                 estimate: dict[str, int] | None = None, memory: torch.Tensor | None = None,
                 mask: torch.Tensor | None = None) -> None:
        self.config = config
        self.x, self.q, self.k, self.v = x, q, k, v
        self.memory = memory  # (B, Skv, d) float32 cross-attention source, or None
        self.key_ranges = key_ranges  # (S,) lo, hi: the mask's rows, O(S)
        self._mask = mask  # (S, Skv) bool when held (eager), else built on first access
        self.context = context  # (B, H, S, Dh): weights·V from the backend that ran
        self.output = output
        self.backend_impl = backend_impl
        self.weights_used = weights_used  # the projections, float32
        self.timings_ms = {} if timings_ms is None else timings_ms
        self._call = call  # q, k, v on the config's device, the mask (ranges when fused): for later
        self._w_o = w_o  # (d, d) in the config dtype, on the device
        self._grids = grids
        self._lock = threading.RLock()
        self._estimate = estimate
        self._budget = memory_budget() if budget is None else budget  # what the run was checked against
        self._row_fields: dict[str, torch.Tensor] = {}  # entropy, jacobian_norm (B, H, S)
        self._rows: dict[tuple[int, int], dict[str, torch.Tensor]] = {}  # (b, h) → (S,) stats
        self._future: dict[tuple[int, int], torch.Tensor] = {}  # (b, h) → (S,) weight after the query
        self._kernel_rows: bool | None = None  # row statistics from the factorised weights (_by_kernel)
        self._range_rows: bool | None = None  # row statistics from each row's few keys (_by_ranges)
        self._ref_context: torch.Tensor | None = None  # (B, H, S, Dh) blocked eager reference
        self._reference: tuple[torch.Tensor, float] | None = None  # eager output (B, S, d), max |Δ|

    def __repr__(self) -> str:
        held = "held" if self._grids is not None else "lazy"
        return f"AttentionTrace({self.config.summary()}, backend_impl={self.backend_impl!r}, grids {held})"

    @property
    def mask(self) -> torch.Tensor:
        """(S, Skv) bool, True = may attend: held by an eager trace, built from
        ``key_ranges`` on first access otherwise (then kept)."""
        if self._mask is None:
            with self._lock:
                if self._mask is None:
                    self._mask = self.key_ranges.dense()
        return self._mask

    # ---- the grids --------------------------------------------------------------------------
    @property
    def scores_raw(self) -> torch.Tensor:
        """(B, H, S, Skv) Q·Kᵀ in the config dtype (computed on first access for a fused trace)."""
        return self._grid("scores_raw")

    @property
    def scores(self) -> torch.Tensor:
        """(B, H, S, Skv) the softmax input: scaled, ALiBi added, masked."""
        return self._grid("scores")

    @property
    def weights(self) -> torch.Tensor:
        """(B, H, S, Skv) softmax(scores)."""
        return self._grid("weights")

    @property
    def holds_grids(self) -> bool:
        """True when the (B, H, S, Skv) grids are in memory (always for eager)."""
        return self._grids is not None

    @property
    def blocked(self) -> bool:
        """True when grid-derived numbers (entropy, Jacobian norm, head summaries, overflow,
        the eager reference) are computed head by head, block by block; False when they come
        from the whole grids (held, or small enough to materialise: SMALL_GRIDS)."""
        if self._grids is not None:
            return False
        est = self.memory_estimate
        return not (est["grids"] <= SMALL_GRIDS and est["eager"] <= self._budget)

    @property
    def rows_kept(self) -> bool:
        """Whether every head's per-row statistics are computed and kept (row_stats is then
        instant, and what is derived from the rows is gathered from them, not from the grids)."""
        cfg = self.config
        return all((b, h) in self._rows for b in range(cfg.batch) for h in range(cfg.n_heads))

    @property
    def _by_kernel(self) -> bool:
        """Whether the row statistics and the overview come from the linear kernel's factorised
        weights (engine.efficient.overview: O(S·F) a head) instead of a pass over every row's
        weights: a blocked trace of kernel "linear" or "performer" whose every row sees a key."""
        if self._kernel_rows is None:
            self._kernel_rows = self.blocked and kernel_overview.applies(self.config, self.key_ranges)
        return self._kernel_rows

    @property
    def _by_ranges(self) -> bool:
        """Whether the row statistics, the overview and the eager reference come from the few
        keys each row weighs (engine.efficient.sparse_overview: O(S·(w + g)) or O(S·(b + S/b))
        a head) instead of a pass over every row's Skv keys: a blocked float32 trace of local ∪
        global or hierarchical softmax whose every row sees a key."""
        if self._range_rows is None:
            self._range_rows = self.blocked and sparse_overview.applies(self.config, self.key_ranges)
        return self._range_rows

    @property
    def raw_sample(self) -> torch.Tensor | None:
        """(n,) int64 query rows, or None: the rows ``max_abs_score_raw`` (the largest |Q·Kᵀ| over
        every key, masked or not) is computed on when not every row (NaN on the others): a linear
        kernel's :attr:`stat_sample`, and a local ∪ global or hierarchical long trace's
        (:attr:`_by_ranges`, whose other statistics are exact on every row) the same sample.
        The ±inf counts stay exact (by bounds)."""
        if self._by_ranges:
            return kernel_overview.sample_rows(self.config.seq_len)
        return self.stat_sample

    @property
    def stat_sample(self) -> torch.Tensor | None:
        """(n,) int64 query rows, or None. A blocked linear-kernel trace (:attr:`_by_kernel`)
        computes the per-row statistics that need a whole row (entropy, jacobian_norm, row_max,
        max_abs_score_raw) exactly on these rows only (engine.efficient.overview.sample_rows:
        SAMPLE_ROWS evenly spaced) and leaves them NaN on every other row; its other statistics
        (valid, sink, distance, diagonal, previous_token, the ±inf counts) are exact on every
        row. None: every statistic of every row is exact."""
        return kernel_overview.sample_rows(self.config.seq_len) if self._by_kernel else None

    @property
    def memory_estimate(self) -> dict[str, int]:
        """engine.memory_estimate of this trace's config (computed once)."""
        if self._estimate is None:
            self._estimate = memory_estimate(self.config)
        return self._estimate

    def _grid(self, name: str) -> torch.Tensor:
        if self._grids is None:
            self._materialise()
        return self._grids[name]

    def _materialise(self, progress: Progress | None = None) -> None:
        """Compute every grid at once (the eager path), refused with the estimate when over
        budget; in pieces of query rows with ``progress`` between them when given."""
        with self._lock:
            if self._grids is not None:
                return
            cfg = self.config
            check_lazy_memory(cfg, "grids", self.memory_estimate, self._budget)
            t0 = time.perf_counter()
            pacer = Pacer(progress, CHUNK_SECONDS, cfg.dtype, cfg.device)
            plan = pacer.plan(cfg.seq_len, 2 * cfg.batch * cfg.n_heads * cfg.key_len * cfg.head_dim)
            pacer.expect(plan, times=2)
            with torch.inference_mode():
                steps = eager_steps(self._call, (pacer, plan))
                self._grids = {n: steps[n].cpu() for n in GRID_NAMES}
                if self._reference is None:
                    self._set_reference(steps["context"], progress)
            self.timings_ms["grids"] = (time.perf_counter() - t0) * 1e3

    def head_grid(self, name: str, head: int, batch: int = 0) -> torch.Tensor:
        """One head's ``scores_raw``, ``scores`` or ``weights``: (S, Skv) in the config dtype,
        equal to ``getattr(trace, name)[batch, head]``.

        A view of the grid when held (or small enough to materialise whole); otherwise
        computed for this head alone, a block of query rows at a time (peak: one (S, Skv)
        plane), refused with the estimate when even that does not fit the budget.
        """
        self._check_head(name, head, batch)
        cfg = self.config
        if not self.blocked:
            return self._grid(name)[batch, head]
        check_lazy_memory(cfg, "head", self.memory_estimate, self._budget)
        with torch.inference_mode():
            return eager.head_grid(self._call, batch, head, name, row_slices(cfg)).cpu()

    def head_rows(self, name: str, head: int, rows: slice, batch: int = 0) -> torch.Tensor:
        """Query rows ``rows`` of one head's ``name`` grid: (r, Skv) in the config dtype, equal to
        ``head_grid(name, head, batch)[rows]`` (a block of at least 64 rows gives the same bits as
        the blocked passes). Cheap for a few rows of a long trace: only they are computed."""
        self._check_head(name, head, batch)
        if not self.blocked:
            return self._grid(name)[batch, head, rows]
        with torch.inference_mode():
            return eager.head_rows(self._call, batch, head, rows, upto=name)[name].cpu()

    def pooled_grid(self, name: str, head: int, shape: tuple[int, int], reduce: str = "max",
                    batch: int = 0) -> torch.Tensor:
        """One head's grid reduced to what ``shape`` = (rows, cols) cells can show: tiles of
        ⌈S/rows⌉ × ⌈Skv/cols⌉ entries, each cell their max (or mean, ``reduce``), float32 of
        shape (⌈S/tile rows⌉, ⌈Skv/tile cols⌉) ≤ ``shape``. The level of detail a long
        sequence's heatmap can draw, computed a block of rows at a time (never the whole
        (S, Skv) plane of a blocked trace); the same numbers as pooling head_grid."""
        self._check_head(name, head, batch)
        cfg = self.config
        rows, cols = (max(1, int(n)) for n in shape)
        tile = (-(-cfg.seq_len // rows), -(-cfg.key_len // cols))
        if not self.blocked:
            return pool_tiles(self._grid(name)[batch, head], tile, reduce)
        check_lazy_memory(cfg, "rows", self.memory_estimate, self._budget)
        parts, carry = [], None  # carry: the rows of a tile a block left unfinished
        slices = row_slices(cfg)  # the blocks of head_grid: the same numbers
        with torch.inference_mode():
            for i, rows in enumerate(slices):
                g = eager.head_rows(self._call, batch, head, rows, upto=name)[name].cpu()
                g = g if carry is None else torch.cat([carry, g])
                whole = g.shape[0] if i == len(slices) - 1 else g.shape[0] // tile[0] * tile[0]
                if whole:
                    parts.append(pool_tiles(g[:whole], tile, reduce))
                carry = g[whole:] if whole < g.shape[0] else None
        return torch.cat(parts)

    def _check_head(self, name: str, head: int, batch: int) -> None:
        cfg = self.config
        if name not in GRID_NAMES:
            raise ValueError(f"name must be one of {', '.join(GRID_NAMES)}, got {name!r}")
        if not (isinstance(head, int) and 0 <= head < cfg.n_heads):
            raise IndexError(f"head must be in 0…{cfg.n_heads - 1}, got {head!r}")
        if not (isinstance(batch, int) and 0 <= batch < cfg.batch):
            raise IndexError(f"batch must be in 0…{cfg.batch - 1}, got {batch!r}")

    # ---- per-row statistics -------------------------------------------------------------------
    def row_stats(self, batch: int, head: int | None = None,
                  progress: Progress | None = None) -> dict[str, torch.Tensor] | list[dict[str, torch.Tensor]]:
        """Every per-row statistic of one (batch, head), each (S,): those of
        engine.rows.weight_row_stats (valid, entropy, jacobian_norm, row_max, sink, distance,
        diagonal, previous_token) and raw_row_stats (inf_scores_raw, max_abs_score_raw) with
        inf_scores. ``head=None``: a list, one dict per head, computed in one pass.

        From the grids when held; otherwise computed block by block together with the heads'
        eager reference context, and kept (a few floats per row). ``progress(done, total)``
        is called after each block (blocks × heads); an exception it raises cancels the pass
        and keeps nothing of it.
        """
        cfg = self.config
        heads = range(cfg.n_heads) if head is None else [head]
        with self._lock:
            missing = [h for h in heads if (batch, h) not in self._rows]
            if missing:
                self._compute_rows(batch, missing, progress)
            rows = [self._rows[(batch, h)] for h in heads]
        return rows if head is None else rows[0]

    def compute_rows(self, progress: Progress | None = None) -> None:
        """Compute, now, everything derived from the weight rows (entropy, Jacobian norm, head
        summaries, overflow counts, backend_max_abs_diff): block by block for a blocked trace,
        ``progress(done, total)`` after each block; from the whole grids otherwise. For a
        worker thread, so that reading those later is instant."""
        if not self.blocked:
            self._row_field("entropy")
            self._row_field("jacobian_norm")
            self._ensure_reference()
            return
        report, hold = holding(progress)  # the reference's pieces: reports of the count reached
        self._all_rows(report)
        self._ensure_reference(hold)

    def _compute_rows(self, b: int, heads: list[int], progress: Progress | None = None) -> None:
        """Row statistics of heads ``heads`` of batch row b into ``_rows``: block of query rows
        outer, heads inner (a block's key distances serve every head)."""
        cfg = self.config
        pos = query_positions(cfg.seq_len, cfg.key_len)
        if self._grids is not None:
            g = self._grids
            for h in heads:
                self._rows[(b, h)] = {**weight_row_stats(g["weights"][b, h], pos),
                                      **score_row_stats(g["scores_raw"][b, h], g["scores"][b, h], self.mask)}
            return
        # a linear kernel's factorised weights, or each row's few keys of local ∪ global and
        # hierarchical attention (the two never apply together)
        fast = self._kernel_pass if self._by_kernel else self._range_pass if self._by_ranges else None
        if fast is not None:
            per = self._pass_steps()
            done = []
            for i, h in enumerate(heads):
                report = None if progress is None else (lambda d, _t, i=i: progress(i * per + d, len(heads) * per))
                if fast(b, h, None, report) is not None:
                    done.append(h)
            heads = [h for h in heads if h not in done]  # (a head that may overflow: the exact pass)
            if not heads:
                return
        check_lazy_memory(cfg, "rows", self.memory_estimate, self._budget)
        blocks: dict[int, list[dict[str, torch.Tensor]]] = {h: [] for h in heads}
        slices = row_slices(cfg)
        pacer = Pacer(progress, CHUNK_SECONDS, cfg.dtype, cfg.device)
        plan = pacer.blocks(slices, _row_flops(cfg))  # a block of one head: a step, in parts if slow
        pacer.expect(plan, times=len(heads))
        with torch.inference_mode():
            for rows in slices:
                dist = key_distances(pos[rows], cfg.key_len)  # (r, Skv), shared by the heads
                for h in heads:
                    for part in pacer.each(pacer.blocks([rows], plan.flops_each)):
                        at = slice(part.start - rows.start, part.stop - rows.start)
                        blocks[h].append(self._block_stats(b, h, part, pos, dist[at]))
        for h in heads:
            self._rows[(b, h)] = {name: torch.cat([blk[name] for blk in blocks[h]]) for name in blocks[h][0]}

    def _block_stats(self, b: int, h: int, rows: slice, pos: torch.Tensor, dist: torch.Tensor,
                     tap: Callable[[str, torch.Tensor], None] | None = None) -> dict[str, torch.Tensor]:
        """Row statistics of query rows ``rows`` of (b, h), computed from one block's planes
        (Q·Kᵀ becomes the scores in place once its statistics are taken, the weights replace
        the scores); the block's eager reference context is kept. ``tap(name, plane)`` sees
        each (r, Skv) plane (scores_raw, scores, weights) while it exists."""
        cfg, call = self.config, self._call
        if self._ref_context is None:
            self._ref_context = torch.full(call.q.shape, float("nan"), dtype=call.q.dtype, device=call.q.device)
        # |ALiBi bias| ≤ slope·distance < max(S, Skv): slopes are below 1
        bias_bound = float(max(cfg.seq_len, cfg.key_len)) if cfg.positional == "alibi" else 0.0
        raw = eager.head_scores_raw(call, b, h, rows)  # (r, Skv)
        stats = raw_row_stats(raw.cpu())
        if tap is not None:
            tap("scores_raw", raw)
        top = float(stats["max_abs_score_raw"].max())
        if cfg.prescale_q:  # the scores are another product: free this one first
            del raw
            raw = None
        scores = eager.head_scores(call, b, h, rows, raw, inplace=True)
        del raw
        # (a linear kernel's scores are log φ(q)·φ(k), not bounded by Q·Kᵀ: always scanned)
        finite = math.isfinite(top) and not bool(stats["inf_scores_raw"].any()) and cfg.kernel == "softmax"
        bound = top * abs(call.scale) + bias_bound if finite else None
        stats["inf_scores"] = visible_inf_rows(scores.cpu(), self.key_ranges[rows], bound)
        if tap is not None:
            tap("scores", scores)
        w = torch.softmax(scores, dim=-1)
        del scores
        self._ref_context[b, h, rows] = w @ call.v[b, h // cfg.group_size]
        stats.update(weight_row_stats(w.cpu(), pos[rows], distances=dist))
        if tap is not None:
            tap("weights", w)
        return stats

    def _pass_steps(self) -> int:
        """Progress steps of one head's pass over its rows: row blocks, or the kernel pass's steps."""
        cfg = self.config
        if self._by_kernel:
            chunks = -(-cfg.seq_len // kernel_overview.ROW_CHUNK)
            return 1 + chunks + -(-len(kernel_overview.sample_rows(cfg.seq_len)) // kernel_overview.SAMPLE_CHUNK)
        if self._by_ranges:
            return 2 + len(sparse_overview.pieces(self.key_ranges, cfg, cfg.seq_len, RANGE_ROWS))
        return len(row_slices(cfg))

    def _range_pass(self, b: int, h: int, tile: tuple[int, int] | None,
                    progress: Progress | None) -> dict[str, torch.Tensor | None] | None:
        """A local ∪ global or hierarchical head's row statistics and eager reference context
        from each row's few keys (engine.efficient.sparse_overview), kept; with ``tile`` its
        overview's tile maxima too ({"weights": (R, C)}). None, keeping nothing, when the
        bounds cannot rule out a ±inf Q·Kᵀ (the exact pass counts them). ``progress(done,
        total)`` after each step; an exception it raises cancels."""
        cfg, call = self.config, self._call
        S = cfg.seq_len
        pos = query_positions(S, cfg.key_len)
        chunks = sparse_overview.pieces(self.key_ranges, cfg, S, RANGE_ROWS if tile is None else tile[0])
        total = 2 + len(chunks)
        advance = _counter(progress, total)

        with self._lock, torch.inference_mode():
            sh = sparse_overview.SparseHead(call, b, h)
            if not sh.overflow_free():
                return None
            advance()
            ref = torch.empty(S, cfg.head_dim, dtype=call.q.dtype)
            parts, tiles = [], []
            for rows in chunks:
                rw = sh.weights(pos, rows)
                parts.append(sh.stats(pos, rows, rw))
                ref[rows] = sh.context(rw)
                if tile is not None:
                    tiles.append(sh.tile_max(rw, tile))
                del rw
                advance()
            stats = {n: torch.cat([p[n] for p in parts]) for n in parts[0]}
            future = stats.pop("future")
            sample = kernel_overview.sample_rows(S)  # the largest |Q·Kᵀ| needs every key: a sample
            raw = raw_row_stats(eager.block_scores_raw(call, b, h, sample)[0, 0].cpu())
            stats["max_abs_score_raw"] = torch.full((S,), float("nan")).index_put_(
                (sample,), raw["max_abs_score_raw"].float())
            # overflow_free: no Q·Kᵀ entry is ±inf, and a visible score is that times the scale
            # plus a finite bias (or a summary's, a mean of them): none either
            stats["inf_scores_raw"] = torch.zeros(S, dtype=torch.int64)
            stats["inf_scores"] = torch.zeros(S, dtype=torch.int64)
            advance()
            if self._ref_context is None:
                self._ref_context = torch.full(call.q.shape, float("nan"), dtype=call.q.dtype)
            self._ref_context[b, h] = ref
            self._rows[(b, h)] = stats
            self._future[(b, h)] = future
        return {"weights": torch.cat(tiles) if tiles else None}

    def _range_overview(self, head: int, tile: tuple[int, int], sample: torch.Tensor, batch: int,
                        progress: Progress | None) -> dict[str, torch.Tensor | float | str] | None:
        """head_overview of a local ∪ global or hierarchical head from each row's few keys
        (None: the exact pass)."""
        res = self._range_pass(batch, head, tile, progress)
        if res is None:
            return None
        with torch.inference_mode():  # the histograms' exact rows, one product for all of them
            got = eager.head_rows(self._call, batch, head, sample, upto="scores")
        out: dict[str, torch.Tensor | float | str] = {
            "weights": res["weights"], "reduce": "max",
            "scores_raw": got["scores_raw"].float().cpu(), "scores": got["scores"].float().cpu()}
        valid = self._rows[(batch, head)]["valid"]
        fut = self._future[(batch, head)]
        out["future_share"] = float(fut[valid].mean()) if bool(valid.any()) else math.nan
        return out

    def _kernel_pass(self, b: int, h: int, tile: tuple[int, int] | None,
                     progress: Progress | None) -> dict[str, torch.Tensor | None] | None:
        """A linear-kernel head's row statistics from its factorised weights (engine.efficient.
        overview), kept; with ``tile`` its overview's tile means too ({"weights": (R, C)}).
        None, keeping nothing, when the bounds cannot rule out a ±inf score (the exact pass
        counts them). ``progress(done, total)`` after each step; an exception it raises cancels."""
        cfg = self.config
        S = cfg.seq_len
        pos = query_positions(S, cfg.key_len)
        sample = kernel_overview.sample_rows(S)
        step = kernel_overview.ROW_CHUNK if tile is None else max(tile[0], kernel_overview.ROW_CHUNK // tile[0] * tile[0])
        chunks = [slice(r0, min(S, r0 + step)) for r0 in range(0, S, step)]
        total = self._pass_steps() if tile is None else 1 + len(chunks) + -(-len(sample) // kernel_overview.SAMPLE_CHUNK)
        advance = _counter(progress, total)

        with self._lock, torch.inference_mode():
            kh = kernel_overview.KernelHead(self._call, b, h)
            advance()
            if not kernel_overview.overflow_free(kh):
                return None
            parts, tiles = [], []
            for rows in chunks:
                parts.append(kernel_overview.exact_rows(kh, pos, rows))
                if tile is not None:
                    tiles.append(kernel_overview.tile_means(kh, tile, rows))
                advance()
            sampled = kernel_overview.sampled_rows(kh, pos, sample, advance)
            stats = {n: torch.cat([p[n] for p in parts]) for n in parts[0]}
            future = stats.pop("future")
            for n, vals in sampled.items():
                stats[n] = torch.full((S,), float("nan")).index_put_((sample,), vals)
            # overflow_free: no Q·Kᵀ entry, no visible softmax input is ±inf
            stats["inf_scores_raw"] = torch.zeros(S, dtype=torch.int64)
            stats["inf_scores"] = torch.zeros(S, dtype=torch.int64)
            self._rows[(b, h)] = stats
            self._future[(b, h)] = future
        if not tiles:
            return {"weights": None}
        # a tile no row of it may see is exactly 0 (drawn as a hole), not the rounding of its
        # prefix-sum differences (~1e-14); nor is any mean below 0
        return {"weights": torch.where(visible_tiles(cfg, tile), torch.cat(tiles).clamp_(min=0.0), 0.0)}

    def _kernel_overview(self, head: int, tile: tuple[int, int], sample: torch.Tensor, batch: int,
                         progress: Progress | None) -> dict[str, torch.Tensor | float | str] | None:
        """head_overview of a linear-kernel head from its factorised weights (None: the exact pass)."""
        res = self._kernel_pass(batch, head, tile, progress)
        if res is None:
            return None
        with torch.inference_mode():  # the histograms' exact rows
            picked = kernel_overview.score_rows(self._call, batch, head, sample)
        out: dict[str, torch.Tensor | float | str] = {"weights": res["weights"], "reduce": "mean", **picked}
        valid = self._rows[(batch, head)]["valid"]
        fut = self._future[(batch, head)]
        out["future_share"] = float(fut[valid].mean()) if bool(valid.any()) else math.nan
        return out

    def head_overview(self, head: int, shape: tuple[int, int], sample_rows: torch.Tensor | None = None,
                      batch: int = 0, progress: Progress | None = None) -> dict[str, torch.Tensor | float]:
        """What a long sequence's window shows of one head, in one pass over its rows:

          weights       (≤ rows, ≤ cols) float32: block max of the weights (pooled_grid's tiles),
                        or for a linear kernel's factorised pass (:attr:`stat_sample` not None)
                        their exact block mean
          reduce        "max" or "mean": which of the two ``weights`` holds
          scores_raw, scores   (n, Skv) float32: the exact rows ``sample_rows`` (n,) int64
          future_share  mean share of a valid row's weight on keys after its query (NaN if none)

        and the head's row statistics (row_stats) kept, so entropy and the head summaries
        need no second pass. ``progress(done, total)`` after each block; an exception it raises
        cancels (nothing of the pass is kept). A linear kernel's long trace (:attr:`_by_kernel`)
        takes O(S·F) instead of O(S·Skv): see engine.efficient.overview."""
        self._check_head("weights", head, batch)
        cfg = self.config
        rows_n, cols_n = (max(1, int(n)) for n in shape)
        tile = (-(-cfg.seq_len // rows_n), -(-cfg.key_len // cols_n))
        sample = torch.zeros(0, dtype=torch.int64) if sample_rows is None else sample_rows.to(torch.int64)
        if self._by_kernel:
            ov = self._kernel_overview(head, tile, sample, batch, progress)
            if ov is not None:
                return ov
        if self._by_ranges:
            ov = self._range_overview(head, tile, sample, batch, progress)
            if ov is not None:
                return ov
        pos = query_positions(cfg.seq_len, cfg.key_len)
        keys = torch.arange(cfg.key_len)
        out: dict[str, torch.Tensor | float | str] = {"reduce": "max"}
        # held grids (eager, or small enough to materialise) are read a block of rows at a time
        # too: the statistics' temporaries stay a block's, not a whole (S, Skv) plane's
        slices = row_slices(cfg, multiple=tile[0])  # blocks on tile boundaries: no carry
        if not self.blocked and self._grids is None:  # the grids at once, a report (of none done) a piece
            self._materialise(None if progress is None else (lambda _d, _t: progress(0, len(slices))))
        held = None if self.blocked else {n: self._grid(n)[batch, head] for n in GRID_NAMES}
        if held is None:
            check_lazy_memory(cfg, "rows", self.memory_estimate, self._budget)
        pooled, picked, fut_parts = [], {"scores_raw": [], "scores": []}, []
        blocks = []
        # causal with a visible key in every row: masked (future) weights are exactly 0
        no_future = cfg.causal and bool(self.key_ranges.any(-1).all())
        pacer = Pacer(progress, CHUNK_SECONDS, cfg.dtype, cfg.device)
        plan = pacer.blocks(slices, _row_flops(cfg), multiple=tile[0])  # parts: whole tiles
        pacer.expect(plan)
        with self._lock, torch.inference_mode():
            for rows in pacer.each(plan):
                in_block = sample[(sample >= rows.start) & (sample < rows.stop)] - rows.start

                def tap(name: str, plane: torch.Tensor, rows=rows, in_block=in_block) -> None:
                    if name == "weights":
                        pooled.append(pool_tiles(plane.cpu(), tile, "max"))
                        if no_future:  # every row sees a key, none after it: exactly 0
                            fut_parts.append(torch.zeros(plane.shape[0]))
                            return
                        wf = torch.nan_to_num(plane.float().cpu(), nan=0.0)
                        fut_parts.append((wf * (keys[None, :] > pos[rows][:, None])).sum(-1))
                    else:
                        picked[name].append(plane[in_block].float().cpu())

                dist = key_distances(pos[rows], cfg.key_len)
                if held is None:
                    blocks.append(self._block_stats(batch, head, rows, pos, dist, tap))
                else:
                    raw, scores, w = (held[n][rows] for n in ("scores_raw", "scores", "weights"))
                    tap("scores_raw", raw)
                    tap("scores", scores)
                    tap("weights", w)
                    blocks.append({**weight_row_stats(w, pos[rows], distances=dist),
                                   **score_row_stats(raw, scores, self.key_ranges[rows])})
            if (batch, head) not in self._rows:
                self._rows[(batch, head)] = {n: torch.cat([blk[n] for blk in blocks]) for n in blocks[0]}
        out["weights"] = torch.cat(pooled)
        for name in ("scores_raw", "scores"):
            out[name] = torch.cat(picked[name]) if picked[name] else torch.zeros(0, cfg.key_len)
        fut = torch.cat(fut_parts)
        valid = self.row_stats(batch, head)["valid"]
        out["future_share"] = float(fut[valid].mean()) if bool(valid.any()) else math.nan
        return out

    def _all_rows(self, progress: Progress | None = None) -> None:
        cfg = self.config
        with self._lock:
            todo = [(b, [h for h in range(cfg.n_heads) if (b, h) not in self._rows]) for b in range(cfg.batch)]
            todo = [(b, heads) for b, heads in todo if heads]
            n_blocks = self._pass_steps()
            total = sum(len(heads) for _, heads in todo) * n_blocks
            offset = 0
            for b, heads in todo:
                report = None if progress is None else (lambda d, _t, o=offset: progress(o + d, total))
                self._compute_rows(b, heads, report)
                offset += len(heads) * n_blocks

    def _row_field(self, name: str) -> torch.Tensor:
        """entropy or jacobian_norm, (B, H, S) float32: from the whole weights when not blocked
        (one vectorised pass), else, or when every head's row statistics are kept already (a
        long frame's passes), gathered from those."""
        with self._lock:
            if name not in self._row_fields:
                if not self.blocked and not self.rows_kept:
                    fn = row_entropy if name == "entropy" else softmax_jacobian_norm
                    self._row_fields[name] = fn(self.weights)
                else:
                    self._all_rows()
                    cfg = self.config
                    self._row_fields[name] = torch.stack([
                        torch.stack([self._rows[(b, h)][name] for h in range(cfg.n_heads)])
                        for b in range(cfg.batch)])
            return self._row_fields[name]

    @property
    def entropy(self) -> torch.Tensor:
        """(B, H, S) entropy of each weight row, nats."""
        return self._row_field("entropy")

    @property
    def softmax_jacobian_norm(self) -> torch.Tensor:
        """(B, H, S) ‖∂softmax/∂s‖_F of each row of scores."""
        return self._row_field("jacobian_norm")

    # ---- the eager reference ------------------------------------------------------------------
    def _set_reference(self, context: torch.Tensor, progress: Progress | None = None) -> None:
        """Keep the eager output from the reference context (B, H, S, Dh) and its max |Δ|
        (the W_O product a piece of rows at a time, with ``progress``, when it is slow)."""
        cfg = self.config
        B, S, d = cfg.batch, cfg.seq_len, cfg.d_model
        pacer = Pacer(progress, CHUNK_SECONDS, cfg.dtype, cfg.device)
        plan = pacer.plan(B * S, 2 * d * d)
        if len(plan.pieces) == 1:  # quick: no report of its own
            pacer = Pacer(None, CHUNK_SECONDS)
        pacer.expect(plan)
        ref = paced_matmul(context.transpose(1, 2).reshape(B, S, d), self._w_o, pacer, plan)  # (B, S, d)
        self._reference = (ref.cpu(), _max_abs_diff(self.output, ref.cpu()))

    def _ensure_reference(self, progress: Progress | None = None) -> tuple[torch.Tensor, float] | None:
        if self.config.backend == "eager":  # (a variant too: the contract's None for eager)
            return None
        if self._by_kernel:  # its reference is O(S·Skv) a head: not measured (see backend_max_abs_diff)
            return None
        with self._lock:
            if self._reference is None:
                if not self.blocked:
                    self._materialise()
                else:
                    try:
                        self._all_rows(progress)
                    except ConfigError:  # the blocked reference does not fit: not measured
                        return None
                    with torch.inference_mode():
                        self._set_reference(self._ref_context, progress)
                    self._ref_context = None
            return self._reference

    @property
    def attention_ms(self) -> float:
        """Milliseconds of this trace's attention pass: the backend's, eager's, or an efficient
        variant's own (NaN when none was timed)."""
        t = self.timings_ms
        return next((t[k] for k in ("backend", "eager", "efficient") if k in t), math.nan)

    @property
    def backend_max_abs_diff(self) -> float | None:
        """max |output − eager output| over the finite entries; None for the eager backend
        (an efficient variant's too) and where the eager reference (even block by block) does
        not fit the budget. An efficient variant runs its own algorithm whatever the backend
        (engine.efficient): on sdpa or flash this is its blocked or prefix-sum output against
        the eager formula of its own attention matrix (softmax of the variant's scores, times
        V: what eager materialises), not against full softmax (that is approximation_report).
        None too for a blocked linear-kernel trace (:attr:`stat_sample` not None): its eager
        reference would be the O(S·Skv) pass the factorised statistics avoid.
        Measured on first access for a fused trace (with the grids when they are computed)."""
        ref = self._ensure_reference()
        return None if ref is None else ref[1]

    @property
    def eager_output(self) -> torch.Tensor | None:
        """(B, S, d) the eager reference output of a fused trace (None for eager, or when it
        does not fit); computed like backend_max_abs_diff."""
        ref = self._ensure_reference()
        return None if ref is None else ref[0]


def _counter(progress: Progress | None, total: int) -> Callable[[], None]:
    """A step counter for a pass of `total` steps: each call reports ``progress(done, total)``."""
    done = [0]

    def advance() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    return advance


def _row_flops(cfg: AttentionConfig) -> float:
    """FLOPs of one query row of one (batch row, head) in the blocked passes: Q·Kᵀ, the
    reference's weights·V and the row statistics (about as much again)."""
    return 6.0 * cfg.key_len * cfg.head_dim


def _split_heads(t: torch.Tensor, n_heads: int) -> torch.Tensor:
    B, N, _ = t.shape
    return t.view(B, N, n_heads, -1).transpose(1, 2)  # (B, heads, N, Dh)


def _max_abs_diff(out: torch.Tensor, ref: torch.Tensor) -> float:
    """max |out − ref| where the eager reference is finite (NaN rows are reported apart)."""
    ok = torch.isfinite(ref)
    if not bool(ok.any()):
        return 0.0
    d = (out.float() - ref.float()).abs()[ok]
    return float(d.max()) if d.numel() else 0.0


#: Query rows a local ∪ global or hierarchical row pass's pieces start on (without a tile).
RANGE_ROWS = 64

#: A run's long stages (projections, attention, the eager reference) are cut into pieces of
#: about this long each (engine.pacing), with progress reported (and a cancel taken) between
#: them, when a progress callback is given.
CHUNK_SECONDS = 0.1


def run(config: AttentionConfig, x: torch.Tensor | None = None, progress: Progress | None = None) -> AttentionTrace:
    """Compute one attention layer for `config`; see AttentionTrace for shapes.

    `x` optionally gives the input embeddings (B, S, d_model) before positional
    encoding; otherwise they are drawn N(0, 1) from the seed. ``progress(done, total)`` is
    called between pieces of about CHUNK_SECONDS of the projections and the attention
    (engine.pacing; a float16 product on a CPU without half arithmetic runs for seconds); an
    exception it raises stops the run.
    """
    if not isinstance(config, AttentionConfig):
        raise ConfigError(f"run() needs an AttentionConfig, got {type(config).__name__}")
    # weights, activations, grids (eager only) and temporaries against the budget, before any allocation
    budget = memory_budget()
    est = check_memory(config)
    B, S, d, H = config.batch, config.seq_len, config.d_model, config.n_heads
    if x is not None:
        x = torch.as_tensor(x)
        if tuple(x.shape) != (B, S, d):
            raise ConfigError(f"x must have shape (batch, seq_len, d_model) = {(B, S, d)}, got {tuple(x.shape)}")
    dev = torch.device(config.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise BackendUnavailable("device 'cuda' was asked for but no CUDA device is available")
    if dev.type == "cuda" and config.efficient:
        raise BackendUnavailable("the efficient variants (a linear kernel, global tokens, block summaries) "
                                 "run on the CPU only: set device='cpu'")
    dtype = torch_dtype(config.dtype)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    with torch.inference_mode():
        x0 = (token_embeddings(config) if x is None else x.detach().float().cpu()).clone()
        kv_src = memory_input(config)  # (B, Skv, d) with its additive positions, or None
        Skv = config.key_len
        q_pos, k_pos = query_positions(S, Skv), torch.arange(Skv)
        if config.positional == "sinusoidal":
            x0 += sinusoidal(q_pos, d)
        elif config.positional == "learned":
            x0 += learned(q_pos, d, config.seed)
        pacer = Pacer(progress, CHUNK_SECONDS, config.dtype, config.device)
        q_plan, kv_plan, att_plan, o_plan = run_plans(pacer, config)
        # drawing 4·d² normals: ~0.3 s a matrix at d = 4096, a report (of none done) after each
        w = init_weights(config, check=(lambda: progress(0, pacer.total)) if pacer.active else None)
        xd = x0.to(dev, dtype)
        src = xd if kv_src is None else kv_src.to(dev, dtype)

        q = _split_heads(paced_matmul(xd, w.w_q.to(dev, dtype), pacer, q_plan), H)  # (B, H, S, Dh)
        k = _split_heads(paced_matmul(src, w.w_k.to(dev, dtype), pacer, kv_plan), config.kv_heads)  # (B, Hkv, Skv, Dh)
        v = _split_heads(paced_matmul(src, w.w_v.to(dev, dtype), pacer, kv_plan), config.kv_heads)
        if config.positional == "rope":
            q, k = rope(q, q_pos.to(dev)), rope(k, k_pos.to(dev))
        # contiguous (B, heads, N, Dh), not views of the (B, N, heads·Dh) projections: torch's
        # fused kernels run about twice as fast on them, and the eager steps, a head's grid and
        # a block of rows then all multiply the same layout (the same numbers)
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        ranges = KeyRanges.of(config)  # (S,) each: the mask's rows
        # the eager steps read the whole grid's mask: built here, once (held by the trace); a
        # fused backend or an efficient variant reads rows of the ranges: no (S, Skv) grid
        materialise = config.backend == "eager" and not config.efficient
        mask = ranges.dense() if materialise else None
        # no bias tensor: the eager steps compute ALiBi whole, a fused backend per chunk of heads
        call = AttentionCall(config, q, k, v, ranges if mask is None else mask.to(dev), None,
                             config.effective_scale)
        w_o = w.w_o.to(dev, dtype)

        def merge(context: torch.Tensor) -> torch.Tensor:
            return paced_matmul(context.transpose(1, 2).reshape(B, S, d), w_o, pacer, o_plan)  # (B, S, d)

        grids = None
        if config.efficient:  # a way out of O(n²): its own algorithm, its grids on first access
            t1 = time.perf_counter()
            context, impl = efficient_attend(call, (pacer, att_plan))
            output = merge(context)
            timings["efficient"] = (time.perf_counter() - t1) * 1e3
        elif config.backend == "eager":
            steps = eager_steps(call, (pacer, att_plan))
            context, impl = steps["context"], "eager"
            grids = {n: steps[n].cpu() for n in GRID_STEPS}
            output = merge(context)
            timings["eager"] = (time.perf_counter() - t0) * 1e3
        else:
            t1 = time.perf_counter()
            context, impl = attend(config.backend, call, (pacer, att_plan))
            context = context.to(dtype)
            output = merge(context)
            timings["backend"] = (time.perf_counter() - t1) * 1e3

        trace = AttentionTrace(
            config=config,
            x=x0 if x0.dtype == dtype else x0.to(dtype),
            q=q.cpu(), k=k.cpu(), v=v.cpu(), key_ranges=ranges, mask=mask,
            context=context.cpu(), output=output.cpu(),
            backend_impl=impl, call=call, w_o=w_o, weights_used=w, grids=grids,
            timings_ms=timings, budget=budget, estimate=est, memory=kv_src,
        )
    timings["total"] = (time.perf_counter() - t0) * 1e3
    return trace


def run_backend_comparison(config: AttentionConfig, x: torch.Tensor | None = None,
                           progress: Progress | None = None) -> dict[str, dict]:
    """Each backend → {"impl", "max_abs_diff", "ms"} or {"error"}: for the diagnostics panel.

    "ms" is the backend's own attention time (the eager steps for eager). A long (blocked)
    fused trace computes the exact eager reference block by block once; the other fused
    backend is compared with the same reference."""
    from .backends import available_backends

    out: dict[str, dict] = {}
    reference: torch.Tensor | None = None  # (B, S, d) eager output of a blocked trace
    for name, why in available_backends(config.device, config.dtype).items():
        if why is not None:
            out[name] = {"error": why}
            continue
        try:
            tr = run(replace(config, backend=name), x, progress=progress)  # (progress may stop it)
        except (BackendUnavailable, ConfigError) as exc:
            out[name] = {"error": str(exc)}
            continue
        ms = tr.attention_ms
        if name != "eager" and tr.blocked and reference is not None:
            diff = _max_abs_diff(tr.output, reference)
        else:
            diff = tr.backend_max_abs_diff
            if name != "eager" and tr.blocked:
                reference = tr.eager_output
        out[name] = {"impl": tr.backend_impl, "max_abs_diff": diff, "ms": ms}
    return out
