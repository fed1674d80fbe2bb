"""The numbers lessons 12 and 13 quote for seed 0 are what the engine computes (issue 47, item 5).

Each test trains what the chapter's lab trains (explorer.training.lessons, the engine's Trainer on
one thread, as the lab's child process does) and looks for the numbers in both languages'
texts. Lesson 14's numbers: tests/test_training_lessons.py.

A training run on another CPU (AVX-512 or not) rounds differently; a number is accepted one
hundredth either side of the engine's here, which a wrong quote (0.15 for 0.17) is not.
"""

from __future__ import annotations

import re

import pytest

from engine.training import Trainer, first_reached
from explorer.lessons import load_chapters
from explorer.training.lessons import check_training_task, training_task

try:
    from models_fixtures import chapter_13_result, induction_preset_run_path
except ImportError:  # tests/ imported as a package
    from tests.models_fixtures import chapter_13_result, induction_preset_run_path

__all__ = ["chapter_13_result", "induction_preset_run_path"]  # fixtures


def texts(key: str, lang: str) -> str:
    """Everything chapter `key` says in `lang`: its body and its try-this task."""
    ch = next(c for c in load_chapters() if c.key == key)
    return "\n".join(str(part) for part in ch.texts[lang])


def said(value: float) -> list[str]:
    """`value` to two decimals, or one hundredth either side (another CPU's rounding)."""
    return [f"{value + d:.2f}" for d in (0.0, -0.01, 0.01)]


def quotes(text: str, value: float) -> bool:
    return any(re.search(rf"(?<![0-9.]){re.escape(s)}(?![0-9])", text) for s in said(value))


@pytest.mark.slow
def test_chapter_13_quotes_the_warmup_contrast_the_engine_trains(chapter_13_result):
    r = chapter_13_result  # check_training_task of chapter 13, run once per test run
    cold, warm = (float(v) for v in re.findall(r"[0-9]+\.[0-9]+", r.text)[:2])
    assert r.holds and cold < 0.3 < 0.6 < warm, r.text
    for lang in ("en", "zh"):
        text = texts("13-training-stability", lang)
        assert quotes(text, cold) and quotes(text, warm), (lang, cold, warm)


@pytest.fixture(scope="module")
def induction_run(induction_preset_run_path):
    """The induction preset's first run trained 600 steps, as chapter 12's lab trains it
    (train_first_run; trained once per test run by models_fixtures.induction_preset_run_path)."""
    run = Trainer.load(induction_preset_run_path)
    assert run.steps_done == training_task("12-induction-head").within
    return run


@pytest.mark.slow
def test_chapter_12_quotes_the_step_and_the_losses_the_engine_trains(induction_run):
    r = check_training_task(training_task("12-induction-head"), trainer=induction_run)
    assert r.holds and r.step is not None
    check = induction_run.check_circuit()  # what the lab's loss title says when the run ends
    assert check.unseen_prefix == 4 and check.loss_predictable_unseen is not None
    for lang in ("en", "zh"):
        text = texts("12-induction-head", lang)
        # the step the induction score first passes 0.5, and the ★'s (previous-token > 0.3 too)
        steps = [int(s) for s in re.findall(r"(?<![0-9.])([0-9]{3})(?![0-9.])", text)]
        assert r.step in steps and first_reached(induction_run.history).step in steps, (lang, r.step, steps)
        assert quotes(text, check.loss_predictable_unseen), (lang, check.loss_predictable_unseen)
        assert quotes(text, check.loss_predictable), (lang, check.loss_predictable)
