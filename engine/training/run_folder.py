"""A saved training run: a folder that ``Trainer.load`` continues and ``load_model`` opens
(through :mod:`engine.models.training_run`, which reads it with this module).

Layout (format ``attention-explorer.training-run``, version 1)::

    training_run.json     format, version, the TrainConfig, steps done, training seconds,
                          the data generator's state, the token symbols
    model.safetensors     the model's weights (TinyTransformer state dict names)
    optimizer.safetensors AdamW's moments and step per parameter, the dropout generator
    history.json          every TrainStep (TrainStep.to_dict)

Saving writes a fresh hidden sibling folder and renames it into place, so an
interrupted save never leaves a half-written run under the name; a folder
that holds anything but a saved run is never replaced. Reading is bounded
(JSON sizes, tensor names and shapes checked against the config) and runs
nothing: safetensors holds tensors only.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..config import ConfigError
from .config import TrainConfig
from .model import TinyTransformer

FORMAT = "attention-explorer.training-run"
VERSION = 1
RUN_FILE = "training_run.json"
WEIGHTS_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
HISTORY_FILE = "history.json"
_MAX_JSON = 256 * 2**20  # history.json of ~10⁶ steps


class RunFolderError(RuntimeError):
    """A run cannot be saved to, or read from, a folder; the message says which and why.
    ``reason``: "unwritable", "not_a_run", "newer", "corrupt"."""

    def __init__(self, message: str, reason: str = "corrupt") -> None:
        super().__init__(message)
        self.reason = reason


def is_training_run(folder: str | os.PathLike) -> bool:
    """True when ``folder`` holds a run saved by ``Trainer.save`` (by its marker file)."""
    return (Path(folder) / RUN_FILE).is_file()


# ---- saving -----------------------------------------------------------------------
def _oserror_text(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_target(folder: str | os.PathLike) -> Path:
    """The folder a run can be saved to, else RunFolderError saying why not (a file in the way,
    a folder of other files, no permission to write where the run goes). Saving writes a
    sibling and renames it, so the folder's parent (or its nearest existing ancestor) must be
    writable."""
    folder = Path(folder).expanduser()
    where = f"cannot save the run to {folder}"
    for f in (folder, *folder.parents):
        if not f.exists():
            continue
        if not f.is_dir():
            raise RunFolderError(f"{where}: {f} is a file, not a folder", "unwritable")
        if f == folder:
            if any(f.iterdir()) and not is_training_run(f):
                raise RunFolderError(f"{where}: the folder holds other files (it is not a saved run); "
                                     "choose an empty or new folder", "unwritable")
            continue  # its parent is written to: check that
        if not os.access(f, os.W_OK | os.X_OK):
            raise RunFolderError(f"{where}: no permission to write in {f}", "unwritable")
        break
    return folder


def save_run(trainer, folder: str | os.PathLike) -> Path:
    """Write ``trainer``'s run to ``folder`` (created; a previous run there is replaced)."""
    from safetensors.torch import save_file

    folder = check_target(folder)
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.saving-", dir=parent))
    except OSError as exc:
        raise RunFolderError(f"cannot save the run to {folder}: {_oserror_text(exc)} "
                             f"(in {exc.filename or parent})", "unwritable") from None
    try:
        save_file({k: v.detach().contiguous() for k, v in trainer.model.state_dict().items()},
                  str(tmp / WEIGHTS_FILE))
        save_file(_optimizer_tensors(trainer), str(tmp / OPTIMIZER_FILE))
        _write_json(tmp / HISTORY_FILE, [s.to_dict() for s in trainer.history])
        _write_json(tmp / RUN_FILE, {
            "format": FORMAT, "version": VERSION, "config": trainer.config.to_dict(),
            "steps_done": trainer.steps_done, "elapsed_s": trainer.elapsed_s,
            "data_rng": trainer.data_rng.bit_generator.state, "symbols": trainer.vocab,
            "torch": torch.__version__,
        })
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=parent))
            os.replace(folder, old / "run")
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RunFolderError(f"cannot save the run to {folder}: {_oserror_text(exc)}", "unwritable") from None
    return folder


def _write_json(path: Path, value) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, allow_nan=True)
        f.flush()
        os.fsync(f.fileno())


def _optimizer_tensors(trainer) -> dict[str, torch.Tensor]:
    """AdamW's moments and step count, plus the dropout generator's state."""
    return {"rng.dropout": trainer.dropout_generator.get_state(), **trainer.optimizer.state_tensors()}


