"""What the controls may offer (explorer.constraints): never an invalid combination. Qt-free."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import AttentionConfig
from explorer import constraints as C
from explorer.frame import build_frame


def test_allowed_values():
    assert C.allowed_heads(12) == [1, 2, 3, 4, 6, 12]
    assert C.allowed_heads(12, "rope") == [1, 2, 3, 6]  # head_dim even
    assert C.allowed_d_models(3)[:4] == [3, 6, 9, 12]
    assert C.allowed_d_models(3, "rope")[:3] == [6, 12, 18]
    assert C.allowed_kv_heads(8) == [8, 4, 2, 1]
    assert [C.kv_label(8, g) for g in (8, 4, 1)] == ["8 · MHA", "4 · GQA 2:1", "1 · MQA"]
    cfg = AttentionConfig(n_heads=8, n_kv_heads=2)
    assert C.group_map(cfg) == [(0, [0, 1, 2, 3]), (1, [4, 5, 6, 7])]
    assert C.positional_refusal(AttentionConfig(d_model=12, n_heads=4), "rope")
    assert C.positional_refusal(AttentionConfig(), "rope") is None


def test_coerce_moves_dependents():
    base = AttentionConfig(n_heads=8, n_kv_heads=4, seq_len=10, pad=6)
    assert C.coerce(base, n_heads=2).n_kv_heads in (None, 1)  # 4 KV heads cannot serve 2
    assert C.coerce(base, n_heads=6).d_model % 6 == 0  # d_model follows the head count
    assert C.coerce(base, d_model=36).n_heads in C.allowed_heads(36)
    assert C.coerce(base, seq_len=4).pad == 4  # padding clamps to the key length
    assert C.coerce(AttentionConfig(d_model=12, n_heads=4), positional="rope").head_dim % 2 == 0
    assert C.coerce(base, n_kv_heads=8).n_kv_heads is None  # as many KV heads as heads: MHA
    t = C.coerce(base, tokens=("x", "y", "z"))
    assert t.seq_len == 3 and t.pad == 3
    assert C.coerce(t, seq_len=5).tokens is None


FIELDS = {
    "d_model": lambda cfg, d: d.draw(st.sampled_from(C.allowed_d_models(cfg.n_heads, cfg.positional)[:128])),
    "n_heads": lambda cfg, d: d.draw(st.sampled_from(C.allowed_heads(cfg.d_model, cfg.positional))),
    "n_kv_heads": lambda cfg, d: d.draw(st.sampled_from(C.allowed_kv_heads(cfg.n_heads))),
    "seq_len": lambda cfg, d: d.draw(st.integers(1, C.SEQ_MAX)),
    "kv_len": lambda cfg, d: d.draw(st.one_of(st.none(), st.integers(1, C.KV_LEN_MAX))),
    "pad": lambda cfg, d: d.draw(st.integers(0, cfg.key_len)),
    "window": lambda cfg, d: d.draw(st.one_of(st.none(), st.integers(1, max(cfg.key_len, cfg.seq_len)))),
    "positional": lambda cfg, d: d.draw(st.sampled_from(
        [p for p in ("none", "sinusoidal", "learned", "rope", "alibi") if C.positional_refusal(cfg, p) is None])),
    "tokens": lambda cfg, d: d.draw(st.one_of(st.none(), st.lists(st.sampled_from("abcde"), min_size=1,
                                                                  max_size=12).map(tuple))),
    "causal": lambda cfg, d: d.draw(st.booleans()),
}


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_sequence_of_control_changes_gives_a_valid_config(data):
    """Whatever the user does, in any order, with any value a control offers, the result is valid."""
    cfg = AttentionConfig()
    for _ in range(data.draw(st.integers(1, 12))):
        field = data.draw(st.sampled_from(sorted(FIELDS)))
        value = FIELDS[field](cfg, data)
        cfg = C.coerce(cfg, **{field: value})  # must not raise
        cfg.validate()
        assert cfg.pad <= cfg.key_len
        assert cfg.n_heads in C.allowed_heads(cfg.d_model, cfg.positional)
        assert cfg.kv_heads in C.allowed_kv_heads(cfg.n_heads)


@pytest.mark.parametrize("cfg", [
    AttentionConfig(),
    AttentionConfig(seq_len=6, kv_len=9, causal=True, window=3, pad=2, n_heads=8, n_kv_heads=2),
    AttentionConfig(seq_len=5, causal=True, pad=5, mask_value="-inf"),
    AttentionConfig(dtype="float16", init_std=2.0, d_model=512, n_heads=1),
])
def test_frame_metrics_match_the_engine(cfg):
    """The frame carries the engine's per-head metrics and the overflow report of its trace;
    a head whose every row is NaN has no value (NaN), where the engine's mean over no rows is 0."""
    f = build_frame(cfg)
    ref = engine.trace_head_summary(f.trace)
    none = f.head_rows == 0
    for mine, theirs in (("head_entropy", "mean_entropy"), ("sink_mass", "sink_mass"),
                         ("mean_distance", "mean_distance")):
        assert np.allclose(getattr(f, mine)[~none], ref[theirs].numpy()[~none], atol=1e-5), mine
        assert np.isnan(getattr(f, mine)[none]).all(), mine
    assert f.overflow == engine.overflow_report(f.trace)
    assert f.valid_rows.shape == (cfg.n_heads, cfg.seq_len)
