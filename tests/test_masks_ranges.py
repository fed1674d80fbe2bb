"""Beyond batch 1 (issue 28, item 13): a fused trace and a long frame hold the mask as one key
range per query row (engine.masks.KeyRanges, O(S)), never the (S, Skv) bool grid (256 MiB at
S = 16384); ``trace.mask`` (the public (S, Skv) grid) is still there, built on first access."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from engine import AttentionConfig
from engine.masks import KeyRanges, build_mask
from engine.positional import query_positions
from explorer.frame import build_frame

ROOT = Path(__file__).resolve().parents[1]


def _by_definition(cfg: AttentionConfig) -> torch.Tensor:
    """(S, Skv) bool from the masks' element-wise definitions (docs/contract.md), cell by cell."""
    S, Skv = cfg.seq_len, cfg.key_len
    pos = query_positions(S, Skv).tolist()
    out = torch.zeros(S, Skv, dtype=torch.bool)
    for i in range(S):
        for j in range(Skv):
            ok = j < Skv - cfg.pad
            if cfg.causal:
                ok = ok and j <= pos[i]
            if cfg.window is not None:
                ok = ok and (pos[i] - cfg.window < j if cfg.causal else abs(pos[i] - j) < cfg.window)
            out[i, j] = ok
    return out


MASKS = [
    {},
    {"causal": True},
    {"causal": True, "kv_len": 13},
    {"window": 3},
    {"causal": True, "window": 4},
    {"pad": 2},
    {"pad": 9},  # every key padding: rows that see nothing
    {"causal": True, "window": 2, "pad": 3, "kv_len": 12},
    {"window": 5, "kv_len": 6},
]


@pytest.mark.parametrize("backend", ["eager", "sdpa", "flash"])
@pytest.mark.parametrize("kw", MASKS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "none")
def test_trace_mask_is_the_grid_it_was_for_every_backend(kw, backend):
    cfg = AttentionConfig(seq_len=9, d_model=16, n_heads=2, backend=backend, **kw)
    tr = engine.run(cfg)
    want = _by_definition(cfg)
    assert tr.mask.dtype == torch.bool and tr.mask.shape == (cfg.seq_len, cfg.key_len)
    assert torch.equal(tr.mask, want) and torch.equal(tr.mask, build_mask(cfg))
    assert torch.equal(tr.key_ranges.dense(), want)
    assert torch.equal(tr.key_ranges.any(-1), want.any(-1)) and tr.key_ranges.all() == bool(want.all())
    assert torch.equal(tr.key_ranges.counts(), want.sum(-1))
    # the masked scores are where the mask says (the fused path reads rows of the ranges)
    hidden = ~want
    if bool(hidden.any()):
        assert bool(torch.isinf(tr.scores[:, :, hidden]).all())
    assert not bool(torch.isinf(tr.scores[:, :, want]).any())


