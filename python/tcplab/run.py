"""Running a scenario: ``tcplab.run(scenario) -> RunResult`` with polars DataFrames."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from tcplab import _native
from tcplab.progress import SimProgress
from tcplab.schema import NULLABLE, DUPACK_BINS, SACK_POSITIONS, SCHEMA, TABLES, TIMEOUT_CLASSES
from tcplab.scenario import Scenario, ScenarioError, as_scenario

__all__ = ["RunResult", "run", "TABLES", "SCHEMA", "Progress", "max_record_mb", "recording_line", "simulator_check"]

#: A progress callback: called with (simulated ns reached, end of the run in ns).
Progress = Callable[[int, int], None]


def table_frame(name: str, columns: Any) -> pl.DataFrame:
    """Table ``name`` as a DataFrame: an Arrow table of the extension (``_native.ArrowTable``,
    read without copying its numbers), or columns (numpy arrays, lists of strings; NaN is
    "none" in a nullable column) such as a live run builds."""
    if hasattr(columns, "__arrow_c_array__"):
        df = pl.DataFrame(columns)
    else:
        df = pl.DataFrame([_series(name, col, values) for col, values in columns.items()])
    if name in ("flows", "udp", "links"):
        # Row index: what `flow` (series, events, segments, drops) and `link` (queues, drops)
        # refer to.
        df = df.with_row_index("id")
        if df.schema["id"] != pl.UInt32:  # polars built with 64-bit row indices
            df = df.with_columns(pl.col("id").cast(pl.UInt32))
    return df


def _series(table: str, col: str, values: Any) -> pl.Series:
    if not isinstance(values, np.ndarray):
        return pl.Series(col, values, dtype=pl.String)
    nullable = NULLABLE[table].get(col)
    if nullable is None:
        return pl.Series(col, values)
    # NaN marks "none": null at construction (a tenth of the cost of Series.fill_nan)
    s = pl.Series(col, values, nan_to_null=True)
    return s if s.dtype == nullable else s.cast(nullable)


def finite(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with its non-finite floats (NaN, inf) as nulls: JSON has neither. Column by
    column in polars: per value in Python this was most of summary.json's cost for 10,000
    flows."""
    floats = [c for c, t in df.schema.items() if t.is_float()]
    if not floats:
        return df
    return df.with_columns(pl.when(pl.col(c).is_finite()).then(pl.col(c)).alias(c) for c in floats)


