"""Comparing the current state B with the pinned reference A (issue 18).

What the panels share when they draw A beside B: which grids can be subtracted, the
colour A is drawn in, the status-bar line that says which view is shown, and the lessons'
automatic pin of their "before" state.

A difference B − A is offered only where it means something: both frames exact (a long
frame, ``Frame.lod`` set, holds block maxima, not cells) and the arrays of the same shape.
Otherwise the panels show A and B side by side and say why.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

from .feature import Feature
from .host import host_of
from .subscribe import follow

#: the heads panel's views, in its Show menu's order
VIEWS = ("B", "A", "B-A", "A|B")


def view_name(view: str) -> str:
    """A view as the status bar names it."""
    return {
        "B": QCoreApplication.translate("Compare", "B (current)"),
        "A": QCoreApplication.translate("Compare", "A (reference)"),
        "B-A": QCoreApplication.translate("Compare", "B − A"),
        "A|B": QCoreApplication.translate("Compare", "A and B side by side"),
    }[view]


def exact(frame) -> bool:
    """Whether `frame` holds every cell (not a long frame's level of detail)."""
    return frame is not None and frame.lod is None


def comparable(a, b, *fields: str) -> bool:
    """Whether B − A exists for every named array field: both frames exact, equal shapes."""
    if not (exact(a) and exact(b)):
        return False
    return all(getattr(a, f).shape == getattr(b, f).shape for f in fields)


def why_not(a, b, field: str = "weights") -> str:
    """One line: why B − A of `field` is not drawn (a long frame, or the shapes)."""
    if not (exact(a) and exact(b)):
        return QCoreApplication.translate("Compare", "no difference at this length: side by side only")
    sa, sb = ("×".join(map(str, getattr(fr, field).shape[1:])) for fr in (a, b))
    return QCoreApplication.translate("Compare", "shapes differ (A {a}, B {b}): side by side only").format(
        a=sa, b=sb)


#: A's colour beside B's (bars are blue, other heads grey, warnings orange): a muted violet
A_COLORS = {True: "#b98fd0", False: "#8a4fa8"}  # dark theme, light theme


def a_color(theme) -> QColor:
    """The colour A is drawn in beside B (lines, outlines, paired bars)."""
    return QColor(A_COLORS[bool(theme.dark)])


def a_legend(theme, what: str = "") -> str:
    """HTML legend entry for A's overlay: a line in A's colour and "A (reference)"."""
    name = QCoreApplication.translate("Compare", "A (reference)") if not what else what
    return f"<span style='color:{A_COLORS[bool(theme.dark)]}'>━</span> {name}"


#: what of a field's change the config summary shows (AttentionConfig.summary's parts)
_SUMMARY_PREFIX = {"d_model": "d_model=", "n_heads": "heads=", "n_kv_heads": "kv=", "seq_len": "S=",
                   "kv_len": "Skv=", "causal": "mask=", "window": "mask=", "pad": "mask=", "scale": "scale=",
                   "positional": "pos=", "prescale_q": "prescale Q"}


def _field_text(name: str, value) -> str:
    """A's value of a field the summary does not show (or not when A has its default)."""
    if name == "positional":
        return f"pos={value}"
    if name == "prescale_q":
        return "prescale Q" if value else QCoreApplication.translate("Compare", "no prescale Q")
    if name == "tokens":
        text = " ".join(value) if value else QCoreApplication.translate("Compare", "(none)")
        return QCoreApplication.translate("Compare", "tokens: {text}").format(
            text=text if len(text) <= 30 else text[:29] + "…")
    return f"{name}={value}"


def config_change(a, b) -> str:
    """What A's config has that B's has not: the parts of A's summary that differ ("scale=1/√d_k"),
    then every other field that differs with A's value ("pos=none", "seed=3"), or "the same
    config" when no field differs."""
    da, db = a.to_dict(), b.to_dict()
    changed = [k for k in da if da[k] != db.get(k)]
    if not changed:
        return QCoreApplication.translate("Compare", "the same config")
    pa, pb = a.summary().split("  "), set(b.summary().split("  "))
    parts = [p for p in pa if p not in pb]
    shown = "  ".join(parts)
    for name in changed:  # a field whose change A's summary does not show (e.g. A has no pos=)
        said = str(da[name]) if name == "dtype" else _SUMMARY_PREFIX.get(name)
        if said is None or said not in shown:
            parts.append(_field_text(name, da[name]))
    return " · ".join(parts)


def status_text(window) -> str:
    """"comparing with A: <what A has that B has not> · showing <view>", or "" without a
    reference (the whole of A's config is the label's tooltip). `window`: the window or its host."""
    window = host_of(window)
    ref = window.state.reference
    if ref is None:
        return ""
    view = "B"
    try:
        heads = window.panel("heads")
        view = heads.comparison()
    except KeyError:
        pass
    return QCoreApplication.translate("Compare", "comparing with A: {config} · showing {view}").format(
        config=config_change(ref.config, window.state.config), view=view_name(view))


class CompareStatus(Feature):
    """The status bar's permanent line for the comparison (hidden without a reference)."""

    name = "compare"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        self.label = QLabel()
        self.label.setObjectName("status_compare")
        self.label.hide()
        host.status_bar().insertPermanentWidget(0, self.label)
        follow(state.reference_changed, self.update)
        follow(state.language_changed, self.update)  # (a live switch: the line in the new language)
        host.frame_rendered.connect(lambda _c: self.update())
        try:
            host.panel("heads").view.currentIndexChanged.connect(lambda _i: self.update())
        except KeyError:
            pass
        self.update()

    def update(self, *_args) -> None:
        text = status_text(self.host)
        if text != self.label.text():
            self.label.setText(text)
            ref = self.state.reference
            self.label.setToolTip("" if ref is None else QCoreApplication.translate("Compare", "A: {config}").format(
                config=ref.config.summary().replace("  ", " · ")))
        self.label.setVisible(bool(text))


def install_compare(window) -> CompareStatus:
    """The status-bar line (made once; `MainWindow.features["compare"]`)."""
    return window.features.get("compare") or CompareStatus(window.state, window.host)


# ---- lessons pin their "before" ---------------------------------------------------------------


def pin_before(window, config, name: str, on_pinned=None) -> None:
    """Pin the frame of `config` (a lesson's preset) as A once it is shown, kept as the
    snapshot `name` (reused when the same name and config are pinned again).

    The preset's frame is usually the next one rendered; when another config is rendered
    first (the learner was quicker: "Do it for me" right away), the preset is computed here
    (lesson presets are small). ``on_pinned(frame)`` is called with the frame pinned.
    `window`: the window or its host."""
    window = host_of(window)
    app = window.state
    state = {"done": False}

    def pin(frame) -> None:
        snaps = app.snapshots
        same = [i for i, e in enumerate(snaps.entries) if e.snapshot.name == name and e.snapshot.config == config]
        if same:
            e = snaps.entries[same[0]]
            e.frame, e.image = frame, None
            snaps.use(same[0])
        else:
            snaps.use(snaps.add(frame, name))
        if on_pinned is not None:
            on_pinned(frame)

    def on_rendered(cfg) -> None:
        if state["done"]:
            return
        state["done"] = True
        try:
            window.frame_rendered.disconnect(on_rendered)
        except (RuntimeError, TypeError):
            pass
        if cfg == config and app.frame is not None and app.frame.config == config:
            pin(app.frame)
        else:
            from .frame import build_frame

            try:
                pin(build_frame(config))
            except Exception as exc:  # a preset this build cannot compute: no A, said once
                window.show_status(str(exc).splitlines()[0], 6000)

    if app.frame is not None and app.frame.config == config and app.config == config:
        pin(app.frame)
        return
    window.frame_rendered.connect(on_rendered)
