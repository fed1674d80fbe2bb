"""The heads forming as an animation (issue 17's export): a real short training run written
as a GIF from the command line and from the window, with the frames it should have, heads
that visibly change between the first and the last frame, and bad targets refused with a
clear message and nothing left behind.

One training of the default induction preset to step 450 (its induction head forms at step
~400 for seed 0), shared by the tests: ~10 s on 2 idle cores.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.training import TrainConfig, Trainer, first_reached

ROOT = Path(__file__).resolve().parent.parent
STEPS = 450
FRAMES = 31  # step 0 and 30 more


def read_frames(path: Path) -> np.ndarray:
    """(n, H, W, 3) RGB of every frame, through Pillow (what a viewer or slide program reads)."""
    from PIL import Image, ImageSequence

    with Image.open(path) as im:
        assert im.format == "GIF"
        return np.stack([np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)])


@pytest.fixture(scope="module")
def trained():
    """(trainer, probes): the default config trained STEPS steps, a probe every 15 steps."""
    tr = Trainer(TrainConfig(steps=STEPS))
    probes = [tr.probe()]
    while tr.steps_done < STEPS:
        tr.step(15)
        probes.append(tr.probe())
    assert first_reached(tr.history) is not None, "no induction head formed: the GIF would show nothing forming"
    return tr, probes


@pytest.fixture(scope="module")
def run(trained, qapp):
    from explorer.training.forming import run_of

    tr, probes = trained
    return run_of(tr.config, tr.history, probes)


@pytest.mark.slow
def test_a_real_run_becomes_a_gif_whose_heads_form(run, tmp_path):
    from explorer.training.forming import FormingJob, FormingRequest

    path = tmp_path / "heads.gif"
    job = FormingJob(run, FormingRequest(path, width=480, max_frames=FRAMES))
    from PySide6.QtWidgets import QApplication

    while job.step():
        QApplication.processEvents()
    assert job.written == [path] and path.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heads.gif"]  # no temporary left
    frames = read_frames(path)
    assert frames.shape[0] == FRAMES and frames.shape[2] == 480
    assert 200 < frames.shape[1] < 480  # the figure's aspect, with the strip under it
    from PIL import Image

    for i in (0, FRAMES // 2, FRAMES - 1):  # to look at: pytest keeps tmp_path of the last runs
        Image.fromarray(frames[i]).save(tmp_path.parent / f"heads-frame-{i}.png")
    x0, y0, x1, y1 = job.heads_box
    assert 0 <= x0 < x1 <= 480 and 0 <= y0 < y1 <= frames.shape[1]
    first, last = frames[0].astype(int), frames[-1].astype(int)
    changed = (np.abs(first[y0:y1, x0:x1] - last[y0:y1, x0:x1]).max(-1) > 40).mean()
    assert changed > 0.02, f"the heads look the same at step 0 and step {STEPS} ({changed:.1%} of pixels changed)"
    # the frames in between move on: most consecutive frames differ where the heads are
    moved = [np.abs(frames[i, y0:y1, x0:x1].astype(int) - frames[i + 1, y0:y1, x0:x1]).mean() > 0.5
             for i in range(FRAMES - 1)]
    assert sum(moved) > FRAMES // 2


@pytest.mark.slow
def test_frames_are_the_snapshots_evenly_spaced_first_and_last_kept(run):
    from explorer.training.forming import pick_snapshots

    snaps = run.snapshots
    picked = pick_snapshots(snaps, 10)
    assert len(picked) == 10 and picked[0] is snaps[0] and picked[-1] is snaps[-1]
    assert [s.step for s in picked] == sorted({s.step for s in picked})
    assert pick_snapshots(snaps[:5], 10) == snaps[:5]


def test_bad_targets_are_refused_clearly_and_leave_nothing(run, tmp_path):
    from explorer.export import ExportError, ExportUsageError
    from explorer.training.forming import FormingJob, FormingRequest

    a_file = tmp_path / "file"
    a_file.write_text("x")
    (tmp_path / "file.gif").write_text("not mine")
    cases = [
        (tmp_path / "no" / "such" / "heads.gif", ExportError, "does not exist"),
        (a_file / "heads.gif", ExportError, "is a file, not a folder"),
        (tmp_path, ExportUsageError, ".gif or .mp4"),
        (tmp_path / "heads.png", ExportUsageError, ".gif or .mp4"),
        (tmp_path / "file.gif", ExportError, "already exists"),  # no force: never replaced
    ]
    for path, kind, says in cases:
        with pytest.raises(kind, match=says):
            FormingJob(run, FormingRequest(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "file.gif"]
    assert (tmp_path / "file.gif").read_text() == "not mine"


def test_a_write_that_fails_midway_leaves_nothing_behind(run, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from explorer.export import ExportError
    from explorer.export.animation import Encoder
    from explorer.training.forming import FormingJob, FormingRequest

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Encoder, "close", full)
    job = FormingJob(run, FormingRequest(tmp_path / "heads.gif", width=320, max_frames=4))
    with pytest.raises(ExportError, match="No space left"):
        while job.step():
            QApplication.processEvents()
    assert list(tmp_path.iterdir()) == []


def test_a_run_without_a_timeline_is_refused(trained, qapp, tmp_path):
    from explorer.export import ExportError
    from explorer.training.forming import FormingJob, FormingRequest, run_of

    tr, probes = trained
    with pytest.raises(ExportError, match="train it first"):
        FormingJob(run_of(tr.config, tr.history, probes[:1]), FormingRequest(tmp_path / "a.gif"))


@pytest.mark.slow
def test_cli_trains_and_writes_the_gif(tmp_path):
    """`python main.py train --steps N --gif PATH`: the frames come from the run's probes."""
    import subprocess

    path = tmp_path / "forming.gif"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "train", "--steps", "40", "--gif", str(path),
                           "--frames", "6", "--width", "320"], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote the heads forming to {path}" in proc.stdout
    frames = read_frames(path)
    assert frames.shape[0] == 6 and frames.shape[2] == 320
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forming.gif"]


