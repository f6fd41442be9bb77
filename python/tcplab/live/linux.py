"""Kernel TCP flows through a live testbed (``stack = "linux"``).

A flow is one bulk transfer from namespace A to B (`n` bytes or a duration) by the host's own
TCP with a congestion control chosen by name. Before it starts, the TCP sysctls that the
scenario's TCP settings map to are written in both namespaces and read back
(`sysctls_for`, `RECORDED`); the sender samples ``TCP_INFO`` into a series; the receiver
checks every byte against a pattern (`tcplab.live.linux_endpoint`). When the testbed has
stopped, the emulator's drop log is joined with the flow by addresses, ports and TCP
sequence number: each dropped data segment is named by its offset in the byte stream.

Results use the simulator's column names where they mean the same thing (`tcplab.schema`,
read from ``tcplab_sim::columns``): a `flows` row and a `series` frame; what Linux reports
and the simulator has no column for is kept under its ``tcp_info`` name. See docs/live.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.live import linux_tcpinfo
from tcplab.live.netns import TUN, LiveError, Testbed
from tcplab.schema import SCHEMA

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")

#: Sysctls read back in each namespace and recorded, whether tcplab sets them or not.
RECORDED = (
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_allowed_congestion_control",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.ipv4.tcp_autocorking",
)

#: The socket buffers' sysctls (min, default, max bytes): large enough for 100 Mb/s over a
#: 1 s RTT, so the kernel's buffers do not limit a flow unless `rcv_buf` says so.
RMEM = "4096 131072 16777216"
WMEM = "4096 16384 16777216"

#: Scenario TCP settings with a kernel counterpart (sysctl, socket option or route attribute).
MAPPED = ("timestamps", "sack_blocks", "dsack", "ecn", "frto", "rcv_buf", "mss", "initial_cwnd",
          "rto_min", "delayed_ack")


def available_congestion_controls() -> list[str]:
    """The congestion controls the kernel has (registered; the list is the same in every
    namespace)."""
    return AVAILABLE.read_text().split()


def check_congestion(name: str) -> None:
    """Raises LiveError (one line, listing what the kernel has) when `name` is not available."""
    have = available_congestion_controls()
    if name not in have:
        raise LiveError(f"congestion = {name!r}: the kernel has no such congestion control "
                        f"(available: {', '.join(have)})")


def allowed_congestion_controls() -> list[str]:
    """The congestion controls any process may pick (``tcp_allowed_congestion_control``, set
    in the initial namespace only). Outside the initial namespace only these can become a
    namespace's default (the kernel answers EPERM for the others); a process with
    CAP_NET_ADMIN, as the flow's ends are, may still pick any available one per socket."""
    return ALLOWED.read_text().split()


def sysctls_for(congestion: str, tcp: dict[str, Any], allowed: list[str]) -> dict[str, str]:
    """The sysctls a flow with congestion control `congestion` and scenario TCP settings `tcp`
    (canonical names: ``timestamps``, ``sack_blocks``, ``dsack``, ``ecn``, ``frto``; absent
    fields keep the kernel's value) sets in its namespaces. The namespace's default congestion
    control becomes `congestion` where the kernel allows it (`allowed`); the flow's socket
    asks for it by name (TCP_CONGESTION) in any case."""
    s = {"net.ipv4.tcp_congestion_control": congestion} if congestion in allowed else {}
    s |= {
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_window_scaling": "1",
        "net.ipv4.tcp_rmem": RMEM,
        "net.ipv4.tcp_wmem": WMEM,
    }
    flag = {True: "1", False: "0"}
    if tcp.get("timestamps") is not None:
        s["net.ipv4.tcp_timestamps"] = flag[bool(tcp["timestamps"])]
    if tcp.get("sack_blocks") is not None:
        s["net.ipv4.tcp_sack"] = flag[tcp["sack_blocks"] > 0]
    if tcp.get("dsack") is not None:
        s["net.ipv4.tcp_dsack"] = flag[bool(tcp["dsack"])]
    if tcp.get("ecn") is not None:
        s["net.ipv4.tcp_ecn"] = flag[bool(tcp["ecn"])]  # 1: request ECN on outgoing connections
    if tcp.get("frto") is not None:
        s["net.ipv4.tcp_frto"] = "2" if tcp["frto"] else "0"
    return s


