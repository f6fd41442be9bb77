"""Interactive plots of the run report (Bokeh): the long time series a reader wants to zoom
into. Bokeh's JavaScript is embedded once per page (:func:`bokeh_js`, about 1.3 MB), so the
page works offline; each plot holds its data as binary arrays, a bounded number of points
(at most :data:`BINS` time bins per series, whatever the duration; above
``plots.MAX_LINES`` flows three series per plot, percentiles across flows)."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.colors import to_hex

from tcplab.report.plots import COLORS, MAX_LINES, run_end_ns, series_at
from tcplab.schema import RunLike

__all__ = ["BINS", "bokeh_js", "over_time"]

#: Time bins of the interactive series (at most; each bin at least :data:`MIN_BIN_NS`).
BINS = 500
MIN_BIN_NS = 10_000_000


def bokeh_js() -> str:
    """The ``<script>`` element with Bokeh's JavaScript (its core only), inline."""
    from bokeh.resources import Resources

    return Resources(mode="inline", components=["bokeh"]).render_js()


def _percentiles(per_flow: np.ndarray) -> np.ndarray:
    """10th, 50th and 90th percentile across flows (rows) per bin; NaN where no flow has a value."""
    q = np.full((3, per_flow.shape[1]), np.nan)
    ok = np.isfinite(per_flow).any(axis=0)
    if ok.any():
        with np.errstate(all="ignore"):
            q[:, ok] = np.nanpercentile(per_flow[:, ok], [10, 50, 90], axis=0)
    return q


def _panel(title: str, ylabel: str, x_range: Any | None, height: int) -> Any:
    from bokeh.plotting import figure

    kw: dict[str, Any] = {"x_range": x_range} if x_range is not None else {}
    p = figure(
        title=title,
        height=height,
        sizing_mode="stretch_width",
        tools="xpan,xwheel_zoom,box_zoom,reset,save,hover",
        active_scroll="xwheel_zoom",
        active_drag="xpan",
        x_axis_label="time (s)",
        y_axis_label=ylabel,
        output_backend="canvas",
        **kw,
    )
    p.toolbar.logo = None
    return p


def _lines(p: Any, t: np.ndarray, per_flow: np.ndarray, names: list[str]) -> None:
    """One step line per flow up to MAX_LINES flows, else the median and 10-90th band."""
    from bokeh.models import ColumnDataSource

    if per_flow.shape[0] <= MAX_LINES:
        for f, y in enumerate(per_flow):
            src = ColumnDataSource({"t": t, "y": y})
            p.step("t", "y", source=src, mode="after", color=to_hex(COLORS[f % len(COLORS)]), legend_label=names[f])
    else:
        q = _percentiles(per_flow)
        src = ColumnDataSource({"t": t, "lo": q[0], "mid": q[1], "hi": q[2]})
        p.varea_step("t", "lo", "hi", source=src, step_mode="after", fill_alpha=0.25, legend_label="10th-90th percentile")
        p.step("t", "mid", source=src, mode="after", legend_label=f"median across {per_flow.shape[0]} flows")
    p.y_range.start = 0


def over_time(result: RunLike) -> tuple[str, str] | None:
    """(script, div) of total throughput (in bins), per-flow throughput (over a trailing
    window of 10 median RTTs: a flow's share of a bin is mostly 0 or a burst) and smoothed RTT
    over time, at most :data:`BINS` points per series, their time axes linked (zoom one, the
    others follow); None without series."""
    if result.series.height == 0 or not result.canonical["flows"]:
        return None
    from bokeh.embed import components
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, Span

    end = run_end_ns(result)
    width = max(end // BINS, MIN_BIN_NS)
    edges = np.arange(0, end + width, width, dtype=np.int64)
    t = edges[:-1] / 1e9
    delivered = series_at(result, "delivered", edges)
    rtt = series_at(result, "srtt_ns", edges[:-1], before=np.nan)
    rtt[rtt == 0] = np.nan
    rtt /= 1e6
    srtt = float(np.nanmedian(rtt)) if np.isfinite(rtt).any() else 100.0
    window = max(width, int(np.ceil(10 * srtt * 1e6 / width)) * width)
    lag = window // width
    # Rate over the trailing window ending at each bin's end (shorter at the start).
    ends = delivered[:, 1:]
    starts = delivered[:, np.maximum(np.arange(1, edges.size) - lag, 0)]
    spans = (np.arange(1, edges.size) - np.maximum(np.arange(1, edges.size) - lag, 0)) * width / 1e9
    per_flow = (ends - starts) * 8 / spans / 1e6
    total_bins = np.diff(delivered, axis=1).sum(axis=0) * 8 / (width / 1e9) / 1e6
    names = [str(n) for n in result.flows["name"].to_list()]
    total = _panel(f"Total throughput (bins of {width / 1e6:g} ms)", "Mb/s", None, 200)
    total.step("t", "y", source=ColumnDataSource({"t": t, "y": total_bins}), mode="after", color="gray", legend_label="all TCP flows")
    topo = result.canonical["topology"]
    if topo.get("kind") == "dumbbell":
        rate = topo["bottleneck"]["forward"]["rate"] / 1e6
        total.add_layout(Span(location=rate, dimension="width", line_dash="dashed", line_color="black"))
    title = f"Throughput per flow (over the last {window / 1e9:g} s, 10 median RTTs)"
    flows = _panel(title, "Mb/s", total.x_range, 240)
    _lines(flows, t + width / 1e9, per_flow, names)
    delay = _panel("Smoothed RTT per flow", "ms", total.x_range, 240)
    _lines(delay, t, rtt, names)
    for p in (total, flows, delay):
        p.add_layout(p.legend[0], "right")
        p.legend.click_policy = "hide"
        p.legend.label_text_font_size = "8pt"
    total.y_range.start = 0
    return components(column(total, flows, delay, sizing_mode="stretch_width"))
