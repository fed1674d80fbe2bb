"""Memory refused before allocation (issue 19, defect 2, the engine's part).

``engine.memory_estimate`` counts the weights, the activations, the grids and the
temporaries; ``engine.run`` (and ``engine.decode``) refuse with a ConfigError
stating the estimate when it exceeds the budget, before anything is allocated.
The hostile configs run in a subprocess under an address-space limit
(``resource.setrlimit(RLIMIT_AS)``): every outcome must be that ConfigError, never
a MemoryError, an allocator RuntimeError or a kill.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import engine
from engine import AttentionConfig, ConfigError, memory_estimate, run

ROOT = Path(__file__).resolve().parents[1]
AS_LIMIT = 3 * 1024**3

_CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import engine
    from engine import AttentionConfig, ConfigError

    for call, kw in json.loads(sys.argv[1]):
        try:
            fn = engine.run if call == "run" else engine.decode
            fn(AttentionConfig(**kw))
            out = {{"ok": True}}
        except ConfigError as exc:
            out = {{"error": "ConfigError", "message": str(exc)}}
        except BaseException as exc:  # MemoryError, the allocator's RuntimeError, ...
            out = {{"error": type(exc).__name__, "message": str(exc)[:300]}}
        print(json.dumps(out), flush=True)
""")


def _capped(calls: list[tuple[str, dict]], env: dict | None = None, timeout: int = 240) -> list[dict]:
    """Run each (\"run\" | \"decode\", config kwargs) in one subprocess under RLIMIT_AS."""
    child_env = {k: v for k, v in os.environ.items() if k != "ATTN_EXPLORER_MEMORY_BUDGET"}
    child_env.update(env or {})
    r = subprocess.run([sys.executable, "-c", _CHILD.format(limit=AS_LIMIT), json.dumps(calls)],
                       cwd=ROOT, env=child_env, capture_output=True, text=True, timeout=timeout)
    results = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert r.returncode == 0 and len(results) == len(calls), (r.returncode, results, r.stderr[-2000:])
    return results


HOSTILE = [
    ("run", {"d_model": 65536}),  # 64 GiB of weights (the OOM kill of issue 19)
    ("run", {"d_model": 16384}),  # estimated "0.0 GiB" before, peaked at 5.3 GB
    ("run", {"seq_len": 1_000_000, "kv_len": 1, "d_model": 1024}),  # 4 GiB per activation
    # a few GiB of activations: under the default cap, over what the 3 GiB address space leaves
    ("run", {"seq_len": 150_000, "kv_len": 1, "d_model": 1024}),
    ("run", {"d_model": 8192, "n_heads": 8, "dtype": "bfloat16", "positional": "alibi",
             "backend": "sdpa", "seq_len": 4096}),
    ("decode", {"seq_len": 1_000_000, "d_model": 8, "n_heads": 2}),  # a (S, S) mask of 1 TB
]


@pytest.mark.slow
def test_hostile_configs_are_refused_before_allocating_under_a_memory_cap():
    results = _capped([*HOSTILE, ("run", {}), ("decode", {"seq_len": 16})])
    for (call, kw), res in zip(HOSTILE, results, strict=False):
        assert res.get("error") == "ConfigError", (call, kw, res)
        msg = res["message"]
        assert "needs about" in msg and "budget" in msg, msg
        assert "\n" not in msg and not re.search(r"(?<![\d.])0\.0 GiB", msg), msg
    assert results[-2] == {"ok": True} and results[-1] == {"ok": True}  # what fits still runs


def test_refusal_names_the_part_that_does_not_fit():
    with pytest.raises(ConfigError, match=r"weights \d+\.\d GiB.*lower d_model"):
        run(AttentionConfig(d_model=65536))
    with pytest.raises(ConfigError, match=r"activations \d+\.\d GiB.*lower seq_len"):
        run(AttentionConfig(seq_len=1_000_000, kv_len=1, d_model=1024))
    with pytest.raises(ConfigError, match=r"attention grids \d+\.\d GiB.*lower seq_len, kv_len, heads"):
        run(AttentionConfig(d_model=64, n_heads=64, seq_len=16384, batch=4))


