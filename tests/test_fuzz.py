"""Fuzzing (issue 19): random configs and session dicts, valid and hostile, through
`AttentionConfig(**fields)`, `AttentionConfig.from_dict`, the session loader (dicts and
files) and `engine.run`.

Every outcome is either a result that meets the invariants below or an `engine.ConfigError`
/ `explorer.session.SessionError` (plus `engine.BackendUnavailable` for a backend or device
this machine lacks, as docs/contract.md documents); never another exception, a signal, a hang, or
more time than the example's bound.

The properties run in one subprocess (this file run as a script: ``python
tests/test_fuzz.py --worker OUT.json``) under an address-space limit (RLIMIT_AS, 3 GiB) and
a timeout, so a bug fails the test instead of the machine: an allocation the memory budget
did not refuse fails there as an exception, not as the kernel's OOM killer. Hypothesis runs
derandomized with no example database, so CI sees the same examples every time; the whole
file takes about a minute on a 2-core machine (6,100 examples: 1,200 constructor, 1,200
from_dict, 900 session dicts, 800 session files, 19 odd paths, 700 small runs, 300 huge
runs; about 1,300 engine runs in all). ``ATTN_EXPLORER_FUZZ_SCALE=10`` multiplies the
example counts (and the timeout) for a longer local hunt.

Invariants of a run (docs/contract.md): every field's shape; q/k/v/scores/weights/context/output
in the config dtype; the mask is causal (bottom-right aligned), window and pad as
specified; weight rows whose unmasked scores are finite are probabilities summing to 1
(masked keys exactly 0 with mask_value "-inf"); entropy in [0, log Skv]; the Jacobian norm
non-negative; equal tokens get equal embeddings; the same config gives the same numbers;
a fused backend's output matches eager in float32; a config over the memory budget is
refused with ConfigError in well under a second, before anything is allocated.
"""

from __future__ import annotations

import json
import math
import os
import reprlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
#: Address space the worker may take (torch alone maps ~0.7 GiB).
MEMORY_LIMIT = 3 * GIB
#: The whole worker: past this it dumps every thread's stack and exits (the subprocess
#: timeout below is the backstop for a worker stuck where Python cannot run).
WORKER_TIMEOUT_S = 240


def _scale() -> float:
    """ATTN_EXPLORER_FUZZ_SCALE: a multiplier of every example count (and of the timeout)."""
    try:
        return max(0.01, float(os.environ.get("ATTN_EXPLORER_FUZZ_SCALE", "") or 1))
    except ValueError:
        return 1.0


#: An over-budget config must be refused within this long (nothing is allocated).
REFUSE_S = 1.0
#: Construction, from_dict and session parsing of one example.
PARSE_S = 2.0

pytestmark = pytest.mark.slow


# ============================================================================================
# the parent side: pytest runs the worker once and checks each property's report
# ============================================================================================

@pytest.fixture(scope="module")
def fuzz_report(tmp_path_factory):
    if os.name != "posix":  # pragma: no cover - RLIMIT_AS, SIGALRM and FIFOs are POSIX
        pytest.skip("the fuzz worker needs RLIMIT_AS, SIGALRM and FIFOs (POSIX)")
    out = tmp_path_factory.mktemp("fuzz") / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "ATTN_EXPLORER_MEMORY_BUDGET"}
    # one torch thread: tiny runs are faster without thread hand-offs (~10x on a busy 2-core
    # machine), and no thread stacks or malloc arenas crowd the address-space limit
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MALLOC_ARENA_MAX="2",
               PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
    limit = WORKER_TIMEOUT_S * max(1.0, _scale()) + 30
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(out)],
                              cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=limit)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the fuzz worker hung past {limit:.0f} s; last example: "
                    f"{_last_example(out)}\n{_tail(exc.stderr)}")
    wall = time.perf_counter() - t0
    report = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "wall_s": wall,
            "properties": report.get("properties", {}), "last": _last_example(out)}


def _last_example(out: Path) -> str:
    p = out.with_suffix(".current")
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(none recorded)"


def _tail(text, n: int = 4000) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return (text or "")[-n:]


def test_the_worker_exits_cleanly(fuzz_report):
    rc = fuzz_report["rc"]
    how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
    assert rc == 0, (f"fuzz worker {how}; last example: {fuzz_report['last']}\n"
                     f"{_tail(fuzz_report['stderr'])}")
    print(f"\nfuzz worker: {fuzz_report['wall_s']:.1f} s")
    for name, r in fuzz_report["properties"].items():
        print(f"  {name}: {r['examples']} examples in {r['seconds']:.1f} s, outcomes {r['outcomes']}")


