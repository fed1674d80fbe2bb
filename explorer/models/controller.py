"""A real Hugging Face model in the window: loading, inspecting, the deletion test.

Data flow (one way, as for the attention layer):

    File ▸ Open model… / session / --model ─→ ModelController.load
        ─submit→ ModelWorker (worker.py, one thread: load, inspect, delete; the newest
        request of each kind wins) ─done→ ModelController (drops what it no longer wants)
        ─trace_changed / deletion_changed→ model_grid, model_head

The panels follow `ModelController.selection` (a `ModelSelection`: layer,
head, query, key); a click on a thumbnail, a table row or a heatmap cell sets
it, and every model panel redraws from it. Nothing here computes attention:
`engine.models` does, in the worker thread.

Safety: downloads only with an explicit opt-in (the dialog's checkbox, or a
confirmation when a hub id is not cached); a model's own Python code runs only
after a dialog that names the files; every `ModelLoadError` ends in the
window's banner. A session can name a model but never trusts its code.

The rest of the package: `source` (the demo model's names, resolving a source,
`LoadRequest`), `worker` (ModelWorker), `dialog` (File ▸ Open model…), `status` (the
status bar's indicator), `actions` (the menu entries and docks, made by
`install_model_support` here).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from ..selection import HoverLink, ModelSelection
from ..subscribe import follow
from ..work.base import run_events_until
from .actions import ModelActions
from .analyses import ModelAnalyses
from .source import (
    DEMO_SOURCE,
    LoadRequest,
    default_text,
    portable_source,
    resolve_source,
    source_exists,
)
from .worker import Cancelled, Job, ModelWorker, first_line, progress_tqdm

__all__ = ["ModelController", "install_model_support"]


class ModelController(QObject):
    """The loaded model, its text, trace, deletion result and selection; drives the worker.

    Signals (all in the UI thread): `busy_changed(str)` (what runs now, "" when
    idle), `progress_changed(done, total)` (a download; total 0 = unknown),
    `model_changed(LoadedModel)`, `trace_changed(ModelTrace)`,
    `deletion_changed(DeletionResult | None)`, `error(str)` (for the banner),
    `info_changed(dict | None)` (what a session saves), `idle()` (nothing
    left to do: the panels show the latest request, or it failed),
    `session_model_failed(source, reason)` (a session's model was not opened, instead of
    `error`: reason "" when its folder is missing; the window says so in a banner that stays).
    """

    busy_changed = Signal(str)
    progress_changed = Signal(float, float)
    model_changed = Signal(object)
    trace_changed = Signal(object)
    deletion_changed = Signal(object)
    error = Signal(str)
    notice = Signal(str)
    info_changed = Signal(object)
    idle = Signal()
    session_model_failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None, state=None) -> None:
        """`state`: the window's AppState, whose model selection and hover the model panels
        follow (a controller of its own, without a window, makes them)."""
        super().__init__(parent)
        self.selection: ModelSelection = state.model_selection if state is not None else ModelSelection()
        self.hover: HoverLink = state.model_hover if state is not None else HoverLink()
        self.loaded = None  # engine.models.LoadedModel
        self.source: str | None = None  # as given (DEMO_SOURCE allowed)
        self.trace = None  # engine.models.ModelTrace of `text`
        self.deletion = None  # engine.models.DeletionResult or None
        self.text = default_text()
        self.last_error: str | None = None
        self.busy_text = ""
        self._request: LoadRequest | None = None  # the load in flight
        self._rids: dict[str, int] = {}  # kind → the request whose result is wanted
        self._restore: dict | None = None  # selection to apply to the first trace
        # a person answers the download / remote-code questions; offscreen (tests,
        # export) nobody can, so the refusal goes to the banner instead
        self.interactive = QGuiApplication.platformName() != "offscreen"
        self.ask_download: Callable[[str], bool] = self._ask_download
        self.ask_remote_code: Callable[[str, list[str]], bool] = self._ask_remote_code
        self.dialog_parent: QWidget | None = None
        self.worker = ModelWorker()  # not a Qt child: see explorer.work.base
        self.worker.done.connect(self._on_done)
        self.worker.failed.connect(self._on_failed)
        self.worker.progress.connect(self._on_progress)
        self.worker.start()
        follow(self.selection.changed, self._emit_info)
        #: what the circuits panels compute (detectors, circuits, logit lens, …), cached
        self.analyses = ModelAnalyses(self)

    # ---- state ------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return bool(self._rids)

    @property
    def loading(self) -> bool:
        return "load" in self._rids

    def pending(self, kind: str) -> bool:
        """Whether a job of `kind` ("load", "inspect", "delete") is wanted and not done."""
        return kind in self._rids

    @property
    def layer(self) -> int:
        return self.selection.layer

    def session_info(self) -> dict | None:
        """The session's "model" object: source, text, layer, head, query, key."""
        if self.source is None:
            return None
        return {"source": portable_source(self.source), "text": self.text,
                **self.selection.as_dict()}

    def shows(self, source: str) -> bool:
        """Whether the model shown, or loading, came from ``source`` (as given to `load`)."""
        return (self._request.source if self._request is not None else self.source) == source

    def relocate(self, old: str, new: str) -> bool:
        """The model shown (or loading) from ``old`` is also in ``new``, file for file (the
        training lab saved the run it shows): sessions name ``new`` from now on. Returns
        whether the model came from ``old``."""
        if not self.shows(old):
            return False
        if self._request is not None:
            self._request = replace(self._request, source=new)
        else:
            self.source = new
            self._emit_info()
        return True

    def _emit_info(self) -> None:
        if self.trace is not None:
            self.info_changed.emit(self.session_info())

    def _set_busy(self, text: str) -> None:
        if text != self.busy_text:
            self.busy_text = text
            self.busy_changed.emit(text)

    def _settle(self, kind: str | None = None) -> None:
        """`kind` is done: update the busy text; `idle` when nothing is left."""
        if kind is not None:
            self._rids.pop(kind, None)
        if not self._rids:
            self._set_busy("")
            self.idle.emit()
        elif "load" not in self._rids:
            self._set_busy(self.tr("Running the model…"))

    # ---- requests -----------------------------------------------------------------------
    def load(self, source: str | os.PathLike, *, allow_download: bool = False,
             trust_remote_code: bool = False, device: str | None = None,
             n_layers: int | None = None, restore: dict | None = None) -> int:
        """Load `source` off the UI thread, then inspect the current text.

        `restore` (a session's model object) sets text and selection once the
        model runs. Returns the request id (0 when refused at once).
        """
        request = LoadRequest(os.fspath(source), allow_download, trust_remote_code, device, n_layers)
        if restore is None:  # a user's own load: a session's pending selection is not for it
            self._restore = None
        return self._load(request, restore)

    def _load(self, request: LoadRequest, restore: dict | None = None) -> int:
        from engine.models import ModelLoadError

        self.last_error = None
        if restore is not None:
            self._restore = dict(restore)
            if isinstance(restore.get("text"), str) and restore["text"].strip():
                self.text = restore["text"]
        try:
            path = resolve_source(request.source)
        except ModelLoadError as exc:
            self._restore = None
            self._fail(str(exc), request.source if restore is not None else None, False, str(exc))
            self._settle()
            return 0
        device = request.device or _default_device()

        def job(ctx: Job):
            from engine.models import load_model

            model = load_model(path, device=device, allow_download=request.allow_download,
                               trust_remote_code=request.trust_remote_code,
                               n_layers=request.n_layers,
                               tqdm_class=progress_tqdm(ctx) if request.allow_download else None,
                               check=ctx.check)  # a cancel between its steps
            if ctx.cancelled():
                raise Cancelled("load cancelled")
            return model

        self._request = request
        rid = self.worker.submit("load", job)
        self.analyses.forget_pending()  # the load dropped them
        self._rids = {"load": rid}  # results of the old model are no longer wanted
        if portable_source(path) == DEMO_SOURCE:
            name = DEMO_SOURCE
        else:
            name = Path(path).name if source_exists(path) else path
        self._set_busy(self.tr("Loading {name}…").format(name=name))
        return rid

    def restore(self, info: dict | None) -> int:
        """A session's "model" object: load its source (its code is never trusted from a
        session), then show its text and selection. None keeps what is loaded."""
        if not info:
            self.info_changed.emit(self.session_info())
            return 0
        source = str(info.get("source") or "")
        same = False
        if self.loaded is not None and self.source is not None and not self.loading:
            try:
                same = Path(resolve_source(self.source)).resolve() == Path(resolve_source(source)).resolve()
            except Exception:
                same = False
        if not same:
            return self.load(source, restore=info)
        self._restore = dict(info)
        text = info.get("text")
        if isinstance(text, str) and text.strip():
            self.text = text
        self.clear_deletion()
        return self._inspect()

    def cancel(self) -> None:
        """Stop waiting for the load (a download stops; a local load at its next step or
        block of its opening check, its result unseen)."""
        rid = self._rids.get("load")
        if rid is None:
            return
        self.worker.cancel(rid)
        self._request = None
        self._restore = None
        self._settle("load")
        self.notice.emit(self.tr("Loading cancelled."))

    def set_text(self, text: str) -> None:
        """Inspect `text` (when it changed); the deletion result of the old text goes."""
        if text == self.text and self.trace is not None:
            return
        self.text = text
        if self.deletion is not None:
            self.deletion = None
            self.deletion_changed.emit(None)
        if self.loaded is not None and "load" not in self._rids:  # else the load inspects it
            self._inspect()

    def rerun(self) -> None:
        """Inspect the current text again."""
        if self.loaded is not None:
            self._inspect()

    def _inspect(self) -> int:
        model, text = self.loaded, self.text

        def job(_ctx: Job):
            trace = model.inspect(text)
            trace.metrics  # noqa: B018 - computed here, not in the UI thread
            return trace

        rid = self.worker.submit("inspect", job)
        self._rids["inspect"] = rid
        self._rids.pop("delete", None)
        if "load" not in self._rids:
            self._set_busy(self.tr("Running the model…"))
        return rid

    def run_deletion(self, token_index: int, mode: str = "remove") -> int:
        """The deletion test on the shown text: drop (or mask) token `token_index`."""
        if self.loaded is None or self.trace is None:
            return 0
        model, text = self.loaded, self.trace.text

        def job(_ctx: Job):
            return model.deletion_test(text, int(token_index), mode=mode)

        rid = self.worker.submit("delete", job)
        self._rids["delete"] = rid
        if "load" not in self._rids:
            self._set_busy(self.tr("Running the deletion test…"))
        return rid

    def clear_deletion(self) -> None:
        self._rids.pop("delete", None)
        if self.deletion is not None:
            self.deletion = None
            self.deletion_changed.emit(None)

    # ---- results --------------------------------------------------------------------------
    def _wanted(self, rid: int, kind: str) -> bool:
        return self._rids.get(kind) == rid

    def _on_progress(self, rid: int, done: float, total: float) -> None:
        if self._wanted(rid, "load"):
            self.progress_changed.emit(done, total)

    def _on_done(self, rid: int, kind: str, result) -> None:
        if not self._wanted(rid, kind):
            return
        if kind == "load":
            request = self._request
            if portable_source(str(result.path)) == DEMO_SOURCE:
                result.name = DEMO_SOURCE  # not the folder's name inside the package
            self.loaded = result
            self.source = request.source if request is not None else str(result.path)
            self._request = None
            self.trace = None
            if self.deletion is not None:
                self.deletion = None
                self.deletion_changed.emit(None)
            self._rids.pop("load", None)
            self.model_changed.emit(result)
            for note in result.notices:
                self.notice.emit(note)
            self._inspect()
            return
        if kind == "inspect":
            self._show_trace(result)
        elif kind == "delete":
            self.deletion = result
            self.deletion_changed.emit(result)
        self._settle(kind)

    def _show_trace(self, trace) -> None:
        self.trace = trace
        sel = self.selection
        with sel.changed.blocked():  # the panels draw the new trace first, then the selection
            sel.set_model_limits(len(trace.layers), trace.n_heads, trace.seq_len)
            if self._restore is not None:  # a session's selection (clamped to this model)
                r, self._restore = self._restore, None
                sel.set(head=r.get("head"), query=r.get("query"), key=r.get("key"),
                        layer=r.get("layer"))
        self.trace_changed.emit(trace)
        sel.changed.emit()
        if trace.notice:
            self.notice.emit(trace.notice)

    def _on_failed(self, rid: int, kind: str, exc: BaseException) -> None:
        if not self._wanted(rid, kind):
            return
        from engine.models import InspectError, ModelLoadError

        self._rids.pop(kind, None)
        if kind == "load":
            request, self._request = self._request, None
            if isinstance(exc, Cancelled):
                self._settle()
                return
            if isinstance(exc, ModelLoadError) and request is not None and self._retry(request, exc):
                return
            # a session's model: said as such, the rest of the session stays
            session = request.source if self._restore is not None and request is not None else None
            self._restore = None
            if isinstance(exc, ModelLoadError):
                missing = (session is not None and exc.reason == "no_folder"
                           and not source_exists(session))
                self._fail(self.tr("Could not open the model: {reason}").format(reason=str(exc)), session, missing,
                           str(exc))
            else:
                self._fail(self.tr("Could not open the model: transformers failed ({detail}).")
                           .format(detail=first_line(exc)), session, False, first_line(exc))
        elif isinstance(exc, InspectError):
            self._fail(str(exc))
        elif kind == "delete":
            self._fail(self.tr("The deletion test failed: {detail}").format(detail=first_line(exc)))
        else:
            self._fail(self.tr("Running the model failed: {detail}").format(detail=first_line(exc)))
        self._settle()

    def _fail(self, message: str, session_source: str | None = None, missing: bool = False,
              reason: str = "") -> None:
        """Report `message` in the banner (and to wait_ready); the model of a session
        (`session_source`) as `session_model_failed`: its source, and `reason` unless its
        folder is `missing`."""
        self.last_error = message
        if session_source is None:
            self.error.emit(message)
            return
        self.session_model_failed.emit(session_source, "" if missing else " ".join(reason.split()).rstrip(". "))

    def _retry(self, request: LoadRequest, exc) -> bool:
        """Ask before a download or before running a model's own code; True if retried."""
        if not self.interactive:
            return False
        if exc.reason == "not_cached" and not request.allow_download:
            if self.ask_download(request.source):
                self._load(LoadRequest(request.source, True, request.trust_remote_code,
                                       request.device, request.n_layers))
                return True
        elif exc.reason == "remote_code" and not request.trust_remote_code:
            files = list(exc.files)
            if not files:
                try:
                    from engine.models import model_code_files

                    files = model_code_files(resolve_source(request.source))
                except Exception:
                    files = []
            if self.ask_remote_code(request.source, files):
                self._load(LoadRequest(request.source, request.allow_download, True,
                                       request.device, request.n_layers))
                return True
        return False

    # ---- questions (dialogs) ------------------------------------------------------------------
    def _ask_download(self, source: str) -> bool:
        return self._confirm(
            QMessageBox.Icon.Question, self.tr("Download the model?"),
            self.tr("“{source}” is not on this computer.").format(source=source),
            self.tr("Download it from the Hugging Face Hub? This needs the internet "
                    "and may take a while for a large model."),
            self.tr("Download"), QMessageBox.ButtonRole.AcceptRole)

    def _ask_remote_code(self, source: str, files: list[str]) -> bool:
        listing = "\n".join(f"    {f}" for f in files) or self.tr("    (the files named in its config.json)")
        return self._confirm(
            QMessageBox.Icon.Warning, self.tr("Run the model's own code?"),
            self.tr("“{source}” needs its own Python code to run:").format(source=source) + "\n\n" + listing,
            self.tr("This code would run on your computer with your permissions. "
                    "Only continue if you have read these files or trust their authors."),
            self.tr("Run this code"), QMessageBox.ButtonRole.DestructiveRole)

    def _confirm(self, icon, title: str, text: str, info: str, accept: str, role) -> bool:
        """A modal question whose default answer is Cancel; True when `accept` was clicked."""
        box = QMessageBox(self.dialog_parent)
        box.setIcon(icon)
        box.setWindowTitle(title)
        box.setText(text)
        box.setInformativeText(info)
        ok = box.addButton(accept, role)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is ok

    # ---- for scripts, export and tests ------------------------------------------------------
    def wait_ready(self, timeout_s: float = 120.0) -> str | None:
        """Run the event loop until nothing is pending; None when a trace is shown, else why not."""
        if self.busy:
            if not run_events_until(lambda: not self.busy, timeout_s):
                return self.tr("the model did not finish loading within {s:.0f} s").format(s=timeout_s)
        if self.last_error:
            return self.last_error
        if self.trace is None:
            return self.tr("no model is loaded")
        return None

    def shutdown(self) -> None:
        """Quit: the running job is cancelled and waited for briefly; a load still inside
        transformers is left running (ModelWorker.stop_for_quit)."""
        self.worker.stop_for_quit()


def _default_device() -> str:
    from engine.models import default_device

    return default_device()


def install_model_support(state, host) -> ModelActions:
    """The window's model feature (`MainWindow.features["models"]`): a ModelController
    (`state.models`), File ▸ Open model… and the loading indicator."""
    return ModelActions(state, host, ModelController(host.parent_widget(), state))
