"""The one way the app runs work in a child process: the length profile's measuring process
(engine/profile.py) and the training lab's training process (explorer/training/worker.py).

`ChildProcess(target, *args, name=…)` starts `target(commands, results, *args)` in a fresh
interpreter (multiprocessing "spawn": it holds nothing of the caller, no Qt, and its peak
memory is its own), with two one-way pipes: the caller sends on `commands` and reads
`results`. `target` must be a module-level function (the child imports it by name).

Every child ends with its parent (`end_with_parent`): at once on Linux (the kernel's
SIGKILL, prctl PR_SET_PDEATHSIG), elsewhere within half a second (a daemon thread that
sees it reparented); and at the caller's normal exit (a daemon process: multiprocessing
ends it). A child measuring or training would otherwise run on for minutes after the
window was killed. `own_session=True` also puts it in a session of its own (where the
kernel shares the CPU by session, Linux's autogroup, it then has its own share instead of
splitting the window's).

`end()` asks it to stop with ("stop",), then terminates and at last kills it; `why_ended()`
says in words why it ended (a signal: "killed by SIGKILL: out of memory?").
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ChildProcess", "end_with_parent"]


def end_with_parent(poll_s: float = 0.5, parent: int | None = None) -> None:
    """Make this (child) process end when its parent does (see the module docstring).

    `parent`: the pid of the process that started this one (default: the present parent).
    A spawned child reaches this call only after importing its target (torch: seconds on a
    loaded machine); a parent that died meanwhile sends no signal and leaves the child
    reparented, so it ends at once when its parent is no longer `parent`.

    Linux sends the signal when the parent *thread* that started the child ends: a child
    started from a worker thread must not outlive that thread's call (the profile's does not;
    the training's is started from the UI thread)."""
    parent = os.getppid() if parent is None else parent
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes
            import signal

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(0)
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _main(target: Callable[..., None], commands, results, args: tuple, own_session: bool,
          parent: int) -> None:  # pragma: no cover - the child
    if own_session and hasattr(os, "setsid"):
        with contextlib.suppress(OSError):  # already a session or group leader: it keeps the caller's
            os.setsid()
    end_with_parent(parent=parent)
    target(commands, results, *args)


class ChildProcess:
    """One child process and its two pipes (see the module docstring). Raises OSError /
    RuntimeError / ValueError when no process can be started."""

    def __init__(self, target: Callable[..., None], *args: Any, name: str, own_session: bool = False) -> None:
        ctx = multiprocessing.get_context("spawn")
        commands_r, self.commands = ctx.Pipe(duplex=False)
        self.results, results_w = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_main, args=(target, commands_r, results_w, args, own_session, os.getpid()),
                                daemon=True, name=name)
        try:
            self.proc.start()
        finally:  # the child's ends: only the child holds them now
            commands_r.close()
            results_w.close()

    @property
    def pid(self) -> int | None:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.is_alive()

    def send(self, message: Any) -> None:
        """A command; OSError / ValueError once the child or the pipe has ended."""
        self.commands.send(message)

    def wait(self, cancel: Callable[[], bool] | None = None, timeout_s: float | None = None) -> Any | None:
        """The child's next message; None when `cancel()` turned true (polled every 50 ms),
        `timeout_s` passed or the child ended first."""
        start = time.monotonic()
        while True:
            try:
                if self.results.poll(0.05):
                    return self.results.recv()
            except (EOFError, OSError):
                return None
            if cancel is not None and cancel():
                return None
            if not self.proc.is_alive() and not self.results.poll(0):
                return None
            if timeout_s is not None and time.monotonic() - start > timeout_s:
                return None

    def end(self, kill: bool = False, wait_s: float = 2.0) -> None:
        """Stop the child and wait for it: ("stop",) and up to `wait_s` for it to return
        (not when `kill`), then SIGTERM, then SIGKILL. Closes `commands`; `results` stays
        open for whoever still reads it (`close()`). Idempotent."""
        if not kill:
            with contextlib.suppress(OSError, ValueError):
                self.commands.send(("stop",))
        with contextlib.suppress(OSError):
            self.commands.close()
        if not kill:
            self.proc.join(wait_s)
        for stop in (self.proc.terminate, self.proc.kill):
            if not self.proc.is_alive():
                break
            stop()
            self.proc.join(2)

    def close(self) -> None:
        """`end()` and close `results` too."""
        self.end()
        with contextlib.suppress(OSError):
            self.results.close()

    def why_ended(self, join_s: float = 2.0) -> str:
        """Why the child ended, in words ("exit status 1", "killed by SIGKILL: out of
        memory?", "ended" while its status is unknown); waits up to `join_s` for it."""
        self.proc.join(join_s)
        code = self.proc.exitcode
        if code is None:
            return "ended"
        if code >= 0:
            return f"exit status {code}"
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (": out of memory?" if name == "SIGKILL" else "")