# ---- reading ----------------------------------------------------------------------
def _read_json(path: Path):
    try:
        size = path.stat().st_size
        if size > _MAX_JSON:
            raise RunFolderError(f"{path.name} is {size / 2**20:.0f} MiB, too large for a run file")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise RunFolderError(f"{path.parent} is not a complete training run: {path.name} is missing",
                             "not_a_run") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RunFolderError(f"{path.name} in {path.parent} cannot be read: "
                             f"{' '.join(str(exc).split())[:160]}") from None


def read_run_header(folder: str | os.PathLike) -> tuple[Path, dict, TrainConfig]:
    """(folder, training_run.json's dict, its TrainConfig), checked."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise RunFolderError(f"there is no folder {folder}", "not_a_run")
    if not is_training_run(folder):
        raise RunFolderError(f"{folder} is not a saved training run (it has no {RUN_FILE})", "not_a_run")
    head = _read_json(folder / RUN_FILE)
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise RunFolderError(f"{RUN_FILE} in {folder} is not a training run file", "not_a_run")
    version = head.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > VERSION:
        raise RunFolderError(f"{folder} was saved by a newer Attention Explorer (run format version "
                             f"{version!r}; this one reads {VERSION})", "newer")
    try:
        config = TrainConfig.from_dict(head.get("config"))
    except ConfigError as exc:
        raise RunFolderError(f"the config in {RUN_FILE} is not valid: {exc}") from None
    return folder, head, config


def _load_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    if not path.is_file():
        raise RunFolderError(f"{path.parent} is not a complete training run: {path.name} is missing",
                             "not_a_run")
    try:
        return load_file(str(path))
    except Exception as exc:  # safetensors raises its own error types for a damaged file
        raise RunFolderError(f"{path.name} in {path.parent} cannot be read (damaged?): "
                             f"{' '.join(str(exc).split())[:160]}") from None


def load_weights(model: TinyTransformer, folder: Path) -> None:
    """Put model.safetensors into ``model``; every tensor's name and shape must match."""
    stored = _load_tensors(folder / WEIGHTS_FILE)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(stored))
    extra = sorted(set(stored) - set(expected))
    if missing or extra:
        what = f"lacks {missing[0]}" if missing else f"has an unknown tensor {extra[0]}"
        raise RunFolderError(f"{WEIGHTS_FILE} does not fit the run's config: it {what}")
    for name, t in expected.items():
        if tuple(stored[name].shape) != tuple(t.shape) or not stored[name].is_floating_point():
            raise RunFolderError(f"{WEIGHTS_FILE} does not fit the run's config: {name} has shape "
                                 f"{tuple(stored[name].shape)}, the config needs {tuple(t.shape)}")
    model.load_state_dict({k: v.to(torch.float32) for k, v in stored.items()})


def restore_run(trainer, folder: Path, head: dict, step_from_dict: Callable[[dict], Any]) -> None:
    """Put the run saved in ``folder`` into ``trainer``, a fresh Trainer of its config
    (``head`` and the config from :func:`read_run_header`): weights, history (each step
    through ``step_from_dict``), the data generator, the dropout masks and the optimiser's
    moments, so it continues exactly where it stopped (N steps + save + load + M steps =
    N + M steps). ``Trainer.load`` calls it; this module never imports the trainer."""
    load_weights(trainer.model, folder)
    history = _read_json(folder / HISTORY_FILE)
    try:
        trainer.history = [step_from_dict(d) for d in history]
    except (TypeError, KeyError, ValueError, AttributeError):
        raise RunFolderError(f"{HISTORY_FILE} in {folder} is not a list of training steps") from None
    done = head.get("steps_done")
    if done != len(trainer.history):
        raise RunFolderError(f"{folder} is inconsistent: {RUN_FILE} says {done!r} steps, "
                             f"{HISTORY_FILE} holds {len(trainer.history)}")
    trainer.elapsed_s = float(head.get("elapsed_s") or 0.0)
    opt = _load_tensors(folder / OPTIMIZER_FILE)
    try:
        trainer.data_rng.bit_generator.state = head["data_rng"]
        trainer.dropout_generator.set_state(opt.pop("rng.dropout"))
        trainer.optimizer.load_state_tensors(opt)
    except (KeyError, ValueError, TypeError, RuntimeError) as exc:
        raise RunFolderError(f"the optimiser state in {folder} cannot be restored: "
                             f"{' '.join(str(exc).split())[:160]}") from None
