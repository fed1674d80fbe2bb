"""Sweeps as animations: one GIF or MP4 per panel, one frame per value of a config field.

    request = AnimationRequest(parse_sweep("d_model=32:128:32"), ("heads",), "gif", Path("out"))
    job = AnimationJob(window, request)   # validates everything; raises SweepError / ExportError
    while job.step(): ...                 # or: the window's progress bar drives it (animation_dialog)
    job.written                           # [out/heads-d_model.gif]
    export_animation(window, request) -> [Path]   # the loop above, for scripts and the CLI

Every frame is the same figure as File ▸ Export: a fresh panel (`explorer.export.fresh_panel`)
drawn offscreen in the figure theme, here from a frame of the swept config and a selection of
its own; the window is never touched. Under the figure a caption strip names the value in bold
("d_model = 64") and the config summary. All frames of a panel have one size (the largest
caption decides the strip); MP4 frames are padded to even sides (yuv420p).

Work is split so the event loop keeps running: the engine computes the next frame in a
thread while the UI thread paints the current one, one panel frame per `step()`; frames are
streamed to a second thread that encodes them as they come (`explorer.export.gif` for GIF,
the ffmpeg that imageio-ffmpeg ships for MP4); painting waits while `QUEUED_FRAMES` wait for
it, so a film holds a few frames whatever its length (`film_bytes`, checked against
`MAX_FILM_BYTES` before drawing and again with the first frame's real size). Each file is written to a hidden temporary file in the destination folder and renamed
into place only when every file of the job is complete: a cancel or a failure leaves nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..host import host_of
from ..work.base import TaskWorker
from .files import panel_names, publish, reason
from .options import (
    MAX_WIDTH,
    MIN_WIDTH,
    MODEL_PANEL_NAMES,
    ExportError,
    ExportUsageError,
    unknown_panel,
)
from .sweep import SweepError, SweepSpec, fit_to, sweep_configs

FORMATS = ("gif", "mp4")
#: The frame buffers a film export may hold while writing (`film_bytes`).
MAX_FILM_BYTES = 1536 * 1024**2
#: Frames painted and waiting for the encoder thread: the painting waits beyond this.
QUEUED_FRAMES = 2
#: Frame-sized buffers while one frame is painted: Qt's image, its copy, Qt's temporaries.
PAINT_FRAMES = 3
#: A frame's height over its width, guessed before the first one is drawn (the panels' figure
#: is 1200 × 750 plus its caption strip); the first frame's real size is checked again.
ASPECT_GUESS = 0.7
DEFAULT_FPS = 1.0
FPS_RANGE = (0.1, 30.0)


@dataclass(frozen=True)
class AnimationRequest:
    """spec: what to sweep; names: the panels; fmt: gif or mp4; out_dir: the folder;
    width: pixels; fps: frames per second (a GIF frame lasts 1/fps s); force: replace files."""

    spec: SweepSpec
    names: tuple[str, ...]
    fmt: str
    out_dir: Path
    width: int = 1280
    theme: str = "slides"
    fps: float = DEFAULT_FPS
    force: bool = False

    def path(self, name: str) -> Path:
        """out_dir/NAME-FIELD.FORMAT (docs/contract.md)."""
        return Path(self.out_dir) / f"{name}-{self.spec.field}.{self.fmt}"


def check_animation_format(fmt: str) -> str:
    f = str(fmt).lower().lstrip(".")
    if f not in FORMATS:
        raise ExportUsageError(f"an animation is {' or '.join(FORMATS)}, got {fmt!r}")
    return f


# ---- one frame ---------------------------------------------------------------------------


def caption_strip_height(theme, captions: list[tuple[str, str]], width: float) -> int:
    """Logical height of the caption strip that fits the longest of `captions` (label, summary)."""
    from .render import caption_height

    return max(caption_height(theme, f"{label}  ·  {summary}", width) for label, summary in captions)


def paint_sweep_caption(painter, rect, label: str, summary: str, theme) -> None:
    """The value in bold ("d_model = 64"), then the config summary in the muted colour."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QFontMetricsF

    from .render import caption_colours, caption_font, caption_lines

    fg, bg = caption_colours(theme)
    painter.save()
    try:
        painter.fillRect(rect, bg)
        bold = caption_font(theme)
        bold.setBold(True)
        plain = caption_font(theme)
        lead = f"{label}  ·  "
        lead_w = QFontMetricsF(bold).horizontalAdvance(lead)
        inner = rect.adjusted(10, 0, -10, 0)
        lines = caption_lines(f"{lead}{summary}", theme, rect.width())
        line_h = QFontMetricsF(plain).height()
        top = inner.top() + (inner.height() - line_h * len(lines)) / 2
        flags = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)
        painter.setFont(bold)
        painter.setPen(fg)
        painter.drawText(QRectF(inner.left(), top, inner.width(), line_h), flags, lead.rstrip())
        painter.setFont(plain)
        painter.setPen(QColor(theme.muted))
        rest = lines[0][len(lead):] if lines[0].startswith(lead) else lines[0]
        painter.drawText(QRectF(inner.left() + lead_w, top, inner.width() - lead_w, line_h), flags, rest)
        for i, line in enumerate(lines[1:], 1):
            painter.drawText(QRectF(inner.left(), top + i * line_h, inner.width(), line_h), flags, line)
    finally:
        painter.restore()


