"""The length profile: time and peak memory of one attention layer as S grows, per backend.

For a config, :func:`length_profile` sweeps the sequence length S (self-attention: the key
length follows S) and measures, for each backend,

- ``seconds``: the median wall time of ``repeats`` runs (``engine.run`` of the config with
  that backend and S: projections, attention, W_O; for ``tiled``,
  ``engine.tiled_attention`` on the Q, K, V of that S, the attention step alone);
- ``peak_bytes``: what the first of those runs added at its peak to the resident memory
  of the process that measured it (peak RSS − the RSS before the run, Linux VmHWM reset
  before each point), so the numbers are the machine's, not a formula.

Each point runs in a child process (engine/child.py, "spawn": a fresh interpreter holding
nothing else, whose peak is this run's; a run that dies there cannot take the caller with
it, and Cancel ends it at once). Where no child can be started (a frozen app, or
``ATTN_EXPLORER_PROFILE=inprocess``) the points run in the calling thread.

A point whose run would not fit the memory budget (``engine.memory_estimate`` against
``engine.memory.memory_budget()``, the knob ``ATTN_EXPLORER_MEMORY_BUDGET``) is never run:
it is returned with ``estimated=True``, ``seconds=None`` and ``peak_bytes`` = the estimate
(typically eager at long S: "would need 24 GiB").
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from .backends import BackendUnavailable, available_backends
from .child import ChildProcess
from .config import AttentionConfig, ConfigError
from .memory import BUDGET_ENV, format_bytes, memory_budget, memory_estimate, release_free_memory

__all__ = ["ALL_BACKENDS", "BACKENDS", "DEFAULT_LENGTHS", "EXACT_BACKENDS", "MAX_LENGTH", "PAST_MAX", "TILE", "VARIANTS",
           "VARIANT_BACKENDS", "VARIANT_LENGTHS", "VARIANT_MAX_LENGTH", "Crossover", "ProfilePoint", "config_shape",
           "crossover", "length_profile", "point_config", "profile_command", "profile_plan", "profile_table"]

#: the ways out of O(n²) a profile measures as rows of their own (docs/contract.md, "Efficient
#: attention"): the profile's config with that variant, everything else kept
VARIANTS = {"linear": {"kernel": "linear"}, "performer": {"kernel": "performer"},
            "local+global": {"window": 256, "global_tokens": 16}, "hierarchical": {"summary_block": 256}}
#: what a profile measures by default: the three backends of engine.run and the tiled reference
BACKENDS = ("eager", "sdpa", "flash", "tiled")
#: the efficient variants as rows of their own (run by engine.run's own algorithm for them);
#: a profile may measure them to VARIANT_MAX_LENGTH when it measures nothing else
VARIANT_BACKENDS = tuple(VARIANTS)
ALL_BACKENDS = BACKENDS + VARIANT_BACKENDS
#: the default sweep: 256 → 4096, doubling
DEFAULT_LENGTHS = (256, 512, 1024, 2048, 4096)
#: the longest S a profile measures
MAX_LENGTH = 16384
#: the longest S of a profile of the efficient variants alone (they run there in seconds)
VARIANT_MAX_LENGTH = 65536
#: full attention's backends whose times the crossover compares with, first found first
EXACT_BACKENDS = ("flash", "sdpa", "eager")
#: `python main.py bench --profile --variants`: 256 → 65,536, doubling
VARIANT_LENGTHS = tuple(2**k for k in range(8, 17))
#: why a full-attention point past MAX_LENGTH is not run (it is drawn at its memory estimate)
PAST_MAX = f"full attention is measured to S = {MAX_LENGTH} (its time grows as n²)"
#: block_q = block_k of the tiled reference (FlashAttention's usual 64–128)
TILE = 128
#: ATTN_EXPLORER_PROFILE=inprocess measures in the calling thread instead of a child process
MODE_ENV = "ATTN_EXPLORER_PROFILE"

#: progress(done, total, point): after each point (point None at the start)
Progress = Callable[[int, int, "ProfilePoint | None"], None]
#: cancel() → True to stop: the point being measured is abandoned, the ones done are kept
Cancel = Callable[[], bool]


@dataclass(frozen=True)
class ProfilePoint:
    """One (S, backend) of a profile.

    seconds: median wall time of the repeats (s), None when not run. peak_bytes: measured
    peak memory the run added (bytes), or, when ``estimated``, engine.memory_estimate's
    need (the run was not made). estimate_bytes: the estimate for every point (to compare
    with the measurement). samples: each repeat's seconds. impl: what ran
    (AttentionTrace.backend_impl, or "tiled"). error: why a point has no numbers (it ran
    and failed, or cannot run here); None otherwise. note: why an estimated point was not
    run when it fits the budget (full attention past MAX_LENGTH: PAST_MAX), else "".
    """

    seq_len: int
    backend: str
    seconds: float | None
    peak_bytes: int | None
    estimated: bool
    estimate_bytes: int
    budget_bytes: int
    samples: tuple[float, ...] = ()
    impl: str = ""
    error: str | None = None
    note: str = ""  # why an estimated point was not run when the budget is not the reason (PAST_MAX)

    @property
    def measured(self) -> bool:
        return self.seconds is not None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["samples"] = list(self.samples)
        return d


def config_shape(c: AttentionConfig) -> str:
    """What a profile's points share (S varies): 'B=1 H=4 Hkv=4 Dh=16 d_model=64 float32 causal'."""
    extra = [name for name, on in (("causal", c.causal), (f"window {c.window}", c.window is not None),
                                   (f"pad {c.pad}", c.pad > 0), (c.positional, c.positional != "none"),
                                   ("cross-attention", c.kv_len is not None)) if on]
    return " ".join([f"B={c.batch} H={c.n_heads} Hkv={c.kv_heads} Dh={c.head_dim} d_model={c.d_model} {c.dtype}",
                     *extra])


