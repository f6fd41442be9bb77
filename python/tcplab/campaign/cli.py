"""The body of ``tcplab campaign`` (the typer command in tcplab/cli.py calls this)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from tcplab.cli import EXIT_INTERNAL, EXIT_INVALID


def run_campaign_command(
    config: Path,
    out: Path | None,
    jobs: int | None,
    seed: int | None,
    max_probes: int | None,
    no_report: bool,
    quiet: bool,
    fail: Callable[[str, int], NoReturn],
) -> None:
    from tcplab.campaign.config import CampaignError, load_campaign
    from tcplab.campaign.run import run_campaign, write_campaign
    from tcplab.results import OutDirError, check_out_dir, default_out_dir

    try:
        cfg = load_campaign(config).with_overrides(seed=seed, max_probes=max_probes)
    except CampaignError as e:
        fail(str(e), EXIT_INVALID)
    target = out if out is not None else default_out_dir(cfg.name)
    try:
        check_out_dir(target)
    except OutDirError as e:
        fail(str(e), EXIT_INVALID)
    err = Console(stderr=True)
    try:
        if quiet:
            result = run_campaign(cfg, jobs=jobs)
        else:
            with Progress(
                TextColumn(f"[bold]{cfg.name}[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("probes"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=False,
            ) as bar:
                task = bar.add_task("probes", total=None)

                def progress(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total)

                result = run_campaign(cfg, jobs=jobs, progress=progress)
    except CampaignError as e:
        fail(f"{config}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        fail(str(e), EXIT_INTERNAL)
    try:
        path = write_campaign(result, target, report=not no_report)
    except OutDirError as e:
        fail(str(e), EXIT_INVALID)
    except OSError as e:
        fail(f"cannot write results to {target}: {e}", EXIT_INTERNAL)
    if quiet:
        print(str(path))
        return
    console = Console() if sys.stdout.isatty() else Console(width=200)
    console.print(_summary_table(result))
    console.print(
        f"{result.probes.height} probes on {len(result.paths)} paths in {result.wall_time_s:.1f} s wall, "
        f"{result.cpu_time_s:.1f} s CPU ({result.jobs} jobs)"
    )
    console.print(f"results: {path}")


def _summary_table(result: Any) -> Table:
    import polars as pl

    from tcplab.campaign import analysis

    df = result.probes
    order = result.protocols
    t = Table(title=f"campaign {result.cfg.name} (seed {result.cfg.seed})")
    for col in ("protocol", "probes", "median Mb/s", "report", "timeout-free", "report", "mean timeouts"):
        t.add_column(col, justify="left" if col == "protocol" else "right")
    if df.height == 0:
        return t
    med = {r["protocol"]: r for r in analysis.throughput_medians(df, order).iter_rows(named=True)}
    free = {r["protocol"]: r for r in analysis.timeout_free_share(df, order).iter_rows(named=True)}
    mean = dict(df.group_by("protocol").agg(pl.col("timeouts").mean()).iter_rows())
    for p in order:
        pm, pf = med[p]["published_mbps"], free[p]["published"]
        t.add_row(
            p,
            str(med[p]["connections"]),
            f"{med[p]['median_mbps']:.3f}",
            "–" if pm is None else f"{pm:.2f}",
            f"{100 * free[p]['timeout_free']:.1f} %",
            "–" if pf is None else f"{100 * pf:.1f} %",
            f"{mean[p]:.2f}",
        )
    return t
