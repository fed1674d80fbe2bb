"""A run's step records as preallocated arrays, and the thinned views its curves are given.

The training lab redraws ~10 times a second while a run grows by thousands of steps. Two
costs grew with it: concatenating every record array on each update (O(steps) per
redraw) and handing pyqtgraph curves of every step (its bounds, path and downsampling
are O(points) per setData and per paint). So:

- `Series` keeps the records in arrays of a capacity that doubles (amortised O(new steps)
  per update), read as views of the filled part;
- `Thin` gives a curve at most `points_for(its plot's width)` points (one per 2 px, at
  most MAX_POINTS): every k-th step, the last always included (the values shown are real
  records, not averages), written into arrays preallocated once per curve.
"""

from __future__ import annotations

import numpy as np

#: the most points one curve is given, however wide its plot
MAX_POINTS = 600
#: and at most one per this many pixels of its plot's width: 12 score curves of 600 points
#: cost 12 ms of the UI thread a redraw (path building and painting), of 200 points ~4 ms
PX_PER_POINT = 2.0
#: the least, for a plot not laid out yet
MIN_POINTS = 50


def points_for(width_px: float) -> int:
    """The most points a curve in a plot ``width_px`` wide is given."""
    if not width_px or width_px <= 0:
        return MAX_POINTS
    return max(MIN_POINTS, min(MAX_POINTS, int(width_px / PX_PER_POINT)))

#: the per-head curves: (name, TrainStep attribute or score name)
HEAD_FIELDS = ("entropy_norm", "previous_token", "induction")


class Series:
    """A run's records: ``steps``, ``loss``, ``pred`` (the predictable part), ``lr`` (n,)
    and ``heads[name]`` (n, L, H) for each of HEAD_FIELDS, as views of growing arrays."""

    def __init__(self) -> None:
        self.n = 0
        self._cap = 0
        self._flat: dict[str, np.ndarray] = {}
        self._heads: dict[str, np.ndarray] = {}

    def _grow(self, need: int, shape: tuple[int, int]) -> None:
        cap = max(256, self._cap)
        while cap < need:
            cap *= 2
        for key in ("steps", "loss", "pred", "lr"):
            new = np.empty(cap)
            if key in self._flat:
                new[:self.n] = self._flat[key][:self.n]
            self._flat[key] = new
        for name in HEAD_FIELDS:
            new = np.empty((cap, *shape))
            if name in self._heads:
                new[:self.n] = self._heads[name][:self.n]
            self._heads[name] = new
        self._cap = cap

    def update(self, history) -> None:
        """Append the records of ``history`` (a run's list of TrainStep) not seen yet."""
        new = history[self.n:]
        if not new:
            return
        end = self.n + len(new)
        if end > self._cap:
            self._grow(end, new[0].entropy_norm.shape)
        f, h, a = self._flat, self._heads, self.n
        f["steps"][a:end] = [s.step for s in new]
        f["loss"][a:end] = [s.loss for s in new]
        f["pred"][a:end] = [s.loss_predictable for s in new]
        f["lr"][a:end] = [s.lr for s in new]
        for name in HEAD_FIELDS:
            h[name][a:end] = [s.entropy_norm if name == "entropy_norm" else s.scores[name] for s in new]
        self.n = end

    def __getattr__(self, key: str) -> np.ndarray:
        if key in ("steps", "loss", "pred", "lr"):
            flat = self.__dict__["_flat"]
            return flat[key][:self.n] if key in flat else np.zeros(0)
        raise AttributeError(key)

    def head(self, name: str) -> np.ndarray | None:
        """(n, L, H) of one of HEAD_FIELDS; None before the first record."""
        return self._heads[name][:self.n] if self.n else None


def thin_indices(n: int, cap: int = MAX_POINTS) -> np.ndarray:
    """Indices of at most ``cap`` of ``n`` records: every k-th, ending on the last."""
    if n <= cap:
        return np.arange(n)
    k = -(-n // cap)
    return np.arange(n - 1, -1, -k)[::-1]


class Thin:
    """One curve's preallocated point arrays: ``set(item, x, y)`` gives ``item`` (a
    pyqtgraph PlotDataItem) at most MAX_POINTS of them through its public setData."""

    def __init__(self, cap: int = MAX_POINTS) -> None:
        self.cap = cap
        self.x = np.empty(cap)
        self.y = np.empty(cap)

    def set(self, item, x: np.ndarray, y: np.ndarray, finite_only: bool = False, cap: int | None = None) -> int:
        """At most ``cap`` (≤ MAX_POINTS; default MAX_POINTS) points; returns how many."""
        if finite_only:
            keep = np.isfinite(y)
            if not keep.all():
                x, y = x[keep], y[keep]
        idx = thin_indices(len(x), min(self.cap, cap or self.cap))
        m = len(idx)
        np.take(x, idx, out=self.x[:m])
        np.take(y, idx, out=self.y[:m])
        item.setData(self.x[:m], self.y[:m])
        return m
