"""`python main.py export ...`: figures (and, with --sweep, animations) of a session, headless.

    export_command(args) -> int   # 0 done, 2 bad arguments, 1 anything else (one line on stderr)

The window is the full window made offscreen (`headless_window`), exported through the same
fresh-panel renderer as File ▸ Export, so both give the same picture.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from ..qt_app import headless_app, quiet_offscreen
from .files import export_panels, make_on_demand, panel_names, reason
from .options import (
    CLOSED_PANEL_NAMES,
    MAX_WIDTH,
    MIN_WIDTH,
    MODEL_PANEL_NAMES,
    ON_DEMAND_PANELS,
    PANEL_NAMES,
    RENDER_TIMEOUT_S,
    ExportError,
    ExportOptions,
    ExportUsageError,
    check_format,
    unknown_panel,
)


def fail(msg: str, code: int) -> int:
    print(f"attention-explorer export: {msg}".splitlines()[0], file=sys.stderr)
    return code


def export_command(args) -> int:
    """`python main.py export --out DIR [--session FILE] [--panel NAME]... [--format F]...
    [--width PX] [--force]`: 0 done, 2 bad arguments, 1 anything else (one line on stderr).
    With `--sweep FIELD=START:STOP:STEP`: animations (`sweep_command`)."""
    if getattr(args, "sweep", None):
        return sweep_command(args)
    if any(str(f).lower() in ("gif", "mp4") for f in args.formats or []):
        return fail("gif and mp4 are animations: add --sweep FIELD=START:STOP:STEP", 2)
    names = list(dict.fromkeys(args.panels or []))
    bad = [n for n in names if n not in PANEL_NAMES + CLOSED_PANEL_NAMES + MODEL_PANEL_NAMES]
    bad = [n for n in bad if n not in ON_DEMAND_PANELS]
    if bad:
        return fail(unknown_panel(bad[0], PANEL_NAMES + CLOSED_PANEL_NAMES + tuple(ON_DEMAND_PANELS)), 2)
    try:
        formats = [check_format(f) for f in (args.formats or ["png"])]
        options = ExportOptions(
            width=1920 if args.width is None else args.width,
            dpi=getattr(args, "dpi", None),
            theme=getattr(args, "theme", None) or "slides",
            caption=bool(getattr(args, "caption", False)),
        ).validate()
    except ExportUsageError as exc:
        return fail(str(exc), 2)

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return fail(f"--out {out} is a file, not a folder", 1)
    blocker = file_above(out)
    if blocker is not None:  # refuse before building a window (a minute on a long session)
        return fail(f"cannot create the folder {out}: {blocker} is a file, not a folder", 1)
    if not args.force and out.is_dir():  # refuse before building a window
        for n in names or PANEL_NAMES:
            for f in formats:
                if (out / f"{n}.{f}").exists():
                    return fail(f"{out / f'{n}.{f}'} already exists (use --force to overwrite)", 1)
    session, has_model = None, False
    if args.session:
        try:
            from ..session import SessionError, load_session
        except ImportError:
            session = args.session
        else:
            try:
                has_model = load_session(args.session).model is not None
            except SessionError as exc:
                return fail(str(exc), 1)
            session = args.session
    wants_model = [n for n in names if n in MODEL_PANEL_NAMES]
    if wants_model and not has_model:
        return fail(unknown_panel(wants_model[0], PANEL_NAMES), 2)

    unwritten = ""  # why the model's panels asked for were not written (the model did not open)
    try:
        with headless_window(session) as window:
            if has_model:
                # the session names a model: wait until it is loaded and its panels drawn
                problem = window.model_controller.wait_ready(RENDER_TIMEOUT_S)
                if problem:  # (its folder gone, unreadable, damaged): draw what needs no model
                    names, unwritten = without_model(names, problem)

            def printed(p: Path) -> None:
                print(p, flush=True)

            make_on_demand(window, names)
            known = panel_names(window)
            for n in names:
                if n not in known:
                    raise ExportUsageError(unknown_panel(n, known))
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ExportError(f"cannot create the folder {out}: {reason(exc)}") from None
            export_panels(window, out, names or None, formats, options, force=args.force,
                          on_written=printed)
    except ExportUsageError as exc:
        return fail(str(exc), 2)
    except ExportError as exc:
        return fail(str(exc), 1)
    return fail(unwritten, 1) if unwritten else 0


def file_above(out: Path) -> Path | None:
    """The nearest existing ancestor of `out` when it is a file (so `out` can never be a folder)."""
    for parent in out.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def without_model(names: list[str], problem: str) -> tuple[list[str], str]:
    """The session's model did not open (``problem``): (the panels still to export, why the
    rest are not: "" when every panel asked for needs no model). No ``names`` (every panel)
    asks for the model's panels too. The model-free ones are drawn all the same; a note says
    what was left out when that is all the user sees of it (exit 0), else the exit's one line
    does (exit 1). ExportError when none of the panels asked for can be drawn."""
    missing = [n for n in names if n in MODEL_PANEL_NAMES] if names else ["the model's panels"]
    kept = [n for n in names if n not in MODEL_PANEL_NAMES]
    if names and not kept:
        raise ExportError(f"the session's model: {problem}")
    if not missing:
        print(f"attention-explorer export: note: the model's panels are not drawn: the session's model: {problem}"
              .splitlines()[0], file=sys.stderr, flush=True)
        return kept, ""
    return kept, f"{', '.join(missing)} not written: the session's model: {problem}"


def sweep_command(args) -> int:
    """`python main.py export --out DIR --sweep FIELD=START:STOP:STEP [--format gif|mp4]
    [--panel NAME]... [--width PX] [--fps F] [--session FILE] [--force]` → DIR/NAME-FIELD.FORMAT,
    printing each path. Exit 2 for a bad field, range, value, format, panel or width (checked
    before a window is built, every value included), 1 for any other failure."""
    from engine import AttentionConfig

    from .animation import (
        DEFAULT_FPS,
        FPS_RANGE,
        AnimationRequest,
        check_animation_format,
        export_animation,
    )
    from .sweep import SweepError, fit_to, parse_sweep, sweep_configs

    try:
        spec = parse_sweep(args.sweep)
    except SweepError as exc:
        return fail(str(exc), 2)
    formats = list(dict.fromkeys(args.formats or ["gif"]))
    if len(formats) > 1:
        return fail(f"a sweep writes one format, got {', '.join(formats)}: choose gif or mp4", 2)
    try:
        fmt = check_animation_format(formats[0])
    except ExportUsageError as exc:
        return fail(f"{exc} (png, svg and pdf are for still figures, without --sweep)", 2)
    if getattr(args, "dpi", None) is not None:
        return fail("--dpi does not apply to an animation: give its --width in pixels", 2)
    names = tuple(dict.fromkeys(args.panels or []))
    for n in names:
        if n in MODEL_PANEL_NAMES:
            return fail(f"panel {n!r} shows the loaded model, which a config sweep does not change", 2)
        if n not in PANEL_NAMES:
            return fail(unknown_panel(n, PANEL_NAMES), 2)
    width = 1280 if args.width is None else args.width
    fps = DEFAULT_FPS if getattr(args, "fps", None) is None else args.fps
    if not isinstance(width, int) or not MIN_WIDTH <= width <= MAX_WIDTH:
        return fail(f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH} pixels, got {width!r}", 2)
    if not FPS_RANGE[0] <= fps <= FPS_RANGE[1]:
        return fail(f"--fps must be from {FPS_RANGE[0]:g} to {FPS_RANGE[1]:g}, got {fps:g}", 2)
    base, session = AttentionConfig(), None
    if args.session:
        from ..session import SessionError, load_session

        try:
            base = load_session(args.session).config
        except SessionError as exc:
            return fail(str(exc), 1)
        session = args.session
    try:
        spec = fit_to(base, spec)  # (a head sweep keeps the counts that divide)
        sweep_configs(base, spec)  # every value, before any window or frame
    except SweepError as exc:
        return fail(str(exc), 2)
    out = Path(args.out)
    request = AnimationRequest(spec, names, fmt, out, width=width, theme=getattr(args, "theme", None) or "slides",
                               fps=fps, force=bool(args.force))
    for n in names or PANEL_NAMES:
        if request.path(n).exists() and not args.force:
            return fail(f"{request.path(n)} already exists (use --force to overwrite)", 1)

    try:
        with headless_window(session) as window:
            for p in export_animation(window, request):
                print(p, flush=True)
    except ExportUsageError as exc:
        return fail(str(exc), 2)
    except (ExportError, SweepError) as exc:
        return fail(str(exc), 1)
    return 0


@contextlib.contextmanager
def headless_window(session):
    """The full window for a command-line export, shown offscreen with Qt's offscreen chatter
    quiet, and put away however the export ends: shut down, not closed (closing would save
    this headless layout as the user's window state). A window that cannot be made (e.g. a
    session it refuses) is an ExportError with its reason."""
    from .. import create_window  # a command is an entry point: it may use the facade

    app = headless_app()
    window = None
    with quiet_offscreen():
        try:
            try:
                window = create_window(session)
            except Exception as exc:  # e.g. SessionError
                raise ExportError(str(exc)) from None
            window.show()
            app.processEvents()
            # the session's reference A, computed off the UI thread: the figures compare with it
            problem = window.snapshots.wait_ready(RENDER_TIMEOUT_S)
            if problem:
                print(f"attention-explorer export: note: {problem}; the figures show B alone".splitlines()[0],
                      file=sys.stderr, flush=True)
            yield window
        finally:
            if window is not None:
                window.shutdown()
                window.hide()
                window.deleteLater()
                app.processEvents()
