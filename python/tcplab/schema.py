"""The results' schema, as the simulator declares it (``tcplab_sim::columns``), and the
column-name families the summaries group: read by the run API, the results directory and the
reports alike, so none of them imports another for it."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Protocol

import polars as pl

from tcplab import _native

__all__ = ["RunLike", "SCHEMA", "TABLES", "NULLABLE", "TIMEOUT_CLASSES", "DUPACK_BINS", "SACK_POSITIONS"]

#: The results' tables and their columns (name, dtype, nullable, unit, description), in the
#: order they are written: declared once, in the simulator (``tcplab_sim::columns``).
SCHEMA: dict[str, list[dict[str, Any]]] = {
    t["name"]: t["columns"] for t in json.loads(_native.results_schema_json())
}

#: The tables of a run, in the order they are written.
TABLES = tuple(SCHEMA)

#: Nullable columns (float64 with NaN in the native dict): their polars type.
NULLABLE = {
    table: {c["name"]: pl.UInt64 if c["dtype"] == "u64" else pl.Float64 for c in cols if c["nullable"]}
    for table, cols in SCHEMA.items()
}


#: Timeout classes of the ETH report's taxonomy (docs/timeouts.md), in column-suffix order.
TIMEOUT_CLASSES = (
    "lost_timeout_rtx",
    "lost_fast_rtx",
    "mpl_lost_rtx",
    "mpl_missing_acks",
    "non_trigger",
    "other",
)

#: Recovery entries are binned by the duplicate ACKs that triggered them.
DUPACK_BINS = ("0", "1", "2", "3", "4plus")

#: SACK-block positions counted (RFC 2018 allows at most 6 blocks per ACK).
SACK_POSITIONS = 6




class RunLike(Protocol):
    """What the results directory and the reports read of a run: a
    :class:`tcplab.run.RunResult` (its tables as polars frames, ``summary``, ``scenario``...).
    A protocol, so that the writers below the run API need not import it."""

    @property
    def scenario(self) -> Any: ...
    @property
    def canonical(self) -> dict[str, Any]: ...
    @property
    def tables(self) -> dict[str, pl.DataFrame]: ...
    @property
    def conservation(self) -> dict[str, Any]: ...
    @property
    def stats(self) -> dict[str, Any]: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def finished_at(self) -> datetime: ...
    @property
    def wall_time_s(self) -> float: ...
    @property
    def version(self) -> str: ...
    @property
    def pcap(self) -> list[dict[str, Any]]: ...
    @property
    def pcap_addresses(self) -> dict[str, str]: ...
    @property
    def flows(self) -> pl.DataFrame: ...
    @property
    def udp(self) -> pl.DataFrame: ...
    @property
    def links(self) -> pl.DataFrame: ...
    @property
    def series(self) -> pl.DataFrame: ...
    @property
    def queues(self) -> pl.DataFrame: ...
    @property
    def drops(self) -> pl.DataFrame: ...
    @property
    def events(self) -> pl.DataFrame: ...
    @property
    def segments(self) -> pl.DataFrame: ...
    @property
    def verdicts(self) -> pl.DataFrame: ...
    @property
    def delay(self) -> pl.DataFrame: ...
    @property
    def delay_histogram(self) -> pl.DataFrame: ...
    @property
    def delay_series(self) -> pl.DataFrame: ...
    @property
    def seed(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def summary(self) -> dict[str, Any]: ...
    def summary_frames(self) -> dict[str, Any]: ...
    def flow_summary(self) -> list[dict[str, Any]]: ...
