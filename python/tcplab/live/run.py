"""``tcplab run --live``: a scenario's flows on real packets, with a simulated run's outputs.

`run_live(scenario, out_dir)` makes the testbed of the scenario's topology
(`Testbed.for_scenario`: one namespace per host, every link emulated), picks one model-time
origin for every flow, starts them all, each on its stack (`tcplab.live.stacks`: tcplab's
transport over UDP, the kernel's TCP, tcplab's sender or receiver speaking real TCP with a
Linux end; UDP constant-bit-rate flows: `tcplab.live.udp.start_udp_flow`), waits for them,
stops the testbed, turns the
emulator's drop log into drop facts, replays the simulator's instruments on the merged facts
(`tcplab.live.facts`, `tcplab.instruments.replay`), fills the rest of each flow's row from
the endpoints' summaries (Linux flows: from TCP_INFO), and writes the results directory with
the writer of a simulated run, its summary gaining a ``live`` section
(`tcplab.live.fidelity`). Everything the testbed made is removed when it returns, also on
Ctrl-C or an error; the results directory is written whole or not at all.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from tcplab.instruments import replay
from tcplab.live import facts as live_facts
from tcplab.live import kernel_trace
from tcplab.live.fidelity import cpu_ms, live_section, udp_rcvbuf_errors
from tcplab.live.kernel_trace import KernelTrace
from tcplab.live.netns import LiveError, Testbed, live_support, scenario_plan
from tcplab.live.pcap import PORTS as LIVE_PCAP_PORTS
from tcplab.live.pcap import live_captures
from tcplab.live import real_tcp_results as real_tcp
from tcplab.live import tcp_sends
from tcplab.live.stacks import STACKS, Context, Ended, stack_of
from tcplab.live.transport import GRACE_S, PORT, drop_facts, link_directions, queue_facts
from tcplab.live.udp import UdpHandle, start_udp_flow
from tcplab.run import Progress, RunResult, simulator_check, table_frame
from tcplab.schema import SCHEMA, TABLES
from tcplab.scenario import Scenario, ScenarioError, as_scenario

__all__ = ["LiveRun", "LiveRunResult", "run_live", "LIVE_COLUMN"]

#: The one column a live run's ``flows`` table has beyond a simulated run's: the run's
#: fidelity verdict ("ok" or "outside bounds"), on every row.
LIVE_COLUMN = "live_verdict"

#: Model time 0 lies this far after the flows start to be started, plus `PER_FLOW_S` per
#: tcplab flow and `PER_LINUX_FLOW_S` per Linux flow (each Linux end needs 0.1-0.3 s).
START_MARGIN_S = 0.3
PER_FLOW_S = 0.05
PER_LINUX_FLOW_S = 0.3


@dataclass
class LiveRunResult(RunResult):
    """A `RunResult` of a live run: the same tables (``flows`` with `LIVE_COLUMN`), and
    ``live``, the summary's ``live`` section."""

    live: dict[str, Any] = field(default_factory=dict)
    #: summary.json's ``pcap.ports`` of a live capture: the real ports
    pcap_ports: dict[str, Any] = field(default_factory=lambda: dict(LIVE_PCAP_PORTS))

    def summary_frames(self) -> dict[str, Any]:
        return {**super().summary_frames(), "live": self.live}


@dataclass
class LiveRun:
    """What `run_live` returns: the results directory and the result written there."""

    out_dir: Path
    result: LiveRunResult

    @property
    def live(self) -> dict[str, Any]:
        return self.result.live


def refusal(canonical: dict[str, Any], max_record_mb: float | None = None) -> str | None:
    """Why this scenario cannot run live here (one line), before anything starts: no root or
    TUN (`live_support`), what the simulator refuses (its checks, and a recording over
    `max_record_mb`: a live run records the same tables), what the emulator refuses
    (``report_losses``, a packet over the MTU: its plan), a Linux flow whose congestion
    control the kernel lacks; None when it can."""
    if reason := live_support():
        return reason
    try:
        simulator_check(canonical, max_record_mb)
    except ScenarioError as e:
        return str(e)
    if reason := real_tcp.attachment_refusal(canonical):
        return reason
    try:
        plan = scenario_plan(canonical)
    except LiveError as e:
        return str(e)
    if plan["flow_problems"]:  # a packet its flows would send over the MTU
        return str(plan["flow_problems"][0])
    from tcplab.live.linux import check_linux_flows

    try:
        check_linux_flows(canonical)
    except LiveError as e:
        return str(e)
    return None


