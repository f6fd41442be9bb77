"""The run report's aggregate view, first on the page and the same size for 2 flows or
10,000: totals and fairness, per-flow throughput sorted and as a CDF over flows, throughput
and RTT over time as percentiles across flows (interactive:
:mod:`tcplab.report.interactive`), one-way delay distributions, the
Pantheon-style throughput against 95th-percentile delay plot, and the delay table
(docs/delay.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from tcplab.aggregate import jain
from tcplab.report.html import figure_html, fmt, html_table
from tcplab.report.interactive import FEW, over_time
from tcplab.report.plots import COLORS, MAX_LINES, envelope, figure, legend_outside
from tcplab.report.selection import flows_note, table_flows
from tcplab.schema import RunLike

__all__ = [
    "cdf_of_buckets",
    "delay_table_html",
    "overview_html",
    "plot_delay_cdf",
    "plot_flow_throughput",
    "plot_throughput_delay",
]

def _controllers(result: RunLike) -> list[str]:
    return [f"{c}/{r}" for c, r in zip(result.flows["controller"].to_list(), result.flows["recovery"].to_list())]


def _ms(v: Any) -> float:
    return float("nan") if v is None else float(v) / 1e6


def overview_table(result: RunLike) -> str:
    """Totals: flows, aggregate throughput, Jain's index, spread of per-flow throughput and of
    the flows' median and 95th-percentile one-way delays."""
    tp = [x / 1e6 for x in result.flows["throughput_bps"].to_list()]
    rows: list[list[Any]] = [["TCP flows", len(tp)], ["UDP flows", result.udp.height]]
    if tp:
        q = np.percentile(tp, [0, 50, 100])
        rows += [
            ["total TCP throughput (Mb/s)", f"{sum(tp):.3f}"],
            ["Jain's fairness index over TCP flows", fmt(jain(tp), 4)],
            ["per-flow throughput min / median / max (Mb/s)", f"{q[0]:.3f} / {q[1]:.3f} / {q[2]:.3f}"],
        ]
    # the two columns only (a copy of the whole series table would be most of the report's memory)
    q = (
        result.series.lazy()
        .select("flow", "srtt_ns")
        .filter(pl.col("srtt_ns") > 0)
        .group_by("flow")
        .agg(pl.col("srtt_ns").quantile(0.5, "nearest").alias("p50"), pl.col("srtt_ns").quantile(0.95, "nearest").alias("p95"))
        .collect()
    )
    if q.height:
        p50, p95 = q["p50"].to_numpy() / 1e6, q["p95"].to_numpy() / 1e6
        rows.append(
            [
                "TCP smoothed RTT over flows (series samples): median of p50 / median of p95 / max p95 (ms)",
                f"{np.median(p50):.2f} / {np.median(p95):.2f} / {p95.max():.2f}",
            ]
        )
    d = result.delay.filter(pl.col("delay_p50_ns").is_not_null())
    for kind in ("tcp", "udp"):
        k = d.filter(pl.col("flow_kind") == kind)
        if k.height:
            p50 = k["delay_p50_ns"].to_numpy() / 1e6
            p95 = k["delay_p95_ns"].to_numpy() / 1e6
            rows.append(
                [
                    f"{kind.upper()} one-way delay over flows: median of p50 / median of p95 / max p95 (ms)",
                    f"{np.median(p50):.2f} / {np.median(p95):.2f} / {p95.max():.2f}",
                ]
            )
    return html_table(["", ""], rows, left=2)


def _bars(ax: Any, heights: np.ndarray, colors: list[str], width: float = 0.85) -> None:
    """The bars ``ax.bar(range(n), heights, width, color=colors)`` draws, as one collection
    (one draw call instead of a patch per flow: for thousands of flows, seconds less), with
    the same rectangles, colours and axis limits (the bottom edge sticks to 0): the same
    pixels."""
    from matplotlib.collections import PolyCollection

    x = np.arange(heights.size, dtype=float)
    left, right = x - width / 2, x + width / 2
    zero = np.zeros_like(heights)
    verts = np.stack(
        [np.column_stack(p) for p in ((left, zero), (left, heights), (right, heights), (right, zero))], axis=1
    )
    coll = PolyCollection(verts, facecolors=colors, edgecolors="none", linewidths=0)
    coll.sticky_edges.y.append(0.0)
    ax.add_collection(coll, autolim=True)
    ax.autoscale_view()


