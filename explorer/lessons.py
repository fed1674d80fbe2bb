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
        ))
    return chapters


def lesson_metric(config: AttentionConfig, name: str) -> float:
    """One scalar a "try this" task promises to move; see assets/lessons/README.md."""
    if name == "kv_cache_bytes":
        return float(engine.kv_cache_bytes(config, n_layers=32, tokens=8192))
    if name == "score_grid_bytes":
        item = torch.finfo(getattr(torch, config.dtype)).bits // 8
        return float(config.batch * config.n_heads * config.seq_len * config.key_len * item)
    tr = engine.run(config)
    w = tr.weights.float()
    if name == "mean_entropy":
        return float(tr.entropy.nanmean())
    if name == "mean_jacobian":
        return float(tr.softmax_jacobian_norm.nanmean())
    if name == "score_std":
        return float(tr.scores_raw.float().std())
    if name == "nan_rows":
        return float(torch.isnan(w).any(-1).sum())
    if name == "inf_scores_raw":
        return float(torch.isinf(tr.scores_raw).sum())
    if name == "future_mass":  # weight on keys after the query's own position
        pos = torch.arange(config.seq_len)[:, None] + config.key_len - config.seq_len
        future = torch.arange(config.key_len)[None, :] > pos
        return float(torch.nan_to_num(w)[..., future].sum())
    if name == "identical_rows":  # pairs of queries whose weight rows are identical
        rows = w[0].transpose(0, 1).reshape(config.seq_len, -1)  # (S, H·Skv)
        same = torch.cdist(rows, rows) < 1e-6
        return float((same.sum() - config.seq_len) // 2)
    if name == "head_entropy_spread":
        per_head = tr.entropy.nanmean(dim=(0, 2))
        return float(per_head.std(unbiased=False))
    if name == "backend_max_abs_diff":
        return float(tr.backend_max_abs_diff or 0.0)
    raise LessonError(f"unknown lesson metric {name!r}")


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
    before = lesson_metric(chapter.config, exp["metric"])
    after = lesson_metric(chapter.try_config, exp["metric"])
    try:
        return before, after, expect_holds(exp, before, after)
    except LessonError as exc:
        raise LessonError(f"{chapter.key}: {exc}") from None
