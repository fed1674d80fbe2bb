"""The training lab's leftovers of issue 17: the child process from the entry point (and its
fallback to a thread), the "Dropout and norm against collapse" preset, lessons 12 and 13; and
lesson 14 (issue 29): the circuit found and proved on the trained induction run.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from engine.training import TrainConfig, Trainer

try:
    from models_fixtures import chapter_13_result, induction_preset_run_path
except ImportError:  # tests/ imported as a package
    from tests.models_fixtures import chapter_13_result, induction_preset_run_path

__all__ = ["chapter_13_result", "induction_preset_run_path"]  # fixtures

ROOT = Path(__file__).resolve().parents[1]
TINY = TrainConfig(d_model=16, n_heads=2, n_layers=2, batch=4, steps=20, vocab=24, seq_len=17)


# ---- the entry point and the training child process -----------------------------------------------

def test_main_calls_freeze_support_before_anything_else():
    """A frozen bundle's child is main.py's executable run again: freeze_support must run
    before main() parses the arguments."""
    tree = ast.parse((ROOT / "main.py").read_text(encoding="utf-8"))
    guard = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    calls = [ast.unparse(s.value) for s in guard.body if isinstance(s, ast.Expr)]
    assert calls and calls[0] == "freeze_support()", calls
    assert "multiprocessing.freeze_support()" in ast.unparse(
        next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "freeze_support"))


def test_a_frozen_app_uses_the_process_once_freeze_support_ran(monkeypatch):
    from explorer.training.worker import default_mode

    monkeypatch.delenv("ATTN_EXPLORER_TRAINING", raising=False)
    monkeypatch.setenv("ATTN_EXPLORER_FREEZE_SUPPORT", "0")  # restored after the test
    monkeypatch.delenv("ATTN_EXPLORER_FREEZE_SUPPORT")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert default_mode() == "thread"  # a bundle without it would start its GUI again
    sys.path.insert(0, str(ROOT))
    try:
        import main as entry
    finally:
        sys.path.remove(str(ROOT))
    entry.freeze_support()  # (not frozen for real: multiprocessing has nothing to hand over)
    assert default_mode() == "process"
    monkeypatch.setenv("ATTN_EXPLORER_TRAINING", "thread")
    assert default_mode() == "thread"  # the user's choice wins


CHILD_SCRIPT = """
import multiprocessing, os, sys, time
sys.path.insert(0, {root!r})
import main  # the entry point, as a bundle's would be
if __name__ == "__main__":
    main.freeze_support()
    os.environ.pop("ATTN_EXPLORER_TRAINING", None)
    from PySide6.QtCore import QCoreApplication
    from engine.training import TrainConfig
    from explorer.training.worker import TrainingWorker
    {setup}
    app = QCoreApplication([])
    got = []
    w = TrainingWorker()
    w.progressed.connect(lambda p: got.append(p))
    w.new_run(1, TrainConfig(d_model=16, n_heads=2, n_layers=2, batch=4, steps=20, vocab=24, seq_len=17))
    w.step(5)
    children = []
    t_end = time.time() + 90
    while time.time() < t_end and not any(p.steps and p.stopped for p in got):
        app.processEvents()
        children = children or [c.name for c in multiprocessing.active_children()]
        time.sleep(0.01)
    steps = sum(len(p.steps) for p in got)
    print("mode", w.mode, "steps", steps, "children", ",".join(children), "pid", os.getpid())
    w.stop()
