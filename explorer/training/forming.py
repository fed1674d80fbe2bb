"""The heads forming, as an animation: a run's timeline of probe snapshots as a GIF or MP4.

    job = FormingJob(run, FormingRequest(Path("heads.gif")))  # checks; raises ExportError
    while job.step(): ...          # one frame per call (the window's status bar drives it)
    job.written                    # [heads.gif]
    export_forming(run, request) -> Path                      # the loop above

A frame is the figure `HeadsFormingFigure` draws from (run, snapshot, theme): every layer ×
head of the probe sequence at that step (the lab's `HeadGrid`, each tile with its previous-
token and induction scores) beside the loss curve up to that step, and under it the strip of
a sweep's frame (`explorer.export.animation.render_sweep_frame`: `paint_figure` and the bold label)
with the step, the loss and the best scores. Up to `max_frames` of the run's snapshots are
used, evenly spaced, the first (step 0) and the last always.

Writing is the sweep export's: frames streamed to an encoder thread (`explorer.export.animation.Encoder`:
`explorer.export.gif` for GIF, imageio-ffmpeg for MP4; a few frames held whatever the length)
into a hidden temporary file beside the target, renamed into place only when complete (its
frames counted back); a failure or a cancel leaves nothing behind.

The figure lives in its own offscreen widget (no panel of the window is drawn or touched).
`train_gif_command` is `python main.py train ... --gif PATH`: the engine trains headless
(`engine.training.cli.train_command`, keeping probe snapshots), then the frames are drawn here.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.numbers import fixed

from ..export.animation import FORMATS, FPS_RANGE, EncodingJob
from ..export.files import check_target, publish, reason
from ..export.options import MAX_WIDTH, MIN_WIDTH, ExportError, ExportUsageError
from ..host import host_of
from ..qt_app import headless_app
from ..work.base import TaskWorker

#: frames of an animation: enough to see the plateau, the drop and the heads sharpening
DEFAULT_FRAMES = 48
FRAMES_RANGE = (2, 400)
#: 8 frames a second: 48 frames last 6 s
DEFAULT_FPS = 8.0
DEFAULT_WIDTH = 960
#: the figure's logical size (the heads grid left, the loss right)
FIGURE_SIZE = (900, 500)


def _tr(text: str) -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate("HeadsForming", text)


def tile_labels(probe) -> list[list[str]]:
    """Each head's tile text, as the training panel writes it: previous-token and induction
    scores, a ★ where the head passed its milestone threshold (layer 0: previous-token;
    later layers, or a 1-layer model: induction)."""
    from PySide6.QtCore import QCoreApplication

    from engine.training.trainer import INDUCTION_THRESHOLD, PREVIOUS_TOKEN_THRESHOLD

    L, H = probe.attentions.shape[:2]
    labels = []
    for layer in range(L):
        row = []
        for head in range(H):
            prev = float(probe.scores["previous_token"][layer, head])
            ind = float(probe.scores["induction"][layer, head])
            star = (layer == 0 and prev > PREVIOUS_TOKEN_THRESHOLD) or (
                (layer > 0 or L == 1) and ind > INDUCTION_THRESHOLD)
            text = QCoreApplication.translate("TrainingPanel", "prev {p}\nind {i}")  # the panel's words
            row.append(("★ " if star else "") + text.format(p=fixed(prev), i=fixed(ind)))
        labels.append(row)
    return labels


def pick_snapshots(snapshots: list, max_frames: int = DEFAULT_FRAMES) -> list:
    """At most ``max_frames`` of ``snapshots`` (ordered by step), evenly spaced by index, the
    first and the last always among them."""
    n = len(snapshots)
    if n <= max_frames:
        return list(snapshots)
    idx = np.unique(np.linspace(0, n - 1, max_frames).round().astype(int))
    return [snapshots[i] for i in idx]


def format_of(path: Path) -> str:
    """gif or mp4, from the file's suffix (ExportUsageError otherwise)."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ExportUsageError(f"{path}: an animation of the heads is a .gif or .mp4 file")
    return fmt


