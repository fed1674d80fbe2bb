"""`python main.py bench [--json] [--quick] [--soak N [--seed S]]`: latency through the real window, offscreen.

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

`--soak N` (issue 19) runs only the soak instead: N random config changes and
clicks in one window, RSS at every 10 %, latency median/p95/max, exceptions
(see `soak`). Goals: RSS growth ≤ 50 MB per 1,000 changes after warm-up, max
frame ≤ 2 s, no exception. Exit status 1 when an exception was counted.
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

TARGETS_MS = {"default": {"median": 16.7, "p95": 33.0}, "large": {"median": 100.0}, "long": {"median": 150.0}}
#: issue 16: the first complete frame at S=8192 (flash), and the longest the event loop may stall meanwhile
LONG_FIRST_FRAME_S = 3.0
LONG_STALL_MS = 50.0


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
    long = AttentionConfig(seq_len=1024, n_heads=16, d_model=1024, backend="flash")
    return [
        Scenario("default: toggle causal", "default", d, d.replace(causal=True), "same shapes"),
        Scenario("default: drag seq_len 8↔9", "default", d, d.replace(seq_len=9), "shapes change"),
        Scenario("S=256 H=16 d=1024: toggle causal", "large", big, big.replace(causal=True), "same shapes"),
        Scenario("S=256 H=16 d=1024: seq_len 256↔255", "large", big, big.replace(seq_len=255), "shapes change"),
        Scenario("S=1024 H=16 d=1024 flash: toggle causal", "long", long, long.replace(causal=True),
                 "level of detail"),
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
            "wall_ms_per_change": wall,
            "samples_ms": {"latency": latency, "compute": compute, "render": render}}


def shown_bench_window():
    """(app, window): the full window at 1600×1000, shown offscreen, its first events handled."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from . import create_window, ensure_app

    app = ensure_app()
    window = create_window()
    window.resize(1600, 1000)
    window.show()
    for _ in range(5):
        app.processEvents()
    return app, window


def window_benchmarks(quick: bool = False) -> list[dict]:
    """Latency rows for every scenario, through a real window shown offscreen."""
    _app, window = shown_bench_window()
    rows = []
    try:
        for sc in scenarios():
            n = {"default": 20, "large": 10, "long": 4}[sc.size] if quick else \
                {"default": 50, "large": 30, "long": 10}[sc.size]
            rows.append(measure_window(window, sc, n))
        from .compare_bench import compare_benchmarks

        # issue 18: a reference pinned and the difference shown, beside the plain toggle
        rows += compare_benchmarks(window, 20 if quick else 60)
    finally:
        window.close()
        window.shutdown()
    for row in rows:
        row.pop("samples_ms", None)
    return rows


def long_first_frame(seq_len: int = 8192, n_heads: int = 16, d_model: int = 1024) -> dict:
    """issue 16: set_config(S=8192, flash) → frame_rendered in a shown window: seconds to the
    first complete frame, the progress reports seen, and the longest event-loop stall meanwhile
    (a 10 ms timer's largest gap beyond its interval)."""
    from PySide6.QtCore import QEventLoop, QTimer

    _app, window = shown_bench_window()
    cfg = AttentionConfig(seq_len=seq_len, n_heads=n_heads, d_model=d_model, backend="flash")
    gaps, last = [], [time.perf_counter()]
    progress = []
    loop = QEventLoop()

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1e3 - 10.0)
        last[0] = now

    probe = QTimer()
    probe.setInterval(10)
    probe.timeout.connect(tick)
    window.frame_rendered.connect(lambda c: loop.quit() if c == cfg else None)
    window.worker.progress.connect(lambda _rid, done, total: progress.append((done, total)))
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    try:
        t0 = time.perf_counter()
        probe.start()
        window.set_config(cfg)
        guard.start(900_000)
        loop.exec()
        first = time.perf_counter() - t0
        probe.stop()
        done = window.frame is not None and window.frame.config == cfg
    finally:
        window.close()
        window.shutdown()
    stall = max(gaps) if gaps else float("nan")
    return {"config": cfg.summary(), "first_frame_s": first if done else None, "progress_reports": len(progress),
            "max_stall_ms": stall, "target_first_frame_s": LONG_FIRST_FRAME_S, "target_stall_ms": LONG_STALL_MS,
            "verdict": "ok" if done and first <= LONG_FIRST_FRAME_S and stall <= LONG_STALL_MS else "MISSED"}


