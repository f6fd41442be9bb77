"""The campaign report's figures (matplotlib Figures on the Agg canvas, no pyplot state),
after the ETH report's Fig. 2, 4, 5, 7, 8 and 9. Published values are drawn where the
report's text states them (medians, shares at 0 timeouts)."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab.campaign import analysis, published

__all__ = [
    "plot_throughput_cdf",
    "plot_normalized_cdf",
    "plot_loss_bins",
    "plot_timeouts_cdf",
    "plot_timeout_causes",
    "plot_mpl_causes",
    "COLORS",
]

COLORS = {
    "reno": "tab:blue",
    "vegas-ca": "tab:orange",
    "fack": "tab:green",
    "rh": "tab:red",
    "lrd": "tab:purple",
}
_MORE = ["tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]
CLASS_COLORS = {
    "mpl": "tab:red",
    "non_trigger": "tab:blue",
    "lost_fast_rtx": "tab:orange",
    "lost_timeout_rtx": "tab:green",
    "other": "tab:gray",
}


def _color(protocols: list[str], p: str) -> str:
    if p in COLORS:
        return COLORS[p]
    others = [q for q in protocols if q not in COLORS]
    return _MORE[others.index(p) % len(_MORE)]


def _figure(width: float = 9.0, height: float = 4.2, cols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, cols, squeeze=False)[0]
    fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=0.14, wspace=0.25)
    return fig, list(axes)


def _cdf_plot(ax, cdf: pl.DataFrame, protocols: list[str]) -> None:
    for p in protocols:
        d = cdf.filter(pl.col("protocol") == p)
        if d.height:
            ax.step(
                d["value"].to_numpy(), d["cdf"].to_numpy(), where="post", label=p, color=_color(protocols, p)
            )


def plot_throughput_cdf(df: pl.DataFrame, protocols: list[str]) -> Figure:
    """Fig. 2: CDF of the throughput (Mbit/s, log x); ○ published medians at F = 0.5."""
    fig, (ax,) = _figure()
    cdf = analysis.cdf_frame(df.with_columns(pl.col("throughput_bps") / 1e6), "throughput_bps", protocols)
    _cdf_plot(ax, cdf.filter(pl.col("value") > 0), protocols)
    for p in protocols:
        if p in published.THROUGHPUT_MEDIAN_MBPS:
            ax.plot(
                published.THROUGHPUT_MEDIAN_MBPS[p], 0.5, "o", mfc="none", ms=8, color=_color(protocols, p)
            )
    ax.set_xscale("log")
    ax.set_xlabel("throughput (Mbit/s)")
    ax.set_ylabel("share of connections")
    ax.set_title("Throughput per connection (CDF); ○ = the report's medians")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return fig


def plot_normalized_cdf(df: pl.DataFrame, protocols: list[str]) -> Figure:
    """Fig. 5: CDF of throughput / bottleneck rate; ○ FACK's published median."""
    fig, (ax,) = _figure()
    cdf = analysis.cdf_frame(df, "normalized_throughput", protocols)
    _cdf_plot(ax, cdf.filter(pl.col("value") > 0), protocols)
    if "fack" in protocols:
        ax.plot(published.FACK_NORMALIZED_MEDIAN, 0.5, "o", mfc="none", ms=8, color=_color(protocols, "fack"))
    ax.set_xscale("log")
    ax.set_xlabel("throughput / bottleneck rate")
    ax.set_ylabel("share of connections")
    ax.set_title("Normalized throughput (CDF); ○ = the report's FACK median")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return fig


def plot_loss_bins(df: pl.DataFrame, protocols: list[str], width: float = 0.02, min_count: int = 5) -> Figure:
    """Fig. 4: median normalized throughput per loss-rate bin (bins with at least
    ``min_count`` connections; marker size grows with the count)."""
    fig, (ax,) = _figure()
    m = analysis.median_by_loss_bin(df, width, order=protocols)
    for p in protocols:
        d = m.filter((pl.col("protocol") == p) & (pl.col("connections") >= min_count)).sort("loss_bin")
        if d.height:
            c = _color(protocols, p)
            ax.plot(d["loss_bin"].to_numpy(), d["median"].to_numpy(), "-", color=c, label=p)
            ax.scatter(
                d["loss_bin"].to_numpy(),
                d["median"].to_numpy(),
                s=8 + 2 * np.sqrt(d["connections"].to_numpy()),
                color=c,
            )
    ax.set_xlabel(f"data loss rate (bin upper edge; bins of {width:g}, 0 = no loss)")
    ax.set_ylabel("median throughput / bottleneck rate")
    ax.set_title(f"Normalized throughput vs loss rate (median per bin, ≥ {min_count} connections)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right")
    return fig


