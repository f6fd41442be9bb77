"""The fixed cost of one run (issue 27 §1): `tcplab.run` of a tiny scenario (1 s, one flow,
1 Mb/s, traces off), where nearly all the time is spent around the simulation: validating
the document, turning the result tables into polars frames.

    .venv/bin/python bench/tiny_run.py [--runs 200] [--repeat 5]

Prints, per repetition, the mean milliseconds per run, then the best, and a split of one
run's time (validation and canonical form; the simulation itself; the tables as frames).
"""

from __future__ import annotations

import argparse
import json
import time

import tcplab
from tcplab import _native
from tcplab.run import RunResult
from tcplab.scenario import as_scenario

DOC = {
    "name": "tiny",
    "duration": "1s",
    "topology": {"pairs": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms", "buffer": 20}},
    "tcp": {"profile": "rfc"},  # the workload measured before linux became the default
    "flows": [{"src": "s0", "dst": "r0", "controller": "reno", "recovery": "newreno"}],
    "trace": {"series": "off", "segments": False, "drops": False, "events": False},
}


def per_run_ms(f, runs: int) -> float:
    t = time.perf_counter()
    for _ in range(runs):
        f()
    return (time.perf_counter() - t) / runs * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for _ in range(20):  # warm up: imports, caches
        tcplab.run(DOC)
    whole = [per_run_ms(lambda: tcplab.run(DOC), a.runs) for _ in range(a.repeat)]
    print("tcplab.run, ms per run:", " ".join(f"{x:.2f}" for x in whole), f"(best {min(whole):.2f})")
    canonical = json.dumps(as_scenario(DOC).canonical())
    validate = min(per_run_ms(lambda: as_scenario(DOC).canonical(), a.runs) for _ in range(a.repeat))

    def simulate() -> dict:
        sim = _native.Simulation(canonical)
        sim.run_until(sim.end_ns)
        return sim.finish()

    sim_ms = min(per_run_ms(simulate, a.runs) for _ in range(a.repeat))
    native = simulate()
    scenario = as_scenario(DOC)
    frames = min(per_run_ms(lambda: RunResult.from_native(scenario, dict(native)), a.runs)
                 for _ in range(a.repeat))
    print(f"split (best of {a.repeat}): validation and canonical form {validate:.2f} ms, "
          f"simulation {sim_ms:.2f} ms, tables as frames {frames:.2f} ms")


if __name__ == "__main__":
    main()