def profile_plan(lengths: Sequence[int], backends: Sequence[str]) -> list[tuple[int, str]]:
    """The order points are measured in: by S ascending, the backends in the order given."""
    return [(S, b) for S in lengths for b in backends]


def _check(config: AttentionConfig, lengths: Sequence[int], backends: Sequence[str], repeats: int) -> tuple[
        list[int], list[str]]:
    if not isinstance(config, AttentionConfig):
        raise ConfigError(f"length_profile needs an AttentionConfig, got {type(config).__name__}")
    bad = [b for b in backends if b not in ALL_BACKENDS]
    if bad or not backends:
        raise ConfigError(f"backends must be some of {', '.join(ALL_BACKENDS)}, got {list(backends)!r}")
    # with a variant the sweep may go to 65,536: full attention's points past 16,384 are then
    # returned not run, at their estimate (note PAST_MAX), beside the variants' measured ones
    top = VARIANT_MAX_LENGTH if set(backends) & set(VARIANT_BACKENDS) else MAX_LENGTH
    lens = []
    for S in lengths:
        if isinstance(S, bool) or not isinstance(S, int) or not 1 <= S <= top:
            raise ConfigError(f"lengths must be integers from 1 to {top}, got {S!r}")
        lens.append(S)
    if not lens:
        raise ConfigError("lengths must hold at least one sequence length")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= 50:
        raise ConfigError(f"repeats must be an integer from 1 to 50, got {repeats!r}")
    return sorted(set(lens)), list(dict.fromkeys(backends))


def point_config(config: AttentionConfig, seq_len: int, backend: str) -> AttentionConfig:
    """The config of one point: ``config`` at query length ``seq_len`` (a cross-attention
    key length follows S too; typed tokens are dropped; padding at most S) with that
    backend (the tiled reference takes its Q, K, V from a fused run: sdpa; a variant of
    VARIANTS is full attention's layer with that variant, as engine.approximation_report's)."""
    run_backend = "sdpa" if backend == "tiled" else backend
    changes = {"seq_len": seq_len, "tokens": None, "backend": run_backend, "pad": min(config.pad, seq_len)}
    if config.kv_len is not None:
        changes["kv_len"] = seq_len
    if backend in VARIANTS:  # full attention's layer with the variant (global tokens at most S)
        changes.update(kernel="softmax", window=None, global_tokens=0, summary_block=None, backend="eager")
        changes.update(VARIANTS[backend])
        if "global_tokens" in changes:
            changes["global_tokens"] = min(changes["global_tokens"], seq_len)
    return config.replace(**changes)


