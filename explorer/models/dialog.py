"""File ▸ Open model…: the dialog asking for a source (a folder or a cached hub id),
downloads, the device and the number of layers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from PySide6.QtCore import QEvent
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
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..guard import contained
from .source import LoadRequest, demo_model_path, source_exists

__all__ = ["OpenModelDialog"]


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

    @contained  # an exception here must not reach Qt (explorer/guard.py)
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _browse(self) -> None:
        start = self.source.text().strip()
        if not start or not source_exists(start):
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
