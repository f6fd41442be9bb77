"""Kernel TCP flows through a live testbed (``stack = "linux"``).

A flow is one bulk transfer from a host's namespace to another's (`n` bytes, a duration, or
until the scenario's end) by the host's own TCP with a congestion control chosen by name. Any
number of flows run at once, in any direction: `start_linux_flow` starts flow i of a scenario
on port 5400 + i at both ends and returns; `LinuxHandle.finish` waits for it. Before a flow
starts, the TCP sysctls and route attributes its scenario TCP settings map to are set in its
namespaces and read back (`tcplab.live.linux_settings`: once per namespace, flows that need
different values on one host refused); the sender samples ``TCP_INFO`` into a series; the
receiver checks every byte against a pattern (`tcplab.live.linux_endpoint`). When the testbed
has stopped, the emulator's drop log is joined with the flow by addresses, ports and TCP
sequence number: each dropped data segment is named by its offset in the byte stream.

Results use the simulator's column names where they mean the same thing (`tcplab.schema`,
read from ``tcplab_sim::columns``): a `flows` row and a `series` frame; what Linux reports
and the simulator has no column for is kept under its ``tcp_info`` name. See docs/live.md.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.live import linux_tcpinfo
from tcplab.live.endpoints import linux_recv, linux_send
from tcplab.live.linux_settings import (
    MAPPED,
    RECORDED,
    Claim,
    HostSettings,
    allowed_congestion_controls,
    available_congestion_controls,
    check_congestion,
    check_together,
    claims,
    sysctls_for,
)
from tcplab.live.netns import LiveError, Testbed
from tcplab.schema import SCHEMA

__all__ = ["RECORDED", "LinuxFlow", "LinuxFlowResult", "LinuxHandle", "LinuxRun",
           "allowed_congestion_controls", "available_congestion_controls", "check_congestion",
           "check_linux_flow", "check_linux_flows", "linux_flows", "run_linux", "run_linux_flow", "start_linux_flow", "sysctls_for"]

#: Scenario flow i uses port PORT_BASE + i at both ends (every live stack's convention).
PORT_BASE = 5400
#: The shortest TCP_INFO sampling period (the sender is a Python process).
MIN_INTERVAL_NS = 1_000_000
#: How long a receiver waits for its connection past the flow's start.
ACCEPT_WAIT_S = 30.0


@dataclass
class LinuxFlow:
    """One kernel TCP transfer `src` -> `dst` (host names of the testbed): `bytes` bytes, for
    `duration_ns` after connecting, or until model time `stop_ns`, whichever comes first."""

    congestion: str = "reno"
    bytes: int | None = None
    duration_ns: int | None = None
    tcp: dict[str, Any] = field(default_factory=dict)  # scenario TCP settings (canonical)
    interval_ns: int = 10_000_000  # TCP_INFO sampling period
    port: int = 5201  # the receiver's
    name: str = "f0"
    src: str = "a"
    dst: str = "b"
    index: int = 0  # the `flow` column of its series
    start_ns: int = 0  # model time of the connect
    stop_ns: int | None = None  # model time after which nothing more is written
    sport: int = 0  # the sender's port (0: the kernel picks one)

    @classmethod
    def from_canonical(cls, flow: dict[str, Any], duration_ns: int | None = None) -> LinuxFlow:
        """A scenario flow in canonical form (``tcplab validate --json``): its controller's name
        is the congestion control asked of the kernel, its ``tcp`` settings map as
        `sysctls_for` and `route_claims` say; `bytes`, else `duration_ns`. Between hosts A and B
        of a one-link testbed, on port 5201."""
        return cls(congestion=flow["controller"]["name"], bytes=flow.get("bytes"),
                   duration_ns=None if flow.get("bytes") is not None else duration_ns,
                   tcp=dict(flow.get("tcp") or {}), name=flow.get("name") or "f0")

    @classmethod
    def from_scenario(cls, canonical: dict[str, Any], index: int) -> LinuxFlow:
        """Flow `index` of a canonical scenario between its own hosts: port 5400 + index at
        both ends, connecting at its `start`, writing `bytes` or until its `stop` or the
        scenario's `duration`; `TCP_INFO` sampled every ``trace.interval`` (at least 1 ms)."""
        flows = canonical["flows"]
        if not 0 <= index < len(flows):
            raise LiveError(f"flows[{index}]: the scenario has {len(flows)} flows")
        f = flows[index]
        end = canonical["duration"] if f.get("stop") is None else min(f["stop"], canonical["duration"])
        port = PORT_BASE + index
        interval = max(MIN_INTERVAL_NS, int((canonical.get("trace") or {}).get("interval") or 10_000_000))
        return cls(congestion=f["controller"]["name"], bytes=f.get("bytes"), interval_ns=interval,
                   tcp=dict(f.get("tcp") or {}), port=port, sport=port,
                   name=f.get("name") or f"flow{index}", src=f["src"], dst=f["dst"], index=index,
                   start_ns=int(f.get("start") or 0), stop_ns=int(end))

    def claims(self) -> list[Claim]:
        return claims(self.name, self.src, self.dst, self.congestion, self.tcp)