def _estimate(cfg: AttentionConfig, backend: str, block: int) -> int:
    """Bytes the point's run needs (memory_estimate's total; the tiled reference: the fused
    run giving Q, K, V, its float32 copies of K and V and each tile's scores, plus the
    running max and sum every tile records)."""
    est = memory_estimate(cfg)["total"]
    if backend == "tiled":
        B, H, S, Skv, Dh = cfg.batch, cfg.n_heads, cfg.seq_len, cfg.key_len, cfg.head_dim
        tiles = -(-Skv // block)
        est += 4 * (2 * B * H * Skv * Dh + 3 * B * H * block * block + B * H * S * (Dh + 2 * tiles + 4))
    return int(est)


# ---- measuring (in the measuring process) ------------------------------------------------------


def _status(key: str) -> int | None:
    """This process's /proc/self/status field ``key`` (VmRSS, VmHWM) in bytes; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _malloc_trim() -> None:
    """Give the heap's free pages back (glibc), so the RSS before a run is its own baseline."""
    release_free_memory()


class PeakMeter:
    """Peak resident memory of this process since :meth:`reset`, over the RSS at reset.

    Linux: VmHWM, reset by writing 5 to /proc/self/clear_refs. Elsewhere the peak cannot be
    reset (``resettable`` False): ru_maxrss of a fresh process is used, so the caller
    measures each point in a new child."""

    def __init__(self) -> None:
        self.resettable = self._try_reset()
        self.baseline = 0

    @staticmethod
    def _try_reset() -> bool:
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")
        except OSError:
            return False
        return _status("VmHWM") is not None

    @staticmethod
    def _peak_now() -> int | None:
        hwm = _status("VmHWM")
        if hwm is not None:
            return hwm
        try:
            import resource
        except ImportError:
            return None
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(rss if sys.platform == "darwin" else rss * 1024)  # bytes on macOS, KiB elsewhere

    def reset(self) -> None:
        gc.collect()
        _malloc_trim()
        if self.resettable:
            self._try_reset()
        self.baseline = _status("VmRSS") or 0

    def peak(self) -> int | None:
        """Bytes the peak lies above the RSS at reset (None where it cannot be read)."""
        now = self._peak_now()
        return None if now is None else max(0, now - self.baseline)


def _warm_up() -> None:
    """One tiny run of each backend: the first call of a kernel in a process pays for its
    set-up (thread pool, dispatch), which belongs to no point."""
    from .tiled import tiled_attention
    from .trace import run

    cfg = AttentionConfig(seq_len=16)
    for name, why in available_backends(cfg.device, cfg.dtype).items():
        if why is None:
            tr = run(cfg.replace(backend=name))
            tiled_attention(tr.q, tr.k, tr.v, mask=tr.mask)


def measure_point(config: AttentionConfig, backend: str, repeats: int, block: int = TILE,
                  meter: PeakMeter | None = None, cancel: Cancel | None = None) -> dict:
    """Run one point ``repeats`` times here; {"samples", "peak_bytes", "impl"} or {"error"}.

    ``config`` is the point's config (:func:`point_config`). The peak is the first run's;
    the trace of a run is dropped before the next, so two never coexist."""
    from .tiled import tiled_attention
    from .trace import run

    meter = meter or PeakMeter()
    samples: list[float] = []
    peak = None
    impl = "tiled" if backend == "tiled" else ""
    try:
        if backend == "tiled":
            if config.positional == "alibi":
                return {"error": "the tiled reference takes no ALiBi bias"}
            setup = run(config)  # Q, K, V of this S from a fused run (no grid), not timed
            q, k, v, mask = setup.q, setup.k, setup.v, setup.mask
            del setup
            scale = config.effective_scale  # (trace.q is unscaled, prescale_q or not)
            for i in range(repeats):
                if i == 0:
                    meter.reset()
                t0 = time.perf_counter()
                out, steps = tiled_attention(q, k, v, scale=scale, mask=mask, block_q=block, block_k=block)
                samples.append(time.perf_counter() - t0)
                if i == 0:
                    peak = meter.peak()
                del out, steps
                if cancel is not None and cancel():
                    break
        else:
            for i in range(repeats):
                if i == 0:
                    meter.reset()
                t0 = time.perf_counter()
                trace = run(config)
                samples.append(time.perf_counter() - t0)
                if i == 0:
                    peak = meter.peak()
                    impl = trace.backend_impl
                del trace
                if cancel is not None and cancel():
                    break
    except (ConfigError, BackendUnavailable, RuntimeError, MemoryError) as exc:
        return {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    return {"samples": samples, "peak_bytes": peak, "impl": impl}


def _serve(commands, results, budget: int | None, threads: int | None) -> None:  # pragma: no cover - the child
    """The measuring process (an engine.child.ChildProcess): answers ("point", config dict,
    backend, repeats, block) with ("done", result) until ("stop",)."""
    if budget is not None:
        os.environ[BUDGET_ENV] = str(budget)
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    meter = PeakMeter()
    try:
        _warm_up()
    except Exception:  # a warm-up failure shows up in the points themselves
        pass
    results.send(("ready", meter.resettable))
    while True:
        try:
            msg = commands.recv()
        except (EOFError, OSError):
            return
        if msg[0] != "point":
            return
        _kind, cfg_dict, backend, repeats, block = msg
        result = measure_point(AttentionConfig.from_dict(cfg_dict), backend, repeats, block, meter)
        results.send(("done", result))


def _child(budget: int | None, threads: int | None) -> ChildProcess:
    """A measuring process (engine/child.py: it ends with its parent)."""
    return ChildProcess(_serve, budget, threads, name="attention-explorer-profile")


def _died(child: ChildProcess) -> str:
    return f"the measuring process ended: {child.why_ended()}"


def _isolated() -> bool:
    asked = os.environ.get(MODE_ENV, "").strip().lower()
    if asked in ("inprocess", "thread"):
        return False
    return not getattr(sys, "frozen", False)


def length_profile(config: AttentionConfig, lengths: Sequence[int] = DEFAULT_LENGTHS,
                   backends: Sequence[str] = BACKENDS, repeats: int = 3,
                   progress: Progress | None = None, cancel: Cancel | None = None, *,
                   budget: int | None = None, block: int = TILE, threads: int | None = 1,
                   isolate: bool | None = None, point_timeout_s: float | None = None) -> list[ProfilePoint]:
    """Measure every (S, backend) of ``lengths`` × ``backends`` for ``config`` (see the module
    docstring); returns the points in :func:`profile_plan` order.

    ``budget`` (bytes; default ``memory_budget()``): a point whose estimate exceeds it is
    returned as an estimate, never run. ``cancel()`` is polled every ~50 ms: the point being
    measured is abandoned (its process ended) and the points done so far are returned.
    ``isolate``: measure in a child process (default, except in a frozen app or with
    ATTN_EXPLORER_PROFILE=inprocess). ``threads``: torch threads of the measuring process
    (default 1: every backend on one core, steady on a busy machine; None = torch's default;
    in-process measuring leaves the caller's setting alone). ``point_timeout_s``: a point
    taking longer is abandoned and reported as an error."""
    lengths, backends = _check(config, lengths, backends, repeats)
    budget = memory_budget() if budget is None else int(budget)
    isolate = _isolated() if isolate is None else isolate
    plan = profile_plan(lengths, backends)
    total = len(plan)
    points: list[ProfilePoint] = []
    if progress is not None:
        progress(0, total, None)
    child: ChildProcess | None = None
    resettable = True  # the child resets its peak between points (its first message says)
    meter = None if isolate else PeakMeter()
    usable = available_backends(config.device, config.dtype)
    try:
        for S, backend in plan:
            if cancel is not None and cancel():
                break
            try:
                cfg = point_config(config, S, backend)
            except ConfigError as exc:
                points.append(ProfilePoint(S, backend, None, None, False, 0, budget, error=str(exc)))
                continue
            need = _estimate(cfg, backend, block)
            base = {"seq_len": S, "backend": backend, "estimate_bytes": need, "budget_bytes": budget}
            why = usable.get(cfg.backend)
            if why is not None:
                point = ProfilePoint(**base, seconds=None, peak_bytes=None, estimated=False,
                                     error=f"{backend} is unavailable here: {why}")
            elif need > budget:  # not run: drawn as the estimate
                point = ProfilePoint(**base, seconds=None, peak_bytes=need, estimated=True)
            elif S > MAX_LENGTH and backend not in VARIANTS:  # full attention past its range
                point = ProfilePoint(**base, seconds=None, peak_bytes=need, estimated=True, note=PAST_MAX)
            elif isolate:
                if child is None:
                    child = _child(None if budget == memory_budget() else budget, threads)
                    hello = child.wait(cancel, None)
                    if hello is None:
                        if cancel is not None and cancel():
                            break
                        raise RuntimeError(f"the length profile could not start its measuring process: "
                                           f"{_died(child)}")
                    resettable = bool(hello[1])
                child.send(("point", cfg.to_dict(), backend, repeats, block))
                reply = child.wait(cancel, point_timeout_s)
                if reply is None:
                    if cancel is not None and cancel():
                        child.end(kill=True)
                        child.close()
                        child = None
                        break
                    error = f"took over {point_timeout_s:.0f} s" if child.alive() else _died(child)
                    child.end(kill=True)
                    child.close()
                    child = None
                    point = ProfilePoint(**base, seconds=None, peak_bytes=None, estimated=False, error=error)
                else:
                    point = _point(base, reply[1])
                    if not resettable:  # a fresh process for the next peak
                        child.close()
                        child = None
            else:
                point = _point(base, measure_point(cfg, backend, repeats, block, meter, cancel))
                if cancel is not None and cancel():
                    break
            points.append(point)
            if progress is not None:
                progress(len(points), total, point)
    finally:
        if child is not None:
            child.end(kill=cancel is not None and cancel())
            child.close()
    return points


def _point(base: dict, result: dict) -> ProfilePoint:
    if "error" in result:
        return ProfilePoint(**base, seconds=None, peak_bytes=None, estimated=False, error=result["error"])
    samples = tuple(float(s) for s in result["samples"])
    return ProfilePoint(**base, seconds=statistics.median(samples), peak_bytes=result["peak_bytes"],
                        estimated=False, samples=samples, impl=result["impl"])


# ---- a text table (python main.py bench --profile) ----------------------------------------------


def format_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def profile_table(points: Sequence[ProfilePoint]) -> str:
    """The points as rows S × backend: 'time · peak' or 'not run: would need …'; with a
    linear row, the crossover line (:func:`crossover`) under them."""
    backends = list(dict.fromkeys(p.backend for p in points))
    lengths = sorted({p.seq_len for p in points})
    cell = {(p.seq_len, p.backend): p for p in points}

    def text(p: ProfilePoint | None) -> str:
        if p is None:
            return "—"
        if p.estimated and p.note:
            return f"not run (> {MAX_LENGTH})"
        if p.estimated:
            return f"not run: needs {format_bytes(p.peak_bytes)}"
        if p.error:
            return "failed"
        peak = "?" if p.peak_bytes is None else format_bytes(p.peak_bytes)
        return f"{format_seconds(p.seconds)} · {peak}"

    rows = [["S", *backends]] + [[str(S), *(text(cell.get((S, b))) for b in backends)] for S in lengths]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) if i == 0 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    errors = [f"  S={p.seq_len} {p.backend}: {p.error}" for p in points if p.error]
    notes = [f"not run (> {MAX_LENGTH}): {PAST_MAX}"] if any(p.note for p in points) else []
    cross = [f"crossover: {crossover(points).text()}"] if "linear" in backends else []
    return "\n".join(lines + errors + notes + cross)


@dataclass(frozen=True)
class Crossover:
    """Where a variant's measured time line crosses full attention's (:func:`crossover`).

    kind: "crosses" (slower at ``below``, faster at ``above`` and at every S measured after;
    ``seq_len`` the S where the two log–log lines between them meet), "always" (faster at
    every S both were measured at; ``above`` the shortest), "never" (not faster at the
    longest S both were measured at, ``longest``) or "unmeasured" (no S where both were
    measured). variant, exact: the two rows compared."""

    variant: str
    exact: str
    kind: str
    seq_len: float | None = None
    below: int | None = None
    above: int | None = None
    longest: int | None = None

    def text(self) -> str:
        """One English line (the CLI's; the window words it in its own language)."""
        v, e = self.variant, self.exact
        if self.kind == "crosses":
            return (f"{v} beats {e} from S ≈ {self.seq_len:,.0f} on this machine "
                    f"(slower at S = {self.below:,}, faster at S = {self.above:,} and beyond, up to {self.longest:,})")
        if self.kind == "always":
            return f"{v} beats {e} at every S measured (S = {self.above:,} to {self.longest:,})"
        if self.kind == "never":
            return f"{v} never beats {e} up to S = {self.longest:,}"
        return f"{v} vs {e}: no S where both were measured"


def crossover(points: Sequence[ProfilePoint], variant: str = "linear", exact: str | None = None) -> Crossover:
    """The S from which ``variant``'s measured time beats full attention's, read off the
    measured points (estimates and failures ignored). ``exact``: the full-attention row to
    compare with; default the first of EXACT_BACKENDS (flash, sdpa, eager) measured at an S
    where ``variant`` was. Noise at short S does not count: the crossing is the shortest S
    from which the variant is faster at every longer S measured."""
    def times(b: str) -> dict[int, float]:
        return {p.seq_len: p.seconds for p in points if p.backend == b and p.seconds and not p.estimated}

    mine = times(variant)
    if exact is None:
        exact = next((b for b in EXACT_BACKENDS if set(times(b)) & set(mine)), EXACT_BACKENDS[0])
    theirs = times(exact)
    common = sorted(set(mine) & set(theirs))
    if not common:
        return Crossover(variant, exact, "unmeasured")
    faster = [mine[S] < theirs[S] for S in common]
    longest = common[-1]
    if not faster[-1]:
        return Crossover(variant, exact, "never", longest=longest)
    i = len(faster)
    while i > 0 and faster[i - 1]:
        i -= 1
    if i == 0:
        return Crossover(variant, exact, "always", above=common[0], longest=longest)
    s0, s1 = common[i - 1], common[i]
    d0 = math.log(mine[s0] / theirs[s0])  # ≥ 0: slower (or even)
    d1 = math.log(mine[s1] / theirs[s1])  # < 0: faster
    t = d0 / (d0 - d1) if d0 != d1 else 1.0
    at = math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    return Crossover(variant, exact, "crosses", seq_len=at, below=s0, above=s1, longest=longest)


def profile_command(as_json: bool = False, quick: bool = False, lengths: Sequence[int] | None = None,
                    variants: bool = False) -> int:
    """`python main.py bench --profile`: the length profile of the default config (B=1, H=4,
    d_model=64, float32), 256 → 4096 doubling, every backend, 3 repeats (``quick``: 256 →
    1024, one repeat), as a table or JSON; progress on stderr. ``variants`` (`--variants`):
    eager, sdpa, flash and the efficient variants, 256 → 65,536 (quick: 256, 2048, 16,384),
    with the crossover of linear attention and flash under the table (JSON: "crossover")."""
    config = AttentionConfig()
    backends = ("eager", "sdpa", "flash", *VARIANT_BACKENDS) if variants else BACKENDS
    if variants and not lengths:
        lengths = (256, 2048, 16384) if quick else VARIANT_LENGTHS
    lengths = tuple(lengths) if lengths else ((256, 512, 1024) if quick else DEFAULT_LENGTHS)
    repeats = 1 if quick else 3
    t0 = time.perf_counter()

    def progress(done: int, total: int, point: ProfilePoint | None) -> None:
        if point is not None:
            print(f"[{done}/{total}] S={point.seq_len} {point.backend}", file=sys.stderr, flush=True)

    points = length_profile(config, lengths, backends, repeats, progress)
    elapsed = time.perf_counter() - t0
    if as_json:
        import json

        extra = {"crossover": asdict(crossover(points)) | {"text": crossover(points).text()}} if variants else {}
        print(json.dumps({"config": config.to_dict(), "lengths": list(lengths), "repeats": repeats,
                          "seconds": elapsed, "points": [p.to_dict() for p in points], **extra}, indent=2))
        return 0
    print(f"length profile · {config_shape(config)} · median of {repeats} · one torch thread, a child process "
          f"per sweep · budget {format_bytes(points[0].budget_bytes) if points else '?'} · {elapsed:.0f} s")
    print("time of one run (engine.run; tiled: engine.tiled_attention) · peak memory the run added (VmHWM)")
    print(profile_table(points))
    return 0