def run_live(
    scenario: str | Path | dict | Scenario,
    out_dir: str | Path | None = None,
    *,
    realtime: bool = False,
    seed: int | None = None,
    progress: Progress | None = None,
    report: bool = True,
    table_format: str = "parquet",
    max_record_mb: float | None = None,
) -> LiveRun:
    """Runs `scenario` live and writes its results directory to `out_dir` (default
    ``results/<name>-<timestamp>``); returns it with the result. `realtime` asks SCHED_FIFO
    for the emulator and tcplab's endpoints. `progress(now_ns, end_ns)` is called as model
    time passes. Raises `LiveError` (one line) when the scenario cannot run live here
    (`refusal`; `max_record_mb` as for a simulated run)."""
    from tcplab.out_dir import check_out_dir
    from tcplab.results import default_out_dir, write_results

    sc = as_scenario(scenario)
    if seed is not None:
        sc = sc.with_seed(seed)
    canonical = sc.canonical()
    if reason := refusal(canonical, max_record_mb):
        raise LiveError(reason)
    target = Path(out_dir) if out_dir is not None else default_out_dir(sc.name)
    check_out_dir(target)
    started_at, t0 = datetime.now(UTC), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tcplab-live-") as tmp:
        raw = Path(tmp)
        tb = Testbed.for_scenario(sc, raw / "emulator", realtime=realtime,
                                  attached=real_tcp.attached_hosts(canonical))
        with tb:
            started = _run_flows(tb, canonical, raw, realtime, progress)
        result = _result(sc, canonical, tb, started, realtime, started_at, time.perf_counter() - t0)
        path = write_results(result, target, report=report, table_format=table_format)
    return LiveRun(out_dir=path, result=result)


@dataclass
class _Started:
    """What `_run_flows` returns: the run's origin (CLOCK_MONOTONIC ns of model time 0) and
    each flow as its stack ended it."""

    origin: int
    ended: dict[int, Ended]
    udp: list[UdpHandle]
    rcvbuf: dict[str, int]
    raw: Path  # the run's scratch directory
    kernel_trace: KernelTrace | None = None  # Linux senders' tracepoints, read
    kernel_trace_note: str | None = None  # why there is none
    cpu_ms: dict[str, float] | None = None  # the machine's CPU time while the flows ran, by kind


def _run_flows(tb: Testbed, canonical: dict[str, Any], raw: Path, realtime: bool,
               progress: Progress | None) -> _Started:
    flows = canonical["flows"]
    stacks = [stack_of(f) for f in flows]
    # Flows with a Linux end take 0.1-0.3 s to start.
    n_linux = sum(s.linux_end for s in stacks)
    margin = START_MARGIN_S + PER_FLOW_S * (len(flows) - n_linux) + PER_LINUX_FLOW_S * n_linux
    origin = time.monotonic_ns() + int(margin * 1e9)
    # Linux senders (to a Linux or to tcplab's receiver): the kernel's trace of them.
    linux = [i for i, s in enumerate(stacks) if s.linux_sender]
    trace, note = None, kernel_trace.unavailable() if linux else None
    cpu_before = cpu_ms()
    with contextlib.ExitStack() as stack:
        if linux and note is None:
            trace = stack.enter_context(KernelTrace([PORT + i for i in linux]))
        st = _run_started(tb, canonical, raw, realtime, progress, origin)
    st.kernel_trace, st.kernel_trace_note = trace, note
    st.cpu_ms = {k: v - cpu_before.get(k, 0.0) for k, v in cpu_ms().items()}
    return st


def _run_started(tb: Testbed, canonical: dict[str, Any], raw: Path, realtime: bool,
                 progress: Progress | None, origin: int) -> _Started:
    flows = canonical["flows"]
    stacks = {i: stack_of(f) for i, f in enumerate(flows)}
    handles = {i: s.start(tb, canonical, i, origin, raw / f"flow{i}", realtime) for i, s in stacks.items()}
    udp = [start_udp_flow(tb, canonical, j, origin, raw / f"udp{j}")
           for j in range(len(canonical.get("udp") or []))]
    end = canonical["duration"]
    # The run ends early once every flow's sending process has ended (UDP flows run to the end).
    senders = [h.procs["sender"] for h in handles.values()]
    while (now := time.monotonic_ns() - origin) < end:
        if progress:
            progress(max(0, now), end)
        if not udp and all(p.poll() is not None for p in senders):
            break
        time.sleep(0.05)
    if progress:
        progress(end, end)
    ended = {}
    for i, h in handles.items():
        ended[i] = stacks[i].end(i, h, max(0.0, (origin + end - time.monotonic_ns()) / 1e9) + GRACE_S)
    for h in udp:
        h.finish(max(0.0, (origin + end - time.monotonic_ns()) / 1e9) + GRACE_S)
    return _Started(origin, ended, udp, udp_rcvbuf_errors(tb), raw)


