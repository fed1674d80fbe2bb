"""Bounds on the native kernel caches torch keeps for its CPU matmuls.

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
"""

from __future__ import annotations

import os

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


def _positive(value: str | None) -> bool:
    try:
        return value is not None and int(value.strip()) >= 1
    except ValueError:
        return False


bound_kernel_caches()
