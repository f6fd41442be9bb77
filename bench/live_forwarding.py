#!/usr/bin/env python3
"""Live emulator forwarding benchmark (docs/live.md): a constant-rate UDP probe through
tcplab-emu at each link rate, reporting the emulator's lateness (actual minus modelled
departure, per packet: p50/p99/max), the delivered rate and drops outside the model.

    sudo .venv/bin/python bench/live_forwarding.py                 # 10, 100 and 500 Mb/s
    sudo .venv/bin/python bench/live_forwarding.py --rates 10e6,100e6,500e6 --realtime --json out.json
    sudo .venv/bin/python bench/live_forwarding.py --pairs 2      # a 2-pair dumbbell instead

Needs root, ip netns, /dev/net/tun and `cargo build --release -p tcplab-live`. The probe
(Python, in namespace A) offers `--load` times the link rate in `--size`-byte IP packets for
`--seconds`; the link has a 5 ms propagation delay and a 1000-packet drop-tail buffer, so at
a load below 1 nothing queues and every packet's lateness is the emulator's alone. At 1.1
the probe saturates the link and the delivered rate is compared with it. Drops outside the
model: the emulator's (TUN write errors, not IPv4), the sender's TUN device queue
(`sender_tun_tx_dropped`: the kernel dropped the packet because the emulator had not read
the ones before it) and the receiver's socket. Benchmarks are not tests: timings on a shared
machine are noisy (say what else ran).

`--pairs N` emulates a scenario's topology instead: an N-pair dumbbell (`Testbed.for_scenario`)
whose bottleneck has the rate and the link's settings, access links 10 times faster (1 ms,
1000 packets), one probe per pair offering `load / N` of the bottleneck rate, all starting
together; the rate is what the receivers get together, the lateness that of the receiver
hosts (the largest p50, p99 and maximum of them) and the drops are counted per link.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from tcplab.live import Testbed
from tcplab.live.netns import TUN
from tcplab.live.udp_probe import run_probe, start_probes
from tcplab.scenario import Scenario


def tun_tx_dropped(tb: Testbed, host: str) -> int:
    """Packets the kernel dropped at `host`'s TUN device before the emulator read them (its
    queue full: the emulator did not read fast enough): drops outside the model that the
    emulator cannot see."""
    r = subprocess.run(tb.command(host, ["ip", "-s", "-j", "link", "show", TUN]), capture_output=True,
                       text=True, check=True)
    return int(json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"])


def one(rate: float, load: float, size: int, seconds: float, realtime: bool) -> dict:
    d = {"rate": int(rate), "delay": 5_000_000, "buffer": {"packets": 1000}}
    count = int(load * rate * seconds / (size * 8))
    with tempfile.TemporaryDirectory() as tmp, Testbed({"forward": d, "reverse": d}, Path(tmp),
                                                       realtime=realtime) as tb:
        r = run_probe(tb, load * rate, size, count, idle=0.5)
        tun_drops = tun_tx_dropped(tb, "a")
    fwd = tb.stats["forward"]
    span = (r.recv_ns[-1] - r.recv_ns[0]) * 1e-9 if len(r.seq) > 1 else float("nan")
    sent_span = (r.sent_ns[-1] - r.sent_ns[0]) * 1e-9
    lat = fwd["lateness_ns"]
    return {
        "rate_bps": rate,
        "load": load,
        "size": size,
        "packets": count,
        "offered_rate_bps": (count - 1) * size * 8 / sent_span,
        "delivered_rate_bps": (len(r.seq) - 1) * size * 8 / span,
        # At the emulator's far device (bytes after the first packet over the write span).
        "emulator_delivered_rate_bps": (fwd["delivered_bytes"] - size) * 8e9
        / max(1, fwd["last_write_ns"] - fwd["first_write_ns"]),
        "delivered": fwd["delivered"],
        "model_drops": sum(fwd["drops"].values()),
        "outside_model": {**fwd["outside_model"], "sender_tun_tx_dropped": tun_drops,
                          "receiver_rcvbuf_errors": r.rcvbuf_errors},
        "lateness_us": {k: lat[k] / 1e3 for k in ("p50", "p99", "max")},
    }


def dumbbell(rate: float, pairs: int, size: int) -> Scenario:
    access = f'rate = {int(10 * rate)}\ndelay = "1ms"\nbuffer = 1000'
    return Scenario.from_toml(f"""
