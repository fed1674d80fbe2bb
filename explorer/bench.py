"""`python main.py bench [--json] [--quick]`: latency through the real window, offscreen.

For each scenario the window (1600×1000, every panel visible) alternates
between two configs; each change is timed from `set_config` to
`frame_rendered` (compute in the worker thread + update and synchronous
repaint of the visible panels). We report the median and p95 of that latency
and of its two parts, plus the wall time per change of the whole loop (which
also counts the event processing between changes).

Targets (issue 3): default config median ≤ 16.7 ms, p95 ≤ 33 ms;
S=256, H=16, d_model=1024 median ≤ 100 ms.

The engine's own benchmarks (engine.bench.engine_benchmarks) and the model
benchmarks (engine.models.bench.bench_inspect) are included when present.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass

from engine import AttentionConfig

TARGETS_MS = {"default": {"median": 16.7, "p95": 33.0}, "large": {"median": 100.0}}


@dataclass(frozen=True)
class Scenario:
    name: str
    size: str  # "default" or "large": which target applies
    a: AttentionConfig
    b: AttentionConfig
    what: str


def scenarios() -> list[Scenario]:
    d = AttentionConfig()
    big = AttentionConfig(seq_len=256, n_heads=16, d_model=1024)
    return [
        Scenario("default: toggle causal", "default", d, d.replace(causal=True), "same shapes"),
        Scenario("default: drag seq_len 8↔9", "default", d, d.replace(seq_len=9), "shapes change"),
        Scenario("S=256 H=16 d=1024: toggle causal", "large", big, big.replace(causal=True), "same shapes"),
        Scenario("S=256 H=16 d=1024: seq_len 256↔255", "large", big, big.replace(seq_len=255), "shapes change"),
    ]


def _percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs) if xs else float("nan"), "p95": _percentile(xs, 0.95),
            "min": min(xs) if xs else float("nan"), "max": max(xs) if xs else float("nan")}


def measure_window(window, sc: Scenario, n: int, warmup: int = 4, timeout_s: float = 30.0) -> dict:
    """Alternate sc.a / sc.b n times through window.set_config; time each until frame_rendered."""
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    latency, compute, render = [], [], []
    state = {"want": None, "done": False}
    loop = QEventLoop()

    def on_rendered(cfg) -> None:
        if cfg == state["want"]:
            state["done"] = True
            loop.quit()

    window.frame_rendered.connect(on_rendered)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    t_start = time.perf_counter()
    try:
        for i in range(warmup + n):
            cfg = sc.b if i % 2 == 0 else sc.a
            state.update(want=cfg, done=False)
            t0 = time.perf_counter()
            window.set_config(cfg)
            if not state["done"]:
                timer.start(int(timeout_s * 1000))
                loop.exec()
                timer.stop()
            t1 = time.perf_counter()
            if not state["done"]:
                raise RuntimeError(f"{sc.name}: no frame within {timeout_s:.0f} s")
            if i == warmup - 1:
                t_start = time.perf_counter()
            if i >= warmup:
                latency.append((t1 - t0) * 1e3)
                compute.append(window.frame.compute_ms)
                render.append(window.render_ms)
            app.processEvents()  # let the deferred repaints and idle work run, as a user's loop would
        wall = (time.perf_counter() - t_start) * 1e3 / max(n, 1)
    finally:
        window.frame_rendered.disconnect(on_rendered)
    return {"scenario": sc.name, "size": sc.size, "what": sc.what, "n": n,
            "latency_ms": _stats(latency), "compute_ms": _stats(compute), "render_ms": _stats(render),
            "wall_ms_per_change": wall}


def window_benchmarks(quick: bool = False) -> list[dict]:
    """Latency rows for every scenario, through a real window shown offscreen."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from . import create_window, ensure_app

    app = ensure_app()
    window = create_window()
    window.resize(1600, 1000)
    window.show()
    for _ in range(5):
        app.processEvents()
    rows = []
    try:
        for sc in scenarios():
            n = (10 if sc.size == "large" else 20) if quick else (30 if sc.size == "large" else 50)
            rows.append(measure_window(window, sc, n))
    finally:
        window.close()
        window.shutdown()
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


def verdict(row: dict) -> str:
    t = TARGETS_MS[row["size"]]
    ok = all(row["latency_ms"][k] <= v for k, v in t.items())
    return "ok" if ok else "MISSED"


def format_table(rows: list[dict]) -> str:
    head = (f"{'scenario':<38} {'n':>3}  {'latency med':>11} {'p95':>7}  {'compute med':>11} "
            f"{'render med':>10}  {'wall/change':>11}  target")
    lines = [head, "-" * len(head)]
    for r in rows:
        t = TARGETS_MS[r["size"]]
        target = " ".join(f"{k}≤{v:g}" for k, v in t.items())
        lines.append(
            f"{r['scenario']:<38} {r['n']:>3}  {r['latency_ms']['median']:>9.1f}ms {r['latency_ms']['p95']:>5.1f}ms"
            f"  {r['compute_ms']['median']:>9.1f}ms {r['render_ms']['median']:>8.1f}ms"
            f"  {r['wall_ms_per_change']:>9.1f}ms  {target} {verdict(r)}")
    return "\n".join(lines)


def bench_command(args) -> int:
    quick = bool(getattr(args, "quick", False))
    as_json = bool(getattr(args, "json", False))
    import torch

    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "qpa": os.environ.get("QT_QPA_PLATFORM", ""),
            "qt_paint_threads": "QT_NO_GUI_THREADPOOL" not in os.environ}
    rows = window_benchmarks(quick)
    engine_res = _optional("engine.bench", "engine_benchmarks", quick=quick)
    models_res = _optional("engine.models.bench", "bench_inspect")
    if as_json:
        print(json.dumps({"machine": info, "window": rows, "engine": engine_res, "models": models_res},
                         indent=2, default=str))
        return 0
    print(f"Attention Explorer bench · {info['platform']} · {info['cpu_count']} CPUs · torch "
          f"{info['torch']} ({info['torch_threads']} threads) · QPA {info['qpa'] or 'default'} · "
          f"Qt paint threads {'on' if info['qt_paint_threads'] else 'off'}")
    print("\nset_config → frame_rendered through the window (1600×1000, all panels visible)")
    print(format_table(rows))
    for title, res in (("engine.bench", engine_res), ("engine.models.bench", models_res)):
        if res is None:
            print(f"\n{title}: not available in this build")
        else:
            print(f"\n{title}:")
            print(json.dumps(res, indent=2, default=str) if not isinstance(res, str) else res)
    sys.stdout.flush()
    return 0
