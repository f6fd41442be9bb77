"""The reports: self-contained HTML pages with embedded figures.

* the run report (``report.html`` of a results directory): :mod:`~tcplab.report.overview`
  (the aggregate view: throughput per flow and its CDF, Jain's index, throughput and RTT over
  time as percentiles, one-way delay, throughput vs 95th-percentile delay, the delay table),
  :mod:`~tcplab.report.plots` (the per-flow figures: windows, throughput, queues,
  time-sequence), :mod:`~tcplab.report.sections` (per-flow
  summary, conservation, loss classification, scenario, links), :mod:`~tcplab.report.eth`
  (the ETH report's per-flow measurements) and :mod:`~tcplab.report.page`
  (:func:`render_report`, :func:`write_report`);
* the campaign report: :mod:`~tcplab.report.campaign` (``render_campaign_report``);
* the reproduction report: :mod:`~tcplab.report.reproduce` (``render_report``,
  ``write_report`` of a suite, ``summary``);
* the toolkit they share: :mod:`~tcplab.report.html` (page skeleton, escaping, number
  formatting, tables, embedded figures).
"""

from __future__ import annotations

from tcplab.report.page import render_report, write_report
from tcplab.report.plots import plot_queues, plot_throughput, plot_time_sequence, plot_windows, throughput_bins

__all__ = [
    "plot_queues",
    "plot_throughput",
    "plot_time_sequence",
    "plot_windows",
    "render_report",
    "throughput_bins",
    "write_report",
]
