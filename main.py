"""Attention Explorer: the window by default, CLI subcommands otherwise.

Exit status: 0 success, 2 bad arguments, 1 any other failure (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line reason (no usage dump) on bad arguments."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _int_at_least(minimum: int, what: str, maximum: int | None = None):
    """An argparse type: an integer ≥ minimum (and ≤ maximum), else a one-line reason (exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {what}, got {str(value)[:40]}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_non_negative_int = _int_at_least(0, "an integer ≥ 0")
#: the longest soak (changes): 100,000 take hours on a 2-core machine
SOAK_MAX = 100_000
_soak_count = _int_at_least(1, f"a number of changes from 1 to {SOAK_MAX:,}", SOAK_MAX)
MONKEY_MAX = 1_000_000
_monkey_count = _int_at_least(1, f"a number of actions from 1 to {MONKEY_MAX:,}", MONKEY_MAX)


def _fps(text: str) -> float:
    """An argparse type: frames per second of an animation, in the range every animation takes
    (the sweep's and the training film's alike)."""
    import math

    lo, hi = 0.1, 30.0  # explorer.export.animation.FPS_RANGE (not imported: it loads numpy)
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected frames per second, got {text[:40]!r}") from None
    if not math.isfinite(value) or not lo <= value <= hi:
        raise argparse.ArgumentTypeError(f"frames per second must be from {lo:g} to {hi:g}, got {text[:40]}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="attention-explorer", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.add_argument("--session", help="a session file (.json) to open")
    gui.add_argument("--model", help="a Hugging Face model folder or cached hub id to load")

    exp = sub.add_parser("export", help="render panels headless to PNG/SVG/PDF")
    exp.add_argument("--out", required=True, help="output folder")
    exp.add_argument("--session", help="session file; default: the default configuration")
    exp.add_argument("--panel", action="append", dest="panels", metavar="NAME",
                     help="panel to export (repeatable); default: all")
    exp.add_argument("--format", action="append", dest="formats", choices=["png", "svg", "pdf", "gif", "mp4"],
                     help="format (repeatable); default: png; gif or mp4 with --sweep (default gif)")
    exp.add_argument("--width", type=int, help="PNG or animation width in pixels (default 1920; 1280 for --sweep)")
    exp.add_argument("--sweep", metavar="FIELD=START:STOP:STEP",
                     help="one animation per panel, a frame per value of a config field: DIR/NAME-FIELD.gif "
                          "(STEP may be a factor, e.g. head_dim=8:512:x2)")
    exp.add_argument("--fps", type=_fps, help="frames per second of a --sweep animation (default 1)")
    exp.add_argument("--dpi", type=int, help="size by DPI instead of --width")
    exp.add_argument("--theme", choices=["slides", "screen"], default="slides",
                     help="slides: light, large fonts, thick lines (default); screen: as on screen")
    exp.add_argument("--caption", action="store_true", help="add a caption: the config summary, or a model panel's model, layer, head and text")
    exp.add_argument("--force", action="store_true", help="overwrite existing files")

    ins = sub.add_parser("inspect", help="per-layer/per-head metrics of a Hugging Face model")
    ins.add_argument("--model", required=True, help="a model folder or cached hub id")
    ins.add_argument("--text", required=True, help="the text to run through the model")
    ins.add_argument("--layers", help="comma-separated layer indices (default: all)")
    ins.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ins.add_argument("--circuits", action="store_true",
                     help="add each head's induction, previous-token and duplicate-token scores")
    ins.add_argument("--logit-lens", action="store_true", dest="logit_lens",
                     help="every layer's top next token per position (causal LMs)")
    ins.add_argument("--attribute", metavar="TOKEN",
                     help="split TOKEN's logit at the last position into heads, MLPs, embeddings, biases "
                          "(a token string, or #ID for a token id)")
    ins.add_argument("--patch", metavar="CORRUPTED",
                     help="patch every head from --text (clean) into CORRUPTED (same token length)")
    ins.add_argument("--answer", metavar="TOKEN", help="with --patch: the token whose logit is the metric")
    ins.add_argument("--wrong", metavar="TOKEN", help="with --patch: metric = logit(answer) - logit(wrong)")

    sub.add_parser("selftest", help="build the window offscreen, run every backend, render, export")

    train = sub.add_parser("train", help="train the training lab's tiny transformer headless")
    train.add_argument("--task", help="induction (default), copy, reverse or sort")
    train.add_argument("--steps", type=_positive_int, help="optimiser steps (default: the config's)")
    train.add_argument("--seed", type=_non_negative_int, help="seed of weights, data and dropout")
    train.add_argument("--config", help="a JSON file of training config fields (engine.training.TrainConfig)")
    train.add_argument("--out", help="folder to save the run to (opens with --model in gui/inspect)")
    train.add_argument("--json", action="store_true", help="print progress as JSON lines")
    train.add_argument("--gif", metavar="PATH",
                       help="also write the heads forming as an animation (.gif or .mp4), one frame per probe snapshot")
    train.add_argument("--frames", type=_positive_int, help="frames of the --gif animation (default 48)")
    train.add_argument("--fps", type=_fps, help="frames per second of the --gif animation (default 8)")
    train.add_argument("--width", type=_positive_int, help="width of the --gif animation in pixels (default 960)")
    train.add_argument("--force", action="store_true", help="overwrite an existing --gif file")

    bench = sub.add_parser("bench", help="latency and scale benchmarks")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.add_argument("--quick", action="store_true", help="fewer repeats (for smoke tests)")
    bench.add_argument("--soak", type=_soak_count, metavar="N",
                       help="instead: N random config changes and clicks in one window; prints RSS at "
                            "every 10%%, latency median/p95/max and the exceptions counted")
    bench.add_argument("--monkey", type=_monkey_count, metavar="N",
                       help="instead: N seeded random user actions (menus, controls, docks, resizes, "
                            "languages, lessons, the lab, a model) in child processes; counts tracebacks, "
                            "crashes and hangs (exit status 1 on any)")
    bench.add_argument("--seed", type=_non_negative_int, metavar="S",
                       help="random seed of --soak or --monkey (default 0)")
    bench.add_argument("--train", action="store_true",
                       help="instead: the training lab's benchmarks (steps/s, seconds to induction per seed)")
    bench.add_argument("--profile", action="store_true",
                       help="instead: the length profile (time and peak memory of every backend, S 256 → 4096)")
    bench.add_argument("--variants", action="store_true",
                       help="with --profile: eager, sdpa, flash and the efficient variants, S 256 → 65536, "
                            "and the S where linear attention beats flash")
    return p


_EXPECTED = {"out": "a folder", "session": "a session file", "model": "a model folder or hub id",
             "text": "some text", "config": "a training config file", "gif": "a .gif or .mp4 file",
             "sweep": "FIELD=START:STOP:STEP"}


#: (command, the option they need, what it is): options that mean nothing without it
_ONLY_WITH = {
    ("train", ("gif",), "--gif PATH (the heads forming as an animation)"): ("frames", "fps", "width", "force"),
    ("export", ("sweep",), "--sweep FIELD=START:STOP:STEP (an animation)"): ("fps",),
    ("bench", ("soak", "monkey"), "--soak N or --monkey N (random changes or user actions)"): ("seed",),
    ("bench", ("profile",), "--profile (the length profile)"): ("variants",),
}


def _usage_error(args: argparse.Namespace) -> str | None:
    """The reason the arguments are unusable though argparse took them, or None.

    An empty --out, --session or --model would otherwise be ignored or mean the current folder.
    """
    command = getattr(args, "command", None)
    for (cmd, needed, what), options in _ONLY_WITH.items():  # one rule: refused, not ignored
        if command == cmd and all(getattr(args, n, None) in (None, False) for n in needed):
            given = [f"--{k}" for k in options if getattr(args, k, None) not in (None, False)]
            if given:
                verb = "applies" if len(given) == 1 else "apply"
                return f"{', '.join(given)} only {verb} with {what}"
    if getattr(args, "command", None) == "bench":
        modes = [f"--{k}" for k in ("soak", "monkey", "profile", "train") if getattr(args, k, None) not in (None, False)]
        if len(modes) > 1:
            return f"{' and '.join(modes)} are separate benchmarks: choose one"
    for option, expected in _EXPECTED.items():
        value = getattr(args, option, None)
        if value is None or (option == "text" and value):  # a text of spaces is still a text
            continue
        if not value.strip():
            return f"argument --{option}: expected {expected}, got {'an empty string' if not value else 'only spaces'}"
    return None


def _export_target_error(args: argparse.Namespace) -> str | None:
    """--out, or a folder above it, is a file; or a file export would write is a folder:
    say so before any work (--force replaces files, never folders)."""
    from pathlib import Path

    from explorer.export import PANEL_NAMES

    out = Path(args.out)
    for folder in (out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                where = "" if folder == out else f" (in --out {out})"
                return f"{folder} is a file, not a folder{where}: choose another --out"
            break
    for name in args.panels or PANEL_NAMES:
        for fmt in args.formats or ["png"]:
            target = out / (f"{name}-{args.sweep.partition('=')[0].strip()}.{fmt}" if args.sweep else f"{name}.{fmt}")
            if target.is_dir():
                return (f"{target} is a folder, and export writes a file there "
                        f"(--force does not replace folders): move it or choose another --out")
    return None


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as stop:  # a bad argument (2, its line printed) or --help (0): a return code
        return int(stop.code or 0)
    prog = "attention-explorer" + (f" {args.command}" if args.command else "")
    problem = _usage_error(args)
    if problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return 2
    try:
        if args.command in (None, "gui"):
            from explorer.platform_check import missing_xcb_message

            problem = missing_xcb_message()  # before Qt aborts with "Could not load ... xcb"
            if problem:
                print(f"{prog}: {problem}", file=sys.stderr)
                return 1
            from explorer.app import main_gui

            return main_gui(session=getattr(args, "session", None), model=getattr(args, "model", None))
        if args.command == "export":
            from explorer.export.cli import export_command

            problem = _export_target_error(args)
            if problem:
                print(f"{prog}: {problem}".splitlines()[0], file=sys.stderr)
                return 1

            return export_command(args)
        if args.command == "inspect":
            from engine.models.report import inspect_command

            return inspect_command(args.model, args.text, args.layers, args.json,
                                   circuits=args.circuits, logit_lens=args.logit_lens,
                                   attribute=args.attribute, patch=args.patch, answer=args.answer,
                                   wrong=args.wrong)
        if args.command == "train" and args.gif is not None:
            from explorer.training.forming import train_gif_command  # the frames are drawn with Qt

            return train_gif_command(args)
        if args.command == "train":
            from engine.training.cli import train_command

            return train_command(args.task, args.steps, args.seed, args.config, args.out, args.json)
        if args.command == "selftest":
            from explorer.selftest import run_selftest

            return run_selftest()
        if args.command == "bench" and args.profile:
            from engine.profile import profile_command

            return profile_command(args.json, args.quick, variants=args.variants)
        if args.command == "bench" and args.train:
            from explorer.training.bench import bench_command as training_bench

            return training_bench(args.json, args.quick)
        if args.command == "bench":
            from explorer.bench.cli import bench_command

            return bench_command(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 1
    except Exception as exc:  # the contract: one line on stderr, never a traceback
        print(f"attention-explorer: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 2


def freeze_support() -> None:
    """multiprocessing.freeze_support(): in a frozen bundle (PyInstaller) the training lab's
    child process is this executable run again with multiprocessing's arguments, which this
    hands to the child's loop before argparse sees them. ATTN_EXPLORER_FREEZE_SUPPORT tells
    explorer.training.worker that a frozen app may use the process."""
    import multiprocessing
    import os

    multiprocessing.freeze_support()
    os.environ["ATTN_EXPLORER_FREEZE_SUPPORT"] = "1"


if __name__ == "__main__":
    freeze_support()
    sys.exit(main())
