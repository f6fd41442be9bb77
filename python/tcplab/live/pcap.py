"""A live run's packet captures (``trace.pcap``, docs/live.md "Packet captures"): the
emulator records, per capture file, every packet a captured link direction delivers to its
far end, as it is (its real bytes, CE set when the model marked it, the first
``trace.pcap_snaplen`` bytes kept), stamped with its modelled arrival time on the emulator's
own time axis. Here the stamps move onto the run's axis (model time 0 at the run's
CLOCK_MONOTONIC origin, as every table), and each capture becomes the ``RunResult.pcap``
entry a simulated run has, so the results writer stores ``<name>.pcap`` the same way."""

from __future__ import annotations

import struct
from typing import Any

from tcplab.live.netns import Testbed

__all__ = ["PORTS", "live_captures", "shift_records"]

#: What the ports of a live capture are (summary.json ``pcap.ports``): the real ones.
PORTS = {
    "tcp_and_tcplab_flows": "5400 + flow index at both ends (tcplab's transport: UDP)",
    "udp_flows": "5400 + number of TCP flows + udp index",
}

_GLOBAL = 24
_RECORD = struct.Struct("<IIII")


def shift_records(data: bytes, shift_ns: int) -> tuple[bytes, int, int]:
    """``data`` (a nanosecond pcap file) with every record's time moved by ``shift_ns``;
    records that would fall before 0 are left out. Returns (file, records kept, left out).
    A truncated last record is left out too (the emulator writes whole files, so there is
    none unless the file was cut)."""
    out = bytearray(data[:_GLOBAL])
    kept = dropped = 0
    at = _GLOBAL
    while at + _RECORD.size <= len(data):
        sec, nsec, incl, orig = _RECORD.unpack_from(data, at)
        end = at + _RECORD.size + incl
        if end > len(data):
            dropped += 1
            break
        t = sec * 1_000_000_000 + nsec + shift_ns
        if t < 0:
            dropped += 1
        else:
            out += _RECORD.pack(t // 1_000_000_000, t % 1_000_000_000, incl, orig)
            out += data[at + _RECORD.size:end]
            kept += 1
        at = end
    return bytes(out), kept, dropped


def live_captures(tb: Testbed, origin: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The emulator's captures as ``RunResult.pcap`` entries (``name``, ``link``,
    ``directions``, ``data``, ``counts``: ``packets`` written, ``cut`` past the emulator's
    capture limit, ``before_origin`` left out, ``emulator_delivered``: what the captured
    directions delivered, which the three sum to) and the hosts' addresses. Call after the
    testbed stopped."""
    assert tb.emu_origin_ns is not None
    stats = tb.stats or {}
    shift = tb.emu_origin_ns - origin
    out = []
    for f in stats.get("pcap", []):
        data, kept, early = shift_records((tb.out_dir / f["file"]).read_bytes(), shift)
        link = (stats.get("links") or {}).get(f["link"], {})
        delivered = sum(int(link.get(d, {}).get("delivered", 0)) for d in f["directions"])
        out.append({"name": f["name"], "link": f["link"], "directions": list(f["directions"]),
                    "data": data,
                    "counts": {"packets": kept, "cut": int(f["cut"]), "before_origin": early,
                               "emulator_delivered": delivered}})
    addresses = {name: h["addr"] for name, h in (stats.get("hosts") or {}).items() if "addr" in h}
    return out, addresses
