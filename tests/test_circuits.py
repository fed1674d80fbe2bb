"""The circuits lens (issue 29): detectors, QK/OV circuits, logit lens, attribution, patching,
Q/K space, and the inspect CLI's circuits options.

Every definition is checked against an independent computation written here, on
transformers' own modules and weights (AutoModelForCausalLM / AutoModel, eager attention),
not on the project's code. The trained run is the training lab's default config trained until
its induction milestone (~400 steps, a few seconds on one thread).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from models_fixtures import (
    gpt2_path,
    induction_run_path,
    llama,
    llama_path,
    minilm,
    minilm_path,
    qwen2_path,
    run_folder,
)

from engine.models import InspectError, load_model
from engine.models.detectors import repeated_random_tokens

__all__ = ["gpt2_path", "induction_run_path", "llama", "llama_path", "minilm", "minilm_path", "qwen2_path",
           "run_folder"]

ROOT = Path(__file__).resolve().parent.parent
TEXT = "the cat sat on the mat . the cat"
CORRUPTED = "the dog sat on the mat . the dog"  # same length; "cat" → "dog" twice
CLEAN_RUN = "ABCDEFGH ABCDEFG"  # <bos> + 8 symbols + the first 7 again: the answer is H
CORRUPT_RUN = "ABCDEFGH IJKLMNO"  # the second half never seen before: induction has nothing


# ---- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(run_folder):
    """The default training config (post-norm, attention-only, 2 × 2) trained until the lab's
    induction milestone (models_fixtures.train_induction, trained once per test run), saved and
    opened with load_model."""
    return load_model(run_folder)


@pytest.fixture(scope="module")
def prenorm_run(tmp_path_factory):
    """A pre-norm training run with MLPs (a few steps: only the algebra matters)."""
    from engine.training import TrainConfig, Trainer

    tr = Trainer(TrainConfig(norm="pre", attn_only=False, steps=20, seed=5))
    tr.step(20)
    return load_model(tr.save(tmp_path_factory.mktemp("runs") / "prenorm"))


@pytest.fixture(scope="module")
def gpt2(gpt2_path):
    return load_model(gpt2_path)


@pytest.fixture(scope="module")
def qwen2(qwen2_path):
    """Qwen2 with MQA (4 query heads share 1 KV head; biases on Q, K, V), its byte-level BPE."""
    return load_model(qwen2_path)


def model_and_folder(request, which):
    """The loaded model fixture ``which`` and its folder (fixture ``which + "_path"``)."""
    return request.getfixturevalue(which), request.getfixturevalue(f"{which}_path")


def causal_lm(folder):
    """transformers' own model with its LM head, eager attention, float32."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                                dtype=torch.float32).eval()


def ids_of(loaded, text):
    return loaded.tokenize(text)[0]


# ---- detectors ------------------------------------------------------------------------------
def tl_pattern(kind: str, tokens: np.ndarray) -> np.ndarray:
    """TransformerLens' head_detector detection patterns, written out with NumPy."""
    s = len(tokens)
    if kind == "previous_token":
        p = np.zeros((s, s))
        p[np.arange(1, s), np.arange(s - 1)] = 1
        return p
    dup = (tokens[:, None] == tokens[None, :]).astype(float)
    np.fill_diagonal(dup, 0)
    dup = np.tril(dup)
    if kind == "duplicate_token":
        return dup
    ind = np.zeros_like(dup)
    ind[:, 1:] = dup[:, :-1]
    return np.tril(ind)