def route_attributes(tcp: dict[str, Any]) -> dict[str, list[str]]:
    """Per side, the attributes of the route to the peer that scenario TCP settings map to:
    ``initcwnd`` (`initial_cwnd`) and ``rto_min`` (`rto_min`, whole ms) on the sender's route,
    ``quickack 1`` (`delayed_ack = false`: every segment ACKed at once) on the receiver's."""
    a: list[str] = []
    b: list[str] = []
    if tcp.get("initial_cwnd") is not None:
        a += ["initcwnd", str(int(tcp["initial_cwnd"]))]
    if tcp.get("rto_min") is not None:
        a += ["rto_min", f"{max(1, round(tcp['rto_min'] / 1e6))}ms"]
    if tcp.get("delayed_ack") is False:
        b += ["quickack", "1"]
    return {"a": a, "b": b}


def apply_routes(tb: Testbed, attrs: dict[str, list[str]]) -> dict[str, str]:
    """Replaces each side's route to its peer with one carrying `attrs`; returns the routes
    read back (``ip route show``)."""
    back = {}
    for side, ns in tb.ns.items():
        peer = tb.addr["b" if side == "a" else "a"]
        if attrs[side]:
            _run(["ip", "-n", ns, "route", "replace", peer, "dev", TUN, "proto", "kernel", "scope",
                  "link", "src", tb.addr[side], *attrs[side]], f"route in namespace {ns}")
        back[side] = " ".join(_run(["ip", "-n", ns, "route", "show", peer], f"route in {ns}").split())
    return back


def _run(argv: list[str], what: str) -> str:
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise LiveError(f"{what}: {why}")
    return r.stdout


def _sysctl(ns: str, args: list[str]) -> str:
    return _run(["ip", "netns", "exec", ns, "sysctl", *args], f"sysctl in namespace {ns}")


def apply_sysctls(tb: Testbed, wanted: dict[str, str]) -> dict[str, dict[str, str]]:
    """Writes `wanted` in both namespaces; returns every `RECORDED` sysctl read back, by side."""
    back: dict[str, dict[str, str]] = {}
    for side, ns in tb.ns.items():
        _sysctl(ns, ["-qw", *(f"{k}={v}" for k, v in wanted.items())])
        names = list(dict.fromkeys([*RECORDED, *wanted]))
        values = {}
        for line in _sysctl(ns, names).splitlines():
            k, _, v = line.partition(" = ")
            values[k.strip()] = " ".join(v.split())
        for k, v in wanted.items():
            if values.get(k) != " ".join(v.split()):
                raise LiveError(f"sysctl {k} = {v!r} in {ns}: reads back {values.get(k)!r}")
        back[side] = values
    return back


@dataclass
class LinuxFlow:
    """One kernel TCP transfer A -> B: `bytes` bytes, or for `duration_ns` (one of them)."""

    congestion: str = "reno"
    bytes: int | None = None
    duration_ns: int | None = None
    tcp: dict[str, Any] = field(default_factory=dict)  # scenario TCP settings (canonical)
    interval_ns: int = 10_000_000  # TCP_INFO sampling period
    port: int = 5201
    name: str = "f0"

    @classmethod
    def from_canonical(cls, flow: dict[str, Any], duration_ns: int | None = None) -> LinuxFlow:
        """A scenario flow in canonical form (``tcplab validate --json``): its controller's name
        is the congestion control asked of the kernel, its ``tcp`` settings map as
        `sysctls_for` and `route_attributes` say; `bytes`, else `duration_ns`."""
        return cls(congestion=flow["controller"]["name"], bytes=flow.get("bytes"),
                   duration_ns=None if flow.get("bytes") is not None else duration_ns,
                   tcp=dict(flow.get("tcp") or {}), name=flow.get("name") or "f0")


