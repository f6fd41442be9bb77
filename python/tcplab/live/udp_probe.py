"""A constant-rate UDP probe through a live testbed.

Each probe packet carries ``TLPB``, its sequence number and its send time (u64 big endian,
ns of CLOCK_MONOTONIC, the emulator's clock too), so the emulator's drop log names dropped
probe packets by sequence number and the receiver measures one-way delay. `size` is the IP
packet's size (IP + UDP headers + payload), the size the link model serializes.

Run as ``python -m tcplab.live.udp_probe send|recv ...`` inside a namespace (`run_probe` does it);
both die with their parent (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import argparse
import ctypes
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcplab.live.netns import Testbed

MAGIC = b"TLPB"
HEADER = struct.Struct(">4sQQ")
IP_UDP = 28
PORT = 5001


@dataclass
class ProbeResult:
    sent_ns: np.ndarray  # send time of packet k
    seq: np.ndarray  # received sequence numbers, in arrival order
    recv_ns: np.ndarray  # their arrival times
    delay_ns: np.ndarray  # their one-way delays
    tos: np.ndarray  # their IP TOS byte as received (ECN: the low two bits; 3 = CE)
    size: int
    rcvbuf_errors: int  # receiver socket overflows (drops outside the model)

    def lost(self) -> np.ndarray:
        return np.setdiff1d(np.arange(len(self.sent_ns)), self.seq)


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def send(dst: str, rate: float, size: int, count: int, out: Path, tos: int = 0, at_ns: int = 0) -> None:
    """`count` packets of `size` IP bytes to `dst` at `rate` bit/s, evenly spaced, with TOS
    byte `tos` (2: ECN-capable, ECT(0)), the first at `at_ns` (CLOCK_MONOTONIC; 0 or past:
    1 ms from now)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    pad = bytes(size - IP_UDP - HEADER.size)
    gap = size * 8 / rate * 1e9
    sent = np.zeros(count, dtype=np.int64)
    start = max(at_ns, time.monotonic_ns() + 1_000_000)
    for k in range(count):
        target = start + int(k * gap)
        while (left := target - time.monotonic_ns()) > 0:
            if left > 300_000:
                time.sleep((left - 200_000) * 1e-9)
        now = time.monotonic_ns()
        s.sendto(HEADER.pack(MAGIC, k, now) + pad, (dst, PORT))
        sent[k] = now
    np.save(out, sent)


