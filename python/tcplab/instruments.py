"""The simulator's instruments on recorded facts (docs/instruments.md).

A run's instruments (drop log, loss classification, timeout taxonomy, ETH metrics, delay,
conservation, series) take *facts*: a packet sent, delivered or dropped with its cause, a
sender's loss response, its state... ``replay`` runs the same instruments on facts read
from JSON-lines files (one fact per line, integer nanoseconds), such as those a simulated run
records (``_native.Simulation.record_facts``) or a live testbed's emulator and endpoints
write, and gives the tables and the conservation verdict a run gives for those flows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tcplab import _native
from tcplab.run import table_frame
from tcplab.units import UnitError, parse_duration

#: The tables the instruments fill (the others of a run's results stay empty).
MEASURED_TABLES = ("flows", "udp", "verdicts", "delay", "delay_histogram", "delay_series", "series", "queues")


@dataclass(frozen=True)
class Measured:
    """What the instruments measured on a fact stream.

    ``tables``: ``flows`` and ``udp`` (one row per flow, named ``flow{i}`` and ``udp{i}``;
    only the columns the instruments fill are set: drops, marks, loss classification,
    timeout taxonomy, loss events, and for UDP packets sent, received and dropped),
    ``verdicts``, ``delay``, ``delay_histogram``, ``delay_series`` (empty unless ``replay``
    was given ``delay_interval``), ``series`` and ``queues``, with the columns
    of a run's results (docs/results.md). ``conservation``: the run's ``conservation`` dict
    (``ok``, ``violations``, ``packets_sent``, ...).
    """

    tables: dict[str, pl.DataFrame]
    conservation: dict[str, Any]


def replay(
    path_or_paths: str | Path | Sequence[str | Path],
    *,
    tcp_flows: int,
    udp_flows: int = 0,
    delay_interval: int | str | None = None,
) -> Measured:
    """Runs the instruments on the facts of one JSON-lines file or several (read one after
    the other: the instruments take the facts in that order) of ``tcp_flows`` TCP and
    ``udp_flows`` UDP flows (flow indices below those). ``delay_interval`` (a duration:
    seconds or a string such as ``"10ms"``; a run's ``trace.interval``) also measures the
    one-way delay over time (``delay_series``). A file or line that cannot be read, or a
    fact naming a flow past the counts: ValueError naming it."""
    if isinstance(path_or_paths, (str, Path)):
        paths = [path_or_paths]
    else:
        paths = list(path_or_paths)
    for name, n in (("tcp_flows", tcp_flows), ("udp_flows", udp_flows)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"{name} = {n!r}: expected a count of flows (an integer >= 0)")
    interval_ns = None
    if delay_interval is not None:
        try:
            interval_ns = parse_duration(delay_interval, positive=True)
        except UnitError as e:
            raise ValueError(f"delay_interval = {delay_interval!r}: {e}") from None
    raw = _native.replay_facts([str(p) for p in paths], tcp_flows, udp_flows, interval_ns)
    return Measured(
        tables={name: table_frame(name, raw[name]) for name in MEASURED_TABLES},
        conservation=dict(raw["conservation"]),
    )
