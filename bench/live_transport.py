#!/usr/bin/env python3
"""tcplab's live transport benchmark (docs/live.md): tcplab-core's sender and receiver over UDP
(`tcplab-flow`) through the emulator, two measurements:

1. Throughput and CPU at each link rate (default 10 and 100 Mb/s): one reno/sack flow, no
   loss, 5 ms propagation each way, a buffer of one bandwidth-delay product, `--seconds`
   long. Reports the delivered throughput against the link rate and the CPU time (user +
   system) of the sender and the receiver per second and per delivered Mb.
2. Live versus simulated throughput on one scenario (`--compare-seeds` seeds): 10 Mb/s, 10
   ms each way, 50-packet buffer, Bernoulli loss 1 % on the data direction, reno/newreno, 2 s,
   the same seeds (the emulator draws the simulator's loss stream). Prints each seed and the
   ratio of the means.

    sudo .venv/bin/python bench/live_transport.py [--rates 10e6,100e6] [--seconds 5]
        [--compare-seeds 10] [--realtime] [--json out.json]

Needs root, ip netns, /dev/net/tun and `cargo build --release -p tcplab-live`. Benchmarks
are not tests: on a shared machine say what else ran (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import tcplab
from tcplab.live import Testbed
from tcplab.live.transport import link_config, run_flow
from tcplab.scenario import Scenario


def two_hosts(seed: int, rate: float, delay_ms: float, buffer: int, seconds: float, loss: float,
              controller: str, recovery: str) -> dict:
    link: dict = {"from": "a", "to": "b", "rate": f"{rate / 1e6:g}Mbps", "delay": f"{delay_ms:g}ms",
                  "buffer": buffer}
    if loss:
        link["forward"] = {"loss": loss}
    return {"name": "live-transport-bench", "seed": seed, "duration": f"{seconds:g}s",
            "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
            "links": [link], "tcp": {"profile": "rfc", "mss": 1448, "rto_min": "200ms"},
            "trace": {"series": "off", "events": False, "segments": False, "drops": False},
            "flows": [{"src": "a", "dst": "b", "controller": controller, "recovery": recovery}]}


def live(doc: dict, realtime: bool, framing: str = "tcplab"):
    can = Scenario.from_dict(doc).canonical()
    with tempfile.TemporaryDirectory() as tmp, Testbed(link_config(can), Path(tmp),
                                                       realtime=realtime) as tb:
        run = run_flow(tb, can, framing=framing, realtime=realtime)
    return tb, run


def rate_row(rate: float, seconds: float, realtime: bool) -> dict:
    bdp = max(50, int(rate * 0.010 / (1500 * 8)))
    doc = two_hosts(1, rate, 5, bdp, seconds, 0.0, "reno", "sack")
    tb, run = live(doc, realtime)
    s, r = run.sender, run.receiver
    thr = run.throughput_bps
    fwd = tb.stats["forward"]["lateness_ns"] if tb.stats else {}
    return {
        "rate_bps": rate, "throughput_bps": thr, "utilisation": thr / rate,
        "sender_cpu_s_per_s": s["cpu_ns"] / 1e9 / seconds,
        "receiver_cpu_s_per_s": r["cpu_ns"] / 1e9 / seconds,
        "sender_cpu_ms_per_mb": s["cpu_ns"] / 1e6 / (r["bytes_delivered"] * 8 / 1e6),
        "receiver_cpu_ms_per_mb": r["cpu_ns"] / 1e6 / (r["bytes_delivered"] * 8 / 1e6),
        "retransmits": s["retransmits"], "send_errors": s["send_errors"],
        "intact": r["intact"], "emulator_lateness_p99_ns": fwd.get("p99"),
        "realtime": s["realtime"],
    }


def compare(seeds: int, realtime: bool) -> dict:
    rows = []
    for seed in range(1, seeds + 1):
        doc = two_hosts(seed, 10e6, 10, 50, 2, 0.01, "reno", "newreno")
        sim = tcplab.run(doc).flows.row(0, named=True)
        _, run = live(doc, realtime)
        rows.append({"seed": seed, "sim_bps": sim["throughput_bps"], "live_bps": run.throughput_bps,
                     "sim_retransmits": sim["retransmits"],
                     "live_retransmits": run.sender["retransmits"],
                     "sim_timeouts": sim["timeouts"], "live_timeouts": run.sender["timeouts"]})
    mean = lambda k: sum(r[k] for r in rows) / len(rows)  # noqa: E731
    return {"seeds": rows, "sim_mean_bps": mean("sim_bps"), "live_mean_bps": mean("live_bps"),
            "ratio": mean("live_bps") / mean("sim_bps")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="10e6,100e6")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--compare-seeds", type=int, default=10)
    ap.add_argument("--realtime", action="store_true")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    out: dict = {"rates": [], "compare": None}
    for rate in (float(x) for x in a.rates.split(",") if x):
        row = rate_row(rate, a.seconds, a.realtime)
        out["rates"].append(row)
        print(f"{rate / 1e6:6.0f} Mb/s: {row['throughput_bps'] / 1e6:7.2f} Mb/s "
              f"({row['utilisation']:.1%}), CPU sender {row['sender_cpu_s_per_s']:.1%} "
              f"receiver {row['receiver_cpu_s_per_s']:.1%} of a core "
              f"({row['sender_cpu_ms_per_mb']:.3f} / {row['receiver_cpu_ms_per_mb']:.3f} ms per Mb), "
              f"retransmits {row['retransmits']}, emulator p99 {row['emulator_lateness_p99_ns']} ns")
    if a.compare_seeds:
        c = compare(a.compare_seeds, a.realtime)
        out["compare"] = c
        for r in c["seeds"]:
            print(f"seed {r['seed']:2d}: sim {r['sim_bps'] / 1e6:.3f} Mb/s live {r['live_bps'] / 1e6:.3f} "
                  f"({r['live_bps'] / r['sim_bps'] - 1:+.1%}); retransmits {r['sim_retransmits']} / "
                  f"{r['live_retransmits']}, timeouts {r['sim_timeouts']} / {r['live_timeouts']}")
        print(f"mean: sim {c['sim_mean_bps'] / 1e6:.3f} live {c['live_mean_bps'] / 1e6:.3f} "
              f"ratio {c['ratio']:.3f}")
    print(f"load average after: {os.getloadavg()}")
    if a.json:
        a.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