@pytest.mark.parametrize("which", ["gpt2", "qwen2", "minilm"])
def test_detector_scores_follow_transformer_lens_definitions(which, request):
    from transformers import AutoModel

    loaded, folder = model_and_folder(request, which)
    n, batch = 12, 3
    ids = repeated_random_tokens(loaded, n, batch, seed=7)
    # BOS + n tokens + the same n again, no special tokens among them
    assert ids.shape[1] in (2 * n, 2 * n + 1)
    body = ids[:, ids.shape[1] - 2 * n:]
    assert torch.equal(body[:, :n], body[:, n:])
    assert not set(body.reshape(-1).tolist()) & set(loaded.tokenizer.all_special_ids)
    ref = AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    with torch.no_grad():
        att = ref(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True).attentions
    a = torch.stack(att).numpy()  # (L, B, H, S, S)
    for kind in ("previous_token", "duplicate_token", "induction"):
        got = loaded.head_scores(kind, n_tokens=n, batch=batch, seed=7)
        assert got.shape == (loaded.n_layers, loaded.n_heads) and got.dtype == np.float32
        assert ((got >= 0) & (got <= 1)).all()
        num = np.zeros(got.shape)
        den = 0
        for b in range(batch):
            p = tl_pattern(kind, ids[b].numpy())
            rows = p.sum(-1) > 0
            num += (a[:, b] * p).sum(-1)[..., rows].sum(-1)  # weight on the named keys
            den += rows.sum()
        np.testing.assert_allclose(got, num / den, rtol=0, atol=2e-5)
    assert np.array_equal(loaded.head_scores("induction", n_tokens=n, batch=batch, seed=7),
                          loaded.head_scores("induction", n_tokens=n, batch=batch, seed=7))


def test_unknown_detector_and_bad_sizes_are_refused(gpt2):
    for call, says in ((lambda: gpt2.head_scores("copying"), "unknown detector 'copying'"),
                       (lambda: gpt2.head_scores(None), "unknown detector"),
                       (lambda: gpt2.head_scores("induction", n_tokens=500), "too long"),
                       (lambda: gpt2.head_scores("induction", batch=0), "batch")):
        with pytest.raises(InspectError, match=says) as info:
            call()
        assert len(str(info.value).splitlines()) == 1


@pytest.mark.slow
def test_trained_run_detectors_patching_and_circuits_name_the_induction_head(trained):
    L, H = trained.n_layers, trained.n_heads
    ind = trained.head_scores("induction")
    prev = trained.head_scores("previous_token")
    top_ind = np.unravel_index(int(ind.argmax()), ind.shape)
    top_prev = np.unravel_index(int(prev.argmax()), prev.shape)
    assert top_ind[0] == 1 and ind[top_ind] > 0.5, ind
    assert top_prev[0] == 0 and prev[0].max() > 2 * prev[1].max(), prev
    # patching the clean run into the corrupted one: the induction head restores the answer
    res = trained.activation_patching(CLEAN_RUN, CORRUPT_RUN, "H")
    assert res.effect.shape == (L, H) and res.clean_metric > res.corrupted_metric
    top_patch = np.unravel_index(int(res.effect.argmax()), res.effect.shape)
    # (the run has two induction heads sharing the work: each restores part of the answer)
    assert top_patch == top_ind and res.effect[top_patch] > 0.3, res.effect
    assert res.effect[1].sum() > 0.5 and np.abs(res.effect[0]).max() < res.effect[top_patch] / 4
    # the one-backward-pass estimate names the same head
    est = trained.attribution_patching(CLEAN_RUN, CORRUPT_RUN, "H")
    assert est.method == "attribution" and est.effect.shape == (L, H)
    assert np.unravel_index(int(est.effect.argmax()), est.effect.shape) == top_patch
    assert est.clean_metric == pytest.approx(res.clean_metric, rel=1e-5)
    # the induction head's OV circuit copies: attending to a token raises that token
    c = trained.circuits(*top_ind)
    assert c.copying_score > 0.7
    assert c.ov_pairs[0].row_id == c.ov_pairs[0].col_id
    # the lens: the last layer predicts the repeated half
    lens = trained.logit_lens(CLEAN_RUN)
    assert lens.top_tokens[L][-1][0] == "H" and lens.top_probs[L, -1, 0] > 0.5