def test_cli_refuses_a_gif_it_cannot_write_before_training(tmp_path, capsys):
    """main.main is what `python main.py` exits with (the subprocess above runs it whole): a
    target that cannot be written is refused before any training (exit 1, one line), a
    target that is no .gif/.mp4 by its arguments (exit 2); nothing written either way."""
    import main

    bad = tmp_path / "missing" / "x.gif"
    assert main.main(["train", "--steps", "40", "--gif", str(bad)]) == 1
    out, err = capsys.readouterr()
    assert "does not exist" in err and out == ""
    assert len(err.strip().splitlines()) == 1
    assert main.main(["train", "--gif", str(tmp_path / "x.png")]) == 2
    assert ".gif or .mp4" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_window_exports_the_lab_run_from_the_status_bar(qapp, tmp_path):
    """File ▸ Export heads forming… and the panel's button lead to the same export: the
    lab's viewed run, written from the status bar's progress bar."""
    pytest.importorskip("pytestqt")
    from conftest import shown_window
    from PySide6.QtWidgets import QApplication, QPushButton

    from explorer.training import show_training
    from explorer.training.forming import start_forming_export

    with shown_window(qapp) as w:
        panel = show_training(w)
        button = panel.findChild(QPushButton, "training_export_forming")
        assert button is not None and button.text()
        assert w.findChild(type(w.sessions.act_open), "action_export_heads_forming") is not None
        lab = w.training_lab
        lab.apply_preset(None)
        lab.set_settings(lab.make_config({"d_model": 32, "batch": 8, "steps": 30, "vocab": 24, "seq_len": 17}))
        lab.set_snapshot_every(5)
        lab.start()
        import time

        t_end = time.perf_counter() + 120
        while (lab.running or len(lab.current.snapshots) < 7) and time.perf_counter() < t_end:
            QApplication.processEvents()
            time.sleep(0.01)
        assert len(lab.current.snapshots) == 7  # steps 0, 5, …, 30
        path = tmp_path / "lab.gif"
        progress = start_forming_export(w, path, width=320)
        while progress.running and time.perf_counter() < t_end:
            QApplication.processEvents()
        assert progress.error is None and progress.result == [path]
        assert read_frames(path).shape[0] == 7


@pytest.mark.parametrize("argv", [["train", "--frames", "3"], ["train", "--fps", "4"], ["train", "--force"]])
def test_cli_animation_options_without_gif_exit_2(argv, capsys):
    import main

    assert main.main(argv) == 2
    err = capsys.readouterr().err
    assert "only appl" in err and "with --gif" in err and len(err.strip().splitlines()) == 1
