"""Runs the probes through the sweep engine (:func:`tcplab.sweep.run_sweep`): one point per
probe, stored under ``<store>/points/<key>/summary.json`` (the probe's row), so a campaign
resumes where it stopped, a worker that dies is retried, and the probes can run on a local
process pool or a Dask cluster.

The unit of work is :func:`run_probe` (probe -> row); :func:`store_probe` is the sweep's
point function around it. A probe point's ``document`` is a :class:`ProbeTask` as a dict
(``cfg``, ``path``, ``probe``), not a scenario: the row needs the probe and its path.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

from tcplab.campaign.config import CampaignConfig, CampaignError
from tcplab.campaign.measure import probe_row
from tcplab.campaign.population import Path, draw_paths, probe_scenario
from tcplab.campaign.schedule import Probe, schedule
from tcplab.sweep import Point, cache_key, default_jobs, point_dir, run_sweep

__all__ = ["ProbeTask", "default_jobs", "preflight", "probe_points", "run_probe", "run_probes", "store_probe"]

#: The file of a probe point: its row.
ROW_FILE = "summary.json"


@dataclass(frozen=True)
class ProbeTask:
    cfg: CampaignConfig
    path: Path
    probe: Probe

    def scenario(self) -> dict[str, Any]:
        t = self.cfg.transfer
        return probe_scenario(self.cfg, self.path, self.probe, t.warmup_s + t.time_limit_s)


def probe_tasks(cfg: CampaignConfig, paths: list[Path] | None = None) -> list[ProbeTask]:
    """The campaign's probes in schedule order over its population `paths` (default: drawn
    now): what a virtual campaign runs, ``tcplab campaign`` and the ETH reproduction alike."""
    paths = draw_paths(cfg) if paths is None else paths
    by_id = {p.id: p for p in paths}
    return [ProbeTask(cfg, by_id[pr.path], pr) for pr in schedule(cfg, paths)]


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


def store_probe(document: dict[str, Any], target: str) -> None:
    """The sweep's point function: runs the probe of ``document`` (``cfg``, ``path``,
    ``probe``) and writes its row to ``target/summary.json`` atomically (built in a hidden
    sibling, renamed when complete)."""
    row = run_probe(ProbeTask(document["cfg"], document["path"], document["probe"]))
    t = FsPath(target)
    tmp = t.parent / f".{t.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir(parents=True)
    try:
        (tmp / ROW_FILE).write_text(json.dumps(row) + "\n", encoding="utf-8")
        if t.exists():  # another worker finished the same probe first
            shutil.rmtree(t, ignore_errors=True)
        os.rename(tmp, t)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def probe_points(tasks: list[ProbeTask]) -> list[Point]:
    """One sweep point per probe; the key covers the probe's scenario, the configuration, the
    probe and its path (and, through :func:`tcplab.sweep.cache_key`, the tcplab build)."""
    points = []
    cfg_json = json.dumps(tasks[0].cfg.to_dict(), sort_keys=True, default=str) if tasks else ""
    for i, task in enumerate(tasks):
        doc = {"cfg": task.cfg, "path": task.path, "probe": task.probe}
        key = cache_key({"scenario": task.scenario(), "cfg": cfg_json, "probe": repr(task.probe), "path": repr(task.path)})
        params = {"probe": task.probe.id, "path": task.path.id, "protocol": task.probe.protocol}
        points.append(Point(i, params, doc, key))
    return points


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
    tasks: list[ProbeTask],
    *,
    jobs: int = 1,
    store: str | FsPath | None = None,
    scheduler: Any = None,
    progress: bool | Any = False,
    label: str = "campaign",
) -> list[dict[str, Any]]:
    """The rows of all ``tasks`` in their order, run by :func:`tcplab.sweep.run_sweep` with
    its store under ``store`` (None: a temporary directory, removed afterwards); ``progress``
    as for ``run_sweep`` (True: a bar over the probes on stderr)."""
    points = probe_points(tasks)
    own = store is None
    out = FsPath(tempfile.mkdtemp(prefix="tcplab-campaign-")) if own else FsPath(store)
    try:
        run_sweep(
            points,
            out,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
            point_fn=store_probe,
            label=label,
            unit="probes",
        )
        return [json.loads((point_dir(out, p.key) / ROW_FILE).read_text(encoding="utf-8")) for p in points]
    finally:
        if own:
            shutil.rmtree(out, ignore_errors=True)
