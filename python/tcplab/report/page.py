"""The report page (:func:`render_report`) and the file (:func:`write_report`).

The page opens with the aggregate view (:mod:`tcplab.report.overview`), whose size does not
depend on the number of flows; the per-flow detail follows folded (``<details>``), with the
per-flow figures for at most :data:`MAX_DETAIL_FLOWS` flows (chosen evenly across the
throughput ranking when there are more), :data:`FLOWS_PER_FIGURE` flows per image. Tables
scroll inside their container. So the page holds a bounded number of images, each at most
``MAX_IMAGE_PX`` pixels tall, whatever the number of flows (docs/results.md, "report.html").
"""

from __future__ import annotations

import gc
from pathlib import Path

from tcplab.report.drawing import drawn_page
from tcplab.report.eth import eth_html
from tcplab.report.html import details, esc, figure_html, page
from tcplab.report.interactive import plotter_js
from tcplab.report.overview import overview_html
from tcplab.report.plots import MAX_LINES, plot_queues, plot_time_sequence, plot_windows
from tcplab.report.selection import spread_flows
from tcplab.report.sections import (
    classification_html,
    conservation_html,
    links_html,
    params_html,
    summary_html,
)
from tcplab.schema import RunLike

__all__ = ["FLOWS_PER_FIGURE", "MAX_DETAIL_FLOWS", "detail_flows", "render_report", "write_report"]

#: Per-flow figures are drawn for at most this many flows.
MAX_DETAIL_FLOWS = 8
#: Flows per per-flow figure (one panel each).
FLOWS_PER_FIGURE = 4


def detail_flows(result: RunLike) -> list[int]:
    """The flows whose per-flow figures the page shows: all up to :data:`MAX_DETAIL_FLOWS`,
    else that many spread evenly over the throughput ranking (slowest to fastest), in flow
    order (:func:`tcplab.report.selection.spread_flows`)."""
    return spread_flows(result, MAX_DETAIL_FLOWS)


def _flow_figures(result: RunLike, flows: list[int], caption_base: str) -> list[str]:
    parts = []
    fig = plot_windows(result, flows)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                "Congestion window and slow-start threshold (in segments of the flow's MSS) vs time; "
                "▼ fast retransmit (recovery entry), ✕ retransmission timeout, at the window set by the "
                "response. The y axis ends at 1.25 × the 95th percentile of the window: excursions above it "
                "(NewReno's window inflated by duplicate ACKs) are drawn to the edge and marked ▲. "
                f"ssthresh is not drawn while unbounded. {caption_base}.",
                "cwnd and ssthresh vs time",
            )
        )
    else:
        parts.append("<p class='muted'>No window plot: the series table is empty (trace.series = \"off\"?).</p>")
    fig = plot_time_sequence(result, flows=flows)
    if fig is not None:
        parts.append(
            figure_html(
                fig,
                "Time-sequence plot: first byte of every data segment sent (blue), retransmissions (red), "
                f"data packets dropped anywhere in the network (black ✕). {caption_base}.",
                "time-sequence plot",
            )
        )
        fig = plot_time_sequence(result, zoom=True, flows=flows)
        if fig is not None:
            parts.append(
                figure_html(
                    fig,
                    "Time-sequence plot zoomed on each flow's first loss (5 RTTs before to 15 after): "
                    f"segments sent (blue), retransmissions (red), drops (black ✕). {caption_base}.",
                    "time-sequence plot around the first loss",
                )
            )
    else:
        parts.append(
            "<p class='muted'>No time-sequence plot: the segments table is empty (trace.segments = false?).</p>"
        )
    return parts


def _detail_html(result: RunLike, caption_base: str) -> str:
    """The per-flow figures, folded, a few flows per block."""
    flows = detail_flows(result)
    if not flows:
        return ""
    names = result.flows["name"].to_list()
    n = result.flows.height
    parts = ["<h2>Per-flow detail</h2>"]
    if len(flows) < n:
        parts.append(
            f"<p class='muted'>Figures for {len(flows)} of the {n} flows, spread evenly from the slowest to "
            "the fastest; every flow is in flows.parquet and summary.json.</p>"
        )
    for k in range(0, len(flows), FLOWS_PER_FIGURE):
        chunk = flows[k : k + FLOWS_PER_FIGURE]
        title = "Windows and time-sequence plots: " + ", ".join(esc(names[f]) for f in chunk)
        parts.append(details(title, "\n".join(_flow_figures(result, chunk, caption_base)), open_=n <= MAX_LINES))
    return "\n".join(parts)


def _live_html(result: RunLike) -> str:
    """A live run's verdict on its timing fidelity (docs/live.md), first thing in the report."""
    live = getattr(result, "live", None)
    if not live:
        return ""
    from tcplab.live.fidelity import verdict_line

    stacks = ", ".join(f"{k}: {', '.join(v)}" for k, v in live.get("stacks", {}).items() if v)
    style = "" if live.get("verdict") == "ok" else " style='color:#b00;font-weight:bold'"
    return (f"<p{style}>Live run on real packets ({esc(stacks)}). {esc(verdict_line(live))}</p>")


def render_report(result: RunLike) -> str:
    """The report as one HTML string (images embedded as data URIs)."""
    # matplotlib makes many objects, and Python's full collections (about 0.1 s each with the
    # modules of a run loaded) would trace them again and again while the page is built; a
    # report leaves a bounded number of figures (whatever the number of flows) for the next
    # collection instead.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return drawn_page(lambda: _render(result))
    finally:
        if enabled:
            gc.enable()


def _render(result: RunLike) -> str:
    sc = result.scenario
    caption_base = esc(sc.describe())
    nflows = result.flows.height
    flows = result.flow_summary()  # once: three sections read it
    classification = classification_html(result, flows)
    if classification and nflows > MAX_LINES:
        classification = details("Loss classification (Veno Table I form), per flow", classification)
    parts = [
        f"<h1>{esc(result.name)}</h1>",
        f"<p class='muted'>{esc(result.canonical.get('description') or '')}</p>",
        _live_html(result),
        overview_html(result, caption_base),
        "<h2>Per-flow summary</h2>",
        summary_html(result, flows),
        conservation_html(result),
        classification,
        eth_html(result, flows),
    ]
    qp = plot_queues(result)
    if qp is not None:
        fig, names = qp
        parts.append("<h2>Queues</h2>")
        parts.append(
            figure_html(
                fig,
                f"Queue length (packets, including the one being serialized) vs time of the link direction(s) where packets queued behind the one in service ({len(names)} shown, busiest first at most 4). {caption_base}.",
                "queue length vs time",
            )
        )
    else:
        parts.append("<p class='muted'>No queue plot: no packet ever waited behind the one in service.</p>")
    parts += [
        _detail_html(result, caption_base),
        "<h2>Scenario</h2>",
        params_html(result),
        "<h2>Links</h2>",
        links_html(result),
    ]
    interactive = any("<figure class='interactive'>" in p for p in parts)
    return page(f"tcplab report: {result.name}", parts, head=plotter_js() if interactive else "")


def write_report(result: RunLike, path: str | Path) -> Path:
    """Writes ``report.html`` for ``result`` to ``path``."""
    p = Path(path)
    p.write_text(render_report(result), encoding="utf-8")
    return p
