"""``tcplab campaign --live``: a live campaign from its file to its output directory.

The output directory is also the campaign's store: ``live.sqlite`` (the results database)
stays there, and running the same command again resumes (the probes recorded are not run
again). When the schedule is done (or interrupted), the probes recorded so far are
written as the virtual campaign's table and report under ``campaign/`` in it
(probes.parquet, paths.parquet, campaign.json, report.html), replacing an earlier one.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.controller import DB_FILE, ClusterExecutor, Executor, LiveRun, run_live
from tcplab.campaign.live_results import live_probes
from tcplab.campaign.virtual_campaign import CampaignResult, run_campaign, write_campaign
from tcplab.out_dir import remove_tree

__all__ = ["COMPARISON_FILE", "LIVE_REPORT_DIR", "VIRTUAL_DIR", "compare_live", "run_live_campaign", "resolve"]

#: Where the table and report of a live campaign are written in its output directory.
LIVE_REPORT_DIR = "campaign"
#: Where ``--compare`` writes the virtual campaign of the same probes, and the comparison.
VIRTUAL_DIR = "virtual"
COMPARISON_FILE = "comparison.json"


def resolve(cfg: CampaignConfig, p: Path) -> Path:
    """``p`` relative to the campaign file's directory (as given when absolute)."""
    if p.is_absolute() or cfg.source_path is None:
        return p
    return Path(cfg.source_path).parent / p


def default_executor(cfg: CampaignConfig) -> ClusterExecutor:
    """A client of ``cfg.live``'s scheduler, with its TLS files (relative to the campaign
    file). OSError (one line) when it cannot connect, or when a connected host's worker
    runs fewer probe phases at once than ``per_host_limit``."""
    from tcplab.campaign.cluster import connect, host_resource

    live = cfg.live
    assert live is not None
    ca, cert, key = live.tls
    client = connect(live.scheduler, tuple(resolve(cfg, p) if p is not None else None  # type: ignore[arg-type]
                                           for p in (ca, cert, key)), timeout_s=live.connect_timeout_s)
    for w in client.scheduler_info(n_workers=-1)["workers"].values():
        for h in live.hosts:
            slots = w.get("resources", {}).get(host_resource(h.name))
            if slots is not None and slots < live.per_host_limit:
                client.close()
                raise OSError(f"live.per_host_limit = {live.per_host_limit}: the worker of {h.name} runs "
                              f"{slots:g} probe phases at once (its daemon's slots)")
    return ClusterExecutor(live, client)


def run_live_campaign(
    cfg: CampaignConfig,
    out: str | Path,
    *,
    executor: Executor | None = None,
    stop: threading.Event | None = None,
    progress: Any = None,
    report: bool = True,
    compare: bool = False,
    jobs: int | None = None,
) -> tuple[CampaignResult, LiveRun]:
    """Runs (or resumes) the live campaign ``cfg`` into ``out``; returns the campaign's
    table (every probe recorded, this run's and earlier ones) and what this run did.
    ``progress``: a callable given each probe recorded. ``compare``: also simulate the
    same probes on the same paths (the virtual campaign, ``jobs`` processes) into
    ``virtual/`` and write ``comparison.json`` (:func:`compare_live`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    own = default_executor(cfg) if executor is None else None
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    try:
        run = run_live(cfg, out / DB_FILE, executor or own, stop=stop, on_probe=progress)  # type: ignore[arg-type]
    finally:
        if own is not None:
            own.close()
    probes = live_probes(cfg, out / DB_FILE, run.paths, run.probes)
    result = CampaignResult(
        cfg=cfg,
        paths=run.paths,
        probes=probes,
        jobs=cfg.live.per_host_limit if cfg.live else 1,
        started_at=started,
        finished_at=datetime.now(UTC),
        wall_time_s=time.perf_counter() - t0,
        cpu_time_s=time.process_time(),
        extra={"live": True, "skipped": run.skipped, "ok": run.ok, "failed": run.failed, "stopped": run.stopped},
    )
    target = out / LIVE_REPORT_DIR
    remove_tree(target)
    write_campaign(result, target, report=report)
    if compare:
        compare_live(result, out, jobs=jobs, report=report)
    return result, run


def compare_live(live: CampaignResult, out: Path, *, jobs: int | None = None, report: bool = True) -> Path:
    """Simulates the probes of ``live``'s campaign (same seed: the same paths, schedule and
    protocols) into ``out/virtual`` and writes ``out/comparison.json``: per protocol, live
    against simulated (:func:`tcplab.campaign.analysis.live_vs_virtual`)."""
    from tcplab.campaign import analysis

    cfg = live.cfg.model_copy(update={"live": None})
    virtual = run_campaign(cfg, jobs=jobs)
    remove_tree(out / VIRTUAL_DIR)
    write_campaign(virtual, out / VIRTUAL_DIR, report=report)
    table = analysis.live_vs_virtual(live.probes, virtual.probes, list(cfg.schedule.protocols))
    path = out / COMPARISON_FILE
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({
        "note": "the same scheduled probes on the same drawn paths, live and simulated; the live testbed "
                "emulates each path's mean cross traffic for its whole life, not each probe's draw "
                "(docs/campaign.md)",
        "protocols": table.to_dicts(),
    }, indent=2, default=str) + "\n")
    tmp.replace(path)
    return path
