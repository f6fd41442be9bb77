"""Running a campaign and writing its output directory.

cfg = load_campaign("campaigns/eth-default.toml")
result = run_campaign(cfg, jobs=2)
write_campaign(result, "results/eth")   # probes.parquet, paths.parquet, campaign.json, report.html
"""

from __future__ import annotations

import json
import platform
import resource
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path as FsPath
from typing import Any

import polars as pl

from tcplab.campaign import analysis
from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.measure import PROBE_COLUMNS
from tcplab.campaign.population import Path, draw_paths
from tcplab.campaign.probe_sweep import default_jobs, preflight, probe_tasks, run_probes
from tcplab.schema import SCHEMA

__all__ = ["CampaignResult", "run_campaign", "write_campaign", "campaign_summary", "probe_schema", "CAMPAIGN_SCHEMA"]

CAMPAIGN_SCHEMA = 1


@dataclass
class CampaignResult:
    cfg: CampaignConfig
    paths: list[Path]
    probes: pl.DataFrame
    jobs: int
    started_at: datetime
    finished_at: datetime
    wall_time_s: float
    #: CPU seconds of this process and of its finished children (the pool's workers)
    cpu_time_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def protocols(self) -> list[str]:
        return analysis.protocols_of(self.probes, list(self.cfg.schedule.protocols))

    def paths_frame(self) -> pl.DataFrame:
        return pl.DataFrame([p.row() for p in self.paths])


def _cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_campaign(
    cfg: CampaignConfig,
    jobs: int | None = None,
    progress: bool | Any = False,
    *,
    store: str | FsPath | None = None,
    scheduler: Any = None,
) -> CampaignResult:
    """Draws the population and the schedule, checks one scenario per protocol, then runs
    every probe through the sweep engine (``jobs`` processes, default: the usable cores; or
    the Dask cluster ``scheduler``). ``store``: where the probes' rows are kept, so that a
    second run resumes (None: a temporary directory). ``progress``: True for a bar over the
    probes on stderr, or a rich Console to draw it on."""
    jobs = default_jobs() if jobs is None else max(1, jobs)
    paths = draw_paths(cfg)
    tasks = probe_tasks(cfg, paths)
    preflight(tasks)
    started = datetime.now(UTC)
    wall = time.perf_counter()
    cpu = _cpu_seconds()
    rows = run_probes(tasks, jobs=jobs, store=store, scheduler=scheduler, progress=progress, label=cfg.name)
    wall_s = time.perf_counter() - wall
    cpu_s = _cpu_seconds() - cpu
    df = pl.DataFrame(rows, schema=probe_schema(), orient="row") if rows else pl.DataFrame(schema=probe_schema())
    return CampaignResult(
        cfg=cfg,
        paths=paths,
        probes=df,
        jobs=jobs,
        started_at=started,
        finished_at=datetime.now(UTC),
        wall_time_s=wall_s,
        cpu_time_s=cpu_s,
    )


def probe_schema() -> dict[str, Any]:
    """The dtypes of the columns of probes.parquet (:data:`PROBE_COLUMNS`): a column the flows
    table gives has its type there (integers as Int64); the probe's own are named here."""
    flows = {c["name"]: c["dtype"] for c in SCHEMA["flows"]}
    own_ints = {"probe", "path", "cross_tcp_flows", "buffer_bytes", "loss_events_any"}
    s: dict[str, Any] = {}
    for c in PROBE_COLUMNS:
        if c == "protocol":
            s[c] = pl.String
        elif c == "sim_seed":
            s[c] = pl.UInt64
        elif c in flows:
            s[c] = {"str": pl.String, "bool": pl.Boolean, "f64": pl.Float64}.get(flows[c], pl.Int64)
        else:
            s[c] = pl.Int64 if c in own_ints else pl.Float64
    return s


def _clean(o: Any) -> Any:
    if isinstance(o, float) and (o != o or o in (float("inf"), float("-inf"))):
        return None
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def _records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dicts()


def campaign_summary(result: CampaignResult, report: str | None = "report.html") -> dict[str, Any]:
    """The content of campaign.json."""
    from tcplab import _native
    from tcplab.results import git_revision

    df = result.probes
    order = result.protocols
    rev, dirty = git_revision()
    return _clean(
        {
            "schema": CAMPAIGN_SCHEMA,
            "tcplab_version": _native.version(),
            "git_revision": rev,
            "git_dirty": dirty,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "config_path": result.cfg.source_path,
            "config": result.cfg.to_dict(),
            "seed": result.cfg.seed,
            "started_at": result.started_at.isoformat(),
            "finished_at": result.finished_at.isoformat(),
            "wall_time_s": result.wall_time_s,
            "cpu_time_s": result.cpu_time_s,
            "jobs": result.jobs,
            "paths": len(result.paths),
            "probes": df.height,
            "probes_completed": int(df["completed"].sum()) if df.height else 0,
            "simulated_probe_cpu_s": float(df["cpu_s"].sum()) if df.height else 0.0,
            "throughput": _records(analysis.throughput_medians(df, order)) if df.height else [],
            "timeout_free": _records(analysis.timeout_free_share(df, order)) if df.height else [],
            "timeout_causes": _records(analysis.timeout_breakdown(df, order)) if df.height else [],
            "mpl_causes": _records(analysis.mpl_breakdown(df, order)) if df.height else [],
            "loss_event_percentiles": _records(analysis.loss_event_percentiles(df, order=order))
            if df.height
            else [],
            "loss_throughput_correlation": _records(analysis.loss_throughput_correlation(df, order))
            if df.height
            else [],
            "loss_bins": _records(analysis.median_by_loss_bin(df, order=order)) if df.height else [],
            "directions": analysis.directions(df, seed=result.cfg.seed) if df.height else [],
            "tables": {
                "probes": {"file": "probes.parquet", "rows": df.height},
                "paths": {"file": "paths.parquet", "rows": len(result.paths)},
            },
            "report": report,
        }
    )


def write_campaign(result: CampaignResult, out: str | FsPath, *, report: bool = True) -> FsPath:
    """Writes the campaign's directory atomically (built in a hidden sibling, then renamed):
    probes.parquet, paths.parquet, campaign.json, campaign.toml (the config as given, when
    it came from a file) and report.html."""
    from tcplab.out_dir import building

    out = FsPath(out)
    with building(out) as tmp:
        result.probes.write_parquet(tmp / "probes.parquet")
        result.paths_frame().write_parquet(tmp / "paths.parquet")
        if result.cfg.source_path:
            try:
                shutil.copyfile(result.cfg.source_path, tmp / "campaign.toml")
            except OSError:
                pass
        report_name = None
        if report:
            from tcplab.report.campaign import render_campaign_report

            (tmp / "report.html").write_text(render_campaign_report(result), encoding="utf-8")
            report_name = "report.html"
        doc = campaign_summary(result, report=report_name)
        (tmp / "campaign.json").write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    return out
