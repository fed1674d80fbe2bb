"""The training lab's benchmarks (issue 17), bare (no window): ``python main.py bench --train``.

- ``throughput``: steps/s of the default config on 1 torch thread (what the lab uses) and
  on 2, and the cost of one ``probe()`` (what a 10 Hz display adds per snapshot);
- ``induction``: per seed, the first step and the training seconds at which the best
  layer-1 induction score > 0.5 and the best layer-0 previous-token score > 0.3, and the
  circuit check at the end;
- ``warmup`` and ``scale``: the contrast experiments, each with its numbers.

``bench_training(quick)`` returns a JSON-safe dict; ``format_training`` makes it a table.
"""

from __future__ import annotations

import math
import time

from .config import TrainConfig
from .trainer import Trainer, first_reached, torch_threads

INDUCTION_STEP_LIMIT = 1000


def steps_per_second(config: TrainConfig, steps: int, threads: int = 1) -> float:
    tr = Trainer(config, threads=threads)
    tr.step(5)  # warm-up: first-call allocations
    t = time.perf_counter()
    tr.step(steps)
    return steps / (time.perf_counter() - t)


def probe_ms(trainer: Trainer, repeats: int = 20) -> float:
    trainer.probe()
    t = time.perf_counter()
    for _ in range(repeats):
        trainer.probe()
    return (time.perf_counter() - t) / repeats * 1e3


def time_to_induction(config: TrainConfig, limit: int = INDUCTION_STEP_LIMIT) -> dict:
    """Train ``config`` in chunks of 25 steps until the induction milestone or ``limit``."""
    tr = Trainer(config)
    t = time.perf_counter()
    while tr.steps_done < limit and first_reached(tr.history) is None:
        tr.step(25)
    wall = time.perf_counter() - t
    hit = first_reached(tr.history)
    check = tr.check_circuit()
    return {"seed": config.seed, "step": hit.step if hit else None,
            "seconds": round(hit.elapsed_s, 2) if hit else None,
            "steps_per_s": round(tr.steps_done / wall, 1), "circuit": check.verdict,
            "loss_predictable": round(check.loss_predictable, 3),
            "loss_unseen_prefix": None if check.loss_predictable_unseen is None
            else round(check.loss_predictable_unseen, 3)}


def warmup_contrast(steps: int = 300, seed: int = 0) -> dict:
    """Pre-LN at lr 1e-2, no warmup vs 200 warmup steps, same seed."""
    rows = {}
    for name, warmup in (("no_warmup", 0), ("warmup_200", 200)):
        tr = Trainer(TrainConfig(norm="pre", lr=1e-2, warmup_steps=warmup, seed=seed))
        t = time.perf_counter()
        tr.step(steps)
        s = tr.history[-1]
        rows[name] = {"seconds": round(time.perf_counter() - t, 2), "loss": round(s.loss, 3),
                      "loss_predictable": round(s.loss_predictable, 3),
                      "layer0_entropy_norm_min": round(float(s.entropy_norm[0].min()), 3),
                      "max_logit": round(float(s.max_logit.max()), 1)}
    return {"config": f"pre-LN lr 1e-2, {steps} steps, seed {seed}; ln 48 = {math.log(48):.2f}", **rows}


def scale_contrast(steps: int = 500, seed: int = 0) -> dict:
    """1/√d_head vs no scaling (init std 0.1): saturation at the start, loss after ``steps``."""
    rows = {}
    for name, scale in (("sqrt", "sqrt"), ("none", "none")):
        tr = Trainer(TrainConfig(scale=scale, seed=seed))
        p = tr.probe()
        tr.step(steps)
        rows[name] = {"start_max_weight": p.max_weight.astype(float).round(3).tolist(),
                      "start_entropy_norm": p.entropy_norm.astype(float).round(3).tolist(),
                      "loss_predictable": round(tr.history[-1].loss_predictable, 3)}
    return {"config": f"defaults (post-LN, init std 0.1), {steps} steps, seed {seed}", **rows}


def bench_training(quick: bool = False) -> dict:
    c = TrainConfig()
    n = 40 if quick else 200
    with torch_threads(None):
        tr = Trainer(c)
        tr.step(50)
        out = {
            "config": c.summary(),
            "throughput": {"steps_per_s_1_thread": round(steps_per_second(c, n, 1), 1),
                           "steps_per_s_2_threads": round(steps_per_second(c, n, 2), 1),
                           "probe_ms": round(probe_ms(tr), 2)},
            "induction": [time_to_induction(c.replace(seed=s)) for s in (range(1) if quick else range(8))],
        }
        if not quick:
            out["warmup"] = warmup_contrast()
            out["scale"] = scale_contrast()
    return out


def format_training(r: dict) -> str:
    th = r["throughput"]
    lines = [f"training lab, bare ({r['config']})",
             f"  {th['steps_per_s_1_thread']:.0f} steps/s on 1 thread, {th['steps_per_s_2_threads']:.0f} on 2;"
             f" probe() {th['probe_ms']:.1f} ms",
             "  seed  induction at step  seconds  steps/s  circuit    loss(pred)  loss(unseen L)"]
    for row in r["induction"]:
        step = "—" if row["step"] is None else str(row["step"])
        secs = "—" if row["seconds"] is None else f"{row['seconds']:.1f}"
        lines.append(f"  {row['seed']:>4}  {step:>17}  {secs:>7}  {row['steps_per_s']:>7.0f}  {row['circuit']:<9}"
                     f"  {row['loss_predictable']:>10.3f}  {row['loss_unseen_prefix']}")
    for key in ("warmup", "scale"):
        if key in r:
            lines.append(f"  {key}: {r[key]}")
    return "\n".join(lines)


def bench_command(as_json: bool = False, quick: bool = False) -> int:
    """``python main.py bench --train [--json] [--quick]``."""
    import json

    r = bench_training(quick)
    print(json.dumps(r, indent=2) if as_json else format_training(r), flush=True)
    return 0
