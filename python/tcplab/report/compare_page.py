"""The comparison report (``report.html`` of a ``tcplab compare`` directory) and its
``compare.json``: the verdict table (mean, 95 % interval and min–max per mode; the
difference and whether it is beyond the seed-to-seed spread per pair of modes) and, per
flow, cwnd, smoothed RTT and throughput over time with the modes overlaid (mean over seeds,
min–max band), and the one-way delay CDF per mode. Built with the run report's toolkit
(:mod:`tcplab.report.html`, :mod:`tcplab.report.plots`); the numbers come from
:class:`tcplab.report.compare_stats.Comparison`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from tcplab.report.compare_stats import BEYOND, METRICS, UNDECIDED, Comparison, RunDir, Spread
from tcplab.report.drawing import drawn_page
from tcplab.report.html import details, esc, figure_html, fmt, html_table, page
from tcplab.report.overview import cdf_of_buckets
from tcplab.report.plots import COLORS, figure, legend_outside, series_at

if TYPE_CHECKING:
    from tcplab.schema import RunLike

__all__ = [
    "GRID_POINTS",
    "MAX_FLOWS",
    "mode_curves",
    "plot_delay_cdfs",
    "plot_overlays",
    "render_compare",
    "write_compare",
]

#: Samples of each curve over the run (cwnd and RTT: the value held at each; throughput:
#: bins between them).
GRID_POINTS = 200

#: Overlays are drawn for at most this many flows (the first ones); the table has them all.
MAX_FLOWS = 8

#: Mode colours, in the order of :data:`tcplab.compare.MODES` and then any other mode.
MODE_COLORS = {"simulated": "tab:blue", "live": "tab:orange", "linux": "tab:green"}


def _color(mode: str, i: int) -> str:
    return MODE_COLORS.get(mode, COLORS[(i + 3) % len(COLORS)])


def _duration_ns(c: Comparison) -> int:
    return max(int(r.canonical["duration"]) for m in c.modes for r in c.runs[m])


def mode_curves(runs: list[RunDir], flow: int, edges: np.ndarray) -> dict[str, np.ndarray]:
    """Per seed (rows) and time of ``edges`` (ns): ``cwnd`` (kB, the value held at each
    time), ``srtt`` (ms; NaN before the first sample), and ``throughput`` (Mb/s over each
    interval between edges, one fewer column). Runs without a series table are left out."""
    cwnd, srtt, tput = [], [], []
    width_s = np.diff(edges) / 1e9
    for r in runs:
        if r.series.height == 0:
            continue
        run = cast("RunLike", r)  # series_at reads what a RunDir has: canonical, series
        c = series_at(run, "cwnd", edges, before=np.nan)[flow] / 1e3
        s = series_at(run, "srtt_ns", edges, before=np.nan)[flow] / 1e6
        s[s <= 0] = np.nan
        d = series_at(run, "delivered", edges, before=0.0)[flow]
        cwnd.append(c)
        srtt.append(s)
        tput.append(np.diff(d) * 8 / width_s / 1e6)
    return {"cwnd": np.array(cwnd), "srtt": np.array(srtt), "throughput": np.array(tput)}


def _band(ax: Any, t: np.ndarray, rows: np.ndarray, color: str, label: str) -> None:
    """Mean over rows (seeds) as a line, min–max as a band (all-NaN columns left empty)."""
    if rows.size == 0:
        return
    with np.errstate(all="ignore"):
        ok = np.isfinite(rows).any(axis=0)
        safe = np.where(np.isfinite(rows), rows, np.nan)
        mean = np.full(t.size, np.nan)
        lo = np.full(t.size, np.nan)
        hi = np.full(t.size, np.nan)
        mean[ok] = np.nanmean(safe[:, ok], axis=0)
        lo[ok] = np.nanmin(safe[:, ok], axis=0)
        hi[ok] = np.nanmax(safe[:, ok], axis=0)
    ax.plot(t, mean, drawstyle="steps-post", lw=1.0, color=color, label=f"{label} (mean of {rows.shape[0]})")
    if rows.shape[0] > 1:
        ax.fill_between(t, lo, hi, step="post", color=color, alpha=0.18, lw=0)


def plot_overlays(c: Comparison, flow: int) -> Figure | None:
    """cwnd, smoothed RTT and throughput of ``flow`` over time, every mode that compares it
    overlaid: the mean over seeds and the seeds' min–max band. None without series."""
    info = c.flows[flow]
    modes = [m for m in c.modes if c.compared(m, info)]
    edges = np.linspace(0, _duration_ns(c), GRID_POINTS + 1).astype(np.int64)
    curves = {m: mode_curves(c.runs[m], flow, edges) for m in modes}
    if not any(v["cwnd"].size for v in curves.values()):
        return None
    fig, axes = figure(3, height=2.0)
    t = edges / 1e9
    for i, m in enumerate(modes):
        v = curves[m]
        _band(axes[0], t, v["cwnd"], _color(m, i), m)
        _band(axes[1], t, v["srtt"], _color(m, i), m)
        _band(axes[2], t[:-1], v["throughput"], _color(m, i), m)
    for ax, label in zip(axes, ("cwnd (kB)", "smoothed RTT (ms)", "throughput (Mb/s)")):
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        legend_outside(fig, ax)
    axes[0].set_title(f"{info['name']} ({info['controller']} + {info['recovery']})", fontsize=10, loc="left")
    axes[-1].set_xlabel("time (s)")
    return fig


