"""Lesson chapters built on the training lab (12, 13, 14): their tasks, checked by the engine.

A chapter's preset file (assets/lessons/NN-name.json) may carry a ``training`` block:

    "training": {"preset": "induction",
                 "task": {"kind": "score_above", "score": "induction", "layer": 1,
                          "above": 0.5, "within": 600}}

- ``preset``: the lab's experiment (explorer.training.presets.PRESETS) that applying the
  chapter opens, in the Training lab;
- ``task``: what "Try this" promises, checked by training the preset with the engine
  (no window): ``score_above``: within ``within`` steps of the preset's first run, the best
  head of layer ≥ ``layer`` has ``score`` above ``above``; ``preset_expectation``: the
  preset's own expectation (its check) is met once its runs are trained;
  ``circuit_proved`` (chapter 14): after ``within`` steps of the preset's first run, opened
  like the inspector opens it (engine.models.load_model of the saved run), the circuit is
  found and proved on ``text`` (see `circuit_proof`).

This module is Qt-free except `connect_lesson_panel` (and `follow_inspector`, its part), which the lab installs: when the
lesson panel's Apply preset is pressed on such a chapter, the lab opens with its preset; when
the lab's run is then opened in the inspector, the chapter's model panels are marked and a
task's ``text`` becomes the model panels' text.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.numbers import fixed
from engine.training import Trainer

from ..host import host_of

SCORE_TASKS = ("previous_token", "induction")
TASK_KINDS = ("score_above", "preset_expectation", "circuit_proved")


@dataclass(frozen=True)
class TrainingTask:
    """A chapter's training block (see the module docstring)."""

    chapter: str  # the chapter's key, e.g. "12-induction-head"
    preset: str
    kind: str  # "score_above" | "preset_expectation" | "circuit_proved"
    score: str = "induction"
    layer: int = 0
    above: float = 0.5
    within: int = 0
    text: str = ""  # circuit_proved: the clean text (the model panels' text), e.g. "ABCDEFGHIJ ABCDEFGHI"
    answer: str = ""  # circuit_proved: the token the model predicts after it
    restores: float = 0.5  # circuit_proved: the induction head's exact patching effect, at least
    others_below: float = 0.2  # circuit_proved: |effect| of every head that is no induction head


@dataclass(frozen=True)
class TaskResult:
    holds: bool
    value: float | None  # score_above: the best score reached; None for preset_expectation
    step: int | None  # score_above: the first step above the threshold (None: not reached)
    text: str  # the numbers, in English (the lab's verdict says them in the window's language)
    circuit: str = ""  # score_above: Trainer.check_circuit's message at the end
    head: tuple[int, int] | None = None  # circuit_proved: (layer, head) of the induction head
    #: circuit_proved: `text` as (source, values) sentences, joined by "; " (the last one in
    #: parentheses): each source marked for translation in the "TrainingLessons" context
    said: tuple[tuple[str, dict], ...] = ()

    def in_language(self, translate=None) -> str:
        """`text` in the language of `translate` (the "TrainingLessons" context's translation
        of a source); `text` itself when the result has no sentences."""
        return joined(self.said, translate) if self.said else self.text


def joined(said: tuple[tuple[str, dict], ...], translate=None) -> str:
    """The sentences of a TaskResult as one text: the problems, then the numbers in
    parentheses ("p1; p2 (numbers)"); a single sentence alone. `translate`: source → its
    translation (None: English)."""
    parts = [(translate or str)(source).format(**values) for source, values in said]
    return parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + f" ({parts[-1]})"


