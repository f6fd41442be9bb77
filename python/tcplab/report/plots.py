"""The report's figures (matplotlib, Agg canvas; no pyplot global state): windows, throughput,
queue lengths and time-sequence plots of a run, and the figure helpers the aggregate view
(:mod:`tcplab.report.overview`) shares. Per-flow figures take the flows to draw, so that the
page can split many flows into figures of a few panels each (none taller than
``html.MAX_IMAGE_PX``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab.schema import RunLike


#: ssthresh at or above this is "unbounded" (u64::MAX before the first loss).
_UNBOUNDED = 2**62
COLORS = [
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:olive",
]



#: Up to this many flows a plot draws one line (and legend entry) per flow; above, it draws
#: percentiles across flows (or groups by controller) and the legend stays short.
MAX_LINES = 8

#: Width (inches) kept right of the plots for legends (:func:`legend_outside`).
LEGEND_WIDTH = 2.3


def _layout(fig: Figure, rows: int) -> None:
    """Fixed margins (in inches), a column for legends on the right: much cheaper than
    constrained/tight layout."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(
        left=1.0 / w,
        right=1 - LEGEND_WIDTH / w,
        top=1 - 0.35 / h,
        bottom=0.55 / h,
        hspace=0.45 if rows > 1 else 0.2,
        wspace=0.3,
    )


def figure(rows: int, cols: int = 1, height: float = 2.6, width: float = 10, sharex: bool = True) -> tuple[Figure, list[Any]]:
    """A figure of ``rows`` x ``cols`` plots, each ``height`` inches tall, ``width`` inches
    wide in all; its axes in reading order."""
    fig = Figure(figsize=(width, 0.9 + height * rows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, sharex=sharex and cols == 1, squeeze=False)
    _layout(fig, rows)
    return fig, list(axes.ravel())


def _figure(rows: int, height: float = 2.6, sharex: bool = True) -> tuple[Figure, list[Any]]:
    return figure(rows, 1, height=height, sharex=sharex)


def legend_outside(fig: Figure, ax: Any, handles: list[Any] | None = None) -> None:
    """The legend of ``ax`` (or of ``handles``) right of it, in the column the layout keeps
    free, never over the data."""
    kw: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 8, "borderaxespad": 0}
    if handles is not None:
        kw["handles"] = handles
    elif not ax.get_legend_handles_labels()[0]:
        return
    ax.legend(**kw)


def _mss(result: RunLike, flow: int) -> int:
    try:
        return int(result.canonical["flows"][flow]["tcp"]["mss"])
    except (IndexError, KeyError, TypeError):
        return int(result.canonical["tcp"]["mss"])


def _flow_label(result: RunLike, flow: int) -> str:
    f = result.canonical["flows"][flow]
    return f"{f['name']} ({f['controller']['name']} + {f['recovery']['name']})"


# ---- downsampling for drawing (the data files keep every row) ---------------------------------

#: Bins per plot of :func:`envelope` and columns of :func:`pixel_cells` (by default): more
#: than the pixels of the widest plot area (a 10-inch figure at 100 dpi less its margins:
#: 670 px), so a bin is narrower than a pixel column (bins of a whole pixel move the points
#: kept by up to a pixel: more of the antialiased pixels differ from the full series').
PLOT_BINS = 1000
#: Rows of :func:`pixel_cells`: at least the pixels of the tallest plot area.
PLOT_ROWS = 400


def plot_pixels(ax: Any) -> tuple[int, int]:
    """(columns, rows) of pixels of the plot area of ``ax`` at its figure's dpi, at least 1."""
    box = ax.get_position()
    w, h = ax.figure.get_size_inches() * ax.figure.dpi
    return max(1, int(box.width * w)), max(1, int(box.height * h))