def plot_delay_cdfs(c: Comparison, flows: list[int]) -> Figure | None:
    """The one-way delay CDF of each flow of ``flows`` (one panel each), one line per mode:
    the seeds' histograms added bucket by bucket. None when no run has one."""
    panels = []
    for f in flows:
        info = c.flows[f]
        lines = []
        for i, m in enumerate(c.modes):
            if not c.compared(m, info):
                continue
            parts = [
                r.delay_histogram.filter(
                    (pl.col("metric") == "delay") & (pl.col("flow_kind") == "tcp") & (pl.col("flow") == f)
                ).select("lower_ns", "width_ns", "packets")
                for r in c.runs[m]
                if r.delay_histogram.height
            ]
            parts = [p for p in parts if p.height]
            if parts:
                pooled = pl.concat(parts).group_by("lower_ns", "width_ns").agg(pl.col("packets").sum())
                lines.append((m, i, len(parts), cdf_of_buckets(pooled)))
        if lines:
            panels.append((info, lines))
    if not panels:
        return None
    fig, axes = figure(len(panels), height=1.9, sharex=False)
    for ax, (info, lines) in zip(axes, panels):
        for m, i, n, (x, y) in lines:
            ax.step(x, y, where="post", color=_color(m, i), label=f"{m} ({n} seeds)")
        ax.set_title(info["name"], fontsize=10, loc="left")
        ax.set_ylabel("fraction")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        legend_outside(fig, ax)
    axes[-1].set_xlabel("one-way delay (ms)")
    return fig


# ---- the page ----------------------------------------------------------------------------


def _spread_text(s: Spread | None) -> str:
    if s is None or s.n == 0:
        return "–"
    if s.ci_low is None:
        return f"{fmt(s.mean)} (n={s.n})"
    return f"{fmt(s.mean)} [{fmt(s.ci_low)}, {fmt(s.ci_high)}] ({fmt(s.min)}–{fmt(s.max)})"


def verdict_table_html(c: Comparison) -> str:
    """One row per flow and quantity: each mode's spread, then each pair's difference and
    verdict (beyond the spread in red)."""
    pairs = sorted({(v.a, v.b) for v in c.verdicts}, key=lambda p: (c.modes.index(p[0]), c.modes.index(p[1])))
    by = {(v.flow, v.metric, v.a, v.b): v for v in c.verdicts}
    headers = ["flow", "quantity", *c.modes, *(f"{b} − {a}" for a, b in pairs)]
    rows: list[str] = []
    for f in c.flows:
        for m in METRICS:
            cells = [esc(f["name"]), esc(f"{m.label} ({m.unit})")]
            for mode in c.modes:
                cells.append(esc(_spread_text(c.spreads.get((f["flow"], m.key, mode)))))
            for a, b in pairs:
                v = by.get((f["flow"], m.key, a, b))
                if v is None:
                    cells.append("<span class='muted'>not compared</span>")
                    continue
                rel = "" if v.rel_diff is None else f" ({100 * v.rel_diff:+.1f} %)"
                cls = "bad" if v.verdict == BEYOND else ("muted" if v.verdict == UNDECIDED else "ok")
                diff = "–" if v.diff is None else f"{v.diff:+.3g}"
                cells.append(f"{esc(diff + rel)} <span class='{cls}'>{esc(v.verdict)}</span>")
            rows.append("<tr>" + "".join(f"<td class='{'l' if i < 2 else ''}'>{x}</td>" for i, x in enumerate(cells)) + "</tr>")
    head = "".join(f"<th class='{'l' if i < 2 else ''}'>{esc(h)}</th>" for i, h in enumerate(headers))
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