def QT_TRANSLATE_NOOP(_context: str, text: str) -> str:
    """Marks a string for translation (lupdate reads the calls); this module imports no Qt."""
    return text


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
    if kind not in TASK_KINDS:
        raise ValueError(f"{chapter_key}: unknown training task {kind!r}")
    if kind == "score_above" and (out.score not in SCORE_TASKS or out.within < 1):
        raise ValueError(f"{chapter_key}: score_above needs score in {SCORE_TASKS} and within ≥ 1")
    if kind == "circuit_proved" and (out.score != "induction" or out.within < 1 or not out.text.strip()
                                     or not out.answer or out.answer not in out.text.split()[0]):
        raise ValueError(f"{chapter_key}: circuit_proved needs score 'induction', within ≥ 1, a text "
                         "and an answer that occurs in its first word")
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


def train_first_run(task: TrainingTask, threads: int | None = 1) -> Trainer:
    """The preset's first run (what Start trains in the lab) trained for ``task.within`` steps."""
    from .presets import PRESETS

    tr = Trainer(PRESETS[task.preset].runs[0].config, threads=threads)
    tr.step(task.within)
    return tr


def check_training_task(task: TrainingTask, threads: int | None = 1,
                        trainer: Trainer | None = None) -> TaskResult:
    """Train the task's preset with the engine and say whether the task holds. ``trainer``:
    the preset's first run trained already (at least ``task.within`` steps; score_above and
    circuit_proved), so one training serves several checks."""
    from .presets import PRESETS

    preset = PRESETS[task.preset]
    if task.kind == "circuit_proved":
        tr = trainer if trainer is not None else train_first_run(task, threads)
        with tempfile.TemporaryDirectory(prefix="attention-explorer-lesson-") as folder:
            from engine.models import load_model

            model = load_model(tr.save(Path(folder) / "run"))
        return circuit_proof(task, model)
    if task.kind == "score_above":
        tr = trainer if trainer is not None else train_first_run(task, threads)
        best, step = float("-inf"), None
        for s in tr.history[:task.within]:
            value = float(s.scores[task.score][task.layer:].max())
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


