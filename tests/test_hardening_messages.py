"""Small losses and unclear messages (issue 28, item 12): each case says what it is, in one line.

A training run whose weights are NaN warns; a vocab.txt or a --config that is a FIFO is called
one (never read, never waited on); a run's version that is no number is "damaged", not
"newer"; transformers' reasons arrive whole (not "Validation error for field 'hidden_size':",
not "('added_tokens')"); a config value whose __repr__ raises is a ConfigError. The model
folders are loaded by `main.py inspect` in a subprocess under an address-space cap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from models_fixtures import build_llama, built_once, copy_model

from engine import AttentionConfig, ConfigError
from engine.models import ModelLoadError, load_model
from engine.training import TrainConfig, Trainer
from engine.training.run_folder import RunFolderError

ROOT = Path(__file__).resolve().parents[1]
AS_LIMIT = 3 * 1024**3


def _cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """``main.py ARGS`` in a subprocess under RLIMIT_AS (a read that blocks ends in the timeout)."""
    code = (
        "import resource, sys, runpy\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({AS_LIMIT}, {AS_LIMIT}))\n"
        "sys.argv = ['main.py'] + sys.argv[1:]\n"
        "runpy.run_path('main.py', run_name='__main__')\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _errors(r: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.strip() and "Warning" not in ln.split(":")[0]]


# ---- training runs ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("runs") / "run"
    tr = Trainer(TrainConfig(steps=2, n_layers=1, d_model=32, batch=4))
    tr.step(2)
    tr.save(folder)
    return folder


@pytest.mark.slow
def test_a_run_with_nan_weights_warns_in_one_line(run_folder, tmp_path):
    from safetensors.torch import load_file, save_file

    folder = copy_model(run_folder, tmp_path / "nan")
    weights = load_file(str(folder / "model.safetensors"))
    weights = {k: torch.full_like(v, float("nan")) if v.is_floating_point() else v for k, v in weights.items()}
    save_file(weights, str(folder / "model.safetensors"))
    r = _cli("inspect", "--model", str(folder), "--text", "ABCD ABCD")
    assert r.returncode == 0, r.stderr[-2000:]
    warned = [ln for ln in r.stdout.splitlines() if "NaN" in ln and "Warning" in ln]
    assert len(warned) == 1 and "diverged" in warned[0], r.stdout[:2000]
    r = _cli("inspect", "--model", str(folder), "--text", "ABCD ABCD", "--json")
    notices = json.loads(r.stdout)["notices"]
    assert any("NaN or infinite" in n for n in notices)
    # a healthy run says nothing of the kind
    r = _cli("inspect", "--model", str(run_folder), "--text", "ABCD ABCD")
    assert r.returncode == 0 and "NaN" not in r.stdout


@pytest.mark.parametrize("version, says", [
    ("1", "'1' (str), not a version number"),
    (1.0, "1.0 (float), not a version number"),
    (None, "version is missing"),
    (0, "0 (int), not a version number"),
    (True, "True (bool), not a version number"),
])
def test_a_run_version_that_is_no_number_is_damaged_not_newer(run_folder, tmp_path, version, says):
    folder = copy_model(run_folder, tmp_path / "v")
    head = json.loads((folder / "training_run.json").read_text())
    (folder / "training_run.json").write_text(json.dumps({**head, "version": version}))
    with pytest.raises(RunFolderError) as info:
        Trainer.load(folder)
    msg = str(info.value)
    assert says in msg and "newer" not in msg and "\n" not in msg, msg
    assert info.value.reason == "corrupt"
    with pytest.raises(ModelLoadError, match="damaged"):
        load_model(folder)


@pytest.mark.slow
def test_a_fifo_config_file_is_called_one(tmp_path):
    fifo = tmp_path / "c.json"
    os.mkfifo(fifo)
    r = _cli("train", "--config", str(fifo), "--steps", "1", timeout=60)
    assert r.returncode == 2, r.stderr
    lines = _errors(r)
    assert len(lines) == 1 and lines[0].endswith(f"--config {fifo}: a FIFO, not a regular file"), r.stderr
    assert "no such file" not in r.stderr


@pytest.mark.slow
def test_train_gif_prints_no_qt_notice(tmp_path):
    r = _cli("train", "--steps", "6", "--gif", str(tmp_path / "f.gif"), "--frames", "3", "--width", "200",
             timeout=300)
    assert r.returncode == 0, r.stderr
    assert "propagateSizeHints" not in r.stderr and "This plugin" not in r.stderr, r.stderr


# ---- model folders ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vocab_bert(tmp_path_factory) -> Path:
    """A 1-layer BERT whose tokenizer is a vocab.txt only (no tokenizer.json)."""
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = tmp_path_factory.mktemp("vocab_bert")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]
    (folder / "words.txt").write_text("\n".join(words) + "\n")
    BertTokenizer(str(folder / "words.txt")).save_pretrained(folder)
    (folder / "words.txt").unlink()
    (folder / "tokenizer.json").unlink(missing_ok=True)
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64)).save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_a_fifo_vocab_is_refused_not_read_as_unknown_tokens(vocab_bert, tmp_path):
    r = _cli("inspect", "--model", str(vocab_bert), "--text", "the cat sat")
    assert r.returncode == 0 and "[CLS] the cat sat [SEP]" in r.stdout, r.stderr[-2000:]
    folder = copy_model(vocab_bert, tmp_path / "fifo")
    (folder / "vocab.txt").unlink()
    os.mkfifo(folder / "vocab.txt")
    r = _cli("inspect", "--model", str(folder), "--text", "the cat sat")
    assert r.returncode == 1 and "[UNK]" not in r.stdout, r.stdout + r.stderr
    assert _errors(r) == [f"error: vocab.txt in '{folder}' is not a regular file (a FIFO), so it cannot be "
                          "read: put the real file there."], r.stderr
    with pytest.raises(ModelLoadError) as info:
        load_model(folder)
    assert info.value.reason == "no_tokenizer" and info.value.files == ["vocab.txt"]


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Path:
    """models_fixtures' Llama (GQA), built once per test run: only read (edits go to copies)."""
    return built_once(tmp_path_factory, "llama_gqa", build_llama)