def plot_flow_throughput(result: RunLike) -> Figure | None:
    """Per-flow throughput sorted (bars, coloured by controller/recovery) and its CDF over flows."""
    tp = np.array(result.flows["throughput_bps"].to_list(), dtype=float) / 1e6
    if tp.size == 0:
        return None
    fig, (bars, cdf) = figure(1, 2, height=2.8, width=10)
    order = np.argsort(tp)[::-1]
    protos = _controllers(result)
    kinds = sorted(set(protos))
    color = {k: COLORS[i % len(COLORS)] for i, k in enumerate(kinds)}
    colors = [color[protos[i]] for i in order]
    if tp.size <= MAX_LINES:
        bars.bar(np.arange(tp.size), tp[order], width=0.85, color=colors)
    else:
        _bars(bars, tp[order], colors)
    bars.axhline(tp.mean(), color="black", lw=0.8, ls="--")
    bars.set_xlabel("flows, by throughput")
    bars.set_ylabel("throughput (Mb/s)")
    bars.set_title(f"mean {tp.mean():.3f} Mb/s (dashed), Jain {jain(tp.tolist()):.3f}", fontsize=9, loc="left", y=1.0)
    if tp.size <= MAX_LINES:
        names = result.flows["name"].to_list()
        bars.set_xticks(np.arange(tp.size), [names[i] for i in order], rotation=30, ha="right", fontsize=7)
    else:
        bars.set_xticks([])
    x = np.sort(tp)
    y = np.arange(1, x.size + 1) / x.size
    drawn = envelope(x, y)  # a point per flow, at most 4 per column of PLOT_BINS
    cdf.step(x[drawn], y[drawn], where="post", color="tab:blue")
    cdf.set_xlabel("throughput (Mb/s)")
    cdf.set_ylabel("fraction of flows")
    cdf.set_ylim(0, 1.02)
    for ax in (bars, cdf):
        ax.grid(alpha=0.3)
    if len(kinds) > 1:
        from matplotlib.patches import Patch

        # the colours are the bars' (controller + recovery); the CDF is one line of all flows
        bars.legend(handles=[Patch(color=color[k], label=k) for k in kinds], fontsize=7, loc="upper right")
    return fig