def test_a_refusal_states_what_grows_with_batch_and_length():
    """Beyond batch 1 (issue 28, item 13): the estimate the window shows says which part grows
    with what, so a class sees why batch 8 or S = 16384 does not fit."""
    with pytest.raises(ConfigError) as eager:
        run(AttentionConfig(d_model=64, n_heads=64, seq_len=16384, batch=4))
    msg = str(eager.value)
    assert re.search(r"activations [\d.]+ MiB \(B·S·d_model\)", msg) and re.search(r"attention grids [\d.]+ GiB \(B·H·S·Skv\)", msg)
    assert "at B·H·S·Skv = 4·64·16384·16384, d_model 64; over the" in msg and "\n" not in msg, msg
    with pytest.raises(ConfigError) as fused:
        run(AttentionConfig(seq_len=300_000, kv_len=300_000, batch=8, backend="flash", causal=True, window=64))
    msg = str(fused.value)
    assert "no attention grid" in msg and "activations" in msg and "(B·S·d_model)" in msg, msg
    assert "mask and kernel temporaries" in msg and "(S·Skv, B·H·S·d_k)" in msg and len(msg) < 360, msg
    # the window's overview of a batch-8 long frame (the S=8192 flash case of the issue) is
    # refused naming batch among what to lower: its row statistics grow with B·H·S
    from engine.memory import check_lazy_memory

    cfg = AttentionConfig(backend="flash", seq_len=8192, n_heads=16, d_model=1024, batch=8)
    with pytest.raises(ConfigError, match=r"B·H·S row statistics.*lower seq_len, kv_len, batch or heads"):
        check_lazy_memory(cfg, "rows", budget=2**30)


def test_estimate_counts_weights_activations_grids_and_temporaries():
    base = memory_estimate(AttentionConfig())
    assert {"grids", "head", "fused", "weights", "activations", "temporaries", "total"} <= set(base)
    assert all(isinstance(v, int) and v >= 0 for v in base.values())

    wide = memory_estimate(AttentionConfig(d_model=16384))
    assert wide["weights"] >= 4 * 16384**2 * 4  # four d_model² float32 matrices
    assert wide["total"] >= wide["weights"] + wide["activations"] + wide["grids"]

    half = memory_estimate(AttentionConfig(d_model=16384, dtype="float16"))
    assert half["weights"] >= wide["weights"] + 4 * 16384**2 * 2  # the float16 copies too

    long = memory_estimate(AttentionConfig(seq_len=1_000_000, kv_len=1, d_model=1024))
    assert long["activations"] >= 6 * 1_000_000 * 1024 * 4  # x, q, context, output, ...

    cfg = AttentionConfig(seq_len=512, n_heads=4)
    grid = 4 * 512 * 512
    plain = memory_estimate(cfg)
    assert plain["grids"] >= 3 * grid * 4 and plain["head"] * 4 >= 3 * grid * 4 * 0.99
    for changed in (cfg.replace(positional="alibi"), cfg.replace(dtype="bfloat16")):
        est = memory_estimate(changed)
        assert est["temporaries"] > plain["temporaries"], changed
    assert plain["fused"] < plain["total"]
    # a fused run holds no grid (issue 16): it needs less than eager; its mask plane and the
    # ALiBi bias of a chunk of heads are its temporaries
    sdpa = memory_estimate(cfg.replace(backend="sdpa"))
    assert sdpa["total"] == sdpa["fused"] < plain["total"]
    for changed in (cfg.replace(backend="sdpa", pad=1), cfg.replace(backend="sdpa", positional="alibi")):
        assert memory_estimate(changed)["temporaries"] > sdpa["temporaries"], changed


