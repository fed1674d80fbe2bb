"""Bounds on the native kernel caches torch keeps for its CPU matmuls.

oneDNN, which runs torch's CPU float16/bfloat16 (and some float32) matmuls, caches every
kernel it builds for a new shape in two caches of 1024 entries each by default: oneDNN's own
primitive cache (`ONEDNN_PRIMITIVE_CACHE_CAPACITY`) and the ideep cache of PyTorch's oneDNN
layer (`LRU_CACHE_CAPACITY`). A kernel for an AMX or AVX512-FP16 CPU is ~0.3 MB, and every
config of the explorer has new shapes, so a class changing sliders in reduced precision grew
the process by ~1 MB per change (measured: +299 MB over 300 random mixed-dtype engine runs,
RSS after gc and malloc_trim; float32 alone +4 MB). With both at 32 entries the same mix
grew +15 MB and stayed flat, and a seed change (the same shapes again) runs as fast as with
the defaults; at 0 entries it ran 3x slower. Both variables are read when oneDNN is first
used, so this module is imported before anything else of the engine; a value the user set
wins.
"""

from __future__ import annotations

import os

#: entries of each cache: the shapes of the last few configs (a drag over one slider, a seed
#: change) stay cached
KERNEL_CACHE_ENTRIES = 32
CACHE_VARIABLES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")


def bound_kernel_caches(environ: dict | None = None) -> None:
    """Set each cache's capacity to KERNEL_CACHE_ENTRIES unless it is set already."""
    env = os.environ if environ is None else environ
    for name in CACHE_VARIABLES:
        env.setdefault(name, str(KERNEL_CACHE_ENTRIES))


bound_kernel_caches()
