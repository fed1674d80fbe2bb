"""Named snapshots: several pinned states in a list, any of them the reference A.

    SnapshotsFeature(state, host)  # window.snapshots (state.snapshots); Edit ▸ Snapshots… (Ctrl+Shift+P)
    window.snapshots.add(frame)    # what Edit ▸ Pin as reference A (Ctrl+P) also does
    window.snapshots.use(i)        # snapshot i becomes A (the heads panel's A and B − A)
    window.snapshots.rename(i, "with √d_k"); window.snapshots.remove(i)
    show_snapshots(window)         # the dock, made the first time

Each entry keeps its config and selection (what a session stores, `explorer.snapshot_data`)
and a small thumbnail of its selected head's weights. Frames are computed off the UI thread
(one worker: the reference first, then the thumbnails the dock shows, one at a time) and
not kept beyond A's and what FRAME_BUDGET allows: an opened session shows its window at
once, computes its reference A and pins it when ready, and a snapshot the engine refuses
(over the memory budget, a backend missing here) is marked with why, the rest of the
session usable. The dock lists the name, the thumbnail and the config summary; the reference
A is marked ●. Names are edited in place (double-click or Rename).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QImage, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .feature import Feature
from .frame import build_frame
from .snapshot_data import MAX_SNAPSHOTS, Snapshot, check_name
from .subscribe import follow
from .work.base import Worker, run_events_until

THUMB_PX = 64
#: the snapshots' frames kept in memory, besides the one pinned as A (bytes of their arrays):
#: Pin keeps the frame it pins; older ones are dropped past this and recomputed when used
FRAME_BUDGET = 256 * 1024**2


def thumbnail_rgba(frame, head: int, px: int = THUMB_PX) -> np.ndarray:
    """The weights of `head` as an (h, w, 4) uint8 image of at most px×px (viridis over 0..max,
    NaN grey), nearest cells, the aspect kept. Plain numpy: made in the worker thread."""
    import pyqtgraph as pg

    w = frame.weights_shown[min(head, frame.weights_shown.shape[0] - 1)]  # (S, Skv)
    scale = min(px / w.shape[0], px / w.shape[1])
    rows = np.minimum((np.arange(max(1, round(w.shape[0] * scale))) / scale).astype(int), w.shape[0] - 1)
    cols = np.minimum((np.arange(max(1, round(w.shape[1] * scale))) / scale).astype(int), w.shape[1] - 1)
    w = w[np.ix_(rows, cols)]
    top = float(np.nanmax(w)) if np.isfinite(w).any() else 1.0
    norm = np.nan_to_num(w / max(top, 1e-9), nan=0.0).clip(0, 1)
    rgba = pg.colormap.get("viridis").map(norm.ravel(), mode="byte").reshape(*w.shape, 4)
    rgba[np.isnan(w)] = (128, 128, 128, 255)
    return np.ascontiguousarray(rgba, np.uint8)


def _image(rgba: np.ndarray) -> QImage:
    h, w = rgba.shape[:2]
    return QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()


def frame_bytes(frame) -> int:
    """What a frame's arrays hold (its numpy fields)."""
    return sum(v.nbytes for v in vars(frame).values() if isinstance(v, np.ndarray))


@dataclass(eq=False)
class Entry:
    snapshot: Snapshot
    frame: object = None  # explorer.frame.Frame while kept (A's, and recent pins within FRAME_BUDGET)
    image: QImage | None = None
    error: str = ""  # why this snapshot cannot be computed here ("" while it can)
    thumb_pending: bool = False


class _SnapshotWorker(Worker):
    """The reference A's frame first, then the thumbnails (one lane per entry)."""

    ORDER = ("reference",)


