"""Hostile configs (issue 19, items 4 and 6): every refusal is a ConfigError naming the field.

Qt-free except the last test, which checks that the seed spin box shows every seed the
engine accepts.
"""

from __future__ import annotations

import pytest

from engine import MAX_SEED, AttentionConfig, ConfigError, run


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"window": 10**30}, "window"),
        ({"window": 2**31}, "window"),
        ({"seed": 2**31}, "seed"),
        ({"seed": 2**63 - 1}, "seed"),
        ({"seed": 10**5000}, "seed"),  # too long for str(): the message must still be made
        ({"seq_len": 10**5000}, "seq_len"),
        ({"d_model": 10**400}, "d_model"),
        ({"batch": 10**30}, "batch"),
        ({"pad": 10**30}, "pad"),
        ({"kv_len": 10**30}, "kv_len"),
        ({"n_kv_heads": 10**30}, "n_kv_heads"),
        ({"scale": 10**400}, "scale"),
        ({"scale": -(10**400)}, "scale"),
        ({"init_std": 10**400}, "init_std"),
        ({"tokens": ("a", "\ud800")}, "tokens"),
        ({"tokens": ("\udfff",)}, "tokens"),
    ],
)
def test_out_of_range_values_are_a_config_error_naming_the_field(kwargs, field):
    with pytest.raises(ConfigError) as info:
        AttentionConfig(**kwargs)
    message = str(info.value)
    assert message.startswith(field) or f" {field} " in message, message
    assert "\n" not in message and len(message) < 200, message


def test_the_largest_window_and_seed_still_run():
    for backend in ("eager", "sdpa"):
        for causal in (False, True):
            cfg = AttentionConfig(window=2**31 - 1, seed=MAX_SEED, causal=causal, backend=backend)
            trace = run(cfg)
            assert trace.weights.shape == (1, 4, 8, 8)
    assert MAX_SEED == 2**31 - 1


@pytest.mark.parametrize(
    "d, field",
    [
        ({"seq_len": "abc", "tokens": ["a", "b"]}, "seq_len"),
        ({"seq_len": 2.5, "tokens": ["a", "b"]}, "seq_len"),
        ({"seq_len": True, "tokens": ["a", "b"]}, "seq_len"),
        ({"seq_len": 0, "tokens": ["a", "b"]}, "seq_len"),
        ({"seq_len": 10**30, "tokens": ["a", "b"]}, "seq_len"),
        ({"tokens": ["\ud800"]}, "tokens"),
        ({"scale": 10**400}, "scale"),
        ({"window": 10**30}, "window"),
        ({"dtype": ["float32"]}, "dtype"),  # unhashable where a string belongs
        ({"positional": {"rope": 1}}, "positional"),
    ],
)
def test_from_dict_type_checks_every_field(d, field):
    with pytest.raises(ConfigError, match=rf"^{field}\b"):
        AttentionConfig.from_dict(d)


def test_tokens_still_define_seq_len():
    # a valid seq_len given alongside tokens gives way to them (DESIGN.md: S = len(tokens))
    cfg = AttentionConfig.from_dict({"seq_len": 5, "tokens": ["a", "b"]})
    assert cfg.seq_len == 2 and cfg.tokens == ("a", "b")


def test_from_dict_names_odd_unknown_keys_in_one_line():
    with pytest.raises(ConfigError, match="unknown config field") as info:
        AttentionConfig.from_dict({1: 2, "x" * 1000: 3})
    assert len(str(info.value)) < 400


def test_the_seed_spin_box_takes_every_seed_the_engine_accepts(qapp):
    from explorer.controls import ConfigControls
    from explorer.state import AppState

    state = AppState()
    controls = ConfigControls(state)
    try:
        state.set_config(AttentionConfig(seed=MAX_SEED))
        assert controls.seed.value() == MAX_SEED
        assert controls.seed.maximum() == MAX_SEED
    finally:
        controls.deleteLater()
    with pytest.raises(ConfigError, match=r"^seed"):
        AttentionConfig(seed=MAX_SEED + 1)
