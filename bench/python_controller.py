"""Per-ACK cost of a congestion controller written in Python against the built-in Rust one.

Runs one scenario (default bench/scenarios/B2.toml: 2 flows, 100 Mb/s, 60 s) twice in this
process, with every flow's controller set to the built-in ``reno`` and to the Python Reno of
examples/python_reno.py (registered as ``python_reno``), times ``run_until(end)`` (wall and
CPU, best of ``--repeat``), and divides the difference by the ACKs the senders received
(the flows table's ``acks_sent`` minus ``ack_drops``).

    .venv/bin/python bench/python_controller.py [--scenario bench/scenarios/B2.toml] [--repeat 3]

The two runs must give the same flows table (checked): the Python Reno is bit-identical.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
import tomllib
from pathlib import Path

import numpy as np
import polars as pl

import tcplab
from tcplab import _native
from tcplab.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]


def _python_reno() -> type:
    spec = importlib.util.spec_from_file_location("python_reno", ROOT / "examples" / "python_reno.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Reno


def _timed(doc: dict, repeat: int) -> tuple[float, float, dict]:
    """Best wall and CPU seconds of ``run_until(end)``, and the raw results of the last run."""
    canonical = Scenario.from_dict(doc).canonical_json()
    best_wall = best_cpu = float("inf")
    raw: dict = {}
    for _ in range(repeat):
        sim = _native.Simulation(canonical)
        w0, c0 = time.perf_counter(), time.process_time()
        sim.run_until(sim.end_ns)
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        raw = sim.finish()
    return best_wall, best_cpu, raw


def _same_column(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return list(a) == list(b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", type=Path, default=ROOT / "bench" / "scenarios" / "B2.toml")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="write the measurements here")
    args = ap.parse_args()

    tcplab.register_controller("python_reno", _python_reno(), "Reno in Python")
    doc = tomllib.loads(args.scenario.read_text())
    rows = {}
    for name in ("reno", "python_reno"):
        d = {**doc, "flows": [{**f, "controller": name} for f in doc["flows"]]}
        wall, cpu, raw = _timed(d, args.repeat)
        frame = pl.DataFrame(raw["flows"])
        flows = {k: frame[k].to_numpy() for k in frame.columns if k != "controller"}
        acks = int(frame["acks_sent"].sum() - frame["ack_drops"].sum())
        rows[name] = {"wall_s": wall, "cpu_s": cpu, "acks": acks, "flows": flows}
    same = all(_same_column(rows["reno"]["flows"][k], rows["python_reno"]["flows"][k])
               for k in rows["reno"]["flows"])
    if not same:
        raise SystemExit("the Python Reno gave other results than reno: not bit-identical")
    n = rows["reno"]["acks"]
    print(f"scenario {args.scenario.name}: {n} ACKs received by the senders, best of {args.repeat}")
    for name, r in rows.items():
        print(f"  {name:12s} wall {r['wall_s']:7.3f} s  cpu {r['cpu_s']:7.3f} s  "
              f"{1e9 * r['cpu_s'] / n:8.0f} ns CPU per ACK")
    extra = 1e9 * (rows["python_reno"]["cpu_s"] - rows["reno"]["cpu_s"]) / n
    print(f"  Python controller: +{extra:.0f} ns CPU per ACK "
          f"(x{rows['python_reno']['cpu_s'] / rows['reno']['cpu_s']:.1f} the whole run); results identical")
    if args.json:
        out = {k: {kk: vv for kk, vv in r.items() if kk != "flows"} for k, r in rows.items()}
        out["extra_ns_per_ack"] = extra
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
