"""`python main.py bench [--json] [--quick] [--soak N | --monkey N [--seed S]]`: the window's
latency (`window`), the A/B compare (`compare`), the first frame of a long context, the engine's
and the models' benchmarks, the efficient variants at S = 65,536 (`efficient`, engine.bench; alone:
`python -m engine.bench efficient`) and the step-throughs'; `--soak N` runs only the soak (`soak`),
`--monkey N` only the monkey (`monkey`: random user actions; tracebacks, crashes, hangs).

Targets (issue 3): default config median ≤ 16.7 ms, p95 ≤ 33 ms; S=256, H=16, d_model=1024
median ≤ 100 ms.
"""

from __future__ import annotations

import json
import os
import platform
import sys

from .compare import compare_benchmarks, ratio_line
from .soak import soak_command
from .window import (
    LONG_FIRST_FRAME_S,
    LONG_STALL_MS,
    TARGETS_MS,
    long_first_frame,
    measure_window,
    scenarios,
    shown_bench_window,
)


def window_benchmarks(quick: bool = False) -> list[dict]:
    """Latency rows for every scenario, through a real window shown offscreen."""
    _app, window = shown_bench_window()
    rows = []
    try:
        for sc in scenarios():
            n = {"default": 20, "large": 10, "long": 4}[sc.size] if quick else \
                {"default": 50, "large": 30, "long": 10}[sc.size]
            rows.append(measure_window(window, sc, n))
        # issue 18: a reference pinned and the difference shown, beside the plain toggle
        rows += compare_benchmarks(window, 20 if quick else 60)
    finally:
        window.close()
        window.shutdown()
    for row in rows:
        row.pop("samples_ms", None)
    return rows


def _optional(modname: str, fn: str, **kw):
    """Call modname.fn(**kw) if that module exists; None when it does not."""
    import importlib

    try:
        mod = importlib.import_module(modname)
    except ImportError:
        return None
    try:
        return getattr(mod, fn)(**kw)
    except Exception as exc:  # report, do not fail the whole bench
        return {"error": f"{type(exc).__name__}: {exc}"}


def _efficient_table(res: dict) -> str:
    from engine.bench import efficient_table

    return efficient_table(res)


def verdict(row: dict) -> str:
    t = TARGETS_MS[row["size"]]
    ok = all(row["latency_ms"][k] <= v for k, v in t.items())
    return "ok" if ok else "MISSED"


def format_table(rows: list[dict]) -> str:
    head = (f"{'scenario':<48} {'n':>3}  {'latency med':>11} {'p95':>7}  {'compute med':>11} "
            f"{'render med':>10}  {'wall/change':>11}  target")
    lines = [head, "-" * len(head)]
    for r in rows:
        t = TARGETS_MS[r["size"]]
        target = " ".join(f"{k}≤{v:g}" for k, v in t.items())
        lines.append(
            f"{r['scenario']:<48} {r['n']:>3}  {r['latency_ms']['median']:>9.1f}ms {r['latency_ms']['p95']:>5.1f}ms"
            f"  {r['compute_ms']['median']:>9.1f}ms {r['render_ms']['median']:>8.1f}ms"
            f"  {r['wall_ms_per_change']:>9.1f}ms  {target} {verdict(r)}")
    return "\n".join(lines)


def bench_command(args) -> int:
    quick = bool(getattr(args, "quick", False))
    as_json = bool(getattr(args, "json", False))
    if getattr(args, "soak", None) is not None:
        return soak_command(args.soak, int(getattr(args, "seed", 0) or 0), as_json)
    if getattr(args, "monkey", None) is not None:
        from .monkey import monkey_command

        return monkey_command(args.monkey, int(getattr(args, "seed", 0) or 0), as_json)
    import torch

    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "qpa": os.environ.get("QT_QPA_PLATFORM", ""),
            "qt_paint_threads": "QT_NO_GUI_THREADPOOL" not in os.environ}
    rows = window_benchmarks(quick)
    long_res = long_first_frame(n_heads=4 if quick else 16)
    engine_res = _optional("engine.bench", "engine_benchmarks", quick=quick)
    efficient_res = _optional("engine.bench", "efficient_benchmarks", quick=quick)
    steps_res = _optional("explorer.bench.stepthrough", "stepthrough_benchmarks", quick=quick)
    models_res = _optional("engine.models.bench", "bench_inspect")
    if as_json:
        print(json.dumps({"machine": info, "window": rows, "long_first_frame": long_res, "engine": engine_res,
                          "efficient": efficient_res, "stepthrough": steps_res, "models": models_res}, indent=2, default=str))
        return 0
    print(f"Attention Explorer bench · {info['platform']} · {info['cpu_count']} CPUs · torch "
          f"{info['torch']} ({info['torch_threads']} threads) · QPA {info['qpa'] or 'default'} · "
          f"Qt paint threads {'on' if info['qt_paint_threads'] else 'off'}")
    print("\nset_config → frame_rendered through the window (1600×1000, all panels visible)")
    print(format_table(rows))

    if ratio_line(rows):
        print(ratio_line(rows))
    lf = long_res
    first = "no frame" if lf["first_frame_s"] is None else f"{lf['first_frame_s']:.1f} s"
    print(f"\nlong context in the window ({lf['config']}): first complete frame {first} "
          f"(target ≤ {LONG_FIRST_FRAME_S:g} s), {lf['progress_reports']} progress reports, longest event-loop "
          f"stall {lf['max_stall_ms']:.0f} ms (target ≤ {LONG_STALL_MS:g} ms) {lf['verdict']}")
    if efficient_res is not None:
        print()
        print(json.dumps(efficient_res, default=str) if "error" in efficient_res else _efficient_table(efficient_res))
    for title, res in (("engine.bench", engine_res), ("explorer.bench.stepthrough (tiling / decode frames)", steps_res),
                       ("engine.models.bench", models_res)):
        if res is None:
            print(f"\n{title}: not available in this build")
        else:
            print(f"\n{title}:")
            print(json.dumps(res, indent=2, default=str) if not isinstance(res, str) else res)
    sys.stdout.flush()
    return 0
