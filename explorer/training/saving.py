"""Keeping a trained run: the lab's *Save run…* (a folder dialog) and the question when the
window closes with a run trained here and not saved.

    save_run_dialog(parent, lab) -> bool          # name a folder, then TrainingLab.save_run
    run_folder(chosen, run, preset) -> Path       # where a run goes when a folder is chosen
    ask_unsaved(parent, run) -> "save" | "discard" | "cancel"

The save itself runs in the training process (`TrainingLab.save_run`: the engine's run-folder
save, written aside and renamed into place); the lab's message line says where it went or
why not, in one line.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox

from engine.training import is_training_run


def _tr(text: str) -> str:
    return QCoreApplication.translate("TrainingSave", text)


def free_name(folder: Path, run, preset: str | None = None) -> Path:
    """A folder inside `folder` named after the preset (or the run) and its steps that does
    not exist yet ("induction-step400", "run3-step40"; "-2", "-3", … when taken)."""
    base = f"{preset or f'run{run.id}'}-step{run.steps_done}"
    target, n = folder / base, 1
    while target.exists():
        n += 1
        target = folder / f"{base}-{n}"
    return target


def run_folder(chosen: str | Path, run, preset: str | None = None) -> Path:
    """The run folder for a folder chosen in the dialog: the folder itself when it is empty,
    new or a saved run (replaced); else a new folder inside it (`free_name`)."""
    chosen = Path(chosen).expanduser()
    try:
        if not chosen.is_dir() or is_training_run(chosen) or not any(chosen.iterdir()):
            return chosen
        return free_name(chosen, run, preset)
    except OSError:  # a folder that cannot be read: the save says why, in one line
        return chosen


def save_run_dialog(parent, lab) -> bool:
    """*Save run…*: a folder dialog, then the lab saves the viewed run there (off the UI
    thread). False when the dialog was cancelled or the run cannot be saved."""
    run = lab.viewed_run()
    if run is None:
        return False
    if not lab.can_save():  # before the dialog, not after a folder was chosen
        lab.say_cannot_save()
        return False
    start = Path(lab.last_save_dir or Path.home()).expanduser()
    try:
        offered = free_name(start, run, lab.preset_key)
    except OSError:
        offered = start / "run"
    # a save dialog, not a folder chooser: the folder's name is typed, new or not (Qt's folder
    # chooser answers a new name with "Directory not found"); an existing run is asked about below
    chosen, _filter = QFileDialog.getSaveFileName(
        parent, _tr("Save run"), str(offered), "", "", QFileDialog.Option.DontConfirmOverwrite)
    if not chosen:
        return False
    target = run_folder(chosen, run, lab.preset_key)
    if _replaces_another_run(target, run) and not _ask_replace(parent, target):
        return False
    lab.last_save_dir = str(target.parent)
    return lab.save_run(target)


def _replaces_another_run(target: Path, run) -> bool:
    """`target` holds a saved run that is not this run's own last save."""
    try:
        other = is_training_run(target)
    except OSError:
        return False
    own = run.saved_folder is not None and Path(run.saved_folder).expanduser() == target
    return bool(other) and not own


def _ask_replace(parent, target: Path) -> bool:
    box = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent, _tr("Replace the saved run?"),
        _tr("{folder} holds another saved training run. Replace it with this one?").format(folder=str(target)),
        box.Yes | box.Cancel, box.Cancel)
    return answer == box.Yes


def ask_unsaved(parent, run) -> str:
    """Save / Discard / Cancel for a run trained in this window and not saved."""
    box = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent, _tr("Unsaved training run"),
        _tr("The training run {name} ({steps} steps) is not saved: its model is lost when the "
            "window closes. Save it first?").format(name=run.display_name(), steps=run.steps_done),
        box.Save | box.Discard | box.Cancel, box.Save)
    return {box.Save: "save", box.Discard: "discard"}.get(answer, "cancel")