def cdf_of_buckets(h: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(bucket middles in ms, cumulative fraction) of one histogram's buckets."""
    h = h.sort("lower_ns")
    mid = (h["lower_ns"].to_numpy() + (h["width_ns"].to_numpy() - 1) / 2) / 1e6
    n = h["packets"].to_numpy().astype(float)
    return mid, np.cumsum(n) / n.sum()


def plot_delay_cdf(result: RunLike) -> Figure | None:
    """CDF of the one-way delay: per flow up to :data:`MAX_LINES` flows, else of all TCP
    packets pooled and of all UDP packets pooled (the histograms added bucket by bucket)."""
    h = result.delay_histogram.filter(pl.col("metric") == "delay")
    if h.height == 0:
        return None
    fig, (ax,) = figure(1, 1, height=2.6)
    names = {(r["flow_kind"], r["flow"]): r["name"] for r in result.delay.iter_rows(named=True)}
    keys = h.select("flow_kind", "flow").unique(maintain_order=True).rows()
    if len(keys) <= MAX_LINES:
        for i, (kind, flow) in enumerate(keys):
            x, y = cdf_of_buckets(h.filter((pl.col("flow_kind") == kind) & (pl.col("flow") == flow)))
            ax.step(x, y, where="post", color=COLORS[i % len(COLORS)], label=f"{names[(kind, flow)]} ({kind})")
    else:
        for i, kind in enumerate(("tcp", "udp")):
            k = h.filter(pl.col("flow_kind") == kind)
            if k.height:
                pooled = k.group_by("lower_ns", "width_ns").agg(pl.col("packets").sum())
                x, y = cdf_of_buckets(pooled)
                n = k["flow"].n_unique()
                ax.step(x, y, where="post", color=COLORS[i], label=f"all {kind.upper()} packets ({n} flows)")
    ax.set_xlabel("one-way delay (ms)")
    ax.set_ylabel("fraction of packets")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    legend_outside(fig, ax)
    return fig


def plot_throughput_delay(result: RunLike) -> Figure | None:
    """Pantheon-style: one point per TCP flow at (95th-percentile one-way delay, throughput),
    the delay axis reversed (better is up and to the right), coloured by controller/recovery."""
    d = result.delay.filter((pl.col("flow_kind") == "tcp") & pl.col("delay_p95_ns").is_not_null())
    if d.height == 0:
        return None
    tp = dict(zip(result.flows["id"].to_list(), result.flows["throughput_bps"].to_list()))
    protos = _controllers(result)
    kinds = sorted(set(protos))
    fig, (ax,) = figure(1, 1, height=3.2, width=7.5)
    for i, k in enumerate(kinds):
        rows = [r for r in d.iter_rows(named=True) if protos[r["flow"]] == k]
        x = [r["delay_p95_ns"] / 1e6 for r in rows]
        y = [tp[r["flow"]] / 1e6 for r in rows]
        ax.scatter(x, y, s=18, color=COLORS[i % len(COLORS)], label=k, alpha=0.8)
        if d.height <= MAX_LINES:
            for r, xi, yi in zip(rows, x, y):
                ax.annotate(r["name"], (xi, yi), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.invert_xaxis()
    ax.set_xlabel("95th-percentile one-way delay (ms), reversed")
    ax.set_ylabel("throughput (Mb/s)")
    ax.grid(alpha=0.3)
    legend_outside(fig, ax)
    return fig


def delay_table_html(result: RunLike) -> str:
    """The delay table: one row per flow (TCP data, UDP datagrams); of the TCP flows those
    the per-flow tables show (:func:`tcplab.report.selection.table_flows`)."""
    rows = []
    shown = table_flows(result)
    d = result.delay.filter((pl.col("flow_kind") != "tcp") | pl.col("flow").is_in(shown))
    for r in d.iter_rows(named=True):
        rows.append(
            [
                r["name"],
                r["flow_kind"],
                r["packets_sent"],
                r["packets_delivered"],
                fmt(r["loss_pct"]),
                *(f"{_ms(r[k]):.2f}" for k in ("delay_min_ns", "delay_mean_ns", "delay_p50_ns", "delay_p95_ns")),
                *(f"{_ms(r[k]):.2f}" for k in ("delay_p99_ns", "delay_max_ns")),
                f"{_ms(r['jitter_mean_ns']):.3f}",
                f"{_ms(r['jitter_rfc3550_ns']):.3f}",
            ]
        )
    return html_table(
        [
            "flow",
            "kind",
            "sent",
            "delivered",
            "loss %",
            "min (ms)",
            "mean (ms)",
            "p50 (ms)",
            "p95 (ms)",
            "p99 (ms)",
            "max (ms)",
            "jitter, mean (ms)",
            "jitter, RFC 3550 (ms)",
        ],
        rows,
        left=2,
    ) + flows_note(len(shown), result.flows.height)


def overview_html(result: RunLike, caption_base: str) -> str:
    """The aggregate section: totals, then the aggregate figures."""
    parts = ["<h2>Overview</h2>", overview_table(result)]
    fig = plot_flow_throughput(result)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                f"Per-flow throughput (application bytes delivered in order over the flow's lifetime), sorted, "
                f"and its CDF over flows; bars coloured by controller/recovery. {caption_base}.",
                "per-flow throughput and its CDF",
            )
        )
    ot = over_time(result)
    if ot is not None:
        script, div = ot
        how = (
            "one line per flow (click a legend entry to hide it)"
            if len(result.canonical["flows"]) <= MAX_LINES
            else "the median across flows with the 10th-90th percentile band"
        )
        delay_how = (
            ""
            if result.delay.height <= MAX_LINES
            else f"; the one-way delay as the median and 95th percentile across flows and the {FEW} flows of "
            "highest median delay"
        )
        parts.append(
            f"<figure class='interactive'>{div}{script}<figcaption>Total throughput (a bar above the bottleneck "
            f"rate is data held out of order and released when a hole was repaired), throughput per flow, "
            f"smoothed RTT and one-way delay (TCP data and UDP datagrams, from the delay_series table) over "
            f"time, {how}{delay_how}. Interactive: drag to pan, scroll to zoom the time axis (the plots follow "
            f"each other), reset to return; the delay axis ends where the bulk of it does (scroll over its "
            f"y axis to zoom out for excursions). {caption_base}.</figcaption></figure>"
        )
    else:
        parts.append("<p class='muted'>No plot over time: the series table is empty (trace.series = \"off\"?).</p>")
    fig = plot_throughput_delay(result)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                "Throughput against 95th-percentile one-way delay, one point per TCP flow (Pantheon's form: the "
                "delay axis is reversed, so better is up and to the right).",
                "throughput vs 95th-percentile delay",
            )
        )
    fig = plot_delay_cdf(result)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                "Distribution of the one-way delay of data segments and datagrams (from the per-flow histograms, "
                "buckets within 1/128 of their values; docs/delay.md).",
                "one-way delay CDF",
            )
        )
    parts.append(
        "<h3>One-way delay, jitter and loss</h3><p class='muted'>Per flow: TCP data segments (every "
        "transmission), UDP datagrams. Delay = arrival − handed to the network; percentiles within 1/128 of "
        "the exact values; jitter, mean = mean |delay difference| of consecutive arrivals (ns-3 FlowMonitor); "
        "jitter, RFC 3550 = smoothed interarrival jitter (iperf3); loss % = dropped / sent (docs/delay.md).</p>"
    )
    parts.append(delay_table_html(result))
    return "\n".join(parts)
