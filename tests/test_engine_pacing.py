"""Every long stage of a frame reports progress (and so takes a cancel) within a bounded amount
of work (issue 28, item 8: float16 frames went 8–10 s without a report; Cancel took 3–9 s).

Not timed: the matmul rate is pinned low (`RATE`), so a piece of CHUNK_SECONDS is a known
number of FLOPs, and the FLOPs each kernel really does between two progress callbacks are
counted (torch's FlopCounterMode for the products, the attention kernels by their shapes):
at most half a second's worth of work at that rate between any two reports, from the first
product to the frame's end, for the fused and the eager backends on the long-frame path.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

import engine.speed
import engine.trace as T
from engine import AttentionConfig
from engine.pacing import Pacer, paced_matmul

RATE = 2e8  # FLOP/s, pinned: a piece of CHUNK_SECONDS is 2e7 FLOPs
BOUND = 0.5 * RATE  # the work allowed between two reports: "at least every 0.5 s"


class _Counted:
    """FLOPs done so far: the products (FlopCounterMode) plus the attention kernels."""

    def __init__(self, monkeypatch) -> None:
        self.mode = FlopCounterMode(display=False)
        self.attention = 0
        real = F.scaled_dot_product_attention

        def sdpa(q, k, v, *args, **kwargs):
            self.attention += 4 * q.shape[:-2].numel() * q.shape[-2] * k.shape[-2] * q.shape[-1]
            return real(q, k, v, *args, **kwargs)

        monkeypatch.setattr(F, "scaled_dot_product_attention", sdpa)

    def __call__(self) -> int:
        return int(self.mode.get_total_flops()) + self.attention


@pytest.fixture
def pinned(monkeypatch):
    monkeypatch.setattr(engine.speed, "matmul_flops_per_s", lambda dtype, device="cpu": RATE)
    monkeypatch.setattr("engine.pacing._OBSERVED", {})
    return _Counted(monkeypatch)


def _work_between_reports(flops, fn) -> tuple[list[int], list[tuple[int, int]]]:
    """fn(progress) run under the counter: the FLOPs done before the first report, between
    each two, and after the last; and the reports."""
    marks, reports = [flops()], []

    def progress(done, total):
        marks.append(flops())
        reports.append((done, total))

    with torch.inference_mode(), flops.mode:
        fn(progress)
        marks.append(flops())
    return [b - a for a, b in itertools.pairwise(marks)], reports


@pytest.mark.parametrize("backend", ["sdpa", "flash", "eager"])
def test_a_long_frame_reports_within_half_a_second_of_work(pinned, backend):
    from explorer.frame import build_frame

    cfg = AttentionConfig(seq_len=640, d_model=256, n_heads=4, backend=backend, causal=True)
    build_frame(cfg)  # (the scores panel's √d_k sweep: float32 whatever the config, cached per mask)
    gaps, reports = _work_between_reports(pinned, lambda progress: build_frame(cfg, progress=progress))
    total = sum(gaps)
    assert total > 20 * BOUND / 10, "the frame did less work than its stages should"
    assert max(gaps) <= BOUND, (f"{max(gaps) / RATE:.2f} s of work at the pinned rate between two reports "
                                f"(report {gaps.index(max(gaps))} of {len(reports)})")
    assert reports[-1][0] == reports[-1][1]  # progress reached its total


def test_the_run_alone_paces_its_projections_and_attention(pinned):
    """engine.run: Q, K, V, the attention kernel and W_O, each in pieces; the numbers are the
    unpaced run's."""
    cfg = AttentionConfig(seq_len=640, d_model=256, n_heads=4, backend="sdpa", positional="alibi")
    gaps, reports = _work_between_reports(pinned, lambda progress: T.run(cfg, progress=progress))
    assert max(gaps) <= BOUND and len(reports) > 20
    totals = {t for _d, t in reports}
    assert len(totals) == 1 and reports[-1][0] == reports[-1][1]  # one total, known from the start
    paced = T.run(cfg, progress=lambda d, t: None)
    plain = T.run(cfg)
    torch.testing.assert_close(paced.output, plain.output, rtol=1e-5, atol=1e-6)


def test_a_large_batch_of_short_sequences_is_paced_across_the_batch(pinned):
    """The projections were cut by rows of S across the whole batch: with 256 sequences of 4
    tokens one row was over half a second of work (a Cancel waited seconds in a float16
    backend comparison); pieces now cut the B·S rows, with the unpaced numbers."""
    cfg = AttentionConfig(batch=256, seq_len=4, d_model=512, n_heads=4, backend="sdpa")
    assert 2 * cfg.batch * cfg.d_model**2 > BOUND  # one S-row across the batch: too long a piece
    gaps, reports = _work_between_reports(pinned, lambda progress: T.run(cfg, progress=progress))
    assert max(gaps) <= BOUND and reports[-1][0] == reports[-1][1]
    torch.testing.assert_close(T.run(cfg, progress=lambda d, t: None).output, T.run(cfg).output,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("backend", "kv_heads"), [("sdpa", 4), ("flash", 4), ("flash", 2)])
