#!/usr/bin/env python3
"""tcplab benchmark: scenarios B1-B4, and the same scenarios in ns-3 when it is installed.

    .venv/bin/python bench/run.py                       # everything
    .venv/bin/python bench/run.py --only B1,B3 --json bench/out/run.json
    .venv/bin/python bench/run.py --ns3-python /tmp/ns3venv/bin/python
    .venv/bin/python bench/run.py --no-ns3 --full       # tcplab only, full durations

For each scenario (bench/scenarios/B*.toml) tcplab runs in a fresh process through
`tcplab._native.Simulation` (the Rust simulator without the polars layer), so peak RSS is
that scenario's; the wall and CPU time of `run_until(end)` are measured (best of
`--repeat`). Then, if an interpreter that can `import ns` is known (this one, or
`--ns3-python`, or $TCPLAB_NS3_PYTHON), bench/ns3_scenarios.py runs the same network for
the same simulated span in ns-3, built from the same canonical scenario JSON, and the
ratios are printed. Spans: the full duration, or shorter where ns-3 would take more than a
few minutes (ns3_scenarios.SPANS); with a shortened span tcplab also runs the full
duration on its own. Last, a memory check runs B2 in tcplab for T and 4T simulated
seconds: with tracing off the peak RSS must not grow with simulated time.

Benchmarks are not tests: nothing here runs in CI. Timings on a shared machine are noisy;
CPU time is printed beside wall time because it suffers less from other processes.
"""

from __future__ import annotations

import argparse
import copy
import glob
import importlib.machinery
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ns3_scenarios  # noqa: E402  (never imports ns itself)

SCENARIO_DIR = os.path.join(HERE, "scenarios")
NAMES = list(ns3_scenarios.SCENARIOS)


# ---------------------------------------------------------------------------- child side


def _proc_status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _load_native():
    """tcplab._native without the tcplab package (whose imports, polars among them, would
    inflate the baseline RSS); falls back to the package import."""
    spec = importlib.util.find_spec("tcplab")
    if spec and spec.submodule_search_locations:
        for d in spec.submodule_search_locations:
            for path in glob.glob(os.path.join(d, "_native*.so")):
                loader = importlib.machinery.ExtensionFileLoader("tcplab._native", path)
                mspec = importlib.util.spec_from_loader("tcplab._native", loader)
                mod = importlib.util.module_from_spec(mspec)
                loader.exec_module(mod)
                return mod
    from tcplab import _native  # noqa: PLC0415

    return _native


def _child_tcplab(path: str) -> None:
    """Runs one canonical scenario (a JSON file) and prints the measurements as JSON."""
    native = _load_native()
    with open(path) as f:
        text = f.read()
    rss_baseline = _proc_status_kib("VmRSS")
    sim = native.Simulation(text)
    end = sim.end_ns
    rss_built = _proc_status_kib("VmRSS")
    c0, w0 = time.process_time(), time.perf_counter()
    sim.run_until(end)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    # Before finish() and polars: they would hide the simulator's own footprint.
    peak_run = _proc_status_kib("VmHWM")
    w1 = time.perf_counter()
    raw = sim.finish()
    finish_s = time.perf_counter() - w1
    stats = {k: int(v) for k, v in raw["stats"].items()}
    # Tables leave Rust as Arrow (__arrow_c_array__): columns as Python lists.
    import polars as pl  # noqa: PLC0415

    flows = pl.DataFrame(raw["flows"]).to_dict(as_series=False)
    delivered = int(sum(int(x) for x in flows["bytes_delivered"]))
    cons = raw.get("conservation", {})
    links = pl.DataFrame(raw["links"]).to_dict(as_series=False)
    neck, neck_bytes, neck_drops = {}, {}, None
    for i in range(len(links["link"])):
        if links["link"][i] == "left-right":
            neck[links["direction"][i]] = int(links["packets_sent"][i])
            neck_bytes[links["direction"][i]] = int(links["bytes_sent"][i])
            if links["direction"][i] == "forward":
                neck_drops = int(links["drops_buffer_overflow"][i])
    out = dict(
        simulator="tcplab",
        version=native.version() if hasattr(native, "version") else None,
        span_s=end / 1e9,
        wall_s=wall,
        cpu_s=cpu,
        finish_s=finish_s,
        events=stats.get("events"),
        events_per_s=stats.get("events", 0) / wall if wall > 0 else None,
        transmissions=stats.get("transmissions"),
        transmissions_per_s=stats.get("transmissions", 0) / wall if wall > 0 else None,
        peak_pending_events=stats.get("peak_pending_events"),
        sim_time_s=stats.get("sim_time_ns", 0) / 1e9,
        bytes_delivered=delivered,
        goodput_bps=delivered * 8 / (end / 1e9),
        conservation_ok=bool(cons.get("ok", True)),
        bottleneck_forward_tx=neck.get("forward"),
        bottleneck_reverse_tx=neck.get("reverse"),
        bottleneck_forward_bytes=neck_bytes.get("forward"),
        bottleneck_drops=neck_drops,
        peak_rss_mib=peak_run / 1024,
        peak_rss_with_results_mib=_proc_status_kib("VmHWM") / 1024,
        rss_baseline_mib=rss_baseline / 1024,
        rss_built_mib=rss_built / 1024,
    )
    print("TCPLABRESULT " + json.dumps(out), flush=True)


