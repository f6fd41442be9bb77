"""A probe's packets as a pcap file (the live campaign's traces are Parquet, a pcap only when
asked): what the sink's host sends and receives of one probe, captured by its daemon while
the probe runs (``ProbeSpec.pcap``).

:class:`ProbeCapture` reads every IPv4 packet of the daemon's network namespace (an
``AF_PACKET`` socket: root or ``CAP_NET_RAW``; the daemon of a local testbed runs inside its
host's namespace), keeps those between the probe's two transfer addresses with the probe's
port at one end, and writes their first ``snaplen`` bytes (headers; the payload cut) as
pcap records with nanosecond timestamps (``LINKTYPE_RAW``: the IP packet, no link header),
readable by tshark, tcptrace and Wireshark.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from pathlib import Path

__all__ = ["ProbeCapture", "SNAPLEN"]

#: Bytes kept of each packet: IP and TCP headers with their options.
SNAPLEN = 128
_ETH_P_ALL = 0x0003
_MAGIC_NS = 0xA1B23C4D
_LINKTYPE_RAW = 101


class ProbeCapture:
    """Captures the packets between ``a`` and ``b`` (IPv4 addresses) with ``port`` as one
    of their ports into ``path`` until :meth:`stop`."""

    def __init__(self, path: Path, a: str, b: str, port: int, snaplen: int = SNAPLEN) -> None:
        self.path = Path(path)
        self.ends = {socket.inet_aton(a), socket.inet_aton(b)}
        self.port = port
        self.snaplen = snaplen
        self.packets = 0
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(_ETH_P_ALL))
        self._sock.settimeout(0.1)
        self._file = open(self.path, "wb")  # noqa: SIM115 (closed by stop)
        self._file.write(struct.pack("<IHHiIII", _MAGIC_NS, 2, 4, 0, 0, snaplen, _LINKTYPE_RAW))
        self._thread = threading.Thread(target=self._run, name="probe-pcap", daemon=True)
        self._thread.start()

    def _keep(self, p: bytes) -> bool:
        if len(p) < 24 or p[0] >> 4 != 4 or p[9] not in (6, 17):
            return False
        if {p[12:16], p[16:20]} != self.ends:
            return False
        ihl = (p[0] & 15) * 4
        sport, dport = struct.unpack_from("!HH", p, ihl) if len(p) >= ihl + 4 else (0, 0)
        return self.port in (sport, dport)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                p = self._sock.recv(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._keep(p):
                continue
            t = time.time_ns()
            kept = p[: self.snaplen]
            self._file.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(kept), len(p)))
            self._file.write(kept)
            self.packets += 1

    def stop(self) -> int:
        """Ends the capture and closes the file; the packets written."""
        self._stop.set()
        self._thread.join(5)
        self._sock.close()
        self._file.close()
        return self.packets
