"""``python main.py inspect``: per-layer / per-head metrics of a real model.

:func:`inspect_command` does the whole command (load, inspect, print) and
returns the exit status: 0 success, 1 the model could not be loaded or run,
2 bad arguments (``--layers``). Errors are one line on stderr.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any, TextIO

from .errors import InspectError, ModelLoadError
from .metrics import METRIC_NAMES

#: (json key, column title, format) of the table; the JSON has every metric
_COLUMNS = (
    ("entropy", "entropy", "{:7.3f}"),
    ("entropy_norm", "ent/max", "{:7.3f}"),
    ("sink", "sink", "{:6.3f}"),
    ("distance", "dist", "{:6.2f}"),
    ("distance_ratio", "dist/u", "{:6.2f}"),
    ("prev_token", "prev", "{:6.3f}"),
    ("diagonal", "diag", "{:6.3f}"),
    ("max_weight", "max_w", "{:6.3f}"),
    ("vertical", "vert", "{:6.3f}"),
    ("block", "block", "{:6.3f}"),
)


def parse_layers(spec: str | None) -> list[int] | None:
    """``"0,2,-1"`` → ``[0, 2, -1]``; None/"" → None (all layers). Raises ValueError."""
    if spec is None:
        return None
    parts = [p.strip() for p in str(spec).split(",")]
    if not any(parts):
        raise ValueError("--layers is empty: give layer numbers like 0,2,5")
    out = []
    for p in parts:
        if not p:
            raise ValueError(f"--layers {spec!r} has an empty item")
        try:
            out.append(int(p))
        except ValueError:
            raise ValueError(f"--layers: {p!r} is not a layer number (use e.g. 0,2,5)") from None
    return out


def _one_line(msg: object) -> str:
    return " ".join(str(msg).split())


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def trace_to_dict(model_name: str, loaded, trace, scores: dict | None = None,
                  fidelity=None) -> dict:
    """The JSON document of ``inspect --json`` (``scores``: the detectors' (L, H) arrays of
    ``--circuits``, added to each head as ``"scores"``; ``fidelity``: the
    :class:`engine.models.fidelity.Fidelity` measured on the text, as ``"fidelity"``)."""
    from .circuits_report import scores_by_head

    heads = []
    for row in trace.head_table():
        heads.append({k: (_finite(v) if isinstance(v, float) else v) for k, v in row.items()})
        if scores is not None:
            heads[-1]["scores"] = scores_by_head(scores, row["layer"], row["head"])
    s = loaded.summary
    return {
        "model": model_name,
        "model_type": s.model_type,
        "n_layers": s.n_layers,
        "n_heads": s.n_heads,
        "n_kv_heads": s.n_kv_heads,
        "head_dim": s.head_dim,
        "causal": s.causal,
        "layers": list(trace.layers),
        "tokens": list(trace.tokens),
        "notice": trace.notice,
        "notices": list(loaded.notices),
        "metrics": ["pattern", *METRIC_NAMES, "vertical_key"],
        "heads": heads,
        "fidelity": None if fidelity is None else fidelity.to_dict(),
    }


def format_table(model_name: str, loaded, trace, scores: dict | None = None,
                 fidelity=None) -> str:
    from .circuits_report import SCORE_COLUMNS

    s = loaded.summary
    extra = SCORE_COLUMNS if scores is not None else ()
    lines = [
        f"model    {model_name} ({s.model_type}, {s.n_layers} layers x {s.n_heads} heads"
        + (f", {s.n_kv_heads} KV heads" if s.n_kv_heads != s.n_heads else "")
        + (", causal" if s.causal else ", bidirectional") + ")",
        f"tokens   {len(trace.tokens)}: " + " ".join(trace.labels),
    ]
    if fidelity is not None:
        lines.insert(1, f"fidelity {fidelity.summary}")
    for note in [*loaded.notices, *([trace.notice] if trace.notice else [])]:
        lines.append(f"note     {note}")
    lines.append("")
    head = f"{'layer':>5} {'head':>4} {'kv':>3}  {'pattern':<14}" + "".join(
        " " + title.rjust(len(fmt.format(0.0))) for _k, title, fmt in _COLUMNS) + "".join(
        f" {title:>6}" for _k, title in extra)
    lines.append(head)
    lines.append("-" * len(head))
    for row in trace.head_table():
        cells = f"{row['layer']:>5} {row['head']:>4} {row['kv_head']:>3}  {row['pattern']:<14}"
        cells += "".join(" " + fmt.format(row[key]) for key, _t, fmt in _COLUMNS)
        cells += "".join(f" {scores[k][row['layer'], row['head']]:6.3f}" for k, _t in extra)
        lines.append(cells)
    lines.append("")
    lines.append("entropy in nats (ent/max: divided by its maximum); sink: weight on the first "
                 "token; dist: mean distance in tokens (dist/u: relative to uniform attention); prev/diag: weight on the previous token / "
                 "itself; max_w: mean row maximum; vert: largest share one key collects; block: "
                 "how alike neighbouring rows are."
                 + (" ind/prev_t/dup: the induction, previous-token and duplicate-token detector "
                    "scores on repeated random tokens (TransformerLens' head_detector)."
                    if extra else ""))
    return "\n".join(lines) + "\n"


def inspect_command(model: str, text: str, layers: str | None, as_json: bool,
                    out: TextIO | None = None, err: TextIO | None = None, *,
                    device: str = "cpu", allow_download: bool = False, circuits: bool = False,
                    logit_lens: bool = False, attribute: str | None = None,
                    patch: str | None = None, answer: str | None = None,
                    wrong: str | None = None) -> int:
    """Run ``inspect --model MODEL --text TEXT [--layers L,...] [--json]`` and the circuits
    options ``--circuits``, ``--logit-lens``, ``--attribute TOKEN``, ``--patch CORRUPTED
    --answer TOKEN [--wrong TOKEN]`` (2: a bad combination; 1: refused by the model)."""
    from .circuits_report import usage_error

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    problem = usage_error(logit_lens=logit_lens, attribute=attribute, patch=patch, answer=answer,
                          wrong=wrong)
    if problem:
        print(f"error: {problem}", file=err)
        return 2
    try:
        layer_list = parse_layers(layers)
    except ValueError as exc:
        print(f"error: {_one_line(exc)}", file=err)
        return 2
    if text is None or not str(text).strip():
        print("error: --text is empty: give the text to inspect", file=err)
        return 2
    from .loader import check_text, load_model

    try:
        check_text(str(text))
    except InspectError as exc:
        print(f"error: --text: {_one_line(exc)}", file=err)
        return 2

    loaded, status = _attempt(
        lambda: load_model(model, device=device, allow_download=allow_download, trust_remote_code=False),
        err, refused=(ModelLoadError, 1), failed="the model could not be loaded")
    if status:
        return status
    trace, status = _attempt(lambda: loaded.inspect(text, layers=layer_list), err,
                             refused=(InspectError, 2), failed="inspecting the model failed")
    if status:
        return status
    # the circuits lens against the model's own forward pass, on this text (issue 46)
    fidelity, status = _attempt(lambda: loaded.check_fidelity(text), err, refused=(InspectError, 1),
                                failed="checking the model against its own forward pass failed")
    if status:
        return status
    extra, status = _attempt(
        lambda: _circuits_parts(loaded, text, circuits=circuits, logit_lens=logit_lens,
                                attribute=attribute, patch=patch, answer=answer, wrong=wrong),
        err, refused=(InspectError, 1), failed="the circuits analysis failed")
    if status:
        return status
    scores = extra.pop("scores", None)
    if as_json:
        doc = trace_to_dict(model, loaded, trace, scores, fidelity)
        from . import circuits_report as cr

        for key, to_dict in (("logit_lens", cr.lens_to_dict), ("attribution", cr.attribution_to_dict),
                             ("patching", cr.patch_to_dict)):
            if key in extra:
                doc[key] = to_dict(extra[key])
        json.dump(doc, out, indent=1, allow_nan=False)
        out.write("\n")
    else:
        from . import circuits_report as cr

        out.write(format_table(model, loaded, trace, scores, fidelity))
        for key, fmt in (("logit_lens", cr.format_lens), ("attribution", cr.format_attribution),
                         ("patching", cr.format_patch)):
            if key in extra:
                out.write("\n" + fmt(extra[key]))
    return 0


def _attempt(work: Callable[[], Any], err: TextIO, *, refused: tuple[type[Exception], int],
             failed: str) -> tuple[Any, int]:
    """``(work(), 0)``, or ``(None, exit status)`` with the error's one line on ``err``: the
    expected refusal ``refused = (exception class, status)`` as its own message, anything else
    (an unexpected failure inside transformers or torch) as ``failed: message`` with status 1."""
    expected, status = refused
    try:
        return work(), 0
    except expected as exc:
        print(f"error: {_one_line(exc)}", file=err)
        return None, status
    except Exception as exc:
        print(f"error: {failed}: {_one_line(exc)}", file=err)
        return None, 1


def _circuits_parts(loaded, text, *, circuits, logit_lens, attribute, patch, answer, wrong) -> dict:
    """What the circuits options ask for: "scores", "logit_lens", "attribution", "patching"."""
    extra: dict = {}
    if circuits:
        extra["scores"] = loaded.all_head_scores()
    if logit_lens:
        extra["logit_lens"] = loaded.logit_lens(text)
    if attribute is not None:
        extra["attribution"] = loaded.logit_attribution(text, _token_arg(attribute))
    if patch is not None:
        extra["patching"] = loaded.activation_patching(text, patch, _token_arg(answer),
                                                       wrong=None if wrong is None else _token_arg(wrong))
    return extra


def _token_arg(value: str) -> str | int:
    """A token given on the command line: ``#123`` is the id 123, anything else a string."""
    value = str(value)
    if value.startswith("#") and value[1:].isdigit():
        return int(value[1:])
    return value
