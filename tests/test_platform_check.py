"""`make run` / `main.py gui` before the window: missing xcb libraries get one install line.

A missing library is faked by handing the check a probe (dependency injection), never by
uninstalling anything; the real probe is checked against the installed PySide6 plugin.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import main as cli
from explorer import platform_check
from explorer.platform_check import XCB_LIBRARIES, missing_xcb_message

ROOT = Path(__file__).resolve().parents[1]
NO_ICCCM_NO_CURSOR = {"libxcb-icccm.so.4", "libxcb-cursor.so.0"}


def _probe_without(*names: str):
    return lambda soname: soname not in names


def test_a_missing_library_gives_one_line_with_apt_and_dnf_commands():
    line = missing_xcb_message({}, "linux", probe=_probe_without(*NO_ICCCM_NO_CURSOR))
    assert line is not None and "\n" not in line
    assert "`sudo apt-get install libxcb-cursor0 libxcb-icccm4`" in line
    assert "`sudo dnf install xcb-util-cursor xcb-util-wm`" in line
    assert "libxcb-icccm.so.4" in line and "libxcb-keysyms" not in line  # only what is missing


@pytest.mark.parametrize("env", [{}, {"DISPLAY": ":0"}, {"QT_QPA_PLATFORM": "xcb"},
                                 {"QT_QPA_PLATFORM": "xcb;offscreen"}, {"QT_QPA_PLATFORM": " "}])
def test_the_check_runs_when_qt_would_start_xcb(env):
    assert missing_xcb_message(env, "linux", probe=_probe_without("libxcb-keysyms.so.1")) is not None


@pytest.mark.parametrize("env, platform", [({"QT_QPA_PLATFORM": "offscreen"}, "linux"),
                                           ({"QT_QPA_PLATFORM": "wayland"}, "linux"),
                                           ({"QT_QPA_PLATFORM": "minimal"}, "linux"),
                                           ({}, "darwin"), ({}, "win32")])
def test_another_platform_skips_the_check(env, platform):
    assert missing_xcb_message(env, platform, probe=lambda soname: False) is None


def test_nothing_missing_says_nothing():
    assert missing_xcb_message({}, "linux", probe=lambda soname: True) is None


def test_module_main_exits_1_with_the_line(capsys):
    assert platform_check.main({}, probe=_probe_without("libxcb-keysyms.so.1")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sudo apt-get install libxcb-keysyms1" in err[0]
    assert platform_check.main({"QT_QPA_PLATFORM": "offscreen"}, probe=lambda soname: False) == 0


def test_main_gui_refuses_before_any_window(monkeypatch, capsys):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(platform_check, "loadable", _probe_without("libxcb-icccm.so.4"))
    monkeypatch.setattr(sys, "platform", "linux")
    assert cli.main(["gui"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith("attention-explorer gui: Qt's xcb platform plugin")
    assert "sudo apt-get install libxcb-icccm4" in err[0] and "sudo dnf install xcb-util-wm" in err[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xcb is Linux's")
def test_the_module_agrees_with_the_loader_on_this_machine():
    """`python -m explorer.platform_check` (what `make run` runs first): exit 1 with the line
    exactly when a library really is missing here, and 0 offscreen whatever is missing."""
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["PYTHONPATH"] = str(ROOT)
    r = subprocess.run([sys.executable, "-m", "explorer.platform_check"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    missing = [name for name in XCB_LIBRARIES if not platform_check.loadable(name)]
    assert r.returncode == (1 if missing else 0), r.stderr
    for name in missing:
        assert name in r.stderr
    env["QT_QPA_PLATFORM"] = "offscreen"
    r = subprocess.run([sys.executable, "-m", "explorer.platform_check"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.skipif(shutil.which("ldd") is None, reason="needs ldd")
def test_the_table_names_every_x11_library_the_installed_plugin_links():
    import importlib.util

    spec = importlib.util.find_spec("PySide6")
    plugin = Path(next(iter(spec.submodule_search_locations))) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.is_file():
        pytest.skip("this PySide6 has no xcb plugin")
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=60).stdout
    linked = set(re.findall(r"^\s*(lib(?:xcb|X11|xkbcommon)[\w.-]*\.so\.\d+)", out, re.M))
    assert linked and linked <= set(XCB_LIBRARIES), linked - set(XCB_LIBRARIES)


def test_a_bundles_own_copy_counts_as_present(monkeypatch, tmp_path):
    """A PyInstaller bundle ships most xcb libraries beside itself: a copy there is no
    missing library, though the system's loader does not know it."""
    name = "libattention-explorer-absent.so.9"
    assert not platform_check.loadable(name)
    (tmp_path / name).write_bytes(b"")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert platform_check.loadable(name)
