"""Lesson 15 ("When n² is too much") quotes what the engine computes on its preset: the output
errors of linear, windowed, local + global and hierarchical attention against full softmax,
linear attention's FLOPs ratio, and the S from which its FLOPs fall below full softmax's."""

from __future__ import annotations

import re

import pytest

import engine
from explorer.efficient_view import cost_curves
from explorer.lessons import check_try, load_chapters

KEY = "15-efficient-attention"


@pytest.fixture(scope="module")
def chapter():
    return next(c for c in load_chapters() if c.key == KEY)


def quotes(text: str, value: float, fmt: str = "{:.2f}") -> bool:
    return re.search(rf"(?<![0-9.]){re.escape(fmt.format(value))}(?![0-9])", text) is not None


def test_the_task_switches_to_linear_and_the_error_appears(chapter):
    before, after, holds = check_try(chapter)
    assert holds and before == 0.0 and after > 0.1


def test_the_numbers_the_text_quotes_are_the_engines(chapter):
    base = chapter.config
    errors = {name: engine.approximation_report(base.replace(**changes)).output_rel_error
              for name, changes in {"linear": {"kernel": "linear"}, "window": {"window": 8},
                                    "local+global": {"window": 8, "global_tokens": 2},
                                    "blocks": {"summary_block": 8}}.items()}
    linear = engine.approximation_report(base.replace(kernel="linear"))
    sizes, curves = cost_curves(base)
    crossover = int(next(s for s, lin, full in zip(sizes, curves["linear"][0], curves["full"][0]) if lin < full))
    for lang in ("en", "zh"):
        text = "\n".join(str(part) for part in chapter.texts[lang])
        for name, err in errors.items():
            assert quotes(text, err), (lang, name, err)
        assert quotes(text, linear.flops / linear.flops_full, "{:.1f}"), (lang, linear.flops / linear.flops_full)
        assert f"S = {crossover}" in text, (lang, crossover)
    assert 350e9 < curves["full"][1][-1] < 450e9 and curves["linear"][1][-1] < 300e6  # "about 400 GB", "under 300 MB"
