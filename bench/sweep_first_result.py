"""Time to first result of a big seed sweep: writes a small scenario with ``[sweep] seeds =
N`` (default 10^6), starts ``tcplab sweep`` on it in a new process group, and prints when
the first ``--results`` points are stored (``points/*/summary.json``), then stops the sweep
(SIGTERM to its group, SIGKILL after 5 s). Gives up after ``--timeout`` seconds. The target
(issue 12 §2): a sweep of 10^6 seeds starts running within seconds.

    .venv/bin/python bench/sweep_first_result.py                 # 10^6 seeds
    .venv/bin/python bench/sweep_first_result.py --seeds 1000    # how it grows with N

Benchmarks are not tests: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """
name = "seeds"
duration = "1s"
[topology]
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "10ms", buffer = 50, loss = 0.001 }}
[[flows]]
controller = "reno"
recovery = "sack"
[trace]
series = "off"
events = false
segments = false
drops = false
[sweep]
seeds = {seeds}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1_000_000)
    ap.add_argument("--results", type=int, default=3, help="stop after this many stored points")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    tcplab = Path(sys.executable).parent / "tcplab"
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "seeds.toml"
        f.write_text(SCENARIO.format(seeds=a.seeds))
        out = Path(d) / "out"
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [str(tcplab), "sweep", str(f), "--out", str(out), "--jobs", str(a.jobs), "--quiet"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        times: list[float] = []
        try:
            while time.perf_counter() - t0 < a.timeout and proc.poll() is None:
                points = out / "points"
                n = sum(1 for p in points.glob("*/summary.json")) if points.is_dir() else 0
                while len(times) < min(n, a.results):
                    times.append(round(time.perf_counter() - t0, 2))
                if len(times) >= a.results:
                    break
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    print(
        json.dumps(
            {
                "seeds": a.seeds,
                "first_results_s": times,
                "timed_out": len(times) < a.results and not err,
                "timeout_s": a.timeout,
                "error": err[-300:] or None,
            }
        )
    )


if __name__ == "__main__":
    main()