# --------------------------------------------------------------------------- parent side


def canonical(name: str) -> dict:
    import tcplab  # noqa: PLC0415

    return tcplab.load_scenario(os.path.join(SCENARIO_DIR, f"{name}.toml")).canonical()


def with_span(scn: dict, span: float) -> dict:
    s = copy.deepcopy(scn)
    s["duration"] = int(round(span * 1e9))
    return s


def run_tcplab(scn: dict, timeout: float | None = None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scn, f)
        path = f.name
    try:
        cmd = [sys.executable, os.path.abspath(__file__), "--child-tcplab", path]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        os.unlink(path)
    for line in out.stdout.splitlines():
        if line.startswith("TCPLABRESULT "):
            return json.loads(line[len("TCPLABRESULT ") :])
    raise RuntimeError(f"tcplab run failed (exit {out.returncode}):\n{out.stderr[-3000:]}")


def best_of(scn: dict, repeat: int) -> dict:
    runs = [run_tcplab(scn) for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r["wall_s"])
    best = dict(best)
    best["wall_s_all"] = [r["wall_s"] for r in runs]
    best["cpu_s_min"] = min(r["cpu_s"] for r in runs)
    best["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    return best


def run_ns3(python: str, name: str, scn: dict, timeout: float | None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scn, f)
        path = f.name
    try:
        return ns3_scenarios.run_in_subprocess(python, name, canonical=path, timeout=timeout)
    finally:
        os.unlink(path)


def find_ns3_python(arg: str | None) -> str | None:
    """An interpreter that can import ns (ns-3's bindings), or None."""
    cands = [arg] if arg else [os.environ.get("TCPLAB_NS3_PYTHON"), sys.executable]
    for py in cands:
        if not py:
            continue
        probe = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('ns3') else 1)"
        try:
            if subprocess.run([py, "-c", probe], capture_output=True, timeout=60).returncode == 0:
                return py
        except (OSError, subprocess.TimeoutExpired):
            pass
        if arg:
            sys.exit(f"--ns3-python {arg}: cannot import ns3 there (pip install ns3)")
    return None


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return dict(
        cpu=model,
        cpus=os.cpu_count(),
        platform=platform.platform(),
        python=platform.python_version(),
        loadavg_at_start=os.getloadavg(),
        date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    )


def fmt_n(x) -> str:
    if x is None:
        return "n/a"
    x = float(x)
    for unit, k in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= k:
            return f"{x / k:.2f}{unit}"
    return f"{x:.0f}"


def row(label: str, r: dict) -> str:
    return (
        f"  {label:<14} wall {r['wall_s']:9.3f} s  cpu {r['cpu_s']:9.3f} s  "
        f"events {fmt_n(r.get('events')):>8} ({fmt_n(r.get('events_per_s')):>7}/s)  "
        f"tx {fmt_n(r['transmissions']):>8} ({fmt_n(r['transmissions_per_s']):>7}/s)  "
        f"goodput {r['goodput_bps'] / 1e6:8.3f} Mb/s  peak RSS {r['peak_rss_mib']:6.1f} MiB  "
        f"bottleneck tx {fmt_n(r.get('bottleneck_forward_tx'))}/{fmt_n(r.get('bottleneck_reverse_tx'))} "
        f"drops {fmt_n(r.get('bottleneck_drops'))}"
    )


def ratio(a, b):
    return a / b if a and b else None


