"""Which flows and link directions the run report's per-flow tables show: a bounded number,
so that the page stays about the same size for 2 or 10,000 flows (issue 27 §4) while every
row stays in the data files (``flows.parquet``, ``links.parquet``, ``summary.json``...).

Up to :data:`MAX_TABLE_ROWS` flows every flow is shown; above, that many spread evenly over
the throughput ranking, from the slowest to the fastest (:func:`spread_flows`, the rule the
per-flow figures follow with fewer flows), in flow order. Link directions: the busiest
:data:`MAX_TABLE_ROWS` (by utilization, then packets sent), in link order."""

from __future__ import annotations

import numpy as np

from tcplab.schema import RunLike

__all__ = ["MAX_TABLE_ROWS", "flows_note", "shown_note", "spread_flows", "table_flows", "table_links"]

#: Rows of a per-flow or per-link table at most: about three heights of a table's scroll
#: container (36 lines each); past that a reader turns to the data files.
MAX_TABLE_ROWS = 100


def spread_flows(result: RunLike, n: int) -> list[int]:
    """All flows when there are at most ``n``, else ``n`` of them spread evenly over the
    throughput ranking (the slowest and the fastest among them), in flow order."""
    tp = np.array(result.flows["throughput_bps"].to_list(), dtype=float)
    if tp.size <= n:
        return list(range(tp.size))
    ranked = np.argsort(tp, kind="stable")
    picks = np.unique(np.round(np.linspace(0, tp.size - 1, n)).astype(int))
    return sorted(int(ranked[i]) for i in picks)


def table_flows(result: RunLike) -> list[int]:
    """The TCP flows the per-flow tables show (:data:`MAX_TABLE_ROWS` at most)."""
    return spread_flows(result, MAX_TABLE_ROWS)


def table_links(result: RunLike) -> list[int]:
    """The link directions the links table shows: all, or the busiest
    :data:`MAX_TABLE_ROWS` (utilization, then packets sent), in link order."""
    links = result.links
    if links.height <= MAX_TABLE_ROWS:
        return list(range(links.height))
    util = np.array(links["utilization"].to_list(), dtype=float)
    sent = np.array(links["packets_sent"].to_list(), dtype=float)
    busiest = np.lexsort((-sent, -util))[:MAX_TABLE_ROWS]  # last key first: utilization
    return sorted(int(i) for i in busiest)


def shown_note(shown: int, total: int, what: str, rule: str, files: str) -> str:
    """A line under a table that shows ``shown`` of ``total`` ``what`` (empty when it shows
    all): which ones (``rule``) and where every one is (``files``)."""
    if shown >= total:
        return ""
    return f"<p class='muted'>{shown} of the {total} {what}, {rule}; every one is in {files}.</p>"


def flows_note(shown: int, total: int) -> str:
    """:func:`shown_note` for a table of the flows :func:`table_flows` picks."""
    return shown_note(
        shown, total, "flows", "spread evenly over the throughput ranking from the slowest to the fastest",
        "flows.parquet and summary.json",
    )
