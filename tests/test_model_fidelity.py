"""Numbers you can trust on any model (issue 46): the circuits lens against transformers' own
forward pass, family by family, and the regressions of the issue's items 1-6.

For every family a tiny random model (2 layers, d_model 32-64) is built with transformers and
saved with a tokenizer, opened with ``load_model``, and compared with transformers' *own*
model (``AutoModelForCausalLM`` / ``AutoModel``, eager attention) — its logits, its
``output_hidden_states`` through its own final norm and ``lm_head`` (and Gemma-2's softcap,
Cohere's and Granite's logit scaling, written out here from its config), its attentions. Never with the project's own code.
"""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pytest
import torch
from models_fixtures import (
    MAX_LEN,
    SPECIALS,
    WORDS,
    build_gpt2,
    build_llama,
    build_mistral,
    build_qwen2,
    save_tokenizer,
)

from engine.models import InspectError, ModelLoadError, load_model

TEXT = "the cat sat on the mat . the cat"
CORRUPTED = "the dog sat on the mat . the dog"  # the same token length
VOCAB = len(SPECIALS) + len(WORDS)
CAUSAL = ("gpt2", "llama_gqa", "llama_mqa", "qwen2", "mistral", "opt_pre", "opt_post", "gemma2", "neox",
          "cohere", "granite")


def _save(model, folder, *, bos=True):
    model.save_pretrained(folder)
    save_tokenizer(folder, bos=bos)
    return folder


def build_opt(folder, *, pre_norm: bool):
    from transformers import OPTConfig, OPTForCausalLM

    torch.manual_seed(4)
    cfg = OPTConfig(vocab_size=VOCAB, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                    num_attention_heads=4, max_position_embeddings=MAX_LEN, word_embed_proj_dim=32,
                    do_layer_norm_before=pre_norm, bos_token_id=1, eos_token_id=2, pad_token_id=3)
    model = OPTForCausalLM(cfg)
    with torch.no_grad():  # a final norm that matters: its γ far from 1
        if pre_norm:
            model.model.decoder.final_layer_norm.weight.uniform_(0.2, 3.0)
    return _save(model, folder)


def build_gemma2(folder):
    from transformers import Gemma2Config, Gemma2ForCausalLM

    torch.manual_seed(5)
    cfg = Gemma2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                       max_position_embeddings=MAX_LEN, final_logit_softcapping=3.0,
                       attn_logit_softcapping=5.0, sliding_window=4, bos_token_id=1,
                       eos_token_id=2, pad_token_id=3)
    model = Gemma2ForCausalLM(cfg)
    with torch.no_grad():  # logits and attention scores well past both caps
        model.model.embed_tokens.weight.mul_(10)
        model.model.norm.weight.fill_(1.0)
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(30)
            layer.self_attn.k_proj.weight.mul_(30)
    return _save(model, folder)


def build_neox(folder):
    """GPT-NeoX / Pythia: fused per-head QKV, partial rotary, parallel residual, an untied
    unembedding saved as ``embed_out`` (the Pythia checkpoints' name)."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    torch.manual_seed(6)
    cfg = GPTNeoXConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, max_position_embeddings=MAX_LEN, rotary_pct=0.5,
                        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
    return _save(GPTNeoXForCausalLM(cfg), folder)


def build_cohere(folder):
    """Cohere: parallel attention and MLP from one LayerNorm without bias, tied embeddings,
    its logits multiplied by ``logit_scale`` after lm_head (0.0625 in Command R)."""
    from transformers import CohereConfig, CohereForCausalLM

    torch.manual_seed(8)
    cfg = CohereConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=MAX_LEN,
                       logit_scale=0.25, bos_token_id=1, eos_token_id=2, pad_token_id=3)
    model = CohereForCausalLM(cfg)
    with torch.no_grad():  # logits large enough that the scale changes the distribution
        model.model.embed_tokens.weight.mul_(20)
    return _save(model, folder)


def build_granite(folder):
    """Granite: its logits divided by ``logits_scaling``, what attention and MLP add scaled by
    ``residual_multiplier``, the embeddings by ``embedding_multiplier``, the scores by
    ``attention_multiplier`` (granite-3's values, about)."""
    from transformers import GraniteConfig, GraniteForCausalLM

    torch.manual_seed(9)
    cfg = GraniteConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=MAX_LEN,
                        logits_scaling=8.0, residual_multiplier=0.22, embedding_multiplier=12.0,
                        attention_multiplier=0.015625, tie_word_embeddings=False, bos_token_id=1,
                        eos_token_id=2, pad_token_id=3)
    model = GraniteForCausalLM(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(200)  # logits well past 1 after the division
    return _save(model, folder)


def build_bert(folder):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(7)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, max_position_embeddings=MAX_LEN)
    return _save(BertForMaskedLM(cfg), folder)


