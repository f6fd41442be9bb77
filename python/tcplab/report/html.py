"""The reports' shared HTML toolkit: the page skeleton, escaping, number formatting, tables
and embedded figures. Used by the run report (:mod:`tcplab.report.page`), the campaign
report (:mod:`tcplab.report.campaign`) and the reproduction report
(:mod:`tcplab.report.reproduce`)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from tcplab.report.drawing import current as current_drawing
from tcplab.report.raster import MAX_IMAGE_PX, lift_titles, png

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CSS",
    "MAX_IMAGE_PX",
    "details",
    "esc",
    "figure_html",
    "fmt",
    "html_table",
    "lift_titles",
    "ms",
    "page",
    "png",
    "png_data_uri",
]

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


def png_data_uri(fig: Figure, *, dpi: int = 100, compress_level: int = 6) -> str:
    """The figure as a ``data:image/png;base64,...`` URI (:func:`png`); inside a drawing
    session (:func:`tcplab.report.drawing.parallel_drawing`) a placeholder for it, the figure
    drawn by the session."""
    drawing = current_drawing()
    draw = png if drawing is None else drawing.add
    return "data:image/png;base64," + draw(fig, dpi=dpi, compress_level=compress_level)


def figure_html(fig: Figure, caption: str, alt: str) -> str:
    """An embedded figure; ``caption`` is HTML, ``alt`` text."""
    return f'<figure><img alt="{esc(alt)}" src="{png_data_uri(fig)}"><figcaption>{caption}</figcaption></figure>'
