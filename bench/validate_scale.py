"""Scale of scenario validation: N TCP flows on a 10 Gb/s dumbbell (tracing off), validated
by the Python schema (``Scenario.from_dict``: schema, cross-field checks, the simulator's
rules) and by the simulator (``tcplab._native.Simulation``, which validates and builds the
network). Prints wall time and the process's peak RSS after each stage.

Usage: .venv/bin/python bench/validate_scale.py [FLOWS ...]     (default: 1000 10000)
Each size runs in its own process so that peak RSS is the size's own.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def scenario(flows: int) -> dict:
    return {
        "name": f"scale-{flows}",
        "duration": "2s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Gbps", "delay": "10ms", "buffer": 10_000},
        },
        "tcp": {"profile": "rfc"},  # the workload measured before linux became the default
        "flows": [{"count": flows, "controller": "reno", "recovery": "newreno"}],
        "trace": {"series": "off", "events": False, "segments": False, "drops": False},
    }


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(flows: int) -> None:
    from tcplab import _native
    from tcplab.scenario import Scenario

    t0 = time.perf_counter()
    sc = Scenario.from_dict(scenario(flows))
    t1 = time.perf_counter()
    print(f"flows={flows} python validation {t1 - t0:.2f} s, peak RSS {peak_mb():.0f} MB", flush=True)
    _native.Simulation(json.dumps(sc.canonical()))
    t2 = time.perf_counter()
    print(f"flows={flows} simulator validation+build {t2 - t1:.2f} s, peak RSS {peak_mb():.0f} MB", flush=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        one(int(sys.argv[2]))
        return
    for n in [int(x) for x in sys.argv[1:]] or [1000, 10_000]:
        subprocess.run([sys.executable, __file__, "--one", str(n)], check=True)


if __name__ == "__main__":
    main()