@dataclass
class LinuxRun:
    """What a flow left before the testbed stopped; `result` joins it with the drop log."""

    flow: LinuxFlow
    sysctls: dict[str, dict[str, str]]
    routes: dict[str, str]
    socket_options: dict[str, Any]
    sender: dict[str, Any]
    receiver: dict[str, Any]

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
    receiver_final: dict[str, int]  # the receiver's TCP_INFO at the end
    linux: dict[str, Any]  # sysctls read back, socket options, checks


def run_linux_flow(tb: Testbed, flow: LinuxFlow, timeout_s: float | None = None) -> LinuxRun:
    """Runs `flow` in the live testbed `tb` (entered); raises LiveError (one line) when the
    congestion control is unknown, a sysctl cannot be set, an end fails or the flow is not
    done within `timeout_s` (default: its duration + 30 s, or 300 s for `bytes`)."""
    if (flow.bytes is None) == (flow.duration_ns is None):
        raise LiveError(f"flow {flow.name}: a Linux flow needs exactly one of bytes and duration")
    if timeout_s is None:
        timeout_s = 300.0 if flow.duration_ns is None else flow.duration_ns * 1e-9 + 30.0
    check_congestion(flow.congestion)
    sysctls = apply_sysctls(tb, sysctls_for(flow.congestion, flow.tcp, allowed_congestion_controls()))
    routes = apply_routes(tb, route_attributes(flow.tcp))
    opts: dict[str, Any] = {"TCP_CONGESTION": flow.congestion}
    extra_r: list[str] = []
    extra_s: list[str] = []
    if flow.tcp.get("rcv_buf"):
        opts["TCP_WINDOW_CLAMP"] = int(flow.tcp["rcv_buf"])
        extra_r += ["--window-clamp", str(opts["TCP_WINDOW_CLAMP"])]
    if flow.tcp.get("mss"):
        opts["TCP_MAXSEG"] = int(flow.tcp["mss"])
        extra_r += ["--mss", str(opts["TCP_MAXSEG"])]
        extra_s += ["--mss", str(opts["TCP_MAXSEG"])]
    py = [sys.executable, str(Path(__file__).with_name("linux_endpoint.py"))]
    rfile = tb.out_dir / f"linux-{flow.name}-recv.json"
    sfile = tb.out_dir / f"linux-{flow.name}-send.json"
    r = tb.popen("b", [*py, "recv", "--port", str(flow.port), "--out", str(rfile), *extra_r],
                 stdout=subprocess.PIPE, text=True)
    assert r.stdout is not None
    if r.stdout.readline().strip() != "ready":
        raise LiveError("Linux flow: the receiver did not start")
    size = ["--bytes", str(flow.bytes)] if flow.bytes is not None else ["--duration-ns", str(flow.duration_ns)]
    s = tb.popen("a", [*py, "send", "--dst", tb.addr["b"], "--port", str(flow.port), "--cc",
                       flow.congestion, *size, "--interval-ns", str(flow.interval_ns),
                       "--out", str(sfile), *extra_s], stderr=subprocess.PIPE, text=True)
    try:
        _, err = s.communicate(timeout=timeout_s)
        r.wait(timeout=10)
    except subprocess.TimeoutExpired:
        raise LiveError(f"Linux flow {flow.name}: not finished within {timeout_s} s") from None
    if s.returncode != 0:
        lines = (err or "").strip().splitlines()
        raise LiveError(lines[-1] if lines else f"Linux flow sender exited with {s.returncode}")
    return LinuxRun(flow, sysctls, routes, opts, json.loads(sfile.read_text()), json.loads(rfile.read_text()))


def run_linux(config: dict[str, Any], out_dir: Path, flow: LinuxFlow,
              realtime: bool = False) -> LinuxFlowResult:
    """A testbed with emulator `config`, one Linux flow through it, and its result."""
    with Testbed(config, out_dir, realtime=realtime) as tb:
        run = run_linux_flow(tb, flow)
    return run.result(tb)


