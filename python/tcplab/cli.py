"""The ``tcplab`` command line: run, validate, list, sweep, reproduce, campaign.

Exit codes: 0 success; 1 the simulator failed (internal error) or the results could not be
written; 2 invalid scenario or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from tcplab import _native
from tcplab.scenario import Scenario, ScenarioError, load_scenario

if TYPE_CHECKING:
    from tcplab.run import RunResult

app = typer.Typer(
    name="tcplab",
    help="tcplab: a TCP congestion-control laboratory (packet-level simulation).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

EXIT_INTERNAL = 1
EXIT_INVALID = 2


class TableFormat(StrEnum):
    """``--format``: how the results' tables are written (tcplab.results.TABLE_FORMATS)."""

    parquet = "parquet"
    csv = "csv"


def _fail(message: str, code: int) -> NoReturn:
    # One line, on stderr, nothing else.
    sys.stderr.write(f"error: {' '.join(message.splitlines())}\n")
    raise typer.Exit(code)


def _load(path: Path, seed: int | None = None) -> Scenario:
    try:
        sc = load_scenario(path)
        return sc.with_seed(seed) if seed is not None else sc
    except ScenarioError as e:
        _fail(str(e), EXIT_INVALID)


def _load_base(path: Path, seed: int | None = None) -> tuple[Scenario, dict[str, Any] | None]:
    """The file's scenario and its ``[sweep]`` table (None when it has none). The table is
    stripped here, so the base scenario validates as a plain one (``Scenario.from_toml`` keeps
    rejecting unknown fields); the source kept for results is the file as given."""
    from tcplab.toml_file import TomlError, read_toml

    try:
        data, text = read_toml(path)
    except TomlError as e:
        _fail(str(e), EXIT_INVALID)
    if "sweep" not in data:
        return _load(path, seed), None
    table = data.pop("sweep")
    try:  # time-trace files are relative to the scenario file
        sc = Scenario.from_dict(data, name=path.stem, source={"toml": text, "path": str(path)}, base_dir=path.parent)
        return (sc.with_seed(seed) if seed is not None else sc), table
    except ScenarioError as e:
        _fail(str(e), EXIT_INVALID)


def _check_sweep(path: Path, sc: Scenario, table: dict[str, Any]) -> int:
    """Validates every point of the ``[sweep]`` table over ``sc`` (schema, then the
    simulator's checks; once for points that differ only in seed); the number of points."""
    from tcplab.sweep import SweepError, sweep_points

    try:
        return sweep_points(sc, table).validate()  # sc's base_dir: time-trace files as for the base scenario
    except (SweepError, ScenarioError) as e:
        _fail(f"{path}: {e}", EXIT_INVALID)


def _out_dir(out: Path | None, name: str, flag: str = "--out") -> Path:
    """``--out`` or the default directory for ``name``; exit 2 when it cannot be created
    there (checked before anything runs)."""
    from tcplab.out_dir import OutDirError, check_out_dir
    from tcplab.results import default_out_dir

    target = out if out is not None else default_out_dir(name)
    try:
        check_out_dir(target)
    except OutDirError as e:
        _fail(f"{flag} {e}", EXIT_INVALID)
    return target


def _store_dir(path: Path, flag: str) -> Path:
    """A directory that is reused (a sweep's or reproduce's store): exit 2 unless it is a
    directory this process can write in, or can be created."""
    from tcplab.out_dir import OutDirError, check_store_dir

    try:
        return check_store_dir(path)
    except OutDirError as e:
        _fail(f"{flag} {e}", EXIT_INVALID)


def _file_target(path: Path, flag: str) -> Path:
    """A file to be (re)written: exit 2 when it is a directory or its directory is unusable."""
    if path.is_dir():
        _fail(f"{flag} {path}: is a directory", EXIT_INVALID)
    _store_dir(path.parent, flag)
    return path


