"""Interactive plots of the run report: the long time series a reader wants to zoom into,
drawn in the browser by a small canvas plotter (:mod:`tcplab.report.plotter_js`, inline once
per page by :func:`plotter_js`, about 13 KB: the page works offline). Each plot holds its data
as binary arrays (base64 float64), a bounded number of points (at most :data:`BINS` time bins
per series, whatever the duration; above ``plots.MAX_LINES`` flows a few series per plot,
percentiles across flows). Nothing here imports a plotting library: the spec is built with
numpy alone."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import numpy as np
import polars as pl
from matplotlib.colors import to_hex

from tcplab.report.plots import COLORS, MAX_LINES, robust_top, run_end_ns, series_at
from tcplab.schema import RunLike

__all__ = ["BINS", "FEW", "delay_at", "over_time", "plotter_js"]

#: Time bins of the interactive series (at most; each bin at least :data:`MIN_BIN_NS`).
BINS = 500
MIN_BIN_NS = 10_000_000

#: The colour of a line given none.
_DEFAULT = COLORS[0]

def plotter_js() -> str:
    """The ``<script>`` element with the plotter's JavaScript, inline."""
    from tcplab.report.plotter_js import JS

    return f"<script>{JS}</script>"


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


class _Panel:
    """One plot of the linked column: its lines, bands and horizontal rules."""

    def __init__(self, title: str, ylabel: str, height: int) -> None:
        self.spec: dict[str, Any] = {
            "title": title,
            "ylabel": ylabel,
            "xlabel": "time (s)",
            "height": height,
            "y1": None,
            "series": [],
            "hlines": [],
        }

    def step(self, x: str, y: np.ndarray, label: str, color: str = _DEFAULT, width: float = 1.0,
             alpha: float = 1.0, dash: bool = False) -> None:
        self.spec["series"].append(
            {"kind": "step", "x": x, "y": _b64(y), "label": label, "color": to_hex(color), "width": width,
             "alpha": alpha, "dash": [6, 4] if dash else []}
        )

    def band(self, x: str, lo: np.ndarray, hi: np.ndarray, label: str, color: str = _DEFAULT,
             alpha: float = 0.25) -> None:
        self.spec["series"].append(
            {"kind": "band", "x": x, "lo": _b64(lo), "hi": _b64(hi), "label": label, "color": to_hex(color),
             "alpha": alpha}
        )

    def hline(self, y: float, color: str = "black") -> None:
        self.spec["hlines"].append({"y": float(y), "color": color, "dash": [6, 4]})


def _percentiles(per_flow: np.ndarray) -> np.ndarray:
    """10th, 50th and 90th percentile across flows (rows) per bin; NaN where no flow has a value."""
    q = np.full((3, per_flow.shape[1]), np.nan)
    ok = np.isfinite(per_flow).any(axis=0)
    if ok.any():
        with np.errstate(all="ignore"):
            q[:, ok] = np.nanpercentile(per_flow[:, ok], [10, 50, 90], axis=0)
    return q


def _lines(p: _Panel, t: str, per_flow: np.ndarray, names: list[str]) -> None:
    """One step line per flow up to MAX_LINES flows, else the median and 10-90th band (times:
    the spec's array ``t``)."""
    if per_flow.shape[0] <= MAX_LINES:
        for f, y in enumerate(per_flow):
            p.step(t, y, names[f], color=COLORS[f % len(COLORS)])
    else:
        q = _percentiles(per_flow)
        p.band(t, q[0], q[2], "10th-90th percentile")
        p.step(t, q[1], f"median across {per_flow.shape[0]} flows")


#: Flows drawn one by one besides the median and 95th percentile across flows when there
#: are more than ``MAX_LINES`` (those with the highest delay).
FEW = 3


def _spread(p: _Panel, t: str, per_flow: np.ndarray, names: list[str]) -> None:
    """One step line per flow up to MAX_LINES flows; else the median and the 95th percentile
    across flows per bin, and the :data:`FEW` flows of highest median as thin lines. The y
    axis ends at :func:`~tcplab.report.plots.robust_top` of what is drawn (zoom out for the
    rest)."""
    if per_flow.shape[0] <= MAX_LINES:
        for f, y in enumerate(per_flow):
            p.step(t, y, names[f], color=COLORS[f % len(COLORS)])
        drawn = per_flow
    else:
        q = np.full((2, per_flow.shape[1]), np.nan)
        ok = np.isfinite(per_flow).any(axis=0)
        if ok.any():
            with np.errstate(all="ignore"):
                q[:, ok] = np.nanpercentile(per_flow[:, ok], [50, 95], axis=0)
        n = per_flow.shape[0]
        for y, label, color, width in ((q[1], f"95th percentile across {n} flows", "firebrick", 2), (q[0], "median across flows", "black", 2)):
            p.step(t, y, label, color=color, width=width)
        with np.errstate(all="ignore"):
            level = np.array([np.nanmedian(y) if np.isfinite(y).any() else -np.inf for y in per_flow])
        top = np.argsort(-level, kind="stable")[:FEW]
        for i, f in enumerate(top):
            p.step(t, per_flow[f], names[f], color=COLORS[(i + 2) % len(COLORS)], alpha=0.7, dash=True)
        drawn = np.vstack([q, per_flow[top]])
    p.spec["y1"] = robust_top(drawn)


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
    the script calls the plotter of :func:`plotter_js`, which the page holds once. None
    without series."""
    if result.series.height == 0 or not result.canonical["flows"]:
        return None
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
    xs = {"t": _b64(t), "t_end": _b64(t + width / 1e9)}
    total = _Panel(f"Total throughput (bins of {width / 1e6:g} ms)", "Mb/s", 200)
    total.step("t", total_bins, "all TCP flows", color="gray")
    topo = result.canonical["topology"]
    if topo.get("kind") == "dumbbell":
        rate = topo["bottleneck"]["forward"]["rate"] / 1e6
        total.hline(rate)
    title = f"Throughput per flow (over the last {window / 1e9:g} s, 10 median RTTs)"
    flows = _Panel(title, "Mb/s", 240)
    _lines(flows, "t_end", per_flow, names)
    delay = _Panel("Smoothed RTT per flow", "ms", 240)
    _lines(delay, "t", rtt, names)
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
        panels.append(_Panel(title, "ms", 240))
        xs["t_delay"] = _b64(d_edges[:-1] / 1e9)
        _spread(panels[-1], "t_delay", *one_way)
    spec = {"x": xs, "panels": [p.spec for p in panels]}
    # JSON inside <script>: "</" would end the element, so it is escaped (no other change).
    doc = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    div_id = "tcplab-plot-" + hashlib.sha1(doc.encode()).hexdigest()[:12]
    script = f"<script>tcplabPlot(document.getElementById('{div_id}'), {doc});</script>"
    return script, f"<div id='{div_id}' class='tcplab-plot'></div>"
