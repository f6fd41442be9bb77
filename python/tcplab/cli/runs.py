"""``tcplab run``: one scenario, simulated or live (``--live``), into a results directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from tcplab.cli.common import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    PluginFiles,
    TableFormat,
    fail,
    load_base,
    load_plugins,
    out_dir,
    stdout_console,
    write_out,
)
from tcplab.scenario import Scenario, ScenarioError

if TYPE_CHECKING:
    from tcplab.run import RunResult


def run(
    scenario: Annotated[
        Path,
        typer.Argument(
            help="Scenario file (TOML; see docs/scenario.md).", show_default=False, metavar="SCENARIO.toml"
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Results directory (default: results/<name>-<timestamp>). Must not exist or be empty.",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Override the scenario's seed.")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Do not write report.html.")] = False,
    table_format: Annotated[
        TableFormat, typer.Option("--format", help="File format of the tables.", case_sensitive=False)
    ] = TableFormat.parquet,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the summary (summary.json plus the results path, and iperf3 -J's per-second "
            "intervals) as JSON on stdout, nothing else.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="No progress bar or summary table; print only the results path."),
    ] = False,
    max_record_mb: Annotated[
        float | None,
        typer.Option(
            "--max-record-mb",
            help="Limit on what the run records, MB (default $TCPLAB_MAX_RECORD_MB or 2048; docs/scenario.md).",
        ),
    ] = None,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Run on real packets: namespaces, the emulated topology, tcplab's or Linux's TCP (root; docs/live.md).",
        ),
    ] = False,
    realtime: Annotated[
        bool, typer.Option("--realtime", help="With --live: SCHED_FIFO for the emulator and tcplab's endpoints.")
    ] = False,
    plugin: PluginFiles = None,
) -> None:
    """Run a scenario and write its results directory (Parquet or CSV tables, summary.json, report.html).

    A file with a \\[sweep] table runs its base scenario only (tcplab sweep runs every point)."""
    from tcplab.results import write_results
    from tcplab.run import recording_line
    from tcplab.run import run as run_scenario

    load_plugins(plugin)
    sc, sweep_table = load_base(scenario, seed)
    if sweep_table is not None:
        sys.stderr.write(
            f"note: {scenario} has a [sweep] table; running the base scenario only, without it "
            f"(hint: `tcplab sweep {scenario} --out DIR` runs every point)\n"
        )
    if realtime and not live:
        fail("--realtime: only with --live", EXIT_INVALID)
    target = out_dir(out, sc.name)
    err = Console(stderr=True)
    if live:
        return _run_live(sc, scenario, target, realtime, not no_report, table_format.value, json_out, quiet, err,
                         max_record_mb)
    if not no_report:  # the report's modules (matplotlib) are imported while the simulation runs
        from tcplab.report.preload import prepare

        prepare()
    try:
        if quiet:
            result = run_scenario(sc, max_record_mb=max_record_mb)
        else:
            from tcplab.progress import SimProgress

            with SimProgress(sc.name, console=err) as bar:
                result = run_scenario(sc, progress=bar, max_record_mb=max_record_mb)
    except ScenarioError as e:  # what only the simulator checks
        fail(f"{scenario}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        fail(str(e), EXIT_INTERNAL)
    path = write_out(
        lambda: write_results(result, target, report=not no_report, table_format=table_format.value), target
    )
    c = result.conservation
    if not c.get("ok", True) and not quiet:
        err.print(f"[bold red]packet conservation violated:[/] {'; '.join(c.get('violations', []))}")
    if json_out:
        _print_json_summary(path)
    elif not quiet:
        console = stdout_console()
        console.print(_summary_table(result))
        console.print(recording_line(result.recording), markup=False, highlight=False)
        console.print(f"results: {path}")
    else:
        typer.echo(str(path))


def _print_json_summary(path: Path) -> None:
    from tcplab.intervals import intervals

    doc = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    typer.echo(json.dumps({"results": str(path), **doc, "intervals": intervals(path)}, indent=2))


def _run_live(
    sc: Scenario, scenario: Path, target: Path, realtime: bool, report: bool, table_format: str,
    json_out: bool, quiet: bool, err: Console, max_record_mb: float | None,
) -> None:
    """``tcplab run --live``: refuses in one line (rc 2) what cannot run live here."""
    from tcplab.live import LiveError
    from tcplab.live.fidelity import verdict_line
    from tcplab.live.run import refusal, run_live
    from tcplab.out_dir import OutDirError

    if reason := refusal(sc.canonical(), max_record_mb):
        fail(f"{scenario}: {reason}", EXIT_INVALID)
    try:
        if quiet:
            lr = run_live(sc, target, realtime=realtime, report=report, table_format=table_format,
                          max_record_mb=max_record_mb)
        else:
            from tcplab.progress import SimProgress

            with SimProgress(f"{sc.name} (live)", console=err, what="run live") as bar:
                lr = run_live(sc, target, realtime=realtime, progress=bar, report=report, table_format=table_format,
                              max_record_mb=max_record_mb)
    except OutDirError as e:
        fail(f"--out {e}", EXIT_INVALID)
    except (LiveError, OSError) as e:
        fail(str(e), EXIT_INTERNAL)
    c = lr.result.conservation
    if not quiet and not json_out:
        if not c.get("ok", True):
            err.print(f"[bold red]packet conservation violated:[/] {'; '.join(c.get('violations', []))}")
        if note := (lr.live.get("kernel_trace") or {}).get("note"):
            err.print(f"note: {note}", markup=False, highlight=False)
        line = verdict_line(lr.live)
        err.print(line if lr.live.get("verdict") == "ok" else f"[bold red]{line}[/]", markup=lr.live.get("verdict") != "ok", highlight=False)
    if json_out:
        _print_json_summary(lr.out_dir)
    elif not quiet:
        console = stdout_console()
        console.print(_summary_table(lr.result, "run live"))
        console.print(f"results: {lr.out_dir}")
    else:
        typer.echo(str(lr.out_dir))


def _summary_table(result: RunResult, what: str = "simulated") -> Table:
    t = Table(
        title=f"{result.name} (seed {result.seed}, {result.summary['sim_time_s']:g} s {what}, {result.wall_time_s:.2f} s wall)"
    )
    columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("flow", "left"),
        ("controller", "left"),
        ("recovery", "left"),
        ("throughput Mb/s", "right"),
        ("goodput ratio", "right"),
        ("retransmits segments", "right"),
        ("fast rtx", "right"),
        ("timeouts", "right"),
        ("drops packets", "right"),
        ("mean RTT ms", "right"),
    )
    for col, justify in columns:
        t.add_column(col, justify=justify)
    for r in result.flow_summary():
        t.add_row(
            r["name"],
            r["controller"],
            r["recovery"],
            f"{r['throughput_mbps']:.3f}",
            f"{r['goodput']:.3f}" if r["goodput"] is not None else "–",
            str(r["retransmits"]),
            str(r["fast_retransmits"]),
            str(r["timeouts"]),
            str(r["data_drops"]),
            f"{r['mean_rtt_ns'] / 1e6:.1f}" if r["mean_rtt_ns"] is not None else "–",
        )
    return t


def register(app: typer.Typer) -> None:
    """Adds ``run`` to the CLI."""
    app.command("run")(run)