def main() -> None:
    ap = argparse.ArgumentParser(description="tcplab vs ns-3 benchmark (bench/README.md)")
    ap.add_argument("--only", default=",".join(NAMES), help="scenarios, e.g. B1,B3")
    ap.add_argument("--span-scale", type=float, default=1.0, help="multiply every span")
    ap.add_argument("--full", action="store_true", help="full durations for both (slow ns-3)")
    ap.add_argument("--repeat", type=int, default=3, help="tcplab runs per scenario (best)")
    ap.add_argument("--ns3-python", help="interpreter with the ns3 package")
    ap.add_argument("--no-ns3", action="store_true", help="skip ns-3")
    ap.add_argument("--ns3-timeout", type=float, default=1800, help="seconds per ns-3 run")
    ap.add_argument("--no-memory-check", action="store_true")
    ap.add_argument("--memory-span", type=float, default=15.0, help="T of the memory check")
    ap.add_argument("--json", help="write every measurement to this file")
    ap.add_argument("--child-tcplab", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_tcplab:
        _child_tcplab(args.child_tcplab)
        return

    names = [s.strip() for s in args.only.split(",") if s.strip()]
    for n in names:
        if n not in NAMES:
            sys.exit(f"unknown scenario {n!r}; known: {', '.join(NAMES)}")
    ns3_py = None if args.no_ns3 else find_ns3_python(args.ns3_python)
    info = machine()
    print(f"machine: {info['cpu']} x{info['cpus']}, {info['platform']}, load {info['loadavg_at_start']}")
    print(f"ns-3: {ns3_py or 'not found (pip install ns3, or --ns3-python PATH): tcplab only'}")
    report = dict(machine=info, ns3_python=ns3_py, scenarios=[])

    for name in names:
        scn_full = canonical(name)
        # ns-3 must run what tcplab runs: compare the canonical scenario with its own table.
        if ns3_scenarios.from_canonical(scn_full) != ns3_scenarios.params(name):
            print(f"warning: {name}.toml and ns3_scenarios.SCENARIOS['{name}'] differ", file=sys.stderr)
        duration = scn_full["duration"] / 1e9
        span = duration if args.full else (ns3_scenarios.SPANS[name] or duration)
        span *= args.span_scale
        scn = with_span(scn_full, span)
        print(f"\n{name}: {scn_full.get('description', '')}")
        print(f"  simulated span {span:g} s (scenario duration {duration:g} s)")
        entry = dict(scenario=name, duration_s=duration, span_s=span)
        entry["tcplab"] = t = best_of(scn, args.repeat)
        print(row("tcplab", t))
        if ns3_py:
            try:
                entry["ns3"] = n3 = run_ns3(ns3_py, name, scn, args.ns3_timeout)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"  ns-3 failed: {e}")
                n3 = None
            if n3:
                print(row("ns-3", n3))
                entry["ratio"] = rt = dict(
                    wall=ratio(n3["wall_s"], t["wall_s"]),
                    cpu=ratio(n3["cpu_s"], t["cpu_s_min"]),
                    transmissions_per_s=ratio(t["transmissions_per_s"], n3["transmissions_per_s"]),
                    events_per_s=ratio(t["events_per_s"], n3["events_per_s"]),
                )
                print(
                    f"  tcplab speed-up: {rt['wall'] or 0:.1f}x wall, {rt['cpu'] or 0:.1f}x CPU "
                    f"(same span); transmissions/s {rt['transmissions_per_s'] or 0:.1f}x"
                )
        if span < duration and args.span_scale == 1.0:
            entry["tcplab_full"] = tf = best_of(scn_full, 1)
            print(row(f"tcplab {duration:g} s", tf))
        report["scenarios"].append(entry)

    if not args.no_memory_check:
        base = canonical("B2")
        T = args.memory_span
        a = run_tcplab(with_span(base, T))
        b = run_tcplab(with_span(base, 4 * T))
        report["memory_check"] = dict(scenario="B2", span_s=[T, 4 * T], runs=[a, b])
        print(f"\nmemory check (B2, tracing off): peak RSS over {T:g} s vs {4 * T:g} s simulated")
        for r in (a, b):
            print(
                f"  {r['span_s']:6g} s: peak {r['peak_rss_mib']:7.1f} MiB, "
                f"growth during run {r['peak_rss_mib'] - r['rss_built_mib']:6.1f} MiB, "
                f"tx {fmt_n(r['transmissions'])}, peak pending events {fmt_n(r['peak_pending_events'])}"
            )

    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