class SnapshotList(QObject):
    """The window's snapshots in order; `changed` after every change (the dock redraws)."""

    changed = Signal()

    def __init__(self, state, host) -> None:
        super().__init__(host.parent_widget())
        self.state = state
        self.host_ = host
        self.entries: list[Entry] = []
        self._using = False
        self._wanted: Entry | None = None  # the entry becoming A once its frame is computed
        self._job_data: dict[int, tuple[str, Entry]] = {}  # job id → ("frame" | "thumb", entry)
        self.worker = _SnapshotWorker()
        self.destroyed.connect(self.worker.retire)  # (a Qt child of the window: deleted with it)
        self.worker.done.connect(self._on_done)
        self.worker.failed.connect(self._on_failed)
        #: added, renamed or deleted since the session was opened or saved (the title's "*")
        self.edited = False
        follow(state.reference_changed, self._on_reference)

    # ---- queries ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.entries)

    def names(self) -> list[str]:
        return [e.snapshot.name for e in self.entries]

    @property
    def reference_index(self) -> int | None:
        """The entry pinned as A (None when A is unpinned or not from this list)."""
        ref = self.state.reference
        for i, e in enumerate(self.entries):
            if ref is not None and e.frame is ref:
                return i
        return None

    def to_snapshots(self) -> tuple[Snapshot, ...]:
        """What a session stores, the reference A marked."""
        ref = self.reference_index
        return tuple(replace(e.snapshot, reference=i == ref) for i, e in enumerate(self.entries))

    def frame(self, i: int):
        """Entry i's frame, computed now (in this thread) when it is not kept: for scripts and
        tests; the window asks the worker (`use`)."""
        e = self.entries[i]
        return e.frame if e.frame is not None else build_frame(e.snapshot.config)

    def image(self, i: int) -> QImage | None:
        """Entry i's thumbnail, or None while the worker computes it (`changed` follows) or
        when the snapshot cannot be computed (`entries[i].error` says why)."""
        e = self.entries[i]
        if e.image is None and not e.error:
            if e.frame is not None:
                e.image = _image(thumbnail_rgba(e.frame, e.snapshot.selection["head"]))
            elif not e.thumb_pending:
                e.thumb_pending = True
                cfg, head = e.snapshot.config, e.snapshot.selection["head"]
                self._submit(lambda job: thumbnail_rgba(build_frame(cfg, progress=job.check), head),
                             ("thumb", id(e)), ("thumb", e))
        return e.image

    @property
    def busy(self) -> bool:
        """A snapshot is being computed to become A."""
        return self._wanted is not None

    def wait_ready(self, timeout_s: float) -> str | None:
        """Wait (running the event loop) until the snapshot becoming A is pinned; None when
        done, else why not (its error, or the time)."""
        if not run_events_until(lambda: not self.busy, timeout_s):
            return f"the reference snapshot was not computed within {timeout_s:.0f} s"
        return self._last_error or None

    _last_error = ""

    # ---- the worker's results (UI thread) ---------------------------------------------------------
    def _on_done(self, rid: int, result) -> None:
        kind, e = self._job_data.pop(rid, (None, None))
        if e is None or e not in self.entries:
            return  # deleted meanwhile
        if kind == "thumb":
            e.thumb_pending = False
            e.image = _image(result)
        else:
            e.frame = result
            if self._wanted is e:
                self._wanted = None
                self._pin(e)
            self._keep_within_budget()
        self.changed.emit()

    def _on_failed(self, rid: int, message: str) -> None:
        _kind, e = self._job_data.pop(rid, (None, None))
        if e is None or e not in self.entries:
            return
        e.thumb_pending = False
        e.error = message.split(": ", 1)[-1] if message.startswith(("ConfigError", "BackendUnavailable")) else message
        if self._wanted is e:
            self._wanted = None
            self._last_error = QCoreApplication.translate(
                "Snapshots", "Snapshot “{name}” cannot be used as A here: {reason}").format(
                name=e.snapshot.name, reason=e.error)
            self.host_.show_banner(self._last_error, kind="warning")
        self.changed.emit()

    def _submit(self, fn, lane, data) -> int:
        rid = self.worker.submit(fn, lane=lane)
        self._job_data[rid] = data
        return rid

    def _keep_within_budget(self) -> None:
        """Drop the oldest kept frames (never A's) until they fit FRAME_BUDGET."""
        ref = self.state.reference
        kept = [e for e in self.entries if e.frame is not None and e.frame is not ref]
        total = sum(frame_bytes(e.frame) for e in kept)
        for e in kept:
            if total <= FRAME_BUDGET:
                break
            total -= frame_bytes(e.frame)
            e.frame = None

    # ---- changes ------------------------------------------------------------------------
    def _set_edited(self, edited: bool) -> None:
        """The session differs from its file (or not): the window's title shows "*" while this
        or the undo history says so."""
        self.edited = edited
        self.host_.set_window_modified(edited or not self.host_.history.stack.isClean())

    def mark_saved(self) -> None:
        """The session was saved with these snapshots."""
        self._set_edited(False)

    def add(self, frame, name: str | None = None) -> int:
        """Keep `frame` (with the window's selection) as a new snapshot; returns its index.
        The oldest one goes when the list is full."""
        sel = self.state.selection
        cfg = frame.config
        selection = {"head": min(sel.head, cfg.n_heads - 1), "query": min(sel.query, cfg.seq_len - 1),
                     "key": min(sel.key, cfg.key_len - 1)}
        if name is None:
            taken, n = set(self.names()), len(self.entries) + 1
            while QCoreApplication.translate("Snapshots", "Snapshot {n}").format(n=n) in taken:
                n += 1
            name = QCoreApplication.translate("Snapshots", "Snapshot {n}").format(n=n)
        self.entries.append(Entry(Snapshot(check_name(name), cfg, selection), frame))
        if len(self.entries) > MAX_SNAPSHOTS:
            del self.entries[0]
        self._keep_within_budget()
        self._set_edited(True)
        self.changed.emit()
        return len(self.entries) - 1

    def rename(self, i: int, name: str) -> None:
        """ValueError (one line) for an empty, too long or unprintable name."""
        e = self.entries[i]
        new = replace(e.snapshot, name=check_name(name))
        if new != e.snapshot:
            e.snapshot = new
            self._set_edited(True)
        self.changed.emit()

    def remove(self, i: int) -> None:
        """Delete entry i; when it was A, A is unpinned."""
        was_ref = self.reference_index == i
        if self._wanted is self.entries[i]:
            self._wanted = None  # no longer becoming A
        del self.entries[i]
        if was_ref:
            self.state.set_reference(None)
        self._set_edited(True)
        self.changed.emit()

    def use(self, i: int) -> None:
        """Entry i becomes the reference A (the panels compare with it): now when its frame is
        kept, else once the worker has computed it (the status bar says so meanwhile; a
        snapshot the engine refuses is marked, and the banner says why)."""
        e = self.entries[i]
        self._last_error = ""
        if e.frame is not None:
            self._wanted = None
            self._pin(e)
        else:
            self._wanted = e
            e.error = ""
            self._submit(lambda job: build_frame(e.snapshot.config, progress=job.check), "reference", ("frame", e))
            self.host_.show_status(QCoreApplication.translate(
                "Snapshots", "computing snapshot “{name}”…").format(name=e.snapshot.name))
        self.changed.emit()

    def _pin(self, e: Entry) -> None:
        self._using = True
        try:
            self.host_.feature("menus").pin_reference(e.frame)
        finally:
            self._using = False
        self.host_.show_status(
            QCoreApplication.translate("Snapshots", "A is now “{name}”: {config}").format(
                name=e.snapshot.name, config=e.frame.config.summary()), 5000)

    def restore(self, snapshots) -> None:
        """The snapshots of an opened session (computed off the UI thread when needed); the
        one marked as reference becomes A once computed."""
        self.entries = [Entry(replace(s, reference=False)) for s in snapshots]
        self._wanted = None
        self._job_data.clear()
        ref = next((i for i, s in enumerate(snapshots) if s.reference), None)
        if ref is not None:
            self.use(ref)
        self._set_edited(False)  # as the file has them
        self.changed.emit()

    def _on_reference(self, frame) -> None:
        # Pin (Ctrl+P) adds the pinned frame; choosing an entry (use) does not add it again
        if frame is not None and not self._using and all(e.frame is not frame for e in self.entries):
            self.add(frame)
        else:
            self.changed.emit()


