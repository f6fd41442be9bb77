"""The report's "ETH metrics" section: the per-flow measurements of the ETH report
(Bolliger, Hengartner, Gross; docs/eth-metrics.md, docs/timeouts.md).

* a stacked bar of timeouts by cause per flow (per protocol when there are many flows);
* loss events (single / multiple losses in one window), loss-indication probability and
  the duplicate ACKs that triggered each recovery;
* use of the n-th SACK block (the report's Table 6).
"""

from __future__ import annotations

from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab.report.html import esc, fmt, html_table, png_data_uri
from tcplab.report.selection import flows_note, table_flows
from tcplab.schema import DUPACK_BINS, TIMEOUT_CLASSES, RunLike


__all__ = ["eth_html", "plot_timeout_causes", "timeout_bars"]

#: Above this many flows the timeout bars are drawn per protocol (controller + recovery).
MAX_FLOW_BARS = 16

_CLASS_LABELS = {
    "lost_timeout_rtx": "lost timeout retransmission",
    "lost_fast_rtx": "lost fast retransmission",
    "mpl_lost_rtx": "multiple loss: lost retransmission",
    "mpl_missing_acks": "multiple loss: missing ACKs",
    "non_trigger": "non-trigger",
    "other": "other",
}
_CLASS_COLORS = ["tab:red", "tab:orange", "tab:purple", "tab:blue", "tab:green", "tab:gray"]


def timeout_bars(flows: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[int]]]:
    """Bar labels and, per timeout class, the count of each bar: one bar per flow
    ("name (recovery)"), or per protocol ("controller/recovery", summed over its flows)
    when there are more than :data:`MAX_FLOW_BARS` flows."""
    if len(flows) <= MAX_FLOW_BARS:
        labels = [f"{f['name']} ({f['recovery']})" for f in flows]
        groups = [[f] for f in flows]
    else:
        by: dict[str, list[dict[str, Any]]] = {}
        for f in flows:
            by.setdefault(f"{f['controller']}/{f['recovery']}", []).append(f)
        labels = sorted(by)
        groups = [by[k] for k in labels]
    counts = {
        c: [sum(f["eth"]["timeouts_by_class"][c] for f in g) for g in groups] for c in TIMEOUT_CLASSES
    }
    return labels, counts


def plot_timeout_causes(flows: list[dict[str, Any]]) -> Figure | None:
    """Stacked bars of timeouts by cause; None when no flow timed out."""
    labels, counts = timeout_bars(flows)
    if not any(sum(v) for v in counts.values()):
        return None
    fig = Figure(figsize=(10, 3.6))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    fig.subplots_adjust(left=0.08, right=0.7, top=0.92, bottom=0.3)
    x = list(range(len(labels)))
    bottom = [0] * len(labels)
    for c, color in zip(TIMEOUT_CLASSES, _CLASS_COLORS):
        ax.bar(x, counts[c], bottom=bottom, color=color, label=_CLASS_LABELS[c], width=0.7)
        bottom = [b + v for b, v in zip(bottom, counts[c])]
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("timeouts")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return fig


def _loss_table(flows: list[dict[str, Any]]) -> str:
    rows = []
    for f in flows:
        m = f["eth"]
        ev = m["loss_events"]
        rows.append(
            [
                f["name"],
                f["recovery"],
                f["timeouts"],
                ev["single"],
                ev["multiple"],
                ev["drops"],
                ev["max"],
                fmt(m["loss_indication_p"]),
                f["fast_retransmits"],
                fmt(m["dupacks_per_recovery"]),
            ]
            + [m["recoveries_by_dupacks"][b] for b in DUPACK_BINS]
        )
    return html_table(
        [
            "flow",
            "recovery",
            "timeouts",
            "single-loss events",
            "multiple-loss events",
            "drops in events",
            "largest event",
            "p",
            "recoveries",
            "dup ACKs / recovery",
        ]
        + [f"recoveries after {b.replace('plus', '+')} dup ACKs" for b in DUPACK_BINS],
        rows,
        left=2,
    )


def _sack_table(flows: list[dict[str, Any]]) -> str:
    rows = []
    for f in flows:
        blocks = f["eth"]["sack_blocks"]
        used_total = sum(b["used"] for b in blocks)
        if not any(b["carried"] for b in blocks):
            continue
        row: list[Any] = [f["name"], f["recovery"], used_total]
        for b in blocks:
            share = 100.0 * b["used"] / used_total if used_total else None
            row.append(f"{b['used']}/{b['carried']}" + (f" ({share:.1f}%)" if share is not None else ""))
        rows.append(row)
    if not rows:
        return "<p class='muted'>No ACK carried SACK blocks.</p>"
    return html_table(
        ["flow", "recovery", "used blocks"] + [f"block {n}" for n in range(1, 7)],
        rows,
        left=2,
    )


def eth_html(result: RunLike, flows: list[dict[str, Any]]) -> str:
    """The "ETH metrics" section of the report; ``flows``: ``result.flow_summary()``."""
    if not flows:
        return ""
    parts = [
        "<h2>ETH metrics</h2>",
        "<p class='muted'>The per-flow measurements of the ETH report (Bolliger, Hengartner, Gross; "
        "docs/eth-metrics.md and docs/timeouts.md).</p>",
    ]
    fig = plot_timeout_causes(flows)
    if fig is not None:
        per = "flow (recovery strategy)" if len(flows) <= MAX_FLOW_BARS else "protocol (controller/recovery)"
        parts.append(
            f'<figure><img alt="timeouts by cause" src="{png_data_uri(fig)}">'
            f"<figcaption>Retransmission timeouts per {esc(per)}, stacked by cause (the report's §10.2 "
            "taxonomy, classified from the simulator's ground truth).</figcaption></figure>"
        )
    else:
        parts.append("<p class='muted'>No flow had a retransmission timeout.</p>")
    parts.append(
        "<h3>Loss events and recovery triggers</h3><p class='muted'>A loss event is a window reduction "
        "(recovery entry, restart or timeout) with the data transmissions dropped since the previous one "
        "and sent before it: single = one drop, multiple = more (report Table 3). p = (timeouts + "
        "recoveries) / segments sent. Dup ACKs: duplicate ACKs in a row when a recovery began, the "
        "triggering one included (3 for Reno, 1 for Rate-Halving).</p>"
    )
    shown = [flows[i] for i in table_flows(result)]
    note = flows_note(len(shown), len(flows))
    parts.append(_loss_table(shown) + note)
    parts.append(
        "<h3>Use of the n-th SACK block</h3><p class='muted'>used/carried per position: ACKs whose "
        "n-th SACK block covered data not SACKed before / ACKs with at least n blocks; in parentheses the "
        "share of all used blocks at that position (report Table 6). Only strategies that read SACK use "
        "blocks.</p>"
    )
    parts.append(_sack_table(shown) + note)
    return "\n".join(parts)
