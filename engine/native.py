"""Bounds on the native kernel caches torch keeps for its CPU matmuls, and on the C heap.

oneDNN, which runs torch's CPU float16/bfloat16 (and some float32) matmuls, caches every
kernel it builds for a new shape in two caches of 1024 entries each by default: oneDNN's own
primitive cache (`ONEDNN_PRIMITIVE_CACHE_CAPACITY`) and the ideep cache of PyTorch's oneDNN
layer (`LRU_CACHE_CAPACITY`). A kernel for an AMX or AVX512-FP16 CPU is ~0.3 MB, and every
config of the explorer has new shapes, so a class changing sliders in reduced precision grew
the process by ~1 MB per change (measured: +299 MB over 300 random mixed-dtype engine runs,
RSS after gc and malloc_trim; float32 alone +4 MB). With both at 32 entries the same mix
grew +15 MB and stayed flat; in the window (`bench --soak 1000` with float16 and bfloat16 in
over half of its runs) 32 entries still held +42-52 MB, 16 entries +33 MB, flat after the
first hundred changes, and a seed change (the same shapes again: the run and the backend
comparison) runs as fast as with the defaults (bfloat16 d_model 512, S 256: 25 ms at 16, 32
or 1024 entries). Both variables are read when oneDNN is first used, so this module is
imported before anything else of the engine; a value the user set wins, unless it would
crash: torch's ideep layer dies with SIGSEGV on its first bfloat16 matmul when
`LRU_CACHE_CAPACITY` is 0, empty or not a number (torch 2.13), so such a value is replaced.

**The C heap** (issue 46, item 12). glibc serves a block of at least its mmap threshold with
its own mmap, given back whole when freed; the threshold starts at 128 KiB and rises to the
size of every such block freed, up to 32 MiB. After one large config, the arrays of the next
configs up to that size come from the heap, between the small objects made meanwhile, which
can then pin those pages where malloc_trim cannot give them back. Measured over 1,000 changes
of `bench --soak --seed 29` (readings after gc and malloc_trim, less the weight cache): the
heap's bytes in use grew ~5 MiB (the bounded holders filling), glibc's arenas from 160 to
335 and 454 MiB, and two of three runs read +12 and +31 MiB above the trend at a reading (the
last run's end: +41 MiB in all). With the threshold fixed at 1 MiB or at
MMAP_THRESHOLD_BYTES (8 MiB; fixing it also stops it rising) the readings followed the bytes
in use (+9 MiB over 900 changes, the same at 1 and 8 MiB). 8 MiB, not less: a frame's arrays
below it keep reusing heap pages (S = 256, 16 heads: 4 MiB grids, ~2,000 page faults a frame
either way; with 1 MiB, ~16,500). A threshold the user set (``MALLOC_MMAP_THRESHOLD_``,
``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=…``) wins.
"""

from __future__ import annotations

import os
import sys

#: entries of each cache: the shapes of the last few configs (a drag over one slider, a seed
#: change) stay cached
KERNEL_CACHE_ENTRIES = 16
CACHE_VARIABLES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")
#: the variables whose value must be a whole number of at least 1 (else a crash, not a bound)
POSITIVE_ONLY = ("LRU_CACHE_CAPACITY",)


def bound_kernel_caches(environ: dict | None = None) -> None:
    """Set each cache's capacity to KERNEL_CACHE_ENTRIES unless it is set already (to a
    value that works: see POSITIVE_ONLY)."""
    env = os.environ if environ is None else environ
    for name in CACHE_VARIABLES:
        if name in POSITIVE_ONLY and not _positive(env.get(name)):
            env.pop(name, None)
        env.setdefault(name, str(KERNEL_CACHE_ENTRIES))


#: blocks from this size up get their own mmap, given back whole when freed (glibc's default
#: starts at 128 KiB and rises up to 32 MiB: see the module docstring)
MMAP_THRESHOLD_BYTES = 8 * 1024**2
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def fix_mmap_threshold(environ: dict | None = None, threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes (mallopt), unless the user set one;
    True when it was set here. Nothing off glibc."""
    env = os.environ if environ is None else environ
    if "MALLOC_MMAP_THRESHOLD_" in env or "mmap_threshold" in env.get("GLIBC_TUNABLES", ""):
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(name) if name else None
        return bool(libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, int(threshold)) == 1)
    except (OSError, AttributeError, TypeError):
        return False


def _positive(value: str | None) -> bool:
    try:
        return value is not None and int(value.strip()) >= 1
    except ValueError:
        return False


bound_kernel_caches()
fix_mmap_threshold()
