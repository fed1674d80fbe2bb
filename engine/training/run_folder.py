"""A saved training run: a folder that ``Trainer.load`` continues and ``load_model`` opens
(through :mod:`engine.models.training_run`, which reads it with this module).

Layout (format ``attention-explorer.training-run``, version 1)::

    training_run.json     format, version, the TrainConfig, steps done, training seconds,
                          the data generator's state, the token symbols
    model.safetensors     the model's weights (TinyTransformer state dict names)
    optimizer.safetensors AdamW's moments and step per parameter, the dropout generator
    history.json          every TrainStep (TrainStep.to_dict)

Saving writes a fresh hidden sibling folder ``.NAME.saving-XXXXXXXX`` (every file
flushed to disk, training_run.json last), moves a run already there aside into
``.NAME.old-XXXXXXXX/run``, renames the new one into place and deletes the old one,
so an interrupted save never leaves a half-written run under the name; a folder
that holds anything but a saved run is never replaced. A save killed between its
two renames leaves no folder under the name but a complete run beside it:
:func:`recover_run`, called by every save and open of the name, puts the newest
complete one back, and deletes the leftovers of killed or finished saves (only
siblings named and filled as a save makes them, untouched for
:data:`STALE_S` seconds). Reading is bounded (JSON sizes, tensor names and shapes
checked against the config) and runs nothing: safetensors holds tensors only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import tempfile
import time
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
RUN_FILES = (RUN_FILE, WEIGHTS_FILE, OPTIMIZER_FILE, HISTORY_FILE)
STALE_S = 10.0  # a save's leftover untouched this long belongs to no save still running
_SAVING, _OLD, _OLD_RUN = "saving", "old", "run"  # .NAME.saving-XXXXXXXX, .NAME.old-XXXXXXXX/run


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


def _write_error_text(exc: Exception) -> str:
    """Why a write failed, in one line: an OSError's reason, or the OS error inside safetensors'
    own ("Error while serializing: I/O error: No space left on device (os error 28)")."""
    if isinstance(exc, OSError):
        return _oserror_text(exc)
    code = re.search(r"os error (\d+)", str(exc))
    if code:
        return os.strerror(int(code.group(1)))
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__


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
    """Write ``trainer``'s run to ``folder`` (created; a previous run there is replaced).
    Recoverable at every point (see the module's docstring and :func:`recover_run`)."""
    from safetensors import SafetensorError
    from safetensors.torch import save_file

    recover_run(folder)
    folder = check_target(folder)
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=_leftover_prefix(folder.name, _SAVING), dir=parent))
    except OSError as exc:
        raise RunFolderError(f"cannot save the run to {folder}: {_oserror_text(exc)} "
                             f"(in {exc.filename or parent})", "unwritable") from None
    old = None
    try:
        save_file({k: v.detach().contiguous() for k, v in trainer.model.state_dict().items()},
                  str(tmp / WEIGHTS_FILE))
        _fsync_file(tmp / WEIGHTS_FILE)
        save_file(_optimizer_tensors(trainer), str(tmp / OPTIMIZER_FILE))
        _fsync_file(tmp / OPTIMIZER_FILE)
        _write_json(tmp / HISTORY_FILE, [s.to_dict() for s in trainer.history])
        _write_json(tmp / RUN_FILE, {  # last: a .saving- folder with it is complete
            "format": FORMAT, "version": VERSION, "config": trainer.config.to_dict(),
            "steps_done": trainer.steps_done, "elapsed_s": trainer.elapsed_s,
            "data_rng": trainer.data_rng.bit_generator.state, "symbols": trainer.vocab,
            "torch": torch.__version__,
        })
        _fsync_dir(tmp)
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=_leftover_prefix(folder.name, _OLD), dir=parent))
            os.replace(folder, old / _OLD_RUN)
            # a kill here leaves no folder, but both runs complete beside it: recover_run
            try:
                _into_place(tmp, folder)
            except OSError:
                _put_back(old / _OLD_RUN, folder)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            _into_place(tmp, folder)
    except (OSError, SafetensorError) as exc:  # (a full disk: safetensors' own error, not an OSError)
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not (old / _OLD_RUN).exists():
            shutil.rmtree(old, ignore_errors=True)
        raise RunFolderError(f"cannot save the run to {folder}: {_write_error_text(exc)}", "unwritable") from None
    return folder


def _into_place(tmp: Path, folder: Path) -> None:
    try:
        os.replace(tmp, folder)
    except FileNotFoundError:
        # only recover_run moves a complete .saving- folder, and only to its name: an open of
        # the same name, run in between, has already put this save's run into place
        if tmp.exists() or not is_training_run(folder):
            raise
    _fsync_dir(folder.parent)