def _edited_json(src: Path, dst: Path, name: str, edit) -> Path:
    folder = copy_model(src, dst)
    d = json.loads((folder / name).read_text())
    edit(d)
    (folder / name).write_text(json.dumps(d))
    return folder


def test_transformers_reasons_arrive_whole_in_one_line(llama, tmp_path):
    folder = _edited_json(llama, tmp_path / "hidden", "config.json", lambda d: d.update(hidden_size="abc"))
    with pytest.raises(ModelLoadError) as info:
        load_model(folder)
    msg = str(info.value)
    assert "Validation error for field 'hidden_size'" in msg and "expected int, got str" in msg, msg
    assert "\n" not in msg
    folder = _edited_json(llama, tmp_path / "added", "tokenizer.json", lambda d: d.pop("added_tokens"))
    with pytest.raises(ModelLoadError) as info:
        load_model(folder)
    msg = str(info.value)
    assert "'added_tokens' is missing" in msg and "\n" not in msg, msg


# ---- the attention config -----------------------------------------------------------------


class _Unprintable:
    def __repr__(self):
        raise TypeError("no repr")


class _NotAString:
    def __repr__(self):
        return 3


@pytest.mark.parametrize("field", ["seq_len", "d_model", "backend", "dtype", "scale", "tokens", "seed"])
@pytest.mark.parametrize("value", [_Unprintable(), _NotAString()], ids=["raises", "not-a-string"])
def test_a_value_whose_repr_fails_is_a_config_error(field, value):
    with pytest.raises(ConfigError, match=rf"^{field}\b.*cannot be printed"):
        AttentionConfig(**{field: value})
    with pytest.raises(ConfigError, match=rf"^{field}\b"):
        AttentionConfig.from_dict({field: value})
