"""The formula once (issue 26): scale → ALiBi bias → mask → softmax is one function
(engine.backends.eager.attention_scores / attention_weights), and the whole-grid path, the
per-head path and the per-block-of-rows path give exactly the same bits through it."""

from __future__ import annotations

import pytest
import torch

import engine.memory
import engine.trace
from engine import AttentionConfig, run
from engine.backends import eager

BASE = dict(d_model=64, n_heads=4, n_kv_heads=2, seq_len=48, batch=2, causal=True, window=6, pad=3,
            positional="alibi", seed=5)
CONFIGS = [
    AttentionConfig(**BASE),
    AttentionConfig(**BASE, prescale_q=True, mask_value="min"),
    AttentionConfig(**{**BASE, "kv_len": 61}),  # cross-attention / decoding: bottom-right causal
]


def _call(cfg: AttentionConfig):
    """The AttentionCall run() builds for cfg (the fused backend keeps it on the trace)."""
    return run(cfg.replace(backend="flash"))._call


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=["causal+window+alibi+pad", "prescale+min", "cross"])
def test_full_grid_equals_per_head_and_per_block(cfg, dtype):
    cfg = cfg.replace(dtype=dtype)
    call = _call(cfg)
    whole = eager.eager_steps(call)
    assert not bool(torch.isnan(whole["weights"]).any())  # every row sees a key: torch.equal applies
    S = cfg.seq_len
    # blocks of at least 16 rows, as the blocked passes cut them (MIN_BLOCK_ROWS): torch's CPU
    # matmul picks its kernel by shape, and a product of a few rows (a matrix-vector product for
    # one) may round Q·Kᵀ differently; the formula after the product is exact on any block
    blocks = [slice(0, 16), slice(16, 33), slice(33, S)]
    for b in range(cfg.batch):
        for h in range(cfg.n_heads):
            one_head = eager.head_rows(call, b, h, slice(None))
            for name in eager.GRID_STEPS:
                assert torch.equal(one_head[name], whole[name][b, h]), (name, b, h)
                grid = eager.head_grid(call, b, h, name, blocks)
                assert torch.equal(grid, whole[name][b, h]), (name, b, h, "blocks")
            for rows in blocks:
                part = eager.head_rows(call, b, h, rows)
                for name in eager.GRID_STEPS:
                    assert torch.equal(part[name], whole[name][b, h, rows]), (name, b, h, rows)
    # the formula on any block of the whole grid's Q·Kᵀ, one row included: the same bits
    # (with prescale_q the formula takes its own product of the block: long blocks only)
    short = [] if cfg.prescale_q else [slice(7, 8), slice(S - 1, S), slice(3, 11)]
    for rows in [slice(0, S), slice(16, 33), *short]:
        for heads in [slice(0, 1), slice(1, 4)]:
            raw = whole["scores_raw"][:, heads, rows].clone()
            scores = eager.attention_scores(call, raw, slice(None), heads, rows)
            assert torch.equal(scores, whole["scores"][:, heads, rows]), (rows, heads)
            assert torch.equal(eager.attention_weights(scores), whole["weights"][:, heads, rows])
    # a block of several heads and rows, the raw product given up in place
    heads, rows = slice(1, 3), slice(5, 27)
    raw = eager.block_scores_raw(call, slice(1, 2), heads, rows)
    assert torch.equal(raw, whole["scores_raw"][1:2, heads, rows])
    scores = eager.attention_scores(call, raw, slice(1, 2), heads, rows, inplace=True)
    assert torch.equal(scores, whole["scores"][1:2, heads, rows])
    assert torch.equal(eager.attention_weights(scores), whole["weights"][1:2, heads, rows])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_blocked_trace_gives_the_eager_trace_bits(monkeypatch, dtype):
    """Through the public API: a fused trace forced onto the long path (head by head, block by
    block) gives the eager trace's grids bit for bit."""
    monkeypatch.setattr(engine.trace, "SMALL_GRIDS", -1)
    monkeypatch.setattr(engine.memory, "ROW_BLOCK_ELEMENTS", 64)
    monkeypatch.setattr(engine.memory, "MIN_BLOCK_ROWS", 16)
    cfg = CONFIGS[0].replace(dtype=dtype)
    tr = run(cfg.replace(backend="sdpa"))
    assert tr.blocked
    ref = run(cfg)
    for name in engine.trace.GRID_NAMES:
        for b in range(cfg.batch):
            for h in range(cfg.n_heads):
                assert torch.equal(tr.head_grid(name, h, batch=b), getattr(ref, name)[b, h]), (name, b, h)
                assert torch.equal(tr.head_rows(name, h, slice(16, 32), batch=b), getattr(ref, name)[b, h, 16:32])
    assert torch.equal(tr.entropy, ref.entropy)
    assert not tr.holds_grids


