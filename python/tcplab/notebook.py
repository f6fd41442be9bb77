"""How results and scenarios show themselves in Jupyter (``_repr_html_``): a run as its
name and seed, its flows table (the columns a reader looks at first) and a small plot of
every flow's congestion window; a scenario as its description. The functions take the
pieces they show, not the objects (which import this module to show themselves)."""

from __future__ import annotations

import html
import io
from typing import Any

#: The flows columns the notebook view shows, in this order (those the table has).
FLOW_COLUMNS = ("name", "controller", "recovery", "throughput_bps", "goodput", "retransmits",
                "timeouts", "mean_rtt_ns", "completed")
#: Points per flow in the notebook's cwnd plot (the table keeps every row).
PLOT_POINTS = 1000


def _cwnd_svg(series: Any, names: dict[int, str]) -> str:
    """An inline SVG of cwnd over time per flow, at most PLOT_POINTS points per flow; "" when
    there is no series."""
    if series.height == 0:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.4), dpi=80)
    try:
        for flow, part in series.group_by("flow", maintain_order=True):
            fid = int(flow[0]) if isinstance(flow, tuple) else int(flow)
            step = max(1, part.height // PLOT_POINTS)
            t = part["time_ns"].to_numpy()[::step] / 1e9
            w = part["cwnd"].to_numpy()[::step] / 1e3
            ax.plot(t, w, lw=0.8, label=names.get(fid, str(fid)))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (kB)")
        if len(names) <= 8:
            ax.legend(fontsize=7, loc="upper right")
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
        return buf.getvalue()
    finally:
        plt.close(fig)


def run_html(name: str, seed: int, duration_ns: int, wall_time_s: float, flows: Any, series: Any) -> str:
    """A run (`flows` and `series`: its tables): name, seed and times, its flows table and
    its cwnd plot."""
    import polars as pl

    head = (f"<b>{html.escape(name)}</b> seed {seed}, {duration_ns / 1e9:g} s simulated "
            f"in {wall_time_s:.2f} s wall")
    names = {i: str(n) for i, n in enumerate(flows["name"].to_list())} if "name" in flows.columns else {}
    flows = flows.select([c for c in FLOW_COLUMNS if c in flows.columns])
    if "throughput_bps" in flows.columns:
        flows = flows.with_columns((pl.col("throughput_bps") / 1e6).round(3).alias("throughput_bps")) \
            .rename({"throughput_bps": "throughput Mb/s"})
    if "mean_rtt_ns" in flows.columns:
        flows = flows.with_columns((pl.col("mean_rtt_ns") / 1e6).round(1).alias("mean_rtt_ns")) \
            .rename({"mean_rtt_ns": "mean RTT ms"})
    return "".join([f"<div>{head}</div>", flows._repr_html_(), _cwnd_svg(series, names)])


def scenario_html(description: str, canonical: dict[str, Any]) -> str:
    """A scenario: its `description`, as ``tcplab validate`` prints it, and a row per flow of
    its `canonical` form."""
    from tcplab.units import format_duration, format_size

    rows = []
    for f in canonical["flows"]:
        params = ", ".join(f"{k}={v}" for k, v in f["controller"]["params"].items())
        cc = f["controller"]["name"] + (f" ({params})" if params else "")
        size = "" if f.get("bytes") is None else format_size(f["bytes"])
        cells = [f.get("name") or "", f"{f['src']} → {f['dst']}", cc, f["recovery"]["name"],
                 format_duration(f["start"]), size]
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("flow", "path", "controller", "recovery", "start", "bytes"))
    table = f"<table><tr>{head}</tr>{''.join(rows)}</table>" if rows else ""
    return f"<pre>{html.escape(description)}</pre>{table}"