# ---- the soak: many random changes and clicks in one window (issue 19) -------------------

#: Goals of the soak (issue 19): RSS growth after warm-up over 1,000 changes, the slowest
#: frame, and exceptions.
SOAK_GOALS = {"rss_growth_mb_per_1000": 50.0, "max_frame_ms": 2000.0, "exceptions": 0}
#: The soak's sequences stay interactive (a frame in well under a second); longer ones are
#: computed head by head with progress (long_first_frame measures those).
SOAK_SEQ_MAX = 512
#: Changes before the first RSS reading (caches, fonts and pyqtgraph items settle).
SOAK_WARMUP = 10
#: Longest wait for one frame before the soak counts a timeout and moves on.
SOAK_FRAME_TIMEOUT_S = 120.0
#: The config every RSS reading of the soak is taken at (besides the raw one), so that what
#: the current random config holds (its frame, its weights) is not counted as growth.
SOAK_READING_CONFIG = AttentionConfig()


def rss_mb() -> float:
    """Resident set size of this process in MiB (VmRSS of /proc/self/status; NaN elsewhere)."""
    return _proc_status_mb("VmRSS")


def _proc_status_mb(key: str) -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return float("nan")


def _log_int(rng, lo: int, hi: int) -> int:
    """An integer in [lo, hi], log-uniform: small sizes as often as large ones per octave."""
    import math

    if hi <= lo:
        return lo
    return min(hi, max(lo, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1))))))


def _log_choice(rng, values: list[int]) -> int:
    """One of `values` (sorted ascending), log-uniform in its magnitude."""
    v = _log_int(rng, values[0], values[-1])
    return min(values, key=lambda x: (abs(x - v), x))


SOAK_TOKENS = "the cat sat on the mat because the mat was warm and the cat was tired".split()


def random_change(rng, config: AttentionConfig) -> dict:
    """One control's worth of change to `config`: a field and a value the controls offer
    (explorer.constraints), sizes log-uniform over the controls' ranges."""
    from engine.config import BACKENDS, MASK_VALUES, MAX_SEED, POSITIONALS

    from . import constraints as C

    key_len = config.key_len
    field = rng.choice(["d_model", "n_heads", "n_kv_heads", "seq_len", "kv_len", "batch", "causal", "window",
                        "pad", "mask_value", "scale", "prescale_q", "dtype", "positional", "backend", "seed",
                        "init_std", "tokens", "device"])
    if field == "d_model":
        value = _log_choice(rng, C.allowed_d_models(config.n_heads, config.positional))
    elif field == "n_heads":
        value = _log_choice(rng, C.allowed_heads(config.d_model, config.positional))
    elif field == "n_kv_heads":
        value = rng.choice(C.allowed_kv_heads(config.n_heads))
    elif field == "seq_len":
        value = _log_int(rng, 1, min(C.SEQ_MAX, SOAK_SEQ_MAX))
    elif field == "kv_len":
        value = None if rng.random() < 0.5 else _log_int(rng, 1, min(C.KV_LEN_MAX, SOAK_SEQ_MAX))
    elif field == "batch":
        value = _log_int(rng, 1, C.BATCH_MAX)
    elif field in ("causal", "prescale_q"):
        value = not getattr(config, field)
    elif field == "window":
        value = None if rng.random() < 0.4 else rng.randint(1, max(1, key_len))
    elif field == "pad":
        value = 0 if rng.random() < 0.4 else rng.randint(0, key_len)
    elif field == "mask_value":
        value = rng.choice(MASK_VALUES)
    elif field == "scale":
        value = None if rng.random() < 0.4 else round(rng.uniform(*C.SCALE_RANGE), 3)
    elif field == "dtype":
        value = rng.choice(["float32", "float16", "bfloat16"])
    elif field == "positional":
        value = rng.choice(POSITIONALS)
    elif field == "backend":
        value = rng.choice(BACKENDS)
    elif field == "seed":
        value = rng.randint(0, 9) if rng.random() < 0.7 else rng.randint(0, MAX_SEED)
    elif field == "init_std":
        value = None if rng.random() < 0.4 else round(_log_uniform(rng, *C.INIT_STD_RANGE), 3)
    elif field == "tokens":
        n = _log_int(rng, 1, len(SOAK_TOKENS))
        value = None if rng.random() < 0.3 else tuple(SOAK_TOKENS[:n])
    else:  # device: cuda is offered even without a GPU (the engine then refuses it)
        value = "cuda" if config.device == "cpu" and rng.random() < 0.3 else "cpu"
    return {field: value}