def render_sweep_frame(panel, width: int, theme, label: str, summary: str, strip: int):
    """The fresh `panel` as an RGB uint8 array (H, W, 3) `width` px wide, with the caption
    strip (`strip` logical px) under the figure."""
    from PySide6.QtGui import QImage

    from .render import paint_figure

    img = paint_figure(panel, width, theme, lambda _rect: strip,
                       lambda p, area: paint_sweep_caption(p, area, label, summary, theme),
                       image_format=QImage.Format.Format_RGB888)
    ptr = img.constBits()
    arr = np.frombuffer(ptr, np.uint8, img.bytesPerLine() * img.height()).reshape(img.height(), img.bytesPerLine())
    return arr[:, : width * 3].reshape(img.height(), width, 3).copy()


def fit_frame(arr: np.ndarray, size: tuple[int, int], background: tuple[int, int, int]) -> np.ndarray:
    """`arr` (H, W, 3) padded with `background` (or cut) to `size` = (height, width)."""
    h, w = size
    if arr.shape[:2] == (h, w):
        return arr
    out = np.empty((h, w, 3), np.uint8)
    out[:] = background
    hh, ww = min(h, arr.shape[0]), min(w, arr.shape[1])
    out[:hh, :ww] = arr[:hh, :ww]
    return out


# ---- encoding (in the encoder thread) ------------------------------------------------------


class Encoder:
    """One output file, its frames streamed as they come: to ffmpeg (MP4) or written to the
    GIF one by one (`explorer.export.gif.GifStream`), so a film of any length holds a few
    frames (`film_bytes`), not all of them.

    `close()` writes what is left, flushes it to disk and reads the film back: a film that is
    cut short (a full disk, a size limit) raises ExportError instead of being published."""

    def __init__(self, tmp: str, fmt: str, fps: float) -> None:
        self.tmp, self.fmt, self.fps = tmp, fmt, fps
        self.writer = None
        self._fh = None  # the GIF's file
        self.added = 0  # frames given to add()
        self.failed: str | None = None  # why a write failed: later frames are not written

    def add(self, frame: np.ndarray) -> None:
        """Write one frame; ExportError when it cannot be written (the writer is then closed)."""
        self.added += 1
        if self.failed is not None:
            raise ExportError(self.failed)
        try:
            if self.fmt == "gif":
                if self.writer is None:
                    from .gif import GifStream

                    self._fh = open(self.tmp, "wb")
                    self.writer = GifStream(self._fh, round(1000 / self.fps))
            elif self.writer is None:
                import imageio.v2 as iio

                # the frames are padded to even sides already: no resizing to 16-pixel blocks;
                # ffmpeg writes its stderr to ours: quiet, or a full disk added its own lines
                # ("Error writing trailer: …") to the one-line refusal `_check` makes
                self.writer = iio.get_writer(self.tmp, format="FFMPEG", mode="I", fps=self.fps, codec="libx264",
                                             pixelformat="yuv420p", macro_block_size=2, quality=8,
                                             ffmpeg_log_level="quiet")
            if self.fmt == "gif":
                self.writer.add(frame)
            else:
                self.writer.append_data(frame)
        except OSError as exc:
            self.abandon()
            self.failed = f"cannot write the {self.fmt.upper()}: {reason(exc)}"
            raise ExportError(self.failed) from None

    def close(self) -> None:
        """Write the file completely or raise ExportError (the temporary file is then the
        caller's to remove)."""
        if self.failed is not None:
            raise ExportError(self.failed)
        try:
            if self.fmt == "gif":
                self._close_gif()
            elif self.writer is not None:
                writer, self.writer = self.writer, None
                writer.close()
            self._check()
        except OSError as exc:
            self.abandon()
            raise ExportError(f"cannot write the {self.fmt.upper()}: {reason(exc)}") from None

    def _close_gif(self) -> None:
        """The trailer, flushed to disk, the file closed once (a failed write is one OSError)."""
        writer, fh, self.writer, self._fh = self.writer, self._fh, None, None
        if fh is None:
            return
        with fh:
            writer.close()
            fh.flush()
            os.fsync(fh.fileno())

    def _check(self) -> None:
        """The film read back has every frame (ffmpeg does not say when its write failed)."""
        if self.added == 0:
            return
        try:
            if self.fmt == "gif":
                from PIL import Image

                with Image.open(self.tmp) as im:
                    n = im.n_frames
            else:
                import imageio.v2 as iio

                reader = iio.get_reader(self.tmp, format="FFMPEG")
                try:
                    n = reader.count_frames()
                finally:
                    reader.close()
        except Exception:
            n = 0
        if n != self.added:
            raise ExportError(f"the {self.fmt.upper()} was not written completely ({n} of {self.added} frames "
                              "read back): is the disk full?")

    def abandon(self) -> None:
        """Close the writer quietly (after a failure or a cancel); safe to call twice."""
        writer, fh, self.writer, self._fh = self.writer, self._fh, None, None
        if fh is not None:
            with contextlib.suppress(Exception):
                fh.close()
        elif writer is not None:
            with contextlib.suppress(Exception):
                writer.close()


