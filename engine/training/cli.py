"""``python main.py train [--task T] [--steps N] [--seed S] [--config FILE] [--out FOLDER] [--json]``.

Trains headless with the training lab's engine, printing progress about 20
times per run (one JSON object per line with ``--json``), then the circuit
check, and saves the run to FOLDER when given (it opens in the model panels
and ``inspect``). Exit status: 0 success, 2 a bad argument or config (one
line on stderr), 1 any other failure (an unusable --out, a failed save, an
interrupt: what was trained is still saved).
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..config import ConfigError
from .config import TrainConfig
from .run_folder import RunFolderError, check_target
from .trainer import ProbeSnapshot, Trainer, TrainStep, first_reached

_MAX_CONFIG_BYTES = 1 << 20


class UsageError(ValueError):
    """A bad argument: exit status 2."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] if text else type(exc).__name__


def read_config_file(path: str) -> dict:
    """The JSON object in ``path`` (TrainConfig fields), or UsageError saying why not. Only a
    regular file is read (opened without blocking: a FIFO swapped in is refused, never waited on)."""
    p = Path(path).expanduser()
    try:
        if not os.path.lexists(p):
            raise UsageError(f"--config {path}: no such file")
        if not p.is_file():
            raise UsageError(f"--config {path}: {_not_regular(p)}, not a regular file")
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise UsageError(f"--config {path}: not a regular file")
            raw = fh.read(_MAX_CONFIG_BYTES + 1)
        if len(raw) > _MAX_CONFIG_BYTES:
            raise UsageError(f"--config {path}: larger than 1 MiB, not a training config")
        d = json.loads(raw.decode("utf-8"))
    except UsageError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"--config {path}: not a readable JSON file ({_one_line(exc)[:120]})") from None
    if isinstance(d, dict) and set(d) == {"config"} and isinstance(d["config"], dict):
        d = d["config"]  # a training_run.json-like wrapper
    if not isinstance(d, dict):
        raise UsageError(f"--config {path}: must hold a JSON object of training fields")
    return d


def _not_regular(p: Path) -> str:
    """What `p` is: "a folder", "a FIFO", "a device", "a socket" or "a broken link"."""
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return "a broken link"
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "something else"


def build_config(task: str | None, steps: int | None, seed: int | None, config_file: str | None) -> TrainConfig:
    """The TrainConfig of the command line: the file's fields, then --task/--steps/--seed."""
    d = read_config_file(config_file) if config_file else {}
    for key, value in (("task", task), ("steps", steps), ("seed", seed)):
        if value is not None:
            d[key] = value
    try:
        return TrainConfig.from_dict(d)
    except ConfigError as exc:
        raise UsageError(f"{'--config ' + config_file + ': ' if config_file else ''}{_one_line(exc)}") from None


def _best(a, layers: slice) -> float:
    part = a[layers]
    return float("nan") if part.size == 0 or not (part == part).any() else float(part[part == part].max())


def best_scores(scores: dict) -> tuple[float, float]:
    """(induction, previous_token): the best induction score of the layers after the first
    (of the only layer in a 1-layer model) and the best layer-0 previous-token score, rounded
    to 4 digits as a progress line has them (what `train` prints, and a heads-forming frame)."""
    later = slice(1, None) if scores["induction"].shape[0] > 1 else slice(None)
    return (round(_best(scores["induction"], later), 4), round(_best(scores["previous_token"], slice(0, 1)), 4))


