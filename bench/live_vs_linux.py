#!/usr/bin/env python3
"""tcplab's transport against Linux TCP through the same emulated path (docs/live.md), as the
ETH report's Appendix A.4 compared its user-level Reno over UDP with the kernel's TCP.

One scenario, two stacks, `--runs` times each (alternating, so that a change of the machine's
load hits both): a bulk flow A -> B for `--seconds` over one link of `--rate` (default 100
Mb/s), 5 ms propagation each way, a drop-tail buffer of `--buffer` packets (default 1.5 x
the bandwidth-delay product), no loss model. The scenario's flow is reno/sack with mss 1448,
timestamps, RTO min 200 ms (`bench/live_transport.py`'s `two_hosts`):

- tcplab: `tcplab.live.transport.run_flow` (tcplab-core's sender and receiver over UDP,
  `tcplab-flow`), controller reno, recovery `--recovery` (default sack);
- Linux: `tcplab.live.linux.run_linux` with `LinuxFlow.from_canonical` of the same flow: the
  kernel's reno, the scenario's TCP settings mapped as tcplab maps them (initial window,
  RTO min, DSACK, F-RTO, window clamp, mss).

Both count payload over the flow's life (slow start included): with timestamps a 1500-byte
packet carries 1448 payload bytes (0.965 of the link rate at most). Target (docs/live.md):
tcplab's mean at least 90 % of Linux's. `--realtime` asks SCHED_FIFO for the emulator (and
for tcplab's endpoints; the Linux endpoints are Python processes, the kernel does their TCP).

    sudo .venv/bin/python bench/live_vs_linux.py --realtime [--runs 3] [--seconds 5] [--json out.json]

Needs root, ip netns, /dev/net/tun and the live binaries (scripts/setup.sh). Benchmarks are
not tests: on a shared machine say what else ran (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live_transport import two_hosts  # noqa: E402

from tcplab.live import Testbed  # noqa: E402
from tcplab.live.linux import LinuxFlow, run_linux  # noqa: E402
from tcplab.live.transport import PORT, link_config, run_flow  # noqa: E402
from tcplab.scenario import Scenario  # noqa: E402


def tcplab_row(can: dict, realtime: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp, Testbed(link_config(can), Path(tmp), realtime=realtime) as tb:
        run = run_flow(tb, can, realtime=realtime)
    fwd = tb.stats["forward"] if tb.stats else {}
    return {"stack": "tcplab", "throughput_bps": run.throughput_bps,
            "retransmits": run.sender["retransmits"], "timeouts": run.sender["timeouts"],
            "model_drops": sum(fwd.get("drops", {}).values()), "intact": run.receiver["intact"],
            "sender_cpu_s": run.sender["cpu_ns"] / 1e9, "realtime": run.sender["realtime"],
            "lateness_us": {k: fwd["lateness_ns"][k] / 1e3 for k in ("p50", "p99", "max")}}


def linux_row(can: dict, realtime: bool) -> dict:
    flow = LinuxFlow.from_canonical(can["flows"][0], duration_ns=can["duration"])
    flow.port = PORT  # flow 0: port 5400 at both ends, as tcplab's transport
    with tempfile.TemporaryDirectory() as tmp:
        r = run_linux(link_config(can), Path(tmp), flow, realtime=realtime)
    f = r.flow
    return {"stack": "linux", "throughput_bps": f["throughput_bps"], "retransmits": f["retransmits"],
            "timeouts": f["timeouts"], "model_drops": f["data_drops"] + f["ack_drops"],
            "intact": r.linux["intact"], "controller": f["controller"],
            "lateness_us": {k: v / 1e3 for k, v in r.linux["emulator_lateness_ns"].items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=100e6)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--buffer", type=int, help="buffer in packets (default 1.5 x BDP)")
    ap.add_argument("--recovery", default="sack")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--realtime", action="store_true")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    buffer = a.buffer or max(20, int(1.5 * a.rate * 0.010 / (1500 * 8)))
    can = Scenario.from_dict(two_hosts(1, a.rate, 5, buffer, a.seconds, 0.0, "reno", a.recovery)).canonical()
    print(f"cpus: {os.cpu_count()}  load average before: {os.getloadavg()}")
    print(f"{a.rate / 1e6:g} Mb/s, 5 ms each way, buffer {buffer} packets, {a.seconds:g} s, reno/{a.recovery}")
    rows: list[dict] = []
    for i in range(a.runs):
        order = (tcplab_row, linux_row) if i % 2 == 0 else (linux_row, tcplab_row)
        for fn in order:
            r = fn(can, a.realtime)
            r["run"] = i
            rows.append(r)
            lat = r["lateness_us"]
            print(f"run {i} {r['stack']:>6}: {r['throughput_bps'] / 1e6:7.2f} Mb/s "
                  f"({r['throughput_bps'] / a.rate:.3f} of the link), retransmits {r['retransmits']}, "
                  f"timeouts {r['timeouts']}, model drops {r['model_drops']}, intact {r['intact']}, "
                  f"emulator p50/p99/max {lat['p50']:.1f}/{lat['p99']:.1f}/{lat['max']:.1f} us", flush=True)
    mean = {s: sum(r["throughput_bps"] for r in rows if r["stack"] == s) / a.runs for s in ("tcplab", "linux")}
    ratio = mean["tcplab"] / mean["linux"]
    print(f"mean: tcplab {mean['tcplab'] / 1e6:.2f} Mb/s, linux {mean['linux'] / 1e6:.2f} Mb/s, "
          f"ratio {ratio:.3f} (target >= 0.90)")
    print(f"load average after: {os.getloadavg()}")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "mean_bps": mean, "ratio": ratio,
                                      "buffer_packets": buffer}, indent=1))


if __name__ == "__main__":
    main()
