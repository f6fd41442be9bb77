"""Figures to PNG (:func:`png`): drawn on an Agg canvas, titles placed by hand lifted where
matplotlib would have moved them (:func:`lift_titles`), reduced to a palette."""

from __future__ import annotations

import base64
import io
from typing import Any

__all__ = ["MAX_IMAGE_PX", "lift_titles", "png"]

#: No embedded image is taller or wider than this many pixels (figures are drawn at 100 dpi;
#: :func:`png` refuses a larger one, so a figure that grows with the flows must be split).
MAX_IMAGE_PX = 2000


def png(fig: Any, *, dpi: int = 100, compress_level: int = 6) -> str:
    """The figure as base64 PNG (Agg canvas, no pyplot state), reduced to a palette of at most
    256 colours: one byte per pixel, so an image of W x H pixels takes at most W * H bytes
    plus deflate's few bytes per 64 KB block and the palette (a line plot takes far less).
    Raises ValueError for a figure taller or wider than :data:`MAX_IMAGE_PX`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    w, h = fig.get_size_inches() * dpi
    if max(w, h) > MAX_IMAGE_PX + 0.5:
        raise ValueError(f"figure of {w:.0f} x {h:.0f} px: larger than {MAX_IMAGE_PX} px")
    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    canvas.draw()
    if lift_titles(fig, canvas.get_renderer()):
        canvas.draw()
    rgba = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    img = rgba.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    del rgba
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=compress_level)
    del img
    FigureCanvasAgg(fig)  # a fresh canvas: the drawn one and its pixels go now, not at the next collection
    return base64.b64encode(buf.getvalue()).decode("ascii")


def lift_titles(fig: Any, renderer: Any) -> bool:
    """After a draw: lifts a title placed by hand (``set_title(..., y=1.0)``, which spares
    matplotlib placing it at every draw, a third of a plot's drawing) above the y axis's
    offset text (the "1e6" or "+2.5e4" over the axis) where the two overlap, as matplotlib's
    automatic placement does; True when a title moved (draw again)."""
    from matplotlib.text import Text

    moved = False
    for ax in fig.axes:
        off = ax.yaxis.offsetText
        if not (off.get_visible() and off.get_text()):
            continue
        box = off.get_window_extent(renderer)
        names = {ax.get_title(loc) for loc in ("left", "center", "right")} - {""}
        for title in ax.get_children():
            if not isinstance(title, Text) or title in ax.texts or title.get_text() not in names:
                continue
            if not box.overlaps(title.get_window_extent(renderer)):
                continue
            x, top = title.get_position()[0], box.ymax
            if title.get_window_extent(renderer).ymin < top:  # matplotlib's steps, at most two
                inverse = ax.transAxes.inverted()
                title.set_position((x, inverse.transform((0.0, top))[1]))
                low = title.get_window_extent(renderer).ymin
                if low < top:
                    title.set_position((x, inverse.transform((0.0, 2 * top - low))[1]))
                moved = True
    return moved
