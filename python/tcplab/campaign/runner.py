"""Runs the probes: one simulation each, in a small self-contained process pool.

The unit of work is :func:`run_probe` (probe -> row); :func:`run_probes` maps it over the
schedule on ``jobs`` processes (``jobs = 1``: in this process) with an optional progress
callback, and returns the rows in probe order. Swapping the pool for another executor later
only needs a map of :func:`run_probe` over :class:`ProbeTask`\\ s.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from tcplab.campaign.config import CampaignConfig, CampaignError
from tcplab.campaign.measure import probe_row
from tcplab.campaign.population import Path, probe_scenario
from tcplab.campaign.probes import Probe
from tcplab.sweep import default_jobs

__all__ = ["ProbeTask", "run_probe", "run_probes", "preflight", "default_jobs"]


@dataclass(frozen=True)
class ProbeTask:
    cfg: CampaignConfig
    path: Path
    probe: Probe

    def scenario(self) -> dict[str, Any]:
        t = self.cfg.transfer
        return probe_scenario(self.cfg, self.path, self.probe, t.warmup_s + t.time_limit_s)


def run_probe(task: ProbeTask) -> dict[str, Any]:
    """Simulates one probe and returns its row (measure.PROBE_COLUMNS)."""
    from tcplab.run import run

    wall = time.perf_counter()
    cpu = time.process_time()
    try:
        result = run(task.scenario())
    except (ValueError, RuntimeError) as e:
        raise RuntimeError(
            f"probe {task.probe.id} (path {task.path.id}, {task.probe.protocol}) failed: {e}"
        ) from None
    return probe_row(
        result,
        task.probe,
        task.path,
        task.cfg,
        wall_s=time.perf_counter() - wall,
        cpu_s=time.process_time() - cpu,
    )


def preflight(tasks: list[ProbeTask]) -> None:
    """Checks one scenario per protocol with the schema and the simulator before anything
    runs, so a bad protocol or cross-traffic setting is one clear error, not N failures."""
    from tcplab import _native
    from tcplab.scenario import Scenario, ScenarioError

    seen: set[str] = set()
    for task in tasks:
        proto = task.probe.protocol
        if proto in seen:
            continue
        seen.add(proto)
        try:
            sc = Scenario.from_dict(task.scenario())
            _native.Simulation(sc.canonical_json())
        except (ScenarioError, ValueError) as e:
            where = f"protocols.{proto}" if proto in task.cfg.protocols else f"protocol {proto!r}"
            raise CampaignError(f"{where}: the probe scenario is invalid: {e}", where) from None


def run_probes(
    tasks: Iterable[ProbeTask],
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Rows of all ``tasks`` in their order; ``progress(done, total)`` after each."""
    tasks = list(tasks)
    total = len(tasks)
    rows: list[dict[str, Any] | None] = [None] * total
    if jobs <= 1 or total <= 1:
        for i, t in enumerate(tasks):
            rows[i] = run_probe(t)
            if progress:
                progress(i + 1, total)
        return rows  # type: ignore[return-value]
    done = 0
    # "spawn", not fork: forking a process whose polars/rayon threads hold locks can deadlock
    # the child (seen when the caller had used polars before starting the campaign).
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(run_probe, t): i for i, t in enumerate(tasks)}
        try:
            for fut in as_completed(futures):
                rows[futures[fut]] = fut.result()
                done += 1
                if progress:
                    progress(done, total)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return rows  # type: ignore[return-value]