def progress_record(s: TrainStep, rate: float) -> dict:
    """One JSON progress line: the step's numbers, the best scores, every head's scores."""
    induction, previous_token = best_scores(s.scores)
    return {
        "event": "step", "step": s.step, "loss": round(s.loss, 5),
        "loss_predictable": round(s.loss_predictable, 5), "lr": s.lr,
        "induction": induction,
        "previous_token": previous_token,
        "steps_per_s": round(rate, 1), "elapsed_s": round(s.elapsed_s, 3),
        "heads": {"induction": s.scores["induction"].astype(float).round(4).tolist(),
                  "previous_token": s.scores["previous_token"].astype(float).round(4).tolist(),
                  "entropy": s.entropy.astype(float).round(4).tolist()},
    }


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def train_command(task: str | None = None, steps: int | None = None, seed: int | None = None,
                  config_file: str | None = None, out_dir: str | None = None, as_json: bool = False,
                  out: TextIO | None = None, err: TextIO | None = None, *, snapshots: int = 0,
                  finish: Callable[[Trainer, list[ProbeSnapshot]], int] | None = None) -> int:
    """``snapshots`` > 0: keep the probe at step 0 and at that many evenly spaced steps after
    it (the last one included); ``finish(trainer, probes)`` then runs after the save and its
    exit status is the command's (the window half draws the heads forming from them: the
    ``--gif`` of ``python main.py train``)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err

    def emit(record: dict, text: str) -> None:
        print(json.dumps(_finite(record), allow_nan=False) if as_json else text, file=out, flush=True)

    try:
        config = build_config(task, steps, seed, config_file)
    except UsageError as exc:
        print(f"attention-explorer train: error: {exc}", file=err)
        return 2
    if out_dir is not None:
        try:
            check_target(Path(out_dir))
        except RunFolderError as exc:
            print(f"attention-explorer train: {_one_line(exc)}", file=err)
            return 1
    trainer = Trainer(config)
    emit({"event": "start", "config": config.to_dict(), "parameters": trainer.model.n_params()},
         f"training {config.summary()} · {trainer.model.n_params():,} parameters · {config.steps} steps")
    every = max(1, config.steps // 20)
    probe_at = _probe_steps(config.steps, snapshots)
    probes: list[ProbeSnapshot] = [trainer.probe()] if snapshots > 0 else []
    interrupted = False
    t0 = time.perf_counter()
    try:
        while trainer.steps_done < config.steps:
            done = trainer.steps_done
            nxt = min(done + every - done % every, config.steps)  # the next printed step
            n = min(nxt, min((p for p in probe_at if p > done), default=nxt)) - done
            s = trainer.step(n)[-1]
            if trainer.steps_done in probe_at:
                probes.append(trainer.probe())
            if trainer.steps_done % every and trainer.steps_done < config.steps:
                continue
            rate = trainer.steps_done / max(1e-9, time.perf_counter() - t0)
            rec = progress_record(s, rate)
            emit(rec, f"step {s.step:>6}  loss {s.loss:.3f}  predictable {s.loss_predictable:.3f}  "
                      f"induction {rec['induction']:.2f}  prev-token {rec['previous_token']:.2f}  "
                      f"lr {s.lr:.2g}  {rate:.0f} steps/s")
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - t0
    hit = first_reached(trainer.history)
    check = trainer.check_circuit()
    emit({"event": "done", "steps": trainer.steps_done, "seconds": round(seconds, 3),
          "steps_per_s": round(trainer.steps_done / max(seconds, 1e-9), 1),
          "induction_step": hit.step if hit else None,
          "induction_seconds": round(hit.elapsed_s, 3) if hit else None,
          "circuit": check.verdict, "message": check.message, "interrupted": interrupted},
         f"{'interrupted after' if interrupted else 'done:'} {trainer.steps_done} steps in {seconds:.1f} s "
         f"({trainer.steps_done / max(seconds, 1e-9):.0f} steps/s); "
         + (f"induction head (score > 0.5, prev-token > 0.3) at step {hit.step}, {hit.elapsed_s:.1f} s; "
            if hit else "no induction head (score > 0.5) yet; ") + check.message)
    if out_dir is not None:
        try:
            path = trainer.save(out_dir)
        except RunFolderError as exc:
            print(f"attention-explorer train: {_one_line(exc)}", file=err)
            return 1
        emit({"event": "saved", "out": str(path)}, f"saved the run to {path}")
    if interrupted:
        print("attention-explorer train: interrupted", file=err)
        return 1
    if finish is not None:
        return finish(trainer, probes)
    return 0


def _probe_steps(steps: int, n: int) -> set[int]:
    """The steps after step 0 at which ``n`` evenly spaced probes are kept (``steps`` last)."""
    if n <= 0:
        return set()
    return {round(steps * (i + 1) / n) for i in range(n)} - {0}