BUILDERS = {
    "gpt2": build_gpt2,
    "llama_gqa": lambda f: build_llama(f, heads=8, kv_heads=2),
    "llama_mqa": lambda f: build_llama(f, heads=4, kv_heads=1),
    "qwen2": build_qwen2,
    "mistral": build_mistral,
    "opt_pre": lambda f: build_opt(f, pre_norm=True),
    "opt_post": lambda f: build_opt(f, pre_norm=False),
    "gemma2": build_gemma2,
    "neox": build_neox,
    "cohere": build_cohere,
    "granite": build_granite,
    "bert": build_bert,
}

#: the model's own final norm, read off transformers' own class (None: post-norm, no final norm)
OWN_FINAL_NORM = {
    "gpt2": lambda m: m.transformer.ln_f,
    "llama_gqa": lambda m: m.model.norm,
    "llama_mqa": lambda m: m.model.norm,
    "qwen2": lambda m: m.model.norm,
    "mistral": lambda m: m.model.norm,
    "opt_pre": lambda m: m.model.decoder.final_layer_norm,
    "opt_post": lambda m: None,
    "gemma2": lambda m: m.model.norm,
    "neox": lambda m: m.gpt_neox.final_layer_norm,
    "cohere": lambda m: m.model.norm,
    "granite": lambda m: m.model.norm,
}


class Family:
    """One family's folder, its load_model result, and transformers' own model."""

    def __init__(self, name, folder):
        from transformers import AutoModel, AutoModelForCausalLM

        self.name, self.folder = name, folder
        self.loaded = load_model(folder)
        cls = AutoModel if name == "bert" else AutoModelForCausalLM
        self.ref = cls.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
        self.ids = self.loaded.tokenize(TEXT)[0]
        with torch.no_grad():
            self.out = self.ref(input_ids=torch.tensor([self.ids]), output_hidden_states=True,
                                output_attentions=True)

    def own_head(self, hidden):
        """transformers' own final norm, lm_head, and the config's logit scaling (Cohere's
        ``logit_scale``, Granite's ``logits_scaling``) and softcap, written out here."""
        with torch.no_grad():
            norm = OWN_FINAL_NORM[self.name](self.ref)
            logits = self.ref.lm_head(hidden if norm is None else norm(hidden))
        if self.name == "cohere":
            logits = logits * self.ref.config.logit_scale
        if self.name == "granite":
            logits = logits / self.ref.config.logits_scaling
        cap = getattr(self.ref.config, "final_logit_softcapping", None)
        return logits if cap is None else cap * torch.tanh(logits / cap)


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    """Family name → :class:`Family`, built on first use and shared by the module."""
    made: dict[str, Family] = {}

    def get(name):
        if name not in made:
            made[name] = Family(name, BUILDERS[name](tmp_path_factory.mktemp(name)))
        return made[name]

    return get


# ---- every family against its own forward pass -------------------------------------------------
@pytest.mark.parametrize("name", CAUSAL)
def test_lens_last_row_is_the_models_own_output_distribution(name, families):
    fam = families(name)
    lens = fam.loaded.logit_lens(TEXT, k=5)
    L, s = fam.loaded.n_layers, len(fam.ids)
    probs = torch.softmax(fam.out.logits[0].double(), -1)
    top = probs.topk(5)
    np.testing.assert_allclose(lens.top_probs[L], top.values.numpy(), rtol=1e-4, atol=1e-6)
    assert lens.top_ids[L, :, 0].tolist() == probs.argmax(-1).tolist()
    nxt = probs[torch.arange(s - 1), torch.tensor(fam.ids[1:])]
    np.testing.assert_allclose(lens.next_probs[L, :-1], nxt.numpy(), rtol=1e-4, atol=1e-7)
    assert fam.loaded.top_prediction(TEXT) == int(probs[-1].argmax())


@pytest.mark.parametrize("name", CAUSAL)
def test_each_lens_row_is_the_own_final_norm_and_unembedding_of_the_hidden_states(name, families):
    fam = families(name)
    lens = fam.loaded.logit_lens(TEXT, k=3)
    hs = fam.out.hidden_states
    assert len(hs) == fam.loaded.n_layers + 1
    for layer in range(fam.loaded.n_layers):  # hidden_states[l]: the stream after layer l − 1
        p = torch.softmax(fam.own_head(hs[layer][0]).double(), -1)
        np.testing.assert_allclose(lens.top_probs[layer], p.topk(3).values.numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=f"{name} row {layer}")
        assert lens.top_ids[layer, :, 0].tolist() == p.argmax(-1).tolist()


