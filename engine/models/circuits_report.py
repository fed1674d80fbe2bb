"""``python main.py inspect ... --circuits / --logit-lens / --attribute / --patch``: the tables
and JSON of the circuits lens (used by :func:`engine.models.report.inspect_command`)."""

from __future__ import annotations

import math

import numpy as np

from .detectors import DETECTOR_NAMES
from .trace import token_label

#: (detector, column title) of the --circuits columns
SCORE_COLUMNS = (("induction", "ind"), ("previous_token", "prev_t"), ("duplicate_token", "dup"))


def usage_error(*, logit_lens: bool, attribute, patch, answer, wrong) -> str | None:
    """Why these flags cannot go together (exit 2), or None."""
    if attribute is not None and not str(attribute).strip():
        return "--attribute is empty: give the target token"
    if patch is not None and not str(patch).strip():
        return "--patch is empty: give the corrupted text"
    if patch is not None and answer is None:
        return "--patch needs --answer TOKEN (the token whose logit measures the answer)"
    if patch is None and (answer is not None or wrong is not None):
        given = "--answer" if answer is not None else "--wrong"
        return f"{given} only applies with --patch CORRUPTED"
    if answer is not None and not str(answer).strip():
        return "--answer is empty: give the answer token"
    if wrong is not None and not str(wrong).strip():
        return "--wrong is empty: give the wrong token"
    return None


def _f(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


def scores_by_head(scores: dict[str, np.ndarray], layer: int, head: int) -> dict[str, float]:
    return {k: float(scores[k][layer, head]) for k in DETECTOR_NAMES}


def lens_to_dict(lens) -> dict:
    n = lens.top_ids.shape[0]
    return {
        "tokens": list(lens.tokens),
        "k": int(lens.top_ids.shape[-1]),
        "rows": ["embeddings", *[f"layer {i}" for i in range(n - 1)]],
        "top_tokens": lens.top_tokens,
        "top_ids": lens.top_ids.tolist(),
        "top_probs": [[[_f(p) for p in cell] for cell in row] for row in lens.top_probs.tolist()],
        "next_probs": [[_f(p) for p in row] for row in lens.next_probs.tolist()],
        "notice": lens.notice,
    }


def attribution_to_dict(att) -> dict:
    return {
        "target": att.target, "target_id": att.target_id, "position": att.position,
        "token_at_position": att.tokens[att.position], "logit": att.logit, "total": att.total,
        "norm_scale": att.norm_scale, "parts": dict(att.parts),
        "heads": [{"layer": layer, "head": h, "logit": float(att.heads[layer, h])}
                  for layer in range(att.heads.shape[0]) for h in range(att.heads.shape[1])],
        "notes": list(att.notes),
    }


def patch_to_dict(res) -> dict:
    return {
        "over": res.over, "method": res.method, "metric": res.metric_name,
        "answer": res.answer, "answer_id": res.answer_id, "wrong": res.wrong,
        "wrong_id": res.wrong_id, "clean_metric": res.clean_metric,
        "corrupted_metric": res.corrupted_metric, "clean_tokens": res.clean_tokens,
        "corrupted_tokens": res.corrupted_tokens,
        "effect": [[_f(x) for x in row] for row in res.effect.tolist()],
        "seconds": res.seconds,
    }


def _cell(text: str, width: int) -> str:
    text = token_label(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_lens(lens) -> str:
    n = lens.top_ids.shape[0]
    heads = ["emb", *[f"L{i}" for i in range(n - 1)]]
    w = 13
    lines = ["logit lens: each layer's top next token and its probability "
             "(emb: the embeddings; the last column is the model's prediction)",
             f"{'pos':>4} {'token':<12}" + "".join(f" {h:<{w}}" for h in heads)]
    lines.append("-" * len(lines[-1]))
    for p, tok in enumerate(lens.tokens):
        cells = [f"{_cell(lens.top_tokens[r][p][0], w - 5)} {lens.top_probs[r, p, 0]:.2f}"
                 for r in range(n)]
        lines.append(f"{p:>4} {_cell(tok, 12):<12}" + "".join(f" {c:<{w}}" for c in cells))
    return "\n".join(lines) + "\n"


def format_attribution(att, top: int = 12) -> str:
    lines = [f"direct logit attribution of {token_label(att.target)!r} (id {att.target_id}) at "
             f"position {att.position} ({token_label(att.tokens[att.position])!r})"]
    for name, v in att.parts.items():
        lines.append(f"  {name:<16} {v:+10.4f}")
    flat = [(float(att.heads[layer, h]), layer, h) for layer in range(att.heads.shape[0])
            for h in range(att.heads.shape[1])]
    flat.sort(key=lambda t: -abs(t[0]))
    lines.append(f"  heads (the {min(top, len(flat))} largest of {len(flat)}; all heads sum to "
                 f"{att.heads.sum():+.4f}):")
    for v, layer, h in flat[:top]:
        lines.append(f"    layer {layer:>2} head {h:>2} {v:+10.4f}")
    lines.append(f"  total {att.total:+.6f} = logit {att.logit:+.6f}"
                 + ("" if att.norm_scale is None else f" (final norm scale frozen at {att.norm_scale:.4g})"))
    lines.extend(f"  note: {n}" for n in att.notes)
    return "\n".join(lines) + "\n"


def format_patch(res) -> str:
    L, width = res.effect.shape
    col = "head" if res.over == "heads" else "pos"
    lines = [f"activation patching ({res.method}), clean → corrupted, metric {token_label(res.metric_name)} "
             f"at the last position: clean {res.clean_metric:+.4f}, corrupted {res.corrupted_metric:+.4f}",
             "effect = (patched − corrupted) / (clean − corrupted): 1 restores the clean metric",
             f"{'layer':>5} " + "".join(f" {col + ' ' + str(j):>7}" for j in range(width))]
    lines.append("-" * len(lines[-1]))
    for layer in range(L):
        lines.append(f"{layer:>5} " + "".join(f" {x:7.2f}" for x in res.effect[layer]))
    best = np.unravel_index(int(np.nanargmax(res.effect)), res.effect.shape)
    lines.append(f"largest effect: layer {best[0]} {col} {best[1]} ({res.effect[best]:.2f}); "
                 f"{res.seconds:.2f} s")
    return "\n".join(lines) + "\n"
