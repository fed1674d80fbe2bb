"""The training panel's left side: the experiment and the runs kept for comparison.

A preset (its explanation and its expectation, checked live against the viewed run) or
custom settings in a form, how far Step goes and how often the heads are snapshotted, and
the list of runs (tick to overlay a run's loss, click to view it). `TrainingForm` writes to
the lab (explorer.training.lab.TrainingLab) and mirrors it in `sync` with its signals
held back; its texts are the panel's: translated in the context "TrainingPanel"
(explorer.training.texts).
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine import ConfigError
from engine.config import MAX_SEED
from engine.training import TASKS

from ..figures.themes import Theme
from ..i18n import engine_text
from .lab import TrainingLab
from .presets import PRESETS
from .texts import legend_labels, set_text, translate, translated

#: the settings form: (field, label); the widgets are built in TrainingForm._build_form
FIELDS = (
    ("task", QT_TRANSLATE_NOOP("TrainingPanel", "Task")),
    ("n_layers", QT_TRANSLATE_NOOP("TrainingPanel", "Layers")),
    ("n_heads", QT_TRANSLATE_NOOP("TrainingPanel", "Heads")),
    ("d_model", QT_TRANSLATE_NOOP("TrainingPanel", "d_model")),
    ("attn_only", QT_TRANSLATE_NOOP("TrainingPanel", "Attention only")),
    ("norm", QT_TRANSLATE_NOOP("TrainingPanel", "LayerNorm")),
    ("dropout", QT_TRANSLATE_NOOP("TrainingPanel", "Dropout")),
    ("scale", QT_TRANSLATE_NOOP("TrainingPanel", "Scale of QKᵀ")),
    ("init_std", QT_TRANSLATE_NOOP("TrainingPanel", "Init std")),
    ("lr", QT_TRANSLATE_NOOP("TrainingPanel", "Learning rate")),
    ("warmup_steps", QT_TRANSLATE_NOOP("TrainingPanel", "Warmup steps")),
    ("schedule", QT_TRANSLATE_NOOP("TrainingPanel", "Schedule")),
    ("steps", QT_TRANSLATE_NOOP("TrainingPanel", "Steps")),
    ("batch", QT_TRANSLATE_NOOP("TrainingPanel", "Batch")),
    ("seed", QT_TRANSLATE_NOOP("TrainingPanel", "Seed")),
)
FIELD_LABELS = dict(FIELDS)
#: the task combo's words (its item data stays the engine's name, the run's config value)
TASK_NAMES = {"induction": QT_TRANSLATE_NOOP("TrainingPanel", "induction"),
              "copy": QT_TRANSLATE_NOOP("TrainingPanel", "copy"),
              "reverse": QT_TRANSLATE_NOOP("TrainingPanel", "reverse"),
              "sort": QT_TRANSLATE_NOOP("TrainingPanel", "sort")}


class TrainingForm(QScrollArea):
    """The side column (object name "training_side"), 290 px wide, scrolled vertically."""

    def __init__(self, lab: TrainingLab, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lab = lab
        self._syncing = False
        self.setObjectName("training_side")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFixedWidth(290)
        inner = QWidget()
        col = QVBoxLayout(inner)
        col.setContentsMargins(6, 4, 6, 4)
        self.preset_label = QLabel()
        self.preset_combo = QComboBox()
        self.preset_combo.setObjectName("training_preset")
        for key, p in PRESETS.items():
            self.preset_combo.addItem(p.title, key)
        self.preset_combo.addItem("", None)  # custom settings
        self.preset_combo.currentIndexChanged.connect(self._on_preset_chosen)
        self.preset_label.setBuddy(self.preset_combo)
        col.addWidget(self.preset_label)
        col.addWidget(self.preset_combo)
        self.explanation = QLabel()
        self.explanation.setObjectName("training_explanation")
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        col.addWidget(self.explanation)
        self.expectation = QLabel()
        self.expectation.setObjectName("training_expectation")
        self.expectation.setWordWrap(True)
        self.expectation.setTextFormat(Qt.TextFormat.RichText)
        col.addWidget(self.expectation)
        self.message = QLabel()
        self.message.setObjectName("training_message")
        self.message.setWordWrap(True)
        self.message.hide()
        col.addWidget(self.message)
        self.form = QFormLayout()
        self.form.setContentsMargins(0, 4, 0, 4)
        self.form.setVerticalSpacing(3)
        self._build_form()
        col.addLayout(self.form)
        self.runs_label = QLabel()
        col.addWidget(self.runs_label)
        self.runs_list = QListWidget()
        self.runs_list.setObjectName("training_runs")
        self.runs_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.runs_list.setMinimumHeight(90)
        self.runs_list.itemChanged.connect(self._on_run_item_changed)
        self.runs_list.currentItemChanged.connect(self._on_run_item_current)
        col.addWidget(self.runs_list)
        self.clear_button = QPushButton()
        self.clear_button.setObjectName("training_clear_runs")
        self.clear_button.clicked.connect(lambda: self.lab.clear_runs())
        col.addWidget(self.clear_button)
        col.addStretch(1)
        self.setWidget(inner)

    def _build_form(self) -> None:
        self.fields: dict[str, QWidget] = {}
        self.field_labels: dict[str, QLabel] = {}

        def spin(lo: int, hi: int, step: int = 1) -> QSpinBox:
            w = QSpinBox()
            w.setRange(lo, hi)
            w.setSingleStep(step)
            w.setKeyboardTracking(False)
            w.valueChanged.connect(self._on_form_changed)
            return w

        def combo(items) -> QComboBox:
            w = QComboBox()
            for text, data in items:
                w.addItem(text, data)
            w.currentIndexChanged.connect(self._on_form_changed)
            return w

        def line() -> QLineEdit:
            w = QLineEdit()
            w.editingFinished.connect(self._on_form_changed)
            return w

        f = self.fields
        f["task"] = combo([(translated(TASK_NAMES.get(t, t)), t) for t in TASKS])
        f["n_layers"] = spin(1, 6)
        f["n_heads"] = spin(1, 16)
        f["d_model"] = spin(4, 512, 16)
        f["attn_only"] = QCheckBox()
        f["attn_only"].toggled.connect(self._on_form_changed)
        f["norm"] = combo([("pre-LN", "pre"), ("post-LN", "post"), ("none", "none")])
        f["dropout"] = QDoubleSpinBox()
        f["dropout"].setRange(0.0, 0.9)
        f["dropout"].setSingleStep(0.05)
        f["dropout"].setKeyboardTracking(False)
        f["dropout"].valueChanged.connect(self._on_form_changed)
        f["scale"] = QComboBox()
        f["scale"].setEditable(True)
        f["scale"].addItem("1/√d_k", "sqrt")
        f["scale"].addItem("none", "none")
        f["scale"].currentIndexChanged.connect(self._on_form_changed)
        f["scale"].lineEdit().editingFinished.connect(self._on_form_changed)
        f["init_std"] = line()
        f["lr"] = line()
        f["warmup_steps"] = spin(0, 100_000, 50)
        f["schedule"] = combo([("constant", "constant"), ("cosine", "cosine")])
        f["steps"] = spin(1, 1_000_000, 50)
        f["batch"] = spin(1, 1024, 8)
        f["seed"] = spin(0, MAX_SEED)
        for key, _label in FIELDS:
            w = f[key]
            w.setObjectName(f"training_field_{key}")
            label = QLabel()
            label.setBuddy(w)
            self.field_labels[key] = label
            self.form.addRow(label, w)
        self.step_size = spin(1, 10_000, 10)
        self.step_size.setObjectName("training_step_size")
        self.step_size.valueChanged.disconnect(self._on_form_changed)
        self.step_size.valueChanged.connect(lambda n: setattr(self.lab, "step_size", int(n)))
        self.every = spin(1, 10_000, 5)
        self.every.setObjectName("training_snapshot_every")
        self.every.valueChanged.disconnect(self._on_form_changed)
        self.every.valueChanged.connect(lambda n: self.lab.set_snapshot_every(n))
        self.step_size_label, self.every_label = QLabel(), QLabel()
        self.step_size_label.setBuddy(self.step_size)
        self.every_label.setBuddy(self.every)
        self.form.addRow(self.step_size_label, self.step_size)
        self.form.addRow(self.every_label, self.every)

    # ---- language ----------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self.preset_label.setText(translate("TrainingPanel", "Experiment"))
        for i in range(self.preset_combo.count()):
            key = self.preset_combo.itemData(i)
            self.preset_combo.setItemText(
                i, PRESETS[key].display_title() if key else translate("TrainingPanel", "Custom settings"))
        for key, label in self.field_labels.items():
            label.setText(translated(FIELD_LABELS[key]))
        task = self.fields["task"]
        for i in range(task.count()):
            task.setItemText(i, translated(TASK_NAMES.get(task.itemData(i), task.itemData(i))))
        self.step_size_label.setText(translate("TrainingPanel", "Step by"))
        self.every_label.setText(translate("TrainingPanel", "Snapshot every"))
        self.runs_label.setText(translate("TrainingPanel", "Runs (tick to overlay, click to view)"))
        self.clear_button.setText(translate("TrainingPanel", "Forget the other runs"))

    # ---- the lab ---------------------------------------------------------------------------------
    def sync(self, theme: Theme) -> None:
        """Mirror the lab in the form: its preset, settings and runs (no feedback to the lab)."""
        self._syncing = True
        try:
            idx = self.preset_combo.findData(self.lab.preset_key)
            self.preset_combo.setCurrentIndex(idx if idx >= 0 else self.preset_combo.count() - 1)
            self.sync_fields()
            self.step_size.setValue(self.lab.step_size)
            self.every.setValue(self.lab.snapshot_every)
            self.sync_preset_texts(theme)
            self._sync_runs_list()
        finally:
            self._syncing = False

    def sync_fields(self) -> None:
        """The settings fields show the lab's `shown_settings`: the run on screen's (another
        run clicked in the list, a preset's next run), or the settings changed for the next."""
        was, self._syncing = self._syncing, True
        try:
            c = self.lab.shown_settings()
            f = self.fields
            f["task"].setCurrentIndex(max(0, f["task"].findData(c.task)))
            for key in ("n_layers", "n_heads", "d_model", "warmup_steps", "steps", "batch", "seed"):
                f[key].setValue(getattr(c, key))
            f["attn_only"].setChecked(c.attn_only)
            f["norm"].setCurrentIndex(max(0, f["norm"].findData(c.norm)))
            f["dropout"].setValue(c.dropout)
            if isinstance(c.scale, str):
                i = max(0, f["scale"].findData(c.scale))
                f["scale"].setCurrentIndex(i)
                f["scale"].setEditText(f["scale"].itemText(i))  # (a number typed before stays otherwise)
            else:
                f["scale"].setEditText(f"{c.scale:g}")
            f["init_std"].setText(f"{c.init_std:g}")
            f["lr"].setText(f"{c.lr:g}")
            f["schedule"].setCurrentIndex(max(0, f["schedule"].findData(c.schedule)))
        finally:
            self._syncing = was

    def sync_preset_texts(self, theme: Theme) -> None:
        """The preset's explanation and expectation, with the verdict on the viewed run."""
        p = self.lab.preset
        if p is None:
            set_text(self.explanation,
                     translate("TrainingPanel", "Your own settings: Start trains them; Reset begins a new run."))
            self.expectation.hide()
            return
        set_text(self.explanation, p.display_explanation())
        self.expectation.show()
        v = self.lab.verdict()
        th = theme
        expect = translate("TrainingPanel", "Expect:")
        text = f"<b>{expect}</b> {p.display_expectation()}"
        if v is not None and v.state != "pending":
            colour = th.ok if v.state == "met" else th.error
            mark = (translate("TrainingPanel", "✓ met") if v.state == "met"
                    else translate("TrainingPanel", "✗ not met"))
            text += f"<br><span style='color:{colour}'><b>{mark}</b>: {v.text}</span>"
        elif self.lab.running:
            checking = translate("TrainingPanel", "checking while it trains…")
            text += f"<br><i>{checking}</i>"
        set_text(self.expectation, text)

    def _sync_runs_list(self) -> None:
        self.runs_list.blockSignals(True)
        try:
            self.runs_list.clear()
            labels = legend_labels(self.lab.runs)
            viewed = self.lab.viewed_run()
            for run in self.lab.runs:
                item = QListWidgetItem(labels[run.id])
                pix = QPixmap(12, 12)
                pix.fill(QColor(run.colour))
                item.setIcon(QIcon(pix))
                item.setData(Qt.ItemDataRole.UserRole, run.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if run.shown else Qt.CheckState.Unchecked)
                item.setToolTip(run.config.summary())
                self.runs_list.addItem(item)
                if run is viewed:
                    self.runs_list.setCurrentItem(item)
        finally:
            self.runs_list.blockSignals(False)

    def show_message(self, text: str, kind: str, theme: Theme) -> None:
        """The lab's message under the expectation (hidden when empty; red when an error)."""
        self.message.setVisible(bool(text))
        set_text(self.message, text)
        colour = theme.error if kind == "error" else theme.muted
        if self.message.styleSheet() != f"color: {colour};":
            self.message.setStyleSheet(f"color: {colour};")

    # ---- form ---------------------------------------------------------------------------------------
    def _form_values(self) -> dict:
        f = self.fields

        def number(text: str):
            try:
                return float(text)
            except ValueError:
                return text.strip()  # the engine names the field and says what it must be

        scale_box = f["scale"]
        i = scale_box.findText(scale_box.currentText())
        scale = scale_box.itemData(i) if i >= 0 else number(scale_box.currentText())
        return {
            "task": f["task"].currentData(), "n_layers": f["n_layers"].value(), "n_heads": f["n_heads"].value(),
            "d_model": f["d_model"].value(), "attn_only": f["attn_only"].isChecked(),
            "norm": f["norm"].currentData(), "dropout": round(f["dropout"].value(), 6), "scale": scale,
            "init_std": number(f["init_std"].text()), "lr": number(f["lr"].text()),
            "warmup_steps": f["warmup_steps"].value(), "schedule": f["schedule"].currentData(),
            "steps": f["steps"].value(), "batch": f["batch"].value(), "seed": f["seed"].value(),
        }

    def _on_form_changed(self, *_args) -> None:
        if self._syncing:
            return
        try:
            config = self.lab.make_config(self._form_values())
        except ConfigError as exc:
            field = str(exc).split(" ", 1)[0]  # (the engine's English names the field first)
            message = engine_text(str(exc))
            if field in FIELD_LABELS:
                message = f"{translated(FIELD_LABELS[field])}: {message}"
            self.lab.refuse(message)
            return
        self.lab.set_settings(config)

    def _on_preset_chosen(self, index: int) -> None:
        if self._syncing:
            return
        self.lab.apply_preset(self.preset_combo.itemData(index))

    def _on_run_item_changed(self, item: QListWidgetItem) -> None:
        self.lab.set_run_shown(item.data(Qt.ItemDataRole.UserRole), item.checkState() == Qt.CheckState.Checked)

    def _on_run_item_current(self, item: QListWidgetItem | None, _previous) -> None:
        if item is not None:
            self.lab.set_view_run(item.data(Qt.ItemDataRole.UserRole))
