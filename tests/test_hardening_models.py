"""Model folders whose config.json lies or is hostile (issue 19, defect 8).

A config.json is compared with the safetensors headers before anything is built
or allocated, and every refusal is one ModelLoadError line that blames what is
really wrong. The tiny models are random BERT / Llama folders written with
``save_pretrained``; the hostile ones are copies with config.json edited.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from models_fixtures import SPECIALS, WORDS, build_llama, built_once, copy_model, save_tokenizer

from engine.models import InspectError, ModelLoadError, load_model
from engine.models.report import inspect_command

ROOT = Path(__file__).resolve().parents[1]
#: address-space cap of the CLI subprocesses: a model that allocates what its config
#: claims hits it at once (MemoryError) instead of swapping the machine to death
AS_LIMIT = 3 * 1024**3


@pytest.fixture(scope="module")
def bert_path(tmp_path_factory) -> Path:
    """A 2-layer BERT (hidden 32, 4 heads) with random weights and a word tokenizer."""
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny_bert")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                     pad_token_id=3)
    BertModel(cfg).save_pretrained(folder)
    save_tokenizer(folder, bos=False)
    return folder


@pytest.fixture(scope="module")
def tiny_llama_path(tmp_path_factory) -> Path:
    """models_fixtures' Llama (GQA), built once per test run: only read (edits go to copies)."""
    return built_once(tmp_path_factory, "llama_gqa", build_llama)


def _edited(src: Path, dst: Path, **changes) -> Path:
    folder = copy_model(src, dst)
    cfg = json.loads((folder / "config.json").read_text())
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def _refused(folder, reason: str) -> str:
    with pytest.raises(ModelLoadError) as info:
        load_model(folder)
    err = info.value
    message = str(err)
    assert err.reason == reason, (err.reason, message)
    assert "\n" not in message.strip()
    return message


def _cli_inspect(folder: Path, text: str | bytes = "the cat sat", timeout: int = 120):
    """``main.py inspect`` in a subprocess under an address-space cap; (rc, stderr lines, s)."""
    code = (
        "import resource, sys, runpy\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({AS_LIMIT}, {AS_LIMIT}))\n"
        "sys.argv = ['main.py'] + sys.argv[1:]\n"
        "runpy.run_path('main.py', run_name='__main__')\n"
    )
    args = [sys.executable, "-c", code, "inspect", "--model", os.fsencode(folder), "--text", text]
    t0 = time.perf_counter()
    r = subprocess.run(args, cwd=ROOT, capture_output=True, timeout=timeout)
    seconds = time.perf_counter() - t0
    lines = [ln for ln in r.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return r.returncode, lines, seconds


# ---------------------------------------------------------------------------------------------
# config.json against the weights
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("changes, says", [
    ({"num_hidden_layers": 100_000}, "100000 layers"),
    ({"vocab_size": 10**9}, "does not match the weights"),
    ({"intermediate_size": 10**8}, "does not match the weights"),
], ids=["100k-layers", "vocab-1e9", "intermediate-1e8"])
def test_lying_config_refused_in_one_line_before_allocating(bert_path, tmp_path, changes, says):
    folder = _edited(bert_path, tmp_path / "liar", **changes)
    rc, lines, seconds = _cli_inspect(folder)
    assert rc == 1, lines
    assert len(lines) == 1, lines
    assert says in lines[0] and "config.json" in lines[0], lines[0]
    assert "MemoryError" not in lines[0]
    assert seconds < 60


@pytest.mark.slow
def test_huge_layer_count_refused_when_the_weights_names_do_not_tell(bert_path, tmp_path):
    from safetensors.torch import load_file, save_file

    folder = _edited(bert_path, tmp_path / "renamed", num_hidden_layers=100_000)
    st = folder / "model.safetensors"
    tensors = {k.replace("encoder.layer.", "encoder.stage_"): v for k, v in load_file(st).items()}
    save_file(tensors, str(st))
    rc, lines, seconds = _cli_inspect(folder)
    assert rc == 1 and len(lines) == 1, lines
    assert "100000 layers" in lines[0] and "config.json" in lines[0], lines[0]
    assert seconds < 60


def test_config_that_cannot_be_built_blames_the_config(bert_path, tmp_path):
    folder = _edited(bert_path, tmp_path / "act", hidden_act="no_such_activation")
    msg = _refused(folder, "bad_config")
    assert "config.json describes a model that cannot be built" in msg
    assert "weights" not in msg


def test_more_layers_than_the_weights_hold(bert_path, tmp_path):
    folder = _edited(bert_path, tmp_path / "layers", num_hidden_layers=100_000)
    t0 = time.perf_counter()
    msg = _refused(folder, "bad_config")
    assert time.perf_counter() - t0 < 20
    assert "100000 layers" in msg and "hold only 2" in msg


def test_wider_config_than_the_weights(tiny_llama_path, tmp_path):
    folder = _edited(tiny_llama_path, tmp_path / "wide", hidden_size=128, head_dim=16)
    msg = _refused(folder, "bad_config")
    assert "does not match the weights" in msg and "(35, 64)" in msg


def test_fewer_layers_in_config_than_weights_are_refused(bert_path, tmp_path):
    """Issue 46 item 4: a config with fewer layers than its weights silently loaded the smaller
    model; refused like more layers are, while asking for fewer (n_layers) still works."""
    folder = _edited(bert_path, tmp_path / "fewer", num_hidden_layers=1)
    msg = _refused(folder, "bad_config")
    assert "it says the model has 1 layers, but the weights (model.safetensors) hold 2" in msg
    assert len(msg.splitlines()) == 1
    assert load_model(bert_path, n_layers=1).n_layers == 1


# ---------------------------------------------------------------------------------------------
# messages that blame the right thing
# ---------------------------------------------------------------------------------------------


def test_heads_that_do_not_divide_hidden_size_blame_the_config(bert_path, tmp_path):
    folder = _edited(bert_path, tmp_path / "heads", num_attention_heads=7)
    msg = _refused(folder, "bad_config")
    assert "num_attention_heads (7) does not divide hidden_size (32)" in msg
    assert "weights" not in msg


def test_kv_heads_that_do_not_divide_heads_blame_the_config(tiny_llama_path, tmp_path):
    folder = _edited(tiny_llama_path, tmp_path / "kv", num_key_value_heads=3)
    msg = _refused(folder, "bad_config")
    assert "num_key_value_heads (3) does not divide num_attention_heads (8)" in msg


def test_zero_layers_says_the_model_has_no_layers(bert_path, tmp_path):
    folder = _edited(bert_path, tmp_path / "zero", num_hidden_layers=0)
    msg = _refused(folder, "no_attention")
    assert "no layers" in msg
    assert "attention interface" not in msg


@pytest.mark.parametrize("content", [
    "[" * 100_000 + "]" * 100_000,
    '{"model_type": "bert", "x": ' + "[" * 200 + "]" * 200 + "}",
    '{"model_type": "bert", "x": ' + '{"a": ' * 50 + "1" + "}" * 50 + "}",
], ids=["deep-list", "deep-in-config", "deep-dicts"])
def test_depth_bomb_in_config_is_not_a_valid_config(bert_path, tmp_path, content):
    folder = copy_model(bert_path, tmp_path / "bomb")
    (folder / "config.json").write_text(content)
    msg = _refused(folder, "no_config")
    assert "nested too deeply" in msg and "not a valid model config" in msg
    assert "recursion" not in msg


def test_huge_number_in_config_is_not_valid_json(bert_path, tmp_path):
    folder = copy_model(bert_path, tmp_path / "digits")
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": ' + "9" * 5000 + "}")
    assert "not valid JSON" in _refused(folder, "no_config")


