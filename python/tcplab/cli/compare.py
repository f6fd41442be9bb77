"""``tcplab compare``: one scenario simulated, live and with Linux flows over the same seeds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tcplab.cli.common import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    PluginFiles,
    fail,
    load_base,
    load_plugins,
    out_dir,
    stdout_console,
    write_out,
)
from tcplab.scenario import ScenarioError


def compare(
    scenario: Annotated[
        Path,
        typer.Argument(help="Scenario file (TOML; see docs/scenario.md).", show_default=False, metavar="SCENARIO.toml"),
    ],
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds every mode runs: 1-3, 1,4,7 or 1-3,8.")] = "1-3",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Comparison directory (default: results/<name>-compare-<timestamp>). Must not exist or be empty.",
        ),
    ] = None,
    modes: Annotated[
        str | None,
        typer.Option("--modes", help="Modes to run, comma-separated: simulated, live, linux (docs/compare.md; "
                                     "default: all three, skipping those that cannot run here). A mode named "
                                     "here that cannot run is an error.", show_default=False),
    ] = None,
    realtime: Annotated[
        bool, typer.Option("--realtime", help="Live modes: run the emulator and endpoints with SCHED_FIFO when granted.")
    ] = False,
    no_run_reports: Annotated[
        bool, typer.Option("--no-run-reports", help="No report.html in each simulated run's directory.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or table; print only the path.")] = False,
    plugin: PluginFiles = None,
) -> None:
    """Run a scenario simulated, live and with Linux flows over the same seeds; one report side by side.

    Writes <mode>/seed-<N>/ (results directories), compare.json (the verdicts) and report.html.
    A mode that cannot run here (live without root, a controller the kernel lacks) is skipped
    with the reason."""
    from tcplab.compare import MODES, parse_modes, parse_seeds, plan_compare, run_compare
    from tcplab.progress import CountProgress

    try:
        seed_list = parse_seeds(seeds)
        mode_list = parse_modes(modes or ",".join(MODES))  # default: every mode, skipping what cannot run
    except ValueError as e:
        fail(str(e), EXIT_INVALID)
    load_plugins(plugin)
    sc, sweep_table = load_base(scenario)
    if sweep_table is not None:
        sys.stderr.write(f"note: {scenario} has a [sweep] table; comparing the base scenario only, without it\n")
    target = out_dir(out, f"{sc.name}-compare")
    plan = plan_compare(sc, seed_list, mode_list)
    if modes is not None and plan.skipped:  # asked for by name: not getting it is an error
        fail("; ".join(f"--modes {m}: cannot run: {why}" for m, why in plan.skipped.items()), EXIT_INVALID)
    if not plan.modes:
        fail("nothing to run: " + "; ".join(f"{m} skipped: {why}" for m, why in plan.skipped.items()), EXIT_INVALID)
    for mode, why in plan.skipped.items():
        sys.stderr.write(f"note: {mode} skipped: {why}\n")
    for mode, flows in plan.excluded.items():
        for name, why in flows.items():
            sys.stderr.write(f"note: {mode}: flow {name} not compared: {why}\n")
    err = Console(stderr=True)
    total = len(plan.modes) * len(seed_list)
    try:
        with CountProgress(f"compare {sc.name}", total, progress=False if quiet else err, unit="runs") as bar:

            def progress(mode: str, seed: int, state: str) -> None:
                if state == "done":
                    bar.advance(f"{mode} seed {seed}")
                elif state == "failed":
                    bar.advance(f"{mode} seed {seed} failed")

            outcome = write_out(
                lambda: run_compare(
                    plan, target, realtime=realtime, run_reports=not no_run_reports, progress=progress
                ).out,
                target,
            )
    except ScenarioError as e:
        fail(f"{scenario}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        fail(str(e), EXIT_INTERNAL)

    doc = json.loads((outcome / "compare.json").read_text(encoding="utf-8"))
    failed = {m: why for m, why in doc["skipped"].items() if m not in plan.skipped}
    for mode, why in failed.items():
        sys.stderr.write(f"note: {mode} skipped: {why}\n")
    if modes is not None and failed:  # named modes that failed to run: the command failed
        fail("; ".join(f"--modes {m}: did not run: {why}" for m, why in failed.items()) + f" (results: {outcome})",
             EXIT_INTERNAL)
    for note in doc["notes"][1:]:
        sys.stderr.write(f"note: {note}\n")
    if quiet:
        typer.echo(str(outcome))
        return
    console = stdout_console()
    console.print(_compare_table(doc))
    counts = ", ".join(f"{n} {v}" for v, n in doc["counts"].items())
    console.print(f"{' vs '.join(doc['modes']) or 'nothing'} over seeds {seeds}: {counts}", markup=False, highlight=False)
    console.print(f"results: {outcome}")


def _compare_table(doc: dict[str, Any]) -> Table:
    """Per flow and quantity, each mode's mean [95 % interval], and the flagged pairs."""
    modes = list(doc["modes"])
    t = Table(title=f"{doc['scenario']}: mean [95 % interval] over seeds")
    for col in ("flow", "quantity", *modes, "beyond spread"):
        t.add_column(col, justify="left" if col in ("flow", "quantity", "beyond spread") else "right")
    flagged: dict[tuple[int, str], list[str]] = {}
    for v in doc["verdicts"]:
        if v["verdict"] == "beyond spread":
            flagged.setdefault((v["flow"], v["metric"]), []).append(f"{v['b']} vs {v['a']}")
    units = {m["key"]: f"{m['label']} ({m['unit']})" for m in doc["metrics"]}
    for f in doc["flows"]:
        for key, per_mode in f["metrics"].items():
            cells = []
            for mode in modes:
                s = per_mode.get(mode)
                if not s or s["mean"] is None:
                    cells.append("–")
                elif s["ci_low"] is None:
                    cells.append(f"{s['mean']:.4g}")
                else:
                    cells.append(f"{s['mean']:.4g} [{s['ci_low']:.3g}, {s['ci_high']:.3g}]")
            t.add_row(f["name"], units[key], *cells, ", ".join(flagged.get((f["flow"], key), [])))
    return t


def register(app: typer.Typer) -> None:
    """Adds ``compare`` to the CLI."""
    app.command("compare")(compare)