# decoding through the KV cache (engine.kvcache) runs the same formula on a block of rows: the
# last query over the keys reached so far (causal: the sequence's mask, its padding and ALiBi)
DECODE = [
    AttentionConfig(**{**BASE, "seq_len": 40}),  # GQA, batch 2, window, padding, ALiBi
    AttentionConfig(**{**BASE, "seq_len": 40, "positional": "rope", "mask_value": "-1e9", "n_kv_heads": 1}),
    # rows long enough for softmax's vector loop: its sums reduce a shorter row in another order
    AttentionConfig(**{**BASE, "seq_len": 300, "batch": 1, "window": None}),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("cfg", DECODE, ids=["alibi+window+pad", "rope+mqa", "long"])
def test_a_decode_step_is_the_formula_on_a_row_of_the_full_grid(cfg, dtype):
    """A decode step's block (engine.kvcache.block_call) through the formula, from the full grid's
    own Q·Kᵀ: its scores are the whole grid's row bit for bit (scale, ALiBi and mask are the same
    elementwise arithmetic), the weights equal within 2 ulps: the softmax of the n keys reached
    adds the same terms as that of the whole row (whose other keys are exp(−inf) = 0), but
    torch's vectorised max and sum reduce a row of another length in another order (measured:
    0 on short rows, ≤ 1.9 ulps at S = 300). Below the dtype's smallest normal number the spacing
    is absolute (float16's subnormals: 6e-8 apart), so the tolerance there is 2 such steps: a
    float16 weight of 8.8e-6 came out one subnormal step apart (6.9 "ulps" relative) on an AMD EPYC."""
    from engine.kvcache import block_call
    from engine.masks import build_mask

    cfg = cfg.replace(dtype=dtype)
    full = run(cfg)
    mask = build_mask(cfg)
    eps, tiny = torch.finfo(full.q.dtype).eps, torch.finfo(full.q.dtype).tiny
    for t in range(cfg.seq_len):
        n, rows = t + 1, slice(t, t + 1)
        call = block_call(cfg, full.q[:, :, rows], full.k[:, :, :n], full.v[:, :, :n], mask[rows, :n])
        scores = eager.attention_scores(call, full.scores_raw[:, :, rows, :n].clone())
        assert torch.equal(scores, full.scores[:, :, rows, :n]), t
        weights = eager.attention_weights(scores)
        torch.testing.assert_close(weights, full.weights[:, :, rows, :n], rtol=2 * eps, atol=2 * eps * tiny,
                                   msg=f"row {t}")
        assert not bool(full.weights[:, :, t, n:].any())  # the keys not reached yet weigh 0


@pytest.mark.parametrize("cfg", [
    AttentionConfig(**{**BASE, "seq_len": 24}),
    AttentionConfig(**{**BASE, "seq_len": 24, "prescale_q": True, "mask_value": "min"}),
    AttentionConfig(**{**BASE, "seq_len": 24, "positional": "rope", "dtype": "float16"}),
    AttentionConfig(**{**BASE, "seq_len": 24, "positional": "learned", "dtype": "bfloat16"}),
], ids=["alibi", "prescale", "rope-fp16", "learned-bf16"])
def test_decode_weights_are_the_full_causal_grids_rows(cfg):
    """Through the public API: every decode step's weights (B, H, t+1) are row t of the eager
    trace's causal grid. Within a few ulps of 1 rather than equal: decode projects one token at
    a time (a vector–matrix product) and run() all S at once (a matrix product), which torch's
    CPU kernels round differently, and with prescale_q the step's (scale·q)·Kᵀ is a one-row
    product of its own (measured: ≤ 4.2e-7 in float32, 2.4e-4 in float16, 0 in bfloat16)."""
    import engine

    full = run(cfg)
    atol = 8 * torch.finfo(full.q.dtype).eps
    steps = list(engine.decode_steps(cfg))
    assert [s.t for s in steps] == list(range(cfg.seq_len))
    for s in steps:
        assert s.weights.shape == (cfg.batch, cfg.n_heads, s.t + 1) and s.weights.dtype == full.weights.dtype
        torch.testing.assert_close(s.weights, full.weights[:, :, s.t, : s.t + 1], rtol=0, atol=atol,
                                   msg=f"step {s.t}")
