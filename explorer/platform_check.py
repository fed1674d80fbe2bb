"""Before the window: are the system libraries Qt's xcb platform plugin needs installed?

PySide6's wheel ships Qt but not the X11/xcb libraries its `libqxcb.so` links against. On a
fresh Debian/Ubuntu desktop `libxcb-icccm4`, `libxcb-keysyms1` and (Qt ≥ 6.5) `libxcb-cursor0`
are often missing, and Qt then aborts with "Could not load the Qt platform plugin xcb", which
names no package. This module checks first and says which packages to install:

    problem = missing_xcb_message()       # None, or one line naming apt-get and dnf commands
    python -m explorer.platform_check     # exit 0, or the line on stderr and exit 1 (make run)

Qt-free (no PySide6 import; the plugin is never loaded here): a library counts as present
when the dynamic loader can open it by its soname (ctypes.CDLL, the same search Qt's loader
makes) or a copy of it ships in PySide6's own Qt/lib folder or a PyInstaller bundle's.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

#: soname -> (Debian/Ubuntu package, Fedora package): every system library that PySide6 6.x's
#: libqxcb.so and libQt6XcbQpa.so.6 link against (readelf -d: their NEEDED entries, less Qt's
#: own, libc, libstdc++ and the libraries Qt's GUI module itself needs before any plugin).
XCB_LIBRARIES: dict[str, tuple[str, str]] = {
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
}


def _bundled_qt_lib() -> Path | None:
    """PySide6's Qt/lib folder (where a bundle may carry its own copies), found without
    importing PySide6; None when PySide6 is not installed as a package."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt" / "lib"


def _bundled_dirs() -> list[Path]:
    """Folders a copy of a library may ship in: PySide6's Qt/lib and, in a PyInstaller bundle,
    its top folder (where it puts the libraries the Qt plugins link against)."""
    dirs = [d for d in (_bundled_qt_lib(),) if d is not None]
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        dirs.append(Path(frozen))
    return dirs


def loadable(soname: str) -> bool:
    """Whether the dynamic loader opens `soname` (or the app carries a copy of it)."""
    try:
        ctypes.CDLL(soname)
        return True
    except OSError:
        pass
    return any((d / soname).is_file() for d in _bundled_dirs())


def platform_would_be_xcb(environ: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt would start on its xcb plugin here.

    Linux only. QT_QPA_PLATFORM (e.g. "offscreen", "wayland", "xcb;wayland"), when set, names
    the plugin Qt tries first; without it PySide6's Linux build starts xcb, a DISPLAY set or not
    (no DISPLAY: xcb then fails to connect, and that message is Qt's own, after this check).
    """
    env = os.environ if environ is None else environ
    if not (sys.platform if platform is None else platform).startswith("linux"):
        return False
    requested = env.get("QT_QPA_PLATFORM", "").strip()
    if not requested:
        return True
    first = requested.split(";")[0].split(":")[0].strip().lower()
    return first == "xcb"


def install_line(missing: Iterable[str]) -> str:
    """One line: what is missing and the apt-get and dnf commands that install it."""
    missing = sorted(missing)
    apt = sorted({XCB_LIBRARIES[name][0] for name in missing if name in XCB_LIBRARIES})
    dnf = sorted({XCB_LIBRARIES[name][1] for name in missing if name in XCB_LIBRARIES})
    return (f"Qt's xcb platform plugin needs system libraries that are not installed "
            f"({', '.join(missing)}): install them with `sudo apt-get install {' '.join(apt)}` "
            f"(Debian/Ubuntu) or `sudo dnf install {' '.join(dnf)}` (Fedora)")


def missing_xcb_message(environ: Mapping[str, str] | None = None, platform: str | None = None,
                        probe: Callable[[str], bool] | None = None) -> str | None:
    """None when the window can start as far as system libraries go; else the one line to
    print. `probe(soname) -> bool` says whether a library is present (default `loadable`)."""
    if not platform_would_be_xcb(environ, platform):
        return None
    probe = loadable if probe is None else probe
    missing = [name for name in XCB_LIBRARIES if not probe(name)]
    return install_line(missing) if missing else None


def main(environ: Mapping[str, str] | None = None, probe: Callable[[str], bool] | None = None) -> int:
    """`python -m explorer.platform_check`: 0 when nothing is missing, else the line and 1."""
    problem = missing_xcb_message(environ, probe=probe)
    if problem:
        print(f"attention-explorer: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
