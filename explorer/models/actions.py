"""The window's side of a model: File ▸ Open model… and Open demo model, the model docks,
the banner and status bar wiring. `explorer.models.controller.install_model_support` makes
the controller and these."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog

from ..feature import Feature
from ..subscribe import follow
from .dialog import OpenModelDialog
from .source import DEMO_SOURCE, demo_model_path, resolve_source
from .status import ModelStatus

__all__ = ["FRONT_DOCKS", "MODEL_DOCKS", "ModelActions"]

#: the model panels' docks, in the order made: (panel, the dock it shares a tab with)
MODEL_DOCKS = (("model_grid", "heads"), ("model_head", "qkv"),
               ("circuits", "model_grid"), ("logit_lens", "model_head"),
               ("attribution", "logit_lens"), ("patching", "circuits"),
               ("model_qk_space", "circuits"))
#: the tabs shown in front when a model loads (the others wait behind them, computing nothing)
FRONT_DOCKS = ("model_grid", "model_head")


class ModelActions(Feature):
    """File ▸ Open model… and Open demo model; the model docks; banner and status wiring."""

    def __init__(self, state, host, controller) -> None:
        """`controller`: the window's ModelController."""
        super().__init__(state, host)
        c = self.controller = controller
        state.models = c
        c.dialog_parent = host.parent_widget()
        self.destroyed.connect(c.worker.retire)  # (a Qt child of the window: deleted with it)
        self.open_action = QAction(host.parent_widget())
        self.open_action.setShortcut(QKeySequence("Ctrl+M"))
        self.open_action.triggered.connect(lambda: self.open_dialog())
        self.demo_action = QAction(host.parent_widget())
        self.demo_action.triggered.connect(lambda: self.open_demo())
        self.demo_action.setEnabled(demo_model_path() is not None)
        # File: after Open session… and Open recent, before the first separator
        anchor = next((a for a in host.menu("file").actions() if a.isSeparator()), None)
        host.add_action("file", self.open_action, before=anchor)
        host.add_action("file", self.demo_action, before=anchor)
        self.status = ModelStatus(c)
        self._hover_text = ""  # the readout the model hover last put in the status bar
        # permanent: a temporary status message would hide a normal widget
        host.status_bar().insertPermanentWidget(0, self.status)
        c.error.connect(lambda msg: host.show_banner(msg))
        c.notice.connect(self._on_notice)
        c.session_model_failed.connect(self._on_session_model_failed)
        c.model_changed.connect(self._on_model)
        c.info_changed.connect(self._on_info)
        follow(c.hover.described, self._on_hover_text)
        follow(c.selection.changed, self._on_selection)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.open_action.setText(self.tr("Open &model…"))
        self.open_action.setStatusTip(self.tr("Open a Hugging Face model folder (offline by default)"))
        self.demo_action.setText(self.tr("Open &demo model (MiniLM)"))
        self.demo_action.setStatusTip(self.tr("Open the bundled all-MiniLM-L6-v2 (6 layers × 12 heads)"))

    # ---- actions --------------------------------------------------------------------------
    def open_dialog(self) -> bool:
        src = self.controller.source or str(demo_model_path() or "")
        dlg = OpenModelDialog(self.host.parent_widget(), resolve_source(src) if src == DEMO_SOURCE else src)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return False
        req = dlg.request()
        if not req.source:
            self.host.show_banner(self.tr("No model given: type a folder or a hub id."))
            return False
        self.controller.load(req.source, allow_download=req.allow_download, device=req.device,
                             n_layers=req.n_layers)
        return True

    def open_demo(self) -> int:
        return self.controller.load(DEMO_SOURCE)

    # ---- results ------------------------------------------------------------------------------
    def _on_model(self, model) -> None:
        w = self.host
        if w.banner_kind() in ("error", "warning"):  # (a session's model that was not opened, too)
            w.hide_banner()
        self.ensure_panels()
        s = model.summary
        w.show_status(
            self.tr("loaded {name}: {layers} layers × {heads} heads").format(
                name=model.name, layers=s.n_layers, heads=s.n_heads), 5000)

    def _on_session_model_failed(self, source: str, reason: str) -> None:
        """A session's model was not opened: a banner naming its folder, which stays over new
        frames (a "warning"); the rest of the session is open, and saving it keeps the model's
        entry."""
        from engine.models.files import shown_source

        # a session may name a path of thousands of characters, and the reason names it again:
        # the banner is one line of at most ~400 characters (the session fuzz: 446 with 81 of "字"):
        # ~95 of sentence, a folder whole up to 140 (a usual path is), the reason in 160
        shown = shown_source(source, 140)
        reason = shown_source(reason.replace(source, shown), 160) if reason else reason
        source = shown
        if reason:
            text = lambda: QCoreApplication.translate(  # noqa: E731
                "MainWindow", "The session's model {folder} could not be opened ({reason}); everything else of "
                "the session is open.").format(folder=source, reason=reason)
        else:
            text = lambda: QCoreApplication.translate(  # noqa: E731
                "MainWindow", "The session's model was not opened: its folder {folder} is missing; everything "
                "else of the session is open.").format(folder=source)
        self.host.show_banner(text, kind="warning")

    def _on_notice(self, text: str) -> None:
        self.host.show_status(text, 8000)

    def _on_info(self, info) -> None:
        self.state.model_info = info

    def _on_hover_text(self, text: str) -> None:
        """The hovered model cell's readout; the hover's end takes away only its own readout."""
        if text:
            self.host.show_status(text)
        else:
            self.host.take_back_status(self._hover_text)
        self._hover_text = text

    def _on_selection(self) -> None:
        c = self.controller
        if c.trace is None:
            return
        s = c.selection
        self.host.show_status(
            self.tr("model: layer {layer} · head {head}").format(layer=c.trace.layers[s.layer],
                                                                 head=s.head), 4000)

    def ensure_panels(self) -> None:
        """Add the model docks (once): model_grid and model_head tabbed over heads and qkv,
        the circuits panels in tabs beside them (model_grid and model_head stay in front)."""
        w = self.host
        if "model_grid" in w.panel_names():
            for name, _beside in MODEL_DOCKS:
                if name in w.panel_names():
                    w.dock(name).show()
            self._front()
            return
        for name, beside in MODEL_DOCKS:
            w.add_panel(name, dock_area=True)
            dock = w.dock(name)
            if beside in w.panel_names() and not w.dock(beside).isFloating():
                w.tabify(beside, name)
            dock.show()
        for name, _beside in MODEL_DOCKS:
            w.add_view_entry(name)
        self._front()

    def _front(self) -> None:
        """model_grid and model_head in front as View ▸ a panel brings them (the dock layer):
        at no less than their readable size, the docks beside giving way, the window back at
        its user-set size (their minimums grew a 1280×800 window to 811 px)."""
        for name in FRONT_DOCKS:
            self.host.show_panel(name)
