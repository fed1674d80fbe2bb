"""Timings of the circuits lens (issue 29's speed targets), for ``python main.py bench``.

* detector scores (all three, one pass) of every head of all-MiniLM-L6-v2: ≤ 1 s;
* the logit lens of a 64-token text through a 12-layer GPT-2-shaped model: ≤ 0.5 s;
* exact patching of every head of a 6 × 12 GPT-2-shaped model at 32 tokens: ≤ 3 s;
* attribution patching (one backward pass): ≤ 10 % of exact;
* a cancel of exact patching on a 2,800-token text (issue 46, item 8; a random 2-layer,
  64-wide Llama): the job raises ≤ 0.5 s after the cancel is asked, the slowest of three
  cancels asked 0.5, 1.5 and 3 s into a run (:func:`patching_cancel_s`).

The GPT-2-shaped models are random (d_model 768, 12 heads, GPT-2's 50257-token vocabulary,
tied embeddings), built in memory: nothing is downloaded or written. Run by
:func:`engine.models.bench.bench_inspect` (``python main.py bench``).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import torch

TARGETS = {"detectors_s": 1.0, "logit_lens_s": 0.5, "patching_exact_s": 3.0,
           "attribution_ratio": 0.10, "patching_cancel_s": 0.5}
#: tokens of the text whose exact patching is cancelled (issue 46, item 8)
CANCEL_TOKENS = 2800


def _median_time(fn, repeats: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def random_gpt2(n_layers: int, *, n_heads: int = 12, d_model: int = 768, vocab: int = 50257,
                seed: int = 0):
    """A random GPT-2-shaped :class:`engine.models.LoadedModel` with a word-level tokenizer
    (words ``w0`` … over the whole vocabulary)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from . import capture
    from .loader import LoadedModel

    capture.register()
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=vocab, n_embd=d_model, n_layer=n_layers, n_head=n_heads,
                     n_positions=1024)
    cfg._attn_implementation = capture.IMPLEMENTATION
    lm = GPT2LMHeadModel(cfg).eval()  # its LM head (tied to the embeddings) for the lens
    words = {"<unk>": 0, **{f"w{i}": i for i in range(1, vocab)}}
    tk = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", model_max_length=1024)
    loaded = LoadedModel(name=f"random GPT-2 {n_layers}x{n_heads}",
                         path=Path(tempfile.gettempdir()) / "attention-explorer-no-such-model",
                         model=lm.transformer, tokenizer=tok, summary=None,  # type: ignore[arg-type]
                         lm=lm)
    loaded._probe()
    return loaded


def random_llama(n_tokens: int, *, vocab: int = 512, seed: int = 0):
    """A random 2-layer, 64-wide Llama (4 heads, 2 KV heads) :class:`engine.models.LoadedModel`
    that reads ``n_tokens`` positions, with the word-level tokenizer of :func:`random_gpt2`."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from . import capture
    from .loader import LoadedModel

    capture.register()
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=n_tokens)
    cfg._attn_implementation = capture.IMPLEMENTATION
    lm = LlamaForCausalLM(cfg).eval()
    words = {"<unk>": 0, **{f"w{i}": i for i in range(1, vocab)}}
    tk = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", model_max_length=n_tokens)
    loaded = LoadedModel(name="random Llama 2x4",
                         path=Path(tempfile.gettempdir()) / "attention-explorer-no-such-model",
                         model=lm.model, tokenizer=tok, summary=None,  # type: ignore[arg-type]
                         lm=lm)
    loaded._probe()
    return loaded


class _Cancelled(Exception):
    """The bench's cancel."""


def patching_cancel_s(n_tokens: int = CANCEL_TOKENS, after_s: tuple[float, ...] = (0.5, 1.5, 3.0)) -> dict:
    """Seconds from a cancel to the end of exact patching (over positions, the longer job) on
    an ``n_tokens`` text: each run's ``progress`` raises at its first call after ``after_s``
    seconds (the way the model worker's job sees a cancel); the slowest and every run."""
    model = random_llama(n_tokens)
    vocab = model.lm.config.vocab_size
    clean = " ".join(f"w{1 + 37 * i % (vocab - 1)}" for i in range(n_tokens))
    corrupted = " ".join(f"w{1 + 41 * i % (vocab - 1)}" for i in range(n_tokens))
    runs = []
    for delay in after_s:
        t0 = time.perf_counter()
        seen: list[float] = []

        def progress(_done, _total, t0=t0, delay=delay, seen=seen):
            now = time.perf_counter()
            if now - t0 >= delay:
                seen.append(now)
                raise _Cancelled

        try:
            model.activation_patching(clean, corrupted, "w5", over="positions", progress=progress)
        except _Cancelled:
            runs.append(round(time.perf_counter() - (t0 + delay), 4))
        else:
            runs.append(None)  # it finished before the cancel
    done = [r for r in runs if r is not None]
    return {"tokens": n_tokens, "after_s": list(after_s), "runs_s": runs,
            "slowest_s": max(done) if done else float("nan")}


def _text(n: int, offset: int = 100) -> str:
    return " ".join(f"w{offset + 37 * i % 5000}" for i in range(n))


def bench_circuits(minilm_folder: str | Path, repeats: int = 5) -> dict:
    """Median seconds of each target (see the module docstring) and whether it is met;
    ``minilm_folder``: all-MiniLM-L6-v2 (:func:`engine.models.bench.minilm_path`)."""
    from .loader import load_model

    out: dict = {"threads": torch.get_num_threads(), "repeats": repeats}
    minilm = load_model(minilm_folder)

    def detectors():
        getattr(minilm, "_circuits_cache", {}).pop("head_scores", None)
        return minilm.all_head_scores()

    out["detectors_s"] = _median_time(detectors, repeats)
    big = random_gpt2(12)
    text64 = _text(64)
    assert len(big.tokenize(text64)[0]) == 64
    out["logit_lens_s"] = _median_time(lambda: big.logit_lens(text64), repeats)
    big = None  # free it before building the next model
    mid = random_gpt2(6)
    clean = _text(32)
    corrupted = " ".join(clean.split()[:16] + _text(16, offset=7000).split())
    answer = "w5"
    out["patching_exact_s"] = _median_time(
        lambda: mid.activation_patching(clean, corrupted, answer), max(1, repeats // 2))
    out["patching_attribution_s"] = _median_time(
        lambda: mid.attribution_patching(clean, corrupted, answer), repeats)
    out["attribution_ratio"] = out["patching_attribution_s"] / out["patching_exact_s"]
    mid = None
    out["patching_cancel"] = patching_cancel_s()
    out["patching_cancel_s"] = out["patching_cancel"]["slowest_s"]
    out["targets"] = dict(TARGETS)
    out["ok"] = {k: out[k] <= v for k, v in TARGETS.items()}
    return out

