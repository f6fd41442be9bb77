#!/usr/bin/env python3
"""The benchmark scenarios B1-B4 built in ns-3 (the `ns3` PyPI wheel, cppyy bindings).

This is the reference side of the tcplab-vs-ns-3 benchmark (see bench/README.md). It never
imports tcplab. Each scenario runs in its own process (ns-3 keeps global state, and peak
memory must be per scenario): without `--child`, this script re-launches itself once per
scenario and collects one JSON line from each.

    python bench/ns3_scenarios.py                      # all four, default spans
    python bench/ns3_scenarios.py --only B1 --span 30  # B1 for 30 simulated seconds
    python bench/ns3_scenarios.py --json out.json

The interpreter must be able to `import ns` (e.g. a venv with `pip install ns3`); give
another one with `--python`.

Topology (a dumbbell, the same one bench/scenarios/B*.toml describe to tcplab):

    s_i --access--> left ==bottleneck==> right --access--> r_i      (i = 0..pairs-1)

* access links: 10x the bottleneck rate, 1 ms one way, a large DropTail queue (never the
  bottleneck); the bottleneck's one-way delay is RTT/2 - 2 ms, so the propagation RTT is
  the scenario's RTT. Every device's MTU is 1600: a full segment is 1512 bytes of IPv4
  (1460 + TCP 20 + timestamps 12 + IP 20; 1514 on the wire with PPP), and with ns-3's
  default 1500-byte MTU IPv4 would fragment every data segment in two (tcplab's
  packets are 1512 bytes).
* bottleneck queue: the PointToPointNetDevice's own DropTailQueue, MaxSize = buffer - 1
  packets in each direction. ns-3 dequeues the packet it is serializing, so buffer - 1
  waiting + 1 on the wire = `buffer` packets, which is tcplab's (Dummynet's) definition of
  the buffer. The traffic-control layer is removed (`TrafficControlHelper.Uninstall` on
  every device after address assignment), so no queue disc (ns-3's default FqCoDel) sits
  in front of the device queue.
* random loss: a RateErrorModel (ERROR_UNIT_PACKET, rate p) as the ReceiveErrorModel of
  `right`'s bottleneck device, i.e. only the forward (data) direction of the bottleneck.
* TCP: TcpNewReno with TcpClassicRecovery (not PRR), SegmentSize 1460, SACK on,
  timestamps on, DelAckCount 2, InitialCwnd 2 (tcplab's default), MinRto 1 s; send and
  receive buffers at least twice the pipe (BDP + buffer), so the window is never limited
  by them. One BulkSendApplication (unlimited) per pair, PacketSink at the receiver, all
  starting at t = 0.

What is measured: wall time and CPU time of `Simulator.Run()` only (not the ~20 s import
of the bindings nor building the topology); events = `Simulator.GetEventCount()`;
transmissions = packets dequeued for serialization by any PointToPointNetDevice (one per
hop, including packets the error model later destroys), computed from the device queues'
counters (received - dropped - still queued) so no per-packet callback slows ns-3 down;
peak RSS of the process before and after the run (the bindings alone take ~650 MiB);
per-direction bottleneck transmissions and the bottleneck's queue drops (counted on
`left`'s TrafficControlLayer "TcDrop" trace through a C++ counter), to check that both
simulators simulated the same thing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# "buffer = BDP" in packets: BDP bytes / 1500-byte packets (MSS 1460 + 40 bytes of IPv4 and
# TCP headers), rounded down: 833 packets at 100 Mb/s x 100 ms, 8333 at 1 Gb/s.
MSS = 1460
WIRE = MSS + 40

# The scenarios of the issue. `span` is the simulated time both simulators run in the
# benchmark: the full duration where ns-3 finishes in about three minutes or less on the
# reference machine, else shorter (docs/performance.md lists both).
SCENARIOS = {
    "B1": dict(pairs=1, rate=1.6e6, rtt=0.120, buffer=12, loss=1e-2, duration=300.0),
    "B2": dict(pairs=2, rate=100e6, rtt=0.100, buffer="bdp", loss=1e-6, duration=60.0),
    "B3": dict(pairs=2, rate=1e9, rtt=0.100, buffer="bdp", loss=1e-6, duration=60.0),
    "B4": dict(pairs=64, rate=10e6, rtt=0.080, buffer=100, loss=0.0, duration=100.0),
}
# Simulated spans used by the benchmark (seconds); None = the full duration.
SPANS = {"B1": None, "B2": None, "B3": 2.0, "B4": None}

ACCESS_FACTOR = 10
MTU = 1600
ACCESS_DELAY = 0.001
ACCESS_BUFFER = 100_000
SEED = 1


def params(name: str) -> dict:
    """The scenario in explicit numbers (rates in bit/s, times in s, buffers in packets)."""
    s = SCENARIOS[name]
    if s["buffer"] == "bdp":
        buffer = int(s["rate"] * s["rtt"] / 8 // WIRE)
    else:
        buffer = int(s["buffer"])
    return dict(
        name=name,
        pairs=s["pairs"],
        duration=s["duration"],
        seed=SEED,
        bottleneck=dict(
            rate=s["rate"],
            delay=round((s["rtt"] / 2 - 2 * ACCESS_DELAY) * 1e9) / 1e9,
            buffer=buffer,
            loss=s["loss"],
        ),
        access=dict(rate=s["rate"] * ACCESS_FACTOR, delay=ACCESS_DELAY, buffer=ACCESS_BUFFER),
        tcp=dict(
            mss=MSS,
            initial_cwnd=2,
            ack_every=2,
            sack=True,
            timestamps=True,
            growth="per_ack",
            controller="reno",
            recovery="sack",
        ),
    )


def from_canonical(scn: dict) -> dict:
    """The same explicit numbers from tcplab's canonical scenario JSON (the Rust schema:
    ns, bit/s, packets), so ns-3 runs exactly what tcplab was given. Only the shapes the
    benchmark uses are accepted: a dumbbell, symmetric links, one access spec for all
    pairs, packet buffers, Bernoulli loss on the bottleneck's forward direction."""
    topo = scn["topology"]
    if topo.get("kind") != "dumbbell":
        raise ValueError("ns-3 side supports dumbbell topologies only")

    def one_dir(d: dict) -> dict:
        buf = d["buffer"]
        if "packets" not in buf:
            raise ValueError(f"buffer must be in packets, got {buf}")
        loss = d.get("loss", {"model": "none"})
        p = loss.get("p", 0.0) if loss.get("model") == "bernoulli" else 0.0
        return dict(rate=float(d["rate"]), delay=d["delay"] / 1e9, buffer=buf["packets"], loss=p)

    bf, br = one_dir(topo["bottleneck"]["forward"]), one_dir(topo["bottleneck"]["reverse"])
    if (bf["rate"], bf["delay"], bf["buffer"]) != (br["rate"], br["delay"], br["buffer"]) or br["loss"]:
        raise ValueError("bottleneck must be symmetric with loss on the forward direction only")
    acc = []
    for side in ("sender_access", "receiver_access"):
        if len(topo[side]) != 1:
            raise ValueError(f"{side}: one entry for all pairs expected")
        for d in ("forward", "reverse"):
            acc.append(one_dir(topo[side][0][d]))
    if any(a != acc[0] for a in acc) or acc[0]["loss"]:
        raise ValueError("access links must all be equal and lossless")
    flows = scn.get("flows") or []
    if len(flows) != topo["pairs"] or scn.get("udp"):
        raise ValueError("one TCP flow per pair (and no UDP) expected")
    # The canonical JSON carries each flow's merged TcpConfig; ns-3 gets one for all flows.
    tcps = [f.get("tcp") or scn.get("tcp") or {} for f in flows]
    if any(t != tcps[0] for t in tcps):
        raise ValueError("every flow must have the same TCP settings")
    if any(f.get("start", 0) or f.get("bytes") or f.get("stop") for f in flows):
        raise ValueError("flows must start at 0 and send until the end")
    tcp = tcps[0]
    ctl = {f["controller"]["name"] for f in flows}
    rec = {f["recovery"]["name"] for f in flows}
    if len(ctl) != 1 or len(rec) != 1 or any(f["controller"].get("params") for f in flows):
        raise ValueError("every flow must use the same controller and recovery, default params")
    growth = tcp.get("growth", {"mode": "byte_counting"})
    return dict(
        name=scn["name"],
        pairs=topo["pairs"],
        duration=scn["duration"] / 1e9,
        seed=scn.get("seed", SEED),
        bottleneck=bf,
        access=dict(rate=acc[0]["rate"], delay=acc[0]["delay"], buffer=acc[0]["buffer"]),
        tcp=dict(
            mss=tcp.get("mss", MSS),
            initial_cwnd=tcp.get("initial_cwnd", 2),
            ack_every=tcp.get("ack_every", 2) if tcp.get("delayed_ack", True) else 1,
            sack=tcp.get("sack_blocks", 3) > 0,
            timestamps=tcp.get("timestamps", True),
            growth=growth["mode"] if isinstance(growth, dict) else growth,
            controller=ctl.pop(),
            recovery=rec.pop(),
        ),
    )