def plot_timeouts_cdf(df: pl.DataFrame, protocols: list[str]) -> Figure:
    """Fig. 7: CDF of timeouts per connection, x = timeouts + 1 (log); ○ published share of
    timeout-free connections at x = 1."""
    fig, (ax,) = _figure()
    cdf = analysis.cdf_frame(df.with_columns((pl.col("timeouts") + 1).alias("t1")), "t1", protocols)
    _cdf_plot(ax, cdf, protocols)
    for p in protocols:
        if p in published.TIMEOUT_FREE_SHARE:
            ax.plot(1, published.TIMEOUT_FREE_SHARE[p], "o", mfc="none", ms=8, color=_color(protocols, p))
    ax.set_xscale("log")
    ax.set_xlabel("timeouts per connection + 1")
    ax.set_ylabel("share of connections")
    ax.set_title("Timeouts per connection (CDF); ○ = the report's timeout-free share")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return fig


def plot_timeout_causes(df: pl.DataFrame, protocols: list[str]) -> Figure:
    """Fig. 8: mean timeouts per connection by cause, stacked (left); the same as shares of
    each protocol's timeouts, with the report's Reno shares as a last bar (right)."""
    fig, (ax, ax2) = _figure(width=11, height=4.4, cols=2)
    b = analysis.timeout_breakdown(df, protocols)
    x = np.arange(len(protocols))
    bottom = np.zeros(len(protocols))
    bottom2 = np.zeros(len(protocols) + 1)
    for cls in analysis.FIG8_CLASSES:
        d = {r["protocol"]: r for r in b.filter(pl.col("class") == cls).iter_rows(named=True)}
        v = np.array([d[p]["per_connection"] or 0.0 for p in protocols])
        s = np.array(
            [d[p]["share"] or 0.0 for p in protocols] + [published.RENO_TIMEOUT_BREAKDOWN.get(cls, 0.0)]
        )
        ax.bar(x, v, bottom=bottom, color=CLASS_COLORS[cls], label=cls)
        ax2.bar(np.arange(len(protocols) + 1), s, bottom=bottom2, color=CLASS_COLORS[cls])
        bottom += v
        bottom2 += s
    ax.set_xticks(x, protocols)
    ax.set_ylabel("mean timeouts per connection")
    ax.set_title("Timeout causes (absolute)")
    ax.legend(fontsize=8)
    ax2.set_xticks(np.arange(len(protocols) + 1), [*protocols, "reno\n(report)"])
    ax2.set_ylabel("share of the protocol's timeouts")
    ax2.set_title("Timeout causes (relative)")
    for a in (ax, ax2):
        a.grid(True, axis="y", alpha=0.3)
    return fig


def plot_mpl_causes(df: pl.DataFrame, protocols: list[str]) -> Figure:
    """Fig. 9: multiple-packet-loss timeouts per connection: missing ACKs / lost MPL
    retransmission, stacked."""
    fig, (ax,) = _figure(width=7)
    m = {r["protocol"]: r for r in analysis.mpl_breakdown(df, protocols).iter_rows(named=True)}
    x = np.arange(len(protocols))
    a = np.array([m[p]["missing_acks"] or 0.0 for p in protocols])
    lost = np.array([m[p]["lost_rtx"] or 0.0 for p in protocols])
    ax.bar(x, a, color="tab:cyan", label="missing ACKs")
    ax.bar(x, lost, bottom=a, color="tab:red", label="lost MPL retransmission")
    pub = published.MPL_BREAKDOWN["missing_acks_per_connection"]
    for i, p in enumerate(protocols):
        if p in pub:
            ax.plot(i, pub[p], "k_", ms=20, mew=2)
    ax.set_xticks(x, protocols)
    ax.set_ylabel("mean timeouts per connection")
    ax.set_title("Multiple-packet-loss timeouts by cause; — = the report's missing-ACK means")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
