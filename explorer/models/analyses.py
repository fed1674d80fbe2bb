"""What the circuits panels ask of a loaded model, computed in the model's worker thread.

    panel ─request(kind, key, fn)→ ModelAnalyses ─submit(kind)→ ModelWorker (one lane per
        kind: the newest request of a kind wins) ─done / failed→ ModelAnalyses (a small cache
        per kind) ─changed(kind)→ every panel, which reads `get(kind, key)`

A result is kept per (kind, key) until another model is loaded, so a panel that changes its
choice back, a second panel, or an export's fresh panel (`wait`) finds it at once. A refusal
(engine.models.InspectError: an encoder has no logit lens) is kept like a result, as one
line (`Outcome.error`), and goes to the panel that asked, never to the window's banner.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..work.base import run_events_until
from .worker import Cancelled, Job, first_line

__all__ = ["ANALYSIS_KINDS", "ModelAnalyses", "Outcome"]

#: the worker lanes of the circuits panels (after load, inspect and delete)
ANALYSIS_KINDS = ("detectors", "circuits", "lens", "attribution", "patching", "qk_space")
#: results kept per kind
KEEP = 24


@dataclass(frozen=True)
class Outcome:
    """A finished request: `result`, or `error` (one line saying why not)."""

    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class ModelAnalyses(QObject):
    """See the module docstring. `changed(kind)`: a result, a refusal or a cancel of `kind`
    arrived (or every kind, with another model); `progress(kind, done, total)`."""

    changed = Signal(str)
    progress = Signal(str, float, float)

    def __init__(self, controller) -> None:
        super().__init__(controller)
        self.controller = controller
        self.worker = controller.worker
        self._cache: dict[str, OrderedDict] = {k: OrderedDict() for k in ANALYSIS_KINDS}
        self._pending: dict[str, tuple[int, Hashable]] = {}  # kind → (request id, key)
        self._forgotten: set[str] = set()
        self.worker.done.connect(self._on_done)
        self.worker.failed.connect(self._on_failed)
        self.worker.progress.connect(self._on_progress)
        controller.model_changed.connect(self._on_model)
        controller.idle.connect(self._on_idle)

    # ---- asking --------------------------------------------------------------------------
    def get(self, kind: str, key: Hashable) -> Outcome | None:
        """The outcome of (kind, key), or None (not asked, or still running)."""
        return self._cache[kind].get(key)

    def pending(self, kind: str) -> Hashable | None:
        """The key of the request of `kind` running or queued now (None: none)."""
        p = self._pending.get(kind)
        return None if p is None else p[1]

    def request(self, kind: str, key: Hashable, fn: Callable[[Job], Any]) -> int:
        """Compute `fn(job)` for (kind, key) in the worker unless it is known or already
        asked; a newer request of the same kind replaces it. Returns the request id (0:
        nothing submitted)."""
        if kind not in self._cache:
            raise ValueError(f"unknown analysis {kind!r}; kinds: {', '.join(ANALYSIS_KINDS)}")
        if key in self._cache[kind] or self.pending(kind) == key:
            return 0
        rid = self.worker.submit(kind, fn)
        self._pending[kind] = (rid, key)
        return rid

    def cancel(self, kind: str) -> None:
        """Stop the request of `kind` (its job sees `cancelled()`; a result is not kept)."""
        p = self._pending.pop(kind, None)
        if p is not None:
            self.worker.cancel(p[0])
            self.worker.supersede(kind)
            self.changed.emit(kind)

    def wait(self, kind: str, key: Hashable, timeout_s: float = 120.0) -> Outcome | None:
        """Run the event loop until (kind, key) is known (an export's figure); None on a
        timeout or when the request went away (cancelled, another model)."""
        run_events_until(lambda: self.get(kind, key) is not None or self.pending(kind) != key, timeout_s)
        return self.get(kind, key)

    def forget_pending(self) -> None:
        """A new model is loading: its load drops every queued request (the panels ask
        again once it is there, or once the load failed)."""
        self._forgotten.update(self._pending)
        self._pending.clear()

    # ---- results -------------------------------------------------------------------------
    def _take(self, rid: int, kind: str) -> Hashable | None:
        p = self._pending.get(kind)
        if p is None or p[0] != rid:
            return None
        del self._pending[kind]
        return p[1]

    def _keep(self, kind: str, key: Hashable, outcome: Outcome) -> None:
        cache = self._cache[kind]
        cache[key] = outcome
        cache.move_to_end(key)
        while len(cache) > KEEP:
            cache.popitem(last=False)
        self.changed.emit(kind)

    def _on_done(self, rid: int, kind: str, result) -> None:
        if kind in self._cache:
            key = self._take(rid, kind)
            if key is not None:
                self._keep(kind, key, Outcome(result=result))

    def _on_failed(self, rid: int, kind: str, exc: BaseException) -> None:
        if kind not in self._cache:
            return
        key = self._take(rid, kind)
        if key is None:
            return
        if isinstance(exc, Cancelled):
            self.changed.emit(kind)
            return
        from engine.models import InspectError

        self._keep(kind, key, Outcome(error=str(exc) if isinstance(exc, InspectError) else first_line(exc)))

    def _on_progress(self, rid: int, done: float, total: float) -> None:
        for kind, (r, _key) in self._pending.items():
            if r == rid:
                self.progress.emit(kind, done, total)
                return

    def _on_model(self, _model) -> None:
        for cache in self._cache.values():
            cache.clear()
        self._pending.clear()
        self._forgotten.clear()
        for kind in ANALYSIS_KINDS:
            self.changed.emit(kind)

    def _on_idle(self) -> None:
        forgotten, self._forgotten = self._forgotten, set()
        for kind in sorted(forgotten):
            self.changed.emit(kind)
