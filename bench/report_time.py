"""The time of the run report (issue 27 §4): runs a scenario once (default the demo), then
times ``render_report`` of its result and splits it into stages.

    .venv/bin/python bench/report_time.py [--scenario scenarios/demo-dumbbell.toml] [--repeat 3]

Prints:

* the cold cost, in a fresh subprocess as ``tcplab run`` pays it: importing the report
  modules (``import tcplab.report``), the first ``render_report`` (which also pays the
  imports done lazily and the font cache), best of ``--repeat`` processes;
* ``render_report`` in this process once warm, best of ``--repeat``;
* both as shipped (figures drawn in forked children beside this process,
  ``tcplab.report.drawing``) and drawn in this process only (as before that module), the
  two alternating;
* per stage of one warm render drawn in this process only (best of ``--repeat`` per stage):
  each figure's building (``plot_*``) and its drawing and encoding (``raster.png``), the
  interactive view over time and its script, writing the file; the rest (tables, text) is
  the remainder;
* the page's size and the number of images.

The data files are not written here (``--no-report`` covers them); the simulation's own time
is printed for the ratio the issue sets (the report in under 1 s, or at most as long as the
simulation).
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

COLD = r"""
import json, sys, time
import tcplab
if sys.argv[2] == "here":
    import tcplab.report.drawing as d
    d._children = lambda: 0
r = tcplab.run(sys.argv[1])
t0, c0 = time.perf_counter(), time.process_time()
import tcplab.report
t1, c1 = time.perf_counter(), time.process_time()
html = tcplab.report.render_report(r)
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"import": t1 - t0, "first_render": t2 - t1, "import_cpu": c1 - c0, "first_render_cpu": c2 - c1,
                  "bytes": len(html.encode())}))
