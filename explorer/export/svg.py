"""SVG figures: pyqtgraph's SVGExporter for the plots (with a fix), Qt's generator for the rest.

pyqtgraph 0.14.0's exporter breaks under recent Qt: `correctCoordinates`
rewrites every `<path d="...">` by splitting it into "x,y" pairs, and Qt (6.x)
now closes subpaths with a bare `Z`, so the split raises
``ValueError: not enough values to unpack`` (pyqtgraph issue #3495).
`fixed_correct_coordinates` wraps the original: it gives every `Z` a dummy
coordinate pair the original can parse and strips it again afterwards, so the
rest of pyqtgraph's careful work (transforms baked into coordinates, strokes
that scale with the figure, clip paths per view box) stays. It is installed
only while we export (`patched_pyqtgraph_svg`) and only when the installed
pyqtgraph still has the bug (`pyqtgraph_svg_needs_fix`).

Qt's own QSvgGenerator draws the ordinary widgets of a panel (labels,
tables), which pyqtgraph cannot see. Its SVG 1.1 mode writes clip paths in
the wrong coordinates for widgets (text disappears), so the Tiny 1.2 mode
(no clipping) is used, and only for those widgets.
"""

from __future__ import annotations

import base64
import contextlib
import re
import sys
import xml.dom.minidom as minidom
from collections.abc import Iterator
from functools import cache

import pyqtgraph as pg
import pyqtgraph.exporters  # registers the exporter modules
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsView, QWidget

from .render import (
    Part,
    caption_colours,
    caption_font,
    caption_lines,
    figure_geometry,
    figure_parts,
    paint_parts,
    prepared,
)

_svgmod = sys.modules["pyqtgraph.exporters.SVGExporter"]
_original_correct = _svgmod.correctCoordinates

_BARE_CLOSE = re.compile(r"(?<![^\s])([Zz])(?=\s|$)")
_CLOSE_WITH_DUMMY = re.compile(r"([Zz])[-+0-9.eE]+,[-+0-9.eE]+")


def _rects_to_paths(node) -> None:
    """Qt writes QGraphicsRectItem as <rect> without `vector-effect`, even for a cosmetic
    pen, and pyqtgraph leaves <rect> alone: inside a view box (a scaling transform) the
    outline of a selection marker grows as thick as the cell. As paths they get the
    transform baked in and keep their screen width, like every other pyqtgraph line.
    Groups whose rects use masks or paint servers (hatching) keep their transform."""
    for grp in node.getElementsByTagName("g"):
        rects = [ch for ch in grp.childNodes if ch.nodeType == ch.ELEMENT_NODE and ch.tagName == "rect"]
        if not rects or not grp.getAttribute("transform"):
            continue
        if any(r.getAttribute("mask") or "url(" in r.getAttribute("fill") for r in rects):
            continue
        for r in rects:
            x, y = float(r.getAttribute("x") or 0), float(r.getAttribute("y") or 0)
            w, h = float(r.getAttribute("width") or 0), float(r.getAttribute("height") or 0)
            path = r.ownerDocument.createElement("path")
            for name, value in r.attributes.items():
                if name not in ("x", "y", "width", "height", "rx", "ry"):
                    path.setAttribute(name, value)
            path.setAttribute("vector-effect", "non-scaling-stroke")
            path.setAttribute("d", f"M{x:g},{y:g} L{x + w:g},{y:g} L{x + w:g},{y + h:g} L{x:g},{y + h:g} Z")
            grp.replaceChild(path, r)


def fixed_correct_coordinates(node, defs, item, options) -> None:
    """pyqtgraph's correctCoordinates, made to accept paths closed with a bare `Z`
    (and to treat rectangles like paths)."""
    _rects_to_paths(node)
    touched = []
    for path in node.getElementsByTagName("path"):
        d = path.getAttribute("d")
        if _BARE_CLOSE.search(d):
            path.setAttribute("d", _BARE_CLOSE.sub(r"\g<1>0,0", d))
            touched.append(path)
    _original_correct(node, defs, item, options)
    for path in touched:
        path.setAttribute("d", _CLOSE_WITH_DUMMY.sub(r"\1", path.getAttribute("d")))


@cache
def pyqtgraph_svg_needs_fix() -> bool:
    """True when the installed pyqtgraph fails on a closed path (0.14.0 does)."""
    doc = minidom.parseString('<g><g transform="matrix(1,0,0,1,0,0)">'
                              '<path d="M0,0 L1,0 L1,1 Z"/></g></g>')
    try:
        _original_correct(doc.documentElement, [], None, {})
    except ValueError:
        return True
    except Exception:  # a future signature we do not know: leave it alone
        return False
    return False


@contextlib.contextmanager
def patched_pyqtgraph_svg() -> Iterator[None]:
    """Install the fix in pyqtgraph's SVG module for the duration of an export."""
    if not pyqtgraph_svg_needs_fix():
        yield
        return
    saved = _svgmod.correctCoordinates
    _svgmod.correctCoordinates = fixed_correct_coordinates
    try:
        yield
    finally:
        _svgmod.correctCoordinates = saved


