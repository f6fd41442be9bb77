"""``tcplab sweep`` and ``tcplab reproduce``: many runs through the sweep engine (store,
resume, Dask), a scenario's ``[sweep]`` points or the papers' experiments."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from tcplab.cli.common import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    PluginFiles,
    fail,
    file_target,
    load_plugins,
    stdout_console,
    store_dir,
)
from tcplab.scenario import ScenarioError


def sweep(
    scenario: Annotated[
        Path,
        typer.Argument(
            help="Scenario file with a \\[sweep] table (docs/sweeps.md).",
            show_default=False,
            metavar="SCENARIO.toml",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Sweep directory; finished points in it are reused (resume)."),
    ],
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes (default: all cores).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Run on a Dask cluster instead: its scheduler, tcp://HOST:PORT."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    plugin: PluginFiles = None,
) -> None:
    """Run every point of a scenario's \\[sweep] (grid x zip x seeds) in parallel; store each as Parquet."""
    from tcplab.sweep import SweepError, load_sweep, run_sweep, sweep_points

    load_plugins(plugin)
    try:
        doc, spec = load_sweep(scenario)
        points = sweep_points(doc, spec)  # lazy: each point is validated when the sweep reaches it
        points[0]  # the first one now, before the store is touched
    except (SweepError, ScenarioError) as e:
        fail(str(e), EXIT_INVALID)
    store_dir(out, "--out")
    err = Console(stderr=True)
    try:
        res = run_sweep(
            points, out, jobs=jobs, scheduler=scheduler, progress=False if quiet else err, label=scenario.stem
        )
    except (SweepError, ScenarioError) as e:
        fail(str(e), EXIT_INVALID)
    except (RuntimeError, OSError) as e:
        fail(str(e), EXIT_INTERNAL)
    typer.echo(
        f"{len(points)} points: {len(res.computed)} run, {len(res.cached)} reused; "
        f"{res.wall_time_s:.1f} s; results: {out}"
    )
    from tcplab.report.sweep_page import SUMMARY_MAX_POINTS, write_sweep_summary

    if len(points) <= SUMMARY_MAX_POINTS:
        write_sweep_summary(res, out)
        typer.echo(f"summary: {out / 'flows.parquet'}, {out / 'report.html'}")
    else:
        typer.echo(f"no summary above {SUMMARY_MAX_POINTS} points (read them with tcplab.sweep: SweepResult.flows())")


def reproduce(
    ids: Annotated[
        list[str] | None,
        typer.Argument(help="Experiment ids (see --list), or 'all'.", show_default=False, metavar="[ID ...|all]"),
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments and exit.")] = False,
    full: Annotated[
        bool, typer.Option("--full/--quick", help="--quick (default): fewer seeds, shorter runs; --full: the papers' sizes.")
    ] = False,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory of the run cache and report.html.")
    ] = Path("results/reproduce"),
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes (default: all cores).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Run on a Dask cluster: tcp://HOST:PORT.")
    ] = None,
    write_docs: Annotated[
        Path | None,
        typer.Option("--write-docs", help="Also regenerate this Markdown file (docs/reproductions.md)."),
    ] = None,
    adopt_runs: Annotated[
        Path | None,
        typer.Option(
            "--adopt-runs",
            help="Take over the runs of the same scenarios stored by another build under this directory "
            "(an earlier --out) instead of recomputing them. Only after bench/compare_builds.sh showed "
            "the two builds bit-identical.",
        ),
    ] = None,
    readings: Annotated[
        bool | None,
        typer.Option("--readings/--no-readings", help="Also judge every claim under the other settings the paper "
                     "allows (the experiments' readings). Default: with --full only."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Reproduce the papers' figures and tables: run, check the claims, write one HTML report."""
    from tcplab import reproduce as rp

    if list_:
        console = stdout_console()
        console.print(rp.list_table())
        return
    try:
        selected = rp.select(ids or ["all"])
    except KeyError as e:
        fail(str(e.args[0]), EXIT_INVALID)
    store_dir(out, "--out")
    if write_docs is not None:
        file_target(write_docs, "--write-docs")
    err = Console(stderr=True)
    try:
        suite = rp.run_suite(
            selected,
            mode="full" if full else "quick",
            out=out,
            jobs=jobs,
            scheduler=scheduler,
            progress=False if quiet else err,
            adopt_from=adopt_runs,
            readings=readings,
        )
    except (RuntimeError, OSError, ValueError) as e:
        fail(str(e), EXIT_INTERNAL)
    report = rp.write_report(suite, out / "report.html")
    if write_docs is not None:
        rp.write_docs(suite, write_docs)
    from collections import Counter

    from tcplab.reproduce.verdict import VERDICTS

    for o in suite.outcomes:
        if o.error:  # an experiment marked live that could not run here: one line why
            err.print(f"{o.experiment.id}: {o.error}", markup=False, highlight=False)
    verdicts = Counter(c.verdict for o in suite.outcomes for c in o.claims)
    total = sum(verdicts.values())
    counts = ", ".join(f"{verdicts[v]} {v}" for v in VERDICTS)
    typer.echo(
        f"{len(suite.outcomes)} experiments, {total} claims: {counts}; {suite.wall_time_s:.0f} s; report: {report}"
    )


def register(app: typer.Typer) -> None:
    """Adds ``sweep``, ``reproduce`` to the CLI."""
    app.command("sweep")(sweep)
    app.command("reproduce")(reproduce)
