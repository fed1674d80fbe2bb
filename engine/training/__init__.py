"""The training lab's engine (Qt-free): train a tiny transformer and watch its heads form.

``TrainConfig`` (what to train), ``Trainer`` (steps, probe, circuit check,
save / load), ``TrainStep`` and ``ProbeSnapshot`` (what the lab draws). A run
saved with ``Trainer.save`` opens in ``engine.models.load_model`` like a
Hugging Face model. Contract: docs/contract.md, "engine.training".
"""

from .config import TASKS, TrainConfig
from .run_folder import RunFolderError, is_training_run
from .scores import SCORE_NAMES, head_scores
from .trainer import (
    CircuitCheck,
    ProbeSnapshot,
    Trainer,
    TrainStep,
    first_reached,
    induction_reached,
    torch_threads,
)

__all__ = [
    "SCORE_NAMES",
    "TASKS",
    "CircuitCheck",
    "ProbeSnapshot",
    "RunFolderError",
    "TrainConfig",
    "TrainStep",
    "Trainer",
    "first_reached",
    "head_scores",
    "induction_reached",
    "is_training_run",
    "torch_threads",
]
