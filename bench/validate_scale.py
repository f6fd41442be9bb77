"""Scale of scenario validation: N TCP flows on a 10 Gb/s dumbbell (tracing off),
validated by the Python schema (``Scenario.from_dict``: schema, cross-field checks, the
simulator's rules), written as the canonical JSON (``Scenario.canonical_json``) and
validated and built by the simulator (``tcplab._native.Simulation``). Prints each stage's
wall and CPU time (the machine may be shared: CPU time is the steadier figure) and the
process's peak RSS after it.

Usage: .venv/bin/python bench/validate_scale.py [--stagger] [FLOWS ...]   (default: 1000 10000)
Each size runs in its own process so that peak RSS is the size's own. ``--stagger``: the
flows start one after another over the first second (a flow group's ``start_step``).

``--individual``: instead of one flow group, a TOML file of N individual ``[[flows]]``
entries (each with its own name, ``src``, ``dst``, controller, recovery and ``start``; the
controllers cycle through reno, cubic and veno), timed as ``tcplab validate`` runs it:
parsing the file (``read_toml``), ``Scenario.from_dict``, ``canonical_json`` and the
simulator's check (``_native.check_scenario``); then ``tcplab validate FILE`` itself in a
child process (wall, the child's CPU and peak RSS), and with ``--json`` also ``tcplab
validate --json FILE`` (the indented canonical JSON). ``--keep DIR`` writes the files there.
"""

from __future__ import annotations

import hashlib
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


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


_CONTROLLERS = ("reno", "cubic", "veno")


def individual_toml(flows: int) -> str:
    """A scenario file of ``flows`` individual ``[[flows]]`` entries (see the module's doc)."""
    head = f"""name = "individual-{flows}"
duration = "2s"

[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Gbps", delay = "10ms", buffer = 10000 }}

[tcp]
profile = "rfc"

[trace]
series = "off"
events = false
segments = false
drops = false
"""
    step = 1_000_000 // flows or 1  # ns: the starts spread over the first millisecond
    entries = [
        f'\n[[flows]]\nname = "f{i}"\nsrc = "s{i}"\ndst = "r{i}"\ncontroller = "{_CONTROLLERS[i % 3]}"\n'
        f'recovery = "sack"\nstart = "{i * step}ns"\n'
        for i in range(flows)
    ]
    return head + "".join(entries)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stager(label: str):
    """A function that prints one stage's wall and CPU time since ``t0`` (and the peak RSS),
    prefixed by ``label``, and returns the time now."""

    def stage(what: str, t0: tuple[float, float]) -> tuple[float, float]:
        now = (time.perf_counter(), time.process_time())
        print(
            f"{label} {what} {now[0] - t0[0]:.2f} s (CPU {now[1] - t0[1]:.2f} s), peak RSS {peak_mb():.0f} MB",
            flush=True,
        )
        return now

    return stage


def one(flows: int, stagger: bool) -> None:
    from tcplab import _native
    from tcplab.scenario import Scenario

    stage = stager(f"flows={flows}")

    t = (time.perf_counter(), time.process_time())
    sc = Scenario.from_dict(scenario(flows, stagger))
    t = stage("python validation", t)
    text = sc.canonical_json()
    t = stage("canonical JSON", t)
    _native.Simulation(text)
    stage("simulator validation+build", t)


def one_file(path: Path) -> None:
    """``tcplab validate``'s stages on the file at ``path``."""
    from tcplab import _native
    from tcplab.scenario import Scenario
    from tcplab.toml_file import read_toml

    stage = stager(path.name)

    t0 = t = (time.perf_counter(), time.process_time())
    data, text = read_toml(path)
    t = stage("parse (read_toml)", t)
    sc = Scenario.from_dict(data, name=path.stem, source={"toml": text, "path": str(path)}, base_dir=path.parent)
    t = stage("python validation (from_dict)", t)
    json_text = sc.canonical_json()
    t = stage("canonical JSON", t)
    _native.check_scenario(json_text)
    stage("simulator check", t)
    stage("all stages", t0)


def cli(path: Path, *extra: str) -> None:
    """``tcplab validate FILE`` in a child process: wall, the child's CPU and peak RSS."""
    tcplab = Path(sys.executable).with_name("tcplab")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([str(tcplab), "validate", *extra, str(path)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    out = done.stdout if not extra else f"{len(done.stdout)} bytes of output, md5 {hashlib.md5(done.stdout.encode()).hexdigest()}"
    print(
        f"{path.name} tcplab validate {' '.join(extra)}: {wall:.2f} s wall, CPU {user:.2f} s user + {system:.2f} s"
        f" system, peak RSS {after.ru_maxrss / 1024:.0f} MB, exit {done.returncode}: {out.strip()[:100]}"
        f"{done.stderr.strip()[:200]}",
        flush=True,
    )


def main() -> None:
    args = sys.argv[1:]
    stagger = "--stagger" in args
    individual = "--individual" in args
    with_json = "--json" in args
    keep = None
    if "--keep" in args:
        k = args.index("--keep")
        keep = Path(args[k + 1])
        del args[k : k + 2]
    args = [a for a in args if a not in ("--stagger", "--individual", "--json")]
    if len(args) > 1 and args[0] == "--one":
        one(int(args[1]), stagger)
        return
    if len(args) > 1 and args[0] == "--file":
        one_file(Path(args[1]))
        return
    for n in [int(x) for x in args] or [1000, 10_000]:
        if not individual:
            subprocess.run([sys.executable, __file__, "--one", str(n), *(["--stagger"] if stagger else [])], check=True)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = (keep or Path(tmp)) / f"individual-{n}.toml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(individual_toml(n))
            subprocess.run([sys.executable, __file__, "--file", str(path)], check=True)
            cli(path)
            if with_json:
                cli(path, "--json")


if __name__ == "__main__":
    main()