def recv(out: Path, idle: float) -> None:
    """Receives probe packets until `idle` s pass without one (after the first) or SIGTERM."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    s.bind(("0.0.0.0", PORT))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rows: list[tuple[int, int, int, int]] = []
    print("ready", flush=True)
    s.settimeout(30.0)
    while not stop:
        try:
            data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
        except (TimeoutError, InterruptedError):
            break
        t = time.monotonic_ns()
        tos = next((c[2][0] for c in anc if c[:2] == (socket.IPPROTO_IP, socket.IP_TOS)), -1)
        magic, seq, sent = HEADER.unpack_from(data)
        if magic == MAGIC:
            rows.append((seq, sent, t, tos))
            s.settimeout(idle)
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    np.save(out, np.column_stack([a, np.full(len(a), _rcvbuf_errors(), dtype=np.int64)]))


def _rcvbuf_errors() -> int:
    lines = [ln.split() for ln in Path("/proc/net/snmp").read_text().splitlines() if ln.startswith("Udp:")]
    return int(dict(zip(lines[0], lines[1], strict=True)).get("RcvbufErrors", 0))


class Probe:
    """A probe from host `src` to host `dst`: its receiver starts at once, its sender with
    `start` (see `start_probe`, `start_probes`)."""

    def __init__(self, tb: Testbed, src: str, dst: str, rate: float, size: int, count: int,
                 idle: float, tos: int) -> None:
        self.py = [sys.executable, "-m", "tcplab.live.udp_probe"]
        self.tb, self.src, self.dst = tb, src, dst
        self.rate, self.size, self.count, self.idle, self.tos = rate, size, count, idle, tos
        self.rfile = tb.out_dir / f"probe-{src}-{dst}-recv.npy"
        self.sfile = tb.out_dir / f"probe-{src}-{dst}-send.npy"
        self.recv = tb.popen(dst, [*self.py, "recv", "--out", str(self.rfile), "--idle", str(idle)],
                             stdout=subprocess.PIPE, text=True)
        self.receiving = False

    def wait_ready(self) -> None:
        """Waits until the receiver listens."""
        if not self.receiving:
            assert self.recv.stdout is not None
            if self.recv.stdout.readline().strip() != "ready":
                raise RuntimeError("probe receiver did not start")
            self.receiving = True

    def start(self, at_ns: int = 0) -> Probe:
        """Waits for the receiver, then starts the sender (first packet at `at_ns`)."""
        self.wait_ready()
        self.send = self.tb.popen(self.src, [
            *self.py, "send", "--dst", self.tb.addr[self.dst], "--rate", str(self.rate), "--size",
            str(self.size), "--count", str(self.count), "--out", str(self.sfile), "--tos", str(self.tos),
            "--at", str(at_ns)])
        return self

    def result(self) -> ProbeResult:
        """Waits for the sender and the receiver; what arrived."""
        if self.send.wait() != 0:
            raise RuntimeError("probe sender failed")
        if self.recv.wait(timeout=30 + self.idle) != 0:
            raise RuntimeError("probe receiver failed")
        sent = np.load(self.sfile)
        got = np.load(self.rfile)
        return ProbeResult(sent_ns=sent, seq=got[:, 0], recv_ns=got[:, 2], delay_ns=got[:, 2] - got[:, 1],
                           tos=got[:, 3], size=self.size, rcvbuf_errors=int(got[0, 4]) if len(got) else 0)


def start_probe(tb: Testbed, rate: float, size: int, count: int, idle: float = 1.0, tos: int = 0,
                src: str = "a", dst: str = "b") -> Probe:
    """Starts sending `count` probe packets from host `src` to host `dst` at `rate` bit/s (TOS
    byte `tos`); `Probe.result` waits for it."""
    return Probe(tb, src, dst, rate, size, count, idle, tos).start()


def start_probes(tb: Testbed, pairs: list[tuple[str, str]], rate: float, size: int, count: int,
                 idle: float = 1.0, tos: int = 0, lead_ns: int = 1_000_000_000) -> list[Probe]:
    """One probe per (src, dst) pair, all sending their first packet together, `lead_ns`
    after every receiver is ready (the senders are Python processes: they need time to start)."""
    probes = [Probe(tb, s, d, rate, size, count, idle, tos) for s, d in pairs]
    for p in probes:
        p.wait_ready()
    at = time.monotonic_ns() + lead_ns
    return [p.start(at) for p in probes]


def run_probe(tb: Testbed, rate: float, size: int, count: int, idle: float = 1.0,
              tos: int = 0, src: str = "a", dst: str = "b") -> ProbeResult:
    """Sends `count` probe packets `src` -> `dst` (A -> B by default) at `rate` bit/s (TOS
    byte `tos`) and returns what arrived."""
    return start_probe(tb, rate, size, count, idle, tos, src, dst).result()


def main(argv: list[str] | None = None) -> None:
    _die_with_parent()
    p = argparse.ArgumentParser(prog="tcplab.live.udp_probe")
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("--dst", required=True)
    ps.add_argument("--rate", type=float, required=True)
    ps.add_argument("--size", type=int, required=True)
    ps.add_argument("--count", type=int, required=True)
    ps.add_argument("--out", type=Path, required=True)
    ps.add_argument("--tos", type=int, default=0)
    ps.add_argument("--at", type=int, default=0)
    pr = sub.add_parser("recv")
    pr.add_argument("--out", type=Path, required=True)
    pr.add_argument("--idle", type=float, default=1.0)
    a = p.parse_args(argv)
    if a.cmd == "send":
        send(a.dst, a.rate, a.size, a.count, a.out, a.tos, a.at)
    else:
        recv(a.out, a.idle)


if __name__ == "__main__":
    main()