@pytest.mark.parametrize("name", [n for n in CAUSAL if n != "opt_post"])
def test_attribution_adds_up_to_the_models_own_logit(name, families):
    """The parts add up to the model's own logit; Gemma-2: its norms after attention and MLP
    frozen like the final norm, and the sum is the logit before the model's softcap (its
    config's cap · tanh(z / cap) is the model's logit)."""
    fam = families(name)
    logits = fam.out.logits[0]
    cap = getattr(fam.ref.config, "final_logit_softcapping", None)
    for position in (-1, 3):
        target = int(logits[position].argmax())
        att = fam.loaded.logit_attribution(TEXT, target, position=position)
        own = float(logits[position, target])
        assert att.logit == pytest.approx(own, rel=1e-5, abs=1e-6)
        assert att.total == pytest.approx(att.heads.sum() + sum(att.parts.values()), rel=1e-12)
        total = att.total if cap is None else cap * np.tanh(att.total / cap)
        assert abs(total - own) <= 1e-4 * max(1.0, abs(own)), (name, att.total, own)
        assert (cap is not None) == any("caps its logits" in n for n in att.notes)


@pytest.mark.parametrize("name", ["opt_post"])
def test_attribution_refuses_where_the_parts_do_not_add_up(name, families):
    """Post-norm OPT rescales the stream after each block: no split into parts exists, said
    in one line instead of numbers."""
    fam = families(name)
    with pytest.raises(InspectError) as info:
        fam.loaded.logit_attribution(TEXT, "cat")
    assert len(str(info.value).splitlines()) == 1


@pytest.mark.parametrize("name", CAUSAL)
def test_patching_metrics_are_the_models_own_logit_differences(name, families):
    fam = families(name)
    tok = fam.loaded.tokenizer
    answer, wrong = tok.convert_tokens_to_ids("cat"), tok.convert_tokens_to_ids("dog")
    if name == "qwen2":
        answer, wrong = tok.convert_tokens_to_ids("Ġcat"), tok.convert_tokens_to_ids("Ġdog")
    res = fam.loaded.activation_patching(TEXT, CORRUPTED, answer, wrong=wrong, over="heads")
    corrupted_ids = fam.loaded.tokenize(CORRUPTED)[0]
    with torch.no_grad():
        c_logits = fam.ref(input_ids=torch.tensor([corrupted_ids])).logits[0, -1]
    clean = fam.out.logits[0, -1]
    assert res.clean_metric == pytest.approx(float(clean[answer] - clean[wrong]), rel=1e-4, abs=1e-5)
    assert res.corrupted_metric == pytest.approx(float(c_logits[answer] - c_logits[wrong]), rel=1e-4,
                                                 abs=1e-5)
    assert res.effect.shape == (fam.loaded.n_layers, fam.loaded.n_heads)


@pytest.mark.parametrize("name", [*CAUSAL, "bert"])
def test_attention_and_fidelity_line_match_the_own_forward(name, families):
    """The captured attention is transformers' own eager attention (Gemma-2's attention
    softcapping included), and the opening check says the model is reproduced."""
    fam = families(name)
    trace = fam.loaded.inspect(TEXT)
    own = torch.stack([a[0] for a in fam.out.attentions])
    np.testing.assert_allclose(trace.attentions.numpy(), own.numpy(), rtol=1e-5, atol=1e-6)
    fid = fam.loaded.fidelity
    assert fid.ok, fid.failures
    assert fid.hidden is not None and fid.hidden < 1e-4
    if name == "bert":
        assert fid.summary.startswith("reproduces the model's own hidden states: max |Δ|")
        with pytest.raises(InspectError, match="causal language model"):
            fam.loaded.logit_lens(TEXT)
    else:
        assert fid.summary.startswith("reproduces the model's own logits: max |Δ|")
        assert fid.logits < 1e-4 and fid.probs < 1e-5


def test_bert_residual_stream_is_its_own_hidden_states(families):
    fam = families("bert")
    fid = fam.loaded.check_fidelity(TEXT)
    assert fid.ok and fid.hidden < 1e-5 and fid.n_tokens == len(fam.ids)