# ---- circuits against the weights --------------------------------------------------------------
def test_gpt2_circuits_equal_the_weights_products(gpt2, gpt2_path):
    ref = causal_lm(gpt2_path)
    d, H = ref.config.n_embd, ref.config.n_head
    dh = d // H
    layer, head = 1, 2
    attn = ref.transformer.h[layer].attn
    w = attn.c_attn.weight.detach().numpy()  # Conv1D (d, 3d): x @ W
    sl = slice(head * dh, (head + 1) * dh)
    w_q, w_k, w_v = w[:, :d][:, sl], w[:, d:2 * d][:, sl], w[:, 2 * d:][:, sl]
    w_o = attn.c_proj.weight.detach().numpy()[sl, :]
    c = gpt2.circuits(layer, head)
    for got, want in ((c.w_q, w_q), (c.w_k, w_k), (c.w_v, w_v), (c.w_o, w_o)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
    assert c.qk.shape == c.ov.shape == (d, d) and c.kv_head == head
    np.testing.assert_allclose(c.qk, w_q @ w_k.T, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(c.ov, w_v @ w_o, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(c.qk_singular, np.linalg.svd(w_q @ w_k.T, compute_uv=False)[:dh],
                               rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(c.ov_singular, np.linalg.svd(w_v @ w_o, compute_uv=False)[:dh],
                               rtol=1e-4, atol=1e-7)
    # the copying score from every eigenvalue of the full (V, V) OV circuit
    w_e = ref.transformer.wte.weight.detach().double().numpy()
    w_u = ref.lm_head.weight.detach().double().numpy().T
    full = w_e @ (w_v @ w_o).astype(np.float64) @ w_u
    lam = np.linalg.eigvals(full)
    assert c.copying_score == pytest.approx(lam.sum().real / np.abs(lam).sum(), abs=1e-6)
    # the top pairs are the largest entries of the full circuits
    ids = np.arange(4, w_e.shape[0])  # the fixture's 4 special tokens are left out
    sub = full[np.ix_(ids, ids)]
    assert c.ov_pairs[0].value == pytest.approx(sub.max(), rel=1e-4)
    r, k = np.unravel_index(sub.argmax(), sub.shape)
    assert (c.ov_pairs[0].row_id, c.ov_pairs[0].col_id) == (ids[r], ids[k])
    qk_full = (w_e @ (w_q @ w_k.T) @ w_e.T)[np.ix_(ids, ids)]
    assert [p.value for p in c.qk_pairs] == pytest.approx(np.sort(qk_full.ravel())[::-1][:10], rel=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize(("which", "head", "kv", "other_head", "other_kv"),
                         [("llama", 5, 1, 1, 0),  # 8 query heads, 2 KV heads: head 5 reads KV head 1
                          ("qwen2", 3, 0, 1, 0)])  # MQA: every query head reads KV head 0
def test_gqa_circuits_read_the_shared_kv_head(which, head, kv, other_head, other_kv, request):
    loaded, folder = model_and_folder(request, which)
    ref = causal_lm(folder)
    cfg = ref.config
    H, Hkv, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.hidden_size
    dh = d // H
    layer = 1
    assert kv == head // (H // Hkv) and other_kv == other_head // (H // Hkv)
    at = ref.model.layers[layer].self_attn
    q = at.q_proj.weight.detach().numpy()[head * dh:(head + 1) * dh].T
    k = at.k_proj.weight.detach().numpy()[kv * dh:(kv + 1) * dh].T
    v = at.v_proj.weight.detach().numpy()[kv * dh:(kv + 1) * dh].T
    o = at.o_proj.weight.detach().numpy()[:, head * dh:(head + 1) * dh].T
    c = loaded.circuits(layer, head)
    assert c.kv_head == kv and c.w_q.shape == (d, dh) and c.w_o.shape == (dh, d)
    for got, want in ((c.w_q, q), (c.w_k, k), (c.w_v, v), (c.w_o, o)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
    np.testing.assert_allclose(c.qk, q @ k.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.ov, v @ o, rtol=1e-5, atol=1e-7)
    other = loaded.circuits(layer, other_head)
    assert other.kv_head == other_kv and not np.allclose(other.w_q, c.w_q)
    # a KV head of its own reads other keys; the shared one the same
    assert np.array_equal(other.w_k, c.w_k) == (other_kv == kv)
    assert np.array_equal(other.w_v, c.w_v) == (other_kv == kv)
    assert any("RoPE" in n for n in c.notes)
    # untied Llama and Qwen2: the unembedding is the checkpoint's lm_head, not W_Eᵀ
    assert not cfg.tie_word_embeddings
    w_e = ref.model.embed_tokens.weight.detach().double().numpy()
    lam = np.linalg.eigvals(w_e @ (v @ o).astype(np.float64) @ ref.lm_head.weight.detach().double().numpy().T)
    assert c.copying_score == pytest.approx(lam.sum().real / np.abs(lam).sum(), abs=1e-6)
    with pytest.raises(InspectError, match=f"head {H} does not exist"):
        loaded.circuits(0, H)


def test_encoder_circuits_have_no_copying_score(minilm):
    c = minilm.circuits(0, 3)
    assert c.w_q.shape == (384, 32) and c.copying_score is None and c.ov_pairs is None
    assert c.qk_pairs is not None and len(c.qk_pairs) == 10 and c.pair_vocab == 8192


# ---- logit lens -------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["gpt2", "llama", "qwen2"])
def test_logit_lens_ends_at_the_models_own_prediction(which, request):
    loaded, folder = model_and_folder(request, which)
    ref = causal_lm(folder)
    ids = ids_of(loaded, TEXT)
    with torch.no_grad():
        out = ref(input_ids=torch.tensor([ids]), output_hidden_states=True)
    logits = out.logits[0]
    lens = loaded.logit_lens(TEXT, k=3)
    L, s = loaded.n_layers, len(ids)
    assert lens.top_ids.shape == lens.top_probs.shape == (L + 1, s, 3)
    assert lens.tokens == loaded.tokens_of(ids)
    assert (np.diff(lens.top_probs, axis=-1) <= 0).all()
    assert lens.top_ids[L, :, 0].tolist() == logits.argmax(-1).tolist()
    assert loaded.top_prediction(TEXT) == int(logits[-1].argmax())
    assert loaded.top_prediction(TEXT, position=2) == int(logits[2].argmax())
    for bad in (1.5, "x", s, -s - 1):
        with pytest.raises(InspectError, match="does not exist"):
            loaded.top_prediction(TEXT, position=bad)
    probs = torch.softmax(logits, -1)
    np.testing.assert_allclose(lens.top_probs[L], probs.topk(3).values.numpy(), rtol=1e-4, atol=1e-6)
    # rows 0..L-1: transformers' own hidden states through its final norm and lm_head
    norm = ref.transformer.ln_f if which == "gpt2" else ref.model.norm
    for layer in range(L):
        with torch.no_grad():
            p = torch.softmax(ref.lm_head(norm(out.hidden_states[layer][0])), -1)
        np.testing.assert_allclose(lens.top_probs[layer], p.topk(3).values.numpy(), rtol=1e-4, atol=1e-6)
        assert lens.top_ids[layer, :, 0].tolist() == p.argmax(-1).tolist()
    nxt = probs[torch.arange(s - 1), torch.tensor(ids[1:])]
    np.testing.assert_allclose(lens.next_probs[L, :-1], nxt.numpy(), rtol=1e-4, atol=1e-7)
    assert np.isnan(lens.next_probs[:, -1]).all()


def test_encoders_are_refused_where_they_have_no_next_token(minilm):
    for call in (lambda: minilm.logit_lens(TEXT),
                 lambda: minilm.logit_attribution(TEXT, "cat"),
                 lambda: minilm.activation_patching(TEXT, CORRUPTED, "cat")):
        with pytest.raises(InspectError, match="causal language model") as info:
            call()
        assert len(str(info.value).splitlines()) == 1


# ---- direct logit attribution ------------------------------------------------------------------
@pytest.mark.parametrize("which", ["gpt2", "llama", "qwen2", "prenorm_run"])
def test_attributions_add_up_to_the_logit(which, request):
    loaded = request.getfixturevalue(which)
    text, target = (CLEAN_RUN, "H") if which == "prenorm_run" else (TEXT, "mat")
    att = loaded.logit_attribution(text, target)
    assert att.heads.shape == (loaded.n_layers, loaded.n_heads)
    assert att.position == len(att.tokens) - 1 and att.target == target
    assert {"embeddings", "biases"} <= set(att.parts)
    assert {f"mlp {i}" for i in range(loaded.n_layers)} <= set(att.parts)
    assert att.total == pytest.approx(att.heads.sum() + sum(att.parts.values()), rel=1e-12)
    assert abs(att.total - att.logit) <= 1e-4 * max(1.0, abs(att.logit)), (att.total, att.logit)
    assert att.norm_scale is not None and att.norm_scale > 0 and not att.notes
    same = loaded.logit_attribution(text, att.target_id, position=att.position)
    assert same.total == pytest.approx(att.total) and np.allclose(same.heads, att.heads)
    mid = loaded.logit_attribution(text, target, position=2)
    assert abs(mid.total - mid.logit) <= 1e-4 * max(1.0, abs(mid.logit))


@pytest.mark.parametrize("which", ["gpt2", "llama", "qwen2"])
def test_attribution_logit_is_the_models_own(which, request):
    loaded, folder = model_and_folder(request, which)
    ids = ids_of(loaded, TEXT)
    with torch.no_grad():
        logits = causal_lm(folder)(input_ids=torch.tensor([ids])).logits[0]
    target = loaded.tokenizer.convert_tokens_to_ids("mat")
    att = loaded.logit_attribution(TEXT, "mat", position=3)
    assert att.logit == pytest.approx(float(logits[3, target]), rel=1e-5, abs=1e-6)


def test_attribution_refusals(trained, gpt2):
    with pytest.raises(InspectError, match=r"pre-norm model.*post-norm") as info:
        trained.logit_attribution(CLEAN_RUN, "H")
    assert len(str(info.value).splitlines()) == 1
    with pytest.raises(InspectError, match="2 tokens"):
        gpt2.logit_attribution(TEXT, "cat sat")
    with pytest.raises(InspectError, match="position 40 does not exist"):
        gpt2.logit_attribution(TEXT, "cat", position=40)
    with pytest.raises(InspectError, match="id 999 does not exist"):
        gpt2.logit_attribution(TEXT, 999)


# ---- activation patching -----------------------------------------------------------------------
@pytest.mark.parametrize("which", ["llama", "qwen2"])
def test_patching_identities_and_an_independent_patch(which, request):
    loaded, folder = model_and_folder(request, which)
    ref = causal_lm(folder)
    L, H = loaded.n_layers, loaded.n_heads
    clean, corr = ids_of(loaded, TEXT), ids_of(loaded, CORRUPTED)
    changed = [i for i, (a, b) in enumerate(zip(clean, corr, strict=True)) if a != b]
    assert len(changed) == 2
    answer, wrong = "mat", "dog"
    a_id, w_id = (loaded.tokenizer.convert_tokens_to_ids(t) for t in (answer, wrong))

    def metric(ids, hook=None):
        handle = None if hook is None else ref.model.layers[hook[0]].self_attn.o_proj \
            .register_forward_pre_hook(hook[1])
        try:
            with torch.no_grad():
                lg = ref(input_ids=torch.tensor([ids])).logits[0, -1]
        finally:
            if handle is not None:
                handle.remove()
        return float(lg[a_id] - lg[w_id])

    res = loaded.activation_patching(TEXT, CORRUPTED, answer, wrong=wrong)
    assert res.effect.shape == (L, H) and res.method == "exact"
    assert res.clean_metric == pytest.approx(metric(clean), abs=1e-5)
    assert res.corrupted_metric == pytest.approx(metric(corr), abs=1e-5)
    # layer 1, head H − 2 patched by hand: transformers' o_proj input, clean run → corrupted run
    dh, layer, head = ref.config.hidden_size // H, 1, H - 2
    saved = {}
    metric(clean, (layer, lambda _m, a: saved.__setitem__("z", a[0].clone())))

    def patch(_m, a):
        z = a[0].clone()
        z[..., head * dh:(head + 1) * dh] = saved["z"][..., head * dh:(head + 1) * dh]
        return (z,)

    want = (metric(corr, (layer, patch)) - metric(corr)) / (metric(clean) - metric(corr))
    assert res.effect[layer, head] == pytest.approx(want, abs=1e-4)
    # the residual stream: at layer 0 (the embeddings) an unchanged position changes nothing
    pos = loaded.activation_patching(TEXT, CORRUPTED, answer, wrong=wrong, over="positions")
    assert pos.effect.shape == (L, len(clean))
    unchanged = [i for i in range(len(clean)) if i not in changed]
    np.testing.assert_allclose(pos.effect[0, unchanged], 0.0, atol=1e-5)
    # a one-token corruption: patching that position's embedding is the whole clean run
    one = "the cat sat on the mat . the dog"
    single = loaded.activation_patching(TEXT, one, answer, wrong=wrong, over="positions")
    assert single.effect[0, -1] == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(single.effect[0, :-1], 0.0, atol=1e-5)
    assert single.effect[1, -1] == pytest.approx(1.0, abs=1e-4)  # the last layer's input too
    # progress is reported and can cancel
    seen = []
    loaded.activation_patching(TEXT, CORRUPTED, answer, batch=3, progress=lambda d, t: seen.append((d, t)))
    # heads in batches of 3, per layer: the count moves once per forward pass (and is reported
    # again while one runs: a cancel check, engine.models.cancel)
    n = L * -(-H // 3)
    assert seen[-1] == (n, n) and sorted({d for d, _t in seen if d}) == list(range(1, n + 1))

    def cancel(_d, _t):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        loaded.activation_patching(TEXT, CORRUPTED, answer, batch=3, progress=cancel)


def test_patching_refusals(gpt2):
    for args, kw, says in (
            ((TEXT, "the dog sat", "mat"), {}, "same token length"),
            ((TEXT, TEXT, "mat"), {}, "same metric"),
            ((TEXT, CORRUPTED, "mat"), {"wrong": "mat"}, "same token"),
            ((TEXT, CORRUPTED, "mat"), {"over": "layers"}, "over must be"),
            ((TEXT, CORRUPTED, "mat"), {"method": "guess"}, "method must be"),
            ((TEXT, CORRUPTED, "zebra"), {}, r"answer .zebra. is not in"),
            ((TEXT, CORRUPTED, "mat"), {"wrong": "cat dog"}, r"wrong .cat dog. is 2 tokens")):
        with pytest.raises(InspectError, match=says) as info:
            gpt2.activation_patching(*args, **kw)
        assert len(str(info.value).splitlines()) == 1


def test_patching_fits_its_batch_in_the_free_memory(gpt2, monkeypatch):
    """Exact patching of a long text made one forward pass of 16 sequences whatever the
    memory: it now patches fewer at a time, and refuses in one line when not even one fits."""
    import engine.models.patching as patching

    s = len(gpt2.tokenize(TEXT)[0])
    per_seq = 3 * gpt2.n_heads * s * s * 4
    want = gpt2.activation_patching(TEXT, CORRUPTED, "mat")
    monkeypatch.setattr(patching, "available_memory", lambda _device: int(2 * per_seq / 0.8) + 1)
    calls = []
    got = gpt2.activation_patching(TEXT, CORRUPTED, "mat", progress=lambda d, t: calls.append(t))
    np.testing.assert_allclose(got.effect, want.effect, atol=1e-5)
    assert calls[-1] == gpt2.n_layers * gpt2.n_heads  # one head per forward pass
    monkeypatch.setattr(patching, "available_memory", lambda _device: per_seq // 10)
    for method in ("exact", "attribution"):
        with pytest.raises(InspectError, match="is free: use a shorter text") as info:
            gpt2.activation_patching(TEXT, CORRUPTED, "mat", method=method)
        assert len(str(info.value).splitlines()) == 1


def test_detectors_fit_their_sequences_in_the_free_memory(gpt2, monkeypatch):
    """The detectors held every layer's (B, H, S, S) weights of the whole batch at once: they
    now run as many sequences at a time as fit (the same scores), and refuse in one line,
    with the estimate, when not even one does."""
    import engine.models.detectors as detectors

    want = gpt2.all_head_scores(n_tokens=20, batch=4, seed=3)
    s = 1 + 2 * 20
    per_seq = gpt2.n_layers * gpt2.n_heads * s * s * 8 + 3 * gpt2.n_heads * s * s * 4
    sizes = []
    real = detectors._attention
    monkeypatch.setattr(detectors, "_attention", lambda m, ids: sizes.append(len(ids)) or real(m, ids))
    monkeypatch.setattr(detectors, "available_memory", lambda _device: int(per_seq / 0.8) + 1)
    got = gpt2.all_head_scores(n_tokens=20, batch=4, seed=4)  # (another seed: not the cached one)
    assert sizes == [1, 1, 1, 1]
    monkeypatch.undo()
    again = gpt2.all_head_scores(n_tokens=20, batch=4, seed=4)
    for kind in want:
        np.testing.assert_allclose(got[kind], again[kind], atol=1e-6)
    monkeypatch.setattr(detectors, "available_memory", lambda _device: per_seq // 10)
    with pytest.raises(InspectError, match="is free: use fewer tokens") as info:
        gpt2.all_head_scores(n_tokens=20, batch=4, seed=5)
    assert len(str(info.value).splitlines()) == 1


def test_the_logit_lens_reports_progress_and_stops_when_told(gpt2):
    seen = []
    lens = gpt2.logit_lens(TEXT, k=2, progress=lambda d, t: seen.append((d, t)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] > 1  # from nothing to all of it
    assert all(b[0] >= a[0] and b[1] == a[1] for a, b in itertools.pairwise(seen))
    np.testing.assert_array_equal(lens.top_ids, gpt2.logit_lens(TEXT, k=2).top_ids)

    class Stop(Exception):
        pass

    def stop(done, _total):
        if done >= 1:
            raise Stop

    with pytest.raises(Stop):
        gpt2.logit_lens(TEXT, k=2, progress=stop)


# ---- Q/K space ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("which", "head", "kv"), [("llama", 5, 1), ("qwen2", 3, 0)])
def test_qk_embedding_is_one_pca_over_queries_and_keys(which, head, kv, request):
    loaded = request.getfixturevalue(which)
    texts = [TEXT, "a big red dog ran in the park"]
    emb = loaded.qk_embedding(texts, 1, head, dims=3)
    traces = [loaded.inspect(t, layers=[1]) for t in texts]
    n = sum(t.seq_len for t in traces)
    assert emb.points.shape == (2 * n, 3) and emb.kv_head == kv
    assert emb.kinds == ["query"] * n + ["key"] * n
    assert emb.tokens == [tok for t in traces for tok in t.tokens] * 2
    assert emb.text_index == [i for i, t in enumerate(traces) for _ in t.tokens] * 2
    assert (np.diff(emb.explained) <= 0).all() and 0 < emb.explained.sum() <= 1
    x = torch.cat([t.queries[0][head] for t in traces] + [t.keys[0][kv] for t in traces]).double().numpy()
    x = x - x.mean(0)
    var = np.linalg.eigvalsh(x.T @ x)[::-1]
    np.testing.assert_allclose(emb.explained, var[:3] / var.sum(), rtol=1e-5)
    # the points are the data in the components' basis: distances are kept in 3-D up to the rest
    np.testing.assert_allclose((emb.points.astype(np.float64) ** 2).sum(0), var[:3], rtol=1e-4)
    with pytest.raises(InspectError, match="dims"):
        loaded.qk_embedding(TEXT, 0, 0, dims=9)


# ---- the inspect CLI ---------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), "inspect", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.slow
def test_cli_circuits_options(trained, gpt2_path, minilm_path, qwen2_path, capsys):
    import main

    run = str(trained.path)
    # --circuits --json: every head gets its three detector scores (a subprocess, as users run it)
    p = run_cli("--model", run, "--text", CLEAN_RUN, "--circuits", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert len(doc["heads"]) == 4
    for row in doc["heads"]:
        assert set(row["scores"]) == {"induction", "previous_token", "duplicate_token"}
        assert all(0 <= v <= 1 for v in row["scores"].values())
    best = max(doc["heads"], key=lambda r: r["scores"]["induction"])
    assert best["layer"] == 1
    # the text tables: scores columns, the lens, the patching grid (in this process: one child
    # above shows the command as users run it; each child costs a torch import)
    assert main.main(["inspect", "--model", run, "--text", CLEAN_RUN, "--circuits", "--logit-lens",
                      "--patch", CORRUPT_RUN, "--answer", "H"]) == 0
    out = capsys.readouterr().out
    assert " ind prev_t    dup" in out and "logit lens" in out
    assert "activation patching (exact)" in out and "largest effect: layer 1" in out
    # bad combinations exit 2, refusals 1, each with one line on stderr
    for argv, code, says in (
            (["--model", run, "--text", CLEAN_RUN, "--answer", "H"], 2, "--answer only applies with --patch"),
            (["--model", run, "--text", CLEAN_RUN, "--patch", CORRUPT_RUN], 2, "--patch needs --answer"),
            (["--model", run, "--text", CLEAN_RUN, "--attribute", ""], 2, "--attribute is empty"),
            (["--model", run, "--text", CLEAN_RUN, "--attribute", "H"], 1, "pre-norm"),
            (["--model", str(minilm_path), "--text", TEXT, "--logit-lens"], 1, "causal language model"),
            (["--model", run, "--text", CLEAN_RUN, "--patch", "ABC", "--answer", "H"], 1, "same token length")):
        assert main.main(["inspect", *argv]) == code, argv
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1, err
    # JSON of the lens, the attribution and the patching on a Hugging Face model
    assert main.main(["inspect", "--model", str(gpt2_path), "--text", TEXT, "--json", "--logit-lens",
                      "--attribute", "mat", "--patch", CORRUPTED, "--answer", "mat", "--wrong", "dog"]) == 0
    doc = json.loads(capsys.readouterr().out)
    lens, att, pat = doc["logit_lens"], doc["attribution"], doc["patching"]
    assert len(lens["rows"]) == 3 and len(lens["top_tokens"][0]) == len(doc["tokens"])
    assert abs(att["total"] - att["logit"]) <= 1e-4 * max(1, abs(att["logit"]))
    assert len(att["heads"]) == 8 and "mlp 1" in att["parts"]
    assert len(pat["effect"]) == 2 and len(pat["effect"][0]) == 4 and pat["wrong"] == "dog"
    assert main.main(["inspect", "--model", str(gpt2_path), "--text", TEXT, "--attribute", "#7"]) == 0
    assert "direct logit attribution of 'on' (id 7)" in capsys.readouterr().out
    # Qwen2 (MQA, byte-level BPE): the detectors of every head and the lens
    assert main.main(["inspect", "--model", str(qwen2_path), "--text", TEXT, "--json", "--circuits",
                      "--logit-lens"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["heads"]) == 2 * 4 and len(doc["tokens"]) == len(TEXT.split())
    assert all(set(row["scores"]) == {"induction", "previous_token", "duplicate_token"} for row in doc["heads"])
    assert len(doc["logit_lens"]["rows"]) == 3


def test_qk_projection_of_the_synthetic_layer():
    from engine import AttentionConfig, run
    from engine.models.circuits import project_qk

    trace = run(AttentionConfig(seq_len=12, n_heads=4, n_kv_heads=2, positional="rope"))
    points, explained, comps, mean = project_qk(trace.q[0, 3], trace.k[0, 1], dims=2)
    assert points.shape == (24, 2) and comps.shape == (2, 16) and mean.shape == (16,)
    assert explained[0] >= explained[1] > 0


def test_hooks_leave_other_threads_alone(llama):
    import threading

    from engine.models.anatomy import anatomy_of, hooked

    before = llama.inspect(TEXT).attentions

    def boom(*_args):
        raise RuntimeError("hook ran in the wrong thread")

    result = {}
    with hooked(pre=[(anatomy_of(llama).blocks[0], boom)]):
        worker = threading.Thread(target=lambda: result.setdefault("a", llama.inspect(TEXT).attentions))
        worker.start()
        worker.join()
        with pytest.raises(RuntimeError, match="wrong thread"):
            llama.inspect(TEXT)
    assert torch.equal(result["a"], before)