@pytest.mark.slow
def test_estimate_covers_the_measured_peak():
    """The estimate is at least what a run really takes (peak RSS, measured in a subprocess)."""
    code = textwrap.dedent("""
        import json, sys
        from engine import AttentionConfig, memory_estimate, run
        run(AttentionConfig())
        def status(key):  # VmHWM: this process's peak RSS (ru_maxrss would count the parent's)
            for line in open("/proc/self/status"):
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        cfg = AttentionConfig(**json.loads(sys.argv[1]))
        base = status("VmRSS")
        trace = run(cfg)
        peak = status("VmHWM") - base
        print(json.dumps([peak, memory_estimate(cfg)["total"]]))
    """)
    for kw in ({"seq_len": 1536, "n_heads": 4, "dtype": "bfloat16"},
               {"d_model": 3072, "seq_len": 8},
               {"seq_len": 60_000, "kv_len": 1, "d_model": 256, "positional": "rope"}):
        r = subprocess.run([sys.executable, "-c", code, json.dumps(kw)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-1000:]
        peak, total = json.loads(r.stdout.splitlines()[-1])
        assert total >= peak, (kw, peak, total)


def test_budget_defaults_to_a_share_of_the_machine_and_can_be_overridden(monkeypatch):
    monkeypatch.delenv("ATTN_EXPLORER_MEMORY_BUDGET", raising=False)
    phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    budget = engine.trace.memory_budget()
    assert 0 < budget <= min(engine.trace.DEFAULT_MEMORY_BUDGET, phys // 2)

    monkeypatch.setenv("ATTN_EXPLORER_MEMORY_BUDGET", "1000")
    with pytest.raises(ConfigError, match="over the 1000 B memory budget"):
        run(AttentionConfig())
    monkeypatch.setenv("ATTN_EXPLORER_MEMORY_BUDGET", str(64 * 1024**3))
    assert run(AttentionConfig()).output.shape == (1, 8, 64)
    monkeypatch.setenv("ATTN_EXPLORER_MEMORY_BUDGET", "lots")
    with pytest.raises(ConfigError, match="ATTN_EXPLORER_MEMORY_BUDGET"):
        run(AttentionConfig())


@pytest.mark.slow
def test_weight_cache_is_bounded_in_bytes():
    """Many large-d_model runs (64 MiB of weights each) keep at most the cache bound alive, not 16 runs'."""
    code = textwrap.dedent("""
        import ctypes, gc, json
        from engine import AttentionConfig, run
        try:  # hand freed heap pages back, so RSS counts what is alive (glibc)
            trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            trim = lambda _pad: None
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        run(AttentionConfig(d_model=2048, seed=0))
        gc.collect()
        trim(0)
        first = rss()
        for seed in range(1, 13):
            run(AttentionConfig(d_model=2048, seed=seed))
        gc.collect()
        trim(0)
        print(json.dumps(rss() - first))
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 0, r.stderr[-1000:]
    growth = json.loads(r.stdout.splitlines()[-1])
    assert growth < 400 * 1024**2, f"RSS grew {growth / 2**20:.0f} MiB over 12 runs"


def test_weight_cache_keeps_the_latest_and_only_a_little_of_the_rest():
    """issue 19, item 11: a long session's RSS grew by what the weight cache filled up (128 MiB
    of 64 random changes' weights). The latest weights are kept up to the bound (a toggle at
    d_model 2048 draws nothing); all the others together stay within WEIGHT_CACHE_OLDER_BYTES."""
    import torch

    from engine.inputs import WEIGHT_CACHE_BYTES, WEIGHT_CACHE_OLDER_BYTES, Weights, _WeightCache

    def weights(mib: int) -> Weights:
        side = mib * 2**20 // 16  # four float32 matrices of `side` elements
        return Weights(*(torch.empty(side) for _ in range(4)))

    cache, made = _WeightCache(), []

    def get(key, mib):
        return cache.get(key, lambda: made.append(key) or weights(mib))

    assert WEIGHT_CACHE_OLDER_BYTES <= 16 * 2**20 and WEIGHT_CACHE_BYTES >= 64 * 2**20
    big = get("d2048", 64)
    assert get("d2048", 64) is big and made == ["d2048"]  # a toggle at the largest d_model
    for i in range(40):  # a session's worth of other layers, large and small
        get(("d1024", i), 16)
        get(("d512", i), 4)
        assert cache.nbytes <= 4 * 2**20 + WEIGHT_CACHE_OLDER_BYTES
    assert get(("d512", 39), 4) is not None and made.count(("d512", 39)) == 1  # recent small ones stay
    get("d2048", 64)
    assert made.count("d2048") == 2 and cache.nbytes <= WEIGHT_CACHE_BYTES
    get("small", 1)  # the large one is no longer the latest: dropped
    assert cache.nbytes <= 1 * 2**20 + WEIGHT_CACHE_OLDER_BYTES
    get(("d512", 0), 4)
    get("small", 1)
    assert made.count("small") == 1 and cache.nbytes == 5 * 2**20  # two small ones: both kept


# ---- native memory over many changes (issue 28, item 6) -----------------------------------------

_GROWTH_CHILD = textwrap.dedent("""
    import ctypes, gc, json, math, random, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import engine
    from engine import AttentionConfig, ConfigError, overflow_report, run, run_backend_comparison

    rng = random.Random(0)
    libc = ctypes.CDLL("libc.so.6")

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    def reading():
        run(AttentionConfig())
        gc.collect()
        libc.malloc_trim(0)
        return rss_mb()

    def config():
        d = rng.choice([32, 64, 128, 256, 512])
        h = rng.choice([h for h in (1, 2, 4, 8) if d % h == 0])
        s = min(384, max(1, int(math.exp(rng.uniform(0, math.log(385))))))
        return AttentionConfig(d_model=d, n_heads=h, seq_len=s, causal=rng.random() < 0.5,
                               dtype=rng.choice(["float32", "float16", "bfloat16"]),
                               backend=rng.choice(["eager", "sdpa", "flash"]), seed=rng.randint(0, 10**6))

    for _ in range(30):  # warm-up: caches, allocator pools
        try:
            run(config())
        except ConfigError:
            pass
    start = reading()
    for _ in range({n}):
        try:
            cfg = config()
            tr = run(cfg)
            run_backend_comparison(cfg)
            overflow_report(tr)
        except ConfigError:
            pass
    print(json.dumps({{"start": start, "end": reading()}}))
""")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and glibc's malloc_trim")
def test_reduced_precision_changes_do_not_grow_native_memory():
    """Random configs in float32, float16 and bfloat16 (a class changing sliders): RSS after gc
    and malloc_trim grew ~1 MB per change before torch's oneDNN kernel caches were bounded
    (engine.native; +299 MB over 300 runs); bounded, the same mix holds."""
    n = 200
    env = {k: v for k, v in os.environ.items() if k not in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")}
    r = subprocess.run([sys.executable, "-c", _GROWTH_CHILD.format(limit=AS_LIMIT, n=n)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    growth = got["end"] - got["start"]
    assert growth < 60, f"RSS grew {growth:.0f} MB over {n} changes (from {got['start']:.0f} MB)"


@pytest.mark.slow
def test_kernel_cache_values_that_would_crash_torch_are_replaced():
    """LRU_CACHE_CAPACITY=0, empty or a word made torch's ideep layer die with SIGSEGV on the
    first bfloat16 matmul: such a value is replaced by the bound, a working one is kept."""
    from engine.native import KERNEL_CACHE_ENTRIES, bound_kernel_caches

    for value in ("0", "", "abc", " ", "-0"):
        env = {"LRU_CACHE_CAPACITY": value, "ONEDNN_PRIMITIVE_CACHE_CAPACITY": "0"}
        bound_kernel_caches(env)
        assert env == {"LRU_CACHE_CAPACITY": str(KERNEL_CACHE_ENTRIES), "ONEDNN_PRIMITIVE_CACHE_CAPACITY": "0"}, value
    env = {"LRU_CACHE_CAPACITY": "8"}
    bound_kernel_caches(env)
    assert env == {"LRU_CACHE_CAPACITY": "8", "ONEDNN_PRIMITIVE_CACHE_CAPACITY": str(KERNEL_CACHE_ENTRIES)}
    code = ("import engine; engine.run(engine.AttentionConfig(d_model=256, n_heads=4, seq_len=64, "
            "dtype='bfloat16')); print('ran')")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LRU_CACHE_CAPACITY="0"))
    assert r.returncode == 0 and r.stdout.strip() == "ran", (r.returncode, r.stderr[-1000:])


def test_the_soak_changes_precision_and_seeds_as_a_class_does():
    """`bench --soak` measured +46 MB where a class's mix held +334 MB: it seldom left float32.
    Now over half of its runs are float16 or bfloat16, and a tenth of its steps new seeds."""
    import random
    from collections import Counter

    from explorer.bench.soak import soak_config, soak_step

    rng, cfg = random.Random(0), AttentionConfig()
    kinds, dtypes, seeds = Counter(), Counter(), set()
    for _ in range(2000):
        kind = soak_step(rng)
        kinds[kind] += 1
        if kind != "click":
            cfg = soak_config(rng, kind, cfg)
            dtypes[cfg.dtype] += 1
            seeds.add(cfg.seed)
    changes = sum(dtypes.values())
    assert dtypes["float16"] > changes / 4 and dtypes["bfloat16"] > changes / 4, dtypes
    assert kinds["seed"] > 150 and len(seeds) > 100, (kinds, len(seeds))
    assert kinds["click"] > 500 and kinds["fresh"] > 300 and kinds["control"] > 300, kinds
