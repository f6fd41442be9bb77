"""Time to first result of a big seed sweep: writes a small scenario with ``[sweep] seeds =
N`` (default 10^6), starts ``tcplab sweep`` on it in a new process group, and prints when
the first ``--results`` points are stored (``points/*/summary.json``) and the sweep's main
process's memory then (``main_rss_mb``; ``main_peak_rss_mb``: its high-water mark), then
stops the sweep (SIGTERM to its group, SIGKILL after 5 s). Gives up after ``--timeout``
seconds. The target (docs/sweeps.md): a sweep of 10^6 seeds starts running within seconds.

``--overhead N`` measures instead, in this process, what the sweep itself costs per point
over N points of the same scenario: producing them (``sweep_points``: validation shared by
the seeds, one key each), and running them through ``run_sweep`` with a point function that
only stores an empty point, in this process (``--jobs 1``) and on a local pool of
``--jobs`` workers (the index, the store checks and the dispatch).

    .venv/bin/python bench/sweep_first_result.py                 # 10^6 seeds
    .venv/bin/python bench/sweep_first_result.py --seeds 1000    # how it grows with N
    .venv/bin/python bench/sweep_first_result.py --overhead 20000 --jobs 2

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
[tcp]
profile = "rfc"
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


def _rss_mb(pid: int) -> tuple[float | None, float | None]:
    """(VmRSS, VmHWM) of ``pid`` in MB, from /proc (None elsewhere)."""
    try:
        fields = dict(
            line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
        )
        return tuple(round(int(fields[k].split()[0]) / 1024, 1) for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]
    except (OSError, KeyError, ValueError):
        return None, None


def stub_point(document: dict, target: str) -> None:
    """Stores an empty point (no simulation): what is left is the sweep's own cost."""
    t = Path(target)
    tmp = t.with_name(f".{t.name}.tmp-{os.getpid()}")
    tmp.mkdir()
    (tmp / "summary.json").write_text("{}")
    os.replace(tmp, t)


def overhead(n: int, jobs: int) -> dict:
    import tomllib

    from tcplab.sweep import run_sweep, sweep_points

    doc = {**tomllib.loads(SCENARIO.format(seeds=n).split("[sweep]")[0])}
    out: dict = {"points": n}
    t0 = time.perf_counter()
    points = sweep_points(doc, {"seeds": n})
    first = points[0]
    out["first_point_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    t0 = time.perf_counter()
    for _ in points:
        pass
    out["produce_us_per_point"] = round((time.perf_counter() - t0) / n * 1e6, 1)
    del first
    for j in sorted({1, jobs}):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            res = run_sweep(points, d, jobs=j, progress=False, point_fn=stub_point)
            assert len(res.computed) == n
            out[f"run_us_per_point_jobs{j}"] = round((time.perf_counter() - t0) / n * 1e6, 1)
            t0 = time.perf_counter()
            res = run_sweep(points, d, jobs=j, progress=False, point_fn=stub_point)
            assert len(res.cached) == n
            out[f"resume_us_per_point_jobs{j}"] = round((time.perf_counter() - t0) / n * 1e6, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1_000_000)
    ap.add_argument("--results", type=int, default=3, help="stop after this many stored points")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--overhead", type=int, default=0, metavar="N", help="measure the per-point overhead over N points")
    a = ap.parse_args()
    if a.overhead:
        print(json.dumps(overhead(a.overhead, a.jobs)))
        return
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
        rss: tuple[float | None, float | None] = (None, None)
        try:
            while time.perf_counter() - t0 < a.timeout and proc.poll() is None:
                points = out / "points"
                n = sum(1 for p in points.glob("*/summary.json")) if points.is_dir() else 0
                while len(times) < min(n, a.results):
                    times.append(round(time.perf_counter() - t0, 2))
                if len(times) >= a.results:
                    rss = _rss_mb(proc.pid)
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
                "main_rss_mb": rss[0],
                "main_peak_rss_mb": rss[1],
                "timed_out": len(times) < a.results and not err,
                "timeout_s": a.timeout,
                "error": err[-300:] or None,
            }
        )
    )


if __name__ == "__main__":
    main()