PROPERTIES = ["constructor", "from_dict", "session_dicts", "session_files", "session_paths",
              "run_small", "run_huge"]


@pytest.mark.parametrize("name", PROPERTIES)
def test_property(fuzz_report, name):
    props = fuzz_report["properties"]
    assert name in props, (f"the worker never reported {name!r} (rc {fuzz_report['rc']}); "
                           f"last example: {fuzz_report['last']}\n{_tail(fuzz_report['stderr'])}")
    r = props[name]
    assert r["error"] is None, f"{name}: {r['error']}"
    assert r["examples"] >= r["min_examples"], f"{name}: only {r['examples']} examples ran"


# ============================================================================================
# the worker: everything below runs only in the subprocess
# ============================================================================================

class Hang(BaseException):
    """Raised by the interval timer when one example overruns its bound."""


class _Repr(reprlib.Repr):
    def repr_int(self, x, level):
        if x.bit_length() > 200:
            return f"<int of ~{int(x.bit_length() * 0.30103) + 1} digits>"
        return super().repr_int(x, level)

    def repr_str(self, x, level):
        return super().repr_str(x, level).encode("ascii", "backslashreplace").decode("ascii")


_REPR = _Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 5, 80, 1000, 80
_REPR.maxdict, _REPR.maxlist, _REPR.maxtuple = 24, 12, 12


def safe_repr(value) -> str:
    try:
        return _REPR.repr(value)
    except Exception:  # a repr must never fail the fuzzing
        return f"<{type(value).__name__}>"