def test_a_paced_fused_call_takes_fewer_heads_rather_than_few_query_rows(pinned, monkeypatch, backend, kv_heads):
    """torch's CPU flash kernel ran 25–60 % slower per row on calls of 128–512 query rows than
    on 768 or more (its row blocks shrink below 768): where one head's 768 rows fit a part, a
    paced fused run calls fewer heads with many rows, still reports within the bound and
    reaches its total, and gives the unpaced numbers."""
    cfg = AttentionConfig(seq_len=1024, d_model=16, n_heads=4, n_kv_heads=kv_heads, backend=backend)  # (GQA too)
    per_row_head = 4 * cfg.key_len * cfg.head_dim
    assert per_row_head * 768 <= 0.1 * RATE < per_row_head * cfg.n_heads * 768  # all heads: fewer rows
    rows = []
    counted = F.scaled_dot_product_attention

    def sdpa(q, k, v, *args, **kwargs):
        rows.append(q.shape[-2])
        return counted(q, k, v, *args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", sdpa)
    gaps, reports = _work_between_reports(pinned, lambda progress: T.run(cfg, progress=progress))
    assert rows and min(rows) >= 768, rows
    assert max(gaps) <= BOUND and reports[-1][0] == reports[-1][1]
    assert len({t for _d, t in reports}) == 1  # the total known from the start
    torch.testing.assert_close(T.run(cfg, progress=lambda d, t: None).output, T.run(cfg).output,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["sdpa", "eager"])
def test_a_long_frames_progress_only_goes_forward(pinned, backend):
    """The run counted to its total, then the heads' passes started again from 0: the bar
    ran back to empty halfway through a long frame."""
    from explorer.frame import build_frame

    cfg = AttentionConfig(seq_len=640, d_model=256, n_heads=4, backend=backend, causal=True)
    _gaps, reports = _work_between_reports(pinned, lambda progress: build_frame(cfg, progress=progress))
    shares = [d / t for d, t in reports]
    assert len(reports) > 20 and shares[-1] == 1.0
    assert all(b >= a for a, b in itertools.pairwise(shares)), "the progress went backwards"


def test_paced_causal_attention_reads_only_the_keys_its_rows_see(pinned):
    """A causal frame cut into pieces of query rows: each piece reads the keys up to its last
    row (about half the kernel's work of reading them all), with the unpaced numbers."""
    cfg = AttentionConfig(seq_len=640, d_model=256, n_heads=4, backend="sdpa", causal=True)
    with torch.inference_mode():
        plain = T.run(cfg)
        pinned.attention = 0
        paced = T.run(cfg, progress=lambda d, t: None)
    whole = 4 * cfg.n_heads * cfg.seq_len * cfg.key_len * cfg.head_dim
    assert 0 < pinned.attention <= 0.65 * whole
    torch.testing.assert_close(paced.output, plain.output, rtol=1e-5, atol=1e-6)


def test_a_slow_piece_cuts_the_next_ones_finer(monkeypatch):
    """A piece that runs slower than the estimate lowers the rate the next pieces are cut by:
    more reports, the same product."""
    clock = iter(range(0, 10**6))
    monkeypatch.setattr("engine.pacing.time.perf_counter", lambda: next(clock) * 1.0)  # every part: 1 s
    monkeypatch.setattr("engine.pacing._OBSERVED", {})
    reports = []
    pacer = Pacer(lambda d, t: reports.append((d, t)), 0.1, rate=1e6)
    x, w = torch.randn(1, 400, 50), torch.randn(50, 10)
    plan = pacer.plan(400, 2 * 50 * 10)  # 1000 FLOPs a row: 100 rows a piece at the estimate
    pacer.expect(plan)
    out = paced_matmul(x, w, pacer, plan)
    assert len(plan.pieces) == 4
    assert len(reports) > 4 and reports[-1] == (4, 4)  # the count moves once per piece
    assert [d for d, _t in reports] == sorted(d for d, _t in reports)
    torch.testing.assert_close(out, x @ w)


def test_a_fused_piece_of_rows_holds_bounded_mask_planes_however_fast_the_machine():
    """A paced fused run builds each piece's (rows, Skv) mask planes: however fast the rate
    measured (a 0.1 s piece at d_head 16 and 16384 keys was 9,692 rows, a 635 MB plane that a
    capped S = 16384 run could not get), a piece keeps them under PIECE_BYTES. The eager steps
    hold every grid anyway: their pieces follow the rate alone."""
    from engine.pacing import PIECE_BYTES, Pacer, run_plans

    cfg = AttentionConfig(seq_len=16384, d_model=16, n_heads=1, backend="sdpa", causal=True)
    for dtype, item in (("float32", 4), ("float16", 2)):
        pacer = Pacer(lambda _d, _t: None, 0.1, dtype, rate=1e15)  # every row in one piece by time
        att = run_plans(pacer, cfg.replace(dtype=dtype))[2]
        assert att.pieces[0].start == 0 and att.pieces[-1].stop == 16384
        assert max(p.stop - p.start for p in att.pieces) * cfg.key_len * (2 + item) <= PIECE_BYTES
    eager = run_plans(Pacer(lambda _d, _t: None, 0.1, rate=1e15), cfg.replace(backend="eager", seq_len=512))[2]
    assert len(eager.pieces) == 1
