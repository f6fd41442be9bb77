#!/usr/bin/env python3
"""The live emulator at 1 Gb/s (issue 27 §7, docs/performance.md "Session 24"): what rate a
fast source gets through tcplab-emu and how late the emulator's writes are, with the CPU it
takes. Two sources, both fast enough not to be the limit themselves:

- ``linux``: a kernel TCP bulk transfer A -> B (`tcplab.live.linux`, congestion control
  ``--cc``, cubic by default) for ``--seconds``; its throughput is the receiver's verified
  bytes over the connection's life (slow start included).
- ``udp``: the simulator's UDP constant-bit-rate source and sink (`tcplab-flow udp-send|udp-recv`,
  Rust) offering ``--loads`` times the link rate in ``--size``-byte IP packets; the rate is the
  sink's (what arrived over the time the source sent).

    sudo .venv/bin/python bench/live_gigabit.py                          # 1 Gb/s, both sources, both schedulings
    sudo .venv/bin/python bench/live_gigabit.py --sources linux --sched realtime --json out.json
    sudo .venv/bin/python bench/live_gigabit.py --emulator /tmp/tcplab-emu.old   # an older build

The link: ``--rates`` both ways, 5 ms propagation each way, drop-tail buffer 1.5 x the
bandwidth-delay product (1250 packets at 1 Gb/s), no loss model. Per row: the rate reached,
the emulator's write lateness on the data direction (p50, p99, max; and the ACK direction's
p99), the model's drops, drops outside the model (the emulator's TUN write errors, packets
the kernel dropped at a sender's TUN queue because the emulator had not read them, and for
UDP datagrams lost but not in the drop log: the sink's socket), the emulator's CPU (its
process's user + system time over the flow, in % of one core: with SCHED_FIFO it spins
before each deadline, so the CPU it holds is not all work) and the machine's (/proc/stat,
both cores, by kind). ``--perf DIR`` records the emulator with `perf record -g` during each
row. Needs root, ip netns, /dev/net/tun and `cargo build --release -p tcplab-live`.
Benchmarks are not tests: timings on a shared 2-core machine are noisy (say what else ran).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tcplab.live import Testbed
from tcplab.live.linux import LinuxFlow, run_linux_flow
from tcplab.live.netns import TUN
from tcplab.live.transport import drop_facts, link_config
from tcplab.live.udp import start_udp_flow
from tcplab.scenario import Scenario

TICK = os.sysconf("SC_CLK_TCK")
KINDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def machine_cpu() -> list[int]:
    """The machine's CPU time by kind, in clock ticks summed over its CPUs (/proc/stat)."""
    return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def process_cpu(pid: int) -> float:
    """A process's user + system CPU time in seconds."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def switches(pid: int) -> int:
    """A process's involuntary context switches (preempted while it wanted to run)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("nonvoluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


def stalls(stats: dict[str, Any]) -> dict[str, Any]:
    """The emulator's stalls (deliveries at least 1 ms late): how many, their packets, their
    total span, and the super-packets the hosts' offloads handed over."""
    st = stats["stalls"]
    hosts = stats.get("hosts", {}).values()
    return {"breaks": stats.get("breaks"), "stalls": st["count"], "stall_ms": st["total_ns"] / 1e6, "stall_packets": sum(st["packets"]),
            "stall_worst_ms": sorted((w / 1e6 for w in st["worst_ns"]), reverse=True)[:8],
            "stall_spans_ms": sorted(((u - f) / 1e6 for f, u in zip(st["from_ns"], st["until_ns"], strict=True)),
                                     reverse=True)[:8],
            "super_packets": sum(h.get("super_packets", 0) for h in hosts),
            "segments_of_super_packets": sum(h.get("segments", 0) for h in hosts)}