class Worker:
    """Shared state of the worker: the report, the current example, the per-example timer."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.current = out.with_suffix(".current")
        self.properties: dict[str, dict] = {}
        self.counts: dict[str, int] = {}
        self.examples = 0
        self.run_seconds = 0.0
        self._fd: int | None = None
        self._sampled = 0

    def note(self, prop: str, value) -> None:
        """Record the example about to run (read by the parent if the worker dies on it)."""
        self.examples += 1
        if self._fd is None:
            self._fd = os.open(self.current, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        data = f"{prop}: {safe_repr(value)}".encode("utf-8", "backslashreplace")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def sample(self) -> bool:
        """True for every second call: which constructed configs the parsing properties also
        run (run_small runs every one of its own)."""
        self._sampled += 1
        return self._sampled % 2 == 1

    def outcome(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def timed(self, limit_s: float, what: str, fn, *args, **kwargs):
        """fn(*args) under an interval timer; AssertionError when it overruns `limit_s`."""
        import signal

        def on_alarm(signum, frame):
            raise Hang

        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit_s)
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except Hang:
            raise AssertionError(f"{what} took more than {limit_s:.1f} s") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            elapsed = time.perf_counter() - t0
            if elapsed > limit_s:
                raise AssertionError(f"{what} took {elapsed:.2f} s (bound {limit_s:.1f} s)")

    def run_property(self, name: str, fn, min_examples: int) -> None:
        import traceback

        self.counts, self.examples, self.run_seconds = {}, 0, 0.0
        t0 = time.perf_counter()
        error = None
        try:
            fn()
        except BaseException as exc:  # reported, with hypothesis' falsifying example
            error = ("".join(traceback.format_exception(exc))[-6000:]
                     + f"\nlast example run: {_last(self.current)}")
        self.properties[name] = {"examples": self.examples, "outcomes": dict(sorted(self.counts.items())),
                                 "seconds": round(time.perf_counter() - t0, 2), "error": error,
                                 "run_seconds": round(self.run_seconds, 2),
                                 "min_examples": min_examples}
        self.save()
        print(f"{name}: {self.examples} examples, {self.properties[name]['seconds']} s "
              f"({self.run_seconds:.1f} s in engine.run), "
              f"{self.counts}{' FAILED' if error else ''}", flush=True)

    def save(self) -> None:
        self.out.write_text(json.dumps({"properties": self.properties}, indent=1), encoding="utf-8")


def _last(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return "(none)"


def worker_main(out: Path) -> int:
    import faulthandler
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError) as exc:  # pragma: no cover - e.g. macOS refuses RLIMIT_AS
        print(f"warning: no address-space limit ({exc}); the memory budget is still checked", file=sys.stderr)
    faulthandler.enable()  # a segfault prints the Python stack to stderr
    scale = _scale()
    faulthandler.dump_traceback_later(WORKER_TIMEOUT_S * max(1.0, scale), exit=True)  # a hang too, then exits
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    os.environ.pop("ATTN_EXPLORER_MEMORY_BUDGET", None)

    import torch

    torch.set_num_threads(1)
    w = Worker(out)
    props = _properties(w, scale)
    for name, (fn, n) in props.items():
        w.run_property(name, fn, min_examples=max(1, n // 4))
    faulthandler.cancel_dump_traceback_later()
    return 0


# --------------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------------

def _power_of_ten(e: int) -> int:
    return 10 ** e if e > 0 else -(10 ** -e)


def _strategies():
    from hypothesis import strategies as st

    from engine.config import BACKENDS, DTYPES, MASK_VALUES, MAX_SEED, POSITIONALS

    odd_strings = st.sampled_from([
        "", " ", "\x00", "\ud800", "\udfff", "a\ud800b", "\udc80\udc80", "\u202eevil", "e\u0301",
        "🙂", "𝔘𝔫𝔦", "\ufeff", "\uffff", "\U0010ffff", "x" * 5000, "float32 ", "Float32", "-INF",
        "inf", "nan", "1e308", "None", "null", "true", "{}", "[]", "../../etc/passwd", "%s%n",
        "\r\n", "rope\x00", "eager;rm -rf /", "'; DROP TABLE", "自注意力", "٣", "sdpa ",
    ])
    text = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=30)
    big_ints = st.one_of(st.sampled_from([
        0, -1, 1, 2, 2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**53 + 1, 2**63, 2**64, 10**30, -10**30,
        65537, 1 << 20, (1 << 20) + 1, 4097, 1025,
    ]), st.sampled_from([400, -400, 4400, 5000]).map(_power_of_ten))  # drawn, not listed: hypothesis
    # prints a strategy's elements, and Python will not print an int of over 4,300 digits
    ints = st.one_of(st.integers(), big_ints)
    floats = st.one_of(st.floats(), st.sampled_from([
        1e308, -1e308, 1.7976931348623157e308, 5e-324, -0.0, 0.0, math.inf, -math.inf, math.nan,
        1e-30, 1e30, 65504.0, 65520.0, 0.5, 2.0,
    ]))
    leaves = st.one_of(st.none(), st.booleans(), ints, floats, text, odd_strings)
    keys = st.one_of(st.text(max_size=8), odd_strings)
    nested = st.recursive(leaves, lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=4),
                          max_leaves=10)

    def deep(depth: int, kind: str):
        v: object = 1
        for _ in range(depth):
            v = [v] if kind == "list" else {"a": v}
        return v

    deep_values = st.builds(deep, st.sampled_from([33, 200, 3000]), st.sampled_from(["list", "dict"]))
    hostile = st.one_of(leaves, leaves, nested, deep_values,
                        st.sampled_from([(), (1,), frozenset(), b"bytes", bytearray(b"x"), 1j, object()]))
    # values that are right for some other field, or nearly right for this one
    near_valid = st.one_of(st.sampled_from([*DTYPES, *MASK_VALUES, *POSITIONALS, *BACKENDS, "cpu", "cuda"]),
                           st.integers(-3, 300), st.floats(-3, 3), st.booleans(),
                           st.sampled_from([MAX_SEED, MAX_SEED + 1, 1 << 20, (1 << 20) + 1, 65536, 65537]))
    bad_value = st.one_of(hostile, near_valid)

    # built once: a strategy made inside a composite is validated again at every draw
    token_lists = st.one_of(st.none(), st.lists(
        st.sampled_from(["the", "cat", "sat", "on", "the", "mat", "", " ", "猫", "🙂", "e\u0301", "\x00"]),
        min_size=1, max_size=32))
    maybe_kv = st.one_of(st.none(), st.integers(1, 32))
    windows = st.one_of(st.none(), st.integers(1, 40), st.sampled_from([2**31 - 1]))
    scales = st.one_of(st.none(), st.floats(-4, 4), st.sampled_from([0.0, 1e30, -1e30, 5e-324, 1e-30, 1e4]))
    seeds = st.one_of(st.integers(0, 5), st.integers(0, MAX_SEED))
    init_stds = st.one_of(st.none(), st.floats(1e-3, 2.0), st.sampled_from([1e-30, 1e30, 5e-324, 50.0]))
    positionals, mask_values = st.sampled_from(POSITIONALS), st.sampled_from(MASK_VALUES)
    dtypes, backends = st.sampled_from(DTYPES), st.sampled_from(BACKENDS)

    @st.composite
    def small_configs(draw, device=None):
        """Valid configs small enough to run in milliseconds (d_model ≤ 128, S, Skv ≤ 32, B ≤ 3)."""
        from engine import AttentionConfig

        positional = draw(positionals)
        hd = draw(st.integers(1, 16))
        if positional == "rope" and hd % 2:
            hd += 1
        n_heads = draw(st.integers(1, min(16, 128 // hd)))
        divisors = [g for g in range(1, n_heads + 1) if n_heads % g == 0]
        n_kv = draw(st.one_of(st.none(), st.sampled_from(divisors)))
        tokens = draw(token_lists)
        seq_len = len(tokens) if tokens else draw(st.integers(1, 32))
        kv_len = draw(maybe_kv)
        key_len = seq_len if kv_len is None else kv_len
        return AttentionConfig(
            d_model=n_heads * hd, n_heads=n_heads, n_kv_heads=n_kv, seq_len=seq_len, kv_len=kv_len,
            batch=draw(st.integers(1, 3)), causal=draw(st.booleans()), window=draw(windows),
            pad=draw(st.integers(0, key_len)), mask_value=draw(mask_values), scale=draw(scales),
            prescale_q=draw(st.booleans()), dtype=draw(dtypes), positional=positional,
            backend=draw(backends), device="cpu" if device is None else draw(device),
            seed=draw(seeds), init_std=draw(init_stds), tokens=tokens,
        )

    return st, {"hostile": hostile, "bad_value": bad_value, "text": text, "keys": keys,
                "odd_strings": odd_strings, "small_configs": small_configs, "deep": deep,
                "deep_values": deep_values, "ints": ints}


# --------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------

def check_config(config) -> None:
    """Invariants of any AttentionConfig that constructed."""
    from engine import AttentionConfig

    config.validate()
    assert config.n_heads * config.head_dim == config.d_model
    assert config.n_heads % config.kv_heads == 0
    assert 0 <= config.pad <= config.key_len
    if config.tokens is not None:
        assert isinstance(config.tokens, tuple) and len(config.tokens) == config.seq_len
    hash(config)
    config.summary()
    d = config.to_dict()
    text = json.dumps(d, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")  # JSON-safe: no lone surrogate, no NaN, no huge int
    assert AttentionConfig.from_dict(json.loads(text)) == config, "to_dict/from_dict round trip"


def _flops(c) -> int:
    B, S, Skv, d, H, Dh = c.batch, c.seq_len, c.key_len, c.d_model, c.n_heads, c.head_dim
    kvd = c.kv_heads * Dh
    return 2 * B * (2 * S * d * d + 2 * Skv * d * kvd) + 4 * B * H * S * Skv * Dh


def run_bound_s(c) -> float:
    """Seconds a run of `c` may take here: a fixed allowance plus its FLOPs at a pessimistic
    speed for this (shared, 2-core) CPU; float16/bfloat16 matmuls are ~100x slower than float32."""
    rate = 2e9 if c.dtype == "float32" else 5e7
    return 5.0 + 3 * _flops(c) / rate


def exercise_run(w: Worker, config, *, full: bool = True, max_bytes: int = 256 << 20,
                 max_s: float = 30.0, sampled: bool = False) -> str:
    """engine.run(config): refused with ConfigError quickly when over the budget, else (when
    small enough for the fuzz's time bound) a trace meeting the invariants. Returns the outcome."""
    t0 = time.perf_counter()
    try:
        return _exercise_run(w, config, full=full, max_bytes=max_bytes, max_s=max_s, sampled=sampled)
    finally:
        w.run_seconds += time.perf_counter() - t0


def _exercise_run(w: Worker, config, *, full: bool, max_bytes: int, max_s: float, sampled: bool) -> str:
    import engine
    from engine import BackendUnavailable, ConfigError
    from engine.memory import memory_budget

    est = w.timed(REFUSE_S, "memory_estimate", engine.memory_estimate, config)
    assert isinstance(est, dict) and all(isinstance(v, int) and v >= 0 for v in est.values()), est
    budget = memory_budget()
    if est["total"] > budget:
        try:
            w.timed(REFUSE_S, f"refusing an over-budget run ({est['total']} > {budget} bytes)", engine.run, config)
        except ConfigError as exc:
            assert str(exc).strip() and "\n" not in str(exc), f"not a one-line message: {exc!r}"
            return "run: refused (memory budget)"
        raise AssertionError(f"a run estimated at {est['total']} bytes ran under a {budget}-byte budget")
    if est["total"] > max_bytes or run_bound_s(config) > max_s:
        return "run: not run (too big for the fuzz time bound)"
    if sampled and not w.sample():
        return "run: not sampled"
    try:
        trace = w.timed(run_bound_s(config), "engine.run", engine.run, config)
    except BackendUnavailable as exc:
        assert _backend_missing(config), f"BackendUnavailable for a backend that is available: {exc}"
        return "run: BackendUnavailable"
    except ConfigError:
        return "run: ConfigError"
    check_trace(config, trace, full=full)
    if full:
        again = w.timed(run_bound_s(config), "engine.run (again)", engine.run, config)
        _same(trace.output, again.output, "the same config gives the same output")
        _same(trace.weights, again.weights, "the same config gives the same weights")
    return "run: ok"


def _backend_missing(config) -> bool:
    import torch

    from engine import available_backends

    if config.device == "cuda" and not torch.cuda.is_available():
        return True
    return available_backends(config.device, config.dtype).get(config.backend) is not None


def _same(a, b, what: str) -> None:
    import torch

    assert a.shape == b.shape and a.dtype == b.dtype, what
    assert bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all()), what


