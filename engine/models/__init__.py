"""Real Hugging Face models in Attention Explorer (Qt-free).

``load_model`` opens a local folder (or a hub id already in the local cache)
safely and offline; ``LoadedModel.inspect`` captures every head's attention
and the per-layer Q/K/V; :mod:`engine.models.metrics` labels head patterns;
``LoadedModel.deletion_test`` runs the token-deletion test.
"""

from .errors import InspectError, ModelLoadError
from .loader import LoadedModel, ModelSummary, default_device, load_model, model_code_files
from .metrics import METRIC_NAMES, PATTERN_LABELS, head_metrics, matrix_metrics
from .trace import DeletionResult, ModelTrace, token_label

__all__ = [
    "METRIC_NAMES",
    "PATTERN_LABELS",
    "DeletionResult",
    "InspectError",
    "LoadedModel",
    "ModelLoadError",
    "ModelSummary",
    "ModelTrace",
    "default_device",
    "head_metrics",
    "load_model",
    "matrix_metrics",
    "model_code_files",
    "token_label",
]