def circuit_proof(task: TrainingTask, model) -> TaskResult:
    """Chapter 14's proof, on a loaded model (engine.models.LoadedModel), with what the model
    panels show: (1) the model predicts ``task.answer`` after ``task.text``; (2) the detectors
    (the circuits panel's induction scores) name the best head of layer ≥ ``task.layer``,
    scoring above ``task.above``; (3) exact activation patching (the patching panel: the text
    against ``corrupt_text(seed 0)``, its first corruption; metric logit(answer)) restores the
    most at that head, at least ``task.restores``, and every head the detectors do not call an
    induction head (score ≤ ``above``) stays below ``task.others_below`` in size; (4) the
    deletion test (model_head, mode "mask") on the answer's earlier copy changes that head's
    attention the most, the last token's output the most, and the prediction is lost."""
    from engine.models import InspectError
    from engine.models.anatomy import anatomy_of
    from engine.models.patching import corrupt_text

    problems: list[tuple[str, dict]] = []

    def problem(source: str, **values) -> None:
        problems.append((source, {k: str(v) for k, v in values.items()}))

    lens = model.logit_lens(task.text, k=1)
    predicted = lens.top_tokens[-1][-1][0]
    if predicted != task.answer:
        problem(QT_TRANSLATE_NOOP("TrainingLessons", "the model predicts {predicted}, not {answer}"),
                predicted=repr(predicted), answer=repr(task.answer))
    ind = model.all_head_scores()["induction"]
    later = ind[task.layer:]
    lh = np.unravel_index(int(np.argmax(later)), later.shape)
    head = (int(lh[0]) + task.layer, int(lh[1]))
    score = float(ind[head])
    at = {"layer": head[0], "head": head[1]}
    if not score > task.above:
        problem(QT_TRANSLATE_NOOP("TrainingLessons",
                                  "the best induction head (layer {layer} head {head}) scores {score}, not above {above}"),
                **at, score=fixed(score), above=f"{task.above:g}")
    try:
        corrupted = corrupt_text(model, task.text, 0)
        patch = model.activation_patching(task.text, corrupted, task.answer)
        ids, _notice, _n = model.tokenize(task.text)
        deleted = model.deletion_test(task.text, ids.index(patch.answer_id), mode="mask")
    except InspectError as exc:
        said = ((QT_TRANSLATE_NOOP("TrainingLessons", "layer {layer} head {head}: induction {score}; refused: {reason}"),
                 {**{k: str(v) for k, v in at.items()}, "score": fixed(score), "reason": str(exc)}),)
        return TaskResult(False, None, None, joined(said), head=head, said=said)
    eff = patch.effect
    top = tuple(int(i) for i in np.unravel_index(int(np.argmax(eff)), eff.shape))
    others = np.abs(eff[ind <= task.above])
    worst = float(others.max()) if others.size else 0.0
    if top != head:
        problem(QT_TRANSLATE_NOOP("TrainingLessons",
                                  "patching restores the most at layer {top_layer} head {top_head}, not at layer "
                                  "{layer} head {head}"), top_layer=top[0], top_head=top[1], **at)
    if not eff[head] >= task.restores:
        problem(QT_TRANSLATE_NOOP("TrainingLessons",
                                  "patching layer {layer} head {head} restores {value}, less than {restores}"),
                **at, value=fixed(eff[head]), restores=f"{task.restores:g}")
    if not worst < task.others_below:
        problem(QT_TRANSLATE_NOOP("TrainingLessons",
                                  "a head that is no induction head restores {value} (not below {below})"),
                value=fixed(worst), below=f"{task.others_below:g}")
    change = deleted.attention_change
    moved = tuple(int(i) for i in np.unravel_index(int(np.argmax(change)), change.shape))
    after = anatomy_of(model).logits(deleted.after.hidden[-1:].float())[0]
    after_top = model.tokens_of([int(after.argmax())])[0]
    if moved != head:
        problem(QT_TRANSLATE_NOOP("TrainingLessons",
                                  "masking the first {answer} changes layer {layer} head {head}'s attention most"),
                answer=repr(task.answer), layer=moved[0], head=moved[1])
    if int(np.argmax(deleted.hidden_change_per_token)) != len(deleted.kept) - 1:
        problem(QT_TRANSLATE_NOOP("TrainingLessons", "masking it changes another token's output more than the last one's"))
    if after_top == task.answer:
        problem(QT_TRANSLATE_NOOP("TrainingLessons", "masking the first {answer} leaves the prediction {answer}"),
                answer=repr(task.answer))
    problem(QT_TRANSLATE_NOOP("TrainingLessons",
                              "layer {layer} head {head}: induction score {score}; exact patching restores {value} "
                              "of {metric} (most of every head; heads that are no induction head at most {worst}); "
                              "masking the first {answer} changes its attention most ({change}) and the "
                              "prediction becomes {after}"),
            **at, score=fixed(score), value=fixed(eff[head]), metric=patch.metric_name, worst=fixed(worst),
            answer=repr(task.answer), change=fixed(float(change[head]), 3), after=repr(after_top))
    said = tuple(problems)
    return TaskResult(len(said) == 1, float(eff[head]), None, joined(said), head=head, said=said)


# ---- the window: Apply preset on a training chapter opens the lab --------------------------------

def open_chapter_in_lab(window, chapter_key: str, open_lab) -> bool:
    """Open the Training lab of ``window`` (``open_lab(window)`` shows its panel) with the
    preset of chapter ``chapter_key``; False when the chapter has no training block.
    ``window``: the window or its host."""
    window = host_of(window)
    try:
        task = training_task(chapter_key)
    except ValueError:
        return False
    if task is None:
        return False
    panel = open_lab(window)
    lab = window.state.training_lab
    if lab.preset_key != task.preset or lab.current is None or lab.current.steps_done:
        lab.apply_preset(task.preset)
    panel.raise_()
    return True