def check_trace(c, tr, full: bool = True) -> None:
    """The trace invariants of docs/contract.md (see the module docstring)."""
    import torch

    from engine import AttentionTrace

    assert isinstance(tr, AttentionTrace) and tr.config == c
    B, H, Hkv, S, Skv, d, Dh = c.batch, c.n_heads, c.kv_heads, c.seq_len, c.key_len, c.d_model, c.head_dim
    dt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[c.dtype]
    shapes = {"x": (B, S, d), "q": (B, H, S, Dh), "k": (B, Hkv, Skv, Dh), "v": (B, Hkv, Skv, Dh),
              "scores_raw": (B, H, S, Skv), "scores": (B, H, S, Skv), "weights": (B, H, S, Skv),
              "mask": (S, Skv), "context": (B, H, S, Dh), "output": (B, S, d),
              "softmax_jacobian_norm": (B, H, S), "entropy": (B, H, S)}
    for name, shape in shapes.items():
        t = getattr(tr, name)
        assert isinstance(t, torch.Tensor), f"{name} is a {type(t).__name__}"
        assert tuple(t.shape) == shape, f"{name}: shape {tuple(t.shape)}, expected {shape}"
        assert t.device.type == "cpu", f"{name} on {t.device}"
    for name in ("q", "k", "v", "scores_raw", "scores", "weights", "context", "output"):
        assert getattr(tr, name).dtype == dt, f"{name}: dtype {getattr(tr, name).dtype}, expected {dt}"
    assert tr.mask.dtype == torch.bool
    assert isinstance(tr.backend_impl, str) and tr.backend_impl.split(":")[0] == c.backend, tr.backend_impl
    if c.backend == "eager":
        assert tr.backend_max_abs_diff is None
    else:
        assert isinstance(tr.backend_max_abs_diff, float) and not tr.backend_max_abs_diff < 0

    # the mask, from docs/contract.md's definitions
    pos = torch.arange(S)[:, None] + (Skv - S)
    j = torch.arange(Skv)[None, :]
    want = torch.ones(S, Skv, dtype=torch.bool)
    if c.causal:
        want &= j <= pos
    if c.window is not None:
        want &= (j > pos - c.window) if c.causal else ((pos - j).abs() < c.window)
    want &= j < Skv - c.pad
    assert torch.equal(tr.mask, want), "mask differs from docs/contract.md's causal/window/pad rule"

    if hasattr(tr, "head_grid") and full:
        for name in ("scores_raw", "scores", "weights"):
            _same(tr.head_grid(name, H - 1, batch=B - 1), getattr(tr, name)[B - 1, H - 1], f"head_grid({name})")

    # weight rows: probabilities where the unmasked scores are finite
    scores, weights = tr.scores.double(), tr.weights.double()
    m = tr.mask.expand(B, H, S, Skv)
    finite = torch.where(m, torch.isfinite(scores), torch.ones_like(m)).all(-1)
    ok = m.any(-1) & finite  # (B, H, S): a row that is not fully masked, its scores finite
    tol = 1e-4 if c.dtype == "float32" else 3e-2
    if bool(ok.any()):
        rows = weights[ok]
        assert bool(torch.isfinite(rows).all()), "NaN/inf weights in a row with finite scores"
        assert bool((rows >= 0).all()) and bool((rows <= 1 + tol).all()), "weights outside [0, 1]"
        sums = rows.sum(-1)
        assert bool(((sums - 1).abs() <= tol).all()), f"weight rows sum to {sums.min():.6g}…{sums.max():.6g}"
        if c.mask_value == "-inf":
            assert bool((weights[ok][~m[ok]] == 0).all()), "masked keys get weight with mask_value -inf"
        ent = tr.entropy.double()[ok]
        assert bool((ent >= -1e-3).all()) and bool((ent <= math.log(Skv) + 1e-2 + tol * Skv).all()), \
            "entropy outside [0, log Skv]"
        jac = tr.softmax_jacobian_norm.double()[ok]
        assert bool((jac >= 0).all()) and bool(torch.isfinite(jac).all()), "Jacobian norm negative or NaN"

    # equal tokens, equal embeddings (no additive positional encoding to tell them apart)
    if c.tokens is not None and c.positional in ("none", "rope", "alibi"):
        first: dict[str, int] = {}
        for i, t in enumerate(c.tokens):
            if t in first:
                assert torch.equal(tr.x[:, i], tr.x[:, first[t]]), f"token {t!r} embedded differently"
            first.setdefault(t, i)

    # a fused backend matches eager in float32 (moderate numbers, every row defined)
    moderate = (c.init_std is None or c.init_std <= 2) and (c.scale is None or abs(c.scale) <= 4)
    if c.dtype == "float32" and moderate and bool(ok.all()):
        out = tr.output.double()
        assert bool(torch.isfinite(out).all()), "NaN/inf output for a well-defined float32 config"
        if c.backend != "eager":
            bound = 1e-4 * (1 + float(out.abs().max()))
            assert tr.backend_max_abs_diff <= bound, f"{c.backend} differs from eager by {tr.backend_max_abs_diff}"