def frame_of(table: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows (dicts keyed by the simulator's column names; absent = 0, "" or null) as table
    `table` with a simulated run's columns and types (`tcplab.run.table_frame`)."""
    cols: dict[str, Any] = {}
    for c in SCHEMA[table]:
        name, dtype = c["name"], c["dtype"]
        values = [r.get(name) for r in rows]
        if dtype == "str":
            cols[name] = ["" if v is None else str(v) for v in values]
        elif c["nullable"]:
            cols[name] = np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
        elif dtype == "bool":
            cols[name] = np.array([bool(v) for v in values], dtype=bool)
        elif dtype == "f64":
            cols[name] = np.array([0.0 if v is None else float(v) for v in values], dtype=np.float64)
        else:
            npt = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64}[dtype]
            cols[name] = np.array([0 if v is None else int(v) for v in values], dtype=npt)
    return table_frame(table, cols)


def _rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "id"} for r in df.iter_rows(named=True)]


def _drops_table(tb: Testbed, origin: int, iss: dict[int, int]) -> list[dict[str, Any]]:
    """The ``drops`` table from the emulator's drop log: tcplab-transport packets (named by
    the flow in their header) and TCP packets of Linux and real-TCP flows (named by port: flow i uses
    5400 + i at both ends; ``seq`` as on the wire, except the data of the flows in `iss`
    (flow -> initial sequence number: tcplab-tcp senders, and Linux senders whose first
    sequence number is known), counted from their first data byte as simulated); time on the
    run's axis, link directions in the simulator's numbering."""
    assert tb.emu_origin_ns is not None
    dirs = link_directions(tb)
    flows = tb.scenario["flows"] if tb.scenario else []
    linux = {i for i, f in enumerate(flows) if stack_of(f).linux_end}  # TCP on the wire
    rows = []
    for d in tb.drops:
        p = d.get("packet") or {}
        if "flow" in p:  # tcplab transport (data, ack) or a UDP CBR datagram (udp)
            flow, kind, seq = p["flow"], p["packet"], p["seq"]
        elif p.get("proto") == 6 and (p.get("dport", 0) - PORT) in linux:
            flow, kind, seq = p["dport"] - PORT, "data" if p.get("tcp_payload") else "ack", p.get("tcp_seq", 0)
            if flow in iss and kind == "data":
                seq = (seq - iss[flow] - 1) % 2**32
        elif p.get("proto") == 6 and (p.get("sport", 0) - PORT) in linux:
            flow, kind, seq = p["sport"] - PORT, "ack", p.get("tcp_seq", 0)
        else:
            continue
        rows.append({"time_ns": max(0, d["t_ns"] + tb.emu_origin_ns - origin),
                     "link": dirs[(d["link"], d["direction"])],
                     "flow_kind": "udp" if kind == "udp" else "tcp", "flow": flow,
                     "packet": kind, "seq": seq, "size": p.get("len", 0), "cause": d["cause"]})
    return sorted(rows, key=lambda r: r["time_ns"])