def _log_uniform(rng, lo: float, hi: float) -> float:
    import math

    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def random_config(rng, base: AttentionConfig | None = None, changes: int | None = None) -> AttentionConfig:
    """`base` (default: the default config) after 1-6 random control changes, each through
    constraints.coerce as the controls do; a change the constraints refuse is skipped."""
    from engine import ConfigError

    from .constraints import coerce

    cfg = AttentionConfig() if base is None else base
    for _ in range(rng.randint(1, 6) if changes is None else changes):
        try:
            cfg = coerce(cfg, **random_change(rng, cfg))
        except ConfigError:
            continue
    return cfg


class _Hooks:
    """Count what would otherwise only be printed: exceptions in Qt slots (sys.excepthook),
    in threads (threading.excepthook), unraisable ones, and Qt's warnings."""

    def __init__(self) -> None:
        self.exceptions: list[str] = []
        self.qt_warnings: list[str] = []

    def __enter__(self):
        import threading

        from PySide6.QtCore import QtMsgType, qInstallMessageHandler

        self._saved = (sys.excepthook, threading.excepthook, sys.unraisablehook)

        def record(kind: str, exc_type, exc, tb) -> None:
            import traceback

            text = "".join(traceback.format_exception(exc_type, exc, tb))
            self.exceptions.append(f"{kind}: {text.strip().splitlines()[-1]}")
            print(f"soak: {kind} exception\n{text}", file=sys.stderr, flush=True)

        sys.excepthook = lambda t, e, tb: record("slot", t, e, tb)
        threading.excepthook = lambda a: record(f"thread {a.thread.name if a.thread else '?'}",
                                                a.exc_type, a.exc_value, a.exc_traceback)
        sys.unraisablehook = lambda u: record("unraisable", type(u.exc_value), u.exc_value, u.exc_traceback)
        warn_types = (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)

        def on_qt_message(mode, context, message) -> None:
            if mode in warn_types:
                self.qt_warnings.append(message)

        self._qt_saved = qInstallMessageHandler(on_qt_message)
        return self

    def __exit__(self, *exc) -> None:
        import threading

        from PySide6.QtCore import qInstallMessageHandler

        sys.excepthook, threading.excepthook, sys.unraisablehook = self._saved
        qInstallMessageHandler(self._qt_saved)


