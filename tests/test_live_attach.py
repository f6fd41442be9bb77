"""A host attached to the live emulator as a user-space endpoint (docs/live.md "Attached endpoints"):
no namespace and no kernel stack, its IPv4 packets read and written whole on a
SOCK_SEQPACKET socket. Needs root, `ip netns`, /dev/net/tun and cargo (to build tcplab-emu);
skips saying which is missing.

A 1-pair dumbbell (access 100 Mb/s 1 ms, bottleneck 10 Mb/s 5 ms): s0 is attached; r0 is a
namespace whose kernel echoes UDP. A datagram written on s0's socket reaches r0's echo
server through the emulated path, and the kernel's reply comes back on the socket, after
at least the path's round-trip propagation; the kernel never sees s0's side. When the
endpoint closes its socket the emulator keeps serving the others and stops cleanly.
"""

from __future__ import annotations

import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_live

from tcplab.live import LiveError, Testbed
from tcplab.scenario import Scenario

emu = test_live.emu  # skips without root, builds tcplab-emu

SCENARIO = """
name = "attach"
seed = 1
duration = "5s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = 50
[topology.sender_access]
rate = "100Mbps"
delay = "1ms"
buffer = 100
[topology.receiver_access]
rate = "100Mbps"
delay = "1ms"
buffer = 100
[[udp]]
src = "s0"
dst = "r0"
rate = "1Mbps"
packet_size = 500
"""
# one way: 1 + 5 + 1 ms of propagation
RTT_FLOOR_S = 2 * 7e-3

ECHO = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9000))
print("up", flush=True)
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(b"echo:" + data, peer)
"""


def _sum16(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def udp_packet(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    ulen = 8 + len(payload)
    pseudo = s + d + struct.pack("!BBH", 0, 17, ulen)
    udp = struct.pack("!HHHH", sport, dport, ulen, 0) + payload
    csum = (~_sum16(pseudo + udp)) & 0xFFFF or 0xFFFF
    udp = udp[:6] + struct.pack("!H", csum) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 1, 0x4000, 64, 17, 0, s, d)
    ip = ip[:10] + struct.pack("!H", (~_sum16(ip)) & 0xFFFF) + ip[12:]
    return ip + udp


def test_an_attached_endpoint_talks_to_a_kernel_through_the_emulated_path(emu: Path, tmp_path: Path) -> None:
    with Testbed.for_scenario(Scenario.from_toml(SCENARIO), tmp_path, emu, attached=("s0",)) as tb:
        assert "s0" not in tb.ns and set(tb.ns) == {"r0"}  # no namespace for the endpoint
        echo = tb.popen("r0", [sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
        assert echo.stdout is not None and echo.stdout.readline() == "up\n"
        sock = tb.attachment["s0"]
        got = []
        for i in range(5):
            sent = time.monotonic()
            sock.send(udp_packet(tb.addr["s0"], tb.addr["r0"], 40000, 9000, f"hello {i}".encode()))
            ready, _, _ = select.select([sock], [], [], 5.0)
            assert ready, "no reply through the emulator"
            reply = sock.recv(2048)
            rtt = time.monotonic() - sent
            # the kernel's reply, whole: IPv4 from r0 to s0, UDP 9000 -> 40000
            assert reply[0] >> 4 == 4 and socket.inet_ntoa(reply[12:16]) == tb.addr["r0"]
            assert socket.inet_ntoa(reply[16:20]) == tb.addr["s0"]
            ihl = (reply[0] & 15) * 4
            assert struct.unpack("!HH", reply[ihl : ihl + 4]) == (9000, 40000)
            got.append(reply[ihl + 8 :])
            assert rtt >= RTT_FLOOR_S, rtt
        assert got == [f"echo:hello {i}".encode() for i in range(5)]
        # the endpoint goes away; the emulator keeps running and stops cleanly at the end
        sock.close()
        time.sleep(0.2)
        assert tb.emu is not None and tb.emu.poll() is None
    assert tb.emu.returncode == 0
    assert tb.stats is not None


def test_an_unknown_attached_host_is_one_line(emu: Path, tmp_path: Path) -> None:
    with pytest.raises(LiveError, match=r"attached host 'x9': no host of the scenario \(hosts: s0, r0"):
        Testbed.for_scenario(Scenario.from_toml(SCENARIO), tmp_path, emu, attached=("x9",))
