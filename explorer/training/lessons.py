"""Lesson chapters built on the training lab (12 and 13): their tasks, checked by the engine.

A chapter's preset file (assets/lessons/NN-name.json) may carry a ``training`` block:

    "training": {"preset": "induction",
                 "task": {"kind": "score_above", "score": "induction", "layer": 1,
                          "above": 0.5, "within": 600}}

- ``preset``: the lab's experiment (explorer.training.presets.PRESETS) that applying the
  chapter opens, in the Training lab;
- ``task``: what "Try this" promises, checked by training the preset with the engine
  (no window): ``score_above``: within ``within`` steps of the preset's first run, the best
  head of layer ≥ ``layer`` has ``score`` above ``above``; ``preset_expectation``: the
  preset's own expectation (its check) is met once its runs are trained.

This module is Qt-free except `connect_lesson_panel`, which the lab installs: when the
lesson panel's Apply preset is pressed on such a chapter, the lab opens with its preset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from engine.training import Trainer

SCORE_TASKS = ("previous_token", "induction")


@dataclass(frozen=True)
class TrainingTask:
    """A chapter's training block (see the module docstring)."""

    chapter: str  # the chapter's key, e.g. "12-induction-head"
    preset: str
    kind: str  # "score_above" | "preset_expectation"
    score: str = "induction"
    layer: int = 0
    above: float = 0.5
    within: int = 0


@dataclass(frozen=True)
class TaskResult:
    holds: bool
    value: float | None  # score_above: the best score reached; None for preset_expectation
    step: int | None  # score_above: the first step above the threshold (None: not reached)
    text: str  # the numbers, in English (the lab's verdict says them in the window's language)
    circuit: str = ""  # score_above: Trainer.check_circuit's message at the end


def _lesson_dir() -> Path:
    from ..lessons import LESSON_DIR

    return Path(LESSON_DIR)


def training_task(chapter_key: str, directory: Path | None = None) -> TrainingTask | None:
    """The training block of chapter ``chapter_key`` (None when it has none); ValueError
    naming the chapter when the block is malformed."""
    from .presets import PRESETS

    path = (directory or _lesson_dir()) / f"{chapter_key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    block = data.get("training")
    if block is None:
        return None
    try:
        preset = block["preset"]
        task = dict(block.get("task") or {"kind": "preset_expectation"})
        kind = task.pop("kind")
        out = TrainingTask(chapter_key, preset, kind, **task)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{chapter_key}: malformed training block: {exc}") from None
    if preset not in PRESETS:
        raise ValueError(f"{chapter_key}: unknown training preset {preset!r}; presets: {', '.join(PRESETS)}")
    if kind not in ("score_above", "preset_expectation"):
        raise ValueError(f"{chapter_key}: unknown training task {kind!r}")
    if kind == "score_above" and (out.score not in SCORE_TASKS or out.within < 1):
        raise ValueError(f"{chapter_key}: score_above needs score in {SCORE_TASKS} and within ≥ 1")
    return out


def training_tasks(directory: Path | None = None) -> list[TrainingTask]:
    """Every chapter's training task, in chapter order."""
    d = directory or _lesson_dir()
    return [t for p in sorted(d.glob("*.json")) if (t := training_task(p.stem, d)) is not None]


@dataclass
class _Trained:
    """What a preset's check reads of a run (lab.Run's fields, trained here)."""

    config: object
    history: list
    snapshots: list


def check_training_task(task: TrainingTask, threads: int | None = 1) -> TaskResult:
    """Train the task's preset with the engine and say whether the task holds."""
    from .presets import PRESETS

    preset = PRESETS[task.preset]
    if task.kind == "score_above":
        config = preset.runs[0].config
        tr = Trainer(config, threads=threads)
        best, step = float("-inf"), None
        while tr.steps_done < task.within:
            for s in tr.step(min(25, task.within - tr.steps_done)):
                layers = s.scores[task.score][task.layer:]
                value = float(layers.max())
                best = max(best, value)
                if step is None and value > task.above:
                    step = s.step
        check = tr.check_circuit()
        text = (f"best layer-≥{task.layer} {task.score} score {best:.2f} within {task.within} steps "
                f"(threshold {task.above:g}" + (f", passed at step {step})" if step else ", not passed)"))
        return TaskResult(step is not None, best, step, text, check.message)
    runs = []
    for pr in preset.runs:
        tr = Trainer(pr.config, threads=threads)
        snaps = [tr.probe()]
        tr.step(pr.config.steps)
        snaps.append(tr.probe())
        runs.append(_Trained(pr.config, tr.history, snaps))
    v = preset.check(runs)
    return TaskResult(v.state == "met", None, None, v.text)


# ---- the window: Apply preset on a training chapter opens the lab --------------------------------

def open_chapter_in_lab(window, chapter_key: str, open_lab) -> bool:
    """Open the Training lab of ``window`` (``open_lab(window)`` shows its panel) with the
    preset of chapter ``chapter_key``; False when the chapter has no training block."""
    try:
        task = training_task(chapter_key)
    except ValueError:
        return False
    if task is None:
        return False
    panel = open_lab(window)
    lab = window.training_lab
    if lab.preset_key != task.preset or lab.current is None or lab.current.steps_done:
        lab.apply_preset(task.preset)
    panel.raise_()
    return True


def connect_lesson_panel(window, lesson_panel, open_lab) -> None:
    """Follow ``lesson_panel``'s Apply preset (its public apply_button and chapter()):
    ``open_lab(window)`` shows the lab's panel (explorer.training.feature.show_training)."""
    def on_apply() -> None:
        ch = lesson_panel.chapter()
        if ch is not None and open_chapter_in_lab(window, ch.key, open_lab):
            window.highlight_panels(ch.panels)  # the lab's dock is new: mark it too

    lesson_panel.apply_button.clicked.connect(on_apply)
