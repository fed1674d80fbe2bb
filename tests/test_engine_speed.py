"""engine.speed and the chunked run: a slow config's time is estimated, its projections come in
row chunks with progress between them, and the chunks give the run's own numbers."""

from __future__ import annotations

import pytest
import torch

import engine
import engine.trace as T
from engine import AttentionConfig
from engine.speed import estimate_seconds, matmul_flops_per_s


def test_the_estimate_grows_with_the_work():
    small, big = AttentionConfig(), AttentionConfig(d_model=1024, n_heads=16, seq_len=256)
    assert matmul_flops_per_s("float32") > 0
    assert 0 < estimate_seconds(small) < estimate_seconds(big)


@pytest.mark.parametrize("cfg", [AttentionConfig(seq_len=12, d_model=64, n_heads=4),
                                 AttentionConfig(seq_len=9, kv_len=13, d_model=48, n_heads=4, n_kv_heads=2,
                                                 backend="sdpa", batch=2)])
def test_a_chunked_run_reports_progress_and_gives_the_same_numbers(monkeypatch, cfg):
    plain = engine.run(cfg)
    monkeypatch.setattr(T, "CHUNK_SECONDS", 1e-9)  # every run "slow": the most chunks
    calls = []
    chunked = engine.run(cfg, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1][0] == calls[-1][1]  # reached its total
    torch.testing.assert_close(chunked.q, plain.q, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(chunked.output, plain.output, rtol=1e-5, atol=1e-6)


def test_a_progress_that_raises_stops_the_run(monkeypatch):
    monkeypatch.setattr(T, "CHUNK_SECONDS", 1e-9)

    class Stop(Exception):
        pass

    def stop(done, total):
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        engine.run(AttentionConfig(seq_len=16), progress=stop)