def film_bytes(frame_bytes: float, films: int) -> float:
    """What a film export holds at most while writing `films` files of frames of `frame_bytes`
    (H × W × 3): the frames queued for the encoder thread (`QUEUED_FRAMES`, the one being
    encoded among them), the one being painted (`PAINT_FRAMES`: Qt's image, its copy, Qt's
    own buffers), each film's last frame (what a GIF's next frame is compared with) and the
    encoder's copies of one frame (`gif.HELD_FRAMES`). The number of frames does not count.
    Measured (issue 28, item 7; peak RSS over a 320-px run of the same sweep, one panel):
    8.1 frames at 2000 px, 8.3 at 2500 px, 9.0 at 1600 px; this says 10."""
    from .gif import HELD_FRAMES

    return frame_bytes * (QUEUED_FRAMES + PAINT_FRAMES + films + HELD_FRAMES)


def check_film_memory(frame_bytes: float, frames: int, films: int, what: str, error=SweepError) -> None:
    """`error` (SweepError) when `film_bytes` is over MAX_FILM_BYTES."""
    need = film_bytes(frame_bytes, films)
    if need > MAX_FILM_BYTES:
        raise error(f"{what} would hold about {need / 1024**3:.1f} GiB while writing "
                    f"({frames} frames): use fewer panels or a smaller width")


# ---- the job -------------------------------------------------------------------------------


@dataclass
class _Progress:
    value: int = 0  # index of the config being drawn
    panel: int = 0  # index of the panel within it


class EncodingJob:
    """The step loop the sweep and the heads-forming exports share: `step()` does one unit of
    `_work()` and turns any failure into one ExportError after cleaning up (`cancel()`); an
    encoder error surfaces at the next step; once the encoder closes, `_publish()` runs."""

    _errors: ClassVar[tuple[type[Exception], ...]] = (ExportError,)  # raised as they are

    def step(self) -> bool:
        """Do one unit of work (a frame, or a check on the encoder); False once every file is
        written (`written`). Raises ExportError; the job is then cleaned up."""
        try:
            return self._step()
        except Exception as exc:
            self.cancel()
            if isinstance(exc, self._errors):
                raise
            raise ExportError(f"the animation failed: {type(exc).__name__}: {exc}".splitlines()[0]) from None

    def _step(self) -> bool:
        if self._finished:
            return False
        if not self._started:
            self._start()
            return True
        for fut in self._pending:  # an encoder error surfaces here
            if fut.done():
                fut.result()
        self._pending = [f for f in self._pending if not f.done()]
        if self._closing is None and len(self._pending) >= QUEUED_FRAMES:
            # the encoder is behind: no more frames painted until it takes one (a film's
            # memory is a few frames whatever its length)
            wait(self._pending, timeout=0.05, return_when=FIRST_COMPLETED)
            return True
        if self._closing is not None:
            if not self._closing.done():
                wait([self._closing], timeout=0.05)  # a little, then give the event loop a turn
                return True
            self._closing.result()
            self._publish()
            return False
        return self._work()


