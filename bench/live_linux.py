#!/usr/bin/env python3
"""Linux TCP through the live emulator (docs/live.md): one kernel TCP bulk transfer A -> B per
row (`tcplab.live.linux`), reporting its throughput against the link rate, retransmissions,
the model's drops and the emulator's lateness.

    sudo .venv/bin/python bench/live_linux.py                      # 10 and 100 Mb/s, cubic and reno
    sudo .venv/bin/python bench/live_linux.py --rates 100e6 --cc cubic --realtime --json out.json

Needs root, ip netns, /dev/net/tun and `cargo build --release -p tcplab-live`. The path: the
link rate both ways, 5 ms propagation each way, a drop-tail buffer of `--buffer` packets
(default 1.5 x the bandwidth-delay product, at least 20), no loss model. Throughput is the
receiver's verified bytes over the connection's life (connect to the last byte
acknowledged), slow start included. Benchmarks are not tests: timings on a shared machine
are noisy (say what else ran).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from tcplab.live.linux import LinuxFlow, run_linux


def one(rate: float, cc: str, seconds: float, buffer: int | None, realtime: bool) -> dict:
    bdp = rate * 0.010 / (1500 * 8)
    pkts = buffer or max(20, int(1.5 * bdp))
    d = {"rate": int(rate), "delay": 5_000_000, "buffer": {"packets": pkts}}
    with tempfile.TemporaryDirectory() as tmp:
        r = run_linux({"forward": d, "reverse": d}, Path(tmp),
                      LinuxFlow(congestion=cc, duration_ns=int(seconds * 1e9)), realtime=realtime)
    f = r.flow
    return {
        "rate_bps": rate, "cc": cc, "buffer_packets": pkts, "seconds": seconds,
        "throughput_bps": f["throughput_bps"], "utilization": f["throughput_bps"] / rate,
        "retransmits": f["retransmits"], "timeouts": f["timeouts"], "data_drops": f["data_drops"],
        "intact": r.linux["intact"], "min_rtt_us": (f["min_rtt_ns"] or 0) / 1e3,
        "lateness_us": {k: v / 1e3 for k, v in r.linux["emulator_lateness_ns"].items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="10e6,100e6")
    ap.add_argument("--cc", default="cubic,reno")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--buffer", type=int, help="buffer in packets (default 1.5 x BDP)")
    ap.add_argument("--realtime", action="store_true", help="SCHED_FIFO for the emulator")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rows = []
    print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()}")
    print(f"{'rate':>6} {'cc':>6} {'buf':>5} {'throughput':>11} {'util':>6} {'retrans':>8} {'drops':>6} "
          f"{'p50 us':>8} {'p99 us':>8} {'max us':>8}")
    for rate in (float(x) for x in a.rates.split(",")):
        for cc in a.cc.split(","):
            r = one(rate, cc, a.seconds, a.buffer, a.realtime)
            rows.append(r)
            lat = r["lateness_us"]
            print(f"{rate / 1e6:5.0f}M {cc:>6} {r['buffer_packets']:5d} {r['throughput_bps'] / 1e6:10.2f}M "
                  f"{r['utilization']:6.3f} {r['retransmits']:8d} {r['data_drops']:6d} {lat['p50']:8.1f} "
                  f"{lat['p99']:8.1f} {lat['max']:8.1f}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
