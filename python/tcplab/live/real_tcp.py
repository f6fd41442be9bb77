"""tcplab speaking real TCP with unmodified Linux hosts (docs/real-tcp.md): its
sender to a Linux receiver, and a Linux sender to its receiver.

The flow's source host is attached to the emulator as a user-space endpoint
(``Testbed.for_scenario(..., attached=(src,))``): no namespace, no kernel on its side, so no
kernel ever answers its connection. ``tcplab-flow tcp-send`` (tcplab-core's connection layer
around the flow's sender: its controller and recovery strategy) opens a TCP connection to a
plain Linux socket sink in the destination's namespace (``linux_endpoint.py recv``, the one
``stack = "linux"`` flows use: it reads until the sender closes and checks every byte
against the stream's pattern), sends the flow's bytes and closes.

:func:`start_real_tcp_flow` starts both ends; :meth:`RealTcpHandle.finish` waits for them
and returns the sender's summary (what the connection negotiated, counters, facts in
``sender/facts.jsonl`` as the UDP transport writes them) and the receiver's (bytes read,
whether intact, its final ``TCP_INFO``).

The other direction (``stack = "linux"``, ``receiver = "tcplab"``):
:func:`start_real_tcp_receiver_flow` attaches the flow's destination instead
(``attached=(dst,)``) and runs ``tcplab-flow tcp-recv`` there (tcplab-core's receiver in the
connection layer: it listens, checks every byte against the stream's pattern, closes after
the sender's FIN); the sender is the Linux endpoint of ``stack = "linux"`` flows
(``linux_endpoint.py send``, its congestion control by name) in the source's namespace, set
up as `tcplab.live.linux` sets up a Linux flow's sender (sysctls, route attributes).
:meth:`RealTcpReceiverHandle.finish` returns both records.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcplab.live.endpoints import linux_recv, linux_send, tcplab_flow
from tcplab.live.errors import LiveError
from tcplab.live.linux import check_linux_flow, maxseg
from tcplab.live.linux_settings import HostSettings, allowed_congestion_controls
from tcplab.live.netns import Testbed
from tcplab.live.processes import wait_ready
from tcplab.live.transport import PORT, kill_ends

__all__ = ["RealTcpHandle", "RealTcpReceiverHandle", "RealTcpReceiverRun", "RealTcpRun",
           "start_real_tcp_flow", "start_real_tcp_receiver_flow"]

#: How long the sink waits for its connection past the flow's start.
ACCEPT_WAIT_S = 15.0


@dataclass
class RealTcpRun:
    sender: dict[str, Any]  # tcplab-flow tcp-send's summary.json
    receiver: dict[str, Any]  # linux_endpoint.py recv's JSON
    out_dir: Path


class RealTcpHandle:
    """A started flow: Linux sink listening, tcplab sender running."""

    def __init__(self, tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int, out_dir: Path,
                 realtime: bool = False) -> None:
        spec = canonical["flows"][index]
        src, dst = spec["src"], spec["dst"]
        if src not in tb.attached:
            raise LiveError(f"flows[{index}].src = {src!r}: a tcplab-tcp sender's host must be attached "
                            "(Testbed.for_scenario(..., attached=...))")
        if dst not in tb.ns:
            raise LiveError(f"flows[{index}].dst = {dst!r}: not a namespace of the testbed")
        self.index, self.out_dir = index, Path(out_dir)
        self.procs: dict[str, subprocess.Popen[str]] = {}
        port = PORT + index
        (self.out_dir / "sender").mkdir(parents=True, exist_ok=True)
        self.rfile = self.out_dir / "receiver.json"
        ready = self.out_dir / "receiver.ready"
        idle = max(0.0, (origin_ns + int(spec.get("start") or 0) - time.monotonic_ns()) * 1e-9) + ACCEPT_WAIT_S
        try:
            self.procs["receiver"] = tb.popen(dst, linux_recv(port, self.rfile, idle=idle, ready_file=ready),
                                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 10
            while not ready.exists():
                if self.procs["receiver"].poll() is not None or time.monotonic() > deadline:
                    raise LiveError(f"flows[{index}]: the Linux sink did not start listening")
                time.sleep(0.01)
            cfg = {"scenario": canonical, "flow": index, "local": f"{tb.addr[src]}:{port}",
                   "peer": f"{tb.addr[dst]}:{port}", "clock_origin_ns": origin_ns, "realtime": realtime}
            sock = tb.attachment[src]
            argv = tcplab_flow("tcp-send", cfg, self.out_dir / "sender", fd=sock.fileno())
            self.procs["sender"] = tb.popen(src, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            pass_fds=[sock.fileno()])
            wait_ready(self.procs["sender"], "tcplab-flow tcp-send", LiveError)
        except BaseException:
            kill_ends(self.procs)
            raise

    def finish(self, timeout_s: float) -> RealTcpRun:
        """Waits at most `timeout_s` for the sender to end, then for the sink to have read
        the whole stream (it ends when the sender's FIN arrives); raises LiveError (one line)
        when an end failed or did not end. Both are killed in any case."""
        try:
            try:
                _, err = self.procs["sender"].communicate(timeout=max(0.0, timeout_s))
            except subprocess.TimeoutExpired:
                raise LiveError(f"flows[{self.index}]: tcplab-flow tcp-send still running "
                                f"{timeout_s:.1f} s after it was waited for") from None
            if self.procs["sender"].returncode != 0:
                lines = (err or "").strip().splitlines()
                raise LiveError(lines[-1] if lines else f"tcp-send: exit status {self.procs['sender'].returncode}")
            try:
                _, err = self.procs["receiver"].communicate(timeout=10)
            except subprocess.TimeoutExpired:
                raise LiveError(f"flows[{self.index}]: the Linux sink did not end after the sender closed") from None
            if self.procs["receiver"].returncode != 0:
                lines = (err or "").strip().splitlines()
                raise LiveError(lines[-1] if lines else "the Linux sink failed")
        finally:
            kill_ends(self.procs)
        sender = json.loads((self.out_dir / "sender" / "summary.json").read_text())
        receiver = json.loads(self.rfile.read_text())
        return RealTcpRun(sender=sender, receiver=receiver, out_dir=self.out_dir)


def start_real_tcp_flow(tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int, out_dir: Path,
                        realtime: bool = False) -> RealTcpHandle:
    """Starts flow `index` of `canonical` as tcplab's sender over real TCP (its source host
    attached to `tb`) to a Linux sink in its destination's namespace, port 5400 + index;
    model time 0 at `origin_ns` (CLOCK_MONOTONIC)."""
    return RealTcpHandle(tb, canonical, index, origin_ns, out_dir, realtime)


@dataclass
class RealTcpReceiverRun:
    sender: dict[str, Any]  # linux_endpoint.py send's JSON (TCP_INFO samples, hex)
    receiver: dict[str, Any]  # tcplab-flow tcp-recv's summary.json
    sysctls: dict[str, str]  # the sender's namespace, read back
    route: str  # the sender's route to the receiver's address (``ip route``)
    out_dir: Path

    @property
    def throughput_bps(self) -> float:
        """Bytes the receiving application got over the Linux sender's connect to the
        acknowledgment of its last byte and FIN: `tcplab.live.linux`'s ``throughput_bps`` of
        a Linux flow (0 when the sender did not see everything acknowledged)."""
        s = self.sender
        if s.get("t_end_ns") is None or s["t_end_ns"] <= s["t_connect_ns"]:
            return 0.0
        return float(self.receiver["bytes_delivered"]) * 8e9 / (s["t_end_ns"] - s["t_connect_ns"])


class RealTcpReceiverHandle:
    """A started flow: tcplab's receiver listening on the attached destination, the Linux
    sender started in the source's namespace (it connects at the flow's start)."""

    def __init__(self, tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int, out_dir: Path,
                 realtime: bool = False) -> None:
        flow = check_linux_flow(canonical, index)
        src, dst = flow.src, flow.dst
        if dst not in tb.attached:
            raise LiveError(f"flows[{index}].dst = {dst!r}: a tcplab receiver's host must be attached "
                            "(Testbed.for_scenario(..., attached=...))")
        if src not in tb.ns:
            raise LiveError(f"flows[{index}].src = {src!r}: not a namespace of the testbed")
        self.flow, self.index, self.out_dir = flow, index, Path(out_dir)
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.sfile = self.out_dir / "sender.json"
        self.sfile.unlink(missing_ok=True)
        (self.out_dir / "receiver").mkdir(parents=True, exist_ok=True)
        self._settings = HostSettings.of(tb)
        # The destination has no kernel: only the sender's sysctls and route attributes.
        mine = [c for c in flow.claims() if c.where[0] == src]
        try:
            self._settings.apply(tb, mine, flow.congestion if flow.congestion in allowed_congestion_controls()
                                 else None)
            self.sysctls = dict(self._settings.sysctls[src])
            self.route = HostSettings.route(tb, src, dst)
            self._start(tb, canonical, origin_ns, realtime)
        except BaseException:
            kill_ends(self.procs)
            self._settings.release(flow.name)
            raise

    def _start(self, tb: Testbed, canonical: dict[str, Any], origin_ns: int, realtime: bool) -> None:
        flow = self.flow
        cfg = {"scenario": canonical, "flow": self.index, "local": f"{tb.addr[flow.dst]}:{flow.port}",
               "peer": f"{tb.addr[flow.src]}:{flow.port}", "clock_origin_ns": origin_ns, "realtime": realtime}
        sock = tb.attachment[flow.dst]
        argv = tcplab_flow("tcp-recv", cfg, self.out_dir / "receiver", fd=sock.fileno())
        self.procs["receiver"] = tb.popen(flow.dst, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, pass_fds=[sock.fileno()])
        wait_ready(self.procs["receiver"], "tcplab-flow tcp-recv", LiveError)
        argv = linux_send(tb.addr[flow.dst], flow.port, flow.congestion, self.sfile,
                          at_ns=origin_ns + flow.start_ns, interval_ns=flow.interval_ns, bytes=flow.bytes,
                          until_ns=None if flow.stop_ns is None else origin_ns + flow.stop_ns,
                          mss=maxseg(flow.tcp) if flow.tcp.get("mss") else 0, sport=flow.sport)
        self.procs["sender"] = tb.popen(flow.src, argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True)

    def finish(self, timeout_s: float) -> RealTcpReceiverRun:
        """Waits at most `timeout_s` for the Linux sender to end (its bytes and FIN
        acknowledged), then for tcplab's receiver (it ends once its own FIN is acknowledged,
        at the latest at the scenario's duration); raises LiveError (one line) when an end
        failed or did not end. Both are killed and reaped in any case."""
        try:
            try:
                _, err = self.procs["sender"].communicate(timeout=max(0.0, timeout_s))
            except subprocess.TimeoutExpired:
                raise LiveError(f"flows[{self.index}]: the Linux sender still running "
                                f"{timeout_s:.1f} s after it was waited for") from None
            if self.procs["sender"].returncode != 0:
                lines = (err or "").strip().splitlines()
                raise LiveError(lines[-1] if lines else f"the Linux sender: exit status "
                                                         f"{self.procs['sender'].returncode}")
            try:
                _, err = self.procs["receiver"].communicate(timeout=10)
            except subprocess.TimeoutExpired:
                raise LiveError(f"flows[{self.index}]: tcplab-flow tcp-recv did not end after the "
                                "Linux sender") from None
            if self.procs["receiver"].returncode != 0:
                lines = (err or "").strip().splitlines()
                raise LiveError(lines[-1] if lines else f"tcp-recv: exit status {self.procs['receiver'].returncode}")
        finally:
            kill_ends(self.procs)
            self._settings.release(self.flow.name)
        return RealTcpReceiverRun(sender=json.loads(self.sfile.read_text()),
                                  receiver=json.loads((self.out_dir / "receiver" / "summary.json").read_text()),
                                  sysctls=self.sysctls, route=self.route, out_dir=self.out_dir)


def start_real_tcp_receiver_flow(tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int,
                                 out_dir: Path, realtime: bool = False) -> RealTcpReceiverHandle:
    """Starts flow `index` of `canonical` (``stack = "linux"``; its controller's name is the
    kernel's congestion control) as a Linux sender in its source's namespace to tcplab's
    receiver on its destination host, attached to `tb` (``attached=(dst,)``); port
    5400 + index at both ends; the sender connects at `origin_ns` + the flow's start
    (CLOCK_MONOTONIC, model time 0 of both ends). Raises LiveError (one line) as
    `tcplab.live.linux.check_linux_flow` does, or when a host is not where it must be."""
    return RealTcpReceiverHandle(tb, canonical, index, origin_ns, out_dir, realtime)
