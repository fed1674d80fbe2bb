"""What goes into the Attention Explorer bundle: one place for the spec, build.py and tests.

Plain Python with no PyInstaller import, so tests/test_packaging.py can check the lists
without building anything.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

APP_NAME = "attention-explorer"          # folder, console executable, .deb package, launcher
GUI_EXE_NAME = "AttentionExplorer"       # Windows: the windowed executable the shortcuts start
DISPLAY_NAME = "Attention Explorer"
MAC_BUNDLE_ID = "org.attentionexplorer.AttentionExplorer"
DEMO_MODEL_NAME = "all-MiniLM-L6-v2"
DEMO_MODEL_REQUIRED = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt")
DEMO_MODEL_SKIP = frozenset({".gitattributes"})

# Python packages the app never uses. Some are installed in the pinned environment for the
# tests or pulled in by the demo-model package (sentence-transformers -> scipy, sklearn);
# transformers probes scipy with find_spec only, so leaving it out is safe.
EXCLUDES = [
    # scientific stack the app does not use
    "scipy", "sklearn", "sentence_transformers", "pandas", "matplotlib",
    "joblib", "threadpoolctl", "narwhals", "cloudpickle",
    # tests and test tooling
    "tests", "pytest", "_pytest", "pytestqt", "hypothesis", "expecttest", "ruff",
    "transformers.testing_utils", "torch.utils.benchmark", "torch.utils.bottleneck",
    # TensorBoard, notebooks, other frameworks and GUI toolkits
    "tensorboard", "tensorboardX", "torch.utils.tensorboard", "torchvision", "torchaudio",
    "tensorflow", "jax", "flax", "onnxruntime", "IPython", "ipykernel", "ipywidgets",
    "jupyter_client", "notebook", "tkinter", "_tkinter", "PyQt5", "PyQt6", "PySide2",
    "pyqtgraph.examples", "pyqtgraph.opengl", "pyqtgraph.jupyter",
    # command-line front ends of the hub client (never reached from the app)
    "typer", "rich", "hf_xet", "huggingface_hub.cli", "transformers.commands",
    "transformers.cli",
]

# transformers architectures whose modules are analysed (their dependencies collected);
# every other architecture is still importable from the bundled source files.
TRANSFORMERS_ARCHS = (
    "auto", "bert", "distilbert", "roberta", "xlm_roberta", "albert", "electra", "deberta_v2",
    "gpt2", "gpt_neo", "gpt_neox", "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2",
    "phi", "phi3", "t5", "bart", "mpnet", "encoder_decoder", "opt", "smollm3",
)


def keep_transformers_module(name: str) -> bool:
    """Whether ``collect_submodules('transformers')`` should analyse ``name``."""
    if any(name == ex or name.startswith(ex + ".") for ex in EXCLUDES):
        return False
    parts = name.split(".")
    if len(parts) >= 3 and parts[1] == "models":
        return parts[2] in TRANSFORMERS_ARCHS
    return True


# Files that hooks collect wholesale but the app never loads (matched on the path inside the
# bundle, with forward slashes). torch's hook takes every non-Python file of the package.
DROP_PATTERNS = [
    # C++ test executables and protoc (torch_shm_manager stays: `import torch` checks for it)
    "torch/bin/test_*", "torch/bin/*Test", "torch/bin/protoc*", "torch/bin/*.pt",
    "torch/bin/*.ptl", "torch/bin/upgrader_models*",
    "torch/test/*",                    # C++ unit-test binaries (80+ MB)
    "torch/include/*",                 # C/C++ headers
    "torch/share/*",                   # CMake config
    "torch/lib/libjitbackend_test.*",
    "torch/lib/libtorchbind_test.*",
    "torch/lib/libbackend_with_compiler.*",
    "torch/lib/libaoti_custom_ops.*",
    "torch/lib/*.lib",
    "torch/lib/*.a",
    "*.pyi",
    # CUDA runtime libraries found on the build machine through ctypes probes in torch and
    # transformers: the installers ship the CPU build and must not carry them.
    "libcudart*", "libcuda.*", "libnvrtc*", "libcublas*", "libcudnn*", "nvidia/*",
    # Qt plugins for embedded / kiosk / GTK environments the classroom app never uses
    # (the GTK3 theme alone drags in GTK, cairo, pango and friends).
    "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
    "PySide6/Qt/plugins/egldeviceintegrations/*",
    "PySide6/Qt/plugins/platforms/libqeglfs.so",
    "PySide6/Qt/plugins/platforms/libqlinuxfb.so",
    "PySide6/Qt/plugins/platforms/libqminimalegl.so",
    "PySide6/Qt/plugins/platforms/libqvnc.so",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay.so",
    "PySide6/Qt/plugins/generic/*",
    "PySide6/Qt/lib/libQt6EglFSDeviceIntegration.so*",
    "PySide6/Qt/lib/libQt6EglFsKmsSupport.so*",
    # Qt: translations of modules the app does not load (qtbase_* is kept)
    "PySide6/Qt/translations/qtwebengine_*",
    "PySide6/Qt/translations/qtmultimedia_*",
    "PySide6/Qt/translations/qtdeclarative_*",
    "PySide6/Qt/translations/qtserialport_*",
    "PySide6/Qt/translations/qtconnectivity_*",
    "PySide6/Qt/translations/qtlocation_*",
    "PySide6/Qt/translations/qtwebsockets_*",
    "PySide6/Qt/translations/assistant_*",
    "PySide6/Qt/translations/designer_*",
    "PySide6/Qt/translations/linguist_*",
    "PySide6/Qt/translations/qt_help_*",
    # metadata of distributions that are excluded above (hook-transformers copies it)
    "scipy-*.dist-info/*", "scikit_learn-*.dist-info/*", "sentence_transformers-*.dist-info/*",
    "pytest-*.dist-info/*", "hypothesis-*.dist-info/*", "pandas-*.dist-info/*",
]


def drop_file(dest: str) -> bool:
    """Whether a collected file (its destination path in the bundle) is left out."""
    dest = dest.replace("\\", "/")
    return any(fnmatch.fnmatch(dest, pat) for pat in DROP_PATTERNS)


# Linux: shared libraries worth stripping of their symbol tables after the build (symbols
# only serve debuggers; .dynsym, which the loader needs, stays). libtorch_cpu.so alone drops
# from ~434 MB to ~345 MB. Only torch's own libraries: auditwheel-patched ones (*.libs/) are
# left alone because strip can corrupt patchelf-edited files.
STRIP_PATTERNS = ["torch/lib/libtorch_cpu.so", "torch/lib/libtorch_python.so",
                  "torch/lib/libc10.so", "torch/lib/libtorch.so", "torch/lib/libshm.so"]


# Debian packages the .deb needs from the system: what `ldd` of every bundled binary resolves
# outside the bundle (glibc, the GL/EGL drivers, xcb and its two small helper libraries that
# Qt's xcb platform plugin needs), plus fontconfig's configuration. The glibc floor is
# measured from the bundle by build.py. Wayland libraries only serve the native Wayland
# plugin; without them Qt runs through XWayland.
DEB_DEPENDS = ["libgl1", "libegl1", "libxcb1", "libxcb-icccm4", "libxcb-keysyms1",
               "fontconfig-config"]
DEB_RECOMMENDS = ["fonts-dejavu-core | fonts-liberation2", "libwayland-client0",
                  "libwayland-cursor0", "libwayland-egl1", "xdg-utils"]


# Files of assets/ that are not copied as data.
def skip_asset(rel: str) -> bool:
    rel = rel.replace("\\", "/")
    parts = rel.split("/")
    return (
        "__pycache__" in parts
        or rel.endswith((".py", ".pyc", ".ts"))  # .ts: Qt Linguist sources; the app loads .qm
        or rel.startswith("assets/models/")  # the demo model is added from its package
        # README/documentation images kept in assets/; the app never opens them
        or (len(parts) == 2 and parts[1].startswith(("screenshot", "figure_")))
    )


# Distribution metadata copied into the bundle (importlib.metadata answers from it).
METADATA_DISTS = [
    "transformers", "tokenizers", "safetensors", "huggingface_hub", "torch", "numpy",
    "filelock", "fsspec", "packaging", "PyYAML", "regex", "tqdm", "typing_extensions",
    "Jinja2", "MarkupSafe", "sympy", "mpmath", "networkx", "httpx2", "httpcore2",
    "PySide6_Essentials", "shiboken6", "pyqtgraph", "superqt", "psygnal", "attention-explorer",
    "imageio", "imageio-ffmpeg", "pillow",
]
METADATA_REQUIRED = {"transformers", "tokenizers", "safetensors", "huggingface_hub", "torch"}

# Sweeps as animations (explorer/export/animation.py): imageio finds its plugins by name at run time
# (pillow for GIF, ffmpeg for MP4), and imageio-ffmpeg runs the ffmpeg executable its wheel
# ships in imageio_ffmpeg/binaries/; the spec collects both.
ANIMATION_PLUGINS = ("imageio.plugins.pillow", "imageio.plugins.ffmpeg", "imageio.v2", "imageio.v3",
                     "imageio_ffmpeg", "PIL.GifImagePlugin", "PIL.PngImagePlugin")
FFMPEG_PACKAGE, FFMPEG_SUBDIR = "imageio_ffmpeg", "binaries"


def app_version() -> str:
    """The project version from pyproject.toml (the one source of truth)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib

        return str(tomllib.loads(text)["project"]["version"])
    except ModuleNotFoundError:  # Python 3.10
        m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
        if not m:
            raise RuntimeError("no version in pyproject.toml") from None
        return m.group(1)
