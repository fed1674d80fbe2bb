"""Writing figures to files safely: to a temporary file in the same folder, flushed to disk,
then moved into place; an existing file is kept unless `force`; any failure (unwritable
folder, a path that is a file, a full disk) raises `ExportError` with one readable line and
leaves no temporary file behind. `export_panels` writes all the figures of a call or none.

    write_atomic(path, data, force=False) -> Path
    publish(tmp, final, force=False)        # a finished temporary file into place (films too)
    export_panels(window, out_dir, names, formats, options, force=False) -> [Path]
    export_widget(widget, path, options) -> Path
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..host import host_of
from .fresh import render_figure, render_panels
from .options import (
    ON_DEMAND_PANELS,
    ExportError,
    ExportOptions,
    ExportUsageError,
    check_format,
    unknown_panel,
)


def reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno == errno.EFBIG:
        return "the file is larger than this system allows it to grow"
    if exc.errno == errno.EDQUOT:
        return "the disk quota is exceeded"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a file, not a folder"
    if exc.errno == errno.ENOENT:
        return "the folder does not exist"
    return exc.strerror or str(exc)


def check_target(p: Path) -> Path:
    """The folder a file `p` would be written into; ExportError when `p` is a folder or its
    folder is missing or a file."""
    folder = p.parent
    if p.is_dir():
        raise ExportError(f"cannot write {p}: it is a folder")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise ExportError(f"cannot write {p}: the folder {folder} {what}")
    return folder


def write_atomic(path: str | os.PathLike, data: bytes, *, force: bool = False) -> Path:
    """Write `data` to `path` via a temporary file in the same folder, then rename it into
    place. Without `force` an existing file is never replaced, even one that appears while
    we write (the final step is a hard link, which refuses to overwrite)."""
    p = Path(path)
    folder = check_target(p)
    if p.exists() and not force:
        raise ExportError(f"{p} already exists (use --force to overwrite)")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise ExportError(f"cannot write in {folder}: {reason(exc)}") from None
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            publish(tmp, p, force=force)
        except OSError as exc:
            raise ExportError(f"cannot write {p}: {reason(exc)}") from None
    finally:
        if os.path.exists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


def publish(tmp: str | os.PathLike, p: Path, *, force: bool = False) -> None:
    """Move the finished temporary file `tmp` to `p` with the user's file mode; without
    `force` never replace a file (ExportError), even one that appeared meanwhile. OSError
    passes (the caller says what it was writing)."""
    os.chmod(tmp, 0o644 & ~_umask())
    if force:
        os.replace(tmp, p)
        return
    try:
        os.link(tmp, p)  # atomic, fails if p exists
    except FileExistsError:
        raise ExportError(f"{p} already exists (use --force to overwrite)") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # a file system without hard links (FAT, some network shares): check, then rename
        if p.exists():
            raise ExportError(f"{p} already exists (use --force to overwrite)") from None
        os.replace(tmp, p)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def export_widget(widget, path: str | os.PathLike, options: ExportOptions, *, config=None,
                  force: bool = False, fmt: str | None = None, title: str = "") -> Path:
    """Render `widget` and write it to `path` (format from `fmt` or the suffix)."""
    p = Path(path)
    fmt = check_format(fmt or p.suffix or "?")
    if p.exists() and not force:  # fail before spending time on the render
        raise ExportError(f"{p} already exists (use --force to overwrite)")
    data = render_figure(widget, fmt, options, config=config, title=title or p.stem)
    return write_atomic(p, data, force=force)


# ---- the window's panels ---------------------------------------------------------------------


def make_on_demand(window, names: Iterable[str] | None) -> None:
    """Make the on-demand panels among ``names`` that ``window`` has not made yet (closed)."""
    import importlib

    window = host_of(window)
    have = window.panel_names()
    for n in names or ():
        if n in ON_DEMAND_PANELS and n not in have:
            module, function = ON_DEMAND_PANELS[n].split(":")
            getattr(importlib.import_module(module), function)(window)


def panel_names(window) -> list[str]:
    """The panels this window has (model panels only once a model is loaded)."""
    window = host_of(window)
    from ..panels import PANELS

    # not the lesson panel: it is text and buttons, not a figure (asked of the panel's class:
    # a panel closed since the window opened is not made for it)
    return [n for n in window.panel_names() if PANELS[n].exportable]


def is_shown(widget) -> bool:
    """Whether the panel is on screen in its window (not closed, not behind a dock tab)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()



def export_panels(window, out_dir: str | os.PathLike, names: Iterable[str] | None, formats: Sequence[str],
                  options: ExportOptions, *, force: bool = False, size: tuple[int, int] | None = None,
                  on_written: Callable[[Path], None] | None = None) -> list[Path]:
    """Write out_dir/NAME.FORMAT for each panel and format; returns the paths written.

    Every figure is a fresh panel drawn from the window's current state (`fresh_panel`),
    laid out at `size` (default FIGURE_SIZE), also for panels behind a tab or closed. All of
    them are rendered before the first file is written, and a failure while writing removes
    the files this call wrote: the folder gets all the figures or nothing new."""
    window = host_of(window)
    out = Path(out_dir)
    names = list(names) if names is not None else None
    make_on_demand(window, names)
    known = panel_names(window)
    names = list(dict.fromkeys(names)) if names else known
    for n in names:
        if n not in known:
            raise ExportUsageError(unknown_panel(n, known))
    formats = [check_format(f) for f in dict.fromkeys(formats)]
    options.validate()
    targets = [(n, f, out / f"{n}.{f}") for n in names for f in formats]
    if not force:  # refuse before rendering anything
        for _n, _f, path in targets:
            if path.is_dir():
                raise ExportError(f"cannot write {path}: it is a folder")
            if path.exists():
                raise ExportError(f"{path} already exists (use --force to overwrite)")
    figures = render_panels(window, names, formats, options, size=size)
    written: list[Path] = []
    try:
        for n, f, path in targets:
            written.append(write_atomic(path, figures[(n, f)], force=force))
    except ExportError:
        for p in written:
            with contextlib.suppress(OSError):
                p.unlink()
        raise
    for p in written:
        if on_written is not None:
            on_written(p)
    return written
