"""The one selection every panel follows, and the hover link between heatmaps (Qt-free).

Panels never talk to each other: a click sets the Selection, and every panel
redraws from it; hovering a heatmap publishes the cell on the HoverLink, and
every heatmap of the same shape draws a crosshair there.

The signals are psygnal's (`connect`, `disconnect`, `emit`, `blocked()`), so this
module, like explorer.state, imports no Qt. A Qt object that follows one connects
through `explorer.subscribe.follow` (disconnected when Qt deletes the object).
"""

from __future__ import annotations

from psygnal import Signal


class Selection:
    """(head, query, key): the head shown large, the query row, the key column.

    `changed` fires only when a value really changed. Values are clamped to the limits of
    the frame on screen (`set_limits`, which the state calls when a frame of another shape
    arrives, before any panel draws it).
    """

    changed = Signal()

    def __init__(self) -> None:
        self._head = self._query = self._key = 0
        self._limits = (1, 1, 1)

    @property
    def head(self) -> int:
        return self._head

    @property
    def query(self) -> int:
        return self._query

    @property
    def key(self) -> int:
        return self._key

    @property
    def limits(self) -> tuple[int, int, int]:
        """(heads, queries, keys) of the frame on screen: every value stays below its limit."""
        return self._limits

    def as_dict(self) -> dict[str, int]:
        return {"head": self._head, "query": self._query, "key": self._key}

    def set_limits(self, n_heads: int, seq_len: int, key_len: int,
                   select: tuple[int, int, int] | None = None) -> None:
        """Clamp to a new frame's shape, selecting `select` (head, query, key) in it if given;
        emits `changed` once if that moved anything."""
        self._limits = (max(1, int(n_heads)), max(1, int(seq_len)), max(1, int(key_len)))
        self.set(*(select or (None, None, None)))

    def _assign(self, head: int | None, query: int | None, key: int | None) -> bool:
        """Store the clamped values; True when one of them moved (no signal)."""
        h = self._head if head is None else head
        q = self._query if query is None else query
        k = self._key if key is None else key
        nh, nq, nk = self._limits
        new = (min(max(0, int(h)), nh - 1), min(max(0, int(q)), nq - 1), min(max(0, int(k)), nk - 1))
        if new == (self._head, self._query, self._key):
            return False
        self._head, self._query, self._key = new
        return True

    def set(self, head: int | None = None, query: int | None = None, key: int | None = None) -> None:
        """Set any of the three (None keeps it); values are clamped to the current shape."""
        if self._assign(head, query, key):
            self.changed.emit()

    def step(self, head: int = 0, query: int = 0, key: int = 0) -> None:
        """Move by offsets (keyboard navigation)."""
        self.set(self._head + head, self._query + query, self._key + key)


class HoverLink:
    """The cell under the mouse, shared by every heatmap.

    `hovered(shape, row, col)`: shape is the (rows, cols) of the hovered
    matrix; row = col = -1 when the mouse left it.
    """

    hovered = Signal(object, int, int)
    described = Signal(str)  # a readout of the hovered cell ("" when none)

    def publish(self, shape: tuple[int, int], row: int, col: int) -> None:
        self.hovered.emit(tuple(shape), int(row), int(col))

    def clear(self, shape: tuple[int, int]) -> None:
        self.hovered.emit(tuple(shape), -1, -1)
        self.described.emit("")

    def describe(self, text: str) -> None:
        self.described.emit(text)


class ModelSelection(Selection):
    """The model panels' selection: a layer on top of Selection's (head, query, key).

    `layer` is the model's layer index. `changed` fires once per real change,
    also when several values change together.
    """

    def __init__(self) -> None:
        super().__init__()
        self._layer = 0
        self._n_layers = 1

    @property
    def layer(self) -> int:
        return self._layer

    def as_dict(self) -> dict[str, int]:
        return {"layer": self._layer, **super().as_dict()}

    def set_model_limits(self, n_layers: int, n_heads: int, seq_len: int) -> None:
        """Clamp to a model trace's shape (emits `changed` if that moved anything)."""
        self._n_layers = max(1, int(n_layers))
        self.set_limits(n_heads, seq_len, seq_len)

    def set(self, head: int | None = None, query: int | None = None, key: int | None = None,
            layer: int | None = None) -> None:
        old_layer = self._layer
        self._layer = min(max(0, int(self._layer if layer is None else layer)), self._n_layers - 1)
        moved = self._assign(head, query, key)
        if moved or self._layer != old_layer:
            self.changed.emit()