"""


def _run_child(tmp_path, setup: str = "") -> str:
    script = tmp_path / "entry.py"
    script.write_text(CHILD_SCRIPT.format(root=str(ROOT), setup=setup), encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, cwd=ROOT,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_the_training_child_process_starts_from_the_entry_point(tmp_path):
    line = _run_child(tmp_path)
    assert line.startswith("mode process steps 5 "), line
    assert "attention-explorer-training" in line  # it trained in its own process


@pytest.mark.slow
def test_a_child_that_cannot_start_falls_back_to_a_thread(tmp_path):
    """A child that dies before answering (here: an executable that exits at once, as a
    broken bundle's would) leaves the training to a thread: the steps still arrive."""
    setup = 'import multiprocessing as mp; mp.get_context("spawn").set_executable("/bin/false")'
    line = _run_child(tmp_path, textwrap.dedent(setup))
    assert line.startswith("mode thread steps 5 "), line


# ---- the "Dropout and norm against collapse" preset -------------------------------------------------

@dataclass
class _Run:
    """What a preset's check reads of a run (lab.Run without the window)."""

    config: TrainConfig
    history: list = field(default_factory=list)
    snapshots: list = field(default_factory=list)


@pytest.fixture(scope="module")
def dropout_norm_runs():
    from explorer.training.presets import PRESETS

    runs = []
    for pr in PRESETS["dropout_norm"].runs:
        tr = Trainer(pr.config)
        tr.step(pr.config.steps)
        runs.append(_Run(pr.config, tr.history))
    return runs


def test_the_dropout_norm_preset_trains_three_runs_that_differ_only_in_norm_and_dropout():
    from explorer.training.presets import PRESETS

    p = PRESETS["dropout_norm"]
    a, b, c = (r.config.to_dict() for r in p.runs)
    assert {k for k in a if a[k] != b[k]} == {"dropout"} and {k for k in a if a[k] != c[k]} == {"norm"}
    assert a["lr"] == 1e-2 and a["warmup_steps"] == 0 and a["norm"] == "pre" and c["norm"] == "none"
    assert "0.3" in p.expectation and "0.6" in p.expectation and "warmup" in p.explanation


@pytest.mark.slow
def test_the_dropout_norm_expectation_holds_as_trained(dropout_norm_runs):
    from explorer.training.presets import PRESETS

    check = PRESETS["dropout_norm"].check
    assert check(dropout_norm_runs[:2]).state == "pending"  # the third run not trained yet
    v = check(dropout_norm_runs)
    assert v.state == "met", v.text
    assert "with pre-LN" in v.text and "without LayerNorm" in v.text
    ent = [float(r.history[-1].entropy_norm[0].min()) for r in dropout_norm_runs]
    assert ent[0] < 0.3 and ent[1] < 0.3 and ent[2] > 0.6, ent  # the numbers the text quotes
    swapped = [dropout_norm_runs[2], dropout_norm_runs[1], dropout_norm_runs[0]]
    assert check(swapped).state == "not met"  # a check that can fail


# ---- lessons 12, 13 and 14 -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def induction_run(induction_preset_run_path):
    """The induction preset's first run trained 600 steps (what chapters 12 and 14 check),
    trained once per test run (models_fixtures.induction_preset_run_path) and loaded here."""
    from explorer.training.lessons import training_task

    ch12, ch14 = training_task("12-induction-head"), training_task("14-find-a-circuit")
    assert (ch14.preset, ch14.within) == (ch12.preset, ch12.within)  # the same run serves both
    run = Trainer.load(induction_preset_run_path)
    assert run.steps_done == ch14.within
    return run


def test_chapters_12_to_14_are_training_chapters_in_both_languages():
    from explorer.lessons import load_chapters
    from explorer.training.lessons import training_tasks

    chapters = {c.key: c for c in load_chapters()}
    tasks = {t.chapter: t for t in training_tasks()}
    assert set(tasks) == {"12-induction-head", "13-training-stability", "14-find-a-circuit"}
    assert tasks["12-induction-head"].preset == "induction" and tasks["13-training-stability"].preset == "warmup"
    assert tasks["14-find-a-circuit"].preset == "induction" and tasks["14-find-a-circuit"].kind == "circuit_proved"
    for key in tasks:
        ch = chapters[key]
        assert ch.panels[0] == "training"  # the lab first
        assert ch.title("zh") != ch.title("en")
    assert chapters["14-find-a-circuit"].panels == ("training", "patching", "circuits", "model_head")
    en12 = chapters["12-induction-head"].body("en")
    zh12 = chapters["12-induction-head"].body("zh")
    # honest: the heads formed here are tied to the trained lengths (check_circuit says so)
    assert "not a general circuit" in en12 and "never trained on" in en12
    assert "不是通用的回路" in zh12
    assert "Dropout and norm" in chapters["13-training-stability"].body("en")


def test_a_malformed_training_block_is_named(tmp_path):
    from explorer.training.lessons import training_task

    (tmp_path / "99-x.json").write_text('{"training": {"preset": "nope"}}', encoding="utf-8")
    with pytest.raises(ValueError, match="99-x: unknown training preset 'nope'"):
        training_task("99-x", tmp_path)
    (tmp_path / "96-z.json").write_text('{"training": {"preset": "induction", "task": {"kind": "circuit_proved", '
                                        '"within": 5, "text": "ABC ABC", "answer": "Q"}}}', encoding="utf-8")
    with pytest.raises(ValueError, match="96-z: circuit_proved needs"):
        training_task("96-z", tmp_path)
    (tmp_path / "98-y.json").write_text('{"training": {"preset": "induction", "task": {"kind": "score_above", '
                                        '"score": "loss", "within": 5}}}', encoding="utf-8")
    with pytest.raises(ValueError, match="98-y: score_above needs"):
        training_task("98-y", tmp_path)
    assert training_task("97-missing", tmp_path) is None


@pytest.mark.slow
def test_chapter_12s_task_is_met_by_the_engine_and_its_circuit_is_not_general(induction_run):
    """The induction score passes 0.5 within 600 steps; check_circuit finds the loss high at
    the unseen prefix length, as the chapter says."""
    from explorer.training.lessons import check_training_task, training_task

    r = check_training_task(training_task("12-induction-head"), trainer=induction_run)
    assert r.holds, r.text
    assert 300 <= r.step <= 600 and r.value > 0.5  # seed 0: step 397
    assert "has not generalised beyond the trained lengths" in r.circuit, r.circuit


@pytest.fixture(scope="module")
def induction_model(induction_run, tmp_path_factory):
    """The trained run opened as the inspector opens it."""
    from engine.models import load_model

    return load_model(induction_run.save(tmp_path_factory.mktemp("runs") / "induction"))


@pytest.mark.slow
def test_chapter_14s_circuit_is_proved_by_the_engine(induction_run):
    """Trained, the detectors' best layer-1 induction head restores the most under exact patching,
    the heads that are no induction heads restore nothing, and masking the first J agrees."""
    from explorer.training.lessons import check_training_task, training_task

    r = check_training_task(training_task("14-find-a-circuit"), trainer=induction_run)
    assert r.holds, r.text
    assert r.head == (1, 0) and r.value >= 0.5
    assert "the prediction becomes" in r.text and "'J'" in r.text


def test_chapter_14s_check_fails_on_an_untrained_run():
    from engine.training import Trainer
    from explorer.training.lessons import check_training_task, training_task
    from explorer.training.presets import PRESETS

    task = training_task("14-find-a-circuit")
    r = check_training_task(task, trainer=Trainer(PRESETS[task.preset].runs[0].config))
    assert not r.holds
    assert "not above 0.5" in r.text and "the model predicts" in r.text, r.text


def test_chapter_14s_texts_quote_the_engines_numbers(induction_model):
    """The numbers both texts quote are what the circuits, patching and model_head panels show
    for the seed-0 run: detector scores, the exact patching grid, the first corruption."""
    from engine.models.patching import corrupt_text
    from explorer.lessons import load_chapters
    from explorer.training.lessons import training_task

    task = training_task("14-find-a-circuit")
    m = induction_model
    scores = m.all_head_scores()
    corrupted = corrupt_text(m, task.text, 0)
    eff = m.activation_patching(task.text, corrupted, task.answer).effect
    deleted = m.deletion_test(task.text, 10, mode="mask")  # the first J (after <bos> and A..I)
    assert deleted.removed_token == "J"
    assert np.abs(deleted.attention_change[0]).max() < 1e-6  # layer 0's attention does not change (rounding)
    ch = next(c for c in load_chapters() if c.key == "14-find-a-circuit")
    numbers = [scores["induction"][1, 0], scores["induction"][1, 1], scores["previous_token"][0, 0],
               scores["previous_token"][0, 1], eff[1, 0], eff[1, 1], eff[0, 0], eff[0, 1]]

    def said(v: float) -> list[str]:
        """v to two decimals, or one hundredth either side: another CPU's training run
        (AVX-512 or not) rounds differently and lands a hundredth away."""
        return [f"{v + d:.2f}".replace("-", "−") for d in (0.0, -0.01, 0.01)]

    for lang in ("en", "zh"):
        body = ch.body(lang)
        missing = [said(v)[0] for v in numbers if not any(f in body for f in said(v))]
        missing += [t for t in (corrupted, task.text) if t not in body]
        assert not missing, (lang, missing, eff, scores)


@pytest.mark.slow
def test_chapter_13s_task_is_met_by_the_engine(chapter_13_result):
    """check_training_task of chapter 13 (run once per test run: models_fixtures.chapter_13_result)."""
    r = chapter_13_result
    assert r.holds, r.text
    assert "without warmup" in r.text


@pytest.mark.slow
def test_applying_chapter_12_opens_the_lab_with_its_experiment(qapp, qtbot):
    pytest.importorskip("pytestqt")
    from conftest import shown_window

    from explorer.lessons import load_chapters

    keys = [c.key for c in load_chapters()]
    with shown_window(qapp) as w:
        lesson = w.show_lessons(keys.index("12-induction-head"))
        qtbot.wait(50)  # the lab follows the lesson panel from its next event-loop turn
        lesson.apply_button.click()
        qtbot.waitUntil(lambda: "training" in w.panel_names() and w.dock("training").isVisible(), timeout=10_000)
        lab = w.panel("training")
        assert lab.preset_combo.currentText() == "An induction head forms"
        assert w.dock("training").windowTitle().startswith("★")  # marked as the chapter's panel
        lesson.chapter_list.setCurrentRow(keys.index("13-training-stability"))
        lesson.apply_button.click()
        qtbot.waitUntil(lambda: lab.preset_combo.currentText() == "Warmup vs none at lr 1e-2 (collapse)", timeout=10_000)
