"""Session files: the JSON of DESIGN.md, read and written without Qt.

    {"format": "attention-explorer.session", "version": 1,
     "config": {...AttentionConfig.to_dict()},
     "selection": {"head": h, "query": i, "key": j},
     "model": null | {...}}

Loading only parses JSON and validates it; nothing in a session file is ever
executed or imported. A malformed file, or one written by a newer version, is
refused with a `SessionError` that says what is wrong. Saving is atomic (a
temporary file in the same folder, then `os.replace`), so a crash mid-write
never leaves half a session behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import AttentionConfig, ConfigError

FORMAT = "attention-explorer.session"
VERSION = 1
#: Larger files are refused before parsing: a session is a few hundred bytes.
MAX_BYTES = 4 * 1024 * 1024
_KEYS = {"format", "version", "config", "selection", "model"}


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

    @property
    def selection(self) -> dict[str, int]:
        return {"head": self.head, "query": self.query, "key": self.key}


def _read(path: str | os.PathLike) -> Any:
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise SessionError(f"cannot open session file {str(p)!r}: {exc.strerror or exc}") from None
    if size > MAX_BYTES:
        raise SessionError(f"{p.name} is {size} bytes, too large for a session file (max {MAX_BYTES})")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionError(f"{p.name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SessionError(f"cannot read session file {str(p)!r}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionError(f"{p.name} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def _index(sel: Mapping, name: str, limit: int, what: str) -> int:
    v = sel.get(name, 0)
    if not isinstance(v, int) or isinstance(v, bool):
        raise SessionError(f"selection.{name} must be an integer, got {v!r}")
    if not 0 <= v < limit:
        raise SessionError(f"selection.{name}={v} is out of range: this config has {limit} {what}")
    return v


def parse_session(data: Any) -> Session:
    """Validate an already-parsed session dict (see the module docstring)."""
    if not isinstance(data, Mapping):
        raise SessionError(f"a session must be a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise SessionError(f"not an Attention Explorer session: format is {data.get('format')!r}, expected {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"session version must be a positive integer, got {version!r}")
    if version > VERSION:
        raise SessionError(
            f"this session was written by a newer Attention Explorer (format version {version}); "
            f"this build reads version {VERSION}: please update"
        )
    unknown = sorted(set(data) - _KEYS)
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
    sel = data.get("selection") or {}
    if not isinstance(sel, Mapping):
        raise SessionError(f"session 'selection' must be an object, got {type(sel).__name__}")
    extra = sorted(set(sel) - {"head", "query", "key"})
    if extra:
        raise SessionError(f"unknown selection field(s): {', '.join(extra)} (known: head, query, key)")
    head = _index(sel, "head", config.n_heads, "heads")
    query = _index(sel, "query", config.seq_len, "queries")
    key = _index(sel, "key", config.key_len, "keys")
    model = data.get("model")
    if model is not None and not isinstance(model, Mapping):
        raise SessionError(f"session 'model' must be null or an object, got {type(model).__name__}")
    return Session(config, head, query, key, None if model is None else _model_info(model))


#: the session's "model" object: which model, which text, which layer/head/query/key
_MODEL_KEYS = {"source": str, "text": str, "layer": int, "head": int, "query": int, "key": int}


def _model_info(model: Mapping) -> dict[str, Any]:
    """Validate a session's "model" object (only types and ranges: nothing is loaded here;
    indices beyond the model's shape are clamped when it has loaded)."""
    unknown = sorted(set(model) - set(_MODEL_KEYS))
    if unknown:
        raise SessionError(f"unknown model field(s): {', '.join(unknown)} "
                           f"(known: {', '.join(_MODEL_KEYS)})")
    source = model.get("source")
    if not isinstance(source, str) or not source.strip():
        raise SessionError(f"model.source must name a model folder or hub id, got {source!r}")
    for name, kind in _MODEL_KEYS.items():
        v = model.get(name)
        if v is None or name == "source":
            continue
        if kind is int and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise SessionError(f"model.{name} must be a non-negative integer, got {v!r}")
        if kind is str and not isinstance(v, str):
            raise SessionError(f"model.{name} must be a string, got {type(v).__name__}")
    return dict(model)


def load_session(source: str | os.PathLike | Mapping) -> Session:
    """A Session from a file path or an already-parsed dict; SessionError if unusable."""
    data = _read(source) if isinstance(source, str | os.PathLike) else source
    return parse_session(data)


def session_to_dict(config: AttentionConfig, selection: Any = None, model: Mapping | None = None) -> dict:
    """The JSON-ready dict; `selection` is a mapping or has head/query/key attributes."""
    if selection is None:
        sel = {"head": 0, "query": 0, "key": 0}
    elif isinstance(selection, Mapping):
        sel = {k: int(selection.get(k, 0)) for k in ("head", "query", "key")}
    else:
        sel = {k: int(getattr(selection, k)) for k in ("head", "query", "key")}
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": config.to_dict(),
        "selection": sel,
        "model": None if model is None else dict(model),
    }


def save_session(path: str | os.PathLike, config: AttentionConfig, selection: Any = None,
                 model: Mapping | None = None) -> Path:
    """Write the session atomically to `path`; returns the path written."""
    data = session_to_dict(config, selection, model)
    parse_session(data)  # never write a file we would refuse to read
    p = Path(path)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return p