def _result(sc: Scenario, canonical: dict[str, Any], tb: Testbed, st: _Started, realtime: bool,
            started_at: datetime, wall: float) -> LiveRunResult:
    flows, origin, udp, ended = canonical["flows"], st.origin, st.udp, st.ended
    drops = drop_facts(tb, origin)
    ctx = Context(tb, origin, link_directions(tb), Counter(d["flow"] for d in drops if d["packet"] == "ack"),
                  st.kernel_trace)
    streams: list[list[dict[str, Any]]] = []
    closing: list[dict[str, Any]] = []
    for _, e in sorted(ended.items()):
        more_drops, more, last = e.facts(ctx)
        drops += more_drops
        streams += more
        closing += last
    for h in udp:  # UDP CBR flows: their ends' facts
        streams += [live_facts.read_jsonl(f) for f in h.facts_paths]
    streams.append(queue_facts(tb, origin, canonical["duration"]))  # the emulator's queues
    path = st.raw / "facts.jsonl"
    live_facts.write_facts(path, live_facts.merge(drops, streams, closing))
    trace = canonical.get("trace") or {}
    series_on = trace.get("series", "off") != "off"
    m = replay(path, tcp_flows=len(flows), udp_flows=len(udp),
               delay_interval=f"{trace['interval']}ns" if series_on and trace.get("interval") else None)
    tables = dict(m.tables)
    udp_specs = canonical.get("udp") or []
    udp_rows = _rows(tables["udp"])
    for j, h in enumerate(udp):  # what the instruments leave out: names, ends, the sink's rate
        udp_rows[j].update(name=udp_specs[j]["name"], src=udp_specs[j]["src"], dst=udp_specs[j]["dst"],
                           throughput_bps=h.receiver["throughput_bps"])
    names = {("tcp", i): f["name"] for i, f in enumerate(flows)}
    names.update({("udp", j): u["name"] for j, u in enumerate(udp_specs)})
    delay_rows = [{**r, "name": names[(r["flow_kind"], r["flow"])]} for r in _rows(tables["delay"])]
    rows = _rows(tables["flows"])
    for e in ended.values():
        e.prepare(ctx)
    iss = {i: n for i, e in ended.items() if (n := e.data_iss()) is not None}
    kernel_iss = {i: iss[i] for i, e in ended.items() if STACKS[e.stack].linux_sender and i in iss}
    assert tb.emu_origin_ns is not None
    ctx.wire = tcp_sends.segments(tb.out_dir / tcp_sends.FILE, tb.emu_origin_ns - origin,
                                  {i: (PORT + i, n) for i, n in kernel_iss.items()})
    series_rows = _rows(tables["series"])
    event_rows: list[dict[str, Any]] = []
    segment_rows: list[dict[str, Any]] = []  # tcplab senders' logs, the wire's for Linux senders
    traced: list[str] = []  # Linux flows with the kernel's trace
    for i, spec in enumerate(flows):
        rows[i].update(name=spec["name"], src=spec["src"], dst=spec["dst"])
        logs = ended[i].fill(ctx, rows[i])
        event_rows += logs.events
        segment_rows += logs.segments
        series_rows += logs.series
        if logs.traced:
            traced.append(spec["name"])
    stats = tb.stats or {}
    groups: dict[str, list[str]] = {name: [] for name in STACKS}
    for i, e in sorted(ended.items()):
        groups[e.stack].append(flows[i]["name"])
    endpoints = {flows[i]["name"]: f for i, e in sorted(ended.items()) if (f := e.endpoints()) is not None}
    section = live_section(
        stats, {**groups, "udp": [u["name"] for u in udp_specs]},
        {**endpoints, **{udp_specs[j]["name"]: {"sender": h.sender, "receiver": h.receiver} for j, h in enumerate(udp)}},
        st.rcvbuf, realtime, emu_offset_ns=tb.emu_origin_ns - origin)
    section["machine_cpu_ms"] = st.cpu_ms
    section["flows"] = {
        **{flows[i]["name"]: e.section(ctx) for i, e in sorted(ended.items())},
        **{udp_specs[j]["name"]: {"stack": "udp", **h.summary} for j, h in enumerate(udp)},
    }
    if st.kernel_trace is not None or st.kernel_trace_note is not None:
        kt = st.kernel_trace
        section["kernel_trace"] = {
            "note": st.kernel_trace_note,
            "events": list(kernel_trace.EVENTS) if kt is not None else [],
            "records": len(kt.records) if kt is not None else 0,
            "lost": kt.lost if kt is not None else 0,
            "flows": traced,
        }
    tables["flows"] = frame_of("flows", rows).with_columns(pl.lit(section["verdict"]).alias(LIVE_COLUMN))
    tables["series"] = frame_of("series", sorted(series_rows, key=lambda r: (r["time_ns"], r["flow"])))
    tables["drops"] = frame_of("drops", _drops_table(tb, origin, iss))
    tables["segments"] = frame_of("segments", sorted(segment_rows, key=lambda r: (r["time_ns"], r["flow"])))
    tables["events"] = frame_of("events", sorted(event_rows, key=lambda r: (r["time_ns"], r["flow"])))
    tables["udp"] = frame_of("udp", udp_rows)
    tables["delay"] = frame_of("delay", delay_rows)
    # the emulator's own rows: the simulator's row functions over its link models
    tables["links"] = frame_of("links", (tb.stats or {}).get("link_rows", []))
    for t in TABLES:
        tables.setdefault(t, frame_of(t, []))
    run_stats = {"sim_time_ns": canonical["duration"], "live": True,
                 "emulator_origin_ns": tb.emu_origin_ns, "clock_origin_ns": origin}
    pcap, addresses = live_captures(tb, origin)
    return LiveRunResult(scenario=sc, canonical=canonical, tables=tables,
                         conservation=dict(m.conservation), stats=run_stats,
                         started_at=started_at, finished_at=datetime.now(UTC), wall_time_s=wall,
                         pcap=pcap, pcap_addresses=addresses, live=section)
