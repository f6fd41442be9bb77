"""The report page: every section and figure in order (:func:`render_report`) and the file
(:func:`write_report`)."""

from __future__ import annotations

from pathlib import Path

from tcplab.report.eth import eth_html
from tcplab.report.html import esc, figure_html, page
from tcplab.report.plots import plot_queues, plot_throughput, plot_time_sequence, plot_windows
from tcplab.report.sections import (
    classification_html,
    conservation_html,
    links_html,
    params_html,
    summary_html,
)
from tcplab.schema import RunLike


def render_report(result: RunLike) -> str:
    """The report as one HTML string (images embedded as data URIs)."""
    sc = result.scenario
    caption_base = esc(sc.describe())
    parts = [
        f"<h1>{esc(result.name)}</h1>",
        f"<p class='muted'>{esc(result.canonical.get('description') or '')}</p>",
        "<h2>Per-flow summary</h2>",
        summary_html(result),
        conservation_html(result),
        classification_html(result),
        eth_html(result),
        "<h2>Plots</h2>",
    ]
    fig = plot_windows(result)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                f"Congestion window and slow-start threshold (in segments of the flow's MSS) vs time; "
                f"▼ fast retransmit (recovery entry), ✕ retransmission timeout, at the window set by the response. "
                f"ssthresh is not drawn while unbounded. {caption_base}.",
                "cwnd and ssthresh vs time",
            )
        )
    else:
        parts.append(
            "<p class='muted'>No window plot: the series table is empty (trace.series = \"off\"?).</p>"
        )
    tp = plot_throughput(result)
    if tp is not None:
        fig, width = tp
        parts.append(
            figure_html(
                fig,
                f"Throughput per flow (application bytes delivered in order, bins of {width * 1e3:.0f} ms; a bar above the bottleneck rate is data held out of order and released when a hole was repaired). {caption_base}.",
                "throughput vs time",
            )
        )
    qp = plot_queues(result)
    if qp is not None:
        fig, names = qp
        parts.append(
            figure_html(
                fig,
                f"Queue length (packets, including the one being serialized) vs time of the link direction(s) where packets queued behind the one in service ({len(names)} shown, busiest first at most 4). {caption_base}.",
                "queue length vs time",
            )
        )
    else:
        parts.append("<p class='muted'>No queue plot: no packet ever waited behind the one in service.</p>")
    fig = plot_time_sequence(result)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                f"Time-sequence plot: first byte of every data segment sent (blue), retransmissions (red), "
                f"data packets dropped anywhere in the network (black ✕). {caption_base}.",
                "time-sequence plot",
            )
        )
        fig = plot_time_sequence(result, zoom=True)
        if fig is not None:
            parts.append(
                figure_html(
                    fig,
                    f"Time-sequence plot zoomed on each flow's first loss (5 RTTs before to 15 after): "
                    f"segments sent (blue), retransmissions (red), drops (black ✕). {caption_base}.",
                    "time-sequence plot around the first loss",
                )
            )
    else:
        parts.append(
            "<p class='muted'>No time-sequence plot: the segments table is empty (trace.segments = false?).</p>"
        )
    parts += [
        "<h2>Scenario</h2>",
        params_html(result),
        "<h2>Links</h2>",
        links_html(result),
    ]
    return page(f"tcplab report: {result.name}", parts)


def write_report(result: RunLike, path: str | Path) -> Path:
    """Writes ``report.html`` for ``result`` to ``path``."""
    p = Path(path)
    p.write_text(render_report(result), encoding="utf-8")
    return p