def _rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``df`` as dicts of Python values (a struct column's values as dicts)."""
    if df.height == 0:
        return []
    cols = df.columns
    return [dict(zip(cols, r)) for r in df.rows()]


@dataclass
class RunResult:
    """The outcome of one run: a DataFrame per table, the conservation check, run stats.

    Tables (docs/results.md lists every column and its unit): ``flows`` (one row per TCP
    flow), ``udp``, ``links`` (one row per link direction), ``series`` (per-flow cwnd,
    ssthresh, RTT, delivered... over time), ``queues``, ``drops``, ``events``, ``segments``,
    ``verdicts`` (every loss response: the controller's verdict and the loss's actual cause),
    ``delay`` (one-way delay, jitter and loss per flow), ``delay_histogram`` and
    ``delay_series`` (one-way delay per flow and interval over time).
    """

    scenario: Scenario
    canonical: dict[str, Any]
    tables: dict[str, pl.DataFrame]
    conservation: dict[str, Any]
    stats: dict[str, Any]
    started_at: datetime
    finished_at: datetime
    wall_time_s: float
    version: str = field(default_factory=_native.version)
    #: Captured pcap files (``trace.pcap``): ``[{name, link, directions, data, counts}]``.
    pcap: list[dict[str, Any]] = field(default_factory=list)
    #: Address of every node in the captures: ``{node name: "10.0.0.1", ...}``.
    pcap_addresses: dict[str, str] = field(default_factory=dict)
    #: What the run recorded (``_native.Simulation.recording()``): ``{"tables": [{"table",
    #: "rows", "bytes", "bucket_ns", "truncated_at_ns"}], "limit_bytes", "estimate": [...]}``;
    #: empty for results built otherwise.
    recording: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_native(
        cls,
        scenario: Scenario,
        raw: dict[str, Any],
        *,
        canonical: dict[str, Any] | None = None,
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
        wall_time_s: float = 0.0,
        recording: dict[str, Any] | None = None,
    ) -> RunResult:
        """Builds a result from the dict ``_native.Simulation.finish()`` returns."""
        now = datetime.now(UTC)
        return cls(
            scenario=scenario,
            canonical=canonical if canonical is not None else scenario.canonical(),
            tables={name: table_frame(name, raw[name]) for name in TABLES},
            conservation=dict(raw["conservation"]),
            stats=dict(raw["stats"]),
            started_at=started_at or now,
            finished_at=finished_at or now,
            wall_time_s=wall_time_s,
            pcap=list(raw.get("pcap", [])),
            pcap_addresses=dict(raw.get("pcap_addresses", {})),
            recording=dict(recording or {}),
        )

    # ---- tables ----------------------------------------------------------------------------

    @property
    def flows(self) -> pl.DataFrame:
        """One row per TCP flow: throughput, retransmissions, timeouts, RTT, loss classification (docs/results.md)."""
        return self.tables["flows"]

    @property
    def udp(self) -> pl.DataFrame:
        """One row per UDP flow: packets sent, delivered and lost, throughput."""
        return self.tables["udp"]

    @property
    def links(self) -> pl.DataFrame:
        """One row per link direction: bytes and packets carried, drops by cause, utilization."""
        return self.tables["links"]

    @property
    def series(self) -> pl.DataFrame:
        """Per-flow samples over time: cwnd, ssthresh, smoothed RTT, RTO, in flight, delivered."""
        return self.tables["series"]

    @property
    def queues(self) -> pl.DataFrame:
        """Per-link-direction queue length over time (packets and bytes)."""
        return self.tables["queues"]

    @property
    def drops(self) -> pl.DataFrame:
        """Every dropped packet: time, link, flow, sequence number and cause."""
        return self.tables["drops"]

    @property
    def events(self) -> pl.DataFrame:
        """Every sender event: loss responses, recovery exits, timeouts, undos, window records."""
        return self.tables["events"]

    @property
    def segments(self) -> pl.DataFrame:
        """Every data transmission: time, flow, sequence number, length, transmission number."""
        return self.tables["segments"]

    @property
    def verdicts(self) -> pl.DataFrame:
        """Every loss response: the controller's verdict and the loss's actual cause."""
        return self.tables["verdicts"]

    @property
    def delay(self) -> pl.DataFrame:
        """One-way delay, jitter and loss per flow (TCP flows, then UDP flows; docs/delay.md)."""
        return self.tables["delay"]

    @property
    def delay_histogram(self) -> pl.DataFrame:
        """Per-flow histograms of one-way delay and jitter (docs/delay.md)."""
        return self.tables["delay_histogram"]

    @property
    def delay_series(self) -> pl.DataFrame:
        """One-way delay per flow and ``trace.interval`` over time (count, mean, min, p50,
        p95, max; empty when ``trace.series = "off"``; docs/delay.md, "Over time")."""
        return self.tables["delay_series"]

    # ---- summaries ---------------------------------------------------------------------------

    @property
    def seed(self) -> int:
        return int(self.canonical["seed"])

    @property
    def name(self) -> str:
        return str(self.canonical["name"])

    def flow_frame(self) -> pl.DataFrame:
        """The flows table as the summary gives it: non-finite floats as nulls, then
        ``throughput_mbps``, and two struct columns: ``table_one``, the loss-classification
        counts in Veno's Table I form (:func:`table_one`), and ``eth``, the ETH report's
        measurements grouped (:func:`eth_metrics`)."""
        df = finite(self.flows)
        # Divided in numpy: polars multiplies by the reciprocal (a last digit apart).
        mbps = df["throughput_bps"].fill_null(0.0).to_numpy() / 1e6
        return df.with_columns(throughput_mbps=pl.Series(mbps), table_one=table_one(), eth=eth_metrics())

    def flow_summary(self) -> list[dict[str, Any]]:
        """One dict per TCP flow: the rows of :meth:`flow_frame` (``table_one`` and ``eth``
        as nested dicts)."""
        return _rows(self.flow_frame())

    def summary_frames(self) -> dict[str, Any]:
        """:attr:`summary` with its per-row entries (``flows``, ``udp``, ``links``, ``delay``)
        as polars frames, non-finite floats as nulls: summary.json writes their rows from
        these without making Python objects of them."""
        return {
            "scenario": self.name,
            "seed": self.seed,
            "duration_s": self.canonical["duration"] / 1e9,
            "sim_time_s": self.stats.get("sim_time_ns", 0) / 1e9,
            "wall_time_s": self.wall_time_s,
            "tcplab_version": self.version,
            "flows": self.flow_frame(),
            "udp": finite(self.udp),
            "links": finite(self.links),
            "delay": finite(self.delay),
            "stats": dict(self.stats),
            "conservation": dict(self.conservation),
        }

    @property
    def summary(self) -> dict[str, Any]:
        """The run in one JSON-ready dict: scenario name, seed, durations, per-flow and
        per-UDP-flow summaries, link summaries, run stats and the conservation check."""
        return {k: _rows(v) if isinstance(v, pl.DataFrame) else v for k, v in self.summary_frames().items()}

    def write(self, out: str | Path | None = None, *, report: bool = True, table_format: str = "parquet") -> Path:
        """Writes the results directory (see :func:`tcplab.results.write_results`; tables as
        ``"parquet"`` or ``"csv"``)."""
        from tcplab.results import write_results

        return write_results(self, out, report=report, table_format=table_format)

    def __repr__(self) -> str:
        counts = ", ".join(f"{t}={self.tables[t].height}" for t in TABLES)
        return f"<RunResult {self.name!r} seed={self.seed} rows: {counts}>"

    def _repr_html_(self) -> str:
        """Jupyter: the flows table and a cwnd plot (:mod:`tcplab.notebook`)."""
        from tcplab.notebook import run_html

        return run_html(self.name, self.seed, self.canonical["duration"], self.wall_time_s, self.flows, self.series)


#: The actual causes of a loss in Veno's Table I, in column-suffix order.
LOSS_CAUSES = ("congestion", "random", "none")


#: Veno's Table I counts: (summary key, the flows columns by cause).
_TABLE_ONE = tuple(
    (key, tuple((c, f"{field}_{c}") for c in LOSS_CAUSES))
    for key, field in (("ff45", "ff45"), ("ff12", "ff12"), ("ff_other", "ff_other"), ("timeouts", "timeouts_by_cause"))
)


def _count(col: str) -> pl.Expr:
    return pl.col(col).fill_null(0).cast(pl.Int64)


def table_one() -> pl.Expr:
    """The loss-classification numbers of a ``flows`` row in Veno's Table I form, a struct:
    ``{"ff45": {"congestion": n, "random": n, "none": n}, "ff12": ..., "ff_other": ...,
    "timeouts": ..., "ff45_accuracy": x, "congestion_misdiagnosis": x}`` (ratios null when
    undefined: the frame's non-finite floats must be nulls already, :func:`finite`)."""
    return pl.struct(
        *(pl.struct(*(_count(col).alias(c) for c, col in cols)).alias(key) for key, cols in _TABLE_ONE),
        pl.col("ff45_accuracy").cast(pl.Float64),
        pl.col("congestion_misdiagnosis").cast(pl.Float64),
    )


#: The flows columns :func:`eth_metrics` groups, named once.
_TIMEOUT_COLUMNS = tuple((c, f"timeouts_{c}") for c in TIMEOUT_CLASSES)
_DUPACK_COLUMNS = tuple((b, f"recoveries_dupacks_{b}") for b in DUPACK_BINS)
_SACK_COLUMNS = tuple((k, f"sack_block_{k}_carried", f"sack_block_{k}_used") for k in range(1, SACK_POSITIONS + 1))


def eth_metrics() -> pl.Expr:
    """The ETH report's per-flow measurements of a ``flows`` row grouped, a struct
    (docs/eth-metrics.md): ``{"timeouts_by_class": {class: n}, "loss_events": {"single",
    "multiple", "drops", "max"}, "loss_indication_p": p, "recoveries_by_dupacks": {bin: n},
    "dupacks_per_recovery": x, "sack_blocks": [{"n", "carried", "used"}, ...]}`` (the
    frame's non-finite floats must be nulls already, :func:`finite`)."""
    return pl.struct(
        pl.struct(*(_count(col).alias(c) for c, col in _TIMEOUT_COLUMNS)).alias("timeouts_by_class"),
        pl.struct(
            _count("loss_events_single").alias("single"),
            _count("loss_events_multiple").alias("multiple"),
            _count("loss_event_drops").alias("drops"),
            _count("loss_event_max").alias("max"),
        ).alias("loss_events"),
        pl.col("loss_indication_p"),
        pl.struct(*(_count(col).alias(b) for b, col in _DUPACK_COLUMNS)).alias("recoveries_by_dupacks"),
        pl.col("dupacks_per_recovery"),
        pl.concat_list(
            pl.struct(pl.lit(k, pl.Int64).alias("n"), _count(carried).alias("carried"), _count(used).alias("used"))
            for k, carried, used in _SACK_COLUMNS
        ).alias("sack_blocks"),
    )


def run(
    scenario: str | Path | dict | Scenario,
    progress: Progress | bool | None = None,
    *,
    seed: int | None = None,
    steps: int = 100,
    max_record_mb: float | None = None,
) -> RunResult:
    """Runs a scenario to its end and returns its results.

    ``scenario`` is a TOML file path, a TOML-shaped dict or a :class:`Scenario`. The
    simulation advances in ``steps`` chunks (1% of the end time each); after each chunk
    ``progress(now_ns, end_ns)`` is called (``progress=True`` shows a rich progress bar).
    The simulator runs with the GIL released, so runs in several threads proceed in parallel.

    ``max_record_mb`` limits what the run records (default: :func:`max_record_mb`): a
    scenario expected to record more is refused before it starts, and a run that records
    more anyway stops with a :class:`ScenarioError` (docs/scenario.md, "Bounded recording").

    Raises :class:`ScenarioError` (a ValueError) for an invalid scenario, including what only
    the simulator checks, and ``RuntimeError("internal error: ...")`` if the simulator fails.
    """
    sc = as_scenario(scenario)
    if seed is not None:
        sc = sc.with_seed(seed)
    canonical = sc.canonical()
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    try:
        sim = _native.Simulation(_canonical_json(canonical), _max_record_mb(max_record_mb))
    except ValueError as e:
        raise ScenarioError(str(e)) from None

    try:
        if progress is True:
            with SimProgress(sc.name) as bar:
                raw, recording = _drive(sim, bar, steps)
        else:
            raw, recording = _drive(sim, progress or None, steps)
    except ValueError as e:  # recording passed its limit
        raise ScenarioError(str(e)) from None
    wall = time.perf_counter() - t0
    result = RunResult.from_native(
        sc,
        raw,
        canonical=canonical,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        wall_time_s=wall,
        recording=recording,
    )
    del sim, raw
    # The simulation and its conversion freed much of what they used (10,000 flows × 3 s:
    # about 110 MB), which glibc would keep resident through the writing and the report.
    _native.release_freed_memory()
    return result


#: The environment variable that sets the default of ``max_record_mb`` (sweeps' workers
#: inherit it).
MAX_RECORD_ENV = "TCPLAB_MAX_RECORD_MB"


def max_record_mb() -> float:
    """The limit on what a run records, in MB, when none is given: ``$TCPLAB_MAX_RECORD_MB``
    or ``_native.DEFAULT_MAX_RECORD_MB`` (2048)."""
    text = os.environ.get(MAX_RECORD_ENV, "").strip()
    if not text:
        return float(_native.DEFAULT_MAX_RECORD_MB)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ScenarioError(f"{MAX_RECORD_ENV} = {text!r}: expected a number of MB > 0")
    return value


def simulator_check(canonical: dict[str, Any], max_record_mb: float | None = None) -> None:
    """What only the simulator checks (Scenario::validate: routes, node names...; each flow's
    settings; the recording estimate against ``max_record_mb``, default
    :func:`max_record_mb`) without building the run (``Simulation::check``);
    :class:`ScenarioError` with its one line."""
    try:
        _native.check_scenario(_canonical_json(canonical), _max_record_mb(max_record_mb))
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _max_record_mb(value: float | None) -> float:
    if value is None:
        return max_record_mb()
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and value > 0):
        raise ScenarioError(f"max_record_mb = {value!r}: expected a number of MB > 0")
    return float(value)


