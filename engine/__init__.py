"""Attention Explorer's engine: attention computed exactly, Qt-free.

Never imports PySide6, pyqtgraph or explorer (a test enforces it).
"""

from . import native  # noqa: F401 (first: bounds torch's native kernel caches before any matmul)
from .backends import BackendUnavailable, available_backends
from .config import MAX_SEED, AttentionConfig, ConfigError
from .costs import stage_costs
from .diagnostics import (
    head_summary,
    kv_cache_comparison,
    overflow_report,
    scaling_sweep,
    trace_head_summary,
)
from .efficient.report import ApproximationReport, approximation_report
from .kvcache import DecodeStep, KVCache, decode, decode_step_flops, decode_steps, kv_cache_bytes
from .tiled import TileStep, tiled_attention
from .trace import AttentionTrace, memory_estimate, run, run_backend_comparison

__all__ = [
    "MAX_SEED",
    "ApproximationReport",
    "AttentionConfig",
    "AttentionTrace",
    "BackendUnavailable",
    "ConfigError",
    "DecodeStep",
    "KVCache",
    "TileStep",
    "approximation_report",
    "available_backends",
    "decode",
    "decode_step_flops",
    "decode_steps",
    "head_summary",
    "kv_cache_bytes",
    "kv_cache_comparison",
    "memory_estimate",
    "overflow_report",
    "run",
    "run_backend_comparison",
    "scaling_sweep",
    "stage_costs",
    "tiled_attention",
    "trace_head_summary",
]