# ---- the items ---------------------------------------------------------------------------
def test_item1_a_final_norm_not_found_is_refused_with_the_measured_difference(families, monkeypatch):
    """The pre-norm OPT bug: with its final norm not found (as before the fix), the opening
    check measures the lens against the model's output and the lens, the attribution and
    patching refuse naming max |Δp| and the cause, instead of returning numbers."""
    import engine.models.anatomy as anatomy

    folder = families("opt_pre").folder
    monkeypatch.setattr(anatomy, "_FINAL_NORM_NAMES", ("no_such_norm",))
    broken = load_model(folder)
    fid = broken.fidelity
    assert not fid.ok and fid.probs > 1e-3
    assert fid.summary.startswith("the logit lens does not reproduce this model's output: max |Δp| ")
    assert fid.summary.endswith("its final norm was not found")
    assert any("Warning: the circuits lens" in n for n in broken.notices)
    for call in (lambda: broken.logit_lens(TEXT), lambda: broken.logit_attribution(TEXT, "cat"),
                 lambda: broken.activation_patching(TEXT, CORRUPTED, "cat")):
        with pytest.raises(InspectError, match=r"max \|Δp\| [0-9.e-]+; its final norm was not found") as info:
            call()
        assert len(str(info.value).splitlines()) == 1
    monkeypatch.undo()
    assert load_model(folder).fidelity.ok


def test_item2_gemma2_softcapped_output_is_the_models(families):
    """Gemma-2's final_logit_softcapping: the lens's last row is the model's (capped)
    distribution, not the uncapped one (p(top-1) 1.0 where the model gives far less)."""
    fam = families("gemma2")
    raw = fam.ref.lm_head(fam.out.hidden_states[-1][0]).detach()
    assert float(raw.abs().max()) > 2 * fam.ref.config.final_logit_softcapping  # the cap matters
    lens = fam.loaded.logit_lens(TEXT, k=1)
    capped = torch.softmax(fam.out.logits[0, -1].double(), -1).max()
    uncapped = torch.softmax(raw[-1].double(), -1).max()
    assert lens.top_probs[-1, -1, 0] == pytest.approx(float(capped), rel=1e-4)
    assert abs(float(uncapped) - float(capped)) > 0.05


def test_item3_neox_embed_out_is_its_unembedding(families):
    from safetensors import safe_open

    fam = families("neox")
    with safe_open(str(fam.folder / "model.safetensors"), "pt") as f:
        assert "embed_out.weight" in f.keys()  # the Pythia layout
    lens = fam.loaded.logit_lens(TEXT, k=1)
    assert lens.top_ids[-1, :, 0].tolist() == fam.out.logits[0].argmax(-1).tolist()


@pytest.mark.parametrize("config_layers", [1, 3])
def test_item4_a_config_that_disagrees_with_the_weights_is_refused(families, tmp_path, config_layers):
    src = families("llama_gqa").folder
    folder = tmp_path / "edited"
    shutil.copytree(src, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["num_hidden_layers"] = config_layers
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelLoadError) as info:
        load_model(folder)
    msg = str(info.value)
    assert info.value.reason == "bad_config" and len(msg.splitlines()) == 1
    assert f"it says the model has {config_layers} layers" in msg and "2" in msg


def test_item5_patching_past_the_position_limit_names_both_texts(families):
    fam = families("llama_gqa")
    clean = " ".join(["the cat sat on the mat ."] * 12)  # 7 · 12 + BOS = 85 tokens > 64
    corrupted = " ".join(["the dog sat on the mat ."] * 13)  # 92 tokens
    with pytest.raises(InspectError) as info:
        fam.loaded.activation_patching(clean, corrupted, "cat")
    msg = str(info.value)
    assert len(msg.splitlines()) == 1
    assert "the clean text has 85 tokens and the corrupted one 92" in msg and "at most 64" in msg


def test_item6_a_one_token_tokenizer_is_said(families, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    folder = tmp_path / "one_token"
    shutil.copytree(families("llama_gqa").folder, folder)
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / f).unlink(missing_ok=True)
    tk = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="a").save_pretrained(folder)
    loaded = load_model(folder)
    notes = [n for n in loaded.notices if "knows only 1 token" in n]
    assert len(notes) == 1 and f"the model has {VOCAB} token embeddings" in notes[0]
    assert set(loaded.inspect(TEXT).tokens) == {"a"}