def soak(n: int, seed: int = 0, warmup: int = SOAK_WARMUP, frame_timeout_s: float = SOAK_FRAME_TIMEOUT_S,
         progress=None) -> dict:
    """`n` random changes in one offscreen window (1600×1000, every panel visible): ~40 %
    clicks (window.selection.set to a random cell and head), ~30 % one control changed
    (a field of the current config, through constraints.coerce) and ~30 % a fresh config
    (1-6 control changes from the default). A config change is timed from set_config to
    frame_rendered; a click from selection.set until the event loop is idle again. RSS
    (VmRSS) is read after the warm-up and at every 10 %: as it is (`rss_mb`, with whatever the
    random config of the moment holds) and then with the window at SOAK_READING_CONFIG, the
    garbage collected and the freed heap given back (`held_mb`, what the session holds: the
    growth is measured on it). The soak goes on from that config."""
    import gc
    import random

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer

    from engine import memory_estimate

    rng = random.Random(seed)
    app, window = shown_bench_window()

    state = {"want": None, "done": None}
    loop = QEventLoop()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)

    def on_rendered(cfg) -> None:
        if cfg == state["want"]:
            state["done"] = "frame"
            loop.quit()

    def on_failed(cfg, message) -> None:
        if cfg == state["want"]:
            state["done"] = "failed"
            state["message"] = message
            loop.quit()

    window.frame_rendered.connect(on_rendered)
    window.compute_failed.connect(on_failed)
    frames, clicks, rss, refused, timeouts, errors = [], [], [], [], [], []
    slow: list[tuple[float, str]] = []  # (ms, config) of every frame over the 2 s goal
    slowest: tuple[float, str] = (0.0, "")
    # the largest run since the last RSS reading: RSS that steps up with it and then stays
    # flat is the allocator keeping a high-water mark, growth without it is a leak
    interval = {"est_mb": 0.0, "config": ""}
    checkpoints = {max(1, round(n * i / 10)) for i in range(1, 11)} if n > 0 else set()
    t_start = time.perf_counter()

    def change_config(cfg: AttentionConfig) -> tuple[str, float]:
        state.update(want=cfg, done=None, message="")
        t0 = time.perf_counter()
        window.set_config(cfg)
        if state["done"] is None:
            timer.start(int(frame_timeout_s * 1000))
            loop.exec()
            timer.stop()
        ms = (time.perf_counter() - t0) * 1e3
        app.processEvents()
        return state["done"] or "timeout", ms

    def click() -> float:
        cfg = window.frame.config if window.frame is not None else window.config
        t0 = time.perf_counter()
        window.selection.set(rng.randrange(cfg.n_heads), rng.randrange(cfg.seq_len), rng.randrange(cfg.key_len))
        app.processEvents()
        return (time.perf_counter() - t0) * 1e3

    def held() -> float:
        """RSS with the window at SOAK_READING_CONFIG, once its frame is drawn and the worker
        idle, after gc and malloc_trim."""
        from engine.memory import release_free_memory

        if window.config != SOAK_READING_CONFIG or window.frame is None \
                or window.frame.config != SOAK_READING_CONFIG:
            change_config(SOAK_READING_CONFIG)
        until = time.perf_counter() + 0.5  # the backend comparison of that frame, if any
        while time.perf_counter() < until:
            app.processEvents()
            time.sleep(0.01)
        gc.collect()
        release_free_memory()
        return rss_mb()

    def step(i: int, measured: bool) -> None:
        nonlocal slowest
        r = rng.random()
        if r < 0.4 and window.frame is not None:
            ms = click()
            if measured:
                clicks.append(ms)
            return
        base = window.config if r < 0.7 else None
        cfg = random_config(rng, base, changes=1 if base is not None else None)
        outcome, ms = change_config(cfg)
        if not measured:
            return
        est = memory_estimate(cfg)["total"] / 2**20
        if est > interval["est_mb"]:
            interval.update(est_mb=est, config=describe(cfg))
        if outcome == "frame":
            frames.append(ms)
            if ms > slowest[0]:
                slowest = (ms, describe(cfg))
            if ms > SOAK_GOALS["max_frame_ms"]:
                slow.append((ms, describe(cfg)))
        elif outcome == "failed":
            msg = state.get("message", "")
            (errors if msg.startswith("the engine failed") else refused).append(f"{describe(cfg)}: {msg}"[:300])
        else:
            timeouts.append(describe(cfg))

    with _Hooks() as hooks:
        try:
            for i in range(warmup):
                step(i, measured=False)
            gc.collect()
            rss.append({"step": 0, "rss_mb": rss_mb(), "objects": len(gc.get_objects())})
            rss[-1]["held_mb"] = held()
            for i in range(1, n + 1):
                try:
                    step(i, measured=True)
                except Exception as exc:  # counted: the soak goes on
                    import traceback

                    hooks.exceptions.append(f"driver: {type(exc).__name__}: {exc}".splitlines()[0])
                    traceback.print_exc()
                if i in checkpoints:
                    rss.append({"step": i, "rss_mb": rss_mb(), "objects": len(gc.get_objects()),
                                "largest_run_mb": round(interval["est_mb"], 1),
                                "largest_run": interval["config"]})
                    rss[-1]["held_mb"] = held()
                    interval.update(est_mb=0.0, config="")
                    if progress is not None:
                        progress(rss[-1])
        finally:
            window.frame_rendered.disconnect(on_rendered)
            window.compute_failed.disconnect(on_failed)
            window.close()
            window.shutdown()
        app.processEvents()
    wall_s = time.perf_counter() - t_start
    trimmed = _malloc_trim()
    first, last = rss[0]["held_mb"], rss[-1]["held_mb"]
    growth = last - first
    per_1000 = growth * 1000 / n if n else float("nan")
    exceptions = hooks.exceptions + [f"engine: {e}" for e in errors]
    frame_stats, click_stats = _stats(frames), _stats(clicks)
    return {
        "n": n, "seed": seed, "warmup": warmup, "wall_s": wall_s,
        "config_changes": len(frames) + len(refused) + len(timeouts), "frames": len(frames),
        "clicks": len(clicks),
        "rss": rss, "rss_growth_mb": growth, "rss_growth_mb_per_1000": per_1000,
        "raw_rss_growth_mb": rss[-1]["rss_mb"] - rss[0]["rss_mb"],
        "rss_peak_mb": _proc_status_mb("VmHWM"), "rss_after_malloc_trim_mb": trimmed,
        "frame_ms": frame_stats, "click_ms": click_stats, "all_ms": _stats(frames + clicks),
        "frames_over_120ms": sum(ms > 120 for ms in frames), "frames_over_2s": sum(ms > 2000 for ms in frames),
        "slowest_frame": {"ms": slowest[0], "config": slowest[1]},
        "frames_over_2s_configs": [{"ms": round(ms, 1), "config": c} for ms, c in sorted(slow, reverse=True)[:10]],
        "exceptions": len(exceptions), "exception_messages": exceptions[:20],
        "refused": len(refused), "refused_messages": refused[:10],
        "timeouts": len(timeouts), "timeout_configs": timeouts[:10],
        "qt_warnings": len(hooks.qt_warnings), "qt_warning_messages": sorted(set(hooks.qt_warnings))[:10],
        "goals": SOAK_GOALS,
        "verdict": {
            "rss": "ok" if per_1000 <= SOAK_GOALS["rss_growth_mb_per_1000"] else "MISSED",
            "max_frame": "ok" if frame_stats["max"] <= SOAK_GOALS["max_frame_ms"] and not timeouts else "MISSED",
            "exceptions": "ok" if not exceptions else "MISSED",
        },
    }


