"""A GIF written frame by frame, so a film of any length holds a few frames, not all of them.

    gif = GifStream(fh, duration_ms=1000)
    gif.add(frame)          # (H, W, 3) uint8, every frame of one size; written at once
    gif.close()             # the trailer; the caller flushes and closes `fh`

Pillow's `save(save_all=True)` keeps every frame until the file is written: a 120-frame
sweep at 2500 px held its RGB frames, Pillow's 4-byte copies and their palette images
together, 33 MB a frame (issue 28, item 7). Here each frame is written when it comes, with
Pillow's own GIF blocks (`GifImagePlugin.getheader` / `getdata`, its documented legacy
utilities): the first frame whole under the global colour table, each later one cut to the
rectangle that changed since the one before, with a colour table of its own, left in place
(disposal 1). A frame that changes nothing is written as its top-left pixel, so every frame
given is one frame read back (the encoder's check counts them).

What is held at once besides the frame given: the previous frame (to find what changed)
and `HELD_FRAMES` more: the changed rectangle's copy, Pillow's RGB image of it (4 bytes a
pixel), its palette image (one) and the rows compared.
"""

from __future__ import annotations

import numpy as np

#: frame-sized buffers this writer holds while writing one frame, besides the frame and the
#: previous one: the rectangle's copy (up to 1), Pillow's RGB copy (4/3), its palette image
#: (1/3), the rows compared and what the allocator keeps of them (measured: 8–9 frames in all)
HELD_FRAMES = 4
#: rows compared at once when looking for what changed (a full-frame comparison would be one
#: more frame of booleans)
_ROWS = 128


def changed_box(frame: np.ndarray, previous: np.ndarray) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) of the pixels where `frame` differs from `previous`, None if none."""
    h = frame.shape[0]
    rows = np.zeros(h, bool)
    cols = np.zeros(frame.shape[1], bool)
    for y in range(0, h, _ROWS):
        diff = np.any(frame[y:y + _ROWS] != previous[y:y + _ROWS], axis=2)
        rows[y:y + _ROWS] = diff.any(axis=1)
        cols |= diff.any(axis=0)
    ys, xs = np.flatnonzero(rows), np.flatnonzero(cols)
    if not ys.size:
        return None
    return int(xs[0]), int(ys[0]), int(xs[-1]) + 1, int(ys[-1]) + 1


class GifStream:
    """An animated GIF (looping forever, `duration_ms` a frame) written to the binary file
    `fh` one frame at a time. OSError passes (a full disk): the caller names the file."""

    def __init__(self, fh, duration_ms: int) -> None:
        self.fh = fh
        self.duration = int(duration_ms)
        self.previous: np.ndarray | None = None
        self.count = 0

    def add(self, frame: np.ndarray) -> None:
        from PIL import GifImagePlugin, Image

        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        if self.previous is not None and frame.shape != self.previous.shape:
            raise ValueError(f"a GIF's frames have one size: {frame.shape[:2]} after {self.previous.shape[:2]}")
        if self.previous is None:
            box = (0, 0, frame.shape[1], frame.shape[0])
        else:
            box = changed_box(frame, self.previous) or (0, 0, 1, 1)
        x0, y0, x1, y1 = box
        part = frame if box == (0, 0, frame.shape[1], frame.shape[0]) else frame[y0:y1, x0:x1]
        im = Image.fromarray(np.ascontiguousarray(part)).convert("P", palette=Image.Palette.ADAPTIVE)
        self.previous = None  # not two previous frames at once
        if self.count == 0:
            header, _ = GifImagePlugin.getheader(im, info={"loop": 0, "duration": self.duration})
            blocks = header + GifImagePlugin.getdata(im, duration=self.duration, disposal=1)
        else:
            blocks = GifImagePlugin.getdata(im, offset=(x0, y0), duration=self.duration, disposal=1,
                                            include_color_table=True)
        del im
        for b in blocks:
            self.fh.write(b)
        self.previous = frame
        self.count += 1

    def close(self) -> None:
        """The trailer (nothing when no frame was added)."""
        self.previous = None
        if self.count:
            self.fh.write(b";")