# ---- where users see it ------------------------------------------------------------------------
def test_cli_inspect_shows_the_fidelity_line_and_json_field(families):
    from engine.models.report import inspect_command

    folder = str(families("opt_pre").folder)
    out, err = io.StringIO(), io.StringIO()
    assert inspect_command(folder, TEXT, None, False, out, err) == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[1].startswith("fidelity reproduces the model's own logits: max |Δ| ")
    out = io.StringIO()
    assert inspect_command(folder, TEXT, None, True, out, err) == 0, err.getvalue()
    doc = json.loads(out.getvalue())["fidelity"]
    assert doc["ok"] is True and doc["n_tokens"] == len(families("opt_pre").ids)
    assert doc["summary"] == lines[1][len("fidelity "):]
    assert doc["logits_max_abs_diff"] < 1e-4 and doc["hidden_max_abs_diff"] < 1e-4


# ---- item 14: the engine API's arguments, one rule, one line ---------------------------------------
def test_item14_api_arguments_follow_one_rule(families):
    from engine.models.patching import corrupt_text

    loaded = families("gpt2").loaded
    n = VOCAB
    for vocab, why in ((["x"], "'x' is not an id"), ([True], "True is not an id"), ([], "it is empty"),
                       ([n], f"{n} is not one"), (range(10**7), "goes outside them"),
                       (iter(int, 1), "more than"), ("abc", "got str")):
        with pytest.raises(InspectError, match=f"vocab must hold token ids .*{why}") as info:
            loaded.circuits(0, 0, vocab=vocab)
        assert len(str(info.value).splitlines()) == 1
    with pytest.raises(InspectError, match="seed must be a whole number >= 0, not -1"):
        corrupt_text(loaded, TEXT, seed=-1)
    # NumPy integers are whole numbers wherever Python ints are (k was refused, target accepted)
    lens = loaded.logit_lens(TEXT, k=np.int64(2))
    assert lens.top_ids.shape[-1] == 2
    att = loaded.logit_attribution(TEXT, np.int64(5), position=np.int64(2))
    assert (att.target_id, att.position) == (5, 2)
    assert loaded.circuits(np.int64(1), np.int64(0), top=np.int64(1), vocab=np.arange(6)).pair_vocab == 6
    assert loaded.inspect(TEXT, layers=np.int64(1)).layers == [1]
    for bad in (True, 2.0, "2"):
        with pytest.raises(InspectError, match="k must be between"):
            loaded.logit_lens(TEXT, k=bad)


def test_item14_logit_lens_of_a_one_token_model_names_no_k(tmp_path):
    """``inspect --logit-lens`` on a model of a one-token vocabulary refused with "k must be
    between 1 and 1, not 5", a k the CLI does not have: the default k is what the vocabulary
    holds, and the lens is the model's own (certain) output."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from engine.models.report import inspect_command

    torch.manual_seed(8)
    cfg = LlamaConfig(vocab_size=1, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=MAX_LEN,
                      bos_token_id=None, eos_token_id=None, pad_token_id=None)
    LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    tk = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="a", model_max_length=MAX_LEN).save_pretrained(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert inspect_command(str(tmp_path), "a a a", None, True, out, err, logit_lens=True) == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert doc["fidelity"]["ok"] and not any("knows only" in n for n in doc["notices"])
    loaded = load_model(tmp_path)
    lens = loaded.logit_lens("a a a")
    assert lens.top_probs.shape == (3, 3, 1) and np.all(lens.top_probs == 1.0)


@pytest.mark.parametrize("kind", ["a FIFO", "a device"])
def test_item14_a_config_json_that_is_not_a_file_is_named(families, tmp_path, kind):
    """A FIFO or /dev/zero config.json was reported as "has no config.json"."""
    import os

    folder = tmp_path / "model"
    shutil.copytree(families("gpt2").folder, folder)
    (folder / "config.json").unlink()
    if kind == "a FIFO":
        os.mkfifo(folder / "config.json")
    else:
        (folder / "config.json").symlink_to("/dev/zero")
    with pytest.raises(ModelLoadError) as info:
        load_model(folder)
    msg = str(info.value)
    assert msg == f"config.json in '{folder}' is not a regular file ({kind}), so it cannot be read: put the real file there."
    assert info.value.reason == "no_config"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_models_pass_their_check_within_its_rounding(families, dtype):
    """The check allows the rounding of the model's dtype (not float32's): a half-precision
    model is reproduced, and its lens's last row is its own distribution to that precision."""
    fam = families("opt_pre")
    loaded = load_model(fam.folder, dtype=dtype)
    assert loaded.fidelity.ok, loaded.fidelity.failures
    assert loaded.fidelity.summary.startswith("reproduces the model's own logits: max |Δ| ")
    lens = loaded.logit_lens(TEXT, k=1)
    own = torch.softmax(fam.out.logits[0].double(), -1).max(-1).values.numpy()
    np.testing.assert_allclose(lens.top_probs[-1, :, 0], own, atol=2e-2)
