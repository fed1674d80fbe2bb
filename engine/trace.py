"""engine.run: one attention layer computed exactly, every intermediate kept.

    X ─(+pos)→ x ─W_Q,W_K,W_V→ Q, K, V ─(RoPE)→ QKᵀ → ·scale → +ALiBi → mask
      → softmax → ·V → merge heads → W_O → output
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import torch

from . import positional as pe
from .backends import AttentionCall, BackendUnavailable, attend
from .backends.eager import eager_steps
from .config import AttentionConfig, ConfigError
from .inputs import Weights, init_weights, memory_embeddings, token_embeddings, torch_dtype
from .masks import build_mask
from .memory import DEFAULT_MEMORY_BUDGET, check_memory, memory_budget, memory_estimate

__all__ = ["DEFAULT_MEMORY_BUDGET", "AttentionTrace", "memory_budget", "memory_estimate", "run",
           "run_backend_comparison"]



@dataclass
class AttentionTrace:
    """Every tensor of one attention computation, on the CPU (see DESIGN.md).

    x (B,S,d) · q (B,H,S,Dh) · k, v (B,Hkv,Skv,Dh) · scores_raw, scores, weights
    (B,H,S,Skv) · mask (S,Skv) · context (B,H,S,Dh) · output (B,S,d) ·
    softmax_jacobian_norm, entropy (B,H,S).
    """

    config: AttentionConfig
    x: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    scores_raw: torch.Tensor
    scores: torch.Tensor
    mask: torch.Tensor
    weights: torch.Tensor
    context: torch.Tensor
    output: torch.Tensor
    softmax_jacobian_norm: torch.Tensor
    entropy: torch.Tensor
    backend_impl: str
    backend_max_abs_diff: float | None
    weights_used: Weights | None = None  # the projections, float32
    eager_output: torch.Tensor | None = None  # (B,S,d), when a fused backend ran
    timings_ms: dict[str, float] = field(default_factory=dict)


def softmax_jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """‖∂softmax/∂s‖_F per row, (…, N) → (…), in float32.

    J = diag(p) − p pᵀ, so ‖J‖²_F = Σp² − 2Σp³ + (Σp²)²: O(N) per row. It is
    largest for a flat row and → 0 as softmax saturates to one-hot, which is why
    unscaled scores stop learning.
    """
    p = weights.float()
    s2 = torch.linalg.vecdot(p, p)
    s3 = torch.linalg.vecdot(p * p, p)
    return (s2 - 2 * s3 + s2 * s2).clamp(min=0).sqrt()


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy −Σ p log p of each row, in nats (0·log 0 = 0), float32."""
    p = weights.float()
    # log of p clamped to the smallest normal float: 0·log(tiny) = 0 exactly, and this
    # is ~2.5× faster than torch.special.xlogy on CPU (NaN rows stay NaN)
    logp = p.clamp_min(torch.finfo(torch.float32).tiny).log_()
    return -torch.linalg.vecdot(p, logp)


def _split_heads(t: torch.Tensor, n_heads: int) -> torch.Tensor:
    B, N, _ = t.shape
    return t.view(B, N, n_heads, -1).transpose(1, 2)  # (B, heads, N, Dh)


def _max_abs_diff(out: torch.Tensor, ref: torch.Tensor) -> float:
    """max |out − ref| where the eager reference is finite (NaN rows are reported apart)."""
    ok = torch.isfinite(ref)
    if not bool(ok.any()):
        return 0.0
    d = (out.float() - ref.float()).abs()[ok]
    return float(d.max()) if d.numel() else 0.0


