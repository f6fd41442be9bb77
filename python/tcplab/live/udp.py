"""UDP constant-bit-rate flows on a live testbed: the simulator's UDP source and sink
(`tcplab-flow udp-send|udp-recv`, Rust: crates/tcplab-live) in the flow's hosts'
namespaces, through the emulator.

`start_udp_flow(tb, canonical, index, origin_ns, out_dir)` starts the sink in the flow's
``dst`` namespace, waits until its socket is bound, starts the source in ``src`` and
returns at once; the source sends the simulator's schedule (rate, packet size counted as the
IP packet, start, stop: the same send times) on the shared clock, whose model time 0 is
``origin_ns`` (CLOCK_MONOTONIC, a moment ahead so both ends are up). `UdpHandle.finish`
waits for the source to end, lets what is in flight arrive, stops the sink (SIGTERM: it
writes its summary) and reads both summaries. Whatever happens, both processes are killed
before `finish` returns (and with the testbed, which owns them). UDP flow `index` uses port
5400 + len(flows) + index at both ends (`udp_port`): in the live numbering of a scenario's
flows, TCP flows first and UDP flows after them, flow i on port 5400 + i, so a TCP flow and
a UDP flow between the same hosts never share a socket (and the emulator's pinned routes
tell them apart by port).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tcplab.live.netns import LiveError, Testbed
from tcplab.live.transport import PORT, finish_ends, settle_s, start_ends


def udp_port(canonical: dict[str, Any], index: int) -> int:
    """The port of UDP flow `index` at both ends: 5400 + the number of TCP flows + index
    (the emulator's plan gives the same, ``tcplab-emu --plan``'s ``flows``)."""
    return PORT + len(canonical.get("flows") or []) + index


def _host(tb: Testbed, canonical: dict[str, Any], name: str, what: str) -> str:
    """The testbed's side of host `name`: itself on a scenario's testbed, else "a" for the
    one link's ``from`` host and "b" for its ``to`` host."""
    if name in tb.ns:
        return name
    links = (canonical.get("topology") or {}).get("links") or []
    if len(links) == 1:
        side = {links[0]["from"]: "a", links[0]["to"]: "b"}
        if name in side:
            return side[name]
    raise LiveError(f"{what}: host {name!r} is not on the testbed")


class UdpHandle:
    """A UDP CBR flow started on a testbed. After `finish`: ``sender`` and ``receiver``
    (the ends' summaries), ``summary`` (sent, received, lost, loss %, jitter, throughput),
    ``facts_paths`` (the ends' facts.jsonl: ``udp_sent`` and ``delivered`` facts)."""

    def __init__(self, tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int,
                 out_dir: Path) -> None:
        self.index = index
        self.out_dir = Path(out_dir)
        self.clock_origin_ns = origin_ns
        self.spec = canonical["udp"][index]
        self.sender: dict[str, Any] = {}
        self.receiver: dict[str, Any] = {}
        self.summary: dict[str, Any] = {}
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self._settle_s = settle_s(canonical)
        what = f"udp[{index}]"
        src = _host(tb, canonical, self.spec["src"], what)
        dst = _host(tb, canonical, self.spec["dst"], what)
        port = udp_port(canonical, index)

        def config(me: str, peer: str) -> dict[str, Any]:
            return {"scenario": canonical, "flow": index, "local": f"{tb.addr[me]}:{port}",
                    "peer": f"{tb.addr[peer]}:{port}", "clock_origin_ns": origin_ns,
                    "realtime": tb.realtime}

        start_ends(tb, self.out_dir, src, dst, ("udp-send", "udp-recv"), config, self.procs)

    @property
    def facts_paths(self) -> list[Path]:
        return [self.out_dir / role / "facts.jsonl" for role in ("sender", "receiver")]

    def facts(self, side: str) -> list[dict[str, Any]]:
        """The recorded facts of `side` ("sender" or "receiver"), as JSON objects."""
        text = (self.out_dir / side / "facts.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line]

    def finish(self, timeout_s: float) -> UdpHandle:
        """Waits up to `timeout_s` for the source to end, then, after what is in flight
        could arrive, stops the sink and reads both summaries; LiveError (one line) when an
        end fails or the source is still running."""
        finish_ends(self.procs, timeout_s, self._settle_s, f"udp[{self.index}]",
                    "tcplab-flow udp")
        self.sender = json.loads((self.out_dir / "sender" / "summary.json").read_text())
        self.receiver = json.loads((self.out_dir / "receiver" / "summary.json").read_text())
        self.summary = udp_summary(self.sender, self.receiver)
        return self


def udp_summary(sender: dict[str, Any], receiver: dict[str, Any]) -> dict[str, Any]:
    """One flow's numbers from its ends' summaries: packets sent (the socket took them) and
    received, lost (sent - received), loss in %, RFC 3550 jitter (as iperf3 reports it),
    throughput (what arrived by the end over the time the source sent), CPU, and the
    source's lateness behind its send times."""
    sent, received = sender["packets_sent"], receiver["packets_received"]
    return {"packets_sent": sent, "packets_received": received,
            "packets_lost": sent - received,
            "loss_percent": 100.0 * (sent - received) / sent if sent else 0.0,
            "jitter_ns": receiver["jitter_ns"], "throughput_bps": receiver["throughput_bps"],
            "out_of_order": receiver["out_of_order"], "duplicates": receiver["duplicates"],
            "send_errors": sender["send_errors"],
            "cpu_ns": {"sender": sender["cpu_ns"], "receiver": receiver["cpu_ns"]},
            "timer_lateness_ns": sender["timer_lateness_ns"]}


def start_udp_flow(tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int,
                   out_dir: Path) -> UdpHandle:
    """Starts UDP flow `index` of the canonical scenario on `tb` (entered): the sink in its
    ``dst`` host's namespace, the source in ``src``'s, port `udp_port` (5400 + TCP flows +
    index); model time 0 is `origin_ns` (CLOCK_MONOTONIC ns; each end needs about 0.1 s to
    come up, so it should lie that far ahead). Returns at once; LiveError (one line) when an end cannot start."""
    udp = canonical.get("udp") or []
    if not 0 <= index < len(udp):
        raise LiveError(f"udp flow = {index}: the scenario has {len(udp)} UDP flows")
    return UdpHandle(tb, canonical, index, origin_ns, out_dir)
