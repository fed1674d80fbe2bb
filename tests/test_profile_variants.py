"""The length profile's efficient-variant rows (engine.profile.VARIANT_BACKENDS): each runs
its own algorithm (the trace's backend_impl) on full attention's layer with the variant, and
a profile of the variants alone may go to S = 65,536 while full attention's stays at 16,384."""

from __future__ import annotations

import pytest

from engine import AttentionConfig, ConfigError, memory_estimate
from engine.profile import (
    MAX_LENGTH,
    VARIANT_BACKENDS,
    VARIANT_MAX_LENGTH,
    length_profile,
    point_config,
)

SMALL = AttentionConfig(d_model=32, n_heads=2, causal=True)


def test_each_variant_is_measured_by_its_own_algorithm():
    points = length_profile(SMALL, (64, 512), VARIANT_BACKENDS, repeats=1, isolate=False)
    impl = {(p.seq_len, p.backend): p.impl for p in points}
    assert all(p.error is None and p.seconds > 0 for p in points), points
    for S in (64, 512):
        assert impl[(S, "linear")] == "linear:prefix-sums"
        assert impl[(S, "performer")] == "performer:prefix-sums"
        assert impl[(S, "local+global")] == "local+global:blocks"
        assert impl[(S, "hierarchical")] == "hierarchical:blocks"


def test_a_variant_point_is_full_attentions_layer_with_the_variant():
    base = SMALL.replace(kernel="performer", window=3)  # the profile's own variant is not kept
    assert point_config(base, 1024, "linear") == SMALL.replace(seq_len=1024, kernel="linear")
    assert point_config(base, 8, "local+global") == SMALL.replace(seq_len=8, window=256, global_tokens=8)
    assert point_config(base, 4096, "hierarchical") == SMALL.replace(seq_len=4096, summary_block=256)


def test_the_variants_alone_go_to_65536():
    assert VARIANT_MAX_LENGTH == 65536 > MAX_LENGTH
    with pytest.raises(ConfigError, match=f"from 1 to {MAX_LENGTH}"):
        length_profile(SMALL, (VARIANT_MAX_LENGTH,), ("eager", "linear"), repeats=1, isolate=False)
    with pytest.raises(ConfigError, match=f"from 1 to {VARIANT_MAX_LENGTH}"):
        length_profile(SMALL, (VARIANT_MAX_LENGTH + 1,), ("linear",), repeats=1, isolate=False)
    # at 65,536 tokens each variant needs well under 1 GiB; full attention's grids, over 100 GiB
    for b in VARIANT_BACKENDS:
        assert memory_estimate(point_config(SMALL, VARIANT_MAX_LENGTH, b))["total"] < 1 << 30, b
    assert memory_estimate(point_config(SMALL, VARIANT_MAX_LENGTH, "eager"))["total"] > 100 << 30
