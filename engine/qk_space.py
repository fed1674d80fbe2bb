"""The queries and keys of one head in one plane: one PCA over both together (Qt-free).

    points, explained, components, mean = project_qk(queries, keys, dims=2)
    space = qk_space(q, k, scale=config.effective_scale)       # q (S, Dh), k (Skv, Dh)
    space = head_qk_space(config, q, k, head)                  # q (H, S, Dh), k (Hkv, Skv, Dh)

**PCA.** The n_q + n_k vectors (queries first) are centred on their common mean μ (Dh,); the
components (dims, Dh) are the first right singular vectors of the centred matrix (numpy SVD
in float64) and a vector v lands at (v − μ) @ componentsᵀ. ``explained`` (dims,) is each
component's share of the total variance (σ_i² / Σσ²), descending; 1 − Σ explained is what
the plane leaves out. One PCA for both kinds, so queries and keys share one coordinate
system (engine.models.circuits.qk_embedding uses the same function for a real model).

**The scores.** softmax's input is (scale · q_i) · k_j, plus ALiBi's bias and the mask,
which are not vectors and are not in this picture. `qk_space` multiplies the queries by
``scale`` before the PCA, so the plane holds the vectors whose dot products are the scores:
a smaller scale pulls the queries towards the zero vector, RoPE turns both by their
positions. Measured from ``origin`` (where the zero vector lands: −μ @ componentsᵀ) the
plane's dot product of a query and a key is the score restricted to the plane,
(scale·q) P kᵀ with P = componentsᵀ @ components; `QKSpace.plane_score` gives it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_POINTS", "QKSpace", "head_qk_space", "project_qk", "qk_space"]

#: most positions of each kind a `qk_space` keeps (evenly spaced beyond that)
MAX_POINTS = 2048


def _array(x) -> np.ndarray:
    """numpy or torch (any device, any float dtype) → float64 numpy."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=np.float64)


def project_qk(queries, keys, *, dims: int = 2
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One PCA over queries (n_q, Dh) and keys (n_k, Dh) together (numpy or torch):
    (points (n_q + n_k, dims) float64, queries first; explained variance ratios (dims,)
    descending (zeros when every vector is the same); components (dims, Dh); mean (Dh,)).
    ValueError (one line) for other shapes or a ``dims`` outside 1..min(n_q + n_k, Dh)."""
    q, k = _array(queries), _array(keys)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1]:
        raise ValueError(f"queries and keys must be (n, Dh) with the same Dh, not "
                         f"{tuple(q.shape)} and {tuple(k.shape)}")
    x = np.concatenate([q, k])
    n, dh = x.shape
    if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= min(n, dh):
        raise ValueError(f"dims must be between 1 and {min(n, dh)} here, not {dims!r}")
    if not np.isfinite(x).all():
        raise ValueError("the queries or keys hold NaN or ±inf: no projection")
    mean = x.mean(0)
    _u, s, vt = np.linalg.svd(x - mean, full_matrices=False)
    var = s**2
    total = var.sum()
    explained = var[:dims] / total if total > 0 else np.zeros(dims)
    comps = vt[:dims]
    return (x - mean) @ comps.T, explained, comps, mean


@dataclass(frozen=True, eq=False)
class QKSpace:
    """Queries and keys of one head in one PCA plane (see the module docstring).

    ``points`` (n_q + n_k, dims) float64: the queries (× ``scale``) at ``query_positions``
    (n_q,) first, then the keys at ``key_positions`` (n_k,); every ``step``-th position of
    each kind when there were more than `MAX_POINTS`. ``explained`` (dims,), ``components``
    (dims, Dh), ``mean`` (Dh,), ``origin`` (dims,): where the zero vector lands. ``head``
    and ``kv_head`` (-1 when not given), ``scale`` the queries' multiplier (the scores').
    """

    points: np.ndarray
    explained: np.ndarray
    components: np.ndarray
    mean: np.ndarray
    origin: np.ndarray
    scale: float
    query_positions: np.ndarray
    key_positions: np.ndarray
    step: int = 1
    head: int = -1
    kv_head: int = -1

    @property
    def n_queries(self) -> int:
        return int(self.query_positions.size)

    @property
    def n_keys(self) -> int:
        return int(self.key_positions.size)

    def query_point(self, i: int) -> np.ndarray:
        """(dims,) the i-th query shown (position ``query_positions[i]``)."""
        return self.points[i]

    def key_point(self, j: int) -> np.ndarray:
        """(dims,) the j-th key shown (position ``key_positions[j]``)."""
        return self.points[self.n_queries + j]

    def plane_score(self, i: int, j: int) -> float:
        """(p_q − origin) · (p_k − origin) of the i-th query and j-th key shown: their score
        restricted to the plane (the whole score when the plane explains everything)."""
        return float(np.dot(self.query_point(i) - self.origin, self.key_point(j) - self.origin))


def _positions(n: int, max_points: int) -> tuple[np.ndarray, int]:
    step = max(1, math.ceil(n / max_points))
    return np.arange(0, n, step), step


def qk_space(queries, keys, *, scale: float = 1.0, dims: int = 2, max_points: int = MAX_POINTS,
             head: int = -1, kv_head: int = -1) -> QKSpace:
    """queries (S, Dh) × ``scale`` and keys (Skv, Dh) in one PCA space of ``dims`` (≤
    min(Dh, points)) components; every ``step``-th position of each kind when S or Skv is
    over ``max_points`` (the same step for both). ValueError (one line) as `project_qk`."""
    q, k = _array(queries), _array(keys)
    if q.ndim != 2 or k.ndim != 2:
        raise ValueError(f"queries and keys must be (n, Dh), not {tuple(q.shape)} and {tuple(k.shape)}")
    if not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number, not {scale!r}")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise ValueError(f"max_points must be an integer >= 1, not {max_points!r}")
    _qp, step = _positions(max(q.shape[0], k.shape[0]), max_points)
    qpos, kpos = np.arange(0, q.shape[0], step), np.arange(0, k.shape[0], step)
    points, explained, comps, mean = project_qk(q[qpos] * scale, k[kpos], dims=dims)
    return QKSpace(points=points, explained=explained, components=comps, mean=mean,
                   origin=-(mean @ comps.T), scale=float(scale), query_positions=qpos,
                   key_positions=kpos, step=step, head=head, kv_head=kv_head)


def head_qk_space(config, q, k, head: int, *, dims: int = 2, max_points: int = MAX_POINTS) -> QKSpace:
    """`qk_space` of query head ``head`` of an `AttentionConfig`'s layer: q (H, S, Dh) of
    one batch row (after RoPE, as the trace holds it), k (Hkv, Skv, Dh); the keys are those
    of the KV head ``head`` reads (GQA, MQA), the queries × ``config.effective_scale``.
    ``dims`` is lowered to what the data allows (Dh = 1, a single point of each kind)."""
    if isinstance(head, bool) or not isinstance(head, int | np.integer) or not 0 <= head < config.n_heads:
        raise ValueError(f"head must be 0..{config.n_heads - 1}, not {head!r}")
    g = config.kv_head_of(int(head))
    qh, kg = _array(q[head]), _array(k[g])
    n = min(qh.shape[0], max_points) + min(kg.shape[0], max_points)
    return qk_space(qh, kg, scale=config.effective_scale, dims=max(1, min(dims, qh.shape[1], n)),
                    max_points=max_points, head=int(head), kv_head=g)
