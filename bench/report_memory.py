"""Memory of a long run with its results and report (issue 27 §6): the demo scenario
(``scenarios/demo-dumbbell.toml``, default tracing) made ``--duration`` long (default 600 s),
run in a fresh process as ``tcplab run`` does (the report's modules imported while the
simulation runs, then the tables, then the report), once per mode:

* ``shipped``: the report's figures drawn by forked children and this process
  (``tcplab.report.drawing``);
* ``here``: every figure drawn in the run's process (as before that module);
* ``none``: no report (``--no-report``).

Prints, per mode and run, the process's resident set after each stage (MB: anonymous + file
pages, and the peak so far, ``VmHWM``) and the largest resident set of its children (a forked
child's starts as its parent's, pages shared, so it is no measure of added memory).

    .venv/bin/python bench/report_memory.py [--duration 600] [--repeat 2]

Benchmarks are not tests: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys
mode, scenario, out = sys.argv[1:4]

def status():
    keep = ("VmHWM", "VmRSS", "RssAnon", "RssFile")
    d = {k: int(v.split()[0]) / 1024 for k, v in (l.split(":", 1) for l in open("/proc/self/status")) if k in keep}
    return {k: round(d[k], 1) for k in keep}

import tcplab
from tcplab.results import write_results
stages = {"imported": status()}
if mode == "here":
    import tcplab.report.drawing as drawing
    drawing._children = lambda: 0
if mode != "none":
    from tcplab.report.preload import prepare
    prepare()
result = tcplab.run(tcplab.Scenario.from_toml(open(scenario).read()))
stages["run"] = status()
write_results(result, out, report=False)
stages["tables written"] = status()
if mode != "none":
    from tcplab.report import write_report
    write_report(result, f"{out}/report.html")
    stages["report written"] = status()
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"stages": stages, "children_max_rss_mb": round(children, 1)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="simulated seconds")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    text = (ROOT / "scenarios" / "demo-dumbbell.toml").read_text()
    text = text.replace('duration = "60s"', f'duration = "{a.duration:g}s"', 1)
    with tempfile.TemporaryDirectory() as d:
        scenario = Path(d) / "long-demo.toml"
        scenario.write_text(text)
        for k in range(a.repeat):
            for mode in ("shipped", "here", "none"):
                out = Path(d) / f"out-{mode}-{k}"
                p = subprocess.run([sys.executable, "-c", CHILD, mode, str(scenario), str(out)], check=True,
                                   capture_output=True, text=True)
                r = json.loads(p.stdout.strip().splitlines()[-1])
                print(f"{mode:8s} run {k + 1}: " + "; ".join(
                    f"{s} {v['VmRSS']:.0f} (anon {v['RssAnon']:.0f}, file {v['RssFile']:.0f}, peak {v['VmHWM']:.0f})"
                    for s, v in r["stages"].items()) + f"; children's largest {r['children_max_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
