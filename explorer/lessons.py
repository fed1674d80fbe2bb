"""Lesson chapters as data: presets, bilingual texts and checkable "try this" tasks.

Qt-free, so the lesson tests run without a window. The lesson panel shows a
chapter's text, applies its preset and highlights its panels; the "try this"
expectation is the same one the tests check against the engine.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import torch

import engine
from assets import asset_path
from engine import AttentionConfig

from .frame import future_share, identical_row_pairs

#: found like every asset: a checkout, an installed wheel or a PyInstaller bundle
LESSON_DIR = asset_path("lessons")
LANGUAGES = ("en", "zh")
TRY_HEADINGS = {"en": "## Try this", "zh": "## 试一试"}


class LessonError(ValueError):
    """A lesson file is missing or malformed; the message names the file."""


@dataclass(frozen=True)
class Chapter:
    key: str  # file stem, e.g. "03-scaling"
    config: AttentionConfig
    selection: dict
    panels: tuple[str, ...]
    try_changes: dict
    expect: dict | None
    needs: str | None
    texts: dict = field(default_factory=dict)  # language → (title, body, try_text)
    compare: bool = False  # the point is a comparison: the preset is pinned as A (issue 18)

    def title(self, lang: str = "en") -> str:
        return self.texts.get(lang, self.texts["en"])[0]

    def body(self, lang: str = "en") -> str:
        return self.texts.get(lang, self.texts["en"])[1]

    def try_text(self, lang: str = "en") -> str:
        return self.texts.get(lang, self.texts["en"])[2]

    @property
    def try_config(self) -> AttentionConfig:
        return self.config.replace(**self.try_changes)


def _parse_text(path: Path, lang: str) -> tuple[str, str, str]:
    text = path.read_text(encoding="utf-8").strip()
    first, _, rest = text.partition("\n")
    if not first.startswith("# "):
        raise LessonError(f"{path}: the first line must be '# Title'")
    body, sep, try_text = rest.partition(TRY_HEADINGS[lang])
    if not sep:
        raise LessonError(f"{path}: missing the '{TRY_HEADINGS[lang]}' section")
    return first[2:].strip(), body.strip(), try_text.strip()


def load_chapters(directory: Path = LESSON_DIR) -> list[Chapter]:
    """Every chapter in `directory`, in file-name order."""
    chapters = []
    for preset_path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(preset_path.read_text(encoding="utf-8"))
            config = AttentionConfig.from_dict(data.get("config", {}))
        except (json.JSONDecodeError, engine.ConfigError) as exc:
            raise LessonError(f"{preset_path.name}: {exc}") from exc
        texts = {}
        for lang in LANGUAGES:
            p = directory / lang / f"{preset_path.stem}.md"
            if p.exists():
                texts[lang] = _parse_text(p, lang)
        if "en" not in texts:
            raise LessonError(f"{preset_path.stem}: no English text en/{preset_path.stem}.md")
        t = data.get("try") or {}
        chapters.append(Chapter(
            key=preset_path.stem, config=config, selection=dict(data.get("selection", {})),
            panels=tuple(data.get("panels", ())), try_changes=dict(t.get("changes", {})),
            expect=t.get("expect"), needs=data.get("needs"), texts=texts,
            compare=data.get("compare") is True,
        ))
    return chapters


def lesson_metric(config: AttentionConfig, name: str, head: int = 0) -> float:
    """One scalar a "try this" task promises to move; see assets/lessons/README.md.

    Each is the number a panel of the chapter shows (a test checks it), computed the
    same way: over batch row 0 (what the panels draw), NaN rows left out.
      score_std       std of Q·Kᵀ of `head` (the score histogram's "std")
      mean_entropy    mean row entropy of all heads, nats (the diagnostics' entropy title)
      head_entropy_spread  std across heads of their mean entropy (the same title)
      mean_jacobian   mean ‖∂softmax/∂s‖ (the √d_k sweep's "here")
      nan_rows        weight rows (all heads) with NaN (Numerics)
      future_mass     mean share of a row's weight on keys after the query (the heads title)
      first_query_keys  keys the first query may attend, the unmasked cells of row 0 (the heads
                      map; its title's S×Skv): Skv without a mask, 1 when causal and Skv = S,
                      Skv − S + 1 when causal with more keys than queries (bottom-right aligned)
      identical_rows  pairs of queries with identical weights in every head (the heads title)
      tiles_skipped   masked tiles the tiling step-through skips (its readout)
      output_rel_error  ‖O − O_full‖/‖O_full‖ of engine.approximation_report (the efficient
                      panel's "output error"); 0 for full softmax attention itself
    """
    if name == "kv_cache_bytes":
        return float(engine.kv_cache_bytes(config, n_layers=32, tokens=8192))
    if name == "tiles_skipped":
        return float(tiles_skipped(config))
    if name == "score_grid_bytes":
        item = torch.finfo(getattr(torch, config.dtype)).bits // 8
        return float(config.batch * config.n_heads * config.seq_len * config.key_len * item)
    if name == "output_rel_error":
        full = config.replace(kernel="softmax", window=None, global_tokens=0, summary_block=None)
        return 0.0 if config == full else float(engine.approximation_report(config).output_rel_error)
    tr = engine.run(config)
    if name == "first_query_keys":
        return float(tr.key_ranges.counts()[0])
    w = tr.weights[0].float()  # (H, S, Skv)
    if name == "mean_entropy":
        return float(tr.entropy[0].float().nanmean())
    if name == "mean_jacobian":
        return float(tr.softmax_jacobian_norm[0].float().nanmean())
    if name == "score_std":
        s = tr.scores_raw[0, min(head, config.n_heads - 1)].float()
        s = s[torch.isfinite(s)]
        return float(s.std(unbiased=False)) if s.numel() else math.nan
    if name == "nan_rows":
        return float(torch.isnan(tr.weights).any(-1).sum())
    if name == "inf_scores_raw":
        return float(torch.isinf(tr.scores_raw).sum())
    if name == "future_mass":
        return future_share(w.numpy(), config.key_len - config.seq_len)
    if name == "identical_rows":
        return float(identical_row_pairs(w.numpy()))
    if name == "head_entropy_spread":
        per_head = tr.entropy[0].float().nanmean(dim=-1)
        return float(per_head.std(unbiased=False))
    if name == "backend_max_abs_diff":
        return float(tr.backend_max_abs_diff or 0.0)
    raise LessonError(f"unknown lesson metric {name!r}")


def tiles_skipped(config: AttentionConfig) -> int:
    """Tiles of head 0 that engine.tiled_attention skips (every cell masked) at the tiling
    panel's automatic block sizes: what its readout counts ("… skipped (masked)")."""
    from .stepthrough import auto_block

    tr = engine.run(config)
    _out, steps = engine.tiled_attention(tr.q[:1, :1], tr.k[:1, :1], tr.v[:1, :1], scale=config.effective_scale,
                                         mask=tr.mask, block_q=auto_block(config.seq_len),
                                         block_k=auto_block(config.key_len))
    return sum(st.skipped for st in steps)


def expect_holds(expect: dict, before: float, after: float) -> bool:
    """Whether moving the metric from `before` to `after` is the change `expect` promises.

    The lesson panel asks this live (preset value → the window's current value),
    so a learner who makes the change by hand gets the same ✓ as "Do it for me".
    """
    change = expect["change"]
    holds = {
        "increase": after > before,
        "decrease": after < before,
        "becomes_zero": before > 0 and after == 0,
        "becomes_positive": before == 0 and after > 0,
        "ratio": before > 0 and math.isclose(after / before, expect.get("value", 1.0), rel_tol=1e-6),
    }.get(change)
    if holds is None:
        raise LessonError(f"unknown expectation {change!r}")
    return holds


def check_try(chapter: Chapter) -> tuple[float, float, bool]:
    """(before, after, holds): does the "try this" change do what the text says?"""
    exp = chapter.expect
    if not exp:
        return math.nan, math.nan, True
    head = int(chapter.selection.get("head", 0))
    before = lesson_metric(chapter.config, exp["metric"], head)
    after = lesson_metric(chapter.try_config, exp["metric"], head)
    try:
        return before, after, expect_holds(exp, before, after)
    except LessonError as exc:
        raise LessonError(f"{chapter.key}: {exc}") from None
