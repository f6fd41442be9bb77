"""Scale benchmark: N TCP flows for T simulated seconds on a 10 Gb/s dumbbell, tracing off,
end to end through ``tcplab.run`` (validation, building, simulation, result conversion) and
writing the results directory (Parquet, summary, no report). Prints the time of each stage
(wall), the process's CPU time and the peak RSS. The target (issue 27 §5): 10,000 flows ×
10 s under 30 s end to end, started together or staggered; memory proportional to flows and
packets in flight.

    .venv/bin/python bench/scale_flows.py --flows 10000 --span 10
    .venv/bin/python bench/scale_flows.py --flows 1000 --span 10 --pairs 1000

``--pairs P`` (default: one pair per flow) puts the flows on P sender/receiver pairs
(``count`` flows per pair, flow groups); each flow is bulk reno + sack, starting at 0, or
with ``--stagger`` one after another over the first second (flow k at k * 1 s / N: each
group's ``start`` and ``start_step``).
Benchmarks are not tests: nothing here runs in CI. Run each size in a fresh process (peak
RSS is per process).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path


def scenario(flows: int, pairs: int, span: float, stagger: bool = False) -> dict:
    per_pair, rest = divmod(flows, pairs)
    step = 1_000_000_000 // flows  # ns between two flows' starts with --stagger
    groups = []
    first = 0  # the index of the group's first flow
    for i in range(pairs):
        n = per_pair + (1 if i < rest else 0)
        if n:
            group = {"count": n, "src": f"s{i}", "dst": f"r{i}", "controller": "reno", "recovery": "sack"}
            if stagger:
                group |= {"start": f"{first * step}ns", "start_step": f"{step}ns"}
            groups.append(group)
            first += n
    return {
        "name": f"scale-{flows}",
        "seed": 1,
        "duration": f"{span}s",
        "topology": {
            "pairs": pairs,
            "bottleneck": {"rate": "10Gbps", "delay": "10ms", "buffer": 10000},
            "sender_access": {"rate": "10Gbps", "delay": "1ms", "buffer": 100000},
            "receiver_access": {"rate": "10Gbps", "delay": "1ms", "buffer": 100000},
        },
        "trace": {"series": "off", "events": False, "segments": False, "drops": False},
        "tcp": {"profile": "rfc"},  # the workload measured before linux became the default
        "flows": groups,
    }


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=10_000)
    ap.add_argument("--pairs", type=int, default=None, help="sender/receiver pairs (default: one per flow)")
    ap.add_argument("--span", type=float, default=10.0, help="simulated seconds")
    ap.add_argument("--stagger", action="store_true", help="start the flows one after another over the first second")
    ap.add_argument("--json", type=Path, default=None, help="write the measurements here")
    a = ap.parse_args()

    from tcplab import _native
    from tcplab.results import write_results
    from tcplab.run import run
    from tcplab.scenario import Scenario

    t = {}
    t0 = time.perf_counter()
    sc = Scenario.from_dict(scenario(a.flows, a.pairs or a.flows, a.span, a.stagger))
    t["validate_s"] = time.perf_counter() - t0
    canonical = sc.canonical_json()
    t1 = time.perf_counter()
    t["canonical_s"] = t1 - t0 - t["validate_s"]
    _native.Simulation(canonical)  # build only: the simulator's checks and set-up
    t["build_s"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    result = run(sc)
    t["run_s"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        write_results(result, Path(d) / "out", report=False)
    t["write_s"] = time.perf_counter() - t3
    t["total_s"] = time.perf_counter() - t0 - t["build_s"]  # the build is repeated inside run
    out = {
        "flows": a.flows,
        "pairs": a.pairs or a.flows,
        "span_s": a.span,
        "stagger": a.stagger,
        **{k: round(v, 3) for k, v in t.items()},
        "events": result.stats["events"],
        "transmissions": result.stats["transmissions"],
        "cpu_s": round(time.process_time(), 3),  # the whole process, imports included
        "peak_rss_mb": round(rss_mb(), 1),
        "goodput_gbps": round(float(result.flows["throughput_bps"].sum()) / 1e9, 3),
    }
    print(json.dumps(out))
    if a.json:
        a.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())