def _modes_html(c: Comparison) -> str:
    rows: list[list[Any]] = []
    for mode, runs in c.runs.items():
        if runs:
            ex = c.excluded.get(mode, {})
            rows.append([mode, ", ".join(str(r.seed) for r in runs), "; ".join(f"{k}: {v}" for k, v in ex.items()) or "–"])
    for mode, why in c.skipped.items():
        rows.append([mode, "skipped", why])
    return html_table(["mode", "seeds", "not compared"], rows, left=3)


RULE_TEXT = (
    "Per flow, mode and quantity: the mean over seeds, its 95 % Student-t interval [low, high] "
    "and the seeds' min–max. A difference of two modes' means is <b>beyond the seed-to-seed "
    "spread</b> when it exceeds the half-width of its 95 % interval by Welch's two-sample t "
    "(t with the Welch–Satterthwaite degrees of freedom rounded down, times √(sd_a²/n_a + "
    "sd_b²/n_b)); undecided with fewer than 2 seeds in a mode. At 95 %, about 1 in 20 "
    "comparisons of modes that do not differ is flagged by chance (docs/compare.md)."
)


def render_compare(c: Comparison) -> str:
    """The comparison report as one HTML string."""
    return drawn_page(lambda: _compare_page(c))


def _compare_page(c: Comparison) -> str:
    counts = c.counts()
    parts = [
        f"<h1>{esc(c.scenario)}: {esc(' vs '.join(c.modes) or 'nothing run')}</h1>",
        "<p>" + ", ".join(f"{n} {esc(v)}" for v, n in counts.items()) + "</p>",
        _modes_html(c),
        *(f"<p class='muted'>{esc(n)}</p>" for n in c.notes),
        "<h2>Per flow: means, spreads and verdicts</h2>",
        f"<p class='muted'>{RULE_TEXT}</p>",
        verdict_table_html(c),
    ]
    flows = [f["flow"] for f in c.flows][:MAX_FLOWS]
    if len(c.flows) > MAX_FLOWS:
        parts.append(f"<p class='muted'>Figures for the first {MAX_FLOWS} of {len(c.flows)} flows.</p>")
    parts.append("<h2>Over time</h2>")
    for f in flows:
        fig = plot_overlays(c, f)
        name = esc(c.flows[f]["name"])
        if fig is None:
            parts.append(f"<p class='muted'>{name}: no series (trace.series = \"off\"?).</p>")
            continue
        body = figure_html(
            fig,
            f"{name}: congestion window, smoothed RTT and throughput (delivered bytes per 1/{GRID_POINTS} of the "
            "run) over time; per mode the mean over seeds (line) and the seeds' min–max (band).",
            f"{c.flows[f]['name']}: cwnd, RTT and throughput over time",
        )
        parts.append(details(f"{name}: cwnd, RTT and throughput", body, open_=len(flows) <= 4))
    fig = plot_delay_cdfs(c, flows)
    parts.append("<h2>One-way delay</h2>")
    if fig is None:
        parts.append("<p class='muted'>No one-way delay histograms in these runs.</p>")
    else:
        parts.append(figure_html(fig, "CDF of the one-way delay of each flow's data packets, per mode, the seeds pooled.", "one-way delay CDF"))
    return page(f"tcplab compare: {c.scenario}", parts)


def write_compare(c: Comparison, directory: str | Path) -> tuple[Path, Path]:
    """Writes ``report.html`` and ``compare.json`` into ``directory``; their paths."""
    d = Path(directory)
    report = d / "report.html"
    report.write_text(render_compare(c), encoding="utf-8")
    doc = d / "compare.json"
    doc.write_text(json.dumps(c.document(), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return report, doc