def envelope(x: np.ndarray, y: np.ndarray, bins: int = PLOT_BINS) -> np.ndarray:
    """Indices (increasing) of the points of the series ``(x, y)`` (``x`` non-decreasing) that
    draw it at ``bins`` columns over ``[x[0], x[-1]]`` as a line would: per column the first,
    the last, the lowest and the highest point (NaN ignored, unless the column holds only
    NaN), so at most ``4 * bins`` points, every spike and the first and last point kept. The
    whole series when it is no longer than that."""
    n = x.size
    if n <= 4 * bins:
        return np.arange(n)
    lo, hi = float(x[0]), float(x[-1])
    if not hi > lo:
        b = np.zeros(n, dtype=np.int64)
    else:
        b = np.minimum(((x - lo) * (bins / (hi - lo))).astype(np.int64), bins - 1)
    starts = np.flatnonzero(np.concatenate(([True], b[1:] != b[:-1])))
    ends = np.concatenate((starts[1:], [n])) - 1
    counts = ends - starts + 1
    yf = np.asarray(y, dtype=np.float64)
    finite = np.isfinite(yf)
    with np.errstate(invalid="ignore"):
        mins = np.fmin.reduceat(yf, starts)
        maxs = np.fmax.reduceat(yf, starts)
    seg = np.repeat(np.arange(starts.size), counts)
    keep = np.zeros(n, dtype=bool)
    keep[starts] = True
    keep[ends] = True
    for target in (mins, maxs):
        hit = np.flatnonzero(finite & (yf == target[seg]))
        if hit.size:
            first = hit[np.concatenate(([True], seg[hit][1:] != seg[hit][:-1]))]
            keep[first] = True
    return np.flatnonzero(keep)


def pixel_cells(x: np.ndarray, y: np.ndarray, cols: int = PLOT_BINS, rows: int = PLOT_ROWS) -> np.ndarray:
    """Indices (increasing) of the points of a scatter ``(x, y)`` that draw it at ``cols`` x
    ``rows`` cells over the points' range: the first point of each occupied cell, and the
    points of the smallest and largest ``x`` and ``y`` (the axis limits stay the same), so
    at most ``cols * rows + 4`` points (all of them when there are no more than ``cols``).
    With cells no larger than the plot's pixels (:func:`plot_pixels`) the points dropped are
    drawn over ones kept, less than a cell away."""
    n = x.size
    if n <= cols:
        return np.arange(n)

    def cell(v: np.ndarray, k: int) -> np.ndarray:
        lo, hi = float(np.min(v)), float(np.max(v))
        if not hi > lo:
            return np.zeros(v.size, dtype=np.int64)
        return np.minimum(((v - lo) * (k / (hi - lo))).astype(np.int64), k - 1)

    key = cell(x, cols) * rows + cell(y, rows)
    _, first = np.unique(key, return_index=True)
    extremes = [np.argmin(x), np.argmax(x), np.argmin(y), np.argmax(y)]
    return np.unique(np.concatenate((first, extremes)))


# ---- plots -----------------------------------------------------------------------------------