def recording_line(recording: dict[str, Any]) -> str:
    """What a run recorded in one line: rows per table, about how many MB, and any
    decimation or truncation by ``trace.max_rows_per_flow`` or the default bound on the series
    and queues tables."""
    if not recording:
        return ""
    parts, notes = [], []
    for t in recording["tables"]:
        if t["rows"]:
            parts.append(f"{t['table']} {t['rows']:,}")
        if t["bucket_ns"] and t["table"] == "delay_series":
            notes.append(f"delay_series intervals widened to {t['bucket_ns'] / 1e6:g} ms")
        elif t["bucket_ns"]:
            notes.append(f"{t['table']} decimated to one row per {'link' if t['table'] == 'queues' else 'flow'} per {t['bucket_ns'] / 1e6:g} ms")
        if t["truncated_at_ns"] is not None:
            notes.append(f"{t['table']} cut at {t['truncated_at_ns'] / 1e9:g} s")
    mb = sum(t["bytes"] for t in recording["tables"]) / 2**20
    line = f"recorded: {', '.join(parts) or 'summaries only'} rows (~{mb:.1f} MB of {recording['limit_bytes'] / 2**20:g} MB allowed)"
    default = recording.get("default_table_bytes")
    bound = (
        f"the default bound of {default / 2**20:g} MB per table: trace.max_rows_per_flow sets another, \"all\" keeps every row"
        if default
        else "trace.max_rows_per_flow"
    )
    return line + (f"; {'; '.join(notes)} ({bound})" if notes else "")


def _canonical_json(canonical: dict[str, Any]) -> str:

    return json.dumps(canonical)


def _drive(sim: Any, progress: Progress | None, steps: int) -> tuple[dict[str, Any], dict[str, Any]]:
    end = sim.end_ns
    step = max(1, end // max(1, steps))
    target = 0
    if progress:
        progress(0, end)
    while not sim.done and target < end:
        target = min(end, target + step)
        sim.run_until(target)
        if progress:
            progress(min(target, end), end)
    if progress:
        progress(end, end)
    recording = sim.recording()
    return sim.finish(), recording