@dataclass(frozen=True)
class FormingRequest:
    """path: the file (.gif or .mp4); width: pixels; fps: frames a second; max_frames: the most
    snapshots used; theme: "slides" or "screen"; force: replace an existing file."""

    path: Path
    width: int = DEFAULT_WIDTH
    fps: float = DEFAULT_FPS
    max_frames: int = DEFAULT_FRAMES
    theme: str = "slides"
    force: bool = False

    @property
    def fmt(self) -> str:
        return format_of(Path(self.path))


def check_request(request: FormingRequest) -> None:
    """Everything that can be checked before drawing: format, width, fps, frames, the target.
    ExportUsageError for a bad value, ExportError for a path that cannot be written."""
    p = Path(request.path)
    format_of(p)
    if not isinstance(request.width, int) or not MIN_WIDTH <= request.width <= MAX_WIDTH:
        raise ExportUsageError(f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH} pixels, got {request.width!r}")
    if not FPS_RANGE[0] <= request.fps <= FPS_RANGE[1]:
        raise ExportUsageError(f"fps must be from {FPS_RANGE[0]:g} to {FPS_RANGE[1]:g}, got {request.fps!r}")
    if not FRAMES_RANGE[0] <= request.max_frames <= FRAMES_RANGE[1]:
        raise ExportUsageError(f"frames must be from {FRAMES_RANGE[0]} to {FRAMES_RANGE[1]}, got {request.max_frames!r}")
    folder = check_target(p)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ExportError(f"cannot write in {folder}: permission denied")
    if p.exists() and not request.force:
        raise ExportError(f"{p} already exists (use --force to overwrite)")


# ---- the figure ---------------------------------------------------------------------------


def _figure_class():
    import pyqtgraph as pg
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from ..figures.plots import add_plot, lean_axes, set_axis_label, set_plot_title, style_plot
    from ..figures.themes import WEIGHTS_CMAP
    from ..selection import HoverLink
    from .grid import HeadGrid

    class HeadsFormingFigure(QWidget):
        """The heads grid of one snapshot and the loss up to its step (see the module
        docstring); `show_snapshot(probe)` draws it."""

        def __init__(self, run, theme) -> None:
            super().__init__()
            self.run, self.theme = run, theme
            layout = QVBoxLayout(self)
            layout.setContentsMargins(0, 0, 0, 0)
            self.graphics = pg.GraphicsLayoutWidget()
            layout.addWidget(self.graphics)
            ci = self.graphics.ci
            self.grid = HeadGrid(HoverLink(), WEIGHTS_CMAP)
            ci.addItem(self.grid.plot, row=0, col=0)
            self.loss_plot = add_plot(ci, 0, 1, axisItems=lean_axes())
            ci.layout.setColumnStretchFactor(0, 1)
            ci.layout.setColumnStretchFactor(1, 1)
            lp = self.loss_plot
            lp.hideButtons()
            lp.setMenuEnabled(False)
            lp.setMouseEnabled(x=False, y=False)
            lp.showGrid(x=True, y=True, alpha=0.15)
            self.loss_all = lp.plot([], [])  # the whole run, faint: where the loss is going
            self.loss_now = lp.plot([], [])  # up to the frame's step
            self.now_line = pg.InfiniteLine(angle=90, movable=False)
            lp.addItem(self.now_line, ignoreBounds=True)
            self.milestone = pg.InfiniteLine(angle=90, movable=False)
            lp.addItem(self.milestone, ignoreBounds=True)
            steps = np.array([s.step for s in run.history], float)
            loss = np.array([s.loss for s in run.history], float)
            self.steps, self.loss = steps, loss
            self.loss_all.setData(steps, loss)
            top = max(math.log(run.config.vocab), float(np.nanmax(loss)) if len(loss) else 1.0)
            lp.setXRange(0, max(1.0, float(steps[-1]) if len(steps) else 1.0), padding=0.02)
            lp.setYRange(0, top * 1.05, padding=0)
            set_axis_label(lp, "bottom", _tr("step"))
            set_axis_label(lp, "left", _tr("loss (nats)"))
            self.apply_theme(theme)

        def apply_theme(self, theme) -> None:
            self.theme = theme
            self.graphics.setBackground(theme.background)
            style_plot(self.loss_plot, theme)
            self.grid.apply_theme(theme)
            self.loss_all.setPen(theme.pen(theme.muted, 1.0, Qt.PenStyle.DotLine))
            self.loss_now.setPen(theme.pen(self.run.colour, 2.0))
            self.now_line.setPen(theme.pen(theme.accent2, 1.5))
            self.milestone.setPen(theme.pen(theme.accent, 1.5, Qt.PenStyle.DashLine))

        def show_snapshot(self, probe) -> None:
            th, run = self.theme, self.run
            self.grid.set_data(probe.attentions, tile_labels(probe), source=(probe,))
            self.grid.set_selection(-1, -1)  # no head is singled out in the animation
            # (the step and the scores are the frame's strip below: the grid itself needs no title)
            upto = int(np.searchsorted(self.steps, probe.step, side="right"))
            self.loss_now.setData(self.steps[:upto], self.loss[:upto])
            self.now_line.setPos(probe.step)
            hit = run.milestone
            if hit is not None and hit.step <= probe.step:
                self.milestone.setPos(hit.step)
                self.milestone.show()
                title = _tr("<b>Loss</b> · induction head, step {step}").format(step=hit.step)
                title = f"<span style='color:{th.accent}'>★</span> " + title
            else:
                self.milestone.hide()
                title = _tr("<b>Loss</b> · chance {c}").format(c=fixed(math.log(run.config.vocab)))
            set_plot_title(self.loss_plot, title, th)

        def heads_rect(self):
            """The heads grid's plot area in this widget's coordinates (QRect)."""
            vb = self.grid.vb
            scene_rect = vb.sceneBoundingRect()
            view = self.graphics
            poly = view.mapFromScene(scene_rect)
            return poly.boundingRect().translated(view.mapTo(self, view.rect().topLeft()))

    return HeadsFormingFigure