def scene_svg(view: QGraphicsView) -> str:
    """pyqtgraph's SVG of one view's scene (the whole document), with the fix applied.

    Strokes scale with the figure ('scaling stroke'), like the PNG and PDF exports.
    """
    with patched_pyqtgraph_svg():
        exporter = pg.exporters.SVGExporter(view.scene())
        exporter.parameters()["scaling stroke"] = True
        return exporter.export(toBytes=True).decode("utf-8")


# ---- composing a panel ------------------------------------------------------------------

_ID_ATTRS = ("id",)
_REF = re.compile(r"url\(#([^)]+)\)")


def _prefix_ids(node, prefix: str) -> None:
    """Make ids unique across the fragments of one document."""
    if node.nodeType != node.ELEMENT_NODE:
        return
    for name in list(node.attributes.keys()):
        value = node.getAttribute(name)
        if name in _ID_ATTRS:
            node.setAttribute(name, prefix + value)
        elif "url(#" in value:
            node.setAttribute(name, _REF.sub(lambda m: f"url(#{prefix}{m.group(1)})", value))
        elif name in ("xlink:href", "href") and value.startswith("#"):
            node.setAttribute(name, "#" + prefix + value[1:])
    for ch in node.childNodes:
        _prefix_ids(ch, prefix)