def describe(config: AttentionConfig) -> str:
    """The fields of `config` that differ from the defaults, as k=v (for a soak's report)."""
    default = AttentionConfig().to_dict()
    d = config.to_dict()
    return ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"
                     for k, v in d.items() if v != default[k]) or "the default config"


def _malloc_trim() -> float | None:
    """RSS after glibc's malloc_trim(0) (memory freed but kept by the allocator); None off glibc."""
    from engine.memory import release_free_memory

    return rss_mb() if release_free_memory() else None


def format_soak(r: dict) -> str:
    def ms(st: dict) -> str:
        return f"{st['median']:8.1f} {st['p95']:8.1f} {st['max']:8.1f}"

    lines = [f"soak: {r['n']} random changes and clicks in one window (seed {r['seed']}, warm-up "
             f"{r['warmup']}), {r['wall_s']:.0f} s",
             f"{'step':>6} {'RSS MiB':>9} {'held MiB':>9} {'objects':>9}  largest run since the last reading "
             f"(engine estimate)"]
    for row in r["rss"]:
        big = f"  {row['largest_run_mb']:7.1f} MiB  {row['largest_run']}" if row.get("largest_run") else ""
        lines.append(f"{row['step']:>6} {row['rss_mb']:>9.1f} {row['held_mb']:>9.1f} {row['objects']:>9}{big}")
    g = r["goals"]
    lines.append(f"RSS growth after warm-up (held, at {describe(SOAK_READING_CONFIG)}): "
                 f"{r['rss_growth_mb']:+.1f} MiB over {r['n']} changes "
                 f"({r['rss_growth_mb_per_1000']:+.1f} per 1,000; goal ≤ {g['rss_growth_mb_per_1000']:g} "
                 f"per 1,000) {r['verdict']['rss']}; as read: {r['raw_rss_growth_mb']:+.1f} MiB; "
                 f"peak {r['rss_peak_mb']:.0f} MiB"
                 + (f"; after malloc_trim {r['rss_after_malloc_trim_mb']:.0f} MiB"
                    if r["rss_after_malloc_trim_mb"] is not None else ""))
    lines.append(f"{'latency ms':<16} {'n':>5} {'median':>8} {'p95':>8} {'max':>8}")
    lines.append(f"{'config → frame':<16} {r['frames']:>5} {ms(r['frame_ms'])}")
    lines.append(f"{'click':<16} {r['clicks']:>5} {ms(r['click_ms'])}")
    lines.append(f"{'all':<16} {'':>5} {ms(r['all_ms'])}")
    lines.append(f"frames over 120 ms: {r['frames_over_120ms']}, over 2 s: {r['frames_over_2s']} "
                 f"(goal: max ≤ {g['max_frame_ms']:g} ms) {r['verdict']['max_frame']}; slowest "
                 f"{r['slowest_frame']['ms']:.0f} ms: {r['slowest_frame']['config']}")
    lines.append(f"exceptions: {r['exceptions']} (goal 0) {r['verdict']['exceptions']}; refused by the "
                 f"engine: {r['refused']}; timeouts: {r['timeouts']}; Qt warnings: {r['qt_warnings']}")
    for row in r["frames_over_2s_configs"][:5]:
        lines.append(f"  over 2 s: {row['ms']:.0f} ms: {row['config']}")
    for key in ("exception_messages", "refused_messages", "timeout_configs", "qt_warning_messages"):
        for m in r[key][:5]:
            lines.append(f"  {key.split('_')[0]}: {m}")
    return "\n".join(lines)


