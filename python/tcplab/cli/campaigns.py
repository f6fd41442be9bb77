"""``tcplab campaign``: the ETH measurement campaign, virtual or on real hosts (``--live``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tcplab.cli.common import EXIT_INTERNAL, EXIT_INVALID, fail, out_dir, stdout_console, store_dir, write_out


def campaign(
    config: Annotated[
        Path,
        typer.Argument(
            help="Campaign file (TOML; see docs/campaign.md), e.g. campaigns/eth-default.toml.",
            show_default=False,
            metavar="CAMPAIGN.toml",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output directory (default: results/<name>-<timestamp>). Must not exist or be empty.",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", min=1, help="Parallel simulations (default: the usable cores)."),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Override the campaign's seed.")] = None,
    max_probes: Annotated[
        int | None, typer.Option("--max-probes", min=0, help="Run only the first N probes of the schedule.")
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Keep every finished probe here; a rerun with the same store resumes (default: a temporary directory).",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Run on a Dask cluster instead: its scheduler, tcp://HOST:PORT."),
    ] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Do not write report.html.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar; print only the output path.")
    ] = False,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Run the campaign on real hosts through their daemons (the file's [live] table); "
            "--out is then the campaign's store: run the same command again to resume.",
        ),
    ] = False,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="With --live: also simulate the same probes on the same paths (OUT/virtual) and write "
            "OUT/comparison.json, live against simulated per protocol.",
        ),
    ] = False,
    testbed: Annotated[
        Path | None,
        typer.Option(
            "--testbed",
            help="With --live: the hosts and key of a local testbed (tcplab testbed's testbed.json, "
            "or its --out directory) instead of the file's [live] hosts.",
        ),
    ] = None,
) -> None:
    """Run a measurement campaign (the ETH report's methodology), virtual or --live.

    Writes its probes table, campaign.json and report; with --live it runs on real hosts."""
    from tcplab.campaign.config import CampaignError, load_campaign
    from tcplab.campaign.virtual_campaign import run_campaign, write_campaign

    try:
        cfg = load_campaign(config).with_overrides(seed=seed, max_probes=max_probes)
    except CampaignError as e:
        fail(str(e), EXIT_INVALID)
    if (testbed is not None or compare) and not live:
        fail(f"{'--testbed' if testbed is not None else '--compare'}: only with --live", EXIT_INVALID)
    if live:
        _campaign_live(config, cfg, out, testbed, no_report=no_report, quiet=quiet, compare=compare, jobs=jobs)
        return
    target = out_dir(out, cfg.name)
    if store is not None:
        store_dir(store, "--store")
    err = Console(stderr=True)
    try:
        result = run_campaign(cfg, jobs=jobs, progress=False if quiet else err, store=store, scheduler=scheduler)
    except CampaignError as e:
        fail(f"{config}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        fail(str(e), EXIT_INTERNAL)
    path = write_out(lambda: write_campaign(result, target, report=not no_report), target)
    if quiet:
        typer.echo(str(path))
        return
    console = stdout_console()
    console.print(_campaign_table(result))
    console.print(
        f"{result.probes.height} probes on {len(result.paths)} paths in {result.wall_time_s:.1f} s wall, "
        f"{result.cpu_time_s:.1f} s CPU ({result.jobs} jobs)"
    )
    console.print(f"results: {path}")


def _campaign_live(config: Path, cfg: Any, out: Path | None, testbed: Path | None, *, no_report: bool,
                   quiet: bool, compare: bool = False, jobs: int | None = None) -> None:
    """``tcplab campaign --live``: SIGINT stops starting probes; those running are recorded."""
    import signal
    import threading

    from pydantic import ValidationError

    from tcplab.campaign.live_campaign import LIVE_REPORT_DIR, default_executor, run_live_campaign
    from tcplab.campaign.live_config import testbed_settings

    if testbed is not None:
        desc = testbed / "testbed.json" if testbed.is_dir() else testbed
        try:
            cfg = cfg.model_copy(update={"live": testbed_settings(json.loads(desc.read_text()), cfg.live)})
        except (OSError, ValueError, KeyError, ValidationError) as e:
            fail(f"--testbed {desc}: {' '.join(str(e).split())[:200]}", EXIT_INVALID)
    if cfg.live is None:
        fail(f"{config}: live: the campaign file has no [live] table (scheduler, hosts; docs/campaign.md)", EXIT_INVALID)
    from tcplab.results import default_out_dir

    target = store_dir(out if out is not None else default_out_dir(f"{cfg.name}-live"), "--out")
    try:
        executor = default_executor(cfg)
    except OSError as e:  # cannot connect (wrong credentials among the causes), too few slots
        fail(f"{config}: live: {e}", EXIT_INVALID)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    err = Console(stderr=True)
    counts = {"ok": 0, "failed": 0}

    def progress(rec: Any) -> None:
        counts[rec.status] += 1
        if not quiet:
            what = "ok" if rec.status == "ok" else f"failed: {rec.reason}"
            err.print(f"probe {rec.id} (path {rec.path}, {rec.protocol}): {what}")

    try:
        result, run = run_live_campaign(cfg, target, executor=executor, stop=stop, progress=progress,
                                        report=not no_report, compare=compare, jobs=jobs)
    except ValueError as e:  # more paths than pairs of hosts
        fail(f"{config}: {e}", EXIT_INVALID)
    finally:
        signal.signal(signal.SIGINT, previous)
        executor.close()
    if quiet:
        typer.echo(str(target))
    else:
        Console().print(
            f"{run.ok} probes ok, {run.failed} failed this run ({run.skipped} recorded earlier); "
            f"{result.probes.height} of {len(run.probes)} in the table: {target / LIVE_REPORT_DIR}"
        )
    if run.stopped:
        fail(f"interrupted: rerun the same command to resume ({target})", 130)


def _campaign_table(result: Any) -> Table:
    """Per protocol: probes, median throughput, timeout-free share and mean timeouts, each
    beside the report's value."""
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


def register(app: typer.Typer) -> None:
    """Adds ``campaign`` to the CLI."""
    app.command("campaign")(campaign)
