"""Real Hugging Face models in Attention Explorer (Qt-free).

``load_model`` opens a local folder (or a hub id already in the local cache)
safely and offline; ``LoadedModel.inspect`` captures every head's attention
and the per-layer Q/K/V; :mod:`engine.models.metrics` labels head patterns;
``LoadedModel.deletion_test`` runs the token-deletion test; the circuits lens (what a head
does: detectors, QK/OV circuits, logit lens, attribution, patching, Q/K space) is in
:mod:`.detectors`, :mod:`.circuits`, :mod:`.lens` and :mod:`.patching`, as LoadedModel methods;
:mod:`.fidelity` checks them against the model's own forward pass (``LoadedModel.fidelity``).
"""

from .circuits import HeadCircuits, QKEmbedding, TokenPair
from .detectors import DETECTOR_NAMES
from .errors import InspectError, ModelLoadError
from .fidelity import Fidelity
from .lens import LogitAttribution, LogitLens
from .loader import LoadedModel, ModelSummary, default_device, load_model, model_code_files
from .metrics import METRIC_NAMES, PATTERN_LABELS, head_metrics, matrix_metrics
from .patching import PatchResult
from .trace import DeletionResult, ModelTrace, token_label

__all__ = [
    "DETECTOR_NAMES",
    "METRIC_NAMES",
    "PATTERN_LABELS",
    "DeletionResult",
    "Fidelity",
    "HeadCircuits",
    "InspectError",
    "LoadedModel",
    "LogitAttribution",
    "LogitLens",
    "ModelLoadError",
    "ModelSummary",
    "ModelTrace",
    "PatchResult",
    "QKEmbedding",
    "TokenPair",
    "default_device",
    "head_metrics",
    "load_model",
    "matrix_metrics",
    "model_code_files",
    "token_label",
]