def _finite(value):
    """`value` with NaN/inf floats (the stats of an empty list) as None: strict JSON."""
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def soak_command(n: int, seed: int, as_json: bool) -> int:
    def progress(row: dict) -> None:
        if not as_json:
            print(f"  … step {row['step']}: RSS {row['rss_mb']:.1f} MiB", file=sys.stderr, flush=True)

    result = soak(n, seed=seed, progress=progress)
    if as_json:
        print(json.dumps(_finite(result), indent=2, default=str))
    else:
        print(format_soak(result))
    sys.stdout.flush()
    return 1 if result["exceptions"] else 0


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
    import torch

    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "qpa": os.environ.get("QT_QPA_PLATFORM", ""),
            "qt_paint_threads": "QT_NO_GUI_THREADPOOL" not in os.environ}
    rows = window_benchmarks(quick)
    long_res = long_first_frame(n_heads=4 if quick else 16)
    engine_res = _optional("engine.bench", "engine_benchmarks", quick=quick)
    steps_res = _optional("explorer.stepthrough_bench", "stepthrough_benchmarks", quick=quick)
    models_res = _optional("engine.models.bench", "bench_inspect")
    if as_json:
        print(json.dumps({"machine": info, "window": rows, "long_first_frame": long_res, "engine": engine_res,
                          "stepthrough": steps_res, "models": models_res}, indent=2, default=str))
        return 0
    print(f"Attention Explorer bench · {info['platform']} · {info['cpu_count']} CPUs · torch "
          f"{info['torch']} ({info['torch_threads']} threads) · QPA {info['qpa'] or 'default'} · "
          f"Qt paint threads {'on' if info['qt_paint_threads'] else 'off'}")
    print("\nset_config → frame_rendered through the window (1600×1000, all panels visible)")
    print(format_table(rows))
    from .compare_bench import ratio_line

    if ratio_line(rows):
        print(ratio_line(rows))
    lf = long_res
    first = "no frame" if lf["first_frame_s"] is None else f"{lf['first_frame_s']:.1f} s"
    print(f"\nlong context in the window ({lf['config']}): first complete frame {first} "
          f"(target ≤ {LONG_FIRST_FRAME_S:g} s), {lf['progress_reports']} progress reports, longest event-loop "
          f"stall {lf['max_stall_ms']:.0f} ms (target ≤ {LONG_STALL_MS:g} ms) {lf['verdict']}")
    for title, res in (("engine.bench", engine_res), ("explorer.stepthrough_bench (tiling / decode frames)", steps_res),
                       ("engine.models.bench", models_res)):
        if res is None:
            print(f"\n{title}: not available in this build")
        else:
            print(f"\n{title}:")
            print(json.dumps(res, indent=2, default=str) if not isinstance(res, str) else res)
    sys.stdout.flush()
    return 0
