"""AttentionConfig: validation names the field, JSON round trip, seeded inputs."""

from __future__ import annotations

import json

import pytest
import torch

from engine import AttentionConfig, ConfigError, run


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"d_model": 30, "n_heads": 4}, "n_heads"),
        ({"n_kv_heads": 3}, "n_kv_heads"),
        ({"n_kv_heads": 8}, "n_kv_heads"),
        ({"seq_len": 0}, "seq_len"),
        ({"kv_len": 0}, "kv_len"),
        ({"pad": 9}, "pad"),
        ({"pad": -1}, "pad"),
        ({"window": 0}, "window"),
        ({"mask_value": "-1e4"}, "mask_value"),
        ({"dtype": "float64"}, "dtype"),
        ({"positional": "xpos"}, "positional"),
        ({"backend": "triton"}, "backend"),
        ({"device": "tpu"}, "device"),
        ({"scale": float("nan")}, "scale"),
        ({"init_std": -1.0}, "init_std"),
        ({"d_model": 12, "n_heads": 4, "positional": "rope"}, "rope"),
        ({"causal": "yes"}, "causal"),
        ({"tokens": ()}, "tokens"),
        ({"batch": 1.5}, "batch"),
    ],
)
def test_invalid_field_is_named(changes, field):
    with pytest.raises(ConfigError, match=field):
        AttentionConfig(**changes)


def test_error_lists_allowed_values():
    with pytest.raises(ConfigError) as e:
        AttentionConfig(d_model=12, n_heads=5)
    assert "1, 2, 3, 4, 6, 12" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_round_trip_through_json():
    cfg = AttentionConfig(d_model=32, n_heads=8, n_kv_heads=2, causal=True, window=3, pad=1,
                          scale=0.25, dtype="bfloat16", positional="rope", tokens=("a", "b", "a"))
    back = AttentionConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert back == cfg
    assert back.seq_len == 3


def test_missing_keys_default_and_unknown_keys_refused():
    assert AttentionConfig.from_dict({"n_heads": 2}) == AttentionConfig(n_heads=2)
    with pytest.raises(ConfigError, match="colour"):
        AttentionConfig.from_dict({"n_heads": 2, "colour": "red"})


def test_derived_sizes():
    cfg = AttentionConfig(d_model=4096, n_heads=32, n_kv_heads=8, seq_len=4)
    assert (cfg.head_dim, cfg.group_size, cfg.attention_kind) == (128, 4, "GQA 4:1")
    assert [cfg.kv_head_of(h) for h in (0, 3, 4, 31)] == [0, 0, 1, 7]
    assert AttentionConfig(n_kv_heads=1).attention_kind == "MQA"
    assert AttentionConfig().attention_kind == "MHA"


def test_same_config_same_numbers_and_seed_changes_them():
    a, b = run(AttentionConfig(seed=5)), run(AttentionConfig(seed=5))
    assert torch.equal(a.output, b.output)
    assert not torch.equal(a.output, run(AttentionConfig(seed=6)).output)


def test_equal_tokens_get_equal_embeddings_and_equal_rows_without_positions():
    cfg = AttentionConfig(tokens=("the", "cat", "the", "dog"), d_model=16, n_heads=2)
    tr = run(cfg)
    assert torch.equal(tr.x[0, 0], tr.x[0, 2]) and not torch.equal(tr.x[0, 0], tr.x[0, 1])
    # permutation blindness: the two "the" queries attend identically
    assert torch.allclose(tr.weights[0, :, 0], tr.weights[0, :, 2])
    pos = run(cfg.replace(positional="sinusoidal"))
    assert not torch.allclose(pos.weights[0, :, 0], pos.weights[0, :, 2])


def test_growing_seq_len_keeps_weights_and_earlier_inputs():
    a, b = run(AttentionConfig(seq_len=4)), run(AttentionConfig(seq_len=9))
    assert torch.equal(a.weights_used.w_q, b.weights_used.w_q)
    assert torch.equal(a.x[0], b.x[0, :4])


def test_shapes_follow_the_contract():
    cfg = AttentionConfig(d_model=48, n_heads=6, n_kv_heads=2, seq_len=5, kv_len=7, batch=3)
    tr = run(cfg)
    B, H, Hkv, S, Skv, Dh, d = 3, 6, 2, 5, 7, 8, 48
    assert tr.x.shape == (B, S, d) and tr.q.shape == (B, H, S, Dh)
    assert tr.k.shape == tr.v.shape == (B, Hkv, Skv, Dh)
    for name in ("scores_raw", "scores", "weights"):
        assert getattr(tr, name).shape == (B, H, S, Skv)
    assert tr.mask.shape == (S, Skv) and tr.mask.dtype == torch.bool
    assert tr.context.shape == (B, H, S, Dh) and tr.output.shape == (B, S, d)
    assert tr.softmax_jacobian_norm.shape == tr.entropy.shape == (B, H, S)
    assert all(t.device.type == "cpu" for t in (tr.x, tr.q, tr.weights, tr.output))
    assert tr.backend_impl == "eager" and tr.backend_max_abs_diff is None


def test_given_x_with_wrong_shape_is_refused():
    with pytest.raises(ConfigError, match="shape"):
        run(AttentionConfig(), x=torch.zeros(1, 3, 64))


def test_trace_over_memory_budget_is_refused_with_estimate():
    cfg = AttentionConfig(d_model=64, n_heads=64, seq_len=16384, batch=4)
    with pytest.raises(ConfigError, match="GiB"):
        run(cfg)


def test_replace_drops_tokens_when_length_changes():
    cfg = AttentionConfig(tokens=("a", "b", "c"))
    assert cfg.replace(seq_len=5).tokens is None and cfg.replace(seq_len=5).seq_len == 5
    assert cfg.replace(causal=True).tokens == ("a", "b", "c")