def connect_lesson_panel(window, lesson_panel, open_lab) -> None:
    """Follow ``lesson_panel``'s Apply preset (its public apply_button and chapter()):
    ``open_lab(window)`` shows the lab's panel (explorer.training.feature.show_training).
    ``window``: the window or its host."""
    window = host_of(window)

    def on_apply() -> None:
        ch = lesson_panel.chapter()
        if ch is not None and open_chapter_in_lab(window, ch.key, open_lab):
            window.highlight_panels(ch.panels)  # the lab's dock is new: mark it too

    lesson_panel.apply_button.clicked.connect(on_apply)
    ctl = window.state.models
    if ctl is not None:
        ctl.model_changed.connect(lambda model: follow_inspector(window, lesson_panel, model))
    lesson_panel.outside_checks = LessonChecks(window, lesson_panel)  # (the panel keeps it)


def _tr(text: str) -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate("TrainingLessons", text)


def score_reached(task: TrainingTask, runs) -> tuple[float, int] | None:
    """(score, step) of the first step, within ``task.within`` of a run of the task's preset's
    first config, whose best head of layer ≥ ``task.layer`` scores above ``task.above``."""
    from .presets import PRESETS

    first = PRESETS[task.preset].runs[0].config
    for run in runs:
        if run.config != first:
            continue
        for s in run.history[:task.within]:
            value = float(s.scores[task.score][task.layer:].max())
            if value > task.above:
                return value, s.step
    return None


class LessonChecks:
    """The lesson box's ✓ for the training chapters (12–14), as a config chapter gets its own:
    the lab's run is checked against the chapter's task on every change of the lab, and the
    lesson panel told (``set_outside_check``). ``circuit_proved`` is checked once the run is
    opened in the inspector, on a copy of the saved run loaded in a worker thread (the window's
    model keeps its hooks to itself), by `circuit_proof`."""

    def __init__(self, window, lesson_panel) -> None:
        from ..work.base import Worker

        self.window, self.panel = window, lesson_panel
        self.tasks = {t.chapter: t for t in training_tasks()}
        self.proved: dict[tuple[str, str], TaskResult] = {}  # (chapter, folder) → its proof
        self.proving: set[tuple[str, str]] = set()  # asked of the worker, not back yet
        self.worker: Worker | None = None
        lab = window.state.training_lab
        # the lab and the state outlive the window: followed only while the panel is
        lab.changed.connect(self._on_changed)
        window.state.lesson_changed.connect(self._on_changed)
        lesson_panel.destroyed.connect(lambda *_a, lab=lab, state=window.state: self._unfollow(lab, state))
        self.sync()

    def _on_changed(self, *_args) -> None:
        self.sync()

    def _unfollow(self, lab, state) -> None:
        for signal in (lab.changed, state.lesson_changed):
            try:
                signal.disconnect(self._on_changed)
            except (RuntimeError, TypeError, ValueError):  # (gone already)
                pass

    def sync(self) -> None:
        from shiboken6 import isValid

        if not isValid(self.panel):
            return
        lab = self.window.state.training_lab
        for key, task in self.tasks.items():
            self.panel.set_outside_check(key, *self.check(task, lab))

    def check(self, task: TrainingTask, lab) -> tuple[bool, str]:
        if task.kind == "score_above":
            hit = score_reached(task, lab.runs)
            if hit is None:
                return False, _tr("The ✓ comes when the best layer-{layer} {score} score passes {above} "
                                  "within {within} steps: press Start in the Training lab.").format(
                    layer=task.layer, score=_tr(task.score.replace("_", "-")), above=f"{task.above:g}",
                    within=task.within)
            return True, _tr("Step {step}: the best layer-{layer} {score} score is {value}, above {above}.").format(
                step=hit[1], layer=task.layer, score=_tr(task.score.replace("_", "-")), value=f"{hit[0]:.2f}",
                above=f"{task.above:g}")
        if task.kind == "preset_expectation":
            v = lab.verdict() if lab.preset_key == task.preset else None
            if v is not None and v.state == "met":
                return True, _tr("The lab's expectation is met: {text}").format(text=v.text)
            return False, _tr("The ✓ comes with the Training lab's: press Start and let both runs end.")
        return self._circuit(task, lab)

    def _circuit(self, task: TrainingTask, lab) -> tuple[bool, str]:
        folder = lab.inspector_folder
        waiting = _tr("The ✓ comes once the trained run, opened with Open in inspector, proves the circuit "
                      "(detectors, exact patching and the deletion test, as this chapter says).")
        if folder is None:
            return False, waiting
        result = self.proved.get((task.chapter, folder))
        if result is None:
            self._prove(task, folder)
            return False, _tr("Checking the circuit of the run in the inspector…")
        if result.holds:  # (the whole proof is the lab's and the tests'; the box has little room)
            return True, _tr("The circuit is proved: layer {layer} head {head} is the induction head; "
                             "exact patching restores {value} of logit({answer}).").format(
                layer=result.head[0], head=result.head[1], value=f"{result.value:.2f}", answer=task.answer)
        return False, _tr("Not proved yet: {text}").format(text=result.in_language(_tr))

    def _prove(self, task: TrainingTask, folder: str) -> None:
        from ..work.base import Worker

        if (task.chapter, folder) in self.proving:
            return
        self.proving.add((task.chapter, folder))
        if self.worker is None:
            self.worker = Worker()
            self.worker.done.connect(self._on_proved)
            self.worker.failed.connect(self._on_failed)
            self.panel.destroyed.connect(self.worker.stop)

        def job(_job):
            from engine.models import load_model

            return task.chapter, folder, circuit_proof(task, load_model(folder))

        self.worker.submit(job, lane=(task.chapter, folder))

    def _on_proved(self, _rid, result) -> None:
        chapter, folder, proof = result
        self.proving.discard((chapter, folder))
        self.proved[(chapter, folder)] = proof
        self.sync()

    def _on_failed(self, _rid, message: str) -> None:
        """The run could not be checked (its folder gone, a refusal): said in the box."""
        for key in list(self.proving):
            self.proving.discard(key)
            self.proved[key] = TaskResult(False, None, None, message)
        self.sync()