def check_session(s) -> None:
    """Invariants of a loaded Session: indices in range, round trips through dict, JSON and a file."""
    from engine import AttentionConfig
    from explorer.session import Session, parse_session, session_to_dict

    assert isinstance(s, Session) and isinstance(s.config, AttentionConfig)
    check_config(s.config)
    assert 0 <= s.head < s.config.n_heads and 0 <= s.query < s.config.seq_len and 0 <= s.key < s.config.key_len
    assert s.model is None or isinstance(s.model, dict)
    d = session_to_dict(s.config, s.selection, s.model)
    assert parse_session(d) == s, "session_to_dict/parse_session round trip"


# --------------------------------------------------------------------------------------------
# the properties
# --------------------------------------------------------------------------------------------

def _properties(w: Worker, scale: float) -> dict:
    import tempfile

    from hypothesis import HealthCheck, given, settings

    from engine import AttentionConfig, ConfigError
    from engine.config import MAX_SEED
    from explorer import session as S
    from explorer.session import SessionError, load_session, save_session

    st, s = _strategies()
    field_names = [f.name for f in __import__("dataclasses").fields(AttentionConfig)]
    tmp = Path(tempfile.mkdtemp(prefix="attn-fuzz-"))

    def n(base: int) -> int:
        return max(1, int(base * scale))

    def conf(examples: int):
        return settings(max_examples=n(examples), derandomize=True, database=None, deadline=None,
                        suppress_health_check=list(HealthCheck), print_blob=False)

    @st.composite
    def field_dicts(draw):
        """A valid small config's fields with 0-3 of them replaced by bad values or dropped."""
        d = draw(s["small_configs"]()).to_dict()
        for _ in range(draw(st.integers(0, 3))):
            name = draw(st.sampled_from(field_names))
            if draw(st.integers(0, 5)) == 0:
                d.pop(name, None)
            else:
                d[name] = draw(s["bad_value"])
        if d.get("tokens") is not None and draw(st.booleans()):
            d["tokens"] = draw(st.lists(st.one_of(s["text"], s["hostile"]), max_size=6))
        return d

    @st.composite
    def config_dicts(draw):
        """from_dict input: field dicts, plus unknown and non-string keys, or no dict at all."""
        kind = draw(st.integers(0, 9))
        if kind == 0:
            return draw(s["hostile"])
        d = draw(field_dicts())
        if kind in (1, 2):
            d[draw(s["keys"])] = draw(s["hostile"])
        if kind == 3:
            d[draw(st.sampled_from([1, None, (1, 2), 2.5, frozenset({1})]))] = 1
        if kind == 4:
            d = {k: v for k, v in d.items() if draw(st.booleans())}  # missing keys take defaults
        return d

    def attempt(prop, fn, *args, **kwargs):
        """Call fn: the result, or None on the expected refusal; anything else propagates."""
        try:
            return w.timed(PARSE_S, prop, fn, *args, **kwargs), None
        except (ConfigError, SessionError) as exc:
            msg = str(exc)
            assert msg.strip(), f"{type(exc).__name__} with an empty message"
            assert "\n" not in msg, f"{type(exc).__name__} message of several lines: {msg!r}"
            return None, type(exc).__name__

    # ---- 1. AttentionConfig(**fields) --------------------------------------------------------
    @conf(1200)
    @given(field_dicts())
    def constructor(fields):
        w.note("constructor", fields)
        config, err = attempt("AttentionConfig(**fields)", AttentionConfig, **fields)
        if config is None:
            w.outcome(err)
            return
        check_config(config)
        w.outcome("constructed")
        w.outcome(exercise_run(w, config, full=False, max_bytes=64 << 20, max_s=6, sampled=True))

    # ---- 2. AttentionConfig.from_dict ----------------------------------------------------------
    @conf(1200)
    @given(config_dicts())
    def from_dict(d):
        w.note("from_dict", d)
        config, err = attempt("from_dict", AttentionConfig.from_dict, d)
        if config is None:
            w.outcome(err)
            return
        check_config(config)
        w.outcome("constructed")
        w.outcome(exercise_run(w, config, full=False, max_bytes=64 << 20, max_s=6, sampled=True))

    # ---- 3. session dicts ----------------------------------------------------------------------
    @st.composite
    def session_dicts(draw):
        cfg = draw(s["small_configs"]())
        sel = {"head": draw(st.integers(0, cfg.n_heads - 1)), "query": draw(st.integers(0, cfg.seq_len - 1)),
               "key": draw(st.integers(0, cfg.key_len - 1))}
        model = draw(st.one_of(st.none(), st.fixed_dictionaries(
            {"source": st.sampled_from(["gpt2", "./models/tiny", "org/name"])},
            optional={"text": st.text(max_size=20), "layer": st.integers(0, 40), "head": st.integers(0, 40),
                      "query": st.integers(0, 40), "key": st.integers(0, 40)})))
        d = {"format": S.FORMAT, "version": 1, "config": cfg.to_dict(), "selection": sel, "model": model}
        for _ in range(draw(st.integers(0, 3))):
            op = draw(st.integers(0, 11))
            if op == 0:
                return draw(s["hostile"])
            target = draw(st.sampled_from(["top", "config", "selection", "model"]))
            box = d if target == "top" else d.get(target)
            if not isinstance(box, dict):
                box = d
            names = list(box) or ["x"]
            if op <= 4:
                box[draw(st.sampled_from(names))] = draw(s["bad_value"])
            elif op <= 6:
                box.pop(draw(st.sampled_from(names)), None)
            elif op == 7:
                box[draw(s["keys"])] = draw(s["hostile"])
            elif op == 8:
                d["version"] = draw(st.one_of(st.sampled_from([0, 2, -1, 10**30, "1", 1.0, True, None, 1.5]),
                                              s["ints"]))
            elif op == 9:
                d[draw(st.sampled_from(["config", "selection", "model"]))] = draw(s["deep_values"])
            elif op == 10:  # an index just out of range, or negative
                k = draw(st.sampled_from(["head", "query", "key"]))
                d["selection"] = dict(sel, **{k: draw(st.sampled_from([-1, cfg.n_heads, cfg.seq_len,
                                                                       cfg.key_len, 2**31, MAX_SEED + 1]))})
            else:
                d["format"] = draw(st.sampled_from(["", S.FORMAT.upper(), S.FORMAT + " ", None, 1, [S.FORMAT]]))
        return d

    @conf(900)
    @given(session_dicts())
    def session_dicts_prop(d):
        w.note("session_dicts", d)
        sess, err = attempt("load_session(dict)", load_session, d)
        if sess is None:
            w.outcome(err)
            return
        check_session(sess)
        w.outcome("loaded")
        # what the loader accepts, the saver writes and the loader reads back the same
        path = tmp / "round.json"
        save_session(path, sess.config, sess.selection, sess.model)
        assert load_session(path) == sess, "save_session/load_session round trip"
        w.outcome(exercise_run(w, sess.config, full=False, max_bytes=64 << 20, max_s=6, sampled=True))

    # ---- 4. session files: the same dicts as JSON text, and hostile text and bytes ------------
    raw_texts = st.sampled_from([
        "", " ", "{", "}", "null", "[]", "0", '"x"', "NaN", "Infinity", "[" * 100000, '{"a":' * 50000,
        "1" * 5000, "-" + "9" * 4400, "1" * 400 + ".5", "1e400", '{"format": "attention-explorer.session", '
        '"version": 1e400}', '{"format": "attention-explorer.session", "version": ' + "1" * 5000 + "}",
        '{"format": "attention-explorer.session", "version": 1, "config": {"scale": Infinity}}',
        '{"format": "attention-explorer.session", "version": 1, "config": {"scale": NaN}}',
        '{"format": "attention-explorer.session", "version": 1, "config": {"seed": ' + "7" * 4000 + "}}",
        '{"format": "attention-explorer.session", "version": 1, "config": {"window": 1' + "0" * 30 + "}}",
        '{"format": "attention-explorer.session", "version": 1, "config": {"init_std": 1' + "0" * 400 + "}}",
        '{"format": "attention-explorer.session", "version": 1, "config": {"tokens": ["\\ud800"]}}',
        '{"format": "attention-explorer.session", "version": 1, "config": {"tokens": ["a"], "seq_len": "abc"}}',
        '{"format": "attention-explorer.session", "version": 1, "format": "other"}',
        '{"format": "attention-explorer.session", "version": 1, "model": {"source": "\\udfff"}}',
        '\ufeff{"format": "attention-explorer.session", "version": 1}',
    ])

    @st.composite
    def file_contents(draw):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            return draw(raw_texts).encode("utf-8")
        if kind == 1:
            return draw(st.binary(max_size=300))
        d = draw(session_dicts())
        try:
            text = json.dumps(d, ensure_ascii=draw(st.booleans()))
        except (ValueError, TypeError, RecursionError):  # a huge int, bytes, a non-string key
            text = draw(raw_texts)
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate → invalid UTF-8
        if kind == 4 and data:  # truncated, or one byte flipped
            cut = draw(st.integers(0, len(data) - 1))
            data = data[:cut] if draw(st.booleans()) else data[:cut] + bytes([draw(st.integers(0, 255))]) + data[cut + 1:]
        return data

    @conf(800)
    @given(file_contents())
    def session_files(data):
        w.note("session_files", data)
        path = tmp / "fuzz.json"
        path.write_bytes(data)
        sess, err = attempt("load_session(file)", load_session, path)
        try:  # what the file holds, parsed here: the loader must treat the dict the same way
            parsed = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            parsed = None
        with_dict = None if parsed is None else attempt("load_session(dict)", load_session, parsed)[0]
        if sess is None:
            w.outcome(err)
            assert with_dict is None, "a file refused whose JSON loads as a dict"
            return
        check_session(sess)
        if parsed is not None:
            assert with_dict == sess, "the file and its parsed dict load differently"
        w.outcome("loaded")

    # ---- 5. odd paths: never a non-regular file, never blocking, never unbounded -------------
    def session_paths():
        big = tmp / "big.json"
        with open(big, "wb") as fh:
            fh.write(b" " * (S.MAX_BYTES + 1))
        fifo = tmp / "fifo.json"
        os.mkfifo(fifo)
        link = tmp / "zero.json"
        os.symlink("/dev/zero", link)
        folder = tmp / "folder.json"
        folder.mkdir()
        paths = ["", " ", "\x00", "a\x00b", "/nonexistent/s.json", "x" * 5000, "/" + "y/" * 3000,
                 "/dev/null", "/dev/zero", "/dev/urandom", "/proc/self/mem", "/dev/stdin",
                 str(big), str(fifo), str(link), str(folder), Path(folder), "\ud800.json", tmp / "\udcff"]
        for p in paths:
            w.note("session_paths", p)
            sess, err = attempt("load_session(path)", load_session, p)
            assert sess is None, f"{safe_repr(p)} loaded as a session"
            w.outcome(err)

    # ---- 6. engine.run on small valid configs --------------------------------------------------
    @conf(700)
    @given(s["small_configs"](device=st.sampled_from(["cpu"] * 15 + ["cuda"])))
    def run_small(config):
        w.note("run_small", config)
        w.outcome(exercise_run(w, config, full=True))

    # ---- 7. engine.run on huge configs: refused by the memory budget, quickly ----------------
    @st.composite
    def huge_configs(draw):
        from engine.config import DTYPES, POSITIONALS

        sizes = {"d_model": draw(st.sampled_from([64, 1024, 4096, 16384, 32768, 65536])),
                 "seq_len": draw(st.sampled_from([8, 4096, 65536, 1 << 20])),
                 "kv_len": draw(st.sampled_from([None, 1, 8192, 1 << 20])),
                 "batch": draw(st.sampled_from([1, 64, 4096]))}
        heads = [h for h in (1, 2, 4, 16, 64, 1024) if sizes["d_model"] % h == 0 and sizes["d_model"] // h >= 2]
        return AttentionConfig(**sizes, n_heads=draw(st.sampled_from(heads)),
                               dtype=draw(st.sampled_from(DTYPES)), positional=draw(st.sampled_from(POSITIONALS)),
                               backend=draw(st.sampled_from(["eager", "sdpa", "flash"])),
                               causal=draw(st.booleans()), seed=draw(st.integers(0, 3)))

    @conf(300)
    @given(huge_configs())
    def run_huge(config):
        w.note("run_huge", config)
        w.outcome(exercise_run(w, config, full=False, max_bytes=512 << 20, max_s=8))

    return {"constructor": (constructor, n(1200)), "from_dict": (from_dict, n(1200)),
            "session_dicts": (session_dicts_prop, n(900)), "session_files": (session_files, n(800)),
            "session_paths": (session_paths, 19), "run_small": (run_small, n(700)),
            "run_huge": (run_huge, n(300))}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.path.insert(0, str(ROOT))
        sys.exit(worker_main(Path(sys.argv[2])))
    print("usage: python tests/test_fuzz.py --worker OUT.json  (pytest runs it for you)", file=sys.stderr)
    sys.exit(2)