def run(config: AttentionConfig, x: torch.Tensor | None = None) -> AttentionTrace:
    """Compute one attention layer for `config`; see AttentionTrace for shapes.

    `x` optionally gives the input embeddings (B, S, d_model) before positional
    encoding; otherwise they are drawn N(0, 1) from the seed.
    """
    if not isinstance(config, AttentionConfig):
        raise ConfigError(f"run() needs an AttentionConfig, got {type(config).__name__}")
    # weights, activations, grids and temporaries against the budget, before any allocation
    check_memory(config)
    B, S, d, H = config.batch, config.seq_len, config.d_model, config.n_heads
    if x is not None:
        x = torch.as_tensor(x)
        if tuple(x.shape) != (B, S, d):
            raise ConfigError(f"x must have shape (batch, seq_len, d_model) = {(B, S, d)}, got {tuple(x.shape)}")
    dev = torch.device(config.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise BackendUnavailable("device 'cuda' was asked for but no CUDA device is available")
    dtype = torch_dtype(config.dtype)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    with torch.inference_mode():
        x0 = (token_embeddings(config) if x is None else x.detach().float().cpu()).clone()
        kv_src = None if config.kv_len is None else memory_embeddings(config)
        Skv = config.key_len
        q_pos, k_pos = pe.query_positions(S, Skv), torch.arange(Skv)
        if config.positional == "sinusoidal":
            x0 += pe.sinusoidal(q_pos, d)
            if kv_src is not None:
                kv_src += pe.sinusoidal(k_pos, d)
        elif config.positional == "learned":
            x0 += pe.learned(q_pos, d, config.seed)
            if kv_src is not None:
                kv_src += pe.learned(k_pos, d, config.seed)
        w = init_weights(config)
        xd = x0.to(dev, dtype)
        src = xd if kv_src is None else kv_src.to(dev, dtype)
        q = _split_heads(xd @ w.w_q.to(dev, dtype), H)  # (B, H, S, Dh)
        k = _split_heads(src @ w.w_k.to(dev, dtype), config.kv_heads)  # (B, Hkv, Skv, Dh)
        v = _split_heads(src @ w.w_v.to(dev, dtype), config.kv_heads)
        if config.positional == "rope":
            q, k = pe.rope(q, q_pos.to(dev)), pe.rope(k, k_pos.to(dev))
        mask = build_mask(config)
        bias = pe.alibi_bias(H, S, Skv) if config.positional == "alibi" else None
        call = AttentionCall(config, q, k, v, mask.to(dev), bias, config.effective_scale)
        steps = eager_steps(call)
        w_o = w.w_o.to(dev, dtype)

        def merge(context: torch.Tensor) -> torch.Tensor:
            return context.transpose(1, 2).reshape(B, S, d) @ w_o  # (B, S, d)

        eager_out = merge(steps["context"])
        timings["eager"] = (time.perf_counter() - t0) * 1e3

        impl, diff, output = "eager", None, eager_out
        if config.backend != "eager":
            t1 = time.perf_counter()
            context, impl = attend(config.backend, call)
            output = merge(context.to(dtype))
            timings["backend"] = (time.perf_counter() - t1) * 1e3
            diff = _max_abs_diff(output, eager_out)

        t2 = time.perf_counter()
        weights = steps["weights"].cpu()
        trace = AttentionTrace(
            config=config,
            x=x0 if x0.dtype == dtype else x0.to(dtype),
            q=q.cpu(), k=k.cpu(), v=v.cpu(),
            scores_raw=steps["scores_raw"].cpu(), scores=steps["scores"].cpu(),
            mask=mask, weights=weights,
            context=steps["context"].cpu(), output=output.cpu(),
            softmax_jacobian_norm=softmax_jacobian_norm(weights),
            entropy=row_entropy(weights),
            backend_impl=impl, backend_max_abs_diff=diff,
            weights_used=w,
            eager_output=None if config.backend == "eager" else eager_out.cpu(),
            timings_ms=timings,
        )
        timings["diagnostics"] = (time.perf_counter() - t2) * 1e3
    timings["total"] = (time.perf_counter() - t0) * 1e3
    return trace


def run_backend_comparison(config: AttentionConfig, x: torch.Tensor | None = None) -> dict[str, dict]:
    """Each backend → {"impl", "max_abs_diff", "ms"} or {"error"}: for the diagnostics panel."""
    from .backends import available_backends

    out: dict[str, dict] = {}
    for name, why in available_backends(config.device, config.dtype).items():
        if why is not None:
            out[name] = {"error": why}
            continue
        try:
            tr = run(replace(config, backend=name), x)
        except (BackendUnavailable, ConfigError) as exc:
            out[name] = {"error": str(exc)}
            continue
        ms = tr.timings_ms.get("backend", tr.timings_ms["eager"])
        out[name] = {"impl": tr.backend_impl, "max_abs_diff": tr.backend_max_abs_diff, "ms": ms}
    return out


