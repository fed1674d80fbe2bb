"""Session files: the JSON of docs/contract.md, read and written without Qt.

    {"format": "attention-explorer.session", "version": 1,
     "config": {...AttentionConfig.to_dict()},
     "selection": {"head": h, "query": i, "key": j},
     "model": null | {...},
     "snapshots": [...]}          # optional: named states (explorer.snapshot_data)

Loading only parses JSON and validates it; nothing in a session file is ever
executed or imported. A malformed file, or one written by a newer version, is
refused with a `SessionError` that says what is wrong. Saving is atomic (a
temporary file in the same folder, then `os.replace`), so a crash mid-write
never leaves half a session behind.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import AttentionConfig, ConfigError
from engine.config import short_repr

FORMAT = "attention-explorer.session"
VERSION = 1
#: Larger files are refused before parsing: a session is a few hundred bytes.
MAX_BYTES = 4 * 1024 * 1024
_KEYS = {"format", "version", "config", "selection", "model", "snapshots"}
#: Deepest nesting of arrays and objects accepted (a session nests three levels).
MAX_DEPTH = 32
#: Temporary files of an interrupted save older than this many seconds are removed on the next save.
STALE_TMP_S = 60.0


class SessionError(ValueError):
    """A session file that cannot be used; the message says why."""


@dataclass(frozen=True)
class Session:
    """A parsed, validated session: config, selection (head, query, key) and model info."""

    config: AttentionConfig = field(default_factory=AttentionConfig)
    head: int = 0
    query: int = 0
    key: int = 0
    model: dict[str, Any] | None = None
    snapshots: tuple = ()  # explorer.snapshot_data.Snapshot, in the list's order

    @property
    def selection(self) -> dict[str, int]:
        return {"head": self.head, "query": self.query, "key": self.key}


def _read(path: str | os.PathLike) -> Any:
    """The parsed JSON of a session file; SessionError for anything unusable.

    Only a regular file is read (a FIFO, a character device such as /dev/zero or a
    folder is refused before any read), opened non-blocking (a FIFO swapped in between
    the check and the open cannot block), and never more than MAX_BYTES + 1 bytes.
    """
    p = Path(path)
    if not str(path).strip():
        raise SessionError("no session file named (the path is empty)")
    try:
        st = os.stat(p)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise SessionError(f"cannot open session file {str(p)!r}: {_reason(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SessionError(f"{p} is {_kind(st.st_mode)}, not a session file")
    if st.st_size > MAX_BYTES:
        raise SessionError(f"{p.name} is {st.st_size} bytes, too large for a session file (max {MAX_BYTES})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        raise SessionError(f"cannot open session file {str(p)!r}: {_reason(exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between the stat and the open
            raise SessionError(f"{p} is {_kind(mode)}, not a session file")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise SessionError(f"cannot read session file {str(p)!r}: {_reason(exc)}") from None
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        raise SessionError(f"{p.name} is more than {MAX_BYTES} bytes, too large for a session file")
    try:
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionError(f"{p.name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionError(f"{p.name} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise SessionError(f"{p.name} nests arrays or objects too deeply for a session file "
                           f"(at most {MAX_DEPTH} levels)") from None
    except ValueError:  # an integer literal longer than Python converts (sys.get_int_max_str_digits)
        raise SessionError(f"{p.name} holds an integer with too many digits for a session file "
                           f"(at most {_max_digits()})") from None


def _max_digits() -> int:
    return getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300


def _key(k: Any) -> str:
    """A field name for a message: as it is when a short string, else a short repr."""
    return k if isinstance(k, str) and len(k) <= 40 and k.isprintable() else short_repr(k, 40)


def _is_text(s: str) -> bool:
    """False for a string that cannot be written as UTF-8 (a lone surrogate, valid in JSON)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reason(exc: BaseException) -> str:
    return (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).splitlines()[0]


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "not a regular file"