def _rss_mib() -> float:
    """Peak resident set of this process so far (VmHWM), MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_ns3(p: dict, span: float, progress: float | None = None) -> dict:
    """Builds and runs one scenario in this process; returns the measurements."""
    from ns import ns  # noqa: PLC0415 (slow import, only in the child)

    b, a, tcp, n = p["bottleneck"], p["access"], p["tcp"], p["pairs"]
    want = dict(controller="reno", recovery="sack", growth="per_ack", sack=True)
    if any(tcp.get(k, v) != v for k, v in want.items()):
        raise ValueError(f"the ns-3 side models only {want}, got {tcp}")
    pipe_bytes = b["rate"] * 2 * (b["delay"] + 2 * a["delay"]) / 8 + b["buffer"] * (tcp["mss"] + 52)
    sockbuf = max(1 << 20, int(2 * pipe_bytes))

    ns.RngSeedManager.SetSeed(int(p["seed"]) or 1)
    ns.RngSeedManager.SetRun(1)
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId())
    )
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(tcp["mss"]))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(tcp["initial_cwnd"]))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(tcp["ack_every"]))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(sockbuf))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(sockbuf))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(tcp["sack"]))
    ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(tcp["timestamps"]))
    ns.Config.SetDefault("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))

    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    receivers.Create(n)
    routers.Create(2)
    left, right = routers.Get(0), routers.Get(1)
    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(receivers)
    stack.Install(routers)

    def p2p(rate: float, delay: float, qpackets: int):
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(int(rate))))
        # A full segment is 1460 + 20 TCP + 12 timestamp option + 20 IP = 1512 bytes: above
        # the default 1500-byte MTU, IPv4 would fragment every data segment in two.
        h.SetDeviceAttribute("Mtu", ns.UintegerValue(MTU))
        h.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(round(delay * 1e9))))
        h.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{qpackets}p")))
        return h

    access = p2p(a["rate"], a["delay"], a["buffer"])
    # buffer - 1 waiting + the one being serialized (see the module docstring).
    neck = p2p(b["rate"], b["delay"], max(1, b["buffer"] - 1))
    tch = ns.TrafficControlHelper()
    ipv4 = ns.Ipv4AddressHelper()
    devices = []

    def connect(helper, x, y, subnet: str):
        d = helper.Install(x, y)
        ipv4.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
        ifs = ipv4.Assign(d)
        tch.Uninstall(d)  # no queue disc: the device's DropTail queue is the only queue
        devices.append(d)
        return d, ifs

    rx_addrs = []
    for i in range(n):
        connect(access, senders.Get(i), left, f"10.1.{i}.0")
    neck_dev, _ = connect(neck, left, right, "10.3.0.0")
    for i in range(n):
        _, ifs = connect(access, right, receivers.Get(i), f"10.2.{i}.0")
        rx_addrs.append(ifs.GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    if b["loss"] > 0:
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        em.SetAttribute("ErrorRate", ns.DoubleValue(b["loss"]))
        # Device 1 of the bottleneck is `right`'s: it receives the forward (data) direction.
        neck_dev.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))

    port = 5000
    sinks = []
    for i in range(n):
        dst = ns.InetSocketAddress(rx_addrs[i], port).ConvertTo()
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", dst)
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(tcp["mss"]))
        bulk.Install(senders.Get(i)).Start(ns.Seconds(0.0))
        any_addr = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", any_addr).Install(receivers.Get(i))
        sink.Start(ns.Seconds(0.0))
        sinks.append(sink.Get(0).GetObject[ns.PacketSink]())

    # Drops at a full bottleneck queue: with no queue disc, the traffic-control layer drops
    # a packet whose device queue is stopped (full) before the device sees it, so the
    # device queue's own drop counter stays 0. A C++ counter keeps Python out of the loop.
    import cppyy  # noqa: PLC0415

    if not hasattr(cppyy.gbl, "tcplab_bench"):
        cppyy.cppdef(
            """
            namespace tcplab_bench {
            uint64_t drops = 0;
            void OnDrop(ns3::Ptr<const ns3::Packet>) { ++drops; }
            }
            """
        )
    tc_left = left.GetObject[ns.TrafficControlLayer]()
    if not tc_left.TraceConnectWithoutContext("TcDrop", ns.MakeCallback(cppyy.gbl.tcplab_bench.OnDrop)):
        raise RuntimeError("cannot connect to TrafficControlLayer/TcDrop")

    rss_before = _rss_mib()
    c0, w0 = time.process_time(), time.perf_counter()
    if progress:
        # In steps of `progress` simulated seconds, reporting the wall time of each on stderr.
        t = 0.0
        while t < span - 1e-12:
            step = min(progress, span - t)
            ns.Simulator.Stop(ns.NanoSeconds(round(step * 1e9)))
            ns.Simulator.Run()
            t += step
            print(
                f"  ns-3 {p['name']}: t = {t:g} s, wall {time.perf_counter() - w0:.1f} s, "
                f"events {ns.Simulator.GetEventCount():,}",
                file=sys.stderr,
                flush=True,
            )
    else:
        ns.Simulator.Stop(ns.NanoSeconds(round(span * 1e9)))
        ns.Simulator.Run()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    rss_peak = _rss_mib()
    events = int(ns.Simulator.GetEventCount())

    tx = drops = 0
    for d in devices:
        for j in range(d.GetN()):
            q = d.Get(j).GetObject[ns.PointToPointNetDevice]().GetQueue()
            tx += q.GetTotalReceivedPackets() - q.GetTotalDroppedPackets() - q.GetNPackets()
            drops += q.GetTotalDroppedPackets()

    def dequeued(dev) -> int:
        q = dev.GetObject[ns.PointToPointNetDevice]().GetQueue()
        return int(q.GetTotalReceivedPackets() - q.GetTotalDroppedPackets() - q.GetNPackets())

    bq = neck_dev.Get(0).GetObject[ns.PointToPointNetDevice]().GetQueue()
    neck_fwd, neck_rev = dequeued(neck_dev.Get(0)), dequeued(neck_dev.Get(1))
    neck_fwd_bytes = int(bq.GetTotalReceivedBytes() - bq.GetTotalDroppedBytes() - bq.GetNBytes())
    delivered = [int(s.GetTotalRx()) for s in sinks]
    ns.Simulator.Destroy()
    return dict(
        simulator="ns-3",
        ns3_version="3.44",
        scenario=p["name"],
        span_s=span,
        wall_s=wall,
        cpu_s=cpu,
        events=events,
        events_per_s=events / wall if wall > 0 else None,
        transmissions=int(tx),
        transmissions_per_s=tx / wall if wall > 0 else None,
        queue_drops=int(drops),
        # At `left`: the bottleneck's forward queue (its access-link queues never fill).
        bottleneck_drops=int(cppyy.gbl.tcplab_bench.drops) + int(bq.GetTotalDroppedPackets()),
        bottleneck_forward_tx=neck_fwd,
        bottleneck_reverse_tx=neck_rev,
        bottleneck_forward_bytes=neck_fwd_bytes,
        bytes_delivered=sum(delivered),
        goodput_bps=sum(delivered) * 8 / span,
        peak_rss_mib=rss_peak,
        rss_before_run_mib=rss_before,
        socket_buffer_bytes=sockbuf,
    )


def _child(args) -> None:
    if args.canonical:  # run.py has already set the duration to the span
        with open(args.canonical) as f:
            p = from_canonical(json.load(f))
        span = p["duration"]
    else:
        p = params(args.only)
        span = args.span or (SPANS[p["name"]] or p["duration"]) * args.span_scale
    print("NS3RESULT " + json.dumps(run_ns3(p, span, args.progress)), flush=True)


def run_in_subprocess(
    python: str, name: str, span: float | None = None, canonical: str | None = None, timeout=None
) -> dict:
    """Runs one scenario in a fresh `python` process and returns its measurements."""
    cmd = [python, os.path.abspath(__file__), "--child", "--only", name]
    if span:
        cmd += ["--span", repr(span)]
    if canonical:
        cmd += ["--canonical", canonical]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    for line in out.stdout.splitlines():
        if line.startswith("NS3RESULT "):
            r = json.loads(line[len("NS3RESULT ") :])
            r["process_wall_s"] = time.perf_counter() - t0
            return r
    err = "\n".join(l for l in out.stderr.splitlines() if "Failed to materialize symbols" not in l)
    raise RuntimeError(f"ns-3 run of {name} failed (exit {out.returncode}):\n{err[-3000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(SCENARIOS), help="e.g. B1,B3")
    ap.add_argument("--span", type=float, help="simulated seconds (overrides the default span)")
    ap.add_argument("--span-scale", type=float, default=1.0, help="multiply the default spans")
    ap.add_argument("--full", action="store_true", help="run each scenario's full duration")
    ap.add_argument("--python", default=sys.executable, help="interpreter that can import ns")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--progress", type=float, help="report wall time every this many simulated s")
    ap.add_argument("--canonical", help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    results = []
    for name in [s.strip() for s in args.only.split(",") if s.strip()]:
        if name not in SCENARIOS:
            sys.exit(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
        if args.span:
            span = args.span
        elif args.full:
            span = SCENARIOS[name]["duration"]
        else:
            span = (SPANS[name] or SCENARIOS[name]["duration"]) * args.span_scale
        r = run_in_subprocess(args.python, name, span)
        results.append(r)
        print(
            f"{name}: span {r['span_s']:g} s  wall {r['wall_s']:.2f} s  cpu {r['cpu_s']:.2f} s  "
            f"events {r['events']:,} ({r['events_per_s']:,.0f}/s)  "
            f"tx {r['transmissions']:,} ({r['transmissions_per_s']:,.0f}/s)  "
            f"goodput {r['goodput_bps'] / 1e6:.3f} Mb/s  peak RSS {r['peak_rss_mib']:.0f} MiB "
            f"(before run {r['rss_before_run_mib']:.0f})",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