def follow_inspector(window, lesson_panel, model) -> bool:
    """The lab's run was opened in the inspector while a training chapter is read (chapter 14):
    give the model panels the task's text and mark the chapter's panels, the model panels now
    among them; when the chapter names model panels, the floating lab steps aside (hidden:
    Lessons ▸ Training lab… shows it again), the status bar says so. Another model (one the
    learner opened) is left alone. Returns whether it did."""
    window = host_of(window)
    ch = lesson_panel.chapter()
    lab = window.state.training_lab
    if model is None or ch is None or lab is None or not lesson_panel.isVisible():
        return False
    folder = lab.inspector_folder
    if folder is None or not window.state.models.shows(folder):
        return False
    try:
        task = training_task(ch.key)
    except ValueError:
        return False
    if task is None:
        return False
    if task.text:
        window.state.models.set_text(task.text)
    model_panels = [n for n in ch.panels if n in window.panel_names() and window.panel(n).requires_model]
    lab_dock = window.dock("training") if "training" in window.panel_names() else None
    if model_panels and lab_dock is not None and lab_dock.isFloating():
        # the floating lab would cover the model panels the chapter goes on with
        lab_dock.hide()
        window.highlight_panels(model_panels)
        from PySide6.QtCore import QCoreApplication, QTimer

        line = QCoreApplication.translate(
            "TrainingLab", "The training lab stepped aside for the model panels: Lessons ▸ Training lab… "
                           "brings it back.")
        # after the load's own notices, which the status bar shows too
        QTimer.singleShot(0, lambda: window.show_status(line, 15000))
    else:
        window.highlight_panels(ch.panels)
    return True