def robust_top(values: np.ndarray, floor: float = 0.0) -> float:
    """An upper y limit that shows what matters: 1.25 x the 95th percentile of ``values`` (at
    least ``floor``), or their maximum when that is not much more. Brief excursions above it
    (NewReno's window inflated by duplicate ACKs during recovery) are clipped and marked."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return max(floor, 1.0)
    top = max(1.25 * float(np.percentile(v, 95)), floor)
    peak = float(v.max())
    return peak * 1.05 if peak <= 1.2 * top or top <= 0 else top


def mark_clipped(ax: Any, t: np.ndarray, y: np.ndarray, top: float, color: str) -> None:
    """A marker at the top edge at the start of each run of values above ``top``."""
    above = y > top
    starts = np.flatnonzero(above & ~np.concatenate(([False], above[:-1])))
    if starts.size:
        ax.plot(
            t[starts],
            np.full(starts.size, top * 0.97),
            ls="none",
            marker="^",
            ms=5,
            color=color,
            label=f"clipped ({starts.size}×, up to {np.nanmax(y):.0f})",
        )


def plot_windows(result: RunLike, flows: list[int] | None = None) -> Figure | None:
    """cwnd and ssthresh over time, one panel per flow of ``flows`` (default: all). The y axis
    of each panel ends at a robust upper percentile of its window (:func:`robust_top`):
    NewReno's inflated window during recovery is drawn up to the edge and marked there."""
    s = result.series
    nflows = len(result.canonical["flows"])
    flows = list(range(nflows)) if flows is None else flows
    if s.height == 0 or not flows:
        return None
    fig, axes = _figure(len(flows), height=2.2)
    ev = result.events
    # numpy views of the columns (no copy), a flow's rows picked by index (a polars filter per
    # flow would copy every column and keep the memory)
    s_flow, s_time, s_cwnd, s_ss = (s[c].to_numpy() for c in ("flow", "time_ns", "cwnd", "ssthresh"))
    for f, ax in zip(flows, axes):
        mss = _mss(result, f)
        rows = np.flatnonzero(s_flow == f)
        t = s_time[rows] / 1e9
        cwnd = s_cwnd[rows] / mss
        ss = s_ss[rows].astype(np.float64)
        del rows
        ss[ss >= _UNBOUNDED] = np.nan
        ss /= mss
        finite_ss = ss[np.isfinite(ss)]
        top = robust_top(cwnd, floor=float(finite_ss.max()) * 1.1 if finite_ss.size else 0.0)
        drawn = envelope(t, cwnd)  # at most 4 points per column of PLOT_BINS (< a pixel wide)
        ax.plot(t[drawn], cwnd[drawn], drawstyle="steps-post", lw=0.8, color="tab:blue", label="cwnd")
        drawn = envelope(t, ss)
        ax.plot(t[drawn], ss[drawn], drawstyle="steps-post", lw=0.8, color="tab:green", ls="--", label="ssthresh")
        mark_clipped(ax, t, cwnd, top, "tab:blue")
        e = ev.filter(pl.col("flow") == f)
        for kind, marker, color, label in (
            ("recovery_enter", "v", "tab:red", "fast retransmit"),
            ("timeout", "X", "black", "timeout"),
        ):
            k = e.filter(pl.col("event") == kind)
            if k.height:
                ax.plot(
                    k["time_ns"].to_numpy() / 1e9,
                    np.minimum(k["cwnd"].to_numpy() / mss, top * 0.97),
                    ls="none",
                    marker=marker,
                    ms=5,
                    color=color,
                    label=f"{label} ({k.height})",
                )
        ax.set_ylabel(f"window (segments,\nMSS {mss} B)")
        ax.set_title(_flow_label(result, f), fontsize=10, loc="left", y=1.0)
        ax.set_ylim(0, top)
        ax.grid(alpha=0.3)
        legend_outside(fig, ax)
    axes[-1].set_xlabel("time (s)")
    return fig


def series_at(result: RunLike, column: str, edges: np.ndarray, before: float = 0.0) -> np.ndarray:
    """Per flow (rows, in flow order), the value of ``column`` of the series table at each
    time of ``edges`` (ns): the latest sample at or before it, ``before`` until the first."""
    out = np.full((len(result.canonical["flows"]), edges.size), before, dtype=np.float64)
    s = result.series
    if s.height == 0 or edges.size == 0:
        return out
    flow = s["flow"].to_numpy().astype(np.int64)
    order = np.argsort(flow, kind="stable")  # by flow, each flow's rows in table (time) order
    flow = flow[order]
    t = s["time_ns"].to_numpy().astype(np.int64)[order]
    v = s[column].to_numpy().astype(np.float64)[order]
    e = np.asarray(edges, dtype=np.int64)
    span = int(max(t.max(), e.max())) + 1
    present = np.unique(flow)
    if int(present[-1]) + 1 >= 2**62 // span or t.min() < 0 or e.min() < 0:  # keys would overflow
        for f in present:
            rows = flow == f
            idx = np.searchsorted(t[rows], e, side="right") - 1
            out[int(f)] = np.where(idx >= 0, v[rows][np.clip(idx, 0, None)], before)
        return out
    # One search for all flows: (flow, time) as one sorted key.
    pos = np.searchsorted(flow * span + t, (present[:, None] * span + e[None, :]).ravel(), side="right") - 1
    pos = pos.reshape(present.size, e.size)
    safe = np.clip(pos, 0, None)
    ok = (pos >= 0) & (flow[safe] == present[:, None])
    out[present] = np.where(ok, v[safe], before)
    return out


def run_end_ns(result: RunLike) -> int:
    """The end of the run (its duration, or the time reached if later)."""
    return max(int(result.canonical["duration"]), int(result.stats.get("sim_time_ns", 0) or 0))