@dataclass
class AnimationJob(EncodingJob):
    """A sweep export, one panel frame per `step()`. Construction checks everything that can
    be checked before drawing (the field and every value, the panels, the format, the width,
    existing files) and raises SweepError / ExportUsageError / ExportError."""

    window: object
    request: AnimationRequest
    written: list[Path] = field(default_factory=list)
    done: int = 0

    def __post_init__(self) -> None:
        self.window = host_of(self.window)  # (the window or its host)
        req = self.request
        check_animation_format(req.fmt)
        if not isinstance(req.width, int) or not MIN_WIDTH <= req.width <= MAX_WIDTH:
            raise ExportUsageError(f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH} pixels, got {req.width!r}")
        if not FPS_RANGE[0] <= req.fps <= FPS_RANGE[1]:
            raise ExportUsageError(f"fps must be from {FPS_RANGE[0]:g} to {FPS_RANGE[1]:g}, got {req.fps!r}")
        known = [n for n in panel_names(self.window) if n not in MODEL_PANEL_NAMES]
        names = list(dict.fromkeys(req.names)) or known
        for n in names:
            if n in MODEL_PANEL_NAMES:
                raise ExportUsageError(f"panel {n!r} shows the loaded model, which a config sweep does not change")
            if n not in known:
                raise ExportUsageError(unknown_panel(n, known))
        self.names = names
        self.spec = fit_to(self.window.state.config, req.spec)  # (a head sweep keeps the counts that divide)
        self.configs = sweep_configs(self.window.state.config, self.spec)  # SweepError names a bad value
        self._check_memory(req.width * round(req.width * ASPECT_GUESS) * 3)
        self.total = len(self.configs) * len(names)
        out = Path(req.out_dir)
        if out.exists() and not out.is_dir():
            raise ExportError(f"{out} is a file, not a folder")
        for n in names:
            p = req.path(n)
            if p.is_dir():
                raise ExportError(f"cannot write {p}: it is a folder")
            if p.exists() and not req.force:
                raise ExportError(f"{p} already exists (use --force to overwrite)")
        self._at = _Progress()
        self._started = False
        self._finished = False
        self._closing: Future | None = None
        self._frames: dict[int, Future] = {}
        self._stack = contextlib.ExitStack()
        self._panels: dict[str, object] = {}
        self._encoders: dict[str, Encoder] = {}
        self._size: dict[str, tuple[int, int]] = {}
        self._pending: list[Future] = []

    def _check_memory(self, frame_bytes: float) -> None:
        """SweepError when the frames held while writing would be over MAX_FILM_BYTES."""
        check_film_memory(frame_bytes, len(self.configs), len(self.names),
                          f"{len(self.names)} panels at {self.request.width} px")

    # ---- lifecycle ------------------------------------------------------------------
    def _start(self) -> None:
        from ..figures.themes import figure_theme
        from ..selection import Selection
        from .fresh import frame_of

        req = self.request
        frame_of(self.window)  # the window's own frame is current (the panels copy its options)
        out = Path(req.out_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ExportError(f"cannot create the folder {out}: {reason(exc)}") from None
        # two worker threads (explorer/work/base.py: stopped at exit, the collector held while
        # they run): the engine one frame ahead, the encoders
        self._compute = TaskWorker("sweep-compute")
        self._encode = TaskWorker("sweep-encode")
        for n in self.names:
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{req.path(n).stem}.", suffix=f".part.{req.fmt}", dir=out)
            except OSError as exc:
                raise ExportError(f"cannot write in {out}: {reason(exc)}") from None
            os.close(fd)
            self._encoders[n] = Encoder(tmp, req.fmt, req.fps)
        # one selection for every frame: the window's, within the smallest shape of the sweep
        sel = self.window.state.selection
        self._selection = Selection()
        self._selection.set_limits(min(c.n_heads for c in self.configs), min(c.seq_len for c in self.configs),
                                   min(c.key_len for c in self.configs))
        self._selection.set(sel.head, sel.query, sel.key)
        self._theme = figure_theme(req.theme, self.window.state.theme)
        self._captions = [(self.spec.label(v), c.summary().replace("  ", " · "))
                          for v, c in zip(self.spec.values, self.configs, strict=True)]
        self._prefetch(0)
        self._prefetch(1)
        self._started = True

    def _prefetch(self, i: int) -> None:
        if i < len(self.configs) and i not in self._frames:
            config, diagnostics = self.configs[i], "diagnostics" in self.names
            self._frames[i] = self._compute.task(lambda job: _compute_frame(config, diagnostics, job.check))

    _errors: ClassVar[tuple[type[Exception], ...]] = (ExportError, SweepError)

    def _work(self) -> bool:
        i = self._at.value
        fut = self._frames[i]
        if not fut.done():
            wait([fut], timeout=0.05)  # wait a little for the engine, then give the loop a turn
            # (not fut.exception(timeout=…): it raises TimeoutError when the frame takes longer)
            if not fut.done():
                return True
        try:
            frame = fut.result()
        except Exception as exc:  # the engine refused a value after all (e.g. a backend)
            raise ExportError(f"{self._captions[i][0]}: {exc}".splitlines()[0]) from None
        name = self.names[self._at.panel]
        self._draw(name, frame, i)
        self.done += 1
        self._at.panel += 1
        if self._at.panel == len(self.names):
            self._at.panel = 0
            self._at.value += 1
            del self._frames[i]
            self._prefetch(i + 2)
            if self._at.value == len(self.configs):
                self._closing = self._encode.task(lambda job: self._close_all())
        return True

    def _draw(self, name: str, frame, i: int) -> None:
        from .fresh import fresh_panel, restyle_lines
        from .render import caption_colours, figure_parts, figure_rect, settle

        panel = self._panels.get(name)
        if panel is None:
            panel = self._stack.enter_context(fresh_panel(self.window, name, self.request.theme,
                                                          frame=frame, selection=self._selection))
            shown = max(1, figure_rect(figure_parts(panel)).width())
            restyle_lines(panel, self.request.theme, self.window, self.request.width / shown)
            self._panels[name] = panel
            self._strip = caption_strip_height(panel.figure_theme, self._captions, shown)
        else:
            panel.show_frame(frame)
            if name == "diagnostics" and frame.backends is not None:
                panel.set_backends(frame.backends)
            settle(1)
        label, summary = self._captions[i]
        arr = render_sweep_frame(panel, self.request.width, panel.figure_theme, label, summary, self._strip)
        if name not in self._size:
            h, w = arr.shape[:2]
            self._size[name] = (h + h % 2, w + w % 2) if self.request.fmt == "mp4" else (h, w)
            self._check_memory(max(a * b for a, b in self._size.values()) * 3)  # the real height
        bg = caption_colours(panel.figure_theme)[1]
        arr = fit_frame(arr, self._size[name], (bg.red(), bg.green(), bg.blue()))
        enc = self._encoders[name]
        self._pending.append(self._encode.task(lambda job: enc.add(arr)))

    def _close_all(self) -> None:
        for enc in self._encoders.values():
            enc.close()

    def _publish(self) -> None:
        """Every temporary file renamed into place, or none (the ones published are removed)."""
        self._release()
        published: list[Path] = []
        try:
            for n in self.names:
                enc, final = self._encoders[n], self.request.path(n)
                publish(enc.tmp, final, force=self.request.force)
                published.append(final)
        except (OSError, ExportError) as exc:
            for p in published:
                with contextlib.suppress(OSError):
                    p.unlink()
            self._remove_temporaries()
            if isinstance(exc, ExportError):
                raise
            raise ExportError(f"cannot write {final}: {reason(exc)}") from None
        self._remove_temporaries()
        self._finished = True
        self.written = published

    @property
    def finished(self) -> bool:
        return self._finished

    def cancel(self) -> None:
        """Stop and remove every temporary file; nothing is written. Safe to call twice."""
        if self._finished:
            return
        self._finished = True
        for fut in self._frames.values():
            fut.cancel()
        if self._started:
            for enc in self._encoders.values():
                self._encode.task(lambda job, enc=enc: enc.abandon())
        self._release()
        self._remove_temporaries()

    def _release(self) -> None:
        with contextlib.suppress(Exception):
            self._stack.close()
        self._panels.clear()
        if self._started:  # a frame still computing stops at its next engine block
            self._compute.stop()
            self._encode.drain()

    def _remove_temporaries(self) -> None:
        for enc in self._encoders.values():
            with contextlib.suppress(OSError):
                os.unlink(enc.tmp)


def _compute_frame(config, with_backends: bool, check=None):
    """The frame of one swept config (in the compute thread), with the backend comparison
    when the diagnostics panel is in the animation. `check`: the engine's progress callback
    (`Job.check`: it raises Cancelled once the export stops)."""
    from ..frame import build_frame, measure_backends

    frame = build_frame(config, progress=check)
    if with_backends:
        frame.backends = measure_backends(config, progress=check)
    return frame


def export_animation(window, request: AnimationRequest, on_progress=None) -> list[Path]:
    """Run a sweep export to the end in this thread (the event loop runs between frames);
    returns the files written. on_progress(done, total) after each frame."""
    from PySide6.QtWidgets import QApplication

    job = AnimationJob(window, request)
    app = QApplication.instance()
    while job.step():
        if on_progress is not None:
            on_progress(job.done, job.total)
        app.processEvents()
    return job.written