def tun_tx_dropped(tb: Testbed, host: str) -> int:
    """Packets the kernel dropped at `host`'s TUN device before the emulator read them."""
    r = subprocess.run(tb.command(host, ["ip", "-s", "-j", "link", "show", TUN]), capture_output=True,
                       text=True, check=True)
    return int(json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"])


class Meter:
    """The emulator's and the machine's CPU between `start` and `stop`, and a perf recording."""

    def __init__(self, tb: Testbed, perf: Path | None) -> None:
        assert tb.emu is not None
        self.pid = tb.emu.pid
        self.perf_file = perf
        self.perf: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.t0, self.emu0, self.m0 = time.monotonic(), process_cpu(self.pid), machine_cpu()
        self.sw0 = switches(self.pid)
        if self.perf_file is not None:
            self.perf = subprocess.Popen(["perf", "record", "-g", "-q", "-o", str(self.perf_file), "-p",
                                          str(self.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> dict[str, Any]:
        if self.perf is not None:
            self.perf.send_signal(2)
            self.perf.wait(timeout=60)
        span = time.monotonic() - self.t0
        emu = process_cpu(self.pid) - self.emu0
        m = [b - a for a, b in zip(self.m0, machine_cpu(), strict=True)]
        return {"span_s": span, "emulator_cpu_pct": 100 * emu / span,
                "emulator_preempted": switches(self.pid) - self.sw0,
                "machine_cpu_pct": {k: 100 * v / TICK / span for k, v in zip(KINDS, m, strict=True)}}


def direction(stats: dict[str, Any]) -> dict[str, Any]:
    lat = stats["lateness_ns"]
    return {"lateness_us": {k: lat[k] / 1e3 for k in ("p50", "p99", "max")}, "delivered": stats["delivered"],
            "model_drops": sum(stats["drops"].values()), "tun_write_errors": stats["outside_model"]["tun_write_errors"],
            "at_device_bps": (stats["delivered_bytes"] * 8e9 / max(1, stats["last_write_ns"] - stats["first_write_ns"]))}


def link(rate: float) -> dict[str, Any]:
    pkts = max(20, int(1.5 * rate * 0.010 / (1500 * 8)))
    d = {"rate": int(rate), "delay": 5_000_000, "buffer": {"packets": pkts}}
    return {"forward": d, "reverse": d}


def one_linux(rate: float, cc: str, seconds: float, realtime: bool, emulator: Path | None,
              perf: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        with Testbed({**link(rate), "kernel_tcp": True}, Path(tmp), emulator=emulator, realtime=realtime) as tb:
            meter = Meter(tb, perf)
            meter.start()
            run = run_linux_flow(tb, LinuxFlow(congestion=cc, duration_ns=int(seconds * 1e9)))
            cpu = meter.stop()
            tun = tun_tx_dropped(tb, "a") + tun_tx_dropped(tb, "b")
        f = run.result(tb).flow
    assert tb.stats is not None
    return {"source": "linux", "cc": cc, "rate_bps": rate, "realtime": tb.stats["realtime"],
            "rate_reached_bps": f["throughput_bps"], "retransmits": f["retransmits"],
            "data_drops": f["data_drops"], "forward": direction(tb.stats["forward"]),
            "reverse": direction(tb.stats["reverse"]), "sender_tun_tx_dropped": tun, **cpu, **stalls(tb.stats)}


def udp_scenario(rate: float, load: float, size: int, seconds: float) -> dict[str, Any]:
    lk = link(rate)["forward"]
    return Scenario.from_dict({
        "name": "gigabit-udp", "seed": 1, "duration": f"{seconds + 0.1:g}s",
        "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
        "links": [{"from": "a", "to": "b", "rate": int(rate), "delay": "5ms", "buffer": lk["buffer"]["packets"]}],
        "flows": [],
        "udp": [{"name": "cbr", "src": "a", "dst": "b", "rate": int(load * rate), "packet_size": size,
                 "start": "100ms"}]}).canonical()


def one_udp(rate: float, load: float, size: int, seconds: float, realtime: bool, emulator: Path | None,
            perf: Path | None) -> dict[str, Any]:
    can = udp_scenario(rate, load, size, seconds)
    with tempfile.TemporaryDirectory() as tmp:
        with Testbed(link_config(can), Path(tmp), emulator=emulator, realtime=realtime) as tb:
            meter = Meter(tb, perf)
            origin = time.monotonic_ns() + 300_000_000
            h = start_udp_flow(tb, can, 0, origin, Path(tmp) / "udp0")
            meter.start()
            h.finish((origin + can["duration"] - time.monotonic_ns()) / 1e9 + 10.0)
            cpu = meter.stop()
            tun = tun_tx_dropped(tb, "a")
        model = len([d for d in drop_facts(tb, h) if d["packet"] == "udp"])
    assert tb.stats is not None
    s = h.summary
    return {"source": "udp", "load": load, "size": size, "rate_bps": rate, "realtime": tb.stats["realtime"],
            "offered_bps": load * rate, "rate_reached_bps": s["throughput_bps"], "packets_sent": s["packets_sent"],
            "source_p99_late_us": s["timer_lateness_ns"]["p99"] / 1e3,
            "forward": direction(tb.stats["forward"]), "sender_tun_tx_dropped": tun,
            "lost_outside_model": s["packets_lost"] - model, **cpu, **stalls(tb.stats)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="1000e6")
    ap.add_argument("--sources", default="linux,udp")
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--loads", default="0.9,1.1", help="UDP: offered load, times the link rate")
    ap.add_argument("--size", type=int, default=1500, help="UDP: IP packet size")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--sched", default="realtime,normal", help="realtime (SCHED_FIFO) and/or normal")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--emulator", type=Path, help="tcplab-emu to run (default: this checkout's)")
    ap.add_argument("--perf", type=Path, help="a directory for one perf.data per row")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if a.perf:
        a.perf.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()}  emulator: {a.emulator or 'this checkout'}")
    print(f"{'source':>10} {'rate':>6} {'sched':>9} {'reached':>9} {'p50 us':>7} {'p99 us':>7} {'max us':>8} "
          f"{'ack p99':>7} {'drops':>6} {'outside':>7} {'emu cpu':>7} {'preempt':>7} {'stalls':>6} {'stall ms':>8} "
          f"{'machine (usr/sys/sirq/idle %)':>30}")
    n = 0
    for rate in (float(x) for x in a.rates.split(",")):
        for sched in a.sched.split(","):
            rt = sched == "realtime"
            for source in a.sources.split(","):
                cases = [None] if source == "linux" else [float(x) for x in a.loads.split(",")]
                for load in cases:
                    for _ in range(a.repeat):
                        perf = a.perf / f"perf-{n}.data" if a.perf else None
                        n += 1
                        if source == "linux":
                            r = one_linux(rate, a.cc, a.seconds, rt, a.emulator, perf)
                            name, drops = a.cc, r["data_drops"]
                            outside = r["sender_tun_tx_dropped"] + r["forward"]["tun_write_errors"] \
                                + r["reverse"]["tun_write_errors"]
                            ack = f"{r['reverse']['lateness_us']['p99']:7.1f}"
                        else:
                            r = one_udp(rate, load, a.size, a.seconds, rt, a.emulator, perf)
                            name, drops = f"udp x{load:g}", r["forward"]["model_drops"]
                            outside = r["sender_tun_tx_dropped"] + r["forward"]["tun_write_errors"] \
                                + r["lost_outside_model"]
                            ack = "-"
                        r["perf"] = str(perf) if perf else None
                        rows.append(r)
                        lat, m = r["forward"]["lateness_us"], r["machine_cpu_pct"]
                        print(f"{name:>10} {rate / 1e6:5.0f}M {r['realtime']:>9} {r['rate_reached_bps'] / 1e6:8.1f}M "
                              f"{lat['p50']:7.1f} {lat['p99']:7.1f} {lat['max']:8.0f} {ack:>7} {drops:6d} "
                              f"{outside:7d} {r['emulator_cpu_pct']:6.0f}% {r['emulator_preempted']:7d} {r['stalls']:6d} "
                              f"{r['stall_ms']:8.1f} "
                              f"{m['user']:7.0f}/{m['system']:.0f}/{m['softirq']:.0f}/{m['idle']:.0f}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
