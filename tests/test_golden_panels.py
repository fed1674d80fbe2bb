"""Golden PNGs of the five main panels, compared pixel for pixel.

Each panel is exported the way a user exports it (`python main.py export`, one subprocess for
all five, default config and selection, theme "slides", 1000 px wide) and compared with
`tests/golden/<panel>.png`. A refactor of the drawing code must leave these pixels unchanged;
a deliberate change of the pictures regenerates them:

    AE_UPDATE_GOLDEN=1 QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -q tests/test_golden_panels.py

(then look at the new PNGs before committing them). On a mismatch the test names the panel and
the number of pixels that differ, and writes the actual PNG and a difference mask (differing
pixels red) into the test's tmp folder.

One seam is fixed: the diagnostics panel's backends card prints each backend's measured time
and its max |Δ| against eager, which differ from run to run (the times always, the last bits
of SDPA's fused sum on a loaded machine: 1 run in ~5 of `make test`), so the export runs with
`engine.run_backend_comparison` wrapped to report fixed times and differences (everything
else it returns is measured as usual; tests/test_engine_*.py check the real differences).

The pictures depend on the machine's fonts (the Latin text is the platform's default family,
DejaVu Sans here) and on the Qt, pyqtgraph, numpy and torch versions: `tests/golden/environment.json`
records what the goldens were made with, and a mismatch on another environment says so
first. Rendering was checked to be deterministic (`test_export_is_deterministic` renders
twice: same bytes of pixels, text included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
PANELS = ("qkv", "scores", "softmax_grad", "heads", "diagnostics")
WIDTH = 1000
UPDATE = os.environ.get("AE_UPDATE_GOLDEN", "") not in ("", "0")

#: the export, with the backends' times fixed; prints the environment as JSON on its last line
_EXPORT = r"""
import json, sys
import engine
import engine.trace

_measured = engine.run_backend_comparison
_TIMES = {"eager": 0.5, "sdpa": 0.25, "flash": 0.125}

def _fixed_times(*args, **kwargs):
    out = _measured(*args, **kwargs)
    for name, row in out.items():
        if "ms" in row:
            row["ms"] = _TIMES.get(name, 1.0)
        if row.get("max_abs_diff"):  # the last bits of a fused kernel's sum vary under load
            row["max_abs_diff"] = 2.7e-07
    return out

engine.run_backend_comparison = _fixed_times
engine.trace.run_backend_comparison = _fixed_times

import main
rc = main.main(sys.argv[1:])

import numpy, pyqtgraph, PySide6, torch
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QApplication
app = QApplication.instance()
print(json.dumps({
    "qt": PySide6.__version__,
    "pyqtgraph": pyqtgraph.__version__,
    "numpy": numpy.__version__,
    "torch": torch.__version__.split("+")[0],
    "font": QFontInfo(app.font()).family() if app is not None else None,
    "platform": sys.platform,
}, sort_keys=True))
sys.exit(rc)
"""


def export(out: Path) -> dict:
    """The five panels exported into ``out``; returns the environment they were drawn in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_SCALE", "QT_FONT", "QT_SCREEN"))}
    env.update(QT_QPA_PLATFORM="offscreen", ATTN_EXPLORER_LANGUAGE="en",
               ATTN_EXPLORER_SETTINGS=str(out.parent / f"{out.name}-settings.ini"))
    panels = [a for p in PANELS for a in ("--panel", p)]
    cmd = [sys.executable, "-c", _EXPORT, "export", "--out", str(out), *panels, "--width", str(WIDTH),
           "--theme", "slides", "--format", "png"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def pixels(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGBA"))


def differing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(H, W) bool: pixels that differ (images of one shape)."""
    return (a != b).any(axis=-1)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("golden") / "actual"
    environment = export(out)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        for name in PANELS:
            (GOLDEN / f"{name}.png").write_bytes((out / f"{name}.png").read_bytes())
        (GOLDEN / "environment.json").write_text(json.dumps(environment, indent=2, sort_keys=True) + "\n")
    return out, environment


def environment_note(environment: dict) -> str:
    path = GOLDEN / "environment.json"
    made = json.loads(path.read_text()) if path.exists() else {}
    changed = [f"{k}: golden {made.get(k)!r}, here {environment.get(k)!r}"
               for k in sorted(set(made) | set(environment)) if made.get(k) != environment.get(k)]
    if not changed:
        return ""
    return ("this environment is not the one the goldens were made in (" + "; ".join(changed)
            + "): if the pictures only differ by that, regenerate with AE_UPDATE_GOLDEN=1. ")


@pytest.mark.slow
@pytest.mark.parametrize("name", PANELS)
def test_panel_matches_golden(rendered, name, tmp_path):
    out, environment = rendered
    golden = GOLDEN / f"{name}.png"
    assert golden.exists(), f"{name}: no golden {golden}; make it with AE_UPDATE_GOLDEN=1"
    actual_path = tmp_path / f"{name}-actual.png"
    actual_path.write_bytes((out / f"{name}.png").read_bytes())
    want, got = pixels(golden), pixels(actual_path)
    note = environment_note(environment)
    if want.shape != got.shape:
        pytest.fail(f"{note}{name}: {got.shape[1]}×{got.shape[0]} px, golden {want.shape[1]}×{want.shape[0]}; "
                    f"actual PNG: {actual_path}")
    diff = differing(want, got)
    n = int(diff.sum())
    if n:
        mask = np.where(diff[..., None], np.array([255, 0, 0, 255], np.uint8), want // 3)
        mask_path = tmp_path / f"{name}-diff.png"
        Image.fromarray(mask.astype(np.uint8), "RGBA").save(mask_path)
        ys, xs = np.nonzero(diff)
        pytest.fail(f"{note}{name}: {n} of {diff.size} pixels differ from {golden.name} "
                    f"(x {xs.min()}–{xs.max()}, y {ys.min()}–{ys.max()}); actual PNG: {actual_path}, "
                    f"differences in red: {mask_path}")


@pytest.mark.slow
def test_export_is_deterministic(rendered, tmp_path):
    """A second export draws the same pixels (text included): the goldens are not flaky."""
    first, _ = rendered
    second = tmp_path / "again"
    export(second)
    for name in PANELS:
        a, b = pixels(first / f"{name}.png"), pixels(second / f"{name}.png")
        assert a.shape == b.shape, f"{name}: {a.shape} then {b.shape}"
        n = int(differing(a, b).sum())
        assert n == 0, f"{name}: {n} pixels differ between two exports ({first}, {second})"