_FIGURE = None


def figure_class():
    global _FIGURE
    if _FIGURE is None:
        _FIGURE = _figure_class()
    return _FIGURE


def frame_caption(run, probe) -> tuple[str, str]:
    """(label, summary) of a frame's strip: "step 350 of 600", then the loss and best scores.

    The loss and the best scores are the step's own (its training batch): the numbers `train`
    prints for that step, its score curves and the "induction head" milestone; the tiles
    show each head on the probe sequence. Before the first step: the probe's."""
    from engine.training.cli import best_scores

    total = run.history[-1].step if run.history else 0
    label = _tr("step {step} of {total}").format(step=probe.step, total=total)
    rec = run.history[probe.step - 1] if 0 < probe.step <= len(run.history) else None
    best_ind, best_prev = best_scores((rec if rec is not None else probe).scores)
    parts = []
    if rec is None:
        parts.append(_tr("not trained yet"))
    elif not (math.isfinite(rec.loss) and math.isfinite(rec.loss_predictable)):  # (never "nan nats")
        parts.append(_tr("loss not a number: the run diverged"))
    else:
        parts.append(_tr("loss {loss} nats (predictable part {pred})").format(
            loss=fixed(rec.loss), pred=fixed(rec.loss_predictable)))
    parts.append(_tr("best induction score {v}").format(v=fixed(best_ind)))
    parts.append(_tr("best layer-0 previous-token score {v}").format(v=fixed(best_prev)))
    return label, " · ".join(parts)


# ---- the job ------------------------------------------------------------------------------