def _write_out(write: Callable[[], Path], target: Path) -> Path:
    """``write()`` (a results or campaign directory at ``target``); exit 2 when ``target`` is
    unusable, 1 when it cannot be written."""
    from tcplab.out_dir import OutDirError

    try:
        return write()
    except OutDirError as e:
        _fail(f"--out {e}", EXIT_INVALID)
    except OSError as e:
        _fail(f"cannot write results to {target}: {e}", EXIT_INTERNAL)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"tcplab {_native.version()}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """tcplab: simulate TCP congestion control and loss recovery on configurable networks."""


@app.command()
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
            help="Print the summary (summary.json plus the results path) as JSON on stdout, nothing else.",
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
) -> None:
    """Run a scenario and write its results directory (Parquet or CSV tables, summary.json, report.html).

    A file with a \\[sweep] table runs its base scenario only (tcplab sweep runs every point)."""
    from tcplab.results import write_results
    from tcplab.run import recording_line
    from tcplab.run import run as run_scenario

    sc, sweep_table = _load_base(scenario, seed)
    if sweep_table is not None:
        sys.stderr.write(
            f"note: {scenario} has a [sweep] table; running the base scenario only, without it "
            f"(hint: `tcplab sweep {scenario} --out DIR` runs every point)\n"
        )
    if realtime and not live:
        _fail("--realtime: only with --live", EXIT_INVALID)
    target = _out_dir(out, sc.name)
    err = Console(stderr=True)
    if live:
        return _run_live(sc, scenario, target, realtime, not no_report, table_format.value, json_out, quiet, err)
    try:
        if quiet:
            result = run_scenario(sc, max_record_mb=max_record_mb)
        else:
            from tcplab.progress import SimProgress

            with SimProgress(sc.name, console=err) as bar:
                result = run_scenario(sc, progress=bar, max_record_mb=max_record_mb)
    except ScenarioError as e:  # what only the simulator checks
        _fail(f"{scenario}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        _fail(str(e), EXIT_INTERNAL)
    path = _write_out(
        lambda: write_results(result, target, report=not no_report, table_format=table_format.value), target
    )
    c = result.conservation
    if not c.get("ok", True) and not quiet:
        err.print(f"[bold red]packet conservation violated:[/] {'; '.join(c.get('violations', []))}")
    if json_out:
        _print_json_summary(path)
    elif not quiet:
        # Not a terminal (a pipe, a log): no wrapping of the summary table.
        console = Console() if sys.stdout.isatty() else Console(width=200)
        console.print(_summary_table(result))
        console.print(recording_line(result.recording), markup=False, highlight=False)
        console.print(f"results: {path}")
    else:
        typer.echo(str(path))


def _print_json_summary(path: Path) -> None:
    import json

    doc = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    typer.echo(json.dumps({"results": str(path), **doc}, indent=2))


def _run_live(
    sc: Scenario, scenario: Path, target: Path, realtime: bool, report: bool, table_format: str,
    json_out: bool, quiet: bool, err: Console,
) -> None:
    """``tcplab run --live``: refuses in one line (rc 2) what cannot run live here."""
    from tcplab.live import LiveError
    from tcplab.live.fidelity import verdict_line
    from tcplab.live.run import refusal, run_live
    from tcplab.out_dir import OutDirError

    if reason := refusal(sc.canonical()):
        _fail(f"{scenario}: {reason}", EXIT_INVALID)
    try:
        if quiet:
            lr = run_live(sc, target, realtime=realtime, report=report, table_format=table_format)
        else:
            from tcplab.progress import SimProgress

            with SimProgress(f"{sc.name} (live)", console=err, what="run live") as bar:
                lr = run_live(sc, target, realtime=realtime, progress=bar, report=report, table_format=table_format)
    except OutDirError as e:
        _fail(f"--out {e}", EXIT_INVALID)
    except (LiveError, OSError) as e:
        _fail(str(e), EXIT_INTERNAL)
    c = lr.result.conservation
    if not quiet and not json_out:
        if not c.get("ok", True):
            err.print(f"[bold red]packet conservation violated:[/] {'; '.join(c.get('violations', []))}")
        line = verdict_line(lr.live)
        err.print(line if lr.live.get("verdict") == "ok" else f"[bold red]{line}[/]", markup=lr.live.get("verdict") != "ok", highlight=False)
    if json_out:
        _print_json_summary(lr.out_dir)
    elif not quiet:
        console = Console() if sys.stdout.isatty() else Console(width=200)
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


@app.command()
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
        str,
        typer.Option("--modes", help="Modes to run, comma-separated: simulated, live, linux (docs/compare.md)."),
    ] = "simulated,live,linux",
    realtime: Annotated[
        bool, typer.Option("--realtime", help="Live modes: run the emulator and endpoints with SCHED_FIFO when granted.")
    ] = False,
    no_run_reports: Annotated[
        bool, typer.Option("--no-run-reports", help="No report.html in each simulated run's directory.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or table; print only the path.")] = False,
) -> None:
    """Run a scenario simulated, live and with Linux flows over the same seeds; one report side by side.

    Writes <mode>/seed-<N>/ (results directories), compare.json (the verdicts) and report.html.
    A mode that cannot run here (live without root, a controller the kernel lacks) is skipped
    with the reason."""
    from tcplab.compare import parse_modes, parse_seeds, plan_compare, run_compare
    from tcplab.progress import CountProgress

    try:
        seed_list = parse_seeds(seeds)
        mode_list = parse_modes(modes)
    except ValueError as e:
        _fail(str(e), EXIT_INVALID)
    sc, sweep_table = _load_base(scenario)
    if sweep_table is not None:
        sys.stderr.write(f"note: {scenario} has a [sweep] table; comparing the base scenario only, without it\n")
    target = _out_dir(out, f"{sc.name}-compare")
    plan = plan_compare(sc, seed_list, mode_list)
    if not plan.modes:
        _fail("nothing to run: " + "; ".join(f"{m} skipped: {why}" for m, why in plan.skipped.items()), EXIT_INVALID)
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

            outcome = _write_out(
                lambda: run_compare(
                    plan, target, realtime=realtime, run_reports=not no_run_reports, progress=progress
                ).out,
                target,
            )
    except ScenarioError as e:
        _fail(f"{scenario}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        _fail(str(e), EXIT_INTERNAL)
    import json

    doc = json.loads((outcome / "compare.json").read_text(encoding="utf-8"))
    for mode, why in doc["skipped"].items():
        if mode not in plan.skipped:
            sys.stderr.write(f"note: {mode} skipped: {why}\n")
    for note in doc["notes"][1:]:
        sys.stderr.write(f"note: {note}\n")
    if quiet:
        typer.echo(str(outcome))
        return
    console = Console() if sys.stdout.isatty() else Console(width=200)
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


@app.command()
def validate(
    scenario: Annotated[
        Path, typer.Argument(help="Scenario file (TOML).", show_default=False, metavar="SCENARIO.toml")
    ],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the canonical JSON the simulator would run.")
    ] = False,
) -> None:
    """Check a scenario file (schema, then the simulator's own checks) without running it.

    With a \\[sweep] table: the base scenario, then every point of the sweep."""
    sc, sweep_table = _load_base(scenario)
    text = sc.canonical_json(indent=2)
    try:
        _native.Simulation(text)
    except ValueError as e:
        _fail(f"{scenario}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        _fail(str(e), EXIT_INTERNAL)
    points = _check_sweep(scenario, sc, sweep_table) if sweep_table is not None else None
    if json_out:
        typer.echo(text)  # the base scenario's
    else:
        typer.echo(f"ok: {sc.describe()}")
        if points is not None:
            typer.echo(f"ok: all {points} sweep points valid (tcplab sweep runs them)")


@app.command("list")
def list_components() -> None:
    """List the congestion controllers and loss-recovery strategies, one line each."""
    for kind, title in (("controller", "controllers"), ("recovery", "recoveries")):
        typer.echo(f"{title}:")
        rows = [(name, about) for k, name, about in _native.components() if k == kind]
        width = max((len(name) for name, _ in rows), default=0)
        for name, about in rows:
            typer.echo(f"  {name:<{width}}  {about}".rstrip())


@app.command()
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
) -> None:
    """Run every point of a scenario's \\[sweep] (grid x zip x seeds) in parallel; store each as Parquet."""
    from tcplab.sweep import SweepError, load_sweep, run_sweep, sweep_points

    try:
        doc, spec = load_sweep(scenario)
        points = sweep_points(doc, spec)  # lazy: each point is validated when the sweep reaches it
        points[0]  # the first one now, before the store is touched
    except (SweepError, ScenarioError) as e:
        _fail(str(e), EXIT_INVALID)
    _store_dir(out, "--out")
    err = Console(stderr=True)
    try:
        res = run_sweep(
            points, out, jobs=jobs, scheduler=scheduler, progress=False if quiet else err, label=scenario.stem
        )
    except (SweepError, ScenarioError) as e:
        _fail(str(e), EXIT_INVALID)
    except (RuntimeError, OSError) as e:
        _fail(str(e), EXIT_INTERNAL)
    typer.echo(
        f"{len(points)} points: {len(res.computed)} run, {len(res.cached)} reused; "
        f"{res.wall_time_s:.1f} s; results: {out}"
    )


@app.command()
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Reproduce the papers' figures and tables: run, check the claims, write one HTML report."""
    from tcplab import reproduce as rp

    if list_:
        console = Console() if sys.stdout.isatty() else Console(width=200)
        console.print(rp.list_table())
        return
    try:
        selected = rp.select(ids or ["all"])
    except KeyError as e:
        _fail(str(e.args[0]), EXIT_INVALID)
    _store_dir(out, "--out")
    if write_docs is not None:
        _file_target(write_docs, "--write-docs")
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
        )
    except (RuntimeError, OSError, ValueError) as e:
        _fail(str(e), EXIT_INTERNAL)
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


