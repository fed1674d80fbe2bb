"""A run-folder save killed midway is recovered on the next open or save, and its leftovers are
cleaned (issue 28, item 9). The kills are real: a child process saves and ``os._exit``s at the
named point (between the two renames, after them, while writing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.training import RunFolderError, TrainConfig, Trainer, run_folder

ROOT = Path(__file__).resolve().parents[1]

# The child trains 4 steps and saves (unless "first"), trains 3 more and saves again, dying at
# ``mode``: "between" the two renames of the replace, "after" them (before the old run is
# deleted), or "writing" training_run.json (of the first save when "first").
_CHILD = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from engine.training import Trainer, TrainConfig
    from engine.training import run_folder

    folder, mode = Path(sys.argv[1]), sys.argv[2]
    tr = Trainer(TrainConfig(seed=3))
    tr.step(4)
    if mode != "first":
        tr.save(folder)
    tr.step(3)
    real_replace, real_rename, real_write = os.replace, os.rename, run_folder._write_json

    def moving(real):
        def move(src, dst, *args, **kwargs):
            into_place = Path(dst) == folder
            if mode == "between" and into_place and not os.path.lexists(folder):
                os._exit(17)
            real(src, dst, *args, **kwargs)
            if mode == "after" and into_place:
                os._exit(17)
        return move

    def write(path, value):
        if mode in ("writing", "first") and path.name == "training_run.json":
            os._exit(17)
        real_write(path, value)

    os.replace, os.rename, run_folder._write_json = moving(real_replace), moving(real_rename), write
    tr.save(folder)
    sys.exit(3)  # not killed: the test's hook missed
""")


def killed_save(parent: Path, mode: str) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    folder = parent / "run"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(folder), mode], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 17, proc.stderr[-2000:]
    return folder


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """mode -> a parent folder as the killed save left it (copied per test)."""
    base = tmp_path_factory.mktemp("killed")
    return {mode: killed_save(base / mode, mode).parent for mode in ("between", "after", "first")}


def state(killed, mode: str, tmp_path: Path) -> Path:
    """A copy of what the killed save left, as if it had just been killed: the mtimes keep their
    order (the newest complete run is found by them) but move so the newest is now, whatever
    the time the module's earlier tests took (a leftover older than STALE_S counts as dead)."""
    parent = tmp_path / mode
    shutil.copytree(killed[mode], parent, symlinks=True)  # keeps the mtimes
    paths = sorted(parent.rglob("*"), key=lambda p: -len(p.parts))
    shift = time.time() - max(p.lstat().st_mtime for p in paths)
    for p in paths:
        st = p.lstat()
        os.utime(p, (st.st_atime + shift, st.st_mtime + shift), follow_symlinks=False)
    return parent / "run"


def age(parent: Path, seconds: float = 120.0) -> None:
    """Make everything under ``parent`` look untouched for ``seconds`` (a long-dead save)."""
    t = time.time() - seconds
    for p in sorted(parent.rglob("*"), key=lambda p: -len(p.parts)):
        os.utime(p, (t, t), follow_symlinks=False)


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir())


# ---- killed between the two renames ---------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("opener", ["load_model", "Trainer.load"])
def test_a_save_killed_between_its_renames_is_recovered_on_open(killed, tmp_path, opener):
    from engine.models import load_model

    folder = state(killed, "between", tmp_path)
    left = siblings(folder)
    assert "run" not in left  # what the kill did: no folder under the name...
    assert any(n.startswith(".run.saving-") for n in left) and any(n.startswith(".run.old-") for n in left)
    if opener == "load_model":  # ...and opening it gets the newer run back
        m = load_model(folder)
        assert any("7 steps" in n for n in m.notices), m.notices
        assert m.inspect("ABCDABCD").attentions.shape[0] == 2
    else:
        tr = Trainer.load(folder)
        assert tr.steps_done == 7 and len(tr.history) == 7
        ref = Trainer(TrainConfig(seed=3))
        ref.step(7)
        assert [s.loss for s in tr.history] == [s.loss for s in ref.history]
    assert (folder / "training_run.json").is_file()
    age(folder.parent)  # the leftovers of the killed save, long dead: the next save cleans them
    Trainer.load(folder).save(folder)
    assert siblings(folder) == ["run"]
    assert Trainer.load(folder).steps_done == 7


def test_a_save_killed_between_its_renames_is_recovered_by_the_next_save(killed, tmp_path):
    folder = state(killed, "between", tmp_path)
    tr = Trainer(TrainConfig(seed=3))
    tr.step(9)
    age(folder.parent)
    tr.save(folder)
    assert siblings(folder) == ["run"] and Trainer.load(folder).steps_done == 9


def test_the_older_run_is_restored_when_the_newer_is_incomplete(killed, tmp_path):
    folder = state(killed, "between", tmp_path)
    (saving,) = folder.parent.glob(".run.saving-*")
    (saving / "optimizer.safetensors").unlink()
    assert Trainer.load(folder).steps_done == 4  # the run that was being replaced
    age(folder.parent)
    run_folder.recover_run(folder)
    assert siblings(folder) == ["run"]


def test_a_truncated_tensor_file_is_not_a_complete_run(killed, tmp_path):
    folder = state(killed, "between", tmp_path)
    (saving,) = folder.parent.glob(".run.saving-*")
    weights = saving / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-16])
    assert Trainer.load(folder).steps_done == 4


