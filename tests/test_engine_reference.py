"""Every attention variant against an independent float64 reference.

Tolerance in the flash-attention style: the engine's error against the float64
truth may be at most twice the error of the plain reference computed in the
same precision (plus a tiny floor for exact cases).
"""

from __future__ import annotations

import itertools

import pytest
import torch

from engine import AttentionConfig, run
from tests.reference import ref_mask, reference_attention

KINDS = {"mha": None, "gqa": 2, "mqa": 1}
MASKS = {
    "none": {},
    "causal": {"causal": True},
    "window": {"window": 3},
    "causal+window+pad": {"causal": True, "window": 4, "pad": 1},
}
FLOOR = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}


def nan_equal_err(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a − b| where both are numbers; NaN patterns must agree exactly."""
    assert torch.equal(torch.isnan(a), torch.isnan(b)), "NaN rows differ from the reference"
    ok = ~torch.isnan(a)
    return float((a.double() - b.double()).abs()[ok].max()) if bool(ok.any()) else 0.0


def check_against_reference(cfg: AttentionConfig) -> None:
    tr = run(cfg)
    w64, out64 = reference_attention(tr, torch.float64)
    w_lo, out_lo = reference_attention(tr, getattr(torch, cfg.dtype))
    for name, got, truth, plain in (
        ("weights", tr.weights, w64, w_lo),
        ("output", tr.output, out64, out_lo),
    ):
        err = nan_equal_err(got, truth)
        base = nan_equal_err(plain, truth)
        assert err <= 2 * base + FLOOR[cfg.dtype], f"{name}: err {err:.3g} vs plain {base:.3g} for {cfg}"
    assert torch.equal(tr.mask, ref_mask(cfg))


@pytest.mark.parametrize("dtype", ["float32", *(pytest.param(d, marks=pytest.mark.slow)  # (CPU float16: ~100× slower)
                                               for d in ("float16", "bfloat16"))])
@pytest.mark.parametrize("positional", ["none", "sinusoidal", "learned", "rope", "alibi"])
@pytest.mark.parametrize("cross", [False, True], ids=["self", "cross"])
@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_matches_reference(kind, mask, cross, positional, dtype):
    cfg = AttentionConfig(
        d_model=32, n_heads=4, n_kv_heads=KINDS[kind], seq_len=6, kv_len=9 if cross else None,
        dtype=dtype, positional=positional, seed=3, **MASKS[mask],
    )
    check_against_reference(cfg)


@pytest.mark.parametrize(
    ("scale", "prescale_q", "mask_value"),
    list(itertools.product([None, 0.5, 1.0], [False, True], ["-inf", "min", "-1e9"])),
)
def test_scale_and_mask_value_match_reference(scale, prescale_q, mask_value):
    cfg = AttentionConfig(d_model=48, n_heads=6, n_kv_heads=3, seq_len=5, causal=True, pad=2,
                          scale=scale, prescale_q=prescale_q, mask_value=mask_value, batch=2)
    check_against_reference(cfg)


def test_given_embeddings_are_used():
    cfg = AttentionConfig(d_model=16, n_heads=2, seq_len=4)
    x = torch.linspace(-1, 1, 4 * 16).reshape(1, 4, 16)
    tr = run(cfg, x=x)
    assert torch.allclose(tr.x, x)
    _, out64 = reference_attention(tr, torch.float64, x_in=x)
    assert torch.allclose(tr.output.double(), out64, atol=1e-5)
    assert not torch.allclose(tr.output, run(cfg).output)