class SnapshotsPanel(QWidget):
    """The dock's contents: the list (thumbnail and name, config summary) and its buttons."""

    def __init__(self, snapshots: SnapshotList, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("snapshots")
        self.snapshots = snapshots
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setRootIsDecorated(False)
        self.tree.setIconSize(QSize(THUMB_PX, THUMB_PX))
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.tree.setWordWrap(True)
        self.tree.itemChanged.connect(self._on_edited)
        self.tree.itemActivated.connect(lambda item, _c: None)
        self.use_button = QPushButton()
        self.use_button.clicked.connect(lambda: self._with_current(self.snapshots.use))
        self.rename_button = QPushButton()
        self.rename_button.clicked.connect(self._rename_current)
        self.delete_button = QPushButton()
        self.delete_button.clicked.connect(lambda: self._with_current(self.snapshots.remove))
        self.pin_button = QPushButton()
        self.pin_button.clicked.connect(lambda: snapshots.host_.feature("menus").pin_reference())
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        buttons = QHBoxLayout()
        for b in (self.pin_button, self.use_button, self.rename_button, self.delete_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.hint)
        self.tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        snapshots.changed.connect(self.refresh)
        self.retranslate_ui()
        self.refresh()

    def retranslate_ui(self) -> None:
        self.tree.setHeaderLabels([QCoreApplication.translate("Snapshots", "Snapshot"), QCoreApplication.translate("Snapshots", "Configuration")])
        self.pin_button.setText(QCoreApplication.translate("Snapshots", "Pin current"))
        self.pin_button.setToolTip(QCoreApplication.translate("Snapshots", "Keep what the panels show as a new snapshot and make it A (Ctrl+P)"))
        self.use_button.setText(QCoreApplication.translate("Snapshots", "Use as A"))
        self.use_button.setToolTip(QCoreApplication.translate("Snapshots", "Compare the current state B with this snapshot"))
        self.rename_button.setText(QCoreApplication.translate("Snapshots", "Rename"))
        self.delete_button.setText(QCoreApplication.translate("Snapshots", "Delete"))
        self.hint.setText(QCoreApplication.translate(
            "Snapshots", "● marks the reference A. The heads and qkv panels' Show menus pick B, A or B − A (heads also "
            "A | B side by side); the other panels draw A beside B. Snapshots are saved with the session."))
        self.refresh()

    def rows(self) -> list[tuple[str, str]]:
        """(name column, summary column) as the list shows them."""
        return [(self.tree.topLevelItem(i).text(0), self.tree.topLevelItem(i).text(1))
                for i in range(self.tree.topLevelItemCount())]

    def refresh(self) -> None:
        current = self.tree.currentIndex().row()
        ref = self.snapshots.reference_index
        self.tree.blockSignals(True)
        try:
            self.tree.clear()
            for i, e in enumerate(self.snapshots.entries):
                item = QTreeWidgetItem([("● " if i == ref else "") + e.snapshot.name,
                                        e.snapshot.config.summary().replace("  ", " · ")])
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                item.setData(0, Qt.ItemDataRole.UserRole, i)
                image = self.snapshots.image(i)  # None: being computed, or not computable
                if image is not None:
                    item.setIcon(0, QIcon(QPixmap.fromImage(image)))
                if e.error:  # a config this build cannot compute: say so, keep the entry
                    item.setToolTip(0, QCoreApplication.translate("Snapshots", "cannot be computed here: {reason}").format(
                        reason=e.error))
                    item.setForeground(0, QColor("gray"))
                if i == ref:
                    f = QFont(item.font(0))
                    f.setBold(True)
                    item.setFont(0, f)
                item.setToolTip(1, item.text(1))
                self.tree.addTopLevelItem(item)
            self.tree.resizeColumnToContents(0)
            if 0 <= current < self.tree.topLevelItemCount():
                self.tree.setCurrentItem(self.tree.topLevelItem(current))
        finally:
            self.tree.blockSignals(False)
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.tree.currentItem() is not None
        for b in (self.use_button, self.rename_button, self.delete_button):
            b.setEnabled(has)

    def _with_current(self, fn) -> None:
        item = self.tree.currentItem()
        if item is not None:
            fn(int(item.data(0, Qt.ItemDataRole.UserRole)))

    def _rename_current(self) -> None:
        item = self.tree.currentItem()
        if item is not None:
            i = int(item.data(0, Qt.ItemDataRole.UserRole))
            self.tree.blockSignals(True)
            item.setText(0, self.snapshots.entries[i].snapshot.name)  # edit the name, not the ● mark
            self.tree.blockSignals(False)
            self.tree.editItem(item, 0)

    def _on_edited(self, item: QTreeWidgetItem, column: int) -> None:
        if column != 0:
            return
        i = int(item.data(0, Qt.ItemDataRole.UserRole))
        text = item.text(0).removeprefix("● ")
        try:
            self.snapshots.rename(i, text)
        except ValueError as exc:
            self.snapshots.host_.show_status(
                QCoreApplication.translate("Snapshots", "Not renamed: {reason}").format(reason=exc), 6000)
            self.refresh()


def show_snapshots(window) -> QDockWidget:
    """The Snapshots dock, made the first time (floating beside the window's docks)."""
    return window.features["snapshots"].show()


class SnapshotsFeature(Feature):
    """The window's snapshots (`state.snapshots`, a SnapshotList) and Edit ▸ Snapshots…
    (Ctrl+Shift+P) after the pin actions; the dock is made the first time it is shown."""

    name = "snapshots"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        self.list = self.state.snapshots = SnapshotList(state, host)
        self.dock: QDockWidget | None = None
        self.action = QAction(host.parent_widget())
        self.action.setShortcut(QKeySequence("Ctrl+Shift+P"))
        self.action.triggered.connect(self.show)
        host.add_action("edit", self.action, after=host.feature("menus").act_unpin)
        self.retranslate_ui()

    def show(self) -> QDockWidget:
        if self.dock is None:
            dock = QDockWidget(QCoreApplication.translate("Snapshots", "Snapshots"), self.host.parent_widget())
            dock.setObjectName("dock_snapshots")
            dock.setWidget(SnapshotsPanel(self.list))
            self.host.add_dock(dock, floating=True)
            dock.resize(560, 420)
            self.dock = dock
        self.dock.show()
        self.dock.raise_()
        return self.dock

    def retranslate_ui(self) -> None:
        self.action.setText(QCoreApplication.translate("Snapshots", "S&napshots…"))
        self.action.setStatusTip(QCoreApplication.translate(
            "Snapshots", "The pinned states: choose any as the reference A, rename, delete"))
        if self.dock is not None:
            self.dock.setWindowTitle(QCoreApplication.translate("Snapshots", "Snapshots"))
            self.dock.widget().retranslate_ui()

    def shutdown(self) -> None:
        """The window closes: the frame being computed stops at its next block (the engine's
        progress checks for the cancel), and the worker is waited for."""
        self.list.worker.stop()


def install_snapshots(window) -> SnapshotList:
    """The window's snapshots feature (made once); returns its list."""
    feature = window.features.get("snapshots") or SnapshotsFeature(window.state, window.host)
    return feature.list