@dataclass
class FormingJob(EncodingJob):
    """A heads-forming export, one frame per `step()`. Construction checks the request and
    that the run has at least two snapshots (ExportUsageError / ExportError)."""

    run: object
    request: FormingRequest
    window_theme: object = None
    written: list[Path] = field(default_factory=list)
    done: int = 0

    def __post_init__(self) -> None:
        check_request(self.request)
        snaps = [s for s in self.run.snapshots]
        if len(snaps) < 2:
            raise ExportError(_tr("the run has {n} snapshot(s) of its heads: train it first").format(n=len(snaps)))
        self.snapshots = pick_snapshots(snaps, self.request.max_frames)
        self.total = len(self.snapshots)
        self.heads_box: tuple[int, int, int, int] | None = None  # (x0, y0, x1, y1) in frame px
        self._started = False
        self._finished = False
        self._closing: Future | None = None
        self._pending: list[Future] = []
        self._figure = None
        self._tmp: str | None = None

    # ---- lifecycle ------------------------------------------------------------------
    def _start(self) -> None:
        from ..export.animation import Encoder, caption_strip_height
        from ..export.render import figure_parts, figure_rect
        from ..figures.themes import DARK, figure_theme

        req = self.request
        p = Path(req.path)
        try:
            fd, self._tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=f".part.{req.fmt}", dir=p.parent)
        except OSError as exc:
            raise ExportError(f"cannot write in {p.parent}: {reason(exc)}") from None
        os.close(fd)
        self._encoder = Encoder(self._tmp, req.fmt, req.fps)
        self._encode = TaskWorker("forming-encode")  # (explorer/work/base.py: stopped at exit)
        self._started = True
        theme = figure_theme(req.theme, self.window_theme or DARK)
        self._figure = _offscreen(figure_class()(self.run, theme), theme)
        self._captions = [frame_caption(self.run, s) for s in self.snapshots]
        shown = max(1, figure_rect(figure_parts(self._figure)).width())
        # lines as wide in the picture as in the layout (Qt's cosmetic pens are device pixels)
        scaled = figure_theme(req.theme, self.window_theme or DARK, req.width / shown)
        if scaled != theme:
            self._figure.apply_theme(scaled)
        self._theme = scaled
        self._strip = caption_strip_height(scaled, self._captions, shown)
        self._size: tuple[int, int] | None = None

    def _work(self) -> bool:
        from ..export.animation import check_film_memory, fit_frame, render_sweep_frame
        from ..export.render import caption_colours, settle

        i = self.done
        self._figure.show_snapshot(self.snapshots[i])
        settle(1)
        label, summary = self._captions[i]
        arr = render_sweep_frame(self._figure, self.request.width, self._theme, label, summary, self._strip)
        if self._size is None:
            h, w = arr.shape[:2]
            self._size = (h + h % 2, w + w % 2) if self.request.fmt == "mp4" else (h, w)
            check_film_memory(self._size[0] * self._size[1] * 3, self.total, 1,
                              f"a film {self.request.width} px wide", ExportUsageError)
            self._record_heads_box()
        bg = caption_colours(self._theme)[1]
        arr = fit_frame(arr, self._size, (bg.red(), bg.green(), bg.blue()))
        self._pending.append(self._encode.task(lambda job: self._encoder.add(arr)))
        self.done += 1
        if self.done == self.total:
            self._closing = self._encode.task(lambda job: self._encoder.close())
        return True

    def _record_heads_box(self) -> None:
        from ..export.render import figure_parts, figure_rect

        rect = figure_rect(figure_parts(self._figure))
        r = self._figure.heads_rect().translated(-rect.x(), -rect.y())
        k = self.request.width / max(1, rect.width())
        self.heads_box = (max(0, int(r.left() * k)), max(0, int(r.top() * k)),
                          int(r.right() * k), int(r.bottom() * k))

    def _publish(self) -> None:
        final = Path(self.request.path)
        self._release()
        try:
            publish(self._tmp, final, force=self.request.force)
        except OSError as exc:
            raise ExportError(f"cannot write {final}: {reason(exc)}") from None
        finally:
            self._remove_temporary()
        self._finished = True
        self.written = [final]

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def progress_label(self) -> str:
        """What the window's status bar calls this export."""
        return _tr("Heads forming")

    def cancel(self) -> None:
        """Stop and remove the temporary file; nothing is written. Safe to call twice."""
        if self._finished:
            return
        self._finished = True
        if self._started:
            self._encode.task(lambda job: self._encoder.abandon())
        self._release()
        self._remove_temporary()

    def _release(self) -> None:
        if self._figure is not None:
            fig, self._figure = self._figure, None
            fig.hide()
            fig.deleteLater()
        if self._started:
            self._encode.drain()

    def _remove_temporary(self) -> None:
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)


def _offscreen(widget, theme):
    """``widget`` laid out offscreen at FIGURE_SIZE in the figure theme (never on screen)."""
    from PySide6.QtCore import Qt

    from ..export.render import settle
    from ..figures.themes import qt_palette, stylesheet

    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    widget.setPalette(qt_palette(theme))
    widget.setAutoFillBackground(True)
    widget.setStyleSheet(stylesheet(theme))
    widget.resize(*FIGURE_SIZE)
    widget.show()
    settle()
    return widget