# ---- killed after the renames, or while writing -----------------------------------------------
def test_a_save_killed_after_its_renames_leaves_the_old_run_only_until_cleaned(killed, tmp_path):
    from engine.models import load_model

    folder = state(killed, "after", tmp_path)
    assert Trainer.load(folder).steps_done == 7
    # a leftover touched seconds ago may be a save still running in another process: kept
    assert any(n.startswith(".run.old-") for n in siblings(folder))
    age(folder.parent)
    load_model(folder)
    assert siblings(folder) == ["run"]


def test_an_incomplete_saving_leftover_is_never_restored_and_is_cleaned(killed, tmp_path):
    from engine.models import ModelLoadError, load_model

    folder = state(killed, "first", tmp_path)
    (saving,) = folder.parent.glob(".run.saving-*")
    assert (saving / "model.safetensors").is_file() and not (saving / "training_run.json").exists()
    with pytest.raises(RunFolderError, match="there is no folder"):
        Trainer.load(folder)
    with pytest.raises(ModelLoadError, match="There is no folder"):
        load_model(folder)
    assert not folder.exists() and saving.exists()  # fresh: perhaps a save still writing
    age(folder.parent)
    with pytest.raises(RunFolderError, match="there is no folder"):
        Trainer.load(folder)
    assert siblings(folder) == []


def test_a_complete_first_save_killed_before_its_rename_is_restored(killed, tmp_path):
    folder = state(killed, "between", tmp_path)
    shutil.rmtree(next(folder.parent.glob(".run.old-*")))  # as a first save leaves it
    assert Trainer.load(folder).steps_done == 7


# ---- what is never touched --------------------------------------------------------------------
def test_only_what_a_save_makes_is_ever_removed(killed, tmp_path):
    folder = state(killed, "after", tmp_path)
    parent = folder.parent
    keep = [".run.saving-short", ".run.saving-abcdefghi", ".other.saving-abcdefgh", ".run.saving-ABCDEFGH",
            ".run.saving-abcdefgh", ".run.old-abcdefgh", ".run.old-zzzzzzzz"]
    for name in keep:
        (parent / name).mkdir()
    (parent / ".run.saving-abcdefgh" / "notes.txt").write_text("mine")  # not a file a save writes
    (parent / ".run.old-abcdefgh" / "run").mkdir()
    (parent / ".run.old-abcdefgh" / "run" / "notes.txt").write_text("mine")
    (parent / ".run.old-zzzzzzzz" / "photo.jpg").write_text("mine")
    (parent / ".run.saving-filefile").write_text("a file, not a save's folder")
    (parent / ".run.saving-linklink").symlink_to(parent / ".run.saving-abcdefgh")
    age(parent)
    Trainer.load(folder).save(folder)
    assert siblings(folder) == sorted(["run", *keep, ".run.saving-filefile", ".run.saving-linklink"])
    assert (parent / ".run.saving-abcdefgh" / "notes.txt").read_text() == "mine"
    assert (parent / ".run.old-abcdefgh" / "run" / "notes.txt").read_text() == "mine"


def test_an_existing_folder_is_never_replaced_by_a_leftover(killed, tmp_path):
    folder = state(killed, "between", tmp_path)
    assert Trainer.load(folder).steps_done == 7
    (old,) = folder.parent.glob(".run.old-*")  # the replaced run, complete, beside the folder
    assert Trainer.load(old / "run").steps_done == 4
    assert Trainer.load(folder).steps_done == 7
    tr = Trainer(TrainConfig(seed=3))
    tr.step(2)
    tr.save(folder)
    assert Trainer.load(folder).steps_done == 2
    photos = tmp_path / "photos"  # a folder of other files: its siblings are not even looked at
    photos.mkdir()
    (photos / "cat.jpg").write_text("x")
    (tmp_path / ".photos.saving-abcdefgh").mkdir()
    age(tmp_path)
    assert run_folder.recover_run(photos) is None
    assert (tmp_path / ".photos.saving-abcdefgh").exists()


# ---- a failed second rename, and an open in between -------------------------------------------
def test_a_failed_second_rename_puts_the_old_run_back(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    tr = Trainer(TrainConfig(seed=3))
    tr.step(4)
    tr.save(folder)
    tr.step(3)
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst) == folder and Path(src).name.startswith(".run.saving-"):
            raise OSError(28, "No space left on device")  # the new run cannot go into place
        real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(RunFolderError, match=r"cannot save the run to .*No space left"):
        tr.save(folder)
    monkeypatch.undo()
    assert siblings(folder) == ["run"] and Trainer.load(folder).steps_done == 4


def test_an_open_between_the_renames_does_not_fail_the_save(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    tr = Trainer(TrainConfig(seed=3))
    tr.step(4)
    tr.save(folder)
    tr.step(3)
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst) == folder and not os.path.lexists(folder):
            assert run_folder.recover_run(folder) == folder  # another process opens it now
        real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    assert tr.save(folder) == folder
    monkeypatch.undo()
    assert siblings(folder) == ["run"] and Trainer.load(folder).steps_done == 7
    assert json.loads((folder / "training_run.json").read_text())["steps_done"] == 7


def test_a_complete_run_of_a_newer_version_is_put_back_and_said_newer(killed, tmp_path):
    folder = state(killed, "between", tmp_path)
    (saving,) = folder.parent.glob(".run.saving-*")
    head = json.loads((saving / "training_run.json").read_text())
    (saving / "training_run.json").write_text(json.dumps({**head, "version": 99}))
    with pytest.raises(RunFolderError, match="newer"):
        Trainer.load(folder)
    assert json.loads((folder / "training_run.json").read_text())["version"] == 99
