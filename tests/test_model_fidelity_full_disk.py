"""``train --out`` on a full disk (issue 46 item 13): one line, and no hidden folder left.

safetensors reports a failed write as its own ``SafetensorError`` ("Error while serializing:
I/O error: No space left on device (os error 28)"), not an OSError: it escaped the save's
clean-up, printed raw, and left ``.NAME.saving-*`` beside the run until a later save.

The real write path runs in a child process whose files may not grow past a few KiB
(RLIMIT_FSIZE, SIGXFSZ ignored: every write past it fails as on a full disk, with EFBIG); the
ENOSPC wording is checked with the same error safetensors raises, in this process.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _small_files_only() -> None:  # (runs in the child, before exec)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))


def test_train_out_when_the_files_cannot_be_written(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-B", str(ROOT / "main.py"), "train", "--steps", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, preexec_fn=_small_files_only,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
             "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 1, (proc.stdout[-500:], proc.stderr[-2000:])
    err = proc.stderr.strip().splitlines()
    assert err == [f"attention-explorer train: cannot save the run to {out}: File too large"], err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "the save left files behind"


def test_a_full_disk_says_so_in_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    import safetensors.torch
    from safetensors import SafetensorError

    from engine.training import TrainConfig, Trainer
    from engine.training.run_folder import RunFolderError

    def full(tensors, filename, *args, **kwargs):
        Path(filename).write_bytes(b"\0" * 64)  # part of the file made it to the disk
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    tr = Trainer(TrainConfig(steps=1))
    tr.step(1)
    saved = tr.save(tmp_path / "run")  # a previous run under the name stays as it was
    before = sorted(p.name for p in saved.iterdir())
    monkeypatch.setattr(safetensors.torch, "save_file", full)
    with pytest.raises(RunFolderError) as info:
        tr.save(tmp_path / "run")
    assert str(info.value) == f"cannot save the run to {saved}: No space left on device"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert sorted(p.name for p in saved.iterdir()) == before
