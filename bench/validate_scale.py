"""Scale of scenario validation: N TCP flows on a 10 Gb/s dumbbell (tracing off),
validated by the Python schema (``Scenario.from_dict``: schema, cross-field checks, the
simulator's rules), written as the canonical JSON (``Scenario.canonical_json``) and
validated and built by the simulator (``tcplab._native.Simulation``). Prints each stage's
wall and CPU time (the machine may be shared: CPU time is the steadier figure) and the
process's peak RSS after it.

Usage: .venv/bin/python bench/validate_scale.py [--stagger] [FLOWS ...]   (default: 1000 10000)
Each size runs in its own process so that peak RSS is the size's own. ``--stagger``: the
flows start one after another over the first second (a flow group's ``start_step``).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time


def scenario(flows: int, stagger: bool = False) -> dict:
    group: dict = {"count": flows, "controller": "reno", "recovery": "newreno"}
    if stagger:
        group["start_step"] = f"{1e9 / flows:.0f}ns"
    return {
        "name": f"scale-{flows}",
        "duration": "2s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Gbps", "delay": "10ms", "buffer": 10_000},
        },
        "tcp": {"profile": "rfc"},  # the workload measured before linux became the default
        "flows": [group],
        "trace": {"series": "off", "events": False, "segments": False, "drops": False},
    }


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(flows: int, stagger: bool) -> None:
    from tcplab import _native
    from tcplab.scenario import Scenario

    def stage(what: str, t0: tuple[float, float]) -> tuple[float, float]:
        now = (time.perf_counter(), time.process_time())
        print(
            f"flows={flows} {what} {now[0] - t0[0]:.2f} s (CPU {now[1] - t0[1]:.2f} s), peak RSS {peak_mb():.0f} MB",
            flush=True,
        )
        return now

    t = (time.perf_counter(), time.process_time())
    sc = Scenario.from_dict(scenario(flows, stagger))
    t = stage("python validation", t)
    text = sc.canonical_json()
    t = stage("canonical JSON", t)
    _native.Simulation(text)
    stage("simulator validation+build", t)


def main() -> None:
    args = sys.argv[1:]
    stagger = "--stagger" in args
    args = [a for a in args if a != "--stagger"]
    if len(args) > 1 and args[0] == "--one":
        one(int(args[1]), stagger)
        return
    for n in [int(x) for x in args] or [1000, 10_000]:
        subprocess.run([sys.executable, __file__, "--one", str(n), *(["--stagger"] if stagger else [])], check=True)


if __name__ == "__main__":
    main()
