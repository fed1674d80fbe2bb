"""`python main.py bench --soak N [--seed S]` (issues 19 and 28): N random config changes and
clicks in one window (over half of the runs in float16 or bfloat16, seeds changed as a class
does), RSS at every 10 %, latency median/p95/max, exceptions (see `soak`). Goals: RSS growth
≤ 50 MB per 1,000 changes after warm-up, max frame ≤ 2 s, no exception. Exit status 1 when an
exception was counted.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

from engine import AttentionConfig

from .window import shown_bench_window, stats

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
#: What a step of the soak is, and how often (a class at the sliders, issue 28): a click; the
#: current config in another precision (float16 and bfloat16 are over half of the runs, whose
#: kernels and caches float32 alone never touches) or with another seed (new weights, same
#: shapes); one other control changed; a fresh config (1-6 control changes from the default).
SOAK_MIX = (("click", 0.35), ("dtype", 0.15), ("seed", 0.10), ("control", 0.20), ("fresh", 0.20))
#: a fresh config is in float16 or bfloat16 this often (the precision is a control a class tries)
SOAK_REDUCED_PRECISION = 0.5


def bounded_holders(window) -> dict:
    """What the session's bounded holders hold now (issue 46, item 12: the Python objects a
    soak adds, ~8 per change over its first hundreds, are these filling up; each stops at
    its bound, shown in the soak's `bounds`): the engine's weight cache in MiB (the latest
    weights and at most WEIGHT_CACHE_OLDER_BYTES of earlier ones: engine.inputs), the undo
    history's steps (UNDO_LIMIT: explorer.history) and the parsed titles
    (TITLE_CACHE_SIZE: explorer.figures.text)."""
    from engine.inputs import WEIGHT_CACHE

    from ..figures.text import parse_runs

    return {"weight_cache_mb": WEIGHT_CACHE.nbytes / 2**20, "undo_steps": window.undo_stack.count(),
            "title_cache": parse_runs.cache_info().currsize}


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
    import explorer.constraints as C
    from engine.config import BACKENDS, MASK_VALUES, MAX_SEED, POSITIONALS

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

    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def random_config(rng, base: AttentionConfig | None = None, changes: int | None = None) -> AttentionConfig:
    """`base` (default: the default config) after 1-6 random control changes, each through
    constraints.coerce as the controls do; a change the constraints refuse is skipped."""
    from engine import ConfigError

    from ..constraints import coerce

    cfg = AttentionConfig() if base is None else base
    for _ in range(rng.randint(1, 6) if changes is None else changes):
        try:
            cfg = coerce(cfg, **random_change(rng, cfg))
        except ConfigError:
            continue
    return cfg


def soak_step(rng) -> str:
    """One of SOAK_MIX's kinds, drawn by its weight."""
    r, total = rng.random(), 0.0
    for kind, weight in SOAK_MIX:
        total += weight
        if r < total:
            return kind
    return SOAK_MIX[-1][0]


