"""A sweep's top level (docs/sweeps.md): beside the hash-named point folders, ``flows.parquet`` (every
point's flows with the point's parameters and each flow's 95th-percentile one-way delay) and
``report.html`` with Pantheon's view: throughput against 95th-percentile one-way delay, a
marker per flow and run, and per scheme (controller + recovery) the mean and the 1-σ ellipse
of its runs (the covariance ellipse of (delay, throughput), as Pantheon's reports draw it);
the delay axis runs right to left, so better is up and right."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from tcplab.sweep.store import SweepResult

#: The largest sweep ``tcplab sweep`` summarizes (the summary reads every point's tables).
SUMMARY_MAX_POINTS = 20_000
#: What makes a scheme: the flows columns naming its stack.
SCHEME = ("controller", "recovery")


def sweep_flows(res: SweepResult) -> pl.DataFrame:
    """Every point's ``flows`` with its parameters (``SweepResult.flows``) and each TCP flow's
    ``delay_p95_ns`` from the ``delay`` table."""
    flows = res.flows()
    if flows.height == 0:
        return flows
    delay = res.table("delay")
    if delay.height and "delay_p95_ns" in delay.columns:
        # the delay table's `flow` is the flows table's `id` (TCP flows)
        p95 = delay.filter(pl.col("flow_kind") == "tcp").select("point", pl.col("flow").alias("id"), "delay_p95_ns")
        flows = flows.join(p95, how="left", on=["point", "id"])
    return flows


def _scheme(row: dict[str, Any]) -> str:
    return " + ".join(str(row[c]) for c in SCHEME if c in row and row[c] is not None)


def schemes(flows: pl.DataFrame) -> list[dict[str, Any]]:
    """Per scheme: its runs' (p95 delay ms, throughput Mb/s) pairs, their means and the 1-σ
    ellipse (centre, semi-axes and angle of the covariance's eigenvectors); an ellipse needs
    at least 3 runs."""
    if flows.height == 0 or "delay_p95_ns" not in flows.columns:
        return []
    out: dict[str, list[tuple[float, float]]] = {}
    for row in flows.iter_rows(named=True):
        if row.get("delay_p95_ns") is None or row.get("throughput_bps") is None:
            continue
        out.setdefault(_scheme(row), []).append((row["delay_p95_ns"] / 1e6, row["throughput_bps"] / 1e6))
    result = []
    for name, pts in out.items():
        n = len(pts)
        mx = sum(p[0] for p in pts) / n
        my = sum(p[1] for p in pts) / n
        entry: dict[str, Any] = {"scheme": name, "n": n, "delay_ms": mx, "throughput_mbps": my, "points": pts,
                                 "ellipse": None}
        if n >= 3:
            sxx = sum((p[0] - mx) ** 2 for p in pts) / (n - 1)
            syy = sum((p[1] - my) ** 2 for p in pts) / (n - 1)
            sxy = sum((p[0] - mx) * (p[1] - my) for p in pts) / (n - 1)
            tr, det = sxx + syy, sxx * syy - sxy * sxy
            root = math.sqrt(max(tr * tr / 4 - det, 0.0))
            l1, l2 = tr / 2 + root, max(tr / 2 - root, 0.0)
            angle = math.degrees(math.atan2(l1 - sxx, sxy)) if sxy else (0.0 if sxx >= syy else 90.0)
            entry["ellipse"] = {"width": 2 * math.sqrt(l1), "height": 2 * math.sqrt(l2), "angle": angle}
        result.append(entry)
    return sorted(result, key=lambda e: e["scheme"])


def _plot(groups: list[dict[str, Any]]) -> str:
    from matplotlib.figure import Figure
    from matplotlib.patches import Ellipse

    from tcplab.report.html import figure_html

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for i, g in enumerate(groups):
        color = f"C{i % 10}"
        xs, ys = zip(*g["points"], strict=True)
        ax.scatter(xs, ys, s=10, color=color, alpha=0.5)
        ax.scatter([g["delay_ms"]], [g["throughput_mbps"]], s=50, color=color, marker="o", edgecolor="black",
                   label=f"{g['scheme']} (n = {g['n']})")
        if g["ellipse"]:
            e = g["ellipse"]
            ax.add_patch(Ellipse((g["delay_ms"], g["throughput_mbps"]), e["width"], e["height"], angle=e["angle"],
                                 fill=False, color=color, lw=1.2))
    ax.invert_xaxis()
    ax.set_xlabel("95th percentile one-way delay (ms)")
    ax.set_ylabel("throughput (Mb/s)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return figure_html(fig, "Throughput against 95th-percentile one-way delay, a marker per flow and run; per "
                            "scheme its mean and 1-σ ellipse (Pantheon's view). Better is up and to the right.",
                       "scatter of throughput against delay per scheme")


def write_sweep_summary(res: SweepResult, out: Path) -> tuple[Path, Path]:
    """``flows.parquet`` and ``report.html`` of the sweep into `out` (its store)."""
    from tcplab.report.html import esc, fmt, html_table, page

    flows = sweep_flows(res)
    flows.write_parquet(out / "flows.parquet")
    groups = schemes(flows)
    rows = [[esc(g["scheme"]), g["n"], fmt(g["throughput_mbps"]), fmt(g["delay_ms"])] for g in groups]
    body = [f"<h1>Sweep {esc(out.name)}: {len(res.points)} points</h1>",
            "<p>Every point's flows, with the point's parameters: <code>flows.parquet</code>; each point's "
            "results under <code>points/</code> (index: <code>sweep.json</code>).</p>"]
    if groups:
        body += [_plot(groups),
                 html_table(["scheme", "runs", "mean throughput Mb/s", "mean p95 delay ms"], rows)]
    else:
        body.append("<p>No one-way delays were recorded (trace settings), so no delay plot.</p>")
    (out / "report.html").write_text(page(f"sweep {out.name}", body))
    return out / "flows.parquet", out / "report.html"