def _check_depth(data: Any) -> None:
    """SessionError when containers nest deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, Mapping | list | tuple):
            if depth > MAX_DEPTH:
                raise SessionError(f"the session nests arrays or objects too deeply (at most {MAX_DEPTH} levels)")
            items = value.values() if isinstance(value, Mapping) else value
            stack.extend((v, depth + 1) for v in items if isinstance(v, Mapping | list | tuple))


def _index(sel: Mapping, name: str, limit: int, what: str) -> int:
    v = sel.get(name, 0)
    if not isinstance(v, int) or isinstance(v, bool):
        raise SessionError(f"selection.{name} must be an integer, got {short_repr(v)}")
    if not 0 <= v < limit:
        raise SessionError(f"selection.{name}={short_repr(v, 30)} is out of range: this config has {limit} {what}")
    return v


def parse_session(data: Any) -> Session:
    """Validate an already-parsed session dict (see the module docstring)."""
    if not isinstance(data, Mapping):
        raise SessionError(f"a session must be a JSON object, got {type(data).__name__}")
    _check_depth(data)
    if data.get("format") != FORMAT:
        raise SessionError(f"not an Attention Explorer session: format is {short_repr(data.get('format'))}, "
                           f"expected {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"session version must be a positive integer, got {short_repr(version)}")
    if version > VERSION:
        raise SessionError(
            f"this session was written by a newer Attention Explorer (format version {short_repr(version, 30)}); "
            f"this build reads version {VERSION}: please update"
        )
    unknown = sorted(_key(k) for k in set(data) - _KEYS)
    if unknown:
        raise SessionError(f"unknown session field(s): {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    cfg = data.get("config", {})
    if not isinstance(cfg, Mapping):
        raise SessionError(f"session 'config' must be an object, got {type(cfg).__name__}")
    try:
        config = AttentionConfig.from_dict(dict(cfg))
    except ConfigError as exc:
        raise SessionError(f"invalid config in session: {exc}") from None
    except TypeError as exc:  # e.g. a list where a number belongs
        raise SessionError(f"invalid config in session: {exc}") from None
    sel = data.get("selection")
    sel = {} if sel is None else sel  # absent or null: the default; [], 0, false are not objects
    if not isinstance(sel, Mapping):
        raise SessionError(f"session 'selection' must be an object, got {type(sel).__name__}")
    extra = sorted(_key(k) for k in set(sel) - {"head", "query", "key"})
    if extra:
        raise SessionError(f"unknown selection field(s): {', '.join(extra)} (known: head, query, key)")
    head = _index(sel, "head", config.n_heads, "heads")
    query = _index(sel, "query", config.seq_len, "queries")
    key = _index(sel, "key", config.key_len, "keys")
    model = data.get("model")
    if model is not None and not isinstance(model, Mapping):
        raise SessionError(f"session 'model' must be null or an object, got {type(model).__name__}")
    from .snapshot_data import parse_snapshots

    snapshots = parse_snapshots(data.get("snapshots"), SessionError)
    return Session(config, head, query, key, None if model is None else _model_info(model), snapshots)


#: the session's "model" object: which model, which text, which layer/head/query/key
_MODEL_KEYS = {"source": str, "text": str, "layer": int, "head": int, "query": int, "key": int}


def _model_info(model: Mapping) -> dict[str, Any]:
    """Validate a session's "model" object (only types and ranges: nothing is loaded here;
    indices beyond the model's shape are clamped when it has loaded)."""
    unknown = sorted(_key(k) for k in set(model) - set(_MODEL_KEYS))
    if unknown:
        raise SessionError(f"unknown model field(s): {', '.join(unknown)} "
                           f"(known: {', '.join(_MODEL_KEYS)})")
    source = model.get("source")
    if not isinstance(source, str) or not source.strip() or not _is_text(source):
        raise SessionError(f"model.source must name a model folder or hub id, got {short_repr(source)}")
    for name, kind in _MODEL_KEYS.items():
        v = model.get(name)
        if v is None or name == "source":
            continue
        if kind is int and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise SessionError(f"model.{name} must be a non-negative integer, got {short_repr(v)}")
        if kind is str and not isinstance(v, str):
            raise SessionError(f"model.{name} must be a string, got {type(v).__name__}")
        if kind is str and not _is_text(v):
            raise SessionError(f"model.{name} must be valid Unicode text (it holds a lone surrogate)")
    return dict(model)


def load_session(source: str | os.PathLike | Mapping) -> Session:
    """A Session from a file path or an already-parsed dict; SessionError if unusable."""
    data = _read(source) if isinstance(source, str | os.PathLike) else source
    return parse_session(data)


def session_to_dict(config: AttentionConfig, selection: Any = None, model: Mapping | None = None,
                    snapshots: Any = ()) -> dict:
    """The JSON-ready dict; `selection` is a mapping or has head/query/key attributes;
    `snapshots` (Snapshot objects) are written only when there are some."""
    if selection is None:
        sel = {"head": 0, "query": 0, "key": 0}
    elif isinstance(selection, Mapping):
        sel = {k: int(selection.get(k, 0)) for k in ("head", "query", "key")}
    else:
        sel = {k: int(getattr(selection, k)) for k in ("head", "query", "key")}
    data = {
        "format": FORMAT,
        "version": VERSION,
        "config": config.to_dict(),
        "selection": sel,
        "model": None if model is None else dict(model),
    }
    if snapshots:
        data["snapshots"] = [s.to_dict() for s in snapshots]
    return data


def save_session(path: str | os.PathLike, config: AttentionConfig, selection: Any = None,
                 model: Mapping | None = None, snapshots: Any = ()) -> Path:
    """Write the session atomically to `path`; returns the path written."""
    data = session_to_dict(config, selection, model, snapshots)
    parse_session(data)  # never write a file we would refuse to read
    p = Path(path)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    folder = p.parent if str(p.parent) else Path(".")
    _remove_stale_temps(folder, p.name)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _file_mode(p))
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return p


def _file_mode(p: Path) -> int:
    """The mode a saved session gets: the replaced file's (a shared 0664 stays 0664), else
    0644 less the umask, as any new file (mkstemp's temporary is 0600)."""
    try:
        return stat.S_IMODE(os.stat(p).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o644 & ~mask


#: tempfile.mkstemp's random part: 8 characters of this alphabet
_TMP_RANDOM = r"[a-z0-9_]{8}"


def _remove_stale_temps(folder: Path, name: str) -> None:
    """Remove what an interrupted save of `name` left in `folder` (killed between mkstemp and
    os.replace): regular files named exactly `.NAME.XXXXXXXX.tmp`, as save_session creates
    them, older than STALE_TMP_S (a younger one may be another save still writing).
    Anything else, and any error, is left alone."""
    pattern = re.compile(re.escape(f".{name}.") + _TMP_RANDOM + re.escape(".tmp"))
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TMP_S:
                os.unlink(entry.path)
        except OSError:
            pass
