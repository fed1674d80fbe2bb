"""Named snapshots as a session stores them (Qt-free; the list itself is explorer.snapshots).

A session's optional `"snapshots"` list holds up to MAX_SNAPSHOTS entries

    {"name": "with √d_k", "config": {...AttentionConfig.to_dict()},
     "selection": {"head": h, "query": i, "key": j}, "reference": true}

`selection` may be left out (0, 0, 0); `reference` marks the one pinned as A (at most one).
Only the config is stored: a snapshot's numbers and thumbnail are recomputed from it (the same
config gives the same numbers). A malformed entry is refused with a one-line SessionError
naming the entry and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import AttentionConfig, ConfigError
from engine.config import short_repr

MAX_SNAPSHOTS = 64
MAX_NAME = 80
_ENTRY_KEYS = {"name", "config", "selection", "reference"}


@dataclass(frozen=True)
class Snapshot:
    """One named state: name, config, selection (head, query, key), and whether it is A."""

    name: str
    config: AttentionConfig
    selection: dict[str, int] = field(default_factory=lambda: {"head": 0, "query": 0, "key": 0})
    reference: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "config": self.config.to_dict(), "selection": dict(self.selection)}
        if self.reference:
            d["reference"] = True
        return d


def check_name(name: Any, where: str = "snapshot name") -> str:
    """A usable snapshot name (stripped) or ValueError saying why not."""
    if not isinstance(name, str):
        raise ValueError(f"{where} must be a string, got {short_repr(name)}")
    text = name.strip()
    if not text:
        raise ValueError(f"{where} must not be empty")
    if len(text) > MAX_NAME:
        raise ValueError(f"{where} must be at most {MAX_NAME} characters, got {len(text)}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{where} must be valid Unicode text (it holds a lone surrogate)") from None
    if not text.isprintable():
        raise ValueError(f"{where} must be printable text (no control characters)")
    return text


def parse_snapshots(data: Any, error: type[Exception]) -> tuple[Snapshot, ...]:
    """The session's "snapshots" value as Snapshots; `error` (SessionError) for a bad one."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise error(f"session 'snapshots' must be a list, got {type(data).__name__}")
    if len(data) > MAX_SNAPSHOTS:
        raise error(f"session 'snapshots' holds {len(data)} entries; at most {MAX_SNAPSHOTS}")
    out = []
    for i, entry in enumerate(data):
        where = f"snapshots[{i}]"
        if not isinstance(entry, Mapping):
            raise error(f"{where} must be an object, got {type(entry).__name__}")
        unknown = sorted(k if isinstance(k, str) and len(k) <= 40 else short_repr(k, 40)
                         for k in set(entry) - _ENTRY_KEYS)
        if unknown:
            raise error(f"unknown {where} field(s): {', '.join(unknown)} (known: {', '.join(sorted(_ENTRY_KEYS))})")
        try:
            name = check_name(entry.get("name"), f"{where}.name")
        except ValueError as exc:
            raise error(str(exc)) from None
        cfg = entry.get("config")
        if not isinstance(cfg, Mapping):
            raise error(f"{where}.config must be an object, got {type(cfg).__name__}")
        try:
            config = AttentionConfig.from_dict(dict(cfg))
        except (ConfigError, TypeError) as exc:
            raise error(f"invalid config in {where}: {exc}".splitlines()[0]) from None
        sel = entry.get("selection") or {}
        if not isinstance(sel, Mapping):
            raise error(f"{where}.selection must be an object, got {type(sel).__name__}")
        extra = sorted(short_repr(k, 40) for k in set(sel) - {"head", "query", "key"})
        if extra:
            raise error(f"unknown {where}.selection field(s): {', '.join(extra)} (known: head, query, key)")
        selection = {}
        for k, limit in (("head", config.n_heads), ("query", config.seq_len), ("key", config.key_len)):
            v = sel.get(k, 0)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < limit:
                raise error(f"{where}.selection.{k} must be an integer from 0 to {limit - 1}, got {short_repr(v, 30)}")
            selection[k] = v
        ref = entry.get("reference", False)
        if not isinstance(ref, bool):
            raise error(f"{where}.reference must be true or false, got {short_repr(ref)}")
        out.append(Snapshot(name, config, selection, ref))
    if sum(s.reference for s in out) > 1:
        raise error("more than one snapshot is marked as the reference A")
    return tuple(out)