def _sharpen_images(doc) -> None:
    """Upscale small embedded images (heatmaps) with nearest neighbour, so every SVG
    viewer shows crisp cells (many ignore `image-rendering: pixelated`)."""
    for img in doc.getElementsByTagName("image"):
        attr = "xlink:href" if img.hasAttribute("xlink:href") else "href"
        href = img.getAttribute(attr)
        prefix = "data:image/png;base64,"
        if not href.startswith(prefix):
            continue
        q = QImage.fromData(base64.b64decode(href[len(prefix):]), "PNG")
        if q.isNull() or max(q.width(), q.height()) >= 1024:
            continue
        k = min(32, max(1, 1024 // max(q.width(), q.height())))
        if k == 1:
            continue
        big = q.scaled(q.width() * k, q.height() * k, Qt.AspectRatioMode.IgnoreAspectRatio,
                       Qt.TransformationMode.FastTransformation)
        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        big.save(buf, "PNG")
        img.setAttribute(attr, prefix + base64.b64encode(bytes(data.data())).decode("ascii"))
        img.setAttribute("image-rendering", "optimizeSpeed")


def _inert_clip_paths(doc) -> None:
    """Renderers without clip paths (Qt's own QSvgRenderer, SVG Tiny 1.2) draw a clip path's
    shapes as ordinary ones, with the stroke they inherit: pyqtgraph's exporter leaves them
    under `stroke="black"`, a black frame around every title and view. A clip path's shapes
    clip by their geometry alone (SVG 1.1, 14.3.5: fill and stroke are ignored there), so
    they are given no fill and no stroke: the same clipping, nothing drawn where clipping is
    not understood. Paths with no data (`d=""`, which Qt reports as invalid) go."""
    clipping = set()
    for cp in doc.getElementsByTagName("clipPath"):
        for el in cp.getElementsByTagName("*"):
            el.setAttribute("fill", "none")
            el.setAttribute("stroke", "none")
            clipping.add(id(el))
    for path in list(doc.getElementsByTagName("path")):
        if id(path) not in clipping and not path.getAttribute("d").strip():
            path.parentNode.removeChild(path)


def _widgets_svg(root: QWidget, parts: list[Part], size: QSize, title: str) -> str:
    """The non-plot parts drawn by QSvgGenerator (SVG Tiny 1.2: no clip paths)."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator(QSvgGenerator.SvgVersion.SvgTiny12)
    gen.setOutputDevice(buf)
    gen.setSize(size)
    gen.setViewBox(QRect(QPoint(0, 0), size))
    gen.setTitle(title or "Attention Explorer figure")
    gen.setDescription("Attention Explorer")
    p = QPainter()
    if not p.begin(gen):
        raise RuntimeError("Qt could not start an SVG document")
    try:
        paint_parts(p, [pt for pt in parts if not pt.is_view], 1.0)
    finally:
        p.end()
    buf.close()
    return bytes(data.data()).decode("utf-8")


def render_svg(root: QWidget, theme, caption: str | None = None,
               include_controls: bool = False, title: str = "", description: str = "",
               fresh: bool = True) -> bytes:
    """The figure as one SVG document, width/height in logical px of the widget;
    `description` (the config summary) goes into <desc>; `theme` gives the background."""
    with prepared(root, lambda: figure_parts(root, include_controls), 1.0, fresh) as parts:
        rect, total = figure_geometry(parts, theme, caption)
        cap_h = total.height() - rect.height()
        _, bg = caption_colours(theme)
        doc = minidom.parseString(
            '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'version="1.1" width="{total.width()}" height="{total.height()}" '
            f'viewBox="{rect.x()} {rect.y()} {total.width()} {total.height()}"/>')
        svg = doc.documentElement
        t = doc.createElement("title")
        t.appendChild(doc.createTextNode(title or "Attention Explorer figure"))
        svg.appendChild(t)
        if description:
            desc = doc.createElement("desc")
            desc.appendChild(doc.createTextNode(description))
            svg.appendChild(desc)
        style = doc.createElement("style")
        style.appendChild(doc.createTextNode("image { image-rendering: pixelated; }"))
        svg.appendChild(style)
        defs = doc.createElement("defs")
        svg.appendChild(defs)
        back = doc.createElement("rect")
        for k, v in (("x", str(rect.x())), ("y", str(rect.y())), ("width", str(total.width())),
                     ("height", str(total.height())), ("fill", bg.name())):
            back.setAttribute(k, v)
        svg.appendChild(back)

        # 1. ordinary widgets
        wdoc = minidom.parseString(_widgets_svg(root, parts, root.size(), title))
        wroot = wdoc.documentElement
        g = doc.createElement("g")
        g.setAttribute("id", "widgets")
        for ch in list(wroot.childNodes):
            if ch.nodeType == ch.ELEMENT_NODE and ch.tagName in ("title", "desc"):
                continue
            if ch.nodeType == ch.ELEMENT_NODE and ch.tagName == "defs":
                for d in list(ch.childNodes):
                    if d.nodeType == d.ELEMENT_NODE:
                        defs.appendChild(doc.importNode(d, True))
                continue
            if ch.nodeType == ch.ELEMENT_NODE:
                g.appendChild(doc.importNode(ch, True))
        svg.appendChild(g)

        # 2. each pyqtgraph view, from pyqtgraph's exporter, placed and clipped
        for n, part in enumerate(pt for pt in parts if pt.is_view):
            view = part.widget
            vdoc = minidom.parseString(scene_svg(view))
            vroot = vdoc.documentElement
            prefix = f"v{n}_"
            _prefix_ids(vroot, prefix)
            clip_id = f"{prefix}view"
            cp = doc.createElement("clipPath")
            cp.setAttribute("id", clip_id)
            cr = doc.createElement("rect")
            r = part.clip
            for k, v in (("x", r.x()), ("y", r.y()), ("width", r.width()), ("height", r.height())):
                cr.setAttribute(k, str(v))
            cp.appendChild(cr)
            defs.appendChild(cp)
            outer = doc.createElement("g")
            outer.setAttribute("clip-path", f"url(#{clip_id})")
            outer.setAttribute("id", f"{prefix}{view.objectName() or type(view).__name__}")
            vb = doc.createElement("rect")
            for k, v in (("x", r.x()), ("y", r.y()), ("width", r.width()), ("height", r.height()),
                         ("fill", view.backgroundBrush().color().name())):
                vb.setAttribute(k, str(v))
            if view.backgroundBrush().style() != Qt.BrushStyle.NoBrush:
                outer.appendChild(vb)
            # scene → viewport → root coordinates
            origin = view.viewport().mapTo(root, QPoint(0, 0))
            tr = view.viewportTransform()
            inner = doc.createElement("g")
            inner.setAttribute(
                "transform",
                f"translate({origin.x()},{origin.y()}) "
                f"matrix({tr.m11():g},{tr.m12():g},{tr.m21():g},{tr.m22():g},{tr.dx():g},{tr.dy():g})")
            for ch in list(vroot.childNodes):
                if ch.nodeType != ch.ELEMENT_NODE or ch.tagName in ("title", "desc", "style"):
                    continue
                if ch.tagName == "rect" and ch.getAttribute("width") == "100%":
                    continue  # pyqtgraph's full-page background: ours is `vb`
                if ch.tagName == "defs":
                    for d in list(ch.childNodes):
                        if d.nodeType == d.ELEMENT_NODE:
                            defs.appendChild(doc.importNode(d, True))
                    continue
                inner.appendChild(doc.importNode(ch, True))
            outer.appendChild(inner)
            svg.appendChild(outer)

        # 3. caption, a <text> per line
        if caption:
            from PySide6.QtGui import QFontMetricsF

            fg, _ = caption_colours(theme)
            font = caption_font(theme)
            lines = caption_lines(caption, theme, rect.width())
            step = QFontMetricsF(font).height()
            first = rect.bottom() + 1 + cap_h / 2 - step * (len(lines) - 1) / 2
            for i, line in enumerate(lines):
                text = doc.createElement("text")
                for k, v in (("x", str(rect.x() + 10)), ("y", f"{first + i * step:.1f}"),
                             ("fill", fg.name()),
                             ("font-family", f"{font.family()}, sans-serif"),
                             ("font-size", f"{font.pointSizeF() * 96 / 72:.1f}"),
                             ("dominant-baseline", "central"), ("xml:space", "preserve")):
                    text.setAttribute(k, v)
                text.appendChild(doc.createTextNode(line))
                svg.appendChild(text)

        _sharpen_images(doc)
        _inert_clip_paths(doc)
        return doc.toxml(encoding="UTF-8")