name = "bench-dumbbell"
seed = 1
duration = "60s"
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.bottleneck]
rate = {int(rate)}
delay = "5ms"
buffer = 1000
[topology.sender_access]
{access}
[topology.receiver_access]
{access}
[[udp]]
rate = "1Mbps"
packet_size = {size}
""")


def one_topology(rate: float, load: float, size: int, seconds: float, realtime: bool, pairs: int) -> dict:
    count = int(load / pairs * rate * seconds / (size * 8))
    with tempfile.TemporaryDirectory() as tmp, Testbed.for_scenario(dumbbell(rate, pairs, size), Path(tmp),
                                                                    realtime=realtime) as tb:
        running = start_probes(tb, [(f"s{i}", f"r{i}") for i in range(pairs)], load / pairs * rate, size,
                               count, idle=0.5)
        res = [p.result() for p in running]
        tun_drops = sum(tun_tx_dropped(tb, f"s{i}") for i in range(pairs))
    hosts = [tb.stats["hosts"][f"r{i}"] for i in range(pairs)]
    first = max(int(r.recv_ns[0]) for r in res)
    last = min(int(r.recv_ns[-1]) for r in res)
    got = sum(int(((r.recv_ns >= first) & (r.recv_ns < last)).sum()) for r in res)
    drops: dict[str, int] = {}
    for d in tb.drops:
        key = f"{d['link']}/{d['direction']}/{d['cause']}"
        drops[key] = drops.get(key, 0) + 1
    return {
        "rate_bps": rate,
        "load": load,
        "size": size,
        "pairs": pairs,
        "packets": count * pairs,
        "offered_rate_bps": sum((count - 1) * size * 8 / ((r.sent_ns[-1] - r.sent_ns[0]) * 1e-9) for r in res),
        "delivered_rate_bps": got * size * 8 / max(1e-9, (last - first) * 1e-9),
        "delivered": sum(h["delivered"] for h in hosts),
        "model_drops": drops,
        "outside_model": {"hosts": sum(sum(h["outside_model"].values()) for h in tb.stats["hosts"].values()),
                          "sender_tun_tx_dropped": tun_drops,
                          "receiver_rcvbuf_errors": sum(r.rcvbuf_errors for r in res)},
        "lateness_us": {k: max(h["lateness_ns"][k] for h in hosts) / 1e3 for k in ("p50", "p99", "max")},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="10e6,100e6,500e6")
    ap.add_argument("--loads", default="0.9,1.1")
    ap.add_argument("--size", type=int, default=1400)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--realtime", action="store_true", help="SCHED_FIFO for the emulator")
    ap.add_argument("--pairs", type=int, default=0, help="an N-pair dumbbell instead of one link")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rows = []
    print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()}")
    print(f"{'rate':>8} {'load':>5} {'offered':>9} {'delivered':>10} {'at emu':>8} {'p50 us':>8} {'p99 us':>8} "
          f"{'max us':>8} outside model")
    for rate in (float(x) for x in a.rates.split(",")):
        for load in (float(x) for x in a.loads.split(",")):
            if a.pairs:
                r = one_topology(rate, load, a.size, a.seconds, a.realtime, a.pairs)
                at_emu = "-"
                extra = f"{r['outside_model']} drops {r['model_drops']}"
            else:
                r = one(rate, load, a.size, a.seconds, a.realtime)
                at_emu = f"{r['emulator_delivered_rate_bps'] / 1e6:.2f}M"
                extra = f"{r['outside_model']} model drops {r['model_drops']}"
            rows.append(r)
            lat = r["lateness_us"]
            print(f"{rate / 1e6:6.0f}M {load:5.2f} {r['offered_rate_bps'] / 1e6:8.2f}M "
                  f"{r['delivered_rate_bps'] / 1e6:9.2f}M {at_emu:>8} {lat['p50']:8.1f} {lat['p99']:8.1f} "
                  f"{lat['max']:8.1f} {extra}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