"""

#: (module, attribute, stage label): the functions timed per stage when they exist (the
#: names of one version of the report or another).
STAGES = [
    ("tcplab.report.overview", "plot_flow_throughput", "figure: per-flow throughput + CDF (build)"),
    ("tcplab.report.overview", "plot_throughput_delay", "figure: throughput vs delay (build)"),
    ("tcplab.report.overview", "plot_delay_cdf", "figure: delay CDF (build)"),
    ("tcplab.report.eth", "plot_timeout_causes", "figure: timeouts by cause (build)"),
    ("tcplab.report.page", "plot_queues", "figure: queues (build)"),
    ("tcplab.report.page", "plot_windows", "figure: windows (build)"),
    ("tcplab.report.page", "plot_time_sequence", "figure: time-sequence, whole and zoomed (build)"),
    ("tcplab.report.overview", "over_time", "interactive view over time (data + plot)"),
    ("tcplab.report.page", "bokeh_js", "interactive view: script (Bokeh JS)"),
    ("tcplab.report.page", "plotter_js", "interactive view: script (plotter JS)"),
]


class Timer:
    """Wall and CPU seconds per stage label."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.order: list[str] = []

    def add(self, label: str, dt: float, dc: float) -> None:
        if label not in self.times:
            self.order.append(label)
            self.times[label] = self.cpu[label] = 0.0
        self.times[label] += dt
        self.cpu[label] += dc

    def wrap(self, label: str, f: Any) -> Any:
        @functools.wraps(f)
        def timed(*a: Any, **k: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            try:
                return f(*a, **k)
            finally:
                self.add(label, time.perf_counter() - t, time.process_time() - c)

        return timed


def instrument(timer: Timer) -> None:
    """Wraps the stage functions where the report calls them, and ``raster.png`` (each
    figure's drawing and encoding, numbered in page order) where the report calls it."""
    import importlib

    for mod, name, label in STAGES:
        m = importlib.import_module(mod)
        if hasattr(m, name):
            setattr(m, name, timer.wrap(label, getattr(m, name)))
    import tcplab.report.html as h
    import tcplab.report.raster as r

    png = r.png
    count = [0]

    def timed_png(*a: Any, **k: Any) -> Any:
        count[0] += 1
        t, c = time.perf_counter(), time.process_time()
        try:
            return png(*a, **k)
        finally:
            timer.add(f"figure {count[0]}: draw + encode", time.perf_counter() - t, time.process_time() - c)

    h.png = r.png = timed_png  # type: ignore[assignment]

    def reset() -> None:
        count[0] = 0

    timer.reset_count = reset  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "demo-dumbbell.toml"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()

    import tcplab.report.drawing as drawing

    shipped_children = drawing._children
    modes = {"shipped": shipped_children, "here": lambda: 0}  # children per page
    cold: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for _ in range(a.repeat):
        for m in modes:
            out = subprocess.run([sys.executable, "-c", COLD, a.scenario, m], check=True, capture_output=True,
                                 text=True)
            cold[m].append(json.loads(out.stdout.strip().splitlines()[-1]))

    import tcplab

    t = time.perf_counter()
    result = tcplab.run(a.scenario)
    run_s = time.perf_counter() - t
    sim_s = float(result.wall_time_s)
    from tcplab.report import page

    warm: dict[str, list[float]] = {m: [] for m in modes}
    warm_cpu: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(a.repeat):
        for m, children in modes.items():
            drawing._children = children
            t, c = time.perf_counter(), time.process_time()
            html = page.render_report(result)
            warm[m].append(time.perf_counter() - t)
            warm_cpu[m].append(time.process_time() - c)
    drawing._children = modes["here"]  # the stages: every figure drawn in this process

    current = Timer()
    instrument(current)
    per_stage: dict[str, list[float]] = {}
    per_stage_cpu: dict[str, list[float]] = {}
    order: list[str] = []
    totals, totals_cpu = [], []
    write_times = []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.repeat):
            current.times.clear()
            current.cpu.clear()
            current.order.clear()
            current.reset_count()  # type: ignore[attr-defined]
            t, c = time.perf_counter(), time.process_time()
            html = page.render_report(result)
            totals.append(time.perf_counter() - t)
            totals_cpu.append(time.process_time() - c)
            t = time.perf_counter()
            (Path(d) / "report.html").write_text(html, encoding="utf-8")
            write_times.append(time.perf_counter() - t)
            for k in current.order:
                if k not in per_stage:
                    order.append(k)
                    per_stage[k], per_stage_cpu[k] = [], []
                per_stage[k].append(current.times[k])
                per_stage_cpu[k].append(current.cpu[k])

    print(f"scenario {a.scenario}: tcplab.run {run_s:.3f} s (simulation {sim_s:.3f} s)")
    for m, what in (("shipped", "as shipped (children draw too)"), ("here", "drawn in this process only")):
        c = cold[m]
        print(f"{what}:")
        print(f"  cold, fresh process (best of {a.repeat}): import tcplab.report {min(x['import'] for x in c):.3f} s, "
              f"first render_report {min(x['first_render'] for x in c):.3f} s "
              f"({' '.join(format(x['first_render'], '.3f') for x in c)}); CPU time of this process: "
              f"{min(x['import_cpu'] for x in c):.3f} + {min(x['first_render_cpu'] for x in c):.3f} s")
        print(f"  warm render_report (best of {a.repeat}): {min(warm[m]):.3f} s  "
              f"({' '.join(f'{x:.3f}' for x in warm[m])}); CPU time of this process {min(warm_cpu[m]):.3f} s")
    print(f"writing report.html: {min(write_times) * 1e3:.1f} ms")
    print(f"stages of a warm render (best of {a.repeat} each; instrumented total {min(totals):.3f} s, "
          f"CPU {min(totals_cpu):.3f} s), wall and CPU ms:")
    accounted = accounted_cpu = 0.0
    for k in order:
        v, c = min(per_stage[k]), min(per_stage_cpu[k])
        accounted += v
        accounted_cpu += c
        print(f"  {v * 1e3:8.1f} {c * 1e3:8.1f}  {k}")
    print(f"  {max(0.0, min(totals) - accounted) * 1e3:8.1f} {max(0.0, min(totals_cpu) - accounted_cpu) * 1e3:8.1f}"
          "  the rest (tables, text, data for the figures outside plot_*)")
    nimg = html.count('src="data:image/png;base64,')
    print(f"page: {len(html.encode()) / 1e3:.0f} KB, {nimg} images (cold runs: "
          f"{', '.join(format(c[0]['bytes'] / 1e3, '.0f') + ' KB' for c in cold.values())})")


if __name__ == "__main__":
    main()