@dataclass
class LinuxRun:
    """What a flow left before the testbed stopped; `result` joins it with the drop log."""

    flow: LinuxFlow
    sysctls: dict[str, dict[str, str]]  # by host: src's and dst's
    routes: dict[str, str]  # by host: src's route to dst, dst's route to src
    socket_options: dict[str, Any]
    sender: dict[str, Any]
    receiver: dict[str, Any]
    origin_ns: int | None = None  # model time 0 (CLOCK_MONOTONIC); None: the emulator's

    def result(self, tb: Testbed) -> LinuxFlowResult:
        """The flow's result; call after the testbed has stopped (its drop log and stats)."""
        if tb.stats is None or tb.emu_origin_ns is None:
            raise LiveError("the testbed has not stopped: no drop log yet")
        return _result(self, tb)


@dataclass
class LinuxFlowResult:
    flow: dict[str, Any]  # a `flows` row: simulator column names
    series: pl.DataFrame  # `series` columns, then Linux-only ones
    drops: pl.DataFrame  # the model's drops of this flow: data (offset) and ACKs
    final: dict[str, int]  # the sender's last TCP_INFO
    linux: dict[str, Any]  # sysctls read back, socket options, checks


class LinuxHandle:
    """A started flow: its two ends run; `finish` waits for them, `result` joins what they
    recorded with the emulator's drop log once the testbed has stopped."""

    def __init__(self, tb: Testbed, flow: LinuxFlow, origin_ns: int, out_dir: Path) -> None:
        self.flow = flow
        self.origin_ns = origin_ns
        self.run: LinuxRun | None = None
        self._settings = HostSettings.of(tb)
        self._rfile = out_dir / f"linux-flow{flow.index}-recv.json"
        self._sfile = out_dir / f"linux-flow{flow.index}-send.json"
        ready = out_dir / f"linux-flow{flow.index}.ready"
        for f in (self._rfile, self._sfile, ready):
            f.unlink(missing_ok=True)
        try:
            self._settings.apply(tb, flow.claims(),
                                 flow.congestion if flow.congestion in allowed_congestion_controls() else None)
            self._start(tb, ready)
        except BaseException:
            self._stop()
            raise

    def _start(self, tb: Testbed, ready: Path) -> None:
        flow, st = self.flow, self._settings
        self.sysctls = {h: dict(st.sysctls[h]) for h in (flow.src, flow.dst)}
        self.routes = {flow.src: st.route(tb, flow.src, flow.dst), flow.dst: st.route(tb, flow.dst, flow.src)}
        self.socket_options: dict[str, Any] = {"TCP_CONGESTION": flow.congestion}
        mss = 0
        if flow.tcp.get("rcv_buf"):
            self.socket_options["TCP_WINDOW_CLAMP"] = int(flow.tcp["rcv_buf"])
        if flow.tcp.get("mss"):
            self.socket_options["TCP_MAXSEG"] = mss = maxseg(flow.tcp)
        at = self.origin_ns + flow.start_ns
        until = None if flow.stop_ns is None else self.origin_ns + flow.stop_ns
        idle = max(0.0, (at - time.monotonic_ns()) * 1e-9) + ACCEPT_WAIT_S
        # tb.realtime: as tcplab's own endpoints, the application is not what is measured
        self._r = tb.popen(flow.dst, linux_recv(flow.port, self._rfile, idle=idle, ready_file=ready, mss=mss,
                                                window_clamp=self.socket_options.get("TCP_WINDOW_CLAMP", 0),
                                                realtime=tb.realtime),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._s = tb.popen(flow.src, linux_send(tb.addr[flow.dst], flow.port, flow.congestion, self._sfile, at_ns=at,
                                                ready_file=ready, interval_ns=flow.interval_ns, bytes=flow.bytes,
                                                duration_ns=flow.duration_ns, until_ns=until, mss=mss,
                                                sport=flow.sport, realtime=tb.realtime),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    @property
    def procs(self) -> dict[str, subprocess.Popen[str]]:
        """The flow's processes, as the other flows' handles name them."""
        return {"sender": self._s, "receiver": self._r}

    def finish(self, timeout_s: float) -> None:
        """Waits until the flow has ended (the sender's bytes and FIN acknowledged, the
        receiver done reading), at most `timeout_s`; raises LiveError (one line) when it
        failed or did not end. Its processes are killed in any case."""
        name = self.flow.name
        try:
            try:
                _, err = self._s.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise LiveError(f"Linux flow {name}: not finished within {timeout_s} s") from None
            if self._s.returncode != 0:
                lines = (err or "").strip().splitlines()
                raise LiveError(f"Linux flow {name}: "
                                + (lines[-1] if lines else f"the sender exited with {self._s.returncode}"))
            try:
                _, rerr = self._r.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                raise LiveError(f"Linux flow {name}: the receiver did not end after the sender") from None
            if not self._rfile.exists():
                lines = (rerr or "").strip().splitlines()
                raise LiveError(f"Linux flow {name}: "
                                + (lines[-1] if lines else f"the receiver exited with {self._r.returncode}"))
            self.run = LinuxRun(self.flow, self.sysctls, self.routes, self.socket_options,
                                json.loads(self._sfile.read_text()), json.loads(self._rfile.read_text()),
                                self.origin_ns)
        finally:
            self._stop()

    def result(self, tb: Testbed) -> LinuxFlowResult:
        """The flow's result (after `finish` and after the testbed stopped): `flows` row,
        series (time in model ns since the run's origin), drops, final TCP_INFO, settings."""
        if self.run is None:
            raise LiveError(f"Linux flow {self.flow.name}: it did not finish")
        return self.run.result(tb)

    def _stop(self) -> None:
        for p in (getattr(self, "_s", None), getattr(self, "_r", None)):
            if p is not None and p.poll() is None:
                p.kill()
            if p is not None:
                p.communicate()
        self._settings.release(self.flow.name)


def maxseg(tcp: dict[str, Any]) -> int:
    """``TCP_MAXSEG`` for a flow's TCP settings: ``tcp.mss`` is payload per segment, the
    socket option the MSS option, from which Linux takes the timestamp option's 12 bytes
    (tcp_sync_mss: mss_cache is mss_clamp less the options in use)."""
    return int(tcp["mss"]) + (12 if tcp.get("timestamps", True) else 0)


def linux_flows(canonical: dict[str, Any]) -> list[int]:
    """The indices of the scenario's ``stack = "linux"`` flows."""
    return [i for i, f in enumerate(canonical["flows"]) if f.get("stack") == "linux"]


def check_linux_flow(canonical: dict[str, Any], index: int) -> LinuxFlow:
    """Flow `index` of the canonical scenario as a `LinuxFlow`; raises LiveError (one line)
    when the kernel lacks its congestion control or when it and another ``stack = "linux"``
    flow of the scenario need different sysctls in a namespace they share (or different
    attributes of one route)."""
    flow = LinuxFlow.from_scenario(canonical, index)
    check_congestion(flow.congestion)
    mine = flow.claims()
    places = {(c.where, c.key) for c in mine}
    others = [LinuxFlow.from_scenario(canonical, i) for i in linux_flows(canonical) if i != index]
    check_together([*mine, *(c for f in others for c in f.claims() if (c.where, c.key) in places)])
    return flow


def check_linux_flows(canonical: dict[str, Any]) -> None:
    """`check_linux_flow` for every ``stack = "linux"`` flow: before any is started."""
    for i in linux_flows(canonical):
        check_linux_flow(canonical, i)


def start_linux_flow(tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int,
                     out_dir: Path) -> LinuxHandle:
    """Starts flow `index` of the canonical scenario (its src/dst host names, controller name
    as the kernel congestion control, bytes / start / stop, tcp settings) with receiver in
    dst's namespace and sender in src's, port 5400+index; the sender connects at
    origin_ns + flow.start (CLOCK_MONOTONIC ns; origin_ns is model time 0 shared by every
    flow of the run) and stops at bytes done or flow.stop / scenario duration. Returns at once.

    Raises LiveError (one line) as `check_linux_flow` does, when a host is not on the
    testbed, or when a flow running on `tb` needs other values in a namespace or route they
    share. The flow's processes start at once; each needs 0.1-0.3 s to come up, so
    `origin_ns` + its start should lie that far ahead (a late connect is recorded:
    ``result.linux["start_late_ns"]``)."""
    flow = check_linux_flow(canonical, index)
    for host in (flow.src, flow.dst):
        if host not in tb.ns:
            raise LiveError(f"flows[{index}] ({flow.name}): host {host!r} is not on the testbed")
    out_dir.mkdir(parents=True, exist_ok=True)
    return LinuxHandle(tb, flow, origin_ns, out_dir)


def run_linux_flow(tb: Testbed, flow: LinuxFlow, timeout_s: float | None = None) -> LinuxRun:
    """Runs `flow` in the live testbed `tb` (entered) now and waits for it; raises LiveError
    (one line) when the congestion control is unknown, a sysctl cannot be set, an end fails or
    the flow is not done within `timeout_s` (default: its duration + 30 s, or 300 s for
    `bytes`). Its times are model time of the emulator (`tb.emu_origin_ns`)."""
    if flow.stop_ns is None and (flow.bytes is None) == (flow.duration_ns is None):
        raise LiveError(f"flow {flow.name}: a Linux flow needs exactly one of bytes and duration")
    if timeout_s is None:
        timeout_s = 300.0 if flow.duration_ns is None else flow.duration_ns * 1e-9 + 30.0
    check_congestion(flow.congestion)
    assert tb.emu_origin_ns is not None, "run_linux_flow needs an entered testbed"
    handle = LinuxHandle(tb, flow, tb.emu_origin_ns, tb.out_dir)
    handle.finish(timeout_s)
    assert handle.run is not None
    return handle.run


def run_linux(config: dict[str, Any], out_dir: Path, flow: LinuxFlow,
              realtime: bool = False) -> LinuxFlowResult:
    """A testbed with emulator `config`, one Linux flow through it, and its result (both
    hosts run the kernel's TCP: ``kernel_tcp``, their answers leave at the modelled time)."""
    with Testbed({**config, "kernel_tcp": True}, out_dir, realtime=realtime) as tb:
        run = run_linux_flow(tb, flow)
    return run.result(tb)


def connection_drops(tb: Testbed, src: str, dst: str, sport: int, dport: int) -> list[tuple[dict[str, Any], bool]]:
    """The emulator's drops of one TCP connection's packets (host `src` port `sport` to host
    `dst` port `dport`, and back), each with whether it went src -> dst."""
    a, b = tb.addr[src], tb.addr[dst]
    out = []
    for d in tb.drops:
        p = d.get("packet") or {}
        if p.get("proto") != 6:
            continue
        ends = (p.get("src"), p.get("dst"), p.get("sport"), p.get("dport"))
        if ends == (a, b, sport, dport) or ends == (b, a, dport, sport):
            out.append((d, ends[0] == a))
    return out


def _flow_drops(run: LinuxRun, tb: Testbed, shift_ns: int) -> pl.DataFrame:
    """The model's drops of this flow's packets, picked by addresses and ports: data segments
    src -> dst named by stream offset (sequence number minus the first data byte's, mod
    2^32), ACKs dst -> src, control segments (src -> dst without payload); time in ns since
    the flow's origin (the emulator's time plus `shift_ns`)."""
    isn1 = run.sender["isn1"]
    rows = []
    for d, fwd in connection_drops(tb, run.flow.src, run.flow.dst, run.sender["sport"], run.flow.port):
        p = d["packet"]
        payload = p.get("tcp_payload", 0)
        seq = p.get("tcp_seq")
        offset = (seq - isn1) % (1 << 32) if fwd and payload and isn1 is not None else None
        rows.append({"time_ns": d["t_ns"] + shift_ns, "link": d.get("link"),
                     "direction": d["direction"], "cause": d["cause"],
                     "kind": "data" if fwd and payload else ("control" if fwd else "ack"),
                     "tcp_seq": seq, "offset": offset, "payload": payload})
    schema = {"time_ns": pl.Int64, "link": pl.String, "direction": pl.String, "cause": pl.String,
              "kind": pl.String, "tcp_seq": pl.Int64, "offset": pl.Int64, "payload": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def _series(samples: list[dict[str, int]], times: list[int], origin: int, index: int) -> pl.DataFrame:
    """TCP_INFO samples as the simulator's `series` columns (bytes, ns) and Linux's own."""
    inf = (1 << 64) - 1

    def row(t: int, i: dict[str, int]) -> dict[str, Any]:
        mss = i["snd_mss"]
        in_flight = i["unacked"] - i["sacked"] - i["lost"] + i["retrans"]  # tcp_packets_in_flight
        return {
            "flow": index, "time_ns": t - origin, "cwnd": i["snd_cwnd"] * mss,
            "ssthresh": inf if i["snd_ssthresh"] >= 0x7FFFFFFF else i["snd_ssthresh"] * mss,
            "srtt_ns": i["rtt"] * 1000, "rto_ns": i["rto"] * 1000, "in_flight": in_flight * mss,
            "delivered": i["bytes_acked"], "bytes_sent": i.get("bytes_sent", 0),
            # Linux only:
            "rttvar_ns": i["rttvar"] * 1000, "total_retrans": i["total_retrans"],
            "lost": i["lost"], "retrans_out": i["retrans"], "sacked": i["sacked"],
            "delivery_rate_bps": i["delivery_rate"] * 8, "pacing_rate_bps": i["pacing_rate"] * 8,
            "ca_state": linux_tcpinfo.CA_STATES[i["ca_state"]] if i["ca_state"] < 5 else str(i["ca_state"]),
        }

    rows = [row(t, i) for t, i in zip(times, samples, strict=True)]
    _check_names("series", [k for k in rows[0] if k in _SERIES_SHARED])
    return pl.DataFrame(rows, schema_overrides={"ssthresh": pl.UInt64})


_SERIES_SHARED = ("flow", "time_ns", "cwnd", "ssthresh", "srtt_ns", "rto_ns", "in_flight",
                  "delivered", "bytes_sent")


def _check_names(table: str, names: list[str]) -> None:
    """Every name given as a simulator column must be one (the schema is the simulator's)."""
    known = {c["name"] for c in SCHEMA[table]}
    if missing := [n for n in names if n not in known]:
        raise AssertionError(f"{table} has no column {missing}: tcplab_sim::columns changed")


def _result(run: LinuxRun, tb: Testbed) -> LinuxFlowResult:
    assert tb.emu_origin_ns is not None and tb.stats is not None
    origin = tb.emu_origin_ns if run.origin_ns is None else run.origin_ns
    snd, rcv = run.sender, run.receiver
    samples = [linux_tcpinfo.parse(bytes.fromhex(h)) for h in snd["tcp_info"]]
    final = samples[-1]
    rfinal = linux_tcpinfo.parse(bytes.fromhex(rcv["tcp_info"])) if rcv.get("tcp_info") else {}
    drops = _flow_drops(run, tb, tb.emu_origin_ns - origin)
    start = snd["t_connect_ns"] - origin
    end = (snd["t_end_ns"] if snd["t_end_ns"] is not None else snd["sample_ns"][-1]) - origin
    delivered = int(rcv.get("bytes", 0))
    intact = rcv.get("first_bad_offset") is None and rcv.get("error") is None
    sent = final.get("bytes_sent", 0)
    flow = {
        "name": run.flow.name, "src": run.flow.src, "dst": run.flow.dst, "controller": snd["cc"],
        "recovery": "linux", "start_ns": start, "end_ns": end,
        "completed": run.flow.bytes is not None and delivered == run.flow.bytes and intact,
        "bytes_delivered": delivered,
        "throughput_bps": delivered * 8e9 / (end - start) if end > start else 0.0,
        "goodput": delivered / sent if sent else 0.0,
        "segments_sent": final["data_segs_out"], "bytes_sent": sent,
        "retransmits": final["total_retrans"],
        "timeouts": final.get("total_rto"),
        "acks_sent": rfinal.get("segs_out"),
        "spurious_retransmits": final.get("dsack_dups"),
        "data_drops": int((drops["kind"] == "data").sum()),
        "ack_drops": int((drops["kind"] == "ack").sum()),
        "ecn_marks": final.get("delivered_ce"),
        "min_rtt_ns": final["min_rtt"] * 1000 if final.get("min_rtt") else None,
    }
    _check_names("flows", list(flow))
    # One link: its forward direction carries exactly this flow's packets from src; a
    # scenario testbed: src's and dst's counts (shared by every flow on those hosts).
    one_link = "forward" in tb.stats
    fwd = tb.stats["forward"] if one_link else None
    hosts = tb.stats.get("hosts", {})
    lateness = fwd["lateness_ns"] if fwd is not None else hosts[run.flow.dst]["lateness_ns"]
    linux = {
        "sysctls": run.sysctls,
        "routes": run.routes,
        "socket_options": run.socket_options,
        "unmapped_tcp_settings": sorted(k for k in run.flow.tcp if k not in MAPPED),
        "congestion_read_back": snd["cc"],
        "scheduling": {"sender": snd.get("scheduling", "off"), "receiver": rcv.get("scheduling", "off")},
        "bytes_written": snd["bytes_written"],
        "bytes_received": delivered,
        "intact": intact,
        "first_bad_offset": rcv.get("first_bad_offset"),
        "receiver_error": rcv.get("error"),
        # When the receiver's FIN was acknowledged (the connection's last packet had crossed
        # the model), run time; None when it gave up waiting.
        "receiver_closed_ns": rcv["t_closed_ns"] - origin if rcv.get("closed") else None,
        "first_data_seq": snd["isn1"],
        # No segmentation offload crossed the model: the link saw one packet per segment
        # the sender's TCP counted (segs_out counts GSO segments one by one).
        "segs_out": final["segs_out"],
        "forward_packets_offered": fwd["offered"] if fwd is not None else None,
        "src_packets_sent": hosts[run.flow.src]["sent"] if run.flow.src in hosts else None,
        "snd_mss": final["snd_mss"],
        "emulator_lateness_ns": {k: lateness[k] for k in ("p50", "p99", "max")},
        "start_late_ns": start - run.flow.start_ns,
    }
    series = _series(samples, snd["sample_ns"], origin, run.flow.index)
    return LinuxFlowResult(flow, series, drops, final, linux)
