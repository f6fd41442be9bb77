"""A host's network device handed to tcplab's own TCP (docs/real-tcp.md) on a host whose kernel is on
the path (a namespace of a testbed, a real machine): the endpoint reads and writes whole IP
packets on an ``AF_PACKET`` socket bound to the device that routes to its peer, and the
kernel is kept out of the connection, so that it never answers it with a reset.

- **In**: packets reach a packet socket bound for every protocol before the device's ingress
  traffic control runs; a ``tc`` ingress filter then redirects the connection's TCP packets
  (its local port) to a veth device that is down (``tlbh<port>``), where they are dropped:
  the kernel's TCP never sees them.
- **Out**: what the endpoint writes on the socket leaves through the device; its own packets
  are not read back (``PACKET_IGNORE_OUTGOING``).

``with RawDevice(peer, port) as fd:`` gives the socket's descriptor (inheritable, for the
endpoint's ``--fd``); leaving the block removes the filter and the veth pair and closes the
socket. Needs ``CAP_NET_ADMIN`` and ``CAP_NET_RAW`` in the namespace (root).
"""

from __future__ import annotations

import os
import socket
import subprocess
from typing import Any

from tcplab.live.errors import LiveError

__all__ = ["RawDevice", "route_device"]

_ETH_P_ALL = 0x0003
_SOL_PACKET = 263
_PACKET_IGNORE_OUTGOING = 23


def _run(*argv: str) -> None:
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise LiveError(f"{' '.join(argv[:4])} ...: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")


def route_device(peer: str) -> str:
    """The device this namespace routes to `peer` over (``ip route get``)."""
    r = subprocess.run(["ip", "-o", "route", "get", peer], capture_output=True, text=True)
    words = r.stdout.split()
    if r.returncode != 0 or "dev" not in words:
        raise LiveError(f"no route to {peer}: {r.stderr.strip()}")
    return words[words.index("dev") + 1]


class RawDevice:
    """The device toward `peer` for a TCP connection on local `port` (module docstring)."""

    def __init__(self, peer: str, port: int) -> None:
        self.peer, self.port = peer, port
        self.dev = ""
        self.sink = f"tlbh{port}"
        self.sock: socket.socket | None = None
        self._made: list[tuple[str, ...]] = []

    def __enter__(self) -> int:
        try:
            self.dev = route_device(self.peer)
            _run("ip", "link", "add", self.sink, "type", "veth", "peer", "name", f"{self.sink}p")
            self._made.append(("ip", "link", "del", self.sink))
            # another connection's ingress qdisc may be there already (or be added meanwhile):
            # kept, shared
            if not self._has_ingress():
                r = subprocess.run(["tc", "qdisc", "add", "dev", self.dev, "ingress"], capture_output=True, text=True)
                if r.returncode != 0 and not self._has_ingress():
                    raise LiveError(f"tc qdisc add dev {self.dev} ingress: {r.stderr.strip()}")
            _run("tc", "filter", "add", "dev", self.dev, "parent", "ffff:", "pref", str(self.port), "protocol", "ip",
                 "u32", "match", "ip", "protocol", "6", "0xff", "match", "ip", "dport", str(self.port), "0xffff",
                 "action", "mirred", "egress", "redirect", "dev", self.sink)
            self._made.append(("tc", "filter", "del", "dev", self.dev, "parent", "ffff:", "pref", str(self.port)))
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(_ETH_P_ALL))
            self.sock.setsockopt(_SOL_PACKET, _PACKET_IGNORE_OUTGOING, 1)
            self.sock.bind((self.dev, _ETH_P_ALL))
            os.set_inheritable(self.sock.fileno(), True)
            return self.sock.fileno()
        except BaseException:
            self.__exit__()
            raise

    def _has_ingress(self) -> bool:
        shown = subprocess.run(["tc", "qdisc", "show", "dev", self.dev, "ingress"], capture_output=True, text=True)
        return "ingress" in shown.stdout

    def __exit__(self, *exc: Any) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        for argv in reversed(self._made):
            subprocess.run(argv, capture_output=True)
        self._made = []
