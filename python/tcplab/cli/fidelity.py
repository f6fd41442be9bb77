"""``tcplab fidelity``: the ``linux`` profile against this machine's kernel (docs/fidelity.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tcplab.cli.common import EXIT_INTERNAL, EXIT_INVALID, fail, out_dir, stdout_console


def _list(text: str, flag: str, convert: type = str) -> list:
    try:
        values = [convert(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"{flag} {text!r}: expected a comma-separated list of {convert.__name__} values", EXIT_INVALID)
    if not values:
        fail(f"{flag} {text!r}: empty", EXIT_INVALID)
    return values


def fidelity(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results directory (default: "
                                              "results/fidelity-<timestamp>). Must not exist or be empty.")] = None,
    controllers: Annotated[str, typer.Option(help="Controllers, comma-separated (the kernel's of the same name).")]
    = "reno,cubic,bbr",
    rates: Annotated[str, typer.Option(help="Link rates in bit/s, comma-separated.")] = "1.6e6,10e6,100e6",
    losses: Annotated[str, typer.Option(help="Bernoulli loss rates of the data direction.")] = "0,1e-3,1e-2",
    buffers: Annotated[str, typer.Option(help="Buffers: shallow (0.25 BDP), deep (1.5 BDP).")] = "shallow,deep",
    kinds: Annotated[str, typer.Option(help="Transfers: long (30 s), short (200 kB).")] = "long,short",
    seeds: Annotated[int, typer.Option(help="Seeds per cell, both ways.", min=1)] = 3,
    max_seeds: Annotated[int, typer.Option(help="Seeds a cell runs, both ways, when its seeds scatter by more "
                                                "than a tolerance on either side (docs/fidelity.md).",
                                           min=1)] = 6,
    render: Annotated[Path | None, typer.Option(help="Run nothing: write report.html and fidelity.md again "
                                                 "from the fidelity.json of this results directory.")] = None,
    kernel_runs: Annotated[Path | None, typer.Option(
        help="Run only the simulations: judge them against the kernel runs recorded in this earlier grid's "
             "results directory (no root needed; for checking a change to the profile in minutes).")] = None,
) -> None:
    """Judge the linux profile against this machine's kernel, cell by cell of the grid.

    Each cell runs simulated and with the kernel's TCP through the live emulator (root) and
    is judged by the tolerances fixed in docs/fidelity.md; every missed cell gets its first
    divergence (tcplab diff). Writes fidelity.json, report.html and every run's results."""
    from tcplab.fidelity import grid, recorded_kernel_runs, run_grid, write_reports
    from tcplab.live.netns import LiveError, live_support

    if render is not None:
        doc = _load(render / "fidelity.json")
        write_reports(doc, render)
        _print(doc)
        stdout_console().print(f"reports: {render / 'report.html'}, {render / 'fidelity.md'}")
        return

    try:
        cells = grid(_list(controllers, "--controllers"), _list(rates, "--rates", float),
                     _list(losses, "--losses", float), _list(buffers, "--buffers"), _list(kinds, "--kinds"))
    except ValueError as e:
        fail(str(e), EXIT_INVALID)
    if kernel_runs is None and (reason := live_support()):
        fail(f"tcplab fidelity needs live runs: {reason}", EXIT_INVALID)
    if kernel_runs is not None:
        try:
            recorded_kernel_runs(cells, seeds, kernel_runs)
        except ValueError as e:
            fail(str(e), EXIT_INVALID)
    target = out_dir(out, "fidelity")
    err = Console(stderr=True)
    try:
        doc = run_grid(cells, seeds, target, progress=lambda what: err.print(f"[dim]{what}[/]"),
                       kernel_runs=kernel_runs, max_seeds=max_seeds)
    except (LiveError, OSError, RuntimeError) as e:
        fail(str(e), EXIT_INTERNAL)
    _print(doc)
    stdout_console().print(f"results: {target}")


def _load(path: Path) -> dict:
    import json

    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        fail(f"--render: {path}: {e}", EXIT_INVALID)


def _print(doc: dict) -> None:
    from tcplab.fidelity import COLUMNS, rows

    t = Table(title=f"linux profile against Linux {doc['machine']['kernel']}: {doc['passed']} of "
                    f"{len(doc['cells'])} cells pass")
    for col in COLUMNS:
        t.add_column(col, justify="left" if col in ("cell", "first divergence") else "right")
    for r in rows(doc):
        t.add_row(*r)
    stdout_console().print(t)


def register(app: typer.Typer) -> None:
    """Adds ``fidelity`` to the CLI."""
    app.command("fidelity")(fidelity)