def _put_back(old_run: Path, folder: Path) -> None:
    """The second rename failed: the previous run goes back under its name (else it stays
    complete beside it, where :func:`recover_run` finds it)."""
    try:
        if not folder.exists():
            os.replace(old_run, folder)
            shutil.rmtree(old_run.parent, ignore_errors=True)
    except OSError:
        pass


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """Make a folder's entries (a rename into it) durable; some systems cannot, quietly."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- recovering an interrupted save -------------------------------------------------
def _leftover_prefix(name: str, kind: str) -> str:
    return f".{name}.{kind}-"


def _leftovers(folder: Path) -> list[tuple[str, Path]]:
    """(kind, path) of the siblings of ``folder`` named exactly as :func:`save_run` names its
    temporary folders (tempfile.mkdtemp's 8 characters after the prefix), real folders only."""
    pattern = re.compile(rf"\.{re.escape(folder.name)}\.({_SAVING}|{_OLD})-[a-z0-9_]{{8}}")
    found = []
    with os.scandir(folder.parent) as it:
        for entry in it:
            m = pattern.fullmatch(entry.name)
            if m and entry.is_dir(follow_symlinks=False):
                found.append((m.group(1), Path(entry.path)))
    return found


def _only_run_files(path: Path) -> bool:
    """``path`` is a real folder holding nothing but (some of) a run's files."""
    try:
        with os.scandir(path) as it:
            return all(e.name in RUN_FILES and e.is_file(follow_symlinks=False) for e in it)
    except OSError:
        return False


def _run_inside(kind: str, path: Path) -> Path | None:
    """The run folder inside a leftover: the .saving- folder itself, or .old-/run; None when the
    leftover holds anything a save does not put there (it is then never touched)."""
    if kind == _SAVING:
        return path if _only_run_files(path) else None
    try:
        names = os.listdir(path)
    except OSError:
        return None
    if not names:
        return path  # made, killed before its rename: an empty folder
    run = path / _OLD_RUN
    if names == [_OLD_RUN] and not run.is_symlink() and run.is_dir() and _only_run_files(run):
        return run
    return None


def _last_touched(paths: list[Path]) -> float:
    """The latest mtime of these paths and their entries (a file being written counts)."""
    latest = 0.0
    for p in paths:
        try:
            latest = max(latest, p.lstat().st_mtime)
            if p.is_dir() and not p.is_symlink():
                with os.scandir(p) as it:
                    for e in it:
                        latest = max(latest, e.stat(follow_symlinks=False).st_mtime)
        except OSError:
            continue
    return latest


def _safetensors_complete(path: Path) -> bool:
    """The file's header reads and the file is as long as the header says (no truncated data)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if n > min(size - 8, 100 * 2**20):
                return False
            header = json.loads(f.read(n))
        ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
        return size == 8 + n + max(ends, default=0)
    except (OSError, struct.error, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return False


def _complete_run(run: Path) -> int | None:
    """training_run.json's mtime (ns) when ``run`` holds a complete run (training_run.json parses
    as a run file, the tensor files are whole, the history has the steps it says), else None.
    Whether this version can open it is not asked: a complete run is put back either way."""
    try:
        head = _read_json(run / RUN_FILE)
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            return None
        if not all(_safetensors_complete(run / f) for f in (WEIGHTS_FILE, OPTIMIZER_FILE)):
            return None
        history = _read_json(run / HISTORY_FILE)
        if not isinstance(history, list) or len(history) != head.get("steps_done"):
            return None
        return (run / RUN_FILE).stat().st_mtime_ns
    except (RunFolderError, OSError):
        return None


def recover_run(folder: str | os.PathLike) -> Path | None:
    """Finish what a killed save of ``folder`` left: when there is no ``folder`` but a complete
    run beside it (in ``.NAME.saving-*``, written by the save, or ``.NAME.old-*/run``, the run it
    was replacing), the newest one is renamed into place; then every leftover of a killed or
    finished save (named and filled only as :func:`save_run` makes them, untouched for
    :data:`STALE_S` seconds) is deleted. Returns the run folder restored, else None. Never
    raises: whatever it cannot do stays as it was."""
    try:
        folder = Path(folder).expanduser()
        if not folder.name or (folder.exists() and not is_training_run(folder)):
            return None
        leftovers = [(kind, path, _run_inside(kind, path)) for kind, path in _leftovers(folder)]
    except (OSError, ValueError, TypeError, RuntimeError):  # RuntimeError: ~nosuchuser
        return None
    leftovers = [(kind, path, run) for kind, path, run in leftovers if run is not None]
    try:
        restored = _restore_newest(folder, leftovers) if not os.path.lexists(folder) else None
        now = time.time()
        for kind, path, run in leftovers:
            # still as a save makes it (checked again: it may have changed since), and stale;
            # the one restored is gone from here
            if (os.path.lexists(path) and _run_inside(kind, path) is not None
                    and now - _last_touched([path, run]) >= STALE_S):
                shutil.rmtree(path, ignore_errors=True)
    except (OSError, ValueError):
        return None
    return restored


def _restore_newest(folder: Path, leftovers: list[tuple[str, Path, Path]]) -> Path | None:
    """Rename the newest complete run among ``leftovers`` (by training_run.json's mtime; a tie:
    the save's new one) to ``folder``, which does not exist; the folder, or None."""
    ranked = []
    for kind, path, run in leftovers:
        if kind == _SAVING or run != path:  # an empty .old- folder holds no run
            when = _complete_run(run)
            if when is not None:
                ranked.append((when, kind == _SAVING, str(run), kind, run))
    for *_, kind, run in sorted(ranked, reverse=True):
        try:
            os.rename(run, folder)
        except OSError:
            if os.path.lexists(folder):
                return None  # someone else put a run there meanwhile
            continue
        _fsync_dir(folder.parent)
        if kind == _OLD:
            try:
                os.rmdir(run.parent)  # the .old- folder it was in, empty now
            except OSError:
                pass
        return folder
    return None


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
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        shown = repr(version) if len(repr(version)) <= 40 else repr(version)[:39] + "…"
        what = "missing" if version is None else f"{shown} ({type(version).__name__}), not a version number"
        raise RunFolderError(f"{RUN_FILE} in {folder} is damaged: its run format version is {what} "
                             f"(this Attention Explorer reads version {VERSION})", "corrupt")
    if version > VERSION:
        raise RunFolderError(f"{folder} was saved by a newer Attention Explorer (run format version "
                             f"{version}; this one reads {VERSION})", "newer")
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