def test_config_json_that_is_not_a_regular_file(bert_path, tmp_path):
    folder = copy_model(bert_path, tmp_path / "fifo")
    (folder / "config.json").unlink()
    os.mkfifo(folder / "config.json")
    _refused(folder, "no_config")  # is_file() is False for a FIFO: never opened, never blocks


def test_depth_bomb_in_safetensors_header(bert_path, tmp_path):
    folder = copy_model(bert_path, tmp_path / "header")
    header = b"[" * 50_000 + b"]" * 50_000
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    msg = _refused(folder, "corrupt_weights")
    assert "nested too deeply" in msg and "recursion" not in msg


def test_depth_bomb_in_shard_index(bert_path, tmp_path):
    folder = copy_model(bert_path, tmp_path / "index")
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors.index.json").write_text("[" * 100_000 + "]" * 100_000)
    msg = _refused(folder, "corrupt_weights")
    assert "nested too deeply" in msg and "recursion" not in msg


def test_config_without_model_type_is_no_model_folder(tmp_path):
    folder = tmp_path / "settings"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"theme": "dark", "volume": 3}))
    msg = _refused(folder, "no_config")
    assert "no model_type" in msg and "does not look like a Hugging Face model folder" in msg
    assert "newer transformers" not in msg


def test_unknown_model_type_still_suggests_a_newer_transformers(tmp_path):
    folder = tmp_path / "future"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "surely_not_a_model_type"}))
    assert "newer transformers" in _refused(folder, "unsupported")


# ---------------------------------------------------------------------------------------------
# inspect --text that is not UTF-8
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_text_not_utf8_exits_2_with_one_line(bert_path):
    rc, lines, _ = _cli_inspect(bert_path, text=b"the caf\xe9 sat")
    assert rc == 2, lines
    assert len(lines) == 1 and "not valid UTF-8" in lines[0], lines
    assert "TypeError" not in lines[0]


def test_inspect_command_text_not_utf8(bert_path):
    import io

    out, err = io.StringIO(), io.StringIO()
    assert inspect_command(str(bert_path), "the caf\udce9 sat", None, False, out, err) == 2
    assert "not valid UTF-8" in err.getvalue() and out.getvalue() == ""


def test_inspect_text_with_lone_surrogate_is_an_inspect_error(bert_path):
    model = load_model(bert_path)
    with pytest.raises(InspectError, match="not valid UTF-8"):
        model.inspect("the \ud800 cat")
    assert model.inspect("the cat sat").attentions.shape[0] == 2
