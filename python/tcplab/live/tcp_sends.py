"""The kernel's transmissions as the wire saw them: the emulator's ``tcp_sends.csv`` (every
TCP segment with payload a host sent: model time, addresses, ports, raw sequence number,
payload bytes; ``tcplab_live::tcp_sends``) as rows of the ``segments`` table.

The kernel's trace says when Linux retransmitted (``tcp:tcp_retransmit_skb``) but not what;
these rows say which bytes left, so `tcplab diff` aligns a Linux sender's transmissions with
a simulated one's segment by segment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

FILE = "tcp_sends.csv"
_SCHEMA = {"t_ns": pl.Int64, "src": pl.String, "dst": pl.String, "sport": pl.Int64, "dport": pl.Int64,
           "seq": pl.Int64, "len": pl.Int64}


def segments(path: Path, shift_ns: int, flows: dict[int, tuple[int, int]]) -> dict[int, list[dict[str, Any]]]:
    """Per flow, its data segments as ``segments`` rows, or {} without the log. `flows`: flow
    -> (the port its receiver listens on, its initial sequence number); `shift_ns` takes the
    emulator's time to the run's axis. ``seq`` counts from the first data byte (mod 2^32);
    ``retransmission`` is how many times a segment starting there had been sent before (0
    while it sends bytes beyond all it had sent)."""
    if not path.exists() or not flows:
        return {}
    log = pl.read_csv(path, schema=_SCHEMA)
    out: dict[int, list[dict[str, Any]]] = {}
    for flow, (port, iss) in flows.items():
        rows: list[dict[str, Any]] = []
        sent: dict[int, int] = {}  # start -> transmissions so far
        end = 0  # the highest byte sent, +1
        mine = log.filter(pl.col("dport") == port)
        for t, seq, n in zip(mine["t_ns"], mine["seq"], mine["len"], strict=True):
            start = (seq - iss - 1) % (1 << 32)
            count = sent.get(start, 0) if start < end else 0
            sent[start] = count + 1
            end = max(end, start + n)
            rows.append({"time_ns": max(0, t + shift_ns), "flow": flow, "seq": start, "len": n,
                         "retransmission": min(count, 255)})
        out[flow] = rows
    return out