@app.command()
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
    """Run a virtual measurement campaign (the ETH report's methodology) and write its
    probes table, campaign.json and report; with --live, run it on real hosts."""
    from tcplab.campaign.config import CampaignError, load_campaign
    from tcplab.campaign.run import run_campaign, write_campaign

    try:
        cfg = load_campaign(config).with_overrides(seed=seed, max_probes=max_probes)
    except CampaignError as e:
        _fail(str(e), EXIT_INVALID)
    if (testbed is not None or compare) and not live:
        _fail(f"{'--testbed' if testbed is not None else '--compare'}: only with --live", EXIT_INVALID)
    if live:
        _campaign_live(config, cfg, out, testbed, no_report=no_report, quiet=quiet, compare=compare, jobs=jobs)
        return
    target = _out_dir(out, cfg.name)
    if store is not None:
        _store_dir(store, "--store")
    err = Console(stderr=True)
    try:
        result = run_campaign(cfg, jobs=jobs, progress=False if quiet else err, store=store, scheduler=scheduler)
    except CampaignError as e:
        _fail(f"{config}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        _fail(str(e), EXIT_INTERNAL)
    path = _write_out(lambda: write_campaign(result, target, report=not no_report), target)
    if quiet:
        typer.echo(str(path))
        return
    console = Console() if sys.stdout.isatty() else Console(width=200)
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

    from tcplab.campaign.auth import AuthError
    from tcplab.campaign.live_campaign import LIVE_REPORT_DIR, default_executor, run_live_campaign
    from tcplab.campaign.live_config import testbed_settings

    if testbed is not None:
        desc = testbed / "testbed.json" if testbed.is_dir() else testbed
        try:
            cfg = cfg.model_copy(update={"live": testbed_settings(json.loads(desc.read_text()), cfg.live)})
        except (OSError, ValueError, KeyError, ValidationError) as e:
            _fail(f"--testbed {desc}: {' '.join(str(e).split())[:200]}", EXIT_INVALID)
    if cfg.live is None:
        _fail(f"{config}: live: the campaign file has no [live] table (hosts, key_file; docs/campaign.md)", EXIT_INVALID)
    from tcplab.results import default_out_dir

    target = _store_dir(out if out is not None else default_out_dir(f"{cfg.name}-live"), "--out")
    try:
        executor = default_executor(cfg)
    except (AuthError, OSError) as e:  # ssl.SSLError is an OSError
        _fail(f"{config}: live: {e}", EXIT_INVALID)
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
        _fail(f"{config}: {e}", EXIT_INVALID)
    finally:
        signal.signal(signal.SIGINT, previous)
    if quiet:
        typer.echo(str(target))
    else:
        Console().print(
            f"{run.ok} probes ok, {run.failed} failed this run ({run.skipped} recorded earlier); "
            f"{result.probes.height} of {len(run.probes)} in the table: {target / LIVE_REPORT_DIR}"
        )
    if run.stopped:
        _fail(f"interrupted: rerun the same command to resume ({target})", 130)


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


# The live campaign's commands (daemon, testbed) live in their own module.
from tcplab import cli_live  # noqa: E402

cli_live.register(app)

if __name__ == "__main__":  # pragma: no cover
    app()
