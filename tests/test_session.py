"""Session files: round trip, atomic writes, and clear refusals. Qt-free."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import AttentionConfig
from explorer import session as S
from explorer.session import Session, SessionError, load_session, save_session, session_to_dict


def _valid(**kw) -> dict:
    d = {"format": S.FORMAT, "version": 1, "config": {}, "selection": {"head": 0, "query": 0, "key": 0},
         "model": None}
    d.update(kw)
    return d


def test_round_trip(tmp_path):
    cfg = AttentionConfig(d_model=96, n_heads=6, n_kv_heads=2, kv_len=11, causal=True, window=3, pad=2,
                          mask_value="-1e9", scale=0.3, prescale_q=True, dtype="bfloat16",
                          positional="alibi", backend="sdpa", seed=5, init_std=0.05,
                          tokens=("a", "b", "a", "c"))
    path = save_session(tmp_path / "s.json", cfg, {"head": 5, "query": 3, "key": 10},
                        model={"source": "some/model", "layer": 2})
    s = load_session(path)
    assert s == Session(cfg, 5, 3, 10, {"source": "some/model", "layer": 2})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "attention-explorer.session" and data["version"] == 1
    assert data["config"]["tokens"] == ["a", "b", "a", "c"]
    assert set(data) == {"format", "version", "config", "selection", "model"}


def test_selection_object_with_attributes(tmp_path):
    class Sel:
        head, query, key = 1, 2, 3

    path = save_session(tmp_path / "s.json", AttentionConfig(), Sel())
    assert load_session(path).selection == {"head": 1, "query": 2, "key": 3}


def test_load_from_a_dict_and_defaults():
    s = load_session({"format": S.FORMAT, "version": 1})
    assert s == Session(AttentionConfig(), 0, 0, 0, None)


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    save_session(path, AttentionConfig(seq_len=5))
    assert sorted(os.listdir(tmp_path)) == ["s.json"]
    # a failure while replacing leaves the old file intact and removes the temporary one
    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(S.os, "replace", boom)
    with pytest.raises(OSError):
        save_session(path, AttentionConfig(seq_len=9))
    assert sorted(os.listdir(tmp_path)) == ["s.json"]
    assert load_session(path).config.seq_len == 5


def test_saving_keeps_the_file_mode(tmp_path):
    """issue 28: saving over a shared 0664 session left it 0600 (mkstemp's mode); a new one
    gets 0644 less the umask, like an export."""
    import os
    import stat

    path = tmp_path / "shared.json"
    save_session(path, AttentionConfig())
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 & ~mask
    path.chmod(0o664)
    save_session(path, AttentionConfig(seed=3))
    assert stat.S_IMODE(path.stat().st_mode) == 0o664
    assert load_session(path).config.seed == 3


def test_saving_an_out_of_range_selection_is_refused(tmp_path):
    with pytest.raises(SessionError, match=r"selection\.head=9"):
        save_session(tmp_path / "s.json", AttentionConfig(), {"head": 9, "query": 0, "key": 0})
    assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "must be a JSON object"),
        (_valid(format="something-else"), "not an Attention Explorer session"),
        (_valid(version=2), "newer Attention Explorer"),
        (_valid(version=0), "positive integer"),
        (_valid(version="1"), "positive integer"),
        (_valid(extra=1), "unknown session field"),
        (_valid(config=[1, 2]), "'config' must be an object"),
        (_valid(config={"n_heads": 3}), "n_heads must divide d_model"),
        (_valid(config={"d_modle": 64}), "unknown config field"),
        (_valid(config={"d_model": [64]}), "invalid config"),
        (_valid(selection={"head": 4}), "selection.head=4 is out of range"),
        (_valid(selection={"query": -1}), "out of range"),
        (_valid(selection={"key": 1.5}), "must be an integer"),
        (_valid(selection={"head": True}), "must be an integer"),
        (_valid(selection={"row": 1}), "unknown selection field"),
        (_valid(model="gpt2"), "'model' must be null or an object"),
    ],
)
def test_malformed_sessions_are_refused(data, message):
    with pytest.raises(SessionError, match=message):
        load_session(data)


def test_malformed_files_are_refused(tmp_path, monkeypatch):
    p = tmp_path / "s.json"
    p.write_text('{"format": "attention-explorer.session", "version": 1,,}')
    with pytest.raises(SessionError, match=r"not valid JSON: .*line 1"):
        load_session(p)
    p.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(SessionError, match="not UTF-8"):
        load_session(p)
    with pytest.raises(SessionError, match="cannot open"):
        load_session(tmp_path / "missing.json")
    p.write_text(json.dumps(_valid()))
    monkeypatch.setattr(S, "MAX_BYTES", 10)
    with pytest.raises(SessionError, match="too large"):
        load_session(p)


def test_nothing_in_a_session_is_executed(tmp_path):
    # a string that would do something if evaluated stays a (refused) string
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_valid(config={"dtype": "__import__('os').system('false')"})))
    with pytest.raises(SessionError, match="dtype must be one of"):
        load_session(p)


configs = st.builds(
    lambda heads_exp, dh, kv_exp, s, causal, pad, dtype, pos, scale: AttentionConfig(
        d_model=(2**heads_exp) * dh * (2 if pos == "rope" else 1), n_heads=2**heads_exp,
        n_kv_heads=2 ** min(kv_exp, heads_exp), seq_len=s, causal=causal, pad=min(pad, s),
        dtype=dtype, positional=pos, scale=scale),
    st.integers(0, 4), st.integers(1, 16), st.integers(0, 4), st.integers(1, 64), st.booleans(),
    st.integers(0, 8), st.sampled_from(["float32", "float16", "bfloat16"]),
    st.sampled_from(["none", "sinusoidal", "learned", "rope", "alibi"]),
    st.one_of(st.none(), st.floats(0.0, 4.0, allow_nan=False)),
)


@settings(max_examples=60, deadline=None)
@given(cfg=configs, data=st.data())
def test_any_valid_config_round_trips(cfg, data, tmp_path_factory):
    sel = {"head": data.draw(st.integers(0, cfg.n_heads - 1)),
           "query": data.draw(st.integers(0, cfg.seq_len - 1)),
           "key": data.draw(st.integers(0, cfg.key_len - 1))}
    path = tmp_path_factory.mktemp("s") / "s.json"
    save_session(path, cfg, sel)
    s = load_session(path)
    assert s.config == cfg and s.selection == sel
    assert load_session(session_to_dict(cfg, sel)) == s
