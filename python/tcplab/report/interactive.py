"""Interactive plots of the run report (Bokeh): the long time series a reader wants to zoom
into. Bokeh's JavaScript is embedded once per page (:func:`bokeh_js`, about 1.3 MB), so the
page works offline; each plot holds its data as binary arrays, a bounded number of points
(at most :data:`BINS` time bins per series, whatever the duration; above
``plots.MAX_LINES`` flows a few series per plot, percentiles across flows)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.colors import to_hex

from tcplab.report.plots import COLORS, MAX_LINES, robust_top, run_end_ns, series_at
from tcplab.schema import RunLike

__all__ = ["BINS", "FEW", "bokeh_js", "delay_at", "over_time"]

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


#: Flows drawn one by one besides the median and 95th percentile across flows when there
#: are more than ``MAX_LINES`` (those with the highest delay).
FEW = 3


def _spread(p: Any, t: np.ndarray, per_flow: np.ndarray, names: list[str]) -> None:
    """One step line per flow up to MAX_LINES flows; else the median and the 95th percentile
    across flows per bin, and the :data:`FEW` flows of highest median as thin lines. The y
    axis ends at :func:`~tcplab.report.plots.robust_top` of what is drawn (zoom out for the
    rest)."""
    from bokeh.models import ColumnDataSource

    if per_flow.shape[0] <= MAX_LINES:
        for f, y in enumerate(per_flow):
            src = ColumnDataSource({"t": t, "y": y})
            p.step("t", "y", source=src, mode="after", color=to_hex(COLORS[f % len(COLORS)]), legend_label=names[f])
        drawn = per_flow
    else:
        q = np.full((2, per_flow.shape[1]), np.nan)
        ok = np.isfinite(per_flow).any(axis=0)
        if ok.any():
            with np.errstate(all="ignore"):
                q[:, ok] = np.nanpercentile(per_flow[:, ok], [50, 95], axis=0)
        n = per_flow.shape[0]
        for y, label, color, width in ((q[1], f"95th percentile across {n} flows", "firebrick", 2), (q[0], "median across flows", "black", 2)):
            p.step("t", "y", source=ColumnDataSource({"t": t, "y": y}), mode="after", color=color, line_width=width, legend_label=label)
        with np.errstate(all="ignore"):
            level = np.array([np.nanmedian(y) if np.isfinite(y).any() else -np.inf for y in per_flow])
        top = np.argsort(-level, kind="stable")[:FEW]
        for i, f in enumerate(top):
            src = ColumnDataSource({"t": t, "y": per_flow[f]})
            p.step("t", "y", source=src, mode="after", color=to_hex(COLORS[(i + 2) % len(COLORS)]), line_alpha=0.7, line_dash="dashed", legend_label=names[f])
        drawn = np.vstack([q, per_flow[top]])
    p.y_range.start = 0
    p.y_range.end = robust_top(drawn)


def delay_at(result: RunLike, edges: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """Per flow (TCP flows, then UDP flows, rows) the mean one-way delay (ms) of the packets
    that arrived in each bin ``[edges[k], edges[k + 1])`` (ns), from the ``delay_series``
    table's intervals (each counted in the bin its start falls in, weighted by its packets);
    NaN where none arrived. With the flows' names; None when the table is empty."""
    d = result.delay_series
    if d.height == 0:
        return None
    keys = [(r["flow_kind"], r["flow"]) for r in result.delay.select("flow_kind", "flow").iter_rows(named=True)]
    names = [f"{n} ({k})" if k == "udp" else str(n) for n, k in zip(result.delay["name"].to_list(), result.delay["flow_kind"].to_list())]
    row = {k: i for i, k in enumerate(keys)}
    out = np.full((len(keys), edges.size - 1), np.nan)
    binned = (
        d.with_columns(
            bin=pl.lit(np.searchsorted(edges, d["time_ns"].to_numpy().astype(np.int64), side="right") - 1),
            weighted=pl.col("delay_mean_ns") * pl.col("packets"),
        )
        .group_by("flow_kind", "flow", "bin")
        .agg(pl.col("weighted").sum() / pl.col("packets").sum() / 1e6)
    )
    for kind, flow, b, ms in binned.iter_rows():
        if (kind, flow) in row and 0 <= b < out.shape[1]:
            out[row[(kind, flow)], b] = ms
    return out, names


def over_time(result: RunLike) -> tuple[str, str] | None:
    """(script, div) of total throughput (in bins), per-flow throughput (over a trailing
    window of 10 median RTTs: a flow's share of a bin is mostly 0 or a burst), smoothed RTT
    and one-way delay over time (:func:`delay_at`, drawn by :func:`_spread`), at most
    :data:`BINS` points per series, their time axes linked (zoom one, the others follow);
    None without series."""
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
    panels = [total, flows, delay]
    if result.delay_series.height:
        # Bins of at least one of the table's intervals (none empty between arrivals).
        starts = np.unique(result.delay_series["time_ns"].to_numpy().astype(np.int64))
        gaps = np.diff(starts)
        step = int(gaps[gaps > 0].min()) if (gaps > 0).any() else width
        d_width = max(width, step)
        d_edges = np.arange(0, end + d_width, d_width, dtype=np.int64)
        one_way = delay_at(result, d_edges)
        assert one_way is not None
        title = f"One-way delay per flow (mean of the packets arriving in each {d_width / 1e6:g} ms)"
        panels.append(_panel(title, "ms", total.x_range, 240))
        _spread(panels[-1], d_edges[:-1] / 1e9, *one_way)
    for p in panels:
        p.add_layout(p.legend[0], "right")
        p.legend.click_policy = "hide"
        p.legend.label_text_font_size = "8pt"
    total.y_range.start = 0
    return components(column(*panels, sizing_mode="stretch_width"))