def _flow_drops(run: LinuxRun, tb: Testbed) -> pl.DataFrame:
    """The model's drops of this flow's packets: data segments A -> B named by stream offset
    (sequence number minus the first data byte's, mod 2^32), and ACKs B -> A."""
    sport, dport, isn1 = run.sender["sport"], run.flow.port, run.sender["isn1"]
    a, b = tb.addr["a"], tb.addr["b"]
    rows = []
    for d in tb.drops:
        p = d["packet"]
        if p.get("proto") != 6:
            continue
        fwd = (p["src"], p["dst"], p.get("sport"), p.get("dport")) == (a, b, sport, dport)
        rev = (p["src"], p["dst"], p.get("sport"), p.get("dport")) == (b, a, dport, sport)
        if not (fwd or rev):
            continue
        payload = p.get("tcp_payload", 0)
        seq = p.get("tcp_seq")
        offset = (seq - isn1) % (1 << 32) if fwd and payload and isn1 is not None else None
        rows.append({"time_ns": d["t_ns"], "direction": d["direction"], "cause": d["cause"],
                     "kind": "data" if fwd and payload else ("ack" if rev else "control"),
                     "tcp_seq": seq, "offset": offset, "payload": payload})
    schema = {"time_ns": pl.Int64, "direction": pl.String, "cause": pl.String, "kind": pl.String,
              "tcp_seq": pl.Int64, "offset": pl.Int64, "payload": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def _series(samples: list[dict[str, int]], times: list[int], origin: int) -> pl.DataFrame:
    """TCP_INFO samples as the simulator's `series` columns (bytes, ns) and Linux's own."""
    inf = (1 << 64) - 1

    def row(t: int, i: dict[str, int]) -> dict[str, Any]:
        mss = i["snd_mss"]
        in_flight = i["unacked"] - i["sacked"] - i["lost"] + i["retrans"]  # tcp_packets_in_flight
        return {
            "flow": 0, "time_ns": t - origin, "cwnd": i["snd_cwnd"] * mss,
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
    origin = tb.emu_origin_ns
    snd, rcv = run.sender, run.receiver
    samples = [linux_tcpinfo.parse(bytes.fromhex(h)) for h in snd["tcp_info"]]
    final = samples[-1]
    rfinal = linux_tcpinfo.parse(bytes.fromhex(rcv["tcp_info"])) if rcv.get("tcp_info") else {}
    drops = _flow_drops(run, tb)
    start = snd["t_connect_ns"] - origin
    end = (snd["t_end_ns"] if snd["t_end_ns"] is not None else snd["sample_ns"][-1]) - origin
    delivered = int(rcv.get("bytes", 0))
    intact = rcv.get("first_bad_offset") is None and rcv.get("error") is None
    sent = final.get("bytes_sent", 0)
    flow = {
        "name": run.flow.name, "src": "a", "dst": "b", "controller": snd["cc"],
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
    fwd = tb.stats["forward"]
    linux = {
        "sysctls": run.sysctls,
        "routes": run.routes,
        "socket_options": run.socket_options,
        "unmapped_tcp_settings": sorted(k for k in run.flow.tcp if k not in MAPPED),
        "congestion_read_back": snd["cc"],
        "bytes_written": snd["bytes_written"],
        "bytes_received": delivered,
        "intact": intact,
        "first_bad_offset": rcv.get("first_bad_offset"),
        "receiver_error": rcv.get("error"),
        "first_data_seq": snd["isn1"],
        # No segmentation offload crossed the model: the link saw one packet per segment
        # the sender's TCP counted (segs_out counts GSO segments one by one).
        "segs_out": final["segs_out"],
        "forward_packets_offered": fwd["offered"],
        "snd_mss": final["snd_mss"],
        "emulator_lateness_ns": {k: fwd["lateness_ns"][k] for k in ("p50", "p99", "max")},
    }
    return LinuxFlowResult(flow, _series(samples, snd["sample_ns"], origin), drops, final, rfinal, linux)
