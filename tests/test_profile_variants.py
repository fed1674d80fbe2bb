"""The length profile's efficient-variant rows (engine.profile.VARIANT_BACKENDS): each runs
its own algorithm (the trace's backend_impl) on full attention's layer with the variant, and
a profile of the variants alone may go to S = 65,536 while full attention's stays at 16,384."""

from __future__ import annotations

import pytest

from engine import AttentionConfig, ConfigError, memory_estimate
from engine.profile import (
    MAX_LENGTH,
    PAST_MAX,
    VARIANT_BACKENDS,
    VARIANT_MAX_LENGTH,
    ProfilePoint,
    crossover,
    length_profile,
    point_config,
    profile_table,
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


def test_a_profile_with_variants_goes_to_65536_full_attention_to_16384():
    assert VARIANT_MAX_LENGTH == 65536 > MAX_LENGTH
    with pytest.raises(ConfigError, match=f"from 1 to {MAX_LENGTH}"):
        length_profile(SMALL, (VARIANT_MAX_LENGTH,), ("eager", "flash"), repeats=1, isolate=False)
    with pytest.raises(ConfigError, match=f"from 1 to {VARIANT_MAX_LENGTH}"):
        length_profile(SMALL, (VARIANT_MAX_LENGTH + 1,), ("linear",), repeats=1, isolate=False)
    # beside a variant, full attention past 16,384 is not run: eager over the budget, flash past its range
    points = length_profile(SMALL, (2 * MAX_LENGTH,), ("eager", "flash", "linear"), repeats=1, isolate=False)
    by = {p.backend: p for p in points}
    assert by["eager"].estimated and by["eager"].seconds is None and by["eager"].note == ""
    assert by["flash"].estimated and by["flash"].seconds is None and by["flash"].note == PAST_MAX
    assert by["flash"].peak_bytes == by["flash"].estimate_bytes < 1 << 30
    assert not by["linear"].estimated and by["linear"].seconds > 0 and by["linear"].impl == "linear:prefix-sums"
    table = profile_table(points)
    assert f"not run (> {MAX_LENGTH})" in table and "crossover: linear vs flash: no S where both were measured" in table


def _pt(S: int, backend: str, seconds: float | None) -> ProfilePoint:
    return ProfilePoint(S, backend, seconds, 1 << 20, seconds is None, 1 << 20, 1 << 32)


def test_the_crossover_is_read_off_the_measured_times():
    lin = {256: 0.02, 1024: 0.03, 4096: 0.05, 16384: 0.2}
    flash = {256: 0.01, 1024: 0.06, 4096: 0.4, 16384: 5.0}
    points = [_pt(S, "linear", t) for S, t in lin.items()] + [_pt(S, "flash", t) for S, t in flash.items()]
    c = crossover(points)
    assert (c.kind, c.exact, c.below, c.above, c.longest) == ("crosses", "flash", 256, 1024, 16384)
    # log–log: linear/flash goes from 2 (at 256) to 0.5 (at 1024): even at the midpoint, S = 512
    assert c.seq_len == pytest.approx(512)
    assert c.text() == ("linear beats flash from S ≈ 512 on this machine "
                        "(slower at S = 256, faster at S = 1,024 and beyond, up to 16,384)")
    # a noisy short S where linear happened to win does not count: it must stay ahead
    noisy = [*points, _pt(128, "linear", 0.001), _pt(128, "flash", 0.002)]
    assert crossover(noisy).below == 256
    slow = [_pt(S, "linear", 9.0) for S in lin] + [_pt(S, "flash", t) for S, t in flash.items()]
    assert crossover(slow).text() == "linear never beats flash up to S = 16,384"
    fast = [_pt(S, "linear", 1e-4) for S in lin] + [_pt(S, "flash", t) for S, t in flash.items()]
    assert crossover(fast).text() == "linear beats flash at every S measured (S = 256 to 16,384)"
    # no flash measured: the fastest exact row there is (sdpa), estimates never count
    sdpa = [_pt(S, "sdpa", t) for S, t in flash.items()] + [_pt(65536, "flash", None)]
    assert crossover([_pt(S, "linear", t) for S, t in lin.items()] + sdpa).exact == "sdpa"
    # at 65,536 tokens each variant needs well under 1 GiB; full attention's grids, over 100 GiB
    for b in VARIANT_BACKENDS:
        assert memory_estimate(point_config(SMALL, VARIANT_MAX_LENGTH, b))["total"] < 1 << 30, b
    assert memory_estimate(point_config(SMALL, VARIANT_MAX_LENGTH, "eager"))["total"] > 100 << 30


def test_bench_profile_variants_is_refused_without_profile():
    """`--variants` belongs to `--profile` (its crossover line is tested above, on the table)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "main.py", "bench", "--variants"], cwd=root, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "--variants only applies with --profile" in r.stderr
