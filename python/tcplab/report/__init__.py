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
  formatting, tables, embedded figures) and :mod:`~tcplab.report.raster` (figures to PNG);
  :mod:`~tcplab.report.preload` imports them while a run goes on.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcplab.report.page import render_report, write_report
    from tcplab.report.plots import plot_queues, plot_throughput, plot_time_sequence, plot_windows, throughput_bins

#: Where each name of the package lives: imported on first use, so that importing a light
#: submodule (``tcplab.report.preload``, which imports the rest in a thread while the run goes
#: on) does not import matplotlib.
_LAZY = {
    "render_report": "tcplab.report.page",
    "write_report": "tcplab.report.page",
    "plot_queues": "tcplab.report.plots",
    "plot_throughput": "tcplab.report.plots",
    "plot_time_sequence": "tcplab.report.plots",
    "plot_windows": "tcplab.report.plots",
    "throughput_bins": "tcplab.report.plots",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "plot_queues",
    "plot_throughput",
    "plot_time_sequence",
    "plot_windows",
    "render_report",
    "throughput_bins",
    "write_report",
]
