"""Long work cut into pieces of about a tenth of a second, with progress (and so a cancel)
between them (issue 28, item 8: a float16 sdpa frame went 8–10 s without a report).

    pacer = Pacer(progress, seconds=0.1, dtype="float16")
    q_plan = pacer.plan(B * S, flops_each=2 * d * d)   # pieces of the B·S rows, by the estimate
    pacer.expect(q_plan, ...)                           # the total progress counts
    for rows in pacer.each(q_plan): ...                 # progress(done, total) after each piece

A plan's pieces come from the measured matmul rate (`engine.speed`), so each piece is about
`seconds` of FLOPs; the progress total is their number, known before the work starts. While
the work runs, a part that took longer than it should (large half-precision products ran up
to 4× slower than the small product measured, the row passes' softmax and statistics are
slower than a product, other processes take the CPU) lowers the rate used for that kind of
work (remembered per dtype, device and kind for the next runs), and later parts are cut
smaller; the progress count moves once per piece, each part reports (the same count) so a
cancel is seen between parts. Work estimated under 5 ms is never cut (its time is overhead).
Without a progress callback, or when a plan is one piece that fits, the work runs as one
operation, exactly as it would without pacing (`whole`, then `passed` counts it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

Progress = Callable[[int, int], None]
#: A part that ran at least this long measures the real rate (shorter ones are overhead).
_MEASURED_S = 0.02
#: Work estimated under this many seconds is never cut finer, and teaches no rate: its time
#: is the calls' overhead, not their FLOPs.
_SMALL_S = 0.005
#: A fused attention piece's mask planes stay under this many bytes (see run_plans).
PIECE_BYTES = 64 * 2**20
#: A paced fused call holds at least this many query rows where it can (fewer heads per call
#: instead): torch's CPU flash kernel takes query rows in blocks of 256 from 768 rows up, of
#: 64 or 32 below, and ran 25–60 % slower per row on parts of 128–512 rows (S = 8192).
FUSED_MIN_ROWS = 768
_ITEM = {"float32": 4, "float16": 2, "bfloat16": 2}
#: (dtype, device, plan kind) → the rate the last measured part ran at: a new pacer starts there
_OBSERVED: dict[tuple[str, str, str], float] = {}


@dataclass(frozen=True)
class Plan:
    """pieces: slices of range(n) in order; flops_each: the work of one item; multiple: the
    items a part is a whole number of (but the last)."""

    pieces: tuple[slice, ...]
    flops_each: float
    multiple: int = 1
    kind: str = "matmul"  # what the rate seen is remembered by (products, the row passes)
    #: a fused attention plan's query heads per call (its items are rows of that many heads,
    #: the plan runs once per chunk of heads); 0: every head in each call
    heads: int = 0


def _cut(start: int, stop: int, step: int) -> list[slice]:
    return [slice(a, min(stop, a + step)) for a in range(start, stop, step)]


class Pacer:
    """See the module docstring. ``rate``: FLOP/s (default: measured for dtype and device)."""

    def __init__(self, progress: Progress | None, seconds: float, dtype: str = "float32",
                 device: str = "cpu", rate: float | None = None) -> None:
        self.progress, self.seconds = progress, float(seconds)
        if rate is None and progress is not None:
            from .speed import matmul_flops_per_s

            rate = matmul_flops_per_s(dtype, device)
        self.rate = float(rate or 1.0)
        self._key = (dtype, device)
        self.done = self.total = 0

    def effective(self, kind: str) -> float:
        """The rate parts of ``kind`` are cut by: the estimate, or lower where the last
        measured part ran slower (a large half-precision product runs slower than the small
        one measured, the row passes' softmax and statistics slower than a product)."""
        return min(self.rate, _OBSERVED.get((*self._key, kind), self.rate))

    @property
    def active(self) -> bool:
        return self.progress is not None

    def items_per_piece(self, flops_each: float, multiple: int = 1, rate: float | None = None) -> int:
        """Items of ``flops_each`` in about ``seconds`` of work, a whole number of ``multiple``."""
        k = int(self.seconds * (rate or self.rate) / max(float(flops_each), 1.0))
        return max(multiple, k - k % multiple)

    def plan(self, n: int, flops_each: float, multiple: int = 1, max_items: int | None = None,
             heads: int = 0) -> Plan:
        """The pieces of ``n`` items (one when there is no progress to report); ``max_items``
        bounds a piece whatever the rate (what a piece holds grows with its items)."""
        n = int(n)
        if not self.active or n <= 1:
            return Plan((slice(0, n),), flops_each, multiple, heads=heads)
        step = self.items_per_piece(flops_each, multiple)
        if max_items is not None:
            step = max(multiple, min(step, max_items - max_items % multiple))
        return Plan(tuple(_cut(0, n, step)), flops_each, multiple, heads=heads)

    def blocks(self, blocks, flops_each: float, multiple: int = 1) -> Plan:
        """A plan of given pieces (the memory-sized row blocks of the blocked paths): each is
        one progress step, cut into parts where its work is over ``seconds``."""
        return Plan(tuple(blocks), flops_each, multiple, kind="rows")

    def expect(self, *plans: Plan, times: int = 1) -> None:
        """Count ``plans`` (each ``times`` over) in the progress total."""
        self.total += times * sum(len(p.pieces) for p in plans)

    def whole(self, plan: Plan) -> bool:
        """Whether ``plan`` runs as one operation: one piece, within one part at the rate seen
        (the caller then runs it unpaced, exactly as without progress, and calls `passed`)."""
        if len(plan.pieces) != 1:
            return False
        n = plan.pieces[0].stop - plan.pieces[0].start
        return (not self.active or n * plan.flops_each / self.rate < _SMALL_S
                or n <= self.items_per_piece(plan.flops_each, plan.multiple, self.effective(plan.kind)))

    def passed(self, plan: Plan) -> None:
        """``plan`` done in one go: its count, and a report."""
        if self.active:
            self.done += len(plan.pieces)
            self.progress(min(self.done, self.total), max(self.total, 1))

    def each(self, plan: Plan) -> Iterator[slice]:
        """The parts of ``plan``'s pieces, in order; progress after each part (the count moves
        at the end of each piece). An exception from progress stops the work there."""
        for piece in plan.pieces:
            if not self.active:
                yield piece
                continue
            start = piece.start
            small = (piece.stop - piece.start) * plan.flops_each / self.rate < _SMALL_S
            while start < piece.stop:  # each part cut by the rate seen so far
                step = piece.stop - start if small else self.items_per_piece(
                    plan.flops_each, plan.multiple, self.effective(plan.kind))
                part = slice(start, min(piece.stop, start + step))
                t0 = time.perf_counter()
                yield part
                dt = time.perf_counter() - t0
                work = (part.stop - part.start) * plan.flops_each
                if dt >= _MEASURED_S and work / self.rate >= _SMALL_S:
                    _OBSERVED[(*self._key, plan.kind)] = min(self.rate, work / dt)
                start = part.stop
                if start >= piece.stop:
                    self.done += 1
                self.progress(min(self.done, self.total), max(self.total, 1))

def paced_matmul(x: torch.Tensor, w: torch.Tensor, pacer: Pacer, plan: Plan | None = None) -> torch.Tensor:
    """x (B, N, d) @ w (d, e) → (B, N, e), a piece of the B·N rows at a time (``plan``: of
    B·N items, from :meth:`Pacer.plan`, made here when not given); the whole product at once
    when the plan is one piece. (Rows of the batch and the sequence alike: pieces of N rows
    across a batch of 128 were seconds long each, the cancel waited for them.)"""
    B, N, d = x.shape
    plan = plan or pacer.plan(B * N, 2 * d * w.shape[-1])
    if pacer.whole(plan):
        out = x @ w
        pacer.passed(plan)
        return out
    flat = x.reshape(B * N, d)
    parts = [flat[rows] @ w for rows in pacer.each(plan)]
    return (parts[0] if len(parts) == 1 else torch.cat(parts)).reshape(B, N, -1)



def run_plans(pacer: Pacer, config) -> tuple[Plan, Plan, Plan, Plan]:
    """engine.run's plans (Q, K and V, the attention, W_O), counted in the pacer's total: the
    projections by rows, the attention by query rows of every head (the eager steps make
    two passes, Q·Kᵀ and weights·V; a fused kernel does both at once)."""
    B, S, Skv, d, H = config.batch, config.seq_len, config.key_len, config.d_model, config.n_heads
    eager = config.backend == "eager"
    q_plan, o_plan = pacer.plan(B * S, 2 * d * d), pacer.plan(B * S, 2 * d * d)
    kv_plan = pacer.plan(B * Skv, 2 * d * config.kv_heads * config.head_dim)
    if config.efficient:  # engine.efficient: one pass over pieces of query rows, no grid
        from .efficient.costs import attention_flops

        att_plan = pacer.plan(S, attention_flops(config) / S)
        pacer.expect(q_plan, o_plan, att_plan)
        pacer.expect(kv_plan, times=2)
        return q_plan, kv_plan, att_plan, o_plan
    # a fused kernel's piece builds its rows' mask planes (bool, its negation, the additive
    # plane: (rows, Skv) each): bounded, whatever the rate (a 0.1 s piece at d_head 16 and
    # 16384 keys was 9,692 rows, a 635 MB plane); the eager steps hold the whole grids anyway
    rows_max = None if eager else max(1, PIECE_BYTES // (Skv * (2 + _ITEM.get(config.dtype, 4))))
    per_row = 2 * B * Skv * config.head_dim * (1 if eager else 2)  # one query row of one head
    heads = 0 if eager else fused_heads(pacer, config, per_row)
    att_plan = pacer.plan(S, per_row * (heads or H), max_items=rows_max, heads=heads)
    pacer.expect(q_plan, o_plan)
    pacer.expect(kv_plan, times=2)
    pacer.expect(att_plan, times=2 if eager else len(fused_head_chunks(H, config.group_size, heads)))
    return q_plan, kv_plan, att_plan, o_plan


def fused_heads(pacer: Pacer, config, per_row: float) -> int:
    """Query heads per fused call of a paced run: 0 (every head, cut by rows alone) when a
    part of all of them still holds FUSED_MIN_ROWS rows (or the run is not paced, or it has
    ALiBi, whose per-head bias planes are chunked by memory in the backend); else as many
    heads, whole KV groups or inside one, as take FUSED_MIN_ROWS rows in one part (at least
    one: fewer rows then). ``per_row``: FLOPs of one query row of one head."""
    H, S = config.n_heads, config.seq_len
    if not pacer.active or config.positional == "alibi":
        return 0
    rows = min(S, FUSED_MIN_ROWS)
    fit = int(pacer.seconds * pacer.rate // max(per_row * rows, 1.0))
    if fit >= H:
        return 0
    return fused_head_chunks(H, config.group_size, max(1, fit))[0].stop


def fused_head_chunks(n_heads: int, group: int, heads: int) -> list[slice]:
    """Ranges of ``heads`` query heads (0: one range of all), made whole KV groups or lying
    inside one, so each sees a contiguous range of KV heads that divides it (what
    ``enable_gqa`` needs); the last may be shorter."""
    c = n_heads if heads <= 0 else min(heads, n_heads)
    if c >= group:
        c -= c % group
    else:
        while group % c:
            c -= 1
    return [slice(h, min(h + c, n_heads)) for h in range(0, n_heads, c)]


def holding(progress: Progress | None) -> tuple[Progress | None, Progress | None]:
    """(report, hold): ``report`` passes reports on and remembers the last; ``hold`` reports
    that last one again (a later stage's pieces, each a cancel check without a count of its
    own), or its own count when nothing was reported yet."""
    if progress is None:
        return None, None
    at = [0, 0]

    def report(done: int, total: int) -> None:
        at[:] = done, total
        progress(done, total)

    def hold(done: int, total: int) -> None:
        if at[1]:
            progress(*at)
        else:
            progress(done, total)

    return report, hold


def in_stages(progress: Progress | None, weights: list[float]) -> list[Progress | None]:
    """One progress function per stage of work run one after another, each stage counting
    from 0 with its own total, reported to ``progress`` as one count that only goes forward:
    stage i's (done, total) becomes the share of the work before it plus ``weights[i]``'s
    share times done/total, in thousandths. ``weights``: each stage's cost (FLOPs, say)."""
    if progress is None:
        return [None] * len(weights)
    whole = sum(max(float(w), 0.0) for w in weights) or 1.0
    stages, before = [], 0.0
    for w in weights:
        share = max(float(w), 0.0) / whole

        def stage(done: int, total: int, start=before, share=share) -> None:
            progress(round(1000 * (start + share * min(done, total) / max(total, 1))), 1000)

        stages.append(stage)
        before += share
    return stages
