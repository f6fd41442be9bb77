"""A self-contained HTML report of a run: the standard plots (PNG, base64-embedded) and tables.

Plots (matplotlib, Agg canvas; no pyplot global state):

* congestion window and slow-start threshold vs time per flow, with fast-retransmit and
  timeout markers from the events table;
* throughput vs time per flow, binned from the ``delivered`` series;
* queue length vs time for the (at most 4) busiest link directions where packets queued;
* time-sequence plot per flow (segments table): originals, retransmissions, drops.

Tables: per-flow summary, UDP flows, the loss classification in Veno's Table I form (when
any flow had loss responses), the ETH report's measurements (``report_eth``: timeouts by
cause as stacked bars, loss events, dup ACKs per recovery, SACK-block use), scenario
parameters, links.

The package: :mod:`~tcplab.report.plots` (the figures), :mod:`~tcplab.report.sections` (the
CSS, table helpers and HTML sections) and :mod:`~tcplab.report.page` (the page:
:func:`render_report`, :func:`write_report`). The private helpers other reports reuse
(``tcplab.campaign.report``, ``tcplab.report_eth``, ``tcplab.reproduce``) are importable from
``tcplab.report``.
"""

from __future__ import annotations

from tcplab.report.page import render_report, write_report  # noqa: F401
from tcplab.report.plots import (  # noqa: F401 (re-exported)
    _COLORS,
    _MAX_POINTS,
    _UNBOUNDED,
    _figure,
    _flow_label,
    _flow_names,
    _layout,
    _link_specs,
    _mss,
    _png,
    _thin,
    _zoom_windows,
    plot_queues,
    plot_throughput,
    plot_time_sequence,
    plot_windows,
    throughput_bins,
)
from tcplab.report.sections import (  # noqa: F401 (re-exported)
    _CSS,
    _classification_html,
    _conservation_html,
    _e,
    _eth_html,
    _figure_html,
    _fmt,
    _linkdir,
    _links_html,
    _ms,
    _params,
    _params_html,
    _summary_html,
    _table,
    _wlan_text,
)

__all__ = ["write_report", "render_report"]
