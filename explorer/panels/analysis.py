"""What the circuits panels share: following the model, asking for their results, one
status line.

A circuits panel (circuits, logit_lens, …) says what it needs in `needs()`: a list of
(kind, key, job) — computed by the model controller's `analyses` (explorer/models/
analyses.py) in the model's worker thread, kept per key — or a string, one line saying why
this model cannot have it (an encoder has no logit lens). `update_request()` asks for what
is missing (only while the panel is shown, or for an export's figure, which waits for it)
and calls `draw(outcomes)` with what is known: {kind: Outcome or None (still running)}.
The panel follows the model selection (layer, head) like model_grid and model_head.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel

from ..figures.plots import set_label_text
from .base import Panel

#: one thing a panel needs: (kind, key, job(job) → result)
Need = tuple[str, Any, Callable]


class AnalysisPanel(Panel):
    """See the module docstring."""

    requires_model = True
    draws_the_sliders = False

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.controller = None
        self.outcomes: dict[str, Any] = {}
        self.asked: dict[str, Any] = {}  # kind → the key of the outcome drawn (or running)
        self._model_drawn = None  # the model whose results the plots hold
        self.status = QLabel()
        self.status.setObjectName("analysis_status")
        self.status.setWordWrap(True)
        self.status.setContentsMargins(8, 0, 8, 0)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.hide()
        self.layout().insertWidget(1, self.status)
        self._status_kind = ""

    # ---- for subclasses ------------------------------------------------------------------
    def needs(self) -> list[Need] | str:
        """What to compute for the current model, text and selection, or why nothing can be."""
        raise NotImplementedError

    def draw(self, outcomes: dict[str, Any]) -> None:
        """Draw what is known: kind → Outcome (result or error) or None (running)."""
        raise NotImplementedError

    def draw_refusal(self, line: str) -> None:
        """This model cannot have the panel: clear the plots (the status line says why)."""

    def forget_model(self) -> None:
        """Another model came: drop what was made for the last one, so no plot shows its
        results (default: clear the plots)."""
        self.draw_refusal("")

    def busy_text(self, kind: str) -> str:
        """What the status line says while `kind` runs."""
        return QCoreApplication.translate("AnalysisPanel", "Computing…")

    # ---- the model -----------------------------------------------------------------------
    @property
    def loaded(self):
        c = self.controller
        return None if c is None else c.loaded

    @property
    def trace(self):
        c = self.controller
        return None if c is None else c.trace

    def model_text(self) -> str:
        """The model's text: the trace's (the tokens the model panels show), else the one asked for."""
        c = self.controller
        return c.trace.text if c.trace is not None else c.text

    def model_layer(self) -> int:
        """The selected layer as the model's layer number (the selection counts the trace's
        layers, which may be a subset of the model's)."""
        tr_, i = self.trace, int(getattr(self.selection, "layer", 0))
        if tr_ is not None and 0 <= i < len(tr_.layers):
            return int(tr_.layers[i])
        return min(i, self.loaded.n_layers - 1) if self.loaded is not None else i

    def layer_index(self, layer: int) -> int:
        """The selection's index of the model's layer `layer`: the trace's nearest layer."""
        tr_ = self.trace
        if tr_ is None or not tr_.layers:
            return layer
        layers = [int(x) for x in tr_.layers]
        return min(range(len(layers)), key=lambda i: (abs(layers[i] - layer), i))

    def say_refusal_below(self, label, line: str) -> None:
        """The window's status line says a refusal; a figure (no status line) says it in `label`."""
        set_label_text(label, html.escape(line) if self.is_figure() else "", color=self.theme.warning,
                       size=self.theme.pt(9.0))

    def set_model(self, controller) -> None:
        """Follow `controller` (a ModelController): its model, text, selection, analyses."""
        if self.controller is controller:
            return
        self.controller = controller
        if self.selection is not controller.selection:
            self.follow_selection(controller.selection)
        controller.model_changed.connect(self._on_model_event)
        controller.trace_changed.connect(self._on_model_event)
        controller.analyses.changed.connect(self._on_analysis)
        controller.analyses.progress.connect(self._on_progress)
        self.update_request()

    def detach(self) -> None:
        super().detach()
        c = self.controller
        if c is None:
            return
        for signal, slot in ((c.model_changed, self._on_model_event), (c.trace_changed, self._on_model_event),
                             (c.analyses.changed, self._on_analysis),
                             (c.analyses.progress, self._on_progress)):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass

    def show_frame(self, frame) -> None:
        """The attention layer's frames are not this panel's business."""

    def _on_selection_changed(self) -> None:
        self.update_request()

    def _on_model_event(self, *_args) -> None:
        self.update_request()

    def _on_analysis(self, _kind: str) -> None:
        self.update_request()

    def _on_progress(self, kind: str, done: float, total: float) -> None:
        if kind == self._status_kind and total > 0:
            self._set_status(f"{self.busy_text(kind)} {100 * done / total:.0f} %")

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.update_request()

    def is_figure(self) -> bool:
        """An export's fresh panel (drawn offscreen): it waits for what it needs."""
        return self.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)

    def update_request(self) -> None:
        """Ask for what is missing (when shown or a figure) and draw what is known."""
        c = self.controller
        if c is None or c.loaded is None:
            self._set_status(c.busy_text if c is not None else "")
            return
        if c.loaded is not self._model_drawn:  # (asked here: analyses may ask before the panel hears of it)
            if self._model_drawn is not None:
                self.outcomes, self.asked = {}, {}
                self.forget_model()
            self._model_drawn = c.loaded
        needs = self.needs()
        if isinstance(needs, str):
            self.outcomes, self.asked = {}, {}
            self._set_status(needs, warning=True)
            self.draw_refusal(needs)
            return
        outcomes: dict[str, Any] = {}
        running = ""
        self.asked = {kind: key for kind, key, _fn in needs}
        for kind, key, fn in needs:
            got = c.analyses.get(kind, key)
            if got is None and (self.isVisible() or self.is_figure()):
                c.analyses.request(kind, key, fn)
                if self.is_figure():
                    got = c.analyses.wait(kind, key)
            if got is None and not running:
                running = kind
            outcomes[kind] = got
        self.outcomes = outcomes
        errors = [o.error for o in outcomes.values() if o is not None and o.error]
        self._status_kind = running
        if errors:
            self._set_status(errors[0], warning=True)
        elif running:
            self._set_status(self.busy_text(running))
        else:
            self._set_status("")
        self.draw(outcomes)

    def _set_status(self, text: str, *, warning: bool = False) -> None:
        self.status.setText(text)
        # an export's figure says a refusal in its plots, and waited for everything else
        self.status.setVisible(bool(text) and not self.is_figure())
        colour = self.theme.warning if warning else self.theme.muted
        self.status.setStyleSheet(f"color: {colour};")

    # ---- look ----------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self._retranslate_help()
        self.update_request()