def export_forming(run, request: FormingRequest, window_theme=None, on_progress=None) -> Path:
    """Run a heads-forming export to the end in this thread; returns the file written."""
    from PySide6.QtWidgets import QApplication

    job = FormingJob(run, request, window_theme)
    app = QApplication.instance()
    while job.step():
        if on_progress is not None:
            on_progress(job.done, job.total)
        app.processEvents()
    return job.written[0]


# ---- the window ---------------------------------------------------------------------------------


def forming_run(window):
    """The run the training lab shows (the one whose heads the panel draws), or None."""
    lab = host_of(window).state.training_lab
    return None if lab is None else lab.viewed_run()


def start_forming_export(window, path, *, force: bool = True, **options):
    """Write the heads forming of the lab's viewed run to ``path`` from the window's status
    bar (a progress bar with Cancel, `explorer.export.animation_dialog.AnimationProgress`); returns
    it. ExportError / ExportUsageError when it cannot start (no run, too few snapshots, a bad
    path, another animation export running)."""
    from ..export.animation_dialog import AnimationProgress

    window = host_of(window)  # (the window or its host)
    animations = window.feature("animation")
    animations.check_idle()
    run = forming_run(window)
    if run is None:
        raise ExportError(_tr("the training lab has no run yet"))
    job = FormingJob(run, FormingRequest(Path(path), force=force, **options), window.state.theme)
    return animations.begin(AnimationProgress(window, job))


def export_forming_dialog(window) -> None:
    """File ▸ Export heads forming (GIF/MP4)…: ask for the file, then start the export; a
    refusal is said in a message box."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    host = host_of(window)
    window = host.parent_widget()  # the dialogs' parent
    run = forming_run(host)
    n = 0 if run is None else len(run.snapshots)
    if n < 2:
        QMessageBox.information(window, _tr("Export heads forming"), _tr(
            "The training lab's run has no timeline yet: train it (Start), then export the heads forming."))
        return
    suggested = str(Path.home() / "heads-forming.gif")
    path, chosen = QFileDialog.getSaveFileName(window, _tr("Export heads forming"), suggested,
                                               _tr("GIF animation (*.gif);;MP4 video (*.mp4)"))
    if not path:
        return
    if not Path(path).suffix:
        path += ".mp4" if "mp4" in chosen else ".gif"
    try:
        start_forming_export(host, path, force=True)  # the dialog asked before replacing
    except (ExportError, ExportUsageError) as exc:
        QMessageBox.warning(window, _tr("Export heads forming"), str(exc))


# ---- command line -----------------------------------------------------------------------------


def run_of(config, history, snapshots):
    """A lab `Run` of a headless training (what the CLI animates)."""
    from engine.training import first_reached

    from .lab import RUN_COLORS, Run

    run = Run(1, config, "", RUN_COLORS[0], history=list(history), snapshots=list(snapshots))
    run.milestone = first_reached(run.history)
    return run


def train_gif_command(args) -> int:
    """`python main.py train ... --gif PATH [--frames N] [--fps F] [--width PX] [--force]`:
    train headless (engine.training.cli), keeping N + 1 probe snapshots, then write the heads
    forming to PATH (.gif or .mp4). The target is checked before training: 2 for a bad value,
    1 for a path that cannot be written."""
    import sys

    from engine.training.cli import train_command

    request = FormingRequest(Path(args.gif), width=args.width or DEFAULT_WIDTH, fps=args.fps or DEFAULT_FPS,
                             max_frames=args.frames or DEFAULT_FRAMES, force=bool(args.force))
    try:
        check_request(request)
    except ExportUsageError as exc:
        print(f"attention-explorer train: error: {exc}", file=sys.stderr)
        return 2
    except ExportError as exc:
        print(f"attention-explorer train: {exc}", file=sys.stderr)
        return 1

    def finish(trainer, snapshots) -> int:
        headless_app()
        run = run_of(trainer.config, trainer.history, snapshots)
        try:
            path = export_forming(run, request)
        except ExportError as exc:
            print(f"attention-explorer train: {exc}", file=sys.stderr)
            return 1
        if not args.json:
            print(f"wrote the heads forming to {path}", flush=True)
        else:
            import json

            print(json.dumps({"event": "animation", "out": str(path)}), flush=True)
        return 0

    return train_command(args.task, args.steps, args.seed, args.config, args.out, args.json,
                         snapshots=request.max_frames - 1, finish=finish)
