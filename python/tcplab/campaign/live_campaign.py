"""``tcplab campaign --live``: a live campaign from its file to its output directory.

The output directory is also the campaign's store: ``live.sqlite`` (the results database)
stays there, and running the same command again resumes (the probes recorded are not run
again). When the schedule is done (or interrupted), the probes recorded so far are
written as the virtual campaign's table and report under ``campaign/`` in it
(probes.parquet, paths.parquet, campaign.json, report.html), replacing an earlier one.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tcplab.campaign.auth import load_key
from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.controller import DB_FILE, DaemonExecutor, Executor, LiveRun, run_live
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


def default_executor(cfg: CampaignConfig) -> DaemonExecutor:
    """The daemons of ``cfg.live``, with its key and, when given, its TLS authority."""
    live = cfg.live
    assert live is not None
    key = load_key(resolve(cfg, live.key_file))
    tls = None
    if live.tls_ca is not None:
        tls = ssl.create_default_context(cafile=str(resolve(cfg, live.tls_ca)))
    return DaemonExecutor(live, key, tls)


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
    executor = executor or default_executor(cfg)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    run = run_live(cfg, out / DB_FILE, executor, stop=stop, on_probe=progress)
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