@pytest.mark.parametrize("kw", MASKS[1:5] + MASKS[7:], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_key_ranges_index_like_the_grid(kw):
    cfg = AttentionConfig(seq_len=9, **kw)
    dense = build_mask(cfg)
    ranges = KeyRanges.of(cfg)
    rows = np.array([0, 3, 8])
    for index in (4, -1, (2, 5), (-1, -2), slice(2, 7), (slice(1, 8, 2), slice(3, None)), (slice(None), 4),
                  (5, slice(0, 3))):
        assert torch.equal(torch.as_tensor(ranges[index]), dense[index]), index
        assert np.array_equal(ranges.numpy()[index], dense.numpy()[index]), index
    assert torch.equal(ranges[torch.from_numpy(rows)], dense[torch.from_numpy(rows)])
    assert np.array_equal(ranges.numpy()[rows], dense.numpy()[rows])
    assert np.array_equal(ranges.numpy()[rows, 2], dense.numpy()[rows, 2])
    assert ranges.shape == tuple(dense.shape) and ranges.numpy().shape == tuple(dense.shape)


def test_unmasked_rows_take_no_memory_and_the_grid_is_its_own():
    """A block of rows with nothing masked (every row of an unmasked run's passes) reads as
    True everywhere and holds no (rows, Skv) plane: at S = 8192 those planes, one a block,
    left the allocator holding 1.4 GiB in some runs (2 of 7). The grid `dense()` gives (and
    `trace.mask`) is an array of its own, writable."""
    m = KeyRanges.of(AttentionConfig(seq_len=4096))
    for block, shape in ((m[0:2048], (2048, 4096)), (m.numpy()[0:2048], (2048, 4096)), (m[100, :], (4096,)),
                         (m[np.arange(5), 7], (5,))):
        assert tuple(block.shape) == shape and bool(block.all())
        held = block.untyped_storage().nbytes() if isinstance(block, torch.Tensor) else block.base.nbytes
        assert held <= 1, held
    grid = m.dense()
    grid[0, 0] = False  # (its own memory: nothing else changes)
    assert bool(m[0, 0]) and bool(m.dense()[0, 0])
    causal = KeyRanges.of(AttentionConfig(seq_len=6, causal=True))
    assert torch.equal(causal[2:4], build_mask(AttentionConfig(seq_len=6, causal=True))[2:4])


def test_a_long_frame_holds_its_mask_as_rows_and_reads_it_like_the_grid():
    """A long fused frame (S > LOD_CELLS): the mask is O(S) key ranges, indexed as the grid the
    panels read (a row, a cell, a zoomed region, the sample rows, which rows see a key), and no
    array of the frame has S·Skv cells."""
    cfg = AttentionConfig(seq_len=1200, d_model=16, n_heads=2, backend="sdpa", causal=True, window=300, pad=7)
    f = build_frame(cfg)
    S, Skv = cfg.seq_len, cfg.key_len
    want = build_mask(cfg).numpy()
    assert f.lod is not None and isinstance(f.mask, KeyRanges)
    assert np.array_equal(f.mask[5], want[5]) and bool(f.mask[700, 650]) == bool(want[700, 650])
    assert np.array_equal(f.mask[100:400, 90:300], want[100:400, 90:300])
    assert np.array_equal(f.score_mask, want[f.sample_rows])
    assert np.array_equal(f.mask.any(-1), want.any(-1)) and f.mask.all() is False
    arrays = {name: v for name, v in vars(f).items() if isinstance(v, np.ndarray)}
    assert arrays and all(a.size < S * Skv // 4 for a in arrays.values()), \
        {n: a.shape for n, a in arrays.items() if a.size >= S * Skv // 4}
    # the numbers drawn from the mask: keys seen per row (the √d_k sweep), fully masked rows
    assert sum(n for _k, n in f.sweep_counts) == int((want.sum(-1) > 0).sum())


_CHILD = textwrap.dedent("""
    import json, resource, sys
    import engine
    from engine import AttentionConfig
    from explorer.frame import sweep_key_counts

    def vm(key):  # this process's VmSize or VmPeak, bytes
        return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key + ":"))

    progress = lambda d, t: None  # as the window's worker asks (paced pieces)
    # warm up first (torch's threads and their heaps), so the cap measures this run alone
    engine.run(AttentionConfig(seq_len=600, d_model=16, n_heads=1, backend="sdpa", causal=True), progress=progress)
    base = vm("VmSize")
    resource.setrlimit(resource.RLIMIT_AS, (base + {headroom}, base + {headroom}))
    cfg = AttentionConfig(**json.loads(sys.argv[1]))
    try:
        tr = engine.run(cfg, progress=progress)
        counts = sweep_key_counts(cfg, tr.key_ranges.numpy())
        out = {{"ok": True, "rows": sum(n for _k, n in counts), "keys": [counts[0][0], counts[-1][0]],
               "used_mib": (vm("VmPeak") - base) / 2**20}}
    except BaseException as exc:  # the old code: a ConfigError (its estimate counted the planes) or MemoryError
        out = {{"ok": False, "error": type(exc).__name__, "message": str(exc)[:300]}}
    print(json.dumps(out))
""")

#: address space the S = 16384 run may add to the warmed-up process: its (S, Skv) bool mask
#: alone is 256 MiB, and building it stepped through three such planes
HEADROOM = 400 * 2**20


@pytest.mark.slow
def test_an_s16384_fused_run_never_builds_the_dense_mask_under_a_memory_cap():
    """S = 16384, one head, sdpa, causal (the window's long frame starts with this run, paced):
    it holds the mask's row ranges, and what reads them (the keys each row sees) needs no grid.
    Measured: the run added 1480 − 700 MiB of address space before (the mask's planes), now
    ~60 MiB."""
    cfg = {"seq_len": 16384, "d_model": 16, "n_heads": 1, "backend": "sdpa", "causal": True}
    env = {k: v for k, v in __import__("os").environ.items() if k != "ATTN_EXPLORER_MEMORY_BUDGET"}
    r = subprocess.run([sys.executable, "-c", _CHILD.format(headroom=HEADROOM), json.dumps(cfg)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.splitlines()[-1])
    assert res["ok"], res
    assert res["rows"] == 16384 and res["keys"] == [1, 16384], res