def soak_config(rng, kind: str, config: AttentionConfig) -> AttentionConfig:
    """The next config of a soak step of `kind` ("dtype", "seed", "control" or "fresh") from
    the current `config`, through constraints.coerce as the controls do (a change they refuse
    leaves the config as it is)."""
    from engine import ConfigError
    from engine.config import MAX_SEED

    from ..constraints import coerce

    change: dict = {}
    if kind == "dtype":
        change = {"dtype": rng.choice([d for d in ("float32", "float16", "bfloat16") if d != config.dtype])}
    elif kind == "seed":
        change = {"seed": rng.randint(0, 99) if rng.random() < 0.8 else rng.randint(0, MAX_SEED)}
    elif kind == "control":
        return random_config(rng, config, changes=1)
    else:
        config = random_config(rng)
        if rng.random() < SOAK_REDUCED_PRECISION:
            change = {"dtype": rng.choice(["float16", "bfloat16"])}
    try:
        return coerce(config, **change) if change else config
    except ConfigError:
        return config


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
    """`n` random changes in one offscreen window (1600×1000, every panel visible), drawn
    from SOAK_MIX: ~35 % clicks (window.selection.set to a random cell and head), ~15 % the
    current config in another precision, ~10 % another seed, ~20 % one other control changed
    (a field of the current config, through constraints.coerce) and ~20 % a fresh config
    (1-6 control changes from the default, half of them in float16 or bfloat16): over
    half of the runs are in reduced precision. A config change is timed from set_config to
    frame_rendered; a click from selection.set until the event loop is idle again. RSS
    (VmRSS) is read after the warm-up and at every 10 %: as it is (`rss_mb`, with whatever the
    random config of the moment holds) and then with the window at SOAK_READING_CONFIG, the
    garbage collected and the freed heap given back (`held_mb`, what the session holds). The
    soak goes on from that config.

    At each reading, what the bounded holders hold (`bounded_holders`): the growth
    (`rss_growth_mb`, its verdict) is that of `session_mb`, held_mb less the engine's weight
    cache, which fills up to its bound as configs come and go (0-16 MiB of earlier weights
    at a reading: the whole swing between seed 29's readings); `held_growth_mb` counts it."""
    import gc
    import random

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer

    from engine import memory_estimate
    from engine.inputs import WEIGHT_CACHE_BYTES, WEIGHT_CACHE_OLDER_BYTES

    from ..figures.text import TITLE_CACHE_SIZE
    from ..history import UNDO_LIMIT

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
    unchanged = [0]  # config steps whose change the constraints refused (no new frame)
    mix = {kind: 0 for kind, _w in SOAK_MIX if kind != "click"}  # config changes of each kind
    dtypes: dict[str, int] = {}  # config changes into each precision
    slow: list[tuple[float, str]] = []  # (ms, config) of every frame over the 2 s goal
    slowest: tuple[float, str] = (0.0, "")
    # the largest run since the last RSS reading: RSS that steps up with it and then stays
    # flat is the allocator keeping a high-water mark, growth without it is a leak
    interval = {"est_mb": 0.0, "config": ""}
    checkpoints = {max(1, round(n * i / 10)) for i in range(1, 11)} if n > 0 else set()
    t_start = time.perf_counter()

    def change_config(cfg: AttentionConfig) -> tuple[str, float]:
        if cfg == window.config and window.frame is not None and window.frame.config == cfg:
            # a change the constraints refused: the window shows this config already and
            # draws no new frame (waiting for one was a 120 s timeout)
            return "unchanged", 0.0
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

    def held() -> dict:
        """RSS with the window at SOAK_READING_CONFIG, once its frame is drawn and the worker
        idle, after gc and malloc_trim (`held_mb`), and what the bounded holders hold then
        (see `bounded_holders`); `session_mb`: held_mb less the engine's weight cache."""
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
        held_mb = rss_mb()
        holders = bounded_holders(window)
        return {"held_mb": held_mb, **holders, "session_mb": held_mb - holders["weight_cache_mb"]}

    def step(i: int, measured: bool) -> None:
        nonlocal slowest
        kind = soak_step(rng)
        if kind == "click" and window.frame is not None:
            ms = click()
            if measured:
                clicks.append(ms)
            return
        cfg = soak_config(rng, "fresh" if kind == "click" else kind, window.config)
        outcome, ms = change_config(cfg)
        if not measured:
            return
        if outcome == "unchanged":
            unchanged[0] += 1
            return
        mix[kind if kind != "click" else "fresh"] += 1
        dtypes[cfg.dtype] = dtypes.get(cfg.dtype, 0) + 1
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
            rss[-1].update(held())
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
                    rss[-1].update(held())
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
    first, last = rss[0]["session_mb"], rss[-1]["session_mb"]
    growth = last - first
    per_1000 = growth * 1000 / n if n else float("nan")
    exceptions = hooks.exceptions + [f"engine: {e}" for e in errors]
    frame_stats, click_stats = stats(frames), stats(clicks)
    return {
        "n": n, "seed": seed, "warmup": warmup, "wall_s": wall_s,
        "config_changes": len(frames) + len(refused) + len(timeouts), "frames": len(frames),
        "clicks": len(clicks), "unchanged": unchanged[0], "changes": mix, "dtypes": dtypes,
        "rss": rss, "rss_growth_mb": growth, "rss_growth_mb_per_1000": per_1000,
        "raw_rss_growth_mb": rss[-1]["rss_mb"] - rss[0]["rss_mb"],
        "held_growth_mb": rss[-1]["held_mb"] - rss[0]["held_mb"],
        "bounds": {"weight_cache_mb": WEIGHT_CACHE_BYTES / 2**20,
                   "weight_cache_older_mb": WEIGHT_CACHE_OLDER_BYTES / 2**20,
                   "undo_steps": UNDO_LIMIT, "title_cache": TITLE_CACHE_SIZE},
        "rss_peak_mb": _proc_status_mb("VmHWM"), "rss_after_malloc_trim_mb": trimmed,
        "frame_ms": frame_stats, "click_ms": click_stats, "all_ms": stats(frames + clicks),
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
             f"{'step':>6} {'RSS MiB':>9} {'held MiB':>9} {'weights':>8} {'session':>9} {'objects':>9} "
             f"{'undo':>5} {'titles':>6}  largest run since the last reading (engine estimate)"]
    for row in r["rss"]:
        big = f"  {row['largest_run_mb']:7.1f} MiB  {row['largest_run']}" if row.get("largest_run") else ""
        lines.append(f"{row['step']:>6} {row['rss_mb']:>9.1f} {row['held_mb']:>9.1f} {row['weight_cache_mb']:>8.1f} "
                     f"{row['session_mb']:>9.1f} {row['objects']:>9} {row['undo_steps']:>5} {row['title_cache']:>6}{big}")
    g, b = r["goals"], r["bounds"]
    lines.append(f"bounded holders (full after a few hundred changes): the weight cache ≤ {b['weight_cache_mb']:g} "
                 f"MiB (earlier weights ≤ {b['weight_cache_older_mb']:g}), undo ≤ {b['undo_steps']} steps, "
                 f"titles ≤ {b['title_cache']}")
    lines.append(f"RSS growth after warm-up (session: held at {describe(SOAK_READING_CONFIG)}, less the weight "
                 f"cache): {r['rss_growth_mb']:+.1f} MiB over {r['n']} changes "
                 f"({r['rss_growth_mb_per_1000']:+.1f} per 1,000; goal ≤ {g['rss_growth_mb_per_1000']:g} "
                 f"per 1,000) {r['verdict']['rss']}; held: {r['held_growth_mb']:+.1f} MiB; "
                 f"as read: {r['raw_rss_growth_mb']:+.1f} MiB; "
                 f"peak {r['rss_peak_mb']:.0f} MiB"
                 + (f"; after malloc_trim {r['rss_after_malloc_trim_mb']:.0f} MiB"
                    if r["rss_after_malloc_trim_mb"] is not None else ""))
    lines.append("config changes: " + ", ".join(f"{k} {v}" for k, v in r["changes"].items())
                 + "; into " + ", ".join(f"{k} {v}" for k, v in sorted(r["dtypes"].items()))
                 + f"; {r['unchanged']} refused by the constraints (no change)")
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
