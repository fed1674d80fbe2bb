"""The monkey (issue 44): seeded random real user actions against the full window, in a child
process; it fails on any Python traceback, a native crash or a hang.

    python main.py bench --monkey N [--seed S]     # N actions, in runs of ≤ RUN_ACTIONS, seeds S, S+1, …
    python -m explorer.bench.monkey --seed S --actions N [--case tryout] [--model-run]  # one child

What a user does, and nothing else (no private attribute, no call a user cannot make):
every enabled menu action (menus and submenus, languages and lessons included; never Quit),
a control of the configuration changed (spin boxes, sliders, combo boxes, check boxes), a
button of any dock pressed (a lesson's Apply / Do it for me / Next, the lab's Train, a
player's Step), a click, hover or right click on a plot, the window resized (1280×800 up to
1920×1080), a dock floated, closed or brought back (View ▸ its name), a model opened (a tiny
training-lab run saved offline, so nothing is downloaded and transformers is not imported;
the bundled MiniLM through its menu entry with `demo_model=True`) and its docks closed. A
modal dialog or a menu that opens is dismissed by a timer (`QApplication.activeModalWidget()
.reject()`, as Esc would), so a dialog never blocks the run.

What counts: every traceback printed (sys.excepthook, which PySide calls for an exception in
a slot or a virtual method; threading.excepthook; sys.unraisablehook; a warning carrying a
traceback, pyqtgraph's `printExc`): the parent counts "Traceback (most recent call last)" in
the child's stderr, so one printed any other way counts too; a native crash (the child's exit
status: a signal is negative); a hang (the child did not finish in `timeout_for(actions)`; its
Python stacks are dumped by `faulthandler` first). The child's last actions are in its report.

`CASES["tryout"]` is the tryout's sequence that ended in a segfault in libshiboken6 (Lessons ▸
Training lab, close the lab, View ▸ Language ▸ English), played a few times before the random
actions.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: at most this many actions per child (a longer run is cut into several seeds)
RUN_ACTIONS = 500
#: a run's sizes (the window is resized among them; 1280×800 is a 13" laptop)
SIZES = ((1280, 800), (1600, 1000), (1920, 1080), (1366, 768), (1024, 700))
#: what one random step is, and how often
#: (a language switch relabels every widget, ~2-5 s on a 2-core machine: the menu's two
#: language entries and this weight are plenty)
MIX = (("menu", 0.27), ("control", 0.24), ("button", 0.12), ("plot", 0.12), ("dock", 0.10),
       ("resize", 0.06), ("language", 0.01), ("model", 0.03), ("wait", 0.05))
#: the tryout's sequence: (what, argument) steps a user did in the real window
CASES = {
    "tryout": [("menu", "lessons/Training lab"), ("wait", 0.3), ("close_dock", "training"),
               ("menu", "view/language/English"), ("wait", 0.2)] * 3,
}
TRACEBACK = "Traceback (most recent call last)"


def timeout_for(actions: int) -> float:
    """Seconds a child may take for `actions` before it counts as hung: a window's start, a
    model, and well over what an action costs on a loaded 2-core machine."""
    return 90.0 + 0.8 * actions


# ---- counting what goes wrong (in the child) -------------------------------------------------

class Tracebacks:
    """Every Python traceback of the process, printed to stderr and counted (`count`)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def _note(self, text: str) -> None:
        self.count += 1
        if len(self.first) < 5:
            self.first.append(text)
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()

    def install(self) -> None:
        sys.excepthook = lambda t, v, tb: self._note("".join(traceback.format_exception(t, v, tb)))
        threading.excepthook = lambda a: self._note(
            f"in thread {a.thread.name if a.thread else '?'}:\n"
            + "".join(traceback.format_exception(a.exc_type, a.exc_value, a.exc_traceback)))
        sys.unraisablehook = lambda u: self._note(
            f"unraisable in {u.object!r}:\n"
            + "".join(traceback.format_exception(u.exc_type, u.exc_value, u.exc_traceback)))
        show = warnings.showwarning

        def showwarning(message, category, filename, lineno, file=None, line=None):
            if TRACEBACK in str(message):  # pyqtgraph's printExc: an exception it caught
                self._note(f"{category.__name__} at {filename}:{lineno}: {message}")
            else:
                show(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning


# ---- the monkey itself (in the child, or any process with a window) ---------------------------

def _action_path(action) -> str:
    return action.text().replace("&", "")


class Monkey:
    """Random user actions on `window`, drawn from `rng` (see the module docstring)."""

    def __init__(self, window, rng: random.Random, *, model_path: str | None = None,
                 demo_model: bool = False) -> None:
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        self.window = window
        self.rng = rng
        self.model_path = model_path
        self.demo_model = demo_model
        self.log: list[str] = []
        #: each action written to stderr as it starts and ends (the child does)
        self.echo = False
        self.app = QApplication.instance()
        # dismiss what would block: a modal dialog (as Esc would) and an open popup menu
        self.dismissed = 0
        self.closer = QTimer()
        self.closer.setInterval(40)
        self.closer.timeout.connect(self._dismiss)
        self.closer.start()

    def stop(self) -> None:
        self.closer.stop()

    def _dismiss(self) -> None:
        from PySide6.QtWidgets import QDialog

        for w in (self.app.activePopupWidget(), self.app.activeModalWidget()):
            if w is None:
                continue
            self.dismissed += 1
            if isinstance(w, QDialog):
                w.reject()
            else:
                w.close()

    # ---- what there is to act on --------------------------------------------------------------
    def menu_actions(self) -> list[tuple[str, object]]:
        """(path, action) of every enabled, visible menu action, submenus included; no Quit and
        no action that closes the window."""
        from PySide6.QtCore import QCoreApplication
        from PySide6.QtGui import QAction, QKeySequence

        quit_keys = {QKeySequence(QKeySequence.StandardKey.Quit).toString(),
                     QKeySequence(QKeySequence.StandardKey.Close).toString()} - {""}
        # File ▸ Quit has no shortcut on some platforms (offscreen): known by its text, in
        # whatever language the window shows now
        quit_text = QCoreApplication.translate("MainWindow", "&Quit")
        out = []

        def walk(menu, prefix: str) -> None:
            for a in menu.actions():
                if a.isSeparator() or not a.isVisible():
                    continue
                sub = a.menu()
                name = f"{prefix}/{_action_path(a)}"
                if sub is not None:
                    walk(sub, f"{prefix}/{sub.objectName().removeprefix('menu_') or _action_path(a)}")
                    continue
                if (not a.isEnabled() or a.shortcut().toString() in quit_keys or a.text() == quit_text
                        or a.menuRole() == QAction.MenuRole.QuitRole):
                    continue
                if not self.demo_model and "MiniLM" in a.text():
                    continue
                out.append((name, a))

        for top in self.window.menuBar().actions():
            if top.menu() is not None:
                walk(top.menu(), top.menu().objectName().removeprefix("menu_") or _action_path(top))
        return out

    def docks(self):
        from PySide6.QtWidgets import QDockWidget

        return [d for d in self.window.findChildren(QDockWidget) if d.parent() is self.window]

    def shown_panels(self):
        from ..panels.base import Panel

        return [p for p in self.window.findChildren(Panel) if p.isVisible() and p.graphics.isVisible()]

    # ---- one step --------------------------------------------------------------------------------
    def step(self) -> str:
        kinds, weights = zip(*MIX, strict=True)
        kind = self.rng.choices(kinds, weights)[0]
        if self.echo:  # before it runs: a native crash leaves the action that caused it last
            sys.stderr.write(f"monkey: {kind}\n")
            sys.stderr.flush()
        what = getattr(self, f"_do_{kind}")()
        self.log.append(f"{kind}: {what}")
        if self.echo:
            sys.stderr.write(f"monkey: {self.log[-1]}\n")
            sys.stderr.flush()
        if not self.window.isVisible():  # closed after all (a question dismissed, a shortcut)
            self.window.show()
            self.log.append("window shown again")
        self.settle(self.rng.choice((0.0, 0.0, 0.02, 0.05, 0.15)))
        return self.log[-1]

    def play(self, steps) -> None:
        """A fixed sequence: ("menu", "lessons/Training lab"), ("close_dock", name), ("wait", s)."""
        for kind, arg in steps:
            if kind == "menu":
                want = arg.lower()
                hits = [(p, a) for p, a in self.menu_actions() if p.lower().startswith(want)]
                if not hits:
                    raise LookupError(f"no enabled menu action {arg!r}")
                hits[0][1].trigger()
                self.log.append(f"menu: {hits[0][0]}")
            elif kind == "close_dock":
                for d in self.docks():
                    if d.objectName() == f"dock_{arg}":
                        d.close()
                self.log.append(f"close dock: {arg}")
            elif kind == "wait":
                self.settle(float(arg))
                continue
            self.settle(0.05)

    def settle(self, seconds: float) -> None:
        """Let the window work for `seconds` (its event loop runs; deleteLater'd objects go)."""
        from ..work.base import run_events_until

        if seconds <= 0:
            self.app.processEvents()
            return
        run_events_until(lambda: False, seconds)

    # ---- the kinds of step ---------------------------------------------------------------------
    def _do_menu(self) -> str:
        acts = self.menu_actions()
        path, action = self.rng.choice(acts)
        action.trigger()
        return path

    def _do_language(self) -> str:
        acts = [(p, a) for p, a in self.menu_actions() if p.startswith("view/language/")]
        if not acts:
            return "no language menu"
        path, action = self.rng.choice(acts)
        action.trigger()
        return path

    def _do_control(self) -> str:
        from PySide6.QtWidgets import QAbstractButton, QAbstractSlider, QComboBox, QSpinBox, QWidget

        rng = self.rng
        kinds = (QSpinBox, QAbstractSlider, QComboBox, QAbstractButton)
        controls = self._controls_dock()
        if controls is not None and controls.isHidden():  # closed: View ▸ Configuration first
            controls.toggleViewAction().trigger()
            self.settle(0.0)
        widgets = [w for w in (controls.findChildren(QWidget) if controls is not None else [])
                   if isinstance(w, kinds) and w.isVisible() and w.isEnabled()]
        if not widgets:
            return "no control"
        w = rng.choice(widgets)
        name = w.objectName() or type(w).__name__
        if isinstance(w, (QSpinBox, QAbstractSlider)):
            lo, hi = w.minimum(), w.maximum()
            u = rng.random()
            if u < 0.8:  # a nudge, as a drag or an arrow key does
                v = w.value() + rng.choice((-3, -2, -1, 1, 2, 3)) * max(1, w.singleStep())
            elif u < 0.98:  # a typed value near the bottom of the range
                v = lo + rng.randrange(min(hi - lo, 64) + 1)
            else:  # anywhere, small ones more often (a long frame is slow, not broken)
                v = lo + int((hi - lo) * rng.random() ** 4)
            v = min(hi, max(lo, v))
            w.setValue(v)
            return f"{name} = {v}"
        if isinstance(w, QComboBox):
            if w.count() == 0:
                return f"{name}: empty"
            i = rng.randrange(w.count())
            w.setCurrentIndex(i)
            return f"{name} = {w.itemText(i)!r}"
        w.click()
        return f"{name} clicked"

    def _controls_dock(self):
        from PySide6.QtWidgets import QDockWidget

        return self.window.findChild(QDockWidget, "dock_controls")

    def _in_controls(self, w) -> bool:
        dock = self._controls_dock()
        return dock is not None and dock.isAncestorOf(w)

    def _do_button(self) -> str:
        from PySide6.QtWidgets import QPushButton, QToolButton, QWidget

        buttons = [b for b in self.window.findChildren(QWidget) if isinstance(b, (QPushButton, QToolButton))
                   and b.isVisible() and b.isEnabled() and not self._in_controls(b)
                   and b.window() is self.window and b.text() not in ("", "×")]
        if not buttons:
            return "no button"
        b = self.rng.choice(buttons)
        text = b.text()
        b.click()
        return repr(text)

    def _do_plot(self) -> str:
        from PySide6.QtCore import QPoint, Qt
        from PySide6.QtTest import QTest

        panels = self.shown_panels()
        if not panels:
            return "no plot"
        p = self.rng.choice(panels)
        vp = p.graphics.viewport()
        if vp.width() < 4 or vp.height() < 4:
            return f"{p.name}: no room"
        at = QPoint(self.rng.randrange(vp.width()), self.rng.randrange(vp.height()))
        how = self.rng.choice(("left", "left", "hover", "right", "double"))
        if how == "hover":
            QTest.mouseMove(vp, at)
        elif how == "double":
            QTest.mouseDClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        else:
            btn = Qt.MouseButton.LeftButton if how == "left" else Qt.MouseButton.RightButton
            QTest.mouseClick(vp, btn, Qt.KeyboardModifier.NoModifier, at)
        return f"{how} {p.name} ({at.x()}, {at.y()})"

    def _do_dock(self) -> str:
        docks = self.docks()
        if not docks:
            return "no dock"
        d = self.rng.choice(docks)
        name = d.objectName()
        how = self.rng.choice(("float", "close", "show", "show"))
        if how == "float":
            d.setFloating(not d.isFloating())
        elif how == "close":
            d.close()
        else:  # View ▸ its name, when it is closed; brought forward otherwise
            if d.isHidden():
                d.toggleViewAction().trigger()
            else:
                d.raise_()
        return f"{how} {name}"

    def _do_resize(self) -> str:
        w, h = self.rng.choice(SIZES)
        self.window.resize(w, h)
        return f"{w}×{h}"

    def _do_wait(self) -> str:
        s = self.rng.choice((0.1, 0.3, 0.6))
        self.settle(s)
        return f"{s} s"

    def _do_model(self) -> str:
        models = getattr(self.window, "model_controller", None) or getattr(self.window.state, "models", None)
        model_docks = [d for d in self.docks() if getattr(d.widget(), "requires_model", False) and d.isVisible()]
        if model_docks and self.rng.random() < 0.5:  # the model's docks closed, one by one as a user does
            for d in model_docks:
                d.close()
            return "model docks closed"
        if models is None or self.model_path is None:
            return "no model to open"
        models.load(self.model_path)
        return f"open {Path(self.model_path).name}"


# ---- the child ----------------------------------------------------------------------------------

def tiny_model(folder: Path) -> str:
    """A model made offline: the training lab's default run after a few steps, saved as a run
    folder that File ▸ Open model opens like any other (no transformers needed)."""
    from engine.training import TrainConfig, Trainer

    tr = Trainer(TrainConfig(seed=0))
    tr.step(3)
    return str(tr.save(folder / "tiny-run"))


@dataclass
class ChildReport:
    seed: int
    actions: int
    done: int = 0
    tracebacks: int = 0
    dismissed: int = 0
    seconds: float = 0.0
    last: list[str] = field(default_factory=list)


def run_child(seed: int, actions: int, case: str | None, with_model: bool, demo_model: bool) -> int:
    """Build the window, run the case and `actions` random steps, close it; print the report as
    the last line of stdout (JSON). Exit status 0 even with tracebacks (the parent counts them)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    faulthandler.enable()  # a native crash prints the Python stacks
    tb = Tracebacks()
    tb.install()
    report = ChildReport(seed, actions)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attn-monkey-") as tmp:
        # settings of its own (the user's layout, recent files, Qt's file-dialog history)
        os.environ["ATTN_EXPLORER_SETTINGS"] = os.path.join(tmp, "settings.ini")
        os.environ["XDG_CONFIG_HOME"] = tmp
        from explorer import create_window, ensure_app

        app = ensure_app()
        window = create_window()
        window.resize(1600, 1000)
        window.show()
        model_path = tiny_model(Path(tmp)) if with_model else None
        monkey = Monkey(window, random.Random(seed), model_path=model_path, demo_model=demo_model)
        monkey.echo = True
        monkey.settle(0.2)
        try:
            if case:
                monkey.play(CASES[case])
            for _ in range(actions):
                monkey.step()
                report.done += 1
            monkey.settle(0.5)
        finally:
            report.last = monkey.log[-12:]
            report.dismissed = monkey.dismissed
            window.close()
            if window.isVisible():  # a question about unsaved work was dismissed: close anyway
                window.hide()
            monkey.stop()
            shutdown = getattr(window, "shutdown", None)
            if shutdown is not None:
                shutdown()
            window.deleteLater()
            monkey.settle(0.2)
            del app
    report.tracebacks = tb.count
    report.seconds = round(time.monotonic() - t0, 1)
    sys.stdout.write("\n" + json.dumps(asdict(report)) + "\n")
    sys.stdout.flush()
    return 0


# ---- the parent ---------------------------------------------------------------------------------

@dataclass
class MonkeyResult:
    """One child: what it did and what went wrong."""

    seed: int
    actions: int
    case: str | None
    tracebacks: int
    crashed: bool
    hung: bool
    returncode: int | None
    seconds: float
    report: dict | None
    stderr_tail: str
    #: each distinct exception line ("IndexError: index 5 is out of bounds …") → how often
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.tracebacks == 0 and not self.crashed and not self.hung

    def crash_name(self) -> str:
        """"CRASH (SIGSEGV)": the signal that ended the child, when one did."""
        import signal

        rc = self.returncode
        if rc is not None and rc < 0:
            try:
                return f"CRASH ({signal.Signals(-rc).name})"
            except ValueError:
                return f"CRASH (signal {-rc})"
        return "CRASH (no report)"

    def line(self) -> str:
        what = "ok" if self.ok else ", ".join(
            s for s, bad in ((f"{self.tracebacks} tracebacks", self.tracebacks), (self.crash_name(), self.crashed),
                             ("HANG", self.hung)) if bad)
        case = f" + case {self.case}" if self.case else ""
        return f"seed {self.seed}: {self.actions} actions{case}, {self.seconds:.0f} s: {what}"


def run_seed(seed: int, actions: int, *, case: str | None = None, with_model: bool = True,
             demo_model: bool = False, timeout_s: float | None = None) -> MonkeyResult:
    """One child process (`python -m explorer.bench.monkey …`), its tracebacks, crash or hang."""
    cmd = [sys.executable, "-X", "faulthandler", "-m", "explorer.bench.monkey", "--seed", str(seed),
           "--actions", str(actions)]
    if case:
        cmd += ["--case", case]
    if with_model:
        cmd.append("--model-run")
    if demo_model:
        cmd.append("--demo-model")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONUNBUFFERED="1")
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    timeout_s = timeout_s or timeout_for(actions)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=root)
    hung = False
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        hung = True
        import signal

        proc.send_signal(signal.SIGABRT)  # faulthandler dumps where every thread waits
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    report = None
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                report = json.loads(line)
            except ValueError:
                pass
            break
    rc = proc.returncode
    tracebacks = err.count(TRACEBACK)
    # a signal (negative status: SIGSEGV, SIGABRT) or an exit without a report and without a
    # traceback that would say why (a C++ abort through qFatal, os._exit)
    crashed = not hung and ((rc is not None and rc < 0) or (report is None and tracebacks == 0))
    return MonkeyResult(seed=seed, actions=actions, case=case, tracebacks=tracebacks,
                        crashed=crashed, hung=hung, returncode=rc,
                        seconds=time.monotonic() - t0, report=report, stderr_tail=_tail(err),
                        errors=exception_lines(err))


def exception_lines(err: str) -> dict[str, int]:
    """The last line of every traceback in `err` (the exception and its message), counted."""
    out: dict[str, int] = {}
    for block in err.split(TRACEBACK)[1:]:
        line = next((ln for ln in block.splitlines() if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b", ln)), None)
        key = (line or "?")[:160]
        out[key] = out.get(key, 0) + 1
    return out


def _tail(err: str, lines: int = 60) -> str:
    kept = [ln for ln in err.splitlines()
            if not re.search(r"propagateSizeHints|does not support raise|^monkey: ", ln)]
    steps = [ln for ln in err.splitlines() if ln.startswith("monkey: ")][-6:]
    return "\n".join(kept[-lines:] + steps)


def monkey_command(actions: int, seed: int = 0, as_json: bool = False, demo_model: bool = True) -> int:
    """`python main.py bench --monkey N [--seed S]`: N random actions in children of at most
    RUN_ACTIONS each (seeds S, S+1, …; the first also plays the tryout's case); a line per
    child, then the totals. Exit status 1 on any traceback, crash or hang."""
    results = []
    left, s = actions, seed
    while left > 0:
        n = min(RUN_ACTIONS, left)
        r = run_seed(s, n, case="tryout" if s == seed else None, demo_model=demo_model)
        results.append(r)
        if not as_json:
            print(r.line(), flush=True)
            for line, n in sorted(r.errors.items(), key=lambda kv: -kv[1]):
                print(f"  {n} × {line}")
            if r.crashed or r.hung:
                print("  last actions: " + " | ".join((r.report or {}).get("last", [])))
                print("  " + r.stderr_tail.replace("\n", "\n  "))
        left -= n
        s += 1
    totals = {"actions": sum(r.actions for r in results), "children": len(results),
              "tracebacks": sum(r.tracebacks for r in results), "crashes": sum(r.crashed for r in results),
              "hangs": sum(r.hung for r in results)}
    if as_json:
        print(json.dumps({"totals": totals, "runs": [
            {k: v for k, v in asdict(r).items() if k != "stderr_tail"} | {"ok": r.ok} for r in results]}, indent=2))
    else:
        print(f"monkey: {totals['actions']} actions in {totals['children']} runs from seed {seed}: "
              f"{totals['tracebacks']} tracebacks, {totals['crashes']} crashes, {totals['hangs']} hangs")
    return 0 if all(r.ok for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m explorer.bench.monkey", description="one monkey run (a child)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--actions", type=int, default=100)
    p.add_argument("--case", choices=sorted(CASES))
    p.add_argument("--model-run", action="store_true", help="open a tiny training run as a model now and then")
    p.add_argument("--demo-model", action="store_true", help="let File ▸ Open demo model (MiniLM) be chosen")
    a = p.parse_args(argv)
    return run_child(a.seed, a.actions, a.case, a.model_run, a.demo_model)


if __name__ == "__main__":
    sys.exit(main())
