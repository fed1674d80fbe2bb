"""``python main.py inspect``: per-layer / per-head metrics of a real model.

:func:`inspect_command` does the whole command (load, inspect, print) and
returns the exit status: 0 success, 1 the model could not be loaded or run,
2 bad arguments (``--layers``). Errors are one line on stderr.
"""

from __future__ import annotations

import json
import math
import sys
from typing import TextIO

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


def trace_to_dict(model_name: str, loaded, trace) -> dict:
    """The JSON document of ``inspect --json``."""
    heads = []
    for row in trace.head_table():
        heads.append({k: (_finite(v) if isinstance(v, float) else v) for k, v in row.items()})
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
    }


def format_table(model_name: str, loaded, trace) -> str:
    s = loaded.summary
    lines = [
        f"model    {model_name} ({s.model_type}, {s.n_layers} layers x {s.n_heads} heads"
        + (f", {s.n_kv_heads} KV heads" if s.n_kv_heads != s.n_heads else "")
        + (", causal" if s.causal else ", bidirectional") + ")",
        f"tokens   {len(trace.tokens)}: " + " ".join(trace.labels),
    ]
    for note in [*loaded.notices, *([trace.notice] if trace.notice else [])]:
        lines.append(f"note     {note}")
    lines.append("")
    head = f"{'layer':>5} {'head':>4} {'kv':>3}  {'pattern':<14}" + "".join(
        " " + title.rjust(len(fmt.format(0.0))) for _k, title, fmt in _COLUMNS)
    lines.append(head)
    lines.append("-" * len(head))
    for row in trace.head_table():
        cells = f"{row['layer']:>5} {row['head']:>4} {row['kv_head']:>3}  {row['pattern']:<14}"
        cells += "".join(" " + fmt.format(row[key]) for key, _t, fmt in _COLUMNS)
        lines.append(cells)
    lines.append("")
    lines.append("entropy in nats (ent/max: divided by its maximum); sink: weight on the first "
                 "token; dist: mean distance in tokens (dist/u: relative to uniform attention); prev/diag: weight on the previous token / "
                 "itself; max_w: mean row maximum; vert: largest share one key collects; block: "
                 "how alike neighbouring rows are.")
    return "\n".join(lines) + "\n"


def inspect_command(model: str, text: str, layers: str | None, as_json: bool,
                    out: TextIO | None = None, err: TextIO | None = None, *,
                    device: str = "cpu", allow_download: bool = False) -> int:
    """Run ``inspect --model MODEL --text TEXT [--layers L,...] [--json]``."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
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

    try:
        loaded = load_model(model, device=device, allow_download=allow_download,
                             trust_remote_code=False)
    except ModelLoadError as exc:
        print(f"error: {_one_line(exc)}", file=err)
        return 1
    except Exception as exc:  # an unexpected failure inside transformers
        print(f"error: the model could not be loaded: {_one_line(exc)}", file=err)
        return 1
    try:
        trace = loaded.inspect(text, layers=layer_list)
    except InspectError as exc:
        print(f"error: {_one_line(exc)}", file=err)
        return 2
    except Exception as exc:
        print(f"error: inspecting the model failed: {_one_line(exc)}", file=err)
        return 1
    if as_json:
        json.dump(trace_to_dict(model, loaded, trace), out, indent=1, allow_nan=False)
        out.write("\n")
    else:
        out.write(format_table(model, loaded, trace))
    return 0