def throughput_bins(
    result: RunLike, bins: int = 100, min_width_ns: int = 1_000_000
) -> tuple[np.ndarray, list[np.ndarray], float]:
    """(bin start times in s, per-flow throughput in Mb/s, bin width in s) from `delivered`:
    about ``bins`` bins over the run, each at least ``min_width_ns`` wide."""
    end = run_end_ns(result)
    width = max(end // bins, min_width_ns)
    edges = np.arange(0, end + width, width, dtype=np.int64)
    at = series_at(result, "delivered", edges)
    return edges[:-1] / 1e9, list(np.diff(at, axis=1) * 8 / (width / 1e9) / 1e6), width / 1e9


def plot_throughput(result: RunLike) -> tuple[Figure, float] | None:
    if result.series.height == 0 or not result.canonical["flows"]:
        return None
    t, per_flow, width = throughput_bins(result)
    fig, (ax,) = _figure(1, height=2.8)
    for f, y in enumerate(per_flow):
        ax.step(t, y, where="post", lw=1.0, color=COLORS[f % len(COLORS)], label=_flow_label(result, f))
    if len(per_flow) > 1:
        ax.step(t, np.sum(per_flow, axis=0), where="post", lw=0.8, color="gray", ls=":", label="all flows")
    topo = result.canonical["topology"]
    if topo.get("kind") == "dumbbell":
        rate = topo["bottleneck"]["forward"]["rate"] / 1e6
        ax.axhline(rate, color="black", lw=0.8, ls="--", label=f"bottleneck {rate:g} Mb/s")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    legend_outside(fig, ax)
    return fig, width


def _link_specs(canonical: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(link name, direction) -> canonical LinkDir."""
    topo = canonical["topology"]
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if topo.get("kind") == "dumbbell":
        n = topo["pairs"]
        for i in range(n):
            sa = topo["sender_access"][i if len(topo["sender_access"]) > 1 else 0]
            ra = topo["receiver_access"][i if len(topo["receiver_access"]) > 1 else 0]
            for d in ("forward", "reverse"):
                out[(f"s{i}-left", d)] = sa[d]
                out[(f"right-r{i}", d)] = ra[d]
        for d in ("forward", "reverse"):
            out[("left-right", d)] = topo["bottleneck"][d]
    elif topo.get("kind") == "explicit":
        for link in topo.get("links", []):
            for d in ("forward", "reverse"):
                out[(f"{link['from']}-{link['to']}", d)] = link[d]
    else:  # other presets
        from tcplab.topology import graph

        for a, b, fwd, rev in graph(topo)[1]:
            out[(f"{a}-{b}", "forward")] = fwd
            out[(f"{a}-{b}", "reverse")] = rev
    return out


def plot_queues(result: RunLike) -> tuple[Figure, list[str]] | None:
    q = result.queues
    if q.height == 0:
        return None
    # busiest first (the share of the run its serializer was busy, then the highest queue):
    # the bottleneck before access links that queued in one burst
    utilization = result.links.select(pl.col("id").alias("link"), "utilization")
    busy = (
        q.group_by("link")
        .agg(pl.col("packets").max().alias("peak"))
        .filter(pl.col("peak") > 1)  # 1 = only the packet in service: no queue
        .join(utilization, on="link", how="left")
        .sort(["utilization", "peak", "link"], descending=[True, True, False], nulls_last=True)
        .head(4)
    )
    if busy.height == 0:
        return None
    links = result.links
    specs = _link_specs(result.canonical)
    fig, axes = _figure(busy.height, height=2.2)
    names = []
    for ax, link in zip(axes, busy["link"].to_list()):
        rows = q.filter(pl.col("link") == link)
        t = rows["time_ns"].to_numpy() / 1e9
        packets = rows["packets"].to_numpy()
        drawn = envelope(t, packets)  # at most 4 points per column of PLOT_BINS (< a pixel wide)
        ax.plot(t[drawn], packets[drawn], drawstyle="steps-post", lw=0.8, color="tab:purple", label="queue")
        if link < links.height:
            name, direction = links["link"][link], links["direction"][link]
            label = f"{name} {direction} ({links['from'][link]} → {links['to'][link]})"
            spec = specs.get((name, direction))
            peak = int(rows["packets"].max() or 0)
            if spec and "packets" in spec["buffer"]:
                cap = spec["buffer"]["packets"]
                if cap <= 2 * peak:
                    ax.axhline(cap, color="tab:red", lw=0.8, ls="--", label=f"buffer {cap} packets")
                else:
                    label += f", buffer {cap} packets (off scale)"
            elif spec:
                label += f", buffer {spec['buffer']['bytes']} B"
        else:
            label = f"link {link}"
        names.append(label)
        ax.set_title(label, fontsize=10, loc="left", y=1.0)
        ax.set_ylabel("queue (packets)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        legend_outside(fig, ax)
    axes[-1].set_xlabel("time (s)")
    return fig, names


def _zoom_windows(result: RunLike, flows: list[int]) -> list[tuple[float, float] | None]:
    """Per flow of ``flows``, a time range (ns) around its first loss: 5 RTTs before, 15 after."""
    out: list[tuple[float, float] | None] = []
    drops = result.drops.filter((pl.col("flow_kind") == "tcp") & (pl.col("packet") == "data"))
    ev = result.events.filter(pl.col("event").is_in(["recovery_enter", "timeout"]))
    for f in flows:
        times = (
            drops.filter(pl.col("flow") == f)["time_ns"].to_list()
            + ev.filter(pl.col("flow") == f)["time_ns"].to_list()
        )
        if not times:
            out.append(None)
            continue
        srtt = result.series.select("flow", "srtt_ns").filter((pl.col("flow") == f) & (pl.col("srtt_ns") > 0))["srtt_ns"]
        rtt = float(srtt.median()) if srtt.len() else 100e6
        t0 = min(times)
        out.append((max(0.0, t0 - 5 * rtt), t0 + 15 * rtt))
    return out


def plot_time_sequence(result: RunLike, zoom: bool = False, flows: list[int] | None = None) -> Figure | None:
    """Time-sequence plot per flow of ``flows`` (default: all); ``zoom`` restricts each flow to
    the time around its first loss (None when no flow lost anything)."""
    g = result.segments
    flows = list(range(len(result.canonical["flows"]))) if flows is None else flows
    if g.height == 0 or not flows:
        return None
    # The columns as numpy views (no copy), a flow's rows picked by index: polars' filters
    # would copy the columns per flow and keep the memory.
    g_flow, g_time, g_seq, g_rtx = (g[c].to_numpy() for c in ("flow", "time_ns", "seq", "retransmission"))
    windows = _zoom_windows(result, flows) if zoom else [None] * len(flows)
    if zoom and all(w is None for w in windows):
        return None
    drops = result.drops.filter((pl.col("flow_kind") == "tcp") & (pl.col("packet") == "data"))
    fig, axes = _figure(len(flows), height=2.4, sharex=not zoom)
    if zoom:
        fig.subplots_adjust(hspace=0.6)
    for k, (f, ax) in enumerate(zip(flows, axes)):
        sel = g_flow == f
        d = drops.filter(pl.col("flow") == f)
        w = windows[k]
        if w is not None:
            sel &= (g_time >= w[0]) & (g_time <= w[1])
            d = d.filter(pl.col("time_ns").is_between(w[0], w[1]))
        rows = np.flatnonzero(sel)
        del sel
        scale = 1e6 if not zoom else float(_mss(result, f))
        is_rtx = g_rtx[rows] > 0
        orig, rtx = rows[~is_rtx], rows[is_rtx]
        del rows, is_rtx
        # Points drawn over one another are drawn once: one per cell of half a pixel (pixel_cells).
        cols, height = plot_pixels(ax)
        cells = (2 * cols, 2 * height)
        x, y = g_time[orig] / 1e9, g_seq[orig] / scale
        keep = pixel_cells(x, y, *cells)
        ax.scatter(
            x[keep],
            y[keep],
            s=1 if not zoom else 6,
            color="tab:blue",
            label="segment sent",
            rasterized=True,
        )
        if rtx.size:
            x, y = g_time[rtx] / 1e9, g_seq[rtx] / scale
            keep = pixel_cells(x, y, *cells)
            ax.scatter(
                x[keep],
                y[keep],
                s=10 if not zoom else 22,
                color="tab:red",
                label=f"retransmission ({rtx.size})",
                rasterized=True,
            )
        if d.height:
            ax.scatter(
                d["time_ns"].to_numpy() / 1e9,
                d["seq"].to_numpy() / scale,
                s=18 if not zoom else 40,
                marker="x",
                color="black",
                label=f"dropped ({d.height})",
                rasterized=True,
            )
        title = _flow_label(result, f)
        if zoom:
            title += " — around the first loss" if w is not None else " — no loss"
        ax.set_title(title, fontsize=10, loc="left", y=1.0)
        ax.set_ylabel(
            "sequence number (MB)" if not zoom else f"sequence number\n(segments of {int(scale)} B)"
        )
        ax.grid(alpha=0.3)
        legend_outside(fig, ax)
        if zoom or k == len(flows) - 1:
            ax.set_xlabel("time (s)")
    return fig

