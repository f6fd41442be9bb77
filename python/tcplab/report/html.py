"""The reports' shared HTML toolkit: the page skeleton, escaping, number formatting, tables
and embedded figures. Used by the run report (:mod:`tcplab.report.page`), the campaign
report (:mod:`tcplab.report.campaign`) and the reproduction report
(:mod:`tcplab.report.reproduce`)."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "CSS",
    "MAX_IMAGE_PX",
    "details",
    "esc",
    "figure_html",
    "fmt",
    "html_table",
    "ms",
    "page",
    "png",
    "png_data_uri",
]

#: No embedded image is taller or wider than this many pixels (figures are drawn at 100 dpi;
#: :func:`png` refuses a larger one, so a figure that grows with the flows must be split).
MAX_IMAGE_PX = 2000

#: The stylesheet of the run and campaign reports.
CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.scroll { max-width: 100%; max-height: 36em; overflow: auto; margin: 0.6em 0; }
.scroll > table { margin: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
thead th { position: sticky; top: 0; }
details { margin: 0.5em 0; } summary { cursor: pointer; font-weight: 600; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; }
figure.interactive { max-width: 1000px; }
figcaption { font-size: 0.9em; color: #444; margin-top: 0.3em; }
.ok { color: #176317; font-weight: bold; } .bad { color: #a00; font-weight: bold; }
.muted { color: #777; }
"""


def page(title: str, body: list[str], css: str = CSS, head: str = "") -> str:
    """A self-contained HTML page: ``title`` (escaped here), the stylesheet, ``head`` (HTML for
    the head: scripts), the ``body`` parts (HTML) one per line."""
    head = f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>\n<title>{esc(title)}</title><style>{css}</style>{head}</head><body>"
    return "\n".join([head, *body, "</body></html>"]) + "\n"


def esc(x: Any) -> str:
    """``x`` as HTML text."""
    return html.escape(str(x))


def html_table(headers: list[str], rows: list[list[Any]], left: int = 1) -> str:
    """A table in a scroll container (as wide as the page at most, about 36 lines tall: a
    table of many flows or columns scrolls inside it, its header row stays in view); the first
    ``left`` columns are left-aligned, the others right-aligned."""
    head = "".join(f'<th class="{"l" if i < left else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"l" if i < left else ""}">{esc(v)}</td>' for i, v in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def details(summary: str, body: str, open_: bool = False) -> str:
    """A folded block: ``summary`` (HTML) always shown, ``body`` (HTML) when unfolded."""
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>\n{body}\n</details>"


def fmt(v: Any, digits: int = 3) -> str:
    """A number with ``digits`` significant digits; None as a dash."""
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def ms(ns: Any) -> str:
    """Nanoseconds as milliseconds with one decimal; None as a dash."""
    return "–" if ns is None else f"{ns / 1e6:.1f}"


def png(fig: Figure, *, dpi: int = 100, compress_level: int = 6) -> str:
    """The figure as base64 PNG (Agg canvas, no pyplot state), reduced to a palette of at most
    256 colours: one byte per pixel, so an image of W x H pixels takes at most W * H bytes
    plus deflate's few bytes per 64 KB block and the palette (a line plot takes far less).
    Raises ValueError for a figure taller or wider than :data:`MAX_IMAGE_PX`."""
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    w, h = fig.get_size_inches() * dpi
    if max(w, h) > MAX_IMAGE_PX + 0.5:
        raise ValueError(f"figure of {w:.0f} x {h:.0f} px: larger than {MAX_IMAGE_PX} px")
    fig.set_dpi(dpi)
    canvas.draw()
    if lift_titles(fig, canvas.get_renderer()):
        canvas.draw()
    rgba = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    img = rgba.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=compress_level)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def lift_titles(fig: Figure, renderer: Any) -> bool:
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


def png_data_uri(fig: Figure, *, dpi: int = 100, compress_level: int = 6) -> str:
    """The figure as a ``data:image/png;base64,...`` URI."""
    return "data:image/png;base64," + png(fig, dpi=dpi, compress_level=compress_level)


def figure_html(fig: Figure, caption: str, alt: str) -> str:
    """An embedded figure; ``caption`` is HTML, ``alt`` text."""
    return f'<figure><img alt="{esc(alt)}" src="{png_data_uri(fig)}"><figcaption>{caption}</figcaption></figure>'
